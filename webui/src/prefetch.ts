// Requests a page starts before React has rendered it: main.tsx calls startPrefetch() for the
// URL the app opens on, and the page's first load takes the answer (or the request in flight)
// with takePrefetched() instead of asking again. This moves the first request of a cold load
// from after React's first commit to the moment the script runs; only the first load of a
// page is served this way (later polls ask the master).
import { api, getToken } from './api';
import { chartDatapoints, keyString, loadTrialMetrics, type MetricKey, type TrialMetrics } from './metrics';
import { BASE, match } from './router';

const pending = new Map<string, Promise<unknown>>();

function keep<T>(key: string, p: Promise<T>): Promise<T> {
  p.catch(() => undefined); // a failure is the taker's to report, not an unhandled rejection
  pending.set(key, p);
  return p;
}

// The prefetched answer for `key`, once: undefined when nothing was prefetched under it.
export function takePrefetched<T>(key: string): Promise<T> | undefined {
  const p = pending.get(key) as Promise<T> | undefined;
  pending.delete(key);
  return p;
}

export const experimentKey = (id: number) => `experiments/${id}`;
export const curvesKey = (trialIds: string, only: MetricKey | undefined) =>
  `curves/${trialIds}/${chartDatapoints()}/${only ? keyString(only) : ''}`;

// The metric an experiment's page draws first: the searcher's, from validation reports.
export function firstCurve(config: any): MetricKey | undefined {
  const metric = config?.searcher?.metric;
  return typeof metric === 'string' && metric ? { group: 'validation', name: metric } : undefined;
}

// Starts the first requests of the page at `pathname` (the experiment page: the experiment,
// then its trials' curves of the searcher metric as soon as it names them).
export function startPrefetch(pathname: string): void {
  if (!getToken() || !pathname.startsWith(BASE)) return;
  const m = match('/experiments/:id', pathname.slice(BASE.length));
  if (!m || !/^[0-9]+$/.test(m.id)) return;
  const id = Number(m.id);
  keep(experimentKey(id), api('GET', experimentKey(id))).then(
    (r: any) => {
      const ids = r?.experiment?.trialIds;
      if (!Array.isArray(ids)) return;
      const only = firstCurve(r?.config ?? r?.experiment?.config);
      const never = new AbortController().signal;
      keep<TrialMetrics>(curvesKey(ids.join(','), only), loadTrialMetrics(ids, never, undefined, only));
    },
    () => undefined,
  );
}
