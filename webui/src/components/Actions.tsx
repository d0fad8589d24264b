// Lifecycle buttons of an experiment, enabled by its state, with Fork and Delete; failures show
// the API's message.
import { useState } from 'react';
import { api, errorText } from '../api';
import { navigate } from '../router';
import { ErrorBanner } from './common';
import { ConfigDialog, forkConfig } from './ConfigDialog';
import { TERMINAL_STATES } from '../format';

export function ExperimentActions(props: { experiment: any; onDone: () => void }) {
  const { experiment: e } = props;
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [forking, setForking] = useState(false);
  const s: string = e.state;
  const running = s === 'STATE_ACTIVE' || s === 'STATE_RUNNING' || s === 'STATE_QUEUED';
  const terminal = TERMINAL_STATES.has(s);
  const stopping = s.startsWith('STATE_STOPPING');
  const act = async (action: string) => {
    const destructive = action === 'kill' || action === 'cancel' || action === 'delete';
    if (destructive && !window.confirm(`${action} experiment ${e.id}?`)) return;
    setBusy(true);
    setError(null);
    try {
      if (action === 'delete') {
        await api('DELETE', `experiments/${e.id}`);
        navigate('/experiments');
        return;
      }
      await api('POST', `experiments/${e.id}/${action}`);
    } catch (err) {
      setError(`${action} failed: ${errorText(err)}`);
    }
    setBusy(false);
    props.onDone();
  };
  const buttons: [string, boolean][] = [
    ['activate', s === 'STATE_PAUSED'],
    ['pause', running],
    ['cancel', !terminal && !stopping],
    ['kill', !terminal],
    [e.archived ? 'unarchive' : 'archive', terminal],
    ['delete', terminal],
  ];
  return (
    <div className="actions">
      {buttons.map(([a, enabled]) => (
        <button key={a} disabled={!enabled || busy} onClick={() => act(a)} data-testid={`action-${a}`}>
          {a[0].toUpperCase() + a.slice(1)}
        </button>
      ))}
      <button disabled={e.unmanaged} onClick={() => setForking(true)} data-testid="action-fork">
        Fork
      </button>
      {forking ? (
        <ConfigDialog
          title={`Fork experiment ${e.id}`}
          initialConfig={forkConfig(e.originalConfig || JSON.stringify(e.config ?? {}, null, 2), e.name)}
          parentId={e.id}
          submitLabel="Fork"
          onClose={() => setForking(false)}
        />
      ) : null}
      <ErrorBanner error={error} />
    </div>
  );
}
