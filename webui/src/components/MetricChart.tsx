// A metric picker, log-scale and smoothing controls over a LineChart.
import { useState } from 'react';
import { LineChart } from './LineChart';
import { defaultKey, keyString, parseKey, seriesFor, type MetricKey, type TrialMetrics } from '../metrics';

export function MetricChart(props: {
  metrics: TrialMetrics | undefined;
  searcherMetric?: string;
  label: (trialId: number) => string;
  testId: string;
}) {
  const [chosen, setChosen] = useState<MetricKey | null>(null);
  const [log, setLog] = useState(false);
  const [smoothing, setSmoothing] = useState(0);
  const m = props.metrics;
  if (!m) return <div className="muted">Loading metrics…</div>;
  if (!m.names.length) return <div className="muted">No metrics reported yet.</div>;
  const key =
    chosen && m.names.some((k) => keyString(k) === keyString(chosen)) ? chosen : defaultKey(m, props.searcherMetric)!;
  const series = seriesFor(m, key, props.label);
  return (
    <div className="metric-chart">
      <div className="toolbar">
        <label>
          Metric{' '}
          <select
            aria-label="metric"
            value={keyString(key)}
            onChange={(e) => setChosen(parseKey(e.target.value))}
          >
            {m.names.map((k) => (
              <option key={keyString(k)} value={keyString(k)}>
                {keyString(k)}
              </option>
            ))}
          </select>
        </label>
        <label className="check">
          <input type="checkbox" checked={log} onChange={(e) => setLog(e.target.checked)} /> Log scale
        </label>
        <label>
          Smoothing{' '}
          <input
            type="range"
            min={0}
            max={0.99}
            step={0.01}
            value={smoothing}
            onChange={(e) => setSmoothing(Number(e.target.value))}
          />{' '}
          {smoothing.toFixed(2)}
        </label>
      </div>
      <LineChart series={series} yLabel={key.name} logScale={log} smoothing={smoothing} testId={props.testId} />
    </div>
  );
}
