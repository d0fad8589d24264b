// One experiment: state and progress with its lifecycle actions, learning curves of every trial,
// the trials table, checkpoints and the submitted config.
import { useState } from 'react';
import { api } from '../api';
import { ExperimentActions } from '../components/Actions';
import { ErrorBanner, Link, Loading, Progress, StateBadge, Tabs } from '../components/common';
import { MetricChart } from '../components/MetricChart';
import { fmtBytes, fmtDuration, fmtNumber, fmtTime } from '../format';
import { usePoll } from '../hooks';
import { loadTrialMetrics } from '../metrics';

type Tab = 'Overview' | 'Trials' | 'Checkpoints' | 'Configuration';

function metricOf(v: any, name: string | undefined): string {
  const m = v?.metrics?.avgMetrics ?? v?.metrics;
  if (!m || !name) return '—';
  return fmtNumber(m[name]);
}

export function CheckpointTable({ checkpoints }: { checkpoints: any[] }) {
  if (!checkpoints.length) return <div className="muted">No checkpoints.</div>;
  return (
    <table className="table" data-testid="checkpoint-table">
      <thead>
        <tr>
          <th>UUID</th>
          <th>Trial</th>
          <th>Batches</th>
          <th>State</th>
          <th>Reported</th>
          <th>Size</th>
        </tr>
      </thead>
      <tbody>
        {checkpoints.map((c) => {
          const res = c.resources ?? {};
          const size = Object.values(res).reduce((a: number, b) => a + Number(b || 0), 0);
          return (
            <tr key={c.uuid}>
              <td className="mono">{c.uuid}</td>
              <td>{c.trialId ?? c.training?.trialId ?? '—'}</td>
              <td>{c.metadata?.steps_completed ?? c.totalBatches ?? c.training?.totalBatches ?? '—'}</td>
              <td>
                <StateBadge state={c.state} />
              </td>
              <td>{fmtTime(c.reportTime)}</td>
              <td>{fmtBytes(size)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

export function ExperimentDetail({ id }: { id: number }) {
  const [tab, setTab] = useState<Tab>('Overview');
  const exp = usePoll((signal) => api('GET', `experiments/${id}`, undefined, signal), [id]);
  const trials = usePoll((signal) => api('GET', `experiments/${id}/trials?limit=1000`, undefined, signal), [id]);
  const trialList: any[] = trials.data?.trials ?? [];
  const trialIds = trialList.map((t) => t.id).join(',');
  const metrics = usePoll(
    (signal) => loadTrialMetrics(trialIds ? trialIds.split(',').map(Number) : [], signal),
    [trialIds],
    10000,
  );
  const ckpts = usePoll(
    (signal) => (tab === 'Checkpoints' ? api('GET', `experiments/${id}/checkpoints?limit=1000`, undefined, signal) : Promise.resolve(null)),
    [id, tab],
  );

  if (!exp.data) return <div className="page">{exp.error ? <ErrorBanner error={exp.error} /> : <Loading />}</div>;
  const e = exp.data.experiment;
  const config = exp.data.config ?? e.config ?? {};
  const searcherMetric: string | undefined = config.searcher?.metric;
  return (
    <div className="page">
      <div className="crumbs">
        <Link to="/experiments">Experiments</Link> / {e.id}
      </div>
      <div className="header">
        <h1>
          {e.name} <span className="muted">#{e.id}</span>
        </h1>
        <StateBadge state={e.state} />
        <Progress value={e.progress} />
        <ExperimentActions experiment={e} onDone={exp.reload} />
      </div>
      <ErrorBanner error={exp.error} />
      <div className="facts">
        <span>Searcher: {config.searcher?.name ?? e.searcherType}</span>
        <span>
          Metric: {searcherMetric ?? '—'} ({config.searcher?.smaller_is_better === false ? 'larger' : 'smaller'} is better)
        </span>
        <span>User: {e.username}</span>
        <span>Started: {fmtTime(e.startTime)}</span>
        <span>Duration: {fmtDuration(e.startTime, e.endTime)}</span>
        <span>Trials: {e.numTrials}</span>
        <span>Pool: {e.resourcePool || 'default'}</span>
        {e.forkedFrom ? (
          <span>
            Forked from <Link to={`/experiments/${e.forkedFrom}`}>{e.forkedFrom}</Link>
          </span>
        ) : null}
      </div>
      <Tabs tabs={['Overview', 'Trials', 'Checkpoints', 'Configuration'] as Tab[]} value={tab} onChange={setTab} />
      {tab === 'Overview' && (
        <section>
          <h2>Learning curves</h2>
          <ErrorBanner error={metrics.error} />
          <MetricChart
            metrics={metrics.data}
            searcherMetric={searcherMetric}
            label={(t) => `trial ${t}`}
            testId="learning-curve"
          />
        </section>
      )}
      {(tab === 'Overview' || tab === 'Trials') && (
        <section>
          <h2>Trials</h2>
          <ErrorBanner error={trials.error} />
          <TrialsTable trials={trialList} experimentId={id} metric={searcherMetric} />
        </section>
      )}
      {tab === 'Checkpoints' && (
        <section>
          <ErrorBanner error={ckpts.error} />
          {ckpts.data ? <CheckpointTable checkpoints={ckpts.data.checkpoints ?? []} /> : <Loading />}
        </section>
      )}
      {tab === 'Configuration' && (
        <section>
          <h2>Submitted configuration</h2>
          <pre className="code" data-testid="config">
            {e.originalConfig || JSON.stringify(config, null, 2)}
          </pre>
          <h2>Expanded configuration</h2>
          <pre className="code">{JSON.stringify(config, null, 2)}</pre>
        </section>
      )}
    </div>
  );
}

function TrialsTable({ trials, experimentId, metric }: { trials: any[]; experimentId: number; metric?: string }) {
  if (!trials.length) return <div className="muted">No trials yet.</div>;
  const hpNames = Array.from(new Set(trials.flatMap((t) => Object.keys(t.hparams ?? {})))).sort();
  return (
    <table className="table" data-testid="trials-table">
      <thead>
        <tr>
          <th>Trial</th>
          <th>State</th>
          {hpNames.map((h) => (
            <th key={h}>{h}</th>
          ))}
          <th>Batches</th>
          <th>Best {metric}</th>
          <th>Latest {metric}</th>
          <th>Restarts</th>
          <th>Started</th>
          <th>Duration</th>
        </tr>
      </thead>
      <tbody>
        {trials.map((t) => (
          <tr key={t.id}>
            <td>
              <Link to={`/experiments/${experimentId}/trials/${t.id}`}>{t.id}</Link>
            </td>
            <td>
              <StateBadge state={t.state} />
            </td>
            {hpNames.map((h) => (
              <td key={h}>{typeof t.hparams?.[h] === 'object' ? JSON.stringify(t.hparams[h]) : fmtNumber(t.hparams?.[h])}</td>
            ))}
            <td>{t.totalBatchesProcessed}</td>
            <td>{metricOf(t.bestValidation, metric)}</td>
            <td>{metricOf(t.latestValidation, metric)}</td>
            <td>{t.restarts}</td>
            <td>{fmtTime(t.startTime)}</td>
            <td>{fmtDuration(t.startTime, t.endTime)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
