// The profiler's system metrics of a trial (GPU and CPU utilization, memory, network, disk) as
// uPlot charts, one per metric with a line per agent (and GPU), refreshed every 2 s while the
// trial runs. Reads Determined's NDJSON routes: GET /api/v1/trials/{id}/profiler/available_series
// for the series, then /profiler/metrics?labels.name=... for each.
import { streamNdjson } from '../api';
import { usePoll } from '../hooks';
import { ErrorBanner, Loading } from './common';
import { LineChart, type Series } from './LineChart';

// Determined's system metric names, titled (values as the harness reports them).
const TITLES: Record<string, string> = {
  gpu_util: 'GPU utilization (%)',
  gpu_free_memory: 'GPU free memory (bytes)',
  cpu_util_simple: 'CPU utilization (%)',
  memory_free: 'Free memory (bytes)',
  net_throughput_sent: 'Network sent (bytes/s)',
  net_throughput_recv: 'Network received (bytes/s)',
  disk_iops: 'Disk IOPS',
  disk_throughput_read: 'Disk read (bytes/s)',
  disk_throughput_write: 'Disk write (bytes/s)',
};
const ORDER = Object.keys(TITLES);

interface Chart {
  name: string;
  series: Series[];
}

function seriesKey(labels: any): string {
  const agent = labels?.agentId || 'agent';
  return labels?.gpuUuid ? `${agent} ${labels.gpuUuid}` : agent;
}

async function loadProfiler(trialId: number, signal: AbortSignal): Promise<Chart[]> {
  const names = new Set<string>();
  await streamNdjson(
    `trials/${trialId}/profiler/available_series`,
    (r) => {
      for (const l of r?.labels ?? []) if (l?.name) names.add(l.name);
    },
    signal,
  );
  const sorted = [...names].sort((a, b) => {
    const ia = ORDER.indexOf(a), ib = ORDER.indexOf(b);
    return (ia < 0 ? ORDER.length : ia) - (ib < 0 ? ORDER.length : ib) || a.localeCompare(b);
  });
  let start = Infinity;
  const raw = await Promise.all(
    sorted.map(async (name) => {
      const byKey = new Map<string, [number, number][]>();
      await streamNdjson(
        `trials/${trialId}/profiler/metrics?labels.name=${encodeURIComponent(name)}&labels.metricType=PROFILER_METRIC_TYPE_SYSTEM`,
        (r) => {
          const b = r?.batch;
          if (!b) return;
          const key = seriesKey(b.labels);
          const pts = byKey.get(key) ?? [];
          (b.values ?? []).forEach((v: number, i: number) => {
            const t = Date.parse(b.timestamps?.[i]) / 1000;
            if (typeof v === 'number' && isFinite(t)) {
              pts.push([t, v]);
              start = Math.min(start, t);
            }
          });
          byKey.set(key, pts);
        },
        signal,
      );
      return { name, byKey };
    }),
  );
  // x: seconds since the first sample of the trial.
  return raw.map(({ name, byKey }) => ({
    name,
    series: [...byKey.entries()].map(([label, pts]) => ({
      label,
      points: pts.map(([t, v]) => [Math.round((t - start) * 1000) / 1000, v] as [number, number]).sort((a, b) => a[0] - b[0]),
    })),
  }));
}

export function ProfilerCharts({ trialId, live }: { trialId: number; live: boolean }) {
  const charts = usePoll((signal) => loadProfiler(trialId, signal), [trialId], live ? 2000 : 0);
  if (!charts.data) return charts.error ? <ErrorBanner error={charts.error} /> : <Loading />;
  return (
    <section data-testid="profiler">
      <ErrorBanner error={charts.error} />
      {charts.data.length === 0 ? (
        <div className="muted">
          No system metrics. Turn the profiler on in the trial (<code>core_context.profiler.on()</code>) or with{' '}
          <code>profiling: {'{'}enabled: true{'}'}</code> in the experiment configuration.
        </div>
      ) : (
        charts.data.map((c) => (
          <div key={c.name} data-testid={`profiler-${c.name}`} data-points={c.series.reduce((n, s) => n + s.points.length, 0)}>
            <h3>{TITLES[c.name] ?? c.name}</h3>
            <LineChart series={c.series} xLabel="seconds" yLabel={c.name} height={220} testId={`profiler-chart-${c.name}`} />
          </div>
        ))
      )}
    </section>
  );
}
