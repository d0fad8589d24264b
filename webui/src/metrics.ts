// Metric series of trials. Charts ask for at most `maxDatapoints` points per series: when the
// master has Determined's downsampling route (GET /api/v1/trials/{id}/summarize?maxDatapoints=N)
// it is used; a master without it (404) is remembered and every row is read from the NDJSON
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
}

// Points per series a chart asks the server for (about two per horizontal pixel).
export const MAX_DATAPOINTS = 2000;

const SUMMARIZE_MAX_TRIALS = 50;

// Whether the master downsamples: unknown until the first answer.
let summarize: 'unknown' | 'yes' | 'no' = 'unknown';
export function downsamplingSupport(): 'unknown' | 'yes' | 'no' {
  return summarize;
}

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

// Group of a summarized series: `group` ("training"/"validation"), else the deprecated `type`.
function groupOf(series: any): Group | null {
  const g = String(series.group || series.type || '').toLowerCase();
  if (g.includes('validation')) return 'validation';
  if (g.includes('training')) return 'training';
  return null;
}

// One trial's downsampled series; null when the master has no summarize route.
async function loadSummarized(trialId: number, maxDatapoints: number, out: TrialMetrics, seen: Set<string>, signal: AbortSignal): Promise<boolean> {
  let r: any;
  try {
    r = await api('GET', `trials/${trialId}/summarize?maxDatapoints=${maxDatapoints}`, undefined, signal);
  } catch (e) {
    if (e instanceof ApiError && (e.status === 404 || e.status === 405 || e.status === 501) && !/trial/i.test(e.message)) {
      summarize = 'no';
      return false;
    }
    throw e;
  }
  summarize = 'yes';
  for (const series of r.metrics ?? []) {
    const group = groupOf(series);
    if (!group) continue;
    const byBatches = new Map<number, Record<string, unknown>>();
    for (const p of series.data ?? []) {
      const batches = Number(p.batches);
      const row = byBatches.get(batches) ?? {};
      // Determined's DataPoint carries {values: {name: v}}; a per-metric series {name, value}.
      if (p.values && typeof p.values === 'object') Object.assign(row, p.values);
      else if (series.name !== undefined) row[series.name] = p.value;
      byBatches.set(batches, row);
    }
    const list = out.rows[group].get(trialId) ?? [];
    for (const [batches, values] of byBatches) {
      list.push({ batches, values });
      for (const [name, v] of Object.entries(values)) if (typeof v === 'number') addName(out, seen, group, name);
    }
    out.rows[group].set(trialId, list);
  }
  return true;
}

// Every trial's series, downsampled on the server when it can (see above).
export async function loadTrialMetrics(trialIds: number[], signal: AbortSignal, maxDatapoints = MAX_DATAPOINTS): Promise<TrialMetrics> {
  // Many trials would mean a request each: the one stream is cheaper then.
  if (summarize !== 'no' && trialIds.length && trialIds.length <= SUMMARIZE_MAX_TRIALS) {
    const out = emptyMetrics();
    const seen = new Set<string>();
    let supported = true;
    for (const id of trialIds) {
      if (!(await loadSummarized(id, maxDatapoints, out, seen, signal))) {
        supported = false;
        break;
      }
    }
    // No series at all may mean a route that needs metric names: the full read is cheap then.
    if (supported && out.names.length) {
      out.names.sort((a, b) => keyString(a).localeCompare(keyString(b)));
      return out;
    }
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
