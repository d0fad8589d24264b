// The job queue: jobs of a pool in scheduling order with how many are ahead; priority (priority
// scheduler) or weight (fair share) and resource pool edited in place, Move to Top and move ahead
// of / behind another job (priority scheduler), through POST /api/v1/job-queues; cancel and kill
// an experiment's job.
import { useState } from 'react';
import { api, errorText } from '../api';
import { ErrorBanner, Link, StateBadge } from '../components/common';
import { fmtTime } from '../format';
import { usePoll } from '../hooks';
import { navigate, useLocation } from '../router';

export function JobQueue() {
  const { query } = useLocation();
  const pools = usePoll((signal) => api('GET', 'resource-pools', undefined, signal), [], 10000);
  const poolList: any[] = pools.data?.resourcePools ?? [];
  const pool = query.get('pool') || poolList.find((p) => p.defaultComputePool)?.name || poolList[0]?.name || '';
  const jobs = usePoll(
    (signal) => (pool ? api('GET', `job-queues-v2?resourcePool=${encodeURIComponent(pool)}`, undefined, signal) : Promise.resolve(null)),
    [pool],
  );
  const [error, setError] = useState<string | null>(null);
  const poolInfo = poolList.find((p) => p.name === pool);
  const fairShare = poolInfo?.schedulerType === 'SCHEDULER_TYPE_FAIR_SHARE';
  const list: any[] = (jobs.data?.jobs ?? []).map((j: any) => j.full ?? j);

  const update = async (change: Record<string, unknown>, what: string) => {
    setError(null);
    try {
      await api('POST', 'job-queues', { updates: [change] });
    } catch (e) {
      setError(`${what} failed: ${errorText(e)}`);
    }
    jobs.reload();
  };

  return (
    <div className="page">
      <h1>Job Queue</h1>
      <div className="toolbar">
        <label>
          Resource pool{' '}
          <select aria-label="resource pool" value={pool} onChange={(e) => navigate(`/jobs?pool=${encodeURIComponent(e.target.value)}`, true)}>
            {poolList.map((p) => (
              <option key={p.name} value={p.name}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
        {poolInfo ? (
          <span className="muted">
            {(poolInfo.schedulerType ?? '').replace('SCHEDULER_TYPE_', '').toLowerCase().replace('_', ' ')} scheduler ·{' '}
            {poolInfo.slotsUsed}/{poolInfo.slotsAvailable} slots in use · {poolInfo.stats?.queuedCount ?? 0} queued ·{' '}
            {poolInfo.stats?.scheduledCount ?? 0} scheduled
          </span>
        ) : null}
      </div>
      <ErrorBanner error={pools.error} />
      <ErrorBanner error={jobs.error} />
      <ErrorBanner error={error} />
      <table className="table" data-testid="job-table">
        <thead>
          <tr>
            <th>#</th>
            <th># ahead</th>
            <th>Job</th>
            <th>Type</th>
            <th>State</th>
            <th>{fairShare ? 'Weight' : 'Priority'}</th>
            <th>Slots</th>
            <th>User</th>
            <th>Submitted</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          {list.map((j, i) => (
            <JobRow
              key={j.jobId}
              job={j}
              index={i}
              fairShare={fairShare}
              first={list[0]}
              jobs={list}
              pools={poolList.map((p) => p.name)}
              onUpdate={update}
              onAction={async (id, action) => {
                if (!window.confirm(`${action} experiment ${id}?`)) return;
                setError(null);
                try {
                  await api('POST', `experiments/${id}/${action}`);
                } catch (e) {
                  setError(`${action} failed: ${errorText(e)}`);
                }
                jobs.reload();
              }}
            />
          ))}
          {!list.length ? (
            <tr>
              <td colSpan={10} className="muted center">
                No jobs in this pool.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </div>
  );
}

function JobRow(props: {
  job: any;
  index: number;
  fairShare: boolean;
  first: any;
  jobs: any[];
  pools: string[];
  onUpdate: (change: Record<string, unknown>, what: string) => Promise<void>;
  onAction: (experimentId: string, action: 'cancel' | 'kill') => void;
}) {
  const { job: j, fairShare } = props;
  const field = fairShare ? 'weight' : 'priority';
  const current = j[field];
  const [value, setValue] = useState<string>('');
  const [where, setWhere] = useState<'aheadOf' | 'behindOf'>('aheadOf');
  const others = props.jobs.filter((o) => o.jobId !== j.jobId);
  const isExperiment = j.type === 'TYPE_EXPERIMENT';
  return (
    <tr data-testid={`job-row-${j.entityId}`}>
      <td>{props.index + 1}</td>
      <td>{j.summary?.jobsAhead ?? '—'}</td>
      <td>
        {isExperiment ? <Link to={`/experiments/${j.entityId}`}>{j.name || `experiment ${j.entityId}`}</Link> : j.name}
        <div className="muted mono small">{j.jobId}</div>
      </td>
      <td>{(j.type ?? '').replace('TYPE_', '').toLowerCase()}</td>
      <td>
        <StateBadge state={j.summary?.state} />
      </td>
      <td>
        <form
          className="inline"
          onSubmit={(e) => {
            e.preventDefault();
            const n = Number(value);
            if (value === '' || !isFinite(n)) return;
            props.onUpdate({ jobId: j.jobId, [field]: fairShare ? n : Math.round(n) }, `set ${field}`).then(() => setValue(''));
          }}
        >
          <span data-testid="job-priority">{current}</span>
          <input
            aria-label={`new ${field}`}
            className="small-input"
            placeholder={String(current)}
            value={value}
            onChange={(e) => setValue(e.target.value)}
          />
          <button type="submit" disabled={value === ''}>
            Set
          </button>
        </form>
      </td>
      <td>
        {j.allocatedSlots}/{j.requestedSlots}
      </td>
      <td>{j.username}</td>
      <td>{fmtTime(j.submissionTime)}</td>
      <td className="actions">
        {!fairShare && props.first && props.first.jobId !== j.jobId ? (
          <button onClick={() => props.onUpdate({ jobId: j.jobId, aheadOf: props.first.jobId }, 'move to top')}>Move to top</button>
        ) : null}
        {!fairShare && others.length ? (
          <span className="inline">
            <select aria-label="ahead or behind" value={where} onChange={(e) => setWhere(e.target.value as 'aheadOf' | 'behindOf')}>
              <option value="aheadOf">ahead of</option>
              <option value="behindOf">behind</option>
            </select>
            <select
              aria-label="move relative to job"
              value=""
              onChange={(e) => e.target.value && props.onUpdate({ jobId: j.jobId, [where]: e.target.value }, `move ${where === 'aheadOf' ? 'ahead of' : 'behind'}`)}
            >
              <option value="">job…</option>
              {others.map((o) => (
                <option key={o.jobId} value={o.jobId}>
                  {o.name || o.entityId}
                </option>
              ))}
            </select>
          </span>
        ) : null}
        {props.pools.length > 1 ? (
          <select
            aria-label="resource pool of job"
            value={j.resourcePool}
            onChange={(e) => props.onUpdate({ jobId: j.jobId, resourcePool: e.target.value }, 'change pool')}
          >
            {props.pools.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        ) : null}
        {isExperiment ? (
          <>
            <button onClick={() => props.onAction(j.entityId, 'cancel')} data-testid="job-cancel">
              Cancel
            </button>
            <button onClick={() => props.onAction(j.entityId, 'kill')} data-testid="job-kill">
              Kill
            </button>
          </>
        ) : null}
      </td>
    </tr>
  );
}
