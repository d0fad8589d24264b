// Hyperparameters against the searcher metric: parallel coordinates and one scatter plot per
// hyperparameter (plain SVG: a search has at most a few thousand trials), and the rungs of an
// adaptive search with which trials each rung promoted or stopped.
import { dimensions, flatten, position, trialMetric, type Dim, type Rung } from '../hparams';
import { fmtNumber } from '../format';
import { navigate } from '../router';

// Blue (worst) to red (best), as the colour scale of Determined's HP views.
function colour(t: number): string {
  const hue = 240 - 240 * Math.max(0, Math.min(1, t));
  return `hsl(${hue}, 75%, 45%)`;
}

function tickLabel(d: Dim, p: number): string {
  if (d.kind === 'category') {
    const i = Math.round(p * (d.categories.length - 1));
    const v = JSON.parse(d.categories[i]);
    return typeof v === 'string' ? v : fmtNumber(v);
  }
  const v = d.log ? Math.exp(Math.log(d.min) + p * (Math.log(d.max) - Math.log(d.min))) : d.min + p * (d.max - d.min);
  return fmtNumber(Number(v.toPrecision(3)));
}

interface Point {
  id: number;
  values: Record<string, unknown>;
  metric: number | null;
}

function points(trials: any[], metric: string | undefined): Point[] {
  return trials.map((t) => ({ id: t.id, values: flatten(t.hparams ?? {}), metric: trialMetric(t, metric) }));
}

// 0..1 along the metric, 1 = best.
function goodness(pts: Point[], smallerIsBetter: boolean): (m: number | null) => number | null {
  const ms = pts.map((p) => p.metric).filter((m): m is number => m !== null);
  const lo = Math.min(...ms);
  const hi = Math.max(...ms);
  return (m) => {
    if (m === null || !ms.length) return null;
    const t = hi === lo ? 1 : (m - lo) / (hi - lo);
    return smallerIsBetter ? 1 - t : t;
  };
}

export function ParallelCoordinates(props: { trials: any[]; metric?: string; smallerIsBetter: boolean; experimentId: number }) {
  const pts = points(props.trials, props.metric);
  const hp = dimensions(pts.map((p) => p.values));
  const ms = pts.map((p) => p.metric).filter((m): m is number => m !== null);
  if (!hp.length) return <div className="muted">No hyperparameter varies between trials.</div>;
  const metricDim: Dim = { key: props.metric ?? 'metric', kind: 'number', log: false, min: Math.min(...ms), max: Math.max(...ms), categories: [] };
  const dims = ms.length ? [...hp, metricDim] : hp;
  const W = 960;
  const H = 340;
  const top = 30;
  const bottom = 30;
  const left = 70;
  const right = 70;
  const x = (i: number) => left + (dims.length === 1 ? 0 : (i * (W - left - right)) / (dims.length - 1));
  const y = (p: number) => top + (1 - p) * (H - top - bottom);
  const good = goodness(pts, props.smallerIsBetter);
  // Best drawn last, on top.
  const order = [...pts].sort((a, b) => (good(a.metric) ?? -1) - (good(b.metric) ?? -1));
  return (
    <svg className="hp-chart" viewBox={`0 0 ${W} ${H}`} data-testid="parallel-coordinates" role="img" aria-label="parallel coordinates">
      {order.map((p) => {
        const coords: string[] = [];
        dims.forEach((d, i) => {
          const v = i === hp.length ? p.metric : p.values[d.key];
          const pos = position(d, v ?? undefined);
          if (pos !== null) coords.push(`${x(i)},${y(pos)}`);
        });
        const g = good(p.metric);
        return (
          <polyline
            key={p.id}
            className="hp-line"
            points={coords.join(' ')}
            fill="none"
            stroke={g === null ? '#9ca3af' : colour(g)}
            strokeWidth={2}
            strokeOpacity={0.8}
            onClick={() => navigate(`/experiments/${props.experimentId}/trials/${p.id}`)}
          >
            <title>
              {`trial ${p.id}\n` + dims.map((d, i) => `${d.key}: ${fmtNumber(i === hp.length ? p.metric : p.values[d.key])}`).join('\n')}
            </title>
          </polyline>
        );
      })}
      {dims.map((d, i) => (
        <g key={d.key}>
          <line x1={x(i)} x2={x(i)} y1={top} y2={H - bottom} stroke="#374151" />
          <text x={x(i)} y={top - 12} textAnchor="middle" className="axis-title">
            {d.key}
            {d.log ? ' (log)' : ''}
          </text>
          {(d.kind === 'category' ? d.categories.map((_, j) => (d.categories.length === 1 ? 0.5 : j / (d.categories.length - 1))) : [0, 0.5, 1]).map((p) => (
            <text key={p} x={x(i) + 5} y={y(p) + 4} className="axis-tick">
              {tickLabel(d, p)}
            </text>
          ))}
        </g>
      ))}
    </svg>
  );
}

export function ScatterPlots(props: { trials: any[]; metric?: string; smallerIsBetter: boolean; experimentId: number }) {
  const pts = points(props.trials, props.metric).filter((p) => p.metric !== null);
  const hp = dimensions(pts.map((p) => p.values));
  if (!pts.length) return <div className="muted">No trial has reported the searcher metric yet.</div>;
  const ms = pts.map((p) => p.metric as number);
  const metricDim: Dim = { key: props.metric ?? 'metric', kind: 'number', log: false, min: Math.min(...ms), max: Math.max(...ms), categories: [] };
  const good = goodness(pts, props.smallerIsBetter);
  const W = 300;
  const H = 220;
  const pad = { l: 56, r: 12, t: 12, b: 36 };
  return (
    <div className="scatter-grid" data-testid="scatter-plots">
      {hp.map((d) => (
        <svg key={d.key} className="scatter" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`${d.key} against ${metricDim.key}`}>
          <rect x={pad.l} y={pad.t} width={W - pad.l - pad.r} height={H - pad.t - pad.b} fill="#fafbfc" stroke="#e3e6eb" />
          {[0, 0.5, 1].map((p) => (
            <text key={`y${p}`} x={pad.l - 4} y={pad.t + (1 - (0.04 + 0.92 * p)) * (H - pad.t - pad.b) + 4} textAnchor="end" className="axis-tick">
              {tickLabel(metricDim, p)}
            </text>
          ))}
          {(d.kind === 'category' ? d.categories.map((_, j) => (d.categories.length === 1 ? 0.5 : j / (d.categories.length - 1))) : [0, 0.5, 1]).map((p) => (
            <text key={`x${p}`} x={pad.l + (0.04 + 0.92 * p) * (W - pad.l - pad.r)} y={H - pad.b + 14} textAnchor="middle" className="axis-tick">
              {tickLabel(d, p)}
            </text>
          ))}
          <text x={(W + pad.l) / 2} y={H - 4} textAnchor="middle" className="axis-title">
            {d.key}
            {d.log ? ' (log)' : ''}
          </text>
          {pts.map((p) => {
            const px = position(d, p.values[d.key]);
            const py = position(metricDim, p.metric);
            if (px === null || py === null) return null;
            return (
              <circle
                key={p.id}
                className="hp-point"
                cx={pad.l + (0.04 + 0.92 * px) * (W - pad.l - pad.r)}
                cy={pad.t + (1 - (0.04 + 0.92 * py)) * (H - pad.t - pad.b)}
                r={5}
                fill={colour(good(p.metric) ?? 0)}
                fillOpacity={0.8}
                onClick={() => navigate(`/experiments/${props.experimentId}/trials/${p.id}`)}
              >
                <title>{`trial ${p.id}: ${d.key} = ${fmtNumber(p.values[d.key])}, ${metricDim.key} = ${fmtNumber(p.metric)}`}</title>
              </circle>
            );
          })}
        </svg>
      ))}
    </div>
  );
}

const OUTCOME_TEXT = {
  promoted: 'promoted',
  stopped: 'stopped here',
  running: 'training towards this rung',
  completed: 'completed',
  waiting: 'waiting for a promotion',
  exited: 'exited here on its own',
};

export function RungView(props: { rungs: Rung[]; experimentId: number; unit: string; testId?: string }) {
  return (
    <table className="table" data-testid={props.testId ?? 'rungs'}>
      <thead>
        <tr>
          <th>Rung</th>
          <th>Length ({props.unit})</th>
          <th>Trials</th>
          <th>Promoted</th>
          <th>Stopped</th>
          <th>Trials (metric at the rung)</th>
        </tr>
      </thead>
      <tbody>
        {props.rungs.map((r) => (
          <tr key={r.index} data-testid={`rung-${r.index}`}>
            <td>{r.index + 1}</td>
            <td>{r.length}</td>
            <td>{r.trials.length}</td>
            <td>{r.trials.filter((t) => t.outcome === 'promoted').length}</td>
            <td>{r.trials.filter((t) => t.outcome === 'stopped').length}</td>
            <td>
              {[...r.trials]
                .sort((a, b) => a.id - b.id)
                .map((t) => (
                  <a
                    key={t.id}
                    href={`/det/experiments/${props.experimentId}/trials/${t.id}`}
                    className={`chip outcome-${t.outcome}`}
                    title={OUTCOME_TEXT[t.outcome]}
                    onClick={(e) => {
                      e.preventDefault();
                      navigate(`/experiments/${props.experimentId}/trials/${t.id}`);
                    }}
                  >
                    {t.id}
                    {t.metric !== null ? `: ${fmtNumber(t.metric)}` : ''}
                  </a>
                ))}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
