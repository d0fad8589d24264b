// One experiment: state and progress with its lifecycle actions (fork included), learning curves
// of every trial, hyperparameters against the metric (with an adaptive search's rungs), the trials
// table, checkpoints, the submitted config and the code.
import { useEffect, useRef, useState } from 'react';
import { api } from '../api';
import { ExperimentActions } from '../components/Actions';
import { ErrorBanner, Link, Loading, Progress, StateBadge, Tabs } from '../components/common';
import { CheckpointTable } from '../components/CheckpointTable';
import { CodeTree } from '../components/CodeTree';
import { ParallelCoordinates, RungView, ScatterPlots } from '../components/HpViz';
import { MetricChart } from '../components/MetricChart';
import { fmtDuration, fmtNumber, fmtTime, TERMINAL_STATES } from '../format';
import { bracketsOf, rungs, SERVER_RUNGS } from '../hparams';
import { usePoll } from '../hooks';
import { loadTrialMetrics, type TrialMetrics } from '../metrics';
import { curvesKey, experimentKey, firstCurve, takePrefetched } from '../prefetch';

type Tab = 'Overview' | 'Hyperparameters' | 'Trials' | 'Checkpoints' | 'Configuration' | 'Code';
const TABS: Tab[] = ['Overview', 'Hyperparameters', 'Trials', 'Checkpoints', 'Configuration', 'Code'];

// trial id -> [batches, searcher metric] of its validations, ascending.
function validationSeries(m: TrialMetrics | undefined, metric: string | undefined): Map<number, [number, number][]> {
  const out = new Map<number, [number, number][]>();
  if (!m || !metric) return out;
  for (const [id, rows] of m.rows.validation) {
    const pts: [number, number][] = [];
    for (const r of rows) {
      const v = r.values[metric];
      if (typeof v === 'number') pts.push([r.batches, v]);
    }
    out.set(id, pts.sort((a, b) => a[0] - b[0]));
  }
  return out;
}

function metricOf(v: any, name: string | undefined): string {
  const m = v?.metrics?.avgMetrics ?? v?.metrics;
  if (!m || !name) return '—';
  return fmtNumber(m[name]);
}

// A load that waits for a later render: settles only when `signal` aborts (usePoll's deps
// changed), so the poll shows no data rather than an empty answer.
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) =>
    signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))),
  );
}

export function ExperimentDetail({ id }: { id: number }) {
  const [tab, setTab] = useState<Tab>('Overview');
  const exp = usePoll(
    (signal) => takePrefetched<any>(experimentKey(id)) ?? api('GET', `experiments/${id}`, undefined, signal),
    [id],
  );
  // The experiment lists its trial ids (Determined's GetExperiment), so the curves are asked for
  // as soon as it is in, without the trial list; a master that leaves them out has them from it.
  const expTrialIds: unknown = exp.data?.experiment?.trialIds;
  const idsFromExp = Array.isArray(expTrialIds);
  // Curves first: on the overview the trial list (best and latest validation of every trial, a
  // read of its validations and checkpoints) is asked for once the curves are in, so that it does
  // not hold up the series on the master's store. Latched per experiment: later reloads of the
  // curves do not stop the list's polling.
  const [listFor, setListFor] = useState<number | null>(null);
  const trials = usePoll(
    (signal) =>
      listFor === id ? api('GET', `experiments/${id}/trials?limit=1000`, undefined, signal) : untilAborted(signal),
    [id, listFor === id],
  );
  const trialList: any[] = trials.data?.trials ?? [];
  const trialIds = (idsFromExp ? (expTrialIds as number[]) : trialList.map((t) => t.id)).join(',');
  // The first load asks for the searcher metric alone (what the chart draws first); the answer
  // marked partial is followed at once by the load of every metric, for the metric picker.
  const allMetrics = useRef(false);
  const metrics = usePoll(
    (signal) => {
      if (!exp.data) return untilAborted(signal);
      const only = allMetrics.current ? undefined : firstCurve(exp.data.config ?? exp.data.experiment?.config);
      return (
        takePrefetched<TrialMetrics>(curvesKey(trialIds, only)) ??
        loadTrialMetrics(trialIds ? trialIds.split(',').map(Number) : [], signal, undefined, only)
      );
    },
    [trialIds, !!exp.data],
    10000,
  );
  const reloadMetrics = metrics.reload;
  useEffect(() => {
    if (metrics.data?.partial) {
      allMetrics.current = true;
      reloadMetrics();
    }
  }, [metrics.data, reloadMetrics]);
  const curvesIn = metrics.data !== undefined || metrics.error !== null;
  const listNow = !!exp.data && (!idsFromExp || tab !== 'Overview' || curvesIn);
  useEffect(() => {
    if (listNow && listFor !== id) setListFor(id);
  }, [listNow, listFor, id]);
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
      <Tabs tabs={TABS} value={tab} onChange={setTab} />
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
      {tab === 'Hyperparameters' && (
        <HyperparameterViews
          config={config}
          trials={trialList}
          metrics={metrics.data}
          experimentId={id}
          metric={searcherMetric}
        />
      )}
      {(tab === 'Overview' || tab === 'Trials') && (
        <section>
          <h2>Trials</h2>
          <ErrorBanner error={trials.error} />
          {trials.data ? <TrialsTable trials={trialList} experimentId={id} metric={searcherMetric} /> : trials.error ? null : <Loading />}
        </section>
      )}
      {tab === 'Checkpoints' && (
        <section>
          <ErrorBanner error={ckpts.error} />
          {ckpts.data ? <CheckpointTable checkpoints={ckpts.data.checkpoints ?? []} onChanged={ckpts.reload} /> : <Loading />}
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
      {tab === 'Code' && (
        <section>
          <CodeTree experimentId={id} />
        </section>
      )}
    </div>
  );
}

function HyperparameterViews(props: { config: any; trials: any[]; metrics: TrialMetrics | undefined; experimentId: number; metric?: string }) {
  const smaller = props.config.searcher?.smaller_is_better !== false;
  const fromServer = SERVER_RUNGS.has(props.config.searcher?.name);
  // adaptive_asha / async_halving: the searcher's own rungs, per bracket, from the master.
  const served = usePoll(
    (signal) => (fromServer ? api('GET', `experiments/${props.experimentId}/searcher/rungs`, undefined, signal) : Promise.resolve(null)),
    [props.experimentId, fromServer],
  );
  const rungList = fromServer ? null : rungs(props.config, props.trials, validationSeries(props.metrics, props.metric), (s) => TERMINAL_STATES.has(s));
  const ml = props.config.searcher?.max_length;
  const unit = typeof ml === 'object' && ml && !('batches' in ml) ? 'fraction of the longest trial, in batches' : 'batches';
  const serverUnit =
    typeof ml === 'object' && ml ? Object.keys(ml)[0] ?? 'batches' : props.config.searcher?.time_metric ?? 'batches';
  const brackets = served.data ? bracketsOf(served.data) : null;
  return (
    <section>
      <h2>Parallel coordinates</h2>
      <p className="muted small">
        One line per trial through its hyperparameters to its best {props.metric ?? 'metric'}; red is best. Click a line to open the trial.
      </p>
      <ParallelCoordinates trials={props.trials} metric={props.metric} smallerIsBetter={smaller} experimentId={props.experimentId} />
      <h2>Scatter plots</h2>
      <ScatterPlots trials={props.trials} metric={props.metric} smallerIsBetter={smaller} experimentId={props.experimentId} />
      {fromServer ? (
        <>
          <h2>Rungs</h2>
          <p className="muted small">
            Each bracket of the search with its rungs, as the searcher holds them: the trials in each rung with their metric
            there, which it promoted, which it stopped there, and which are still training towards it.
          </p>
          <ErrorBanner error={served.error} />
          {brackets ? (
            <div data-testid="rungs">
              {brackets.map((b) => (
                <div key={b.index} data-testid={`bracket-${b.index}`}>
                  {brackets.length > 1 ? (
                    <h3>
                      Bracket {b.index + 1} ({b.rungs.length} rungs, up to {b.maxTrials} trials)
                    </h3>
                  ) : null}
                  <RungView rungs={b.rungs} experimentId={props.experimentId} unit={serverUnit} testId={`bracket-${b.index}-rungs`} />
                </div>
              ))}
            </div>
          ) : served.error ? null : (
            <Loading />
          )}
        </>
      ) : rungList ? (
        <>
          <h2>Rungs</h2>
          <p className="muted small">
            Each rung of the adaptive search: the trials that trained that long, which went on (promoted) and which the
            searcher stopped there.
          </p>
          {props.metrics ? <RungView rungs={rungList} experimentId={props.experimentId} unit={unit} /> : <Loading />}
        </>
      ) : null}
    </section>
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
