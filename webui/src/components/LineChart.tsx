// Learning curves with uPlot: one series per line, x = batches; log scale and smoothing options.
import { useEffect, useMemo, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  points: [number, number][]; // [x, y], x ascending
}

const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
  '#7f7f7f', '#bcbd22', '#17becf'];

// Exponential moving average, as TensorBoard's smoothing slider (0: none).
function smooth(ys: (number | null)[], weight: number): (number | null)[] {
  if (weight <= 0) return ys;
  let last: number | null = null;
  return ys.map((y) => {
    if (y === null) return null;
    last = last === null ? y : last * weight + (1 - weight) * y;
    return last;
  });
}

// Joins every series onto the union of their x values (uPlot wants one x array).
function align(series: Series[], weight: number): uPlot.AlignedData {
  const xs = Array.from(new Set(series.flatMap((s) => s.points.map((p) => p[0])))).sort((a, b) => a - b);
  const index = new Map(xs.map((x, i) => [x, i]));
  const data: (number | null)[][] = [xs];
  for (const s of series) {
    const ys: (number | null)[] = new Array(xs.length).fill(null);
    for (const [x, y] of s.points) ys[index.get(x)!] = y;
    data.push(smooth(ys, weight));
  }
  return data as uPlot.AlignedData;
}

export function LineChart(props: {
  series: Series[];
  xLabel?: string;
  yLabel?: string;
  logScale?: boolean;
  smoothing?: number;
  height?: number;
  testId?: string;
}) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const { series, logScale = false, smoothing = 0, height = 320 } = props;
  const data = useMemo(() => align(series, smoothing), [series, smoothing]);
  const shape = series.map((s) => s.label).join('\u0000') + `|${logScale}`;

  useEffect(() => {
    if (!el.current) return;
    const width = el.current.clientWidth || 800;
    const opts: uPlot.Options = {
      width,
      height,
      scales: { x: { time: false }, y: { distr: logScale ? 3 : 1 } },
      axes: [{ label: props.xLabel ?? 'batches' }, { label: props.yLabel ?? '', size: 70 }],
      series: [
        { label: props.xLabel ?? 'batches' },
        ...series.map((s, i) => ({
          label: s.label,
          stroke: COLORS[i % COLORS.length],
          width: 2,
          spanGaps: true,
          points: { show: s.points.length < 40 },
        })),
      ],
      legend: { show: true, live: true },
      cursor: { drag: { x: true, y: false } },
    };
    plot.current = new uPlot(opts, data, el.current);
    const resize = () => {
      if (plot.current && el.current) plot.current.setSize({ width: el.current.clientWidth, height });
    };
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      plot.current?.destroy();
      plot.current = null;
    };
  }, [shape, height]); // eslint-disable-line react-hooks/exhaustive-deps

  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);

  return <div className="chart" ref={el} data-testid={props.testId} />;
}
