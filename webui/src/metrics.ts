// Metric series of trials, read from the NDJSON route GET /api/v1/trials/metrics/trial_metrics.
import { streamNdjson } from './api';
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

export async function loadTrialMetrics(trialIds: number[], signal: AbortSignal): Promise<TrialMetrics> {
  const out: TrialMetrics = { rows: { training: new Map(), validation: new Map() }, names: [] };
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
            if (typeof val !== 'number') continue;
            const k = `${group}: ${name}`;
            if (!seen.has(k)) {
              seen.add(k);
              out.names.push({ group, name });
            }
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
