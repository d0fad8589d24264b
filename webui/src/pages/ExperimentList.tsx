// The experiment list: the server filters, sorts and pages (GET /api/v1/experiments with
// Determined's query parameters); the URL keeps the view so reloads and links show the same page.
// The chosen columns are kept in the browser (localStorage); labels are edited in place.
import { useState, type ReactNode } from 'react';
import { api, errorText } from '../api';
import { ErrorBanner, Link, Progress, StateBadge } from '../components/common';
import { fmtBytes, fmtDuration, fmtNumber, fmtTime } from '../format';
import { usePoll } from '../hooks';
import { navigate, useLocation } from '../router';

const PAGE_SIZES = [10, 20, 50, 100];
const STATES = ['STATE_ACTIVE', 'STATE_PAUSED', 'STATE_COMPLETED', 'STATE_CANCELED', 'STATE_ERROR',
  'STATE_STOPPING_CANCELED', 'STATE_STOPPING_KILLED', 'STATE_STOPPING_COMPLETED', 'STATE_DELETING'];
const ACTIONS = ['activate', 'pause', 'cancel', 'kill', 'archive', 'unarchive', 'delete'] as const;

// Labels of one experiment: × removes one, + adds one (PUT/DELETE /experiments/{id}/labels/{l}).
function LabelsCell({ e, onChanged, onError }: { e: any; onChanged: () => void; onError: (m: string) => void }) {
  const [adding, setAdding] = useState(false);
  const [text, setText] = useState('');
  const change = async (method: 'PUT' | 'DELETE', label: string) => {
    try {
      await api(method, `experiments/${e.id}/labels/${encodeURIComponent(label)}`);
    } catch (err) {
      onError(`label ${label} of experiment ${e.id}: ${errorText(err)}`);
    }
    onChanged();
  };
  return (
    <span className="labels" data-testid={`labels-${e.id}`}>
      {(e.labels ?? []).map((l: string) => (
        <span key={l} className="tag">
          {l}
          <button className="plain" aria-label={`remove label ${l}`} onClick={() => change('DELETE', l)}>
            ×
          </button>
        </span>
      ))}
      {adding ? (
        <form
          className="inline"
          onSubmit={(ev) => {
            ev.preventDefault();
            setAdding(false);
            setText('');
            if (text.trim()) change('PUT', text.trim());
          }}
        >
          <input autoFocus className="small-input" aria-label={`new label for ${e.id}`} value={text} onChange={(ev) => setText(ev.target.value)} onBlur={() => !text && setAdding(false)} />
        </form>
      ) : (
        <button className="plain add" aria-label={`add label to ${e.id}`} onClick={() => setAdding(true)}>
          +
        </button>
      )}
    </span>
  );
}

type Col = { key: string; title: string; sort?: string; fixed?: boolean; cell: (e: any, ctx: CellCtx) => ReactNode };
type CellCtx = { reload: () => void; onError: (m: string) => void };
const COLUMNS: Col[] = [
  { key: 'id', title: 'ID', sort: 'SORT_BY_ID', fixed: true, cell: (e) => <Link to={`/experiments/${e.id}`}>{e.id}</Link> },
  {
    key: 'name',
    title: 'Name',
    sort: 'SORT_BY_NAME',
    fixed: true,
    cell: (e) => (
      <>
        <Link to={`/experiments/${e.id}`}>{e.name}</Link>
        {e.archived ? <span className="tag">archived</span> : null}
      </>
    ),
  },
  { key: 'description', title: 'Description', sort: 'SORT_BY_DESCRIPTION', cell: (e) => e.description || '—' },
  { key: 'state', title: 'State', sort: 'SORT_BY_STATE', cell: (e) => <StateBadge state={e.state} /> },
  { key: 'progress', title: 'Progress', sort: 'SORT_BY_PROGRESS', cell: (e) => <Progress value={e.progress} /> },
  { key: 'startTime', title: 'Started', sort: 'SORT_BY_START_TIME', cell: (e) => fmtTime(e.startTime) },
  { key: 'duration', title: 'Duration', sort: 'SORT_BY_END_TIME', cell: (e) => fmtDuration(e.startTime, e.endTime) },
  { key: 'numTrials', title: 'Trials', sort: 'SORT_BY_NUM_TRIALS', cell: (e) => e.numTrials },
  { key: 'searcher', title: 'Searcher', cell: (e) => e.searcherType },
  { key: 'metric', title: 'Searcher metric', cell: (e) => e.config?.searcher?.metric ?? '—' },
  {
    key: 'best',
    title: 'Best validation',
    cell: (e) =>
      e.bestTrialSearcherMetric === null || e.bestTrialSearcherMetric === undefined ? (
        '—'
      ) : (
        <Link to={`/experiments/${e.id}/trials/${e.bestTrialId}`}>{fmtNumber(e.bestTrialSearcherMetric)}</Link>
      ),
  },
  { key: 'username', title: 'User', sort: 'SORT_BY_USER', cell: (e) => e.username },
  { key: 'labels', title: 'Labels', cell: (e, ctx) => <LabelsCell e={e} onChanged={ctx.reload} onError={ctx.onError} /> },
  { key: 'resourcePool', title: 'Pool', sort: 'SORT_BY_RESOURCE_POOL', cell: (e) => e.resourcePool },
  { key: 'checkpointCount', title: 'Checkpoints', sort: 'SORT_BY_CHECKPOINT_COUNT', cell: (e) => e.checkpointCount ?? '—' },
  {
    key: 'checkpointSize',
    title: 'Checkpoint size',
    sort: 'SORT_BY_CHECKPOINT_SIZE',
    cell: (e) => (e.checkpointSize === undefined ? '—' : fmtBytes(Number(e.checkpointSize))),
  },
  { key: 'forkedFrom', title: 'Forked from', sort: 'SORT_BY_FORKED_FROM', cell: (e) => (e.forkedFrom ? <Link to={`/experiments/${e.forkedFrom}`}>{e.forkedFrom}</Link> : '—') },
  { key: 'project', title: 'Project', sort: 'SORT_BY_PROJECT_ID', cell: (e) => `${e.workspaceName} / ${e.projectName}` },
];
const DEFAULT_HIDDEN = new Set(['description', 'forkedFrom', 'project', 'checkpointSize']);
const COLUMNS_KEY = 'det.experimentList.columns';

// The visible column keys: the saved choice, else every column but the default-hidden ones.
function savedColumns(): Set<string> {
  try {
    const saved = JSON.parse(localStorage.getItem(COLUMNS_KEY) ?? 'null');
    if (Array.isArray(saved)) return new Set(saved);
  } catch {
    /* a broken value falls back to the default */
  }
  return new Set(COLUMNS.filter((c) => !DEFAULT_HIDDEN.has(c.key)).map((c) => c.key));
}

function ColumnPicker({ shown, onChange }: { shown: Set<string>; onChange: (s: Set<string>) => void }) {
  return (
    <details className="column-picker" data-testid="column-picker">
      <summary>Columns</summary>
      <div className="menu">
        {COLUMNS.filter((c) => !c.fixed).map((c) => (
          <label key={c.key} className="check">
            <input
              type="checkbox"
              aria-label={`column ${c.title}`}
              checked={shown.has(c.key)}
              onChange={() => {
                const s = new Set(shown);
                if (s.has(c.key)) s.delete(c.key);
                else s.add(c.key);
                onChange(s);
              }}
            />
            {c.title}
          </label>
        ))}
      </div>
    </details>
  );
}

// Moves experiments to a project chosen from every workspace's projects.
function MoveControl({ disabled, onMove }: { disabled: boolean; onMove: (projectId: number, name: string) => void }) {
  const projects = usePoll(async (signal) => {
    const ws: any[] = (await api('GET', 'workspaces', undefined, signal)).workspaces ?? [];
    const lists = await Promise.all(
      ws.filter((w) => !w.archived).map((w) => api('GET', `workspaces/${w.id}/projects`, undefined, signal).then((r) => (r.projects ?? []).map((p: any) => ({ ...p, workspaceName: w.name })))),
    );
    return lists.flat().filter((p: any) => !p.archived);
  }, [], 0);
  return (
    <select
      aria-label="move to project"
      disabled={disabled}
      value=""
      onChange={(ev) => {
        const p = (projects.data ?? []).find((x: any) => String(x.id) === ev.target.value);
        if (p) onMove(p.id, `${p.workspaceName} / ${p.name}`);
      }}
    >
      <option value="">Move to project…</option>
      {(projects.data ?? []).map((p: any) => (
        <option key={p.id} value={p.id}>
          {p.workspaceName} / {p.name}
        </option>
      ))}
    </select>
  );
}

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
  const [shown, setShown] = useState<Set<string>>(savedColumns);
  const columns = COLUMNS.filter((c) => c.fixed || shown.has(c.key));
  const chooseColumns = (s: Set<string>) => {
    setShown(s);
    localStorage.setItem(COLUMNS_KEY, JSON.stringify([...s]));
  };

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
    if ((action === 'kill' || action === 'cancel' || action === 'delete') && !window.confirm(`${action} ${selected.size} experiment(s)?`)) return;
    setBusy(true);
    setActionError(null);
    const failures: string[] = [];
    await Promise.all(
      [...selected].map((id) =>
        (action === 'delete' ? api('DELETE', `experiments/${id}`) : api('POST', `experiments/${id}/${action}`)).catch((e) =>
          failures.push(`experiment ${id}: ${errorText(e)}`),
        ),
      ),
    );
    setBusy(false);
    if (failures.length) setActionError(`${action} failed for ${failures.length} of ${selected.size}: ${failures.join('; ')}`);
    setSelected(new Set());
    reload();
  };

  const move = async (projectId: number, name: string) => {
    setBusy(true);
    setActionError(null);
    try {
      const r = await api('POST', 'experiments/move', { destinationProjectId: projectId, experimentIds: [...selected] });
      const failed = (r.results ?? []).filter((x: any) => x.error);
      if (failed.length) setActionError(`move to ${name} failed for ${failed.map((x: any) => `experiment ${x.id}: ${x.error}`).join('; ')}`);
    } catch (e) {
      setActionError(`move to ${name} failed: ${errorText(e)}`);
    }
    setBusy(false);
    setSelected(new Set());
    reload();
  };
  const ctx: CellCtx = { reload, onError: setActionError };

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
        <MoveControl disabled={!selected.size || busy} onMove={move} />
        <span className="spacer" />
        <ColumnPicker shown={shown} onChange={chooseColumns} />
      </div>
      <ErrorBanner error={actionError} />
      <ErrorBanner error={error} />
      <div className="table-scroll">
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
            {columns.map((c) => (
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
              {columns.map((c) => (
                <td key={c.key} className={`col-${c.key}`}>
                  {c.cell(e, ctx)}
                </td>
              ))}
            </tr>
          ))}
          {!exps.length && !loading ? (
            <tr>
              <td colSpan={columns.length + 1} className="muted center">
                No experiments match.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
      </div>
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
