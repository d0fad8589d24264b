// One trial: its metric chart (refreshing every 2 s while the trial runs), hyperparameters,
// workloads, checkpoints, logs (followed live through the NDJSON log route) and the profiler's
// system metrics; kill, and
// "continue trial" (a new experiment warm-started from this trial).
import { useEffect, useRef, useState } from 'react';
import { api, errorText, streamNdjson } from '../api';
import { ErrorBanner, Link, Loading, StateBadge, Tabs } from '../components/common';
import { ConfigDialog, continueTrialConfig } from '../components/ConfigDialog';
import { MetricChart } from '../components/MetricChart';
import { fmtDuration, fmtNumber, fmtTime, TERMINAL_STATES } from '../format';
import { usePoll } from '../hooks';
import { loadTrialMetrics } from '../metrics';
import { CheckpointTable } from '../components/CheckpointTable';
import { ProfilerCharts } from '../components/ProfilerCharts';

type Tab = 'Overview' | 'Hyperparameters' | 'Workloads' | 'Checkpoints' | 'Logs' | 'Profiler';
const TABS: Tab[] = ['Overview', 'Hyperparameters', 'Workloads', 'Checkpoints', 'Logs', 'Profiler'];

export function TrialDetail({ experimentId, trialId }: { experimentId: number; trialId: number }) {
  const [tab, setTab] = useState<Tab>('Overview');
  const [continuing, setContinuing] = useState(false);
  const trial = usePoll((signal) => api('GET', `trials/${trialId}`, undefined, signal), [trialId]);
  const exp = usePoll((signal) => api('GET', `experiments/${experimentId}`, undefined, signal), [experimentId], 0);
  const t = trial.data?.trial;
  const live = t ? !TERMINAL_STATES.has(t.state) : true;
  const metrics = usePoll((signal) => loadTrialMetrics([trialId], signal), [trialId], live ? 2000 : 0);
  const ckpts = usePoll(
    (signal) => (tab === 'Checkpoints' ? api('GET', `trials/${trialId}/checkpoints`, undefined, signal) : Promise.resolve(null)),
    [trialId, tab],
  );
  if (!t) return <div className="page">{trial.error ? <ErrorBanner error={trial.error} /> : <Loading />}</div>;
  const config = exp.data?.config ?? {};
  return (
    <div className="page">
      <div className="crumbs">
        <Link to="/experiments">Experiments</Link> / <Link to={`/experiments/${experimentId}`}>{experimentId}</Link> / trial{' '}
        {trialId}
      </div>
      <div className="header">
        <h1>
          Trial {trialId} <span className="muted">of {exp.data?.experiment?.name ?? `experiment ${experimentId}`}</span>
        </h1>
        <StateBadge state={t.state} />
        <TrialKill trial={t} onDone={trial.reload} />
        <button onClick={() => setContinuing(true)} disabled={!exp.data} data-testid="action-continue">
          Continue trial
        </button>
        {continuing && exp.data ? (
          <ConfigDialog
            title={`Continue trial ${trialId}`}
            initialConfig={continueTrialConfig(exp.data.config ?? exp.data.experiment?.config, t)}
            parentId={experimentId}
            submitLabel="Create"
            onClose={() => setContinuing(false)}
          />
        ) : null}
      </div>
      <ErrorBanner error={trial.error} />
      <div className="facts">
        <span>Batches: {t.totalBatchesProcessed}</span>
        <span>Restarts: {t.restarts}</span>
        <span>Started: {fmtTime(t.startTime)}</span>
        <span>Duration: {fmtDuration(t.startTime, t.endTime)}</span>
        <span>Searcher metric: {fmtNumber(t.searcherMetricValue)}</span>
      </div>
      <Tabs tabs={TABS} value={tab} onChange={setTab} />
      {tab === 'Overview' && (
        <section>
          <h2>Metrics</h2>
          <ErrorBanner error={metrics.error} />
          <MetricChart metrics={metrics.data} searcherMetric={config.searcher?.metric} label={() => `trial ${trialId}`} testId="trial-chart" />
        </section>
      )}
      {(tab === 'Overview' || tab === 'Hyperparameters') && (
        <section>
          <h2>Hyperparameters</h2>
          <table className="table narrow" data-testid="hparams">
            <tbody>
              {Object.entries(t.hparams ?? {}).map(([k, v]) => (
                <tr key={k}>
                  <th>{k}</th>
                  <td className="mono">{typeof v === 'object' ? JSON.stringify(v) : String(v)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      {tab === 'Checkpoints' && (
        <section>
          <ErrorBanner error={ckpts.error} />
          {ckpts.data ? <CheckpointTable checkpoints={ckpts.data.checkpoints ?? []} onChanged={ckpts.reload} /> : <Loading />}
        </section>
      )}
      {tab === 'Workloads' && <Workloads trialId={trialId} live={live} />}
      {tab === 'Logs' && <Logs trialId={trialId} live={live} />}
      {tab === 'Profiler' && <ProfilerCharts trialId={trialId} live={live} />}
    </div>
  );
}

function TrialKill({ trial, onDone }: { trial: any; onDone: () => void }) {
  const [error, setError] = useState<string | null>(null);
  if (TERMINAL_STATES.has(trial.state)) return null;
  return (
    <div className="actions">
      <button
        onClick={async () => {
          if (!window.confirm(`kill trial ${trial.id}?`)) return;
          try {
            await api('POST', `trials/${trial.id}/kill`);
          } catch (e) {
            setError(`kill failed: ${errorText(e)}`);
          }
          onDone();
        }}
      >
        Kill trial
      </button>
      <ErrorBanner error={error} />
    </div>
  );
}

const WORKLOAD_PAGE = 20;

// Training, validation and checkpoint rows by batches, a page at a time
// (GET /api/v1/trials/{id}/workloads with offset and limit).
function Workloads({ trialId, live }: { trialId: number; live: boolean }) {
  const [offset, setOffset] = useState(0);
  const rows = usePoll(
    (signal) => api('GET', `trials/${trialId}/workloads?offset=${offset}&limit=${WORKLOAD_PAGE}`, undefined, signal),
    [trialId, offset],
    live ? 5000 : 0,
  );
  const list: any[] = rows.data?.workloads ?? [];
  const total: number = rows.data?.pagination?.total ?? 0;
  const fmtMetrics = (m: any) =>
    Object.entries(m?.metrics?.avgMetrics ?? m?.metrics ?? {})
      .filter(([, v]) => typeof v !== 'object')
      .map(([k, v]) => `${k}=${fmtNumber(v)}`)
      .join('  ');
  return (
    <section>
      <ErrorBanner error={rows.error} />
      <table className="table" data-testid="workloads">
        <thead>
          <tr>
            <th>Batches</th>
            <th>Kind</th>
            <th>Values</th>
            <th>Reported</th>
          </tr>
        </thead>
        <tbody>
          {list.map((w, i) => {
            const kind = w.training ? 'training' : w.validation ? 'validation' : 'checkpoint';
            const body = w.training ?? w.validation ?? w.checkpoint;
            return (
              <tr key={`${offset + i}`} className={`workload-${kind}`}>
                <td>{body.totalBatches}</td>
                <td>{kind}</td>
                <td className="mono">{kind === 'checkpoint' ? `${body.uuid} (${String(body.state).replace('STATE_', '').toLowerCase()})` : fmtMetrics(body)}</td>
                <td>{fmtTime(body.endTime)}</td>
              </tr>
            );
          })}
          {!list.length && !rows.loading ? (
            <tr>
              <td colSpan={4} className="muted center">
                No workloads yet.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
      <div className="pager">
        <button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - WORKLOAD_PAGE))}>
          ‹ Prev
        </button>
        <span data-testid="workload-range">{total ? `${offset + 1}–${Math.min(offset + WORKLOAD_PAGE, total)} of ${total}` : '0'}</span>
        <button disabled={offset + WORKLOAD_PAGE >= total} onClick={() => setOffset(offset + WORKLOAD_PAGE)}>
          Next ›
        </button>
      </div>
    </section>
  );
}

const MAX_LINES = 20000;

function Logs({ trialId, live }: { trialId: number; live: boolean }) {
  const [lines, setLines] = useState<any[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [follow, setFollow] = useState(true);
  const [text, setText] = useState('');
  const [level, setLevel] = useState('');
  const [rank, setRank] = useState('');
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const ctrl = new AbortController();
    setLines([]);
    setError(null);
    let buffer: any[] = [];
    let timer: number | undefined;
    // Batch the lines into one render every 200 ms: a chatty trial prints thousands a second.
    const flush = () => {
      timer = undefined;
      const add = buffer;
      buffer = [];
      setLines((old) => {
        const next = old.concat(add);
        return next.length > MAX_LINES ? next.slice(next.length - MAX_LINES) : next;
      });
    };
    streamNdjson(
      `trials/${trialId}/logs?follow=${follow && live}`,
      (log) => {
        buffer.push(log);
        if (timer === undefined) timer = window.setTimeout(flush, 200);
      },
      ctrl.signal,
    )
      .then(() => flush())
      .catch((e) => {
        if (!ctrl.signal.aborted) setError(`logs: ${errorText(e)}`);
      });
    return () => {
      ctrl.abort();
      window.clearTimeout(timer);
    };
  }, [trialId, follow, live]);

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, follow]);

  const levels = Array.from(new Set(lines.map((l) => l.level).filter(Boolean))).sort();
  const ranks = Array.from(new Set(lines.map((l) => l.rankId).filter((r) => r !== undefined && r !== null))).sort();
  const needle = text.toLowerCase();
  const shown = lines.filter(
    (l) =>
      (!level || l.level === level) &&
      (!rank || String(l.rankId) === rank) &&
      (!needle || String(l.log ?? l.message ?? '').toLowerCase().includes(needle)),
  );
  return (
    <section>
      <div className="toolbar">
        <input placeholder="Filter text…" aria-label="log text filter" value={text} onChange={(e) => setText(e.target.value)} />
        <select aria-label="log level" value={level} onChange={(e) => setLevel(e.target.value)}>
          <option value="">All levels</option>
          {levels.map((l) => (
            <option key={l}>{l}</option>
          ))}
        </select>
        <select aria-label="rank" value={rank} onChange={(e) => setRank(e.target.value)}>
          <option value="">All ranks</option>
          {ranks.map((r) => (
            <option key={r} value={String(r)}>
              rank {r}
            </option>
          ))}
        </select>
        <label className="check">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> Follow
        </label>
        <span className="muted">
          {shown.length} of {lines.length} lines
        </span>
      </div>
      <ErrorBanner error={error} />
      <div className="logs" ref={box} data-testid="logs">
        {shown.map((l, i) => (
          <div key={l.id ?? i} className={`log-line level-${String(l.level || '').toLowerCase()}`}>
            <span className="ts">{l.timestamp ? new Date(l.timestamp).toLocaleTimeString() : ''}</span>
            {l.rankId !== undefined && l.rankId !== null ? <span className="rank">[rank={l.rankId}]</span> : null}
            <span className="msg">{String(l.log ?? l.message ?? '').replace(/\n$/, '')}</span>
          </div>
        ))}
      </div>
    </section>
  );
}
