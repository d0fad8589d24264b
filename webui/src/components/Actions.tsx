// Lifecycle buttons of an experiment, enabled by its state; failures show the API's message.
import { useState } from 'react';
import { api, errorText } from '../api';
import { ErrorBanner } from './common';
import { TERMINAL_STATES } from '../format';

export function ExperimentActions(props: { experiment: any; onDone: () => void }) {
  const { experiment: e } = props;
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const s: string = e.state;
  const running = s === 'STATE_ACTIVE' || s === 'STATE_RUNNING' || s === 'STATE_QUEUED';
  const terminal = TERMINAL_STATES.has(s);
  const stopping = s.startsWith('STATE_STOPPING');
  const act = async (action: string) => {
    if ((action === 'kill' || action === 'cancel') && !window.confirm(`${action} experiment ${e.id}?`)) return;
    setBusy(true);
    setError(null);
    try {
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
  ];
  return (
    <div className="actions">
      {buttons.map(([a, enabled]) => (
        <button key={a} disabled={!enabled || busy} onClick={() => act(a)} data-testid={`action-${a}`}>
          {a[0].toUpperCase() + a.slice(1)}
        </button>
      ))}
      <ErrorBanner error={error} />
    </div>
  );
}
