// The experiment list: the server filters, sorts and pages (GET /api/v1/experiments with
// Determined's query parameters); the URL keeps the view so reloads and links show the same page.
import { useState } from 'react';
import { api, errorText } from '../api';
import { ErrorBanner, Link, Progress, StateBadge } from '../components/common';
import { fmtDuration, fmtNumber, fmtTime } from '../format';
import { usePoll } from '../hooks';
import { navigate, useLocation } from '../router';

const PAGE_SIZES = [10, 20, 50, 100];
const STATES = ['STATE_ACTIVE', 'STATE_PAUSED', 'STATE_COMPLETED', 'STATE_CANCELED', 'STATE_ERROR',
  'STATE_STOPPING_CANCELED', 'STATE_STOPPING_KILLED', 'STATE_STOPPING_COMPLETED', 'STATE_DELETING'];
const ACTIONS = ['activate', 'pause', 'cancel', 'kill', 'archive', 'unarchive'] as const;

type Col = { key: string; title: string; sort?: string };
const COLUMNS: Col[] = [
  { key: 'id', title: 'ID', sort: 'SORT_BY_ID' },
  { key: 'name', title: 'Name', sort: 'SORT_BY_NAME' },
  { key: 'state', title: 'State', sort: 'SORT_BY_STATE' },
  { key: 'progress', title: 'Progress', sort: 'SORT_BY_PROGRESS' },
  { key: 'startTime', title: 'Started', sort: 'SORT_BY_START_TIME' },
  { key: 'duration', title: 'Duration', sort: 'SORT_BY_END_TIME' },
  { key: 'numTrials', title: 'Trials', sort: 'SORT_BY_NUM_TRIALS' },
  { key: 'searcher', title: 'Searcher' },
  { key: 'metric', title: 'Searcher metric' },
  { key: 'username', title: 'User', sort: 'SORT_BY_USER' },
  { key: 'labels', title: 'Labels' },
  { key: 'resourcePool', title: 'Pool', sort: 'SORT_BY_RESOURCE_POOL' },
];

export function ExperimentList() {
  const { query } = useLocation();
  const limit = Number(query.get('limit')) || 20;
  const offset = Number(query.get('offset')) || 0;
  const sortBy = query.get('sortBy') || 'SORT_BY_ID';
  const orderBy = query.get('orderBy') || 'ORDER_BY_DESC';
  const states = query.getAll('states');
  const user = query.get('users') || '';
  const label = query.get('labels') || '';
  const name = query.get('name') || '';
  const archived = query.get('archived') === 'true';
  const [nameInput, setNameInput] = useState(name);
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [actionError, setActionError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const setQuery = (changes: Record<string, string | string[] | null>, keepOffset = false) => {
    const q = new URLSearchParams(query);
    for (const [k, v] of Object.entries(changes)) {
      q.delete(k);
      if (Array.isArray(v)) v.forEach((x) => q.append(k, x));
      else if (v !== null && v !== '') q.set(k, v);
    }
    if (!keepOffset) q.delete('offset');
    navigate(`/experiments?${q.toString()}`, true);
    setSelected(new Set());
  };

  const params = new URLSearchParams({ limit: String(limit), offset: String(offset), sortBy, orderBy });
  states.forEach((s) => params.append('states', s));
  if (user) params.set('users', user);
  if (label) params.set('labels', label);
  if (name) params.set('name', name);
  if (!archived) params.set('archived', 'false');
  const key = params.toString();
  const { data, error, reload, loading } = usePoll((signal) => api('GET', `experiments?${key}`, undefined, signal), [key]);
  const users = usePoll(() => api('GET', 'users'), [], 0);

  const exps: any[] = data?.experiments ?? [];
  const total: number = data?.pagination?.total ?? 0;

  const toggleSort = (c: Col) => {
    if (!c.sort) return;
    const desc = sortBy === c.sort ? orderBy !== 'ORDER_BY_DESC' : true;
    setQuery({ sortBy: c.sort, orderBy: desc ? 'ORDER_BY_DESC' : 'ORDER_BY_ASC' });
  };

  const runAction = async (action: (typeof ACTIONS)[number]) => {
    setBusy(true);
    setActionError(null);
    const failures: string[] = [];
    await Promise.all(
      [...selected].map((id) =>
        api('POST', `experiments/${id}/${action}`).catch((e) => failures.push(`experiment ${id}: ${errorText(e)}`)),
      ),
    );
    setBusy(false);
    if (failures.length) setActionError(`${action} failed for ${failures.length} of ${selected.size}: ${failures.join('; ')}`);
    setSelected(new Set());
    reload();
  };

  const allChecked = exps.length > 0 && exps.every((e) => selected.has(e.id));
  return (
    <div className="page">
      <h1>Experiments</h1>
      <div className="filters">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            setQuery({ name: nameInput });
          }}
        >
          <input placeholder="Name contains…" aria-label="name filter" value={nameInput} onChange={(e) => setNameInput(e.target.value)} />
        </form>
        <select aria-label="state filter" value={states[0] ?? ''} onChange={(e) => setQuery({ states: e.target.value ? [e.target.value] : [] })}>
          <option value="">All states</option>
          {STATES.map((s) => (
            <option key={s} value={s}>
              {s.replace('STATE_', '').toLowerCase().replace(/_/g, ' ')}
            </option>
          ))}
        </select>
        <select aria-label="user filter" value={user} onChange={(e) => setQuery({ users: e.target.value })}>
          <option value="">All users</option>
          {(users.data?.users ?? []).map((u: any) => (
            <option key={u.id} value={u.username}>
              {u.username}
            </option>
          ))}
        </select>
        <input
          placeholder="Label"
          aria-label="label filter"
          defaultValue={label}
          onKeyDown={(e) => {
            if (e.key === 'Enter') setQuery({ labels: (e.target as HTMLInputElement).value });
          }}
        />
        <label className="check">
          <input type="checkbox" checked={archived} onChange={(e) => setQuery({ archived: e.target.checked ? 'true' : null })} />
          Show archived
        </label>
      </div>
      <div className="toolbar">
        <span className="muted">{selected.size ? `${selected.size} selected` : `${total} experiment${total === 1 ? "" : "s"}`}</span>
        {ACTIONS.map((a) => (
          <button key={a} disabled={!selected.size || busy} onClick={() => runAction(a)} data-testid={`batch-${a}`}>
            {a[0].toUpperCase() + a.slice(1)}
          </button>
        ))}
      </div>
      <ErrorBanner error={actionError} />
      <ErrorBanner error={error} />
      <table className="table" data-testid="experiment-table">
        <thead>
          <tr>
            <th>
              <input
                type="checkbox"
                aria-label="select all"
                checked={allChecked}
                onChange={() => setSelected(allChecked ? new Set() : new Set(exps.map((e) => e.id)))}
              />
            </th>
            {COLUMNS.map((c) => (
              <th key={c.key} className={c.sort ? 'sortable' : ''} onClick={() => toggleSort(c)}>
                {c.title}
                {c.sort === sortBy ? (orderBy === 'ORDER_BY_DESC' ? ' ▼' : ' ▲') : ''}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {exps.map((e) => (
            <tr key={e.id} data-testid={`experiment-row-${e.id}`}>
              <td>
                <input
                  type="checkbox"
                  aria-label={`select experiment ${e.id}`}
                  checked={selected.has(e.id)}
                  onChange={() => {
                    const s = new Set(selected);
                    if (s.has(e.id)) s.delete(e.id);
                    else s.add(e.id);
                    setSelected(s);
                  }}
                />
              </td>
              <td>
                <Link to={`/experiments/${e.id}`}>{e.id}</Link>
              </td>
              <td>
                <Link to={`/experiments/${e.id}`}>{e.name}</Link>
                {e.archived ? <span className="tag">archived</span> : null}
              </td>
              <td>
                <StateBadge state={e.state} />
              </td>
              <td>
                <Progress value={e.progress} />
              </td>
              <td>{fmtTime(e.startTime)}</td>
              <td>{fmtDuration(e.startTime, e.endTime)}</td>
              <td>{e.numTrials}</td>
              <td>{e.searcherType}</td>
              <td>{e.config?.searcher?.metric ?? '—'}</td>
              <td>{e.username}</td>
              <td>
                {(e.labels ?? []).map((l: string) => (
                  <span key={l} className="tag">
                    {l}
                  </span>
                ))}
              </td>
              <td>{e.resourcePool}</td>
            </tr>
          ))}
          {!exps.length && !loading ? (
            <tr>
              <td colSpan={COLUMNS.length + 1} className="muted center">
                No experiments match.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
      <div className="pager">
        <button disabled={offset === 0} onClick={() => setQuery({ offset: String(Math.max(0, offset - limit)) }, true)}>
          ‹ Prev
        </button>
        <span>
          {total ? `${offset + 1}–${Math.min(offset + limit, total)} of ${fmtNumber(total)}` : '0'}
        </span>
        <button disabled={offset + limit >= total} onClick={() => setQuery({ offset: String(offset + limit) }, true)}>
          Next ›
        </button>
        <select aria-label="page size" value={limit} onChange={(e) => setQuery({ limit: e.target.value })}>
          {PAGE_SIZES.map((n) => (
            <option key={n} value={n}>
              {n} / page
            </option>
          ))}
        </select>
      </div>
    </div>
  );
}
