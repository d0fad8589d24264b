// Checkpoints with their actions: register to a model in the registry (created when the name is
// new) and delete (POST /api/v1/models/{name}/versions, DELETE /api/v1/checkpoints).
import { useState } from 'react';
import { api, ApiError, errorText } from '../api';
import { fmtBytes, fmtTime } from '../format';
import { ErrorBanner, StateBadge } from './common';

async function register(uuid: string, model: string): Promise<number> {
  const path = `models/${encodeURIComponent(model)}/versions`;
  try {
    return (await api('POST', path, { checkpointUuid: uuid })).modelVersion?.version;
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 404 || !/model/i.test(e.message)) throw e;
    await api('POST', 'models', { name: model });
    return (await api('POST', path, { checkpointUuid: uuid })).modelVersion?.version;
  }
}

export function CheckpointTable({ checkpoints, onChanged }: { checkpoints: any[]; onChanged?: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  if (!checkpoints.length) return <div className="muted">No checkpoints.</div>;
  const onRegister = async (uuid: string) => {
    const model = window.prompt('Register to model (an existing name, or a new one to create):');
    if (!model) return;
    setError(null);
    try {
      const v = await register(uuid, model.trim());
      setNote(`Registered ${uuid} as version ${v} of model ${model.trim()}.`);
    } catch (e) {
      setError(`register failed: ${errorText(e)}`);
    }
  };
  const onDelete = async (uuid: string) => {
    if (!window.confirm(`delete checkpoint ${uuid}?`)) return;
    setError(null);
    try {
      await api('DELETE', 'checkpoints', { checkpointUuids: [uuid] });
      setNote(`Deleting checkpoint ${uuid}.`);
    } catch (e) {
      setError(`delete failed: ${errorText(e)}`);
    }
    onChanged?.();
  };
  return (
    <>
      <ErrorBanner error={error} />
      {note ? (
        <div className="note" role="status">
          {note}
        </div>
      ) : null}
      <table className="table" data-testid="checkpoint-table">
        <thead>
          <tr>
            <th>UUID</th>
            <th>Trial</th>
            <th>Batches</th>
            <th>State</th>
            <th>Reported</th>
            <th>Size</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          {checkpoints.map((c) => {
            const res = c.resources ?? {};
            const size = Object.values(res).reduce((a: number, b) => a + Number(b || 0), 0);
            const completed = c.state === 'STATE_COMPLETED';
            return (
              <tr key={c.uuid} data-testid={`checkpoint-${c.uuid}`}>
                <td className="mono">{c.uuid}</td>
                <td>{c.trialId ?? c.training?.trialId ?? '—'}</td>
                <td>{c.metadata?.steps_completed ?? c.totalBatches ?? c.training?.totalBatches ?? '—'}</td>
                <td>
                  <StateBadge state={c.state} />
                </td>
                <td>{fmtTime(c.reportTime)}</td>
                <td>{fmtBytes(size)}</td>
                <td className="actions">
                  <button disabled={!completed} onClick={() => onRegister(c.uuid)}>
                    Register
                  </button>
                  <button disabled={!completed} onClick={() => onDelete(c.uuid)}>
                    Delete
                  </button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}
