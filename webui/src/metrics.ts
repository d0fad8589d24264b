// Metric series of trials. Charts ask for at most `maxDatapoints` points per series: when the
// master has Determined's downsampling route (GET /api/v1/trials/time-series?trialIds=...&
// maxDatapoints=N, CompareTrials) it is used, 100 trials a request; a master without it (the
// first request fails with 400/404/405/501) is remembered and every row is read from the NDJSON
// route GET /api/v1/trials/metrics/trial_metrics instead.
import { api, ApiError, streamNdjson } from './api';
import type { Series } from './components/LineChart';

export type Group = 'training' | 'validation';

export interface MetricKey {
  group: Group;
  name: string;
}

export const keyString = (k: MetricKey) => `${k.group}: ${k.name}`;

export function parseKey(s: string): MetricKey | null {
  const m = /^(training|validation): (.+)$/.exec(s);
  return m ? { group: m[1] as Group, name: m[2] } : null;
}

// The reported values of one report row: stored as {avg_metrics: {...}} (training),
// {validation_metrics: {...}} (validation) or flat.
function values(row: any): Record<string, unknown> {
  const m = row.metrics ?? {};
  return m.avg_metrics ?? m.validation_metrics ?? m.avgMetrics ?? m;
}

export interface TrialMetrics {
  // group -> trial id -> rows [batches, {name: value}]
  rows: Record<Group, Map<number, { batches: number; values: Record<string, unknown> }[]>>;
  names: MetricKey[];
  // Only the one metric asked for (loadTrialMetrics' `only`): the other names are not known yet.
  partial?: boolean;
}

// Points per series a chart asks the server for: about one per horizontal pixel of the window
// (a chart is at most as wide), within [200, 2000]. More would not draw differently and cost
// the server a seek, and the page a parse, per point.
export const MAX_DATAPOINTS = 2000;
export function chartDatapoints(): number {
  const width = typeof window === 'undefined' ? MAX_DATAPOINTS : Math.ceil(window.innerWidth || 0);
  return Math.min(MAX_DATAPOINTS, Math.max(200, width));
}

// Whether the master downsamples: unknown until the first answer.
let downsampling: 'unknown' | 'yes' | 'no' = 'unknown';
export function downsamplingSupport(): 'unknown' | 'yes' | 'no' {
  return downsampling;
}

const TRIALS_PER_REQUEST = 100;

function emptyMetrics(): TrialMetrics {
  return { rows: { training: new Map(), validation: new Map() }, names: [] };
}

function addName(out: TrialMetrics, seen: Set<string>, group: Group, name: string): void {
  const k = `${group}: ${name}`;
  if (!seen.has(k)) {
    seen.add(k);
    out.names.push({ group, name });
  }
}

// Group of a downsampled series: `group` ("training"/"validation"), else the deprecated `type`.
function groupOf(series: any): Group | null {
  const g = String(series.group || series.type || '').toLowerCase();
  if (g.includes('validation')) return 'validation';
  if (g.includes('training')) return 'training';
  return null;
}

// Adds one trial's DownsampledMetrics list ({data: [{batches, values}], group}).
function addDownsampled(out: TrialMetrics, seen: Set<string>, trialId: number, metrics: any[]): void {
  for (const series of metrics ?? []) {
    const group = groupOf(series);
    if (!group) continue;
    const list = out.rows[group].get(trialId) ?? [];
    for (const p of series.data ?? []) {
      const values: Record<string, unknown> = p.values && typeof p.values === 'object' ? p.values : {};
      list.push({ batches: Number(p.batches), values });
      for (const [name, v] of Object.entries(values)) if (typeof v === 'number') addName(out, seen, group, name);
    }
    out.rows[group].set(trialId, list);
  }
}

// The trials' downsampled series; null when the master has no such route.
async function loadDownsampled(
  trialIds: number[],
  maxDatapoints: number,
  signal: AbortSignal,
  only?: MetricKey,
): Promise<TrialMetrics | null> {
  const out = emptyMetrics();
  const seen = new Set<string>();
  const metric = only ? `&metricIds=${encodeURIComponent(`${only.group}.${only.name}`)}` : '';
  for (let i = 0; i < trialIds.length; i += TRIALS_PER_REQUEST) {
    const ids = trialIds.slice(i, i + TRIALS_PER_REQUEST).map((id) => `trialIds=${id}`).join('&');
    let r: any;
    try {
      r = await api('GET', `trials/time-series?${ids}&maxDatapoints=${maxDatapoints}${metric}`, undefined, signal);
    } catch (e) {
      // A master without the route reads "time-series" as a trial id (400) or knows no route (404).
      if (downsampling === 'unknown' && e instanceof ApiError && [400, 404, 405, 501].includes(e.status)) {
        downsampling = 'no';
        return null;
      }
      throw e;
    }
    downsampling = 'yes';
    for (const t of r.trials ?? []) addDownsampled(out, seen, Number(t.trial?.id), t.metrics);
  }
  out.names.sort((a, b) => keyString(a).localeCompare(keyString(b)));
  return out;
}

// Every trial's series, downsampled on the server when it can (see above). With `only`, just
// that metric (a `partial` answer) when the master downsamples and some trial reported it: the
// first paint of a chart needs one metric, and each more group costs the master a seek per point.
export async function loadTrialMetrics(
  trialIds: number[],
  signal: AbortSignal,
  maxDatapoints = chartDatapoints(),
  only?: MetricKey,
): Promise<TrialMetrics> {
  if (downsampling !== 'no' && trialIds.length) {
    if (only) {
      const one = await loadDownsampled(trialIds, maxDatapoints, signal, only);
      if (one && one.names.length) return { ...one, partial: true };
    }
    if (downsamplingSupport() === 'no') return loadAllRows(trialIds, signal); // the first answer told
    const out = await loadDownsampled(trialIds, maxDatapoints, signal);
    // No series at all may be a route that wants metric names: the full read is cheap then.
    if (out && out.names.length) return out;
  }
  return loadAllRows(trialIds, signal);
}

// Every reported row, from the NDJSON route.
async function loadAllRows(trialIds: number[], signal: AbortSignal): Promise<TrialMetrics> {
  const out = emptyMetrics();
  if (!trialIds.length) return out;
  const seen = new Set<string>();
  const ids = trialIds.map((id) => `trialIds=${id}`).join('&');
  for (const group of ['training', 'validation'] as Group[]) {
    await streamNdjson(
      `trials/metrics/trial_metrics?group=${group}&${ids}`,
      (result) => {
        for (const row of result.metrics ?? []) {
          const v = values(row);
          const list = out.rows[group].get(row.trialId) ?? [];
          list.push({ batches: Number(row.totalBatches), values: v });
          out.rows[group].set(row.trialId, list);
          for (const [name, val] of Object.entries(v)) {
            if (typeof val === 'number') addName(out, seen, group, name);
          }
        }
      },
      signal,
    );
  }
  out.names.sort((a, b) => keyString(a).localeCompare(keyString(b)));
  return out;
}

export function seriesFor(m: TrialMetrics, key: MetricKey, label: (trialId: number) => string): Series[] {
  const out: Series[] = [];
  const byTrial = m.rows[key.group];
  for (const trialId of [...byTrial.keys()].sort((a, b) => a - b)) {
    const points: [number, number][] = [];
    for (const r of byTrial.get(trialId)!) {
      const v = r.values[key.name];
      if (typeof v === 'number' && isFinite(v)) points.push([r.batches, v]);
    }
    points.sort((a, b) => a[0] - b[0]);
    if (points.length) out.push({ label: label(trialId), points });
  }
  return out;
}

// The default choice: the searcher's metric (validation, then training), then any validation or
// training metric; the first of those that draws a line (two points in one trial), else the
// first that exists.
export function defaultKey(m: TrialMetrics, searcherMetric: string | undefined): MetricKey | null {
  const candidates: MetricKey[] = [];
  if (searcherMetric) {
    candidates.push({ group: 'validation', name: searcherMetric }, { group: 'training', name: searcherMetric });
  }
  candidates.push(...m.names.filter((k) => k.group === 'validation'), ...m.names);
  const present = candidates.filter((c) => m.names.some((k) => keyString(k) === keyString(c)));
  const drawsLine = (k: MetricKey) => seriesFor(m, k, String).some((s) => s.points.length >= 2);
  return present.find(drawsLine) ?? present[0] ?? null;
}
