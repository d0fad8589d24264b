// Hyperparameters of a search as plot dimensions, and the rungs of an adaptive (ASHA) search,
// computed from the trials the master reports. Pure functions (no DOM), so the views stay thin.

export interface Dim {
  key: string; // dotted path of a nested hyperparameter
  kind: 'number' | 'category';
  log: boolean;
  min: number;
  max: number;
  categories: string[];
}

// {a: 1, opt: {lr: 0.1}} -> {a: 1, 'opt.lr': 0.1}
export function flatten(h: Record<string, unknown>, prefix = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(h ?? {})) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) Object.assign(out, flatten(v as Record<string, unknown>, `${prefix}${k}.`));
    else out[prefix + k] = v;
  }
  return out;
}

// A dimension per hyperparameter that varies; numbers spanning two decades or more go on a log axis.
export function dimensions(rows: Record<string, unknown>[]): Dim[] {
  const keys = Array.from(new Set(rows.flatMap((r) => Object.keys(r)))).sort();
  const dims: Dim[] = [];
  for (const key of keys) {
    const vals = rows.map((r) => r[key]).filter((v) => v !== undefined);
    const distinct = new Set(vals.map((v) => JSON.stringify(v)));
    if (distinct.size < 2) continue;
    if (vals.every((v) => typeof v === 'number' && isFinite(v))) {
      const nums = vals as number[];
      const min = Math.min(...nums);
      const max = Math.max(...nums);
      dims.push({ key, kind: 'number', log: min > 0 && max / min >= 100, min, max, categories: [] });
    } else {
      const categories = Array.from(distinct).sort();
      dims.push({ key, kind: 'category', log: false, min: 0, max: categories.length - 1, categories });
    }
  }
  return dims;
}

// Position of a value along a dimension, 0..1 (null when it has none).
export function position(d: Dim, v: unknown): number | null {
  if (v === undefined) return null;
  if (d.kind === 'category') {
    const i = d.categories.indexOf(JSON.stringify(v));
    if (i < 0) return null;
    return d.categories.length === 1 ? 0.5 : i / (d.categories.length - 1);
  }
  if (typeof v !== 'number' || !isFinite(v)) return null;
  if (d.max === d.min) return 0.5;
  if (d.log) return (Math.log(v) - Math.log(d.min)) / (Math.log(d.max) - Math.log(d.min));
  return (v - d.min) / (d.max - d.min);
}

// The searcher metric of a trial: its best validation value, else the searcher's last report.
export function trialMetric(t: any, metric: string | undefined): number | null {
  const m = t?.bestValidation?.metrics?.avgMetrics ?? t?.bestValidation?.metrics;
  const v = metric && m ? m[metric] : undefined;
  if (typeof v === 'number' && isFinite(v)) return v;
  return typeof t?.searcherMetricValue === 'number' ? t.searcherMetricValue : null;
}

export interface RungTrial {
  id: number;
  outcome: 'promoted' | 'stopped' | 'running' | 'completed' | 'waiting' | 'exited';
  metric: number | null; // the searcher metric reported at (or first after) the rung's length
}

export interface Rung {
  index: number;
  length: number; // in the searcher's unit (batches when max_length is in batches)
  trials: RungTrial[];
}

export interface Bracket {
  index: number;
  maxTrials: number;
  rungs: Rung[];
}

// Searchers whose rungs the master reports from the searcher itself
// (GET /api/v1/experiments/{id}/searcher/rungs); the synchronous ones (adaptive,
// adaptive_simple) are computed here from the trials' lengths.
export const SERVER_RUNGS = new Set(['adaptive_asha', 'async_halving']);

// The master's answer as brackets of rungs (trials not yet stored, with no id, are left out).
export function bracketsOf(answer: any): Bracket[] {
  return (answer?.brackets ?? []).map((b: any) => ({
    index: b.index,
    maxTrials: b.maxTrials,
    rungs: (b.rungs ?? []).map((r: any) => ({
      index: r.index,
      length: r.length,
      trials: (r.trials ?? [])
        .filter((t: any) => typeof t.trialId === 'number')
        .map((t: any) => ({ id: t.trialId, outcome: t.outcome, metric: typeof t.metric === 'number' ? t.metric : null })),
    })),
  }));
}

const ADAPTIVE = new Set(['adaptive_asha', 'async_halving', 'adaptive', 'adaptive_simple']);

// The searcher's length in batches when it is given in batches (0.13-0.37 form, or legacy
// max_steps x batches_per_step); null for records, epochs or max_time.
function batchLength(s: any, c: any): number | null {
  const ml = s?.max_length;
  if (typeof ml === 'number') return ml;
  if (ml && typeof ml.batches === 'number') return ml.batches;
  if (typeof s?.max_steps === 'number') return s.max_steps * (c?.batches_per_step ?? 100);
  return null;
}

// The rungs of an adaptive search (Determined's ASHA: rung i of n is max_length /
// divisor^(n-1-i), at least 1, with n capped at log_divisor(max_length) + 1). A trial reached a
// rung when it trained that long; it was promoted when it reached the next one, and stopped
// there when it finished without doing so. Lengths not in batches are compared as fractions of
// the longest trial. `validations` maps trial id -> [batches, metric] ascending.
export function rungs(config: any, trials: any[], validations: Map<number, [number, number][]>, terminal: (state: string) => boolean): Rung[] | null {
  const s = config?.searcher ?? {};
  if (!ADAPTIVE.has(s.name)) return null;
  const divisor = typeof s.divisor === 'number' && s.divisor > 1 ? s.divisor : 4;
  let n = typeof s.num_rungs === 'number' && s.num_rungs > 0 ? s.num_rungs : s.max_rungs ?? 5;
  const inBatches = batchLength(s, config);
  const longest = Math.max(1, ...trials.map((t) => Number(t.totalBatchesProcessed) || 0));
  const maxLen = inBatches ?? longest;
  n = Math.max(1, Math.min(n, Math.floor(Math.log(maxLen) / Math.log(divisor) + 1e-9) + 1));
  const lengths = Array.from({ length: n }, (_, i) => Math.max(1, Math.floor(maxLen / divisor ** (n - 1 - i))));
  const out: Rung[] = lengths.map((length, index) => ({ index, length, trials: [] }));
  for (const t of trials) {
    const done = Number(t.totalBatchesProcessed) || 0;
    for (let i = 0; i < n; i++) {
      if (done < lengths[i]) break;
      const next = i + 1 < n && done >= lengths[i + 1];
      const outcome: RungTrial['outcome'] = next ? 'promoted' : i === n - 1 ? 'completed' : terminal(t.state) ? 'stopped' : 'running';
      const series = validations.get(t.id) ?? [];
      // The validation of this rung: at its length or after, before the next rung's.
      const at = series.find(([b]) => b >= lengths[i] && (i + 1 >= n || b < lengths[i + 1]));
      out[i].trials.push({ id: t.id, outcome, metric: at ? at[1] : null });
    }
  }
  return out;
}
