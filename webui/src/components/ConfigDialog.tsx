// Fork and "continue trial" (the seeds' "create from an existing experiment or trial on the
// WebUI"): the config is edited in the page and submitted as a new experiment with parentId, so
// the master runs the parent's code (POST /api/v1/experiments {config, parentId, activate}).
import { useState } from 'react';
import { api, errorText } from '../api';
import { navigate } from '../router';
import { Dialog } from './Dialog';
import { ErrorBanner } from './common';

export function ConfigDialog(props: {
  title: string;
  initialConfig: string;
  parentId: number;
  submitLabel: string;
  onClose: () => void;
}) {
  const [config, setConfig] = useState(props.initialConfig);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      const r = await api('POST', 'experiments', { config, parentId: props.parentId, activate: true });
      props.onClose();
      navigate(`/experiments/${r.experiment.id}`);
    } catch (e) {
      setError(errorText(e));
      setBusy(false);
    }
  };
  return (
    <Dialog
      title={props.title}
      onClose={props.onClose}
      testId="config-dialog"
      footer={
        <>
          <button onClick={props.onClose}>Cancel</button>
          <button className="primary" disabled={busy || !config.trim()} onClick={submit} data-testid="config-submit">
            {props.submitLabel}
          </button>
        </>
      }
    >
      <p className="muted">
        The new experiment runs the code of experiment {props.parentId} with this configuration (YAML or JSON).
      </p>
      <textarea
        className="config-editor"
        aria-label="configuration"
        spellCheck={false}
        value={config}
        onChange={(e) => setConfig(e.target.value)}
      />
      <ErrorBanner error={error} />
    </Dialog>
  );
}

// The original YAML with its name changed to "Fork of <name>" (the first top-level name line).
export function forkConfig(originalYaml: string, name: string): string {
  const line = /^name:.*$/m;
  const forked = `name: ${JSON.stringify(`Fork of ${name}`)}`;
  return line.test(originalYaml) ? originalYaml.replace(line, forked) : `${forked}\n${originalYaml}`;
}

// hparams of a trial as constant hyperparameters (nested ones stay nested).
function constHparams(h: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(h)) {
    out[k] = v !== null && typeof v === 'object' && !Array.isArray(v) ? constHparams(v as Record<string, unknown>) : { type: 'const', val: v };
  }
  return out;
}

// A single-trial search warm-started from `trial` (searcher.source_trial_id), with the trial's
// hyperparameters fixed and the experiment's length; JSON, which YAML reads as well.
export function continueTrialConfig(expConfig: any, trial: any): string {
  const c = JSON.parse(JSON.stringify(expConfig ?? {}));
  const s = c.searcher ?? {};
  const searcher: Record<string, unknown> = {
    name: 'single',
    metric: s.metric,
    smaller_is_better: s.smaller_is_better,
    source_trial_id: trial.id,
  };
  for (const k of ['max_length', 'max_time', 'time_metric']) if (s[k] !== undefined) searcher[k] = s[k];
  const out: Record<string, unknown> = {
    name: `Continuation of trial ${trial.id}`,
    entrypoint: c.entrypoint,
    hyperparameters: constHparams(trial.hparams ?? {}),
    searcher,
  };
  for (const k of ['resources', 'max_restarts', 'environment', 'checkpoint_storage', 'min_validation_period', 'min_checkpoint_period', 'records_per_epoch', 'scheduling_unit', 'labels', 'description', 'data']) {
    if (c[k] !== undefined) out[k] = c[k];
  }
  return JSON.stringify(out, null, 2);
}
