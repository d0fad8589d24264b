// The cluster: resource pools with their slot use, every agent with its slots, and the master's
// log followed live.
import { useState } from 'react';
import { api, errorText } from '../api';
import { ErrorBanner, Link, Tabs } from '../components/common';
import { MasterLogs } from '../components/MasterLogs';
import { fmtTime } from '../format';
import { usePoll } from '../hooks';

function slotList(agent: any): any[] {
  const s = agent.slots ?? {};
  return Array.isArray(s) ? s : Object.values(s);
}

type Tab = 'Overview' | 'Master logs';

export function ClusterPage() {
  const [tab, setTab] = useState<Tab>('Overview');
  return (
    <div className="page">
      <h1>Cluster</h1>
      <Tabs tabs={['Overview', 'Master logs'] as Tab[]} value={tab} onChange={setTab} />
      {tab === 'Overview' ? <ClusterOverview /> : <MasterLogs />}
    </div>
  );
}

function ClusterOverview() {
  const pools = usePoll((signal) => api('GET', 'resource-pools', undefined, signal), []);
  const agents = usePoll((signal) => api('GET', 'agents', undefined, signal), []);
  const [actionError, setActionError] = useState<string | null>(null);
  // Enable / disable (optionally draining) an agent or one slot (admins only, as Determined).
  const admin = async (path: string, body: unknown, what: string) => {
    setActionError(null);
    try {
      await api('POST', path, body);
    } catch (e) {
      setActionError(`${what} failed: ${errorText(e)}`);
    }
    agents.reload();
  };
  const agentList: any[] = agents.data?.agents ?? [];
  const totalSlots = agentList.reduce((n, a) => n + slotList(a).length, 0);
  const usedSlots = agentList.reduce((n, a) => n + slotList(a).filter((s) => s.container).length, 0);
  return (
    <div>
      <div className="facts" data-testid="cluster-summary">
        <span>{agentList.length} agents</span>
        <span>
          {usedSlots}/{totalSlots} slots in use
        </span>
      </div>
      <ErrorBanner error={pools.error} />
      <ErrorBanner error={agents.error} />
      <ErrorBanner error={actionError} />
      <h2>Resource pools</h2>
      <table className="table" data-testid="pool-table">
        <thead>
          <tr>
            <th>Pool</th>
            <th>Scheduler</th>
            <th>Agents</th>
            <th>Slots used</th>
            <th>Slot type</th>
            <th>Queued</th>
            <th>Scheduled</th>
            <th>Default</th>
          </tr>
        </thead>
        <tbody>
          {(pools.data?.resourcePools ?? []).map((p: any) => (
            <tr key={p.name}>
              <td>
                <Link to={`/jobs?pool=${encodeURIComponent(p.name)}`}>{p.name}</Link>
                {p.description ? <div className="muted small">{p.description}</div> : null}
              </td>
              <td>{(p.schedulerType ?? '').replace('SCHEDULER_TYPE_', '').toLowerCase()}</td>
              <td>{p.numAgents}</td>
              <td>
                {p.slotsUsed}/{p.slotsAvailable}
              </td>
              <td>{(p.slotType ?? '').replace('TYPE_', '').toLowerCase()}</td>
              <td>{p.stats?.queuedCount ?? 0}</td>
              <td>{p.stats?.scheduledCount ?? 0}</td>
              <td>{[p.defaultComputePool ? 'compute' : '', p.defaultAuxPool ? 'aux' : ''].filter(Boolean).join(', ')}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Agents</h2>
      <table className="table" data-testid="agent-table">
        <thead>
          <tr>
            <th>Agent</th>
            <th>Pool</th>
            <th>Slots</th>
            <th>In use</th>
            <th>Registered</th>
            <th>State</th>
          </tr>
        </thead>
        <tbody>
          {agentList.map((a) => {
            const slots = slotList(a);
            return (
              <tr key={a.id}>
                <td>
                  {a.id}
                  <div className="muted small">{(a.addresses ?? []).join(', ')}</div>
                </td>
                <td>{(a.resourcePools ?? [a.resourcePool]).filter(Boolean).join(', ')}</td>
                <td>
                  <div className="slots">
                    {slots.map((s: any) => (
                      <button
                        key={s.id}
                        className={`slot ${s.container ? 'busy' : 'free'} ${s.enabled === false ? 'disabled' : ''}`}
                        aria-label={`slot ${s.id} of ${a.id}`}
                        data-testid={`slot-${a.id}-${s.id}`}
                        title={`${s.id}: ${s.device?.brand ?? s.device?.type ?? ''} ${s.container ? `(${s.container.state ?? 'in use'})` : '(free)'}${s.enabled === false ? ', disabled' : ''} · click to ${s.enabled === false ? 'enable' : 'disable'}`}
                        onClick={() =>
                          admin(`agents/${encodeURIComponent(a.id)}/slots/${encodeURIComponent(s.id)}/${s.enabled === false ? 'enable' : 'disable'}`, {}, `${s.enabled === false ? 'enable' : 'disable'} slot ${s.id}`)
                        }
                      />
                    ))}
                  </div>
                </td>
                <td>
                  {slots.filter((s: any) => s.container).length}/{slots.length}
                </td>
                <td>{fmtTime(a.registeredTime)}</td>
                <td className="actions" data-testid={`agent-state-${a.id}`}>
                  <span className="agent-state">{a.enabled === false ? (a.draining ? 'draining' : 'disabled') : 'enabled'}</span>
                  {a.enabled === false ? (
                    <button onClick={() => admin(`agents/${encodeURIComponent(a.id)}/enable`, {}, `enable ${a.id}`)}>Enable</button>
                  ) : (
                    <>
                      <button onClick={() => admin(`agents/${encodeURIComponent(a.id)}/disable`, { drain: false }, `disable ${a.id}`)}>Disable</button>
                      <button onClick={() => admin(`agents/${encodeURIComponent(a.id)}/disable`, { drain: true }, `drain ${a.id}`)}>Drain</button>
                    </>
                  )}
                </td>
              </tr>
            );
          })}
          {!agentList.length ? (
            <tr>
              <td colSpan={6} className="muted center">
                No agents connected.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </div>
  );
}
