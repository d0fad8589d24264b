// Browser tests of the web UI: a real local cluster (det deploy local cluster-up), a real
// search from tests/e2e/fixtures, and Debian's chromium driven by playwright-core.
// Screenshots of every page go to $DET_BUILD_DIR/webui-test-artifacts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '../..');
const BUILD = path.resolve(process.env.DET_BUILD_DIR || path.join(REPO, 'build'));
const DET = path.join(BUILD, 'bin', 'det');
const ARTIFACTS = path.join(BUILD, 'webui-test-artifacts');
const FIXTURE = path.join(REPO, 'tests/e2e/fixtures/core_api_compat');
const PROFILED = path.join(REPO, 'tests/e2e/fixtures/profiler');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

let dataDir;
let url;
let token;
let browser;
let page;
let searchId; // the fixture's adaptive search, run to the end
let longId; // a long single-trial experiment, paused/activated and reprioritized
let forkId; // the search forked from its page
let promptAnswer = ''; // what window.prompt() answers in the page

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function det(...args) {
  return execFileSync(DET, ['-m', url, ...args], { encoding: 'utf8', timeout: 120_000 });
}

async function rest(method, p, body) {
  const resp = await fetch(`${url}/api/v1/${p}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await resp.text();
  if (!resp.ok) throw new Error(`${method} ${p}: ${resp.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

// Polls `check` until it returns a truthy value or the deadline passes.
async function waitFor(what, check, timeoutMs = 90_000, everyMs = 250) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

// Pixels in colour on a canvas: channels that differ clearly (axes and grid are grey).
function colouredPixels(canvas) {
  return canvas.evaluate((c) => {
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    let n = 0;
    for (let i = 0; i < data.length; i += 4) {
      const [r, g, b, a] = [data[i], data[i + 1], data[i + 2], data[i + 3]];
      if (a > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 60) n++;
    }
    return n;
  });
}

async function shot(name) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

function createExperiment(configText, context = FIXTURE) {
  const file = path.join(dataDir, `exp-${Date.now()}.yaml`);
  fs.writeFileSync(file, configText);
  const out = det('experiment', 'create', file, context);
  const m = /Created experiment (\d+)/.exec(out);
  assert.ok(m, `det experiment create printed: ${out}`);
  return Number(m[1]);
}

before(async () => {
  for (const f of [DET, path.join(BUILD, 'webui', 'index.html'), CHROMIUM]) {
    assert.ok(fs.existsSync(f), `${f} is missing: run make setup && make build`);
  }
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'det-webui-test-'));
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  const up = execFileSync(
    DET,
    ['deploy', 'local', 'cluster-up', '--master-port', String(port), '--agents', '1',
      '--slots-per-agent', '2', '--data-dir', dataDir],
    { encoding: 'utf8', timeout: 180_000 },
  );
  assert.match(up, new RegExp(`Web UI: ${url}/det/`));
  const login = await fetch(`${url}/api/v1/auth/login`, {
    method: 'POST',
    body: JSON.stringify({ username: 'determined', password: '' }),
  });
  token = (await login.json()).token;
  assert.ok(token, 'REST login gave no token');

  // A fixed seed: with the clock's, one search in 512 samples the same increment_by for all four
  // trials, and the hyperparameter views then have no axis to draw.
  searchId = createExperiment(
    fs.readFileSync(path.join(FIXTURE, 'hpsearch.yaml'), 'utf8') + 'reproducibility:\n  experiment_seed: 7\n');
  longId = createExperiment(`name: webui-long-running
entrypoint: python3 counter.py
hyperparameters:
  increment_by: 1
  step_seconds: 0.2
searcher:
  name: single
  metric: x
  smaller_is_better: false
  max_length:
    batches: 3000
max_restarts: 0
`);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  // confirm() of destructive actions is accepted; prompt() answers `promptAnswer`.
  page.on('dialog', (d) => d.accept(d.type() === 'prompt' ? promptAnswer : undefined));
});

after(async () => {
  await browser?.close();
  if (url && longId) await rest('POST', `experiments/${longId}/kill`).catch(() => undefined);
  if (dataDir) {
    try {
      execFileSync(DET, ['deploy', 'local', 'cluster-down', '--data-dir', dataDir], { timeout: 60_000 });
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
});

test('the master redirects / to /det/ and serves the app with cache headers', async () => {
  const root = await fetch(`${url}/`, { redirect: 'manual' });
  assert.equal(root.status, 302);
  assert.equal(root.headers.get('location'), '/det/');
  const deep = await fetch(`${url}/det/experiments/123/trials/4`);
  assert.equal(deep.status, 200);
  assert.match(deep.headers.get('content-type'), /text\/html/);
  const html = await deep.text();
  const asset = /src="(\/det\/assets\/[^"]+\.js)"/.exec(html);
  assert.ok(asset, `no script in index.html: ${html}`);
  const js = await fetch(`${url}${asset[1]}`);
  assert.equal(js.status, 200);
  assert.match(js.headers.get('content-type'), /javascript/);
  assert.match(js.headers.get('cache-control'), /max-age=31536000/);
  const escape = await fetch(`${url}/det/..%2f..%2fetc/passwd`);
  assert.notEqual(await escape.text(), fs.readFileSync('/etc/passwd', 'utf8'));
});

test('an unauthenticated visit goes to login, and logging in lands on the page asked for', async () => {
  await page.goto(`${url}/det/experiments`);
  await page.waitForURL(/\/det\/login/);
  await shot('login');
  await page.fill('input[name=password]', 'wrong');
  await page.click('button[type=submit]');
  await page.locator('[role=alert]').waitFor();
  assert.match(await page.locator('[role=alert]').innerText(), /\S/);
  await page.fill('input[name=password]', '');
  await page.click('button[type=submit]');
  await page.waitForURL(/\/det\/experiments/);
  const cookies = await page.context().cookies();
  assert.ok(cookies.some((c) => c.name === 'auth' && c.value.length > 0), 'no auth cookie');
});

test('the experiment list shows both experiments and filters on the server', async () => {
  await page.goto(`${url}/det/experiments`);
  await page.locator(`[data-testid=experiment-row-${searchId}]`).waitFor();
  await page.locator(`[data-testid=experiment-row-${longId}]`).waitFor();
  assert.match(await page.locator(`[data-testid=experiment-row-${searchId}]`).innerText(), /core-api-compat-hpsearch/);
  await shot('experiment-list');
  await page.fill('input[aria-label="name filter"]', 'long-running');
  await page.press('input[aria-label="name filter"]', 'Enter');
  await page.waitForURL(/name=long-running/);
  // The rows go while the filtered page loads: wait for the matching row alone.
  await waitFor('only the matching row', async () =>
    (await page.locator(`[data-testid=experiment-row-${longId}]`).count()) === 1 &&
    (await page.locator(`[data-testid=experiment-row-${searchId}]`).count()) === 0, 20_000);
  await waitFor('the total of the filtered list', async () =>
    (await page.locator('.toolbar .muted').first().innerText()) === '1 experiment', 20_000);
});

test('the experiment page draws a learning curve that is not blank', async () => {
  await waitFor('the search to finish', async () => {
    const e = (await rest('GET', `experiments/${searchId}`)).experiment;
    return e.state === 'STATE_COMPLETED' || e.state === 'STATE_ERROR' ? e.state : false;
  }, 180_000, 1000);
  // The list route filters on the server, with Determined's parameter names.
  const done = await rest('GET', 'experiments?states=STATE_COMPLETED&users=determined&sortBy=SORT_BY_NAME');
  assert.deepEqual(done.experiments.map((e) => e.id), [searchId]);
  const byId = await rest('GET', `experiments?experimentIdFilter.incl=${longId}&sortBy=SORT_BY_START_TIME&orderBy=ORDER_BY_DESC`);
  assert.deepEqual(byId.experiments.map((e) => e.id), [longId]);
  const bad = await fetch(`${url}/api/v1/experiments?sortBy=SORT_BY_NOPE`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error.error, /sortBy: "SORT_BY_NOPE"/);

  // Curves first: the searcher metric's series are asked for with the experiment's trialIds
  // before the trial list (which reads every validation), with about one point per pixel; every
  // metric (for the picker) right after.
  const asked = [];
  const onRequest = (r) => {
    const u = r.url();
    if (u.includes('/api/v1/trials/time-series') || u.includes(`/api/v1/experiments/${searchId}/trials`)) asked.push(u);
  };
  page.on('request', onRequest);
  await page.goto(`${url}/det/experiments/${searchId}`);
  const canvas = page.locator('[data-testid=learning-curve] canvas');
  await canvas.waitFor();
  await page.locator('[data-testid=trials-table]').waitFor();
  // Both metric groups in the picker once every metric is in.
  await page.locator('select[aria-label=metric] option', { hasText: 'training: x' }).waitFor({ state: 'attached' });
  page.off('request', onRequest);
  const exp = (await rest('GET', `experiments/${searchId}`)).experiment;
  const listed = (await rest('GET', `experiments/${searchId}/trials`)).trials.map((t) => t.id);
  assert.deepEqual(exp.trialIds, listed);
  assert.match(asked[0] ?? '', /trials\/time-series\?/, asked.join('\n'));
  const first = new URL(asked[0]);
  assert.deepEqual(first.searchParams.getAll('trialIds').map(Number), listed);
  assert.equal(first.searchParams.get('maxDatapoints'), '1400'); // the window's width
  assert.equal(first.searchParams.get('metricIds'), 'validation.x');
  const all = asked.find((u) => u.includes('time-series') && !u.includes('metricIds'));
  assert.ok(all, asked.join('\n'));
  assert.ok(asked.some((u) => u.includes(`/experiments/${searchId}/trials`)), asked.join('\n'));
  // Lines in colour: pixels whose channels differ clearly (the axes and grid are grey).
  const coloured = await waitFor('coloured pixels', () =>
    canvas.evaluate((c) => {
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      let n = 0;
      for (let i = 0; i < data.length; i += 4) {
        const [r, g, b, a] = [data[i], data[i + 1], data[i + 2], data[i + 3]];
        if (a > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 60) n++;
      }
      return n > 100 ? n : 0;
    }), 20_000);
  assert.ok(coloured > 100, `only ${coloured} coloured pixels`);
  await shot('experiment-detail');
});

test('the trial page shows a log line the trial printed', async () => {
  const trials = (await rest('GET', `experiments/${searchId}/trials`)).trials;
  const done = trials.find((t) => t.state === 'STATE_COMPLETED') ?? trials[0];
  await page.goto(`${url}/det/experiments/${searchId}/trials/${done.id}`);
  await page.locator('[data-testid=trial-chart] canvas').waitFor();
  await shot('trial-detail');
  await page.click('role=tab[name="Logs"]');
  await page.locator('[data-testid=logs]', { hasText: 'alert sent' }).waitFor({ timeout: 30_000 });
  await shot('trial-logs');
});

test("the trial page's profiler tab charts system metrics while the trial runs", async () => {
  // A trial with the profiler on (0.2 s samples), long enough to be watched while it runs.
  const config = fs.readFileSync(path.join(PROFILED, 'profiled.yaml'), 'utf8').replace('batches: 20', 'batches: 400');
  const id = createExperiment(config, PROFILED);
  try {
    const trial = await waitFor('the profiled trial', async () => (await rest('GET', `experiments/${id}/trials`)).trials[0]);
    await page.goto(`${url}/det/experiments/${id}/trials/${trial.id}`);
    await page.click('role=tab[name="Profiler"]');
    const chart = page.locator('[data-testid=profiler-cpu_util_simple]');
    await chart.locator('canvas').waitFor({ timeout: 60_000 });
    const coloured = await waitFor('a drawn profiler line', async () => {
      const n = await colouredPixels(chart.locator('canvas'));
      return n > 50 ? n : 0;
    }, 30_000);
    assert.ok(coloured > 50, `only ${coloured} coloured pixels`);
    // It refreshes while the trial runs: more samples show without reloading the page.
    const points = async () => Number(await chart.getAttribute('data-points'));
    const first = await points();
    await waitFor('more profiler samples', async () => (await points()) > first, 30_000);
    assert.equal((await rest('GET', `trials/${trial.id}`)).trial.state, 'STATE_RUNNING');
    await shot('trial-profiler');
  } finally {
    await rest('POST', `experiments/${id}/kill`).catch(() => undefined);
    await waitFor('the profiled experiment to end', async () =>
      ['STATE_CANCELED', 'STATE_COMPLETED', 'STATE_ERROR'].includes((await rest('GET', `experiments/${id}`)).experiment.state), 60_000);
  }
});

test('the hyperparameter views draw every trial, and the rungs show what the search promoted', async () => {
  const trials = (await rest('GET', `experiments/${searchId}/trials`)).trials;
  const sampled = new Set(trials.map((t) => t.hparams.increment_by));
  assert.ok(sampled.size > 1, `the fixture's seed must sample more than one increment_by: ${[...sampled]}`);
  await page.goto(`${url}/det/experiments/${searchId}`);
  await page.click('role=tab[name="Hyperparameters"]');
  const lines = page.locator('[data-testid=parallel-coordinates] polyline');
  await waitFor('a line per trial', async () => (await lines.count()) === trials.length, 20_000);
  // Two axes (increment_by and the metric x): every line has a point on both.
  const pts = await lines.first().getAttribute('points');
  assert.equal(pts.trim().split(/\s+/).length, 2, `points: ${pts}`);
  const withMetric = trials.filter((t) => t.bestValidation).length;
  assert.equal(await page.locator('[data-testid=scatter-plots] circle').count(), withMetric);
  // The rungs are the searcher's (GET .../searcher/rungs), bracket by bracket: every trial is
  // in the first rung of one bracket, and the trials a rung promoted are those of the next.
  const served = await rest('GET', `experiments/${searchId}/searcher/rungs`);
  assert.ok(served.brackets.length >= 1, JSON.stringify(served));
  const chipIds = async (loc) => (await loc.allTextContents()).map((t) => Number(t.split(':')[0])).sort((a, b) => a - b);
  let firstRung = 0;
  for (const b of served.brackets) {
    const table = page.locator(`[data-testid=bracket-${b.index}-rungs]`);
    for (const r of b.rungs) {
      const want = r.trials.map((t) => t.trialId).sort((x, y) => x - y);
      const chips = table.locator(`[data-testid=rung-${r.index}] .chip`);
      await waitFor(`bracket ${b.index} rung ${r.index}`, async () => JSON.stringify(await chipIds(chips)) === JSON.stringify(want), 20_000);
      const promoted = r.trials.filter((t) => t.outcome === 'promoted').map((t) => t.trialId).sort((x, y) => x - y);
      assert.deepEqual(await chipIds(table.locator(`[data-testid=rung-${r.index}] .chip.outcome-promoted`)), promoted);
      if (r.index + 1 < b.rungs.length) {
        assert.deepEqual(promoted, b.rungs[r.index + 1].trials.map((t) => t.trialId).sort((x, y) => x - y));
      } else {
        assert.ok(r.trials.every((t) => t.outcome === 'completed'), JSON.stringify(r));
      }
    }
    firstRung += b.rungs[0].trials.length;
  }
  assert.equal(firstRung, trials.length);
  await shot('experiment-hyperparameters');
});

test("the code tab shows the experiment's files and their content", async () => {
  const tree = await rest('GET', `experiments/${searchId}/file_tree`);
  assert.ok(tree.files.some((f) => f.name === 'counter.py' && !f.isDir && f.contentLength > 0), JSON.stringify(tree));
  await page.goto(`${url}/det/experiments/${searchId}`);
  await page.click('role=tab[name="Code"]');
  await page.click('[data-testid="file-counter.py"]');
  const content = page.locator('[data-testid=file-content]');
  await content.waitFor();
  const want = fs.readFileSync(path.join(FIXTURE, 'counter.py'), 'utf8').split('\n')[0];
  assert.ok((await content.innerText()).includes(want));
  await shot('experiment-code');
});

test("fork creates a new experiment that runs the parent's code", async () => {
  await page.goto(`${url}/det/experiments/${searchId}`);
  await page.click('[data-testid=action-fork]');
  const editor = page.locator('[data-testid=config-dialog] textarea');
  await editor.waitFor();
  const config = await editor.inputValue();
  assert.match(config, /name: "Fork of core-api-compat-hpsearch"/);
  // A one-trial search keeps the test short.
  await editor.fill(config.replace(/max_trials: \d+/, 'max_trials: 1'));
  await page.click('[data-testid=config-submit]');
  await page.waitForURL(new RegExp(`/det/experiments/(?!${searchId}$)\\d+$`));
  forkId = Number(/experiments\/(\d+)$/.exec(page.url())[1]);
  const fork = (await rest('GET', `experiments/${forkId}`)).experiment;
  assert.equal(fork.parentId, searchId);
  assert.equal(fork.config.searcher.max_trials, 1);
  const done = await waitFor('the fork to finish', async () => {
    const e = (await rest('GET', `experiments/${forkId}`)).experiment;
    return ['STATE_COMPLETED', 'STATE_ERROR'].includes(e.state) ? e.state : false;
  }, 180_000, 1000);
  assert.equal(done, 'STATE_COMPLETED');
});

test('the list shows the best validation, keeps the chosen columns, edits labels and acts on a selection', async () => {
  const best = (await rest('GET', `experiments/${searchId}/searcher/best_searcher_validation_metric`)).metric;
  const listed = (await rest('GET', `experiments?experimentIdFilter.incl=${searchId}`)).experiments[0];
  assert.equal(listed.bestTrialSearcherMetric, best);
  assert.ok(listed.checkpointCount > 0, JSON.stringify(listed));
  await page.goto(`${url}/det/experiments`);
  const row = page.locator(`[data-testid=experiment-row-${searchId}]`);
  await row.waitFor();
  await waitFor('the best value', async () => (await row.locator('.col-best').innerText()).trim() === String(best), 20_000);
  // Column choice survives a reload.
  await page.click('[data-testid=column-picker] summary');
  await page.check('input[aria-label="column Checkpoint size"]');
  await page.locator('th', { hasText: 'Checkpoint size' }).waitFor();
  await page.reload();
  await page.locator('th', { hasText: 'Checkpoint size' }).waitFor();
  // A label added in place reaches the master; removing it too.
  await row.locator(`button[aria-label="add label to ${searchId}"]`).click();
  await row.locator(`input[aria-label="new label for ${searchId}"]`).fill('webui-label');
  await row.locator(`input[aria-label="new label for ${searchId}"]`).press('Enter');
  await waitFor('the label', async () => (await rest('GET', `experiments/${searchId}`)).experiment.labels.includes('webui-label'));
  await row.locator('button[aria-label="remove label webui-label"]').waitFor();
  await shot('experiment-list-columns');
  await row.locator('button[aria-label="remove label webui-label"]').click();
  await waitFor('no label', async () => !(await rest('GET', `experiments/${searchId}`)).experiment.labels.includes('webui-label'));
  // Batch move of the fork to another project.
  const project = (await rest('POST', 'workspaces/1/projects', { name: 'webui-project', workspaceId: 1 })).project;
  await page.reload();
  await page.check(`input[aria-label="select experiment ${forkId}"]`);
  await waitFor('the project in the move menu', async () =>
    (await page.locator('select[aria-label="move to project"] option', { hasText: 'webui-project' }).count()) === 1, 20_000);
  await page.selectOption('select[aria-label="move to project"]', String(project.id));
  await waitFor('the move', async () => (await rest('GET', `experiments/${forkId}`)).experiment.projectId === project.id);
  // Batch archive, then batch delete, of the finished fork.
  await page.check(`input[aria-label="select experiment ${forkId}"]`);
  await page.click('[data-testid=batch-archive]');
  await waitFor('archived', async () => (await rest('GET', `experiments/${forkId}`)).experiment.archived === true);
  await page.goto(`${url}/det/experiments?archived=true`);
  await page.check(`input[aria-label="select experiment ${forkId}"]`);
  await page.click('[data-testid=batch-delete]');
  await waitFor('deleted', async () => {
    const r = await fetch(`${url}/api/v1/experiments/${forkId}`, { headers: { Authorization: `Bearer ${token}` } });
    return r.status === 404 || (r.ok && (await r.json()).experiment.state === 'STATE_DELETING');
  }, 60_000);
});

test('the trial page pages through workloads, registers a checkpoint and continues the trial', async () => {
  const trials = (await rest('GET', `experiments/${searchId}/trials`)).trials;
  const t = trials.find((x) => x.bestCheckpoint) ?? trials[0];
  await page.goto(`${url}/det/experiments/${searchId}/trials/${t.id}`);
  await page.click('role=tab[name="Workloads"]');
  const table = page.locator('[data-testid=workloads]');
  await table.locator('tr.workload-validation').first().waitFor();
  const all = (await rest('GET', `trials/${t.id}/workloads`)).pagination.total;
  assert.match(await page.locator('[data-testid=workload-range]').innerText(), new RegExp(`of ${all}$`));
  await shot('trial-workloads');
  await page.click('role=tab[name="Checkpoints"]');
  promptAnswer = 'webui-model';
  await page.locator('[data-testid=checkpoint-table] button', { hasText: 'Register' }).first().click();
  await page.locator('[role=status]', { hasText: 'version 1 of model webui-model' }).waitFor();
  const versions = (await rest('GET', 'models/webui-model/versions')).modelVersions;
  assert.equal(versions.length, 1);
  // Continue trial: a single-trial experiment warm-started from this one, with its hparams.
  await page.click('[data-testid=action-continue]');
  const config = JSON.parse(await page.locator('[data-testid=config-dialog] textarea').inputValue());
  assert.equal(config.searcher.source_trial_id, t.id);
  assert.deepEqual(config.hyperparameters.increment_by, { type: 'const', val: t.hparams.increment_by });
  await page.click('[data-testid=config-submit]');
  await page.waitForURL(new RegExp(`/det/experiments/(?!${searchId}$)\\d+$`));
  const contId = Number(/experiments\/(\d+)$/.exec(page.url())[1]);
  const cont = await rest('GET', `experiments/${contId}`);
  assert.equal(cont.experiment.parentId, searchId);
  assert.equal(cont.config.searcher.name, 'single');
  await rest('POST', `experiments/${contId}/kill`);
});

test('pause and activate from the experiment page change the state', async () => {
  await page.goto(`${url}/det/experiments/${longId}`);
  const pause = page.locator('[data-testid=action-pause]');
  await waitFor('the pause button', () => pause.isEnabled(), 60_000);
  await pause.click();
  await waitFor('STATE_PAUSED', async () => (await rest('GET', `experiments/${longId}`)).experiment.state === 'STATE_PAUSED');
  const activate = page.locator('[data-testid=action-activate]');
  await waitFor('the activate button', () => activate.isEnabled(), 20_000);
  await activate.click();
  await waitFor('an active state', async () => {
    const s = (await rest('GET', `experiments/${longId}`)).experiment.state;
    return ['STATE_ACTIVE', 'STATE_RUNNING', 'STATE_QUEUED'].includes(s);
  });
});

test("a job's priority changes from the job queue page", async () => {
  const jobOf = async () => {
    const jobs = (await rest('GET', 'job-queues-v2?resourcePool=default')).jobs.map((j) => j.full ?? j);
    return jobs.find((j) => j.entityId === String(longId));
  };
  const before = await waitFor('the job in the queue', jobOf);
  const wanted = before.priority === 7 ? 8 : 7;
  await page.goto(`${url}/det/jobs`);
  const row = page.locator(`[data-testid=job-row-${longId}]`);
  await row.waitFor();
  await row.locator('input[aria-label="new priority"]').fill(String(wanted));
  await row.locator('button[type=submit]').click();
  await waitFor('the new priority', async () => (await jobOf())?.priority === wanted);
  await waitFor('the page to show it', async () => (await row.locator('[data-testid=job-priority]').innerText()) === String(wanted), 20_000);
  await shot('job-queue');
});

test('the job queue page moves a job behind another and kills jobs', async () => {
  // A second job, so that there is something to move behind.
  const otherId = createExperiment(`name: webui-second-job
entrypoint: python3 counter.py
hyperparameters:
  increment_by: 1
  step_seconds: 0.2
searcher:
  name: single
  metric: x
  smaller_is_better: false
  max_length:
    batches: 3000
max_restarts: 0
`);
  const order = async () =>
    (await rest('GET', 'job-queues-v2?resourcePool=default')).jobs.map((j) => (j.full ?? j).entityId);
  await waitFor('both jobs in the queue', async () => {
    const o = await order();
    return o.includes(String(longId)) && o.includes(String(otherId));
  });
  await page.goto(`${url}/det/jobs`);
  const row = page.locator(`[data-testid=job-row-${longId}]`);
  await row.waitFor();
  await page.locator(`[data-testid=job-row-${otherId}]`).waitFor();
  const other = (await rest('GET', 'job-queues-v2?resourcePool=default')).jobs.map((j) => j.full ?? j).find((j) => j.entityId === String(otherId));
  await row.locator('select[aria-label="ahead or behind"]').selectOption('behindOf');
  await row.locator('select[aria-label="move relative to job"]').selectOption(other.jobId);
  await waitFor('the job behind the other', async () => {
    const o = await order();
    return o.indexOf(String(longId)) > o.indexOf(String(otherId));
  });
  await shot('job-queue-two-jobs');
  for (const id of [otherId, longId]) {
    await page.locator(`[data-testid=job-row-${id}] [data-testid=job-kill]`).click();
    await waitFor(`the kill of ${id}`, async () => {
      const s = (await rest('GET', `experiments/${id}`)).experiment.state;
      return ['STATE_STOPPING_KILLED', 'STATE_CANCELED', 'STATE_STOPPING_CANCELED'].includes(s);
    });
  }
});

test("the cluster page lists the agent and its slots, and follows the master's log", async () => {
  await page.goto(`${url}/det/clusters`);
  await page.locator('[data-testid=agent-table] tbody tr').first().waitFor();
  await waitFor('two slots', async () => (await page.locator('.slot').count()) === 2, 20_000);
  assert.match(await page.locator('[data-testid=pool-table]').innerText(), /default/);
  await shot('cluster');
  // The master's log, followed: it said when it created the search.
  await page.click('role=tab[name="Master logs"]');
  await page.locator('[data-testid=master-logs]', { hasText: `created experiment ${searchId}` }).waitFor({ timeout: 30_000 });
  await shot('master-logs');
});

test('an admin disables an agent and a slot from the cluster page, and the scheduler honours it', async () => {
  const agentId = (await rest('GET', 'agents')).agents[0].id;
  const state = page.locator(`[data-testid=agent-state-${agentId}]`);
  // The user `determined` is no admin: the page says why nothing changed.
  await page.goto(`${url}/det/clusters`);
  await state.locator('button', { hasText: 'Disable' }).click();
  await page.locator('[role=alert]', { hasText: 'only an admin' }).waitFor();
  // As admin.
  await page.context().clearCookies();
  await page.goto(`${url}/det/login?redirect=${encodeURIComponent('/clusters')}`);
  await page.fill('input[name=username]', 'admin');
  await page.fill('input[name=password]', '');
  await page.click('button[type=submit]');
  await page.waitForURL(/\/det\/clusters/);
  await state.locator('button', { hasText: 'Disable' }).click();
  await waitFor('the agent disabled', async () => (await rest('GET', `agents/${agentId}`)).agent.enabled === false);
  await state.locator('.agent-state', { hasText: 'disabled' }).waitFor();
  await shot('cluster-agent-disabled');
  // A new experiment stays queued while the only agent is disabled...
  const id = createExperiment(fs.readFileSync(path.join(FIXTURE, 'hpsearch.yaml'), 'utf8').replace('max_trials: 4', 'max_trials: 1'));
  const jobState = async () =>
    (await rest('GET', 'job-queues-v2?resourcePool=default')).jobs.map((j) => j.full ?? j).find((j) => j.entityId === String(id))?.summary?.state;
  await waitFor('the job queued', async () => (await jobState()) === 'STATE_QUEUED');
  const until = Date.now() + 3000; // several scheduler ticks
  while (Date.now() < until) {
    assert.equal(await jobState(), 'STATE_QUEUED');
    assert.equal((await rest('GET', `experiments/${id}/trials`)).trials.filter((t) => t.state === 'STATE_RUNNING').length, 0);
    await new Promise((r) => setTimeout(r, 250));
  }
  // ... and runs once it is enabled again.
  await state.locator('button', { hasText: 'Enable' }).click();
  await waitFor('the experiment to run', async () => {
    const e = (await rest('GET', `experiments/${id}`)).experiment;
    return e.state === 'STATE_COMPLETED' || (await jobState()) === 'STATE_SCHEDULED';
  }, 60_000);
  // One slot off and on again.
  await page.click(`[data-testid="slot-${agentId}-0"]`);
  await waitFor('slot 0 disabled', async () => (await rest('GET', `agents/${agentId}/slots/0`)).slot.enabled === false);
  await page.locator(`[data-testid="slot-${agentId}-0"].disabled`).waitFor();
  await page.click(`[data-testid="slot-${agentId}-0"]`);
  await waitFor('slot 0 enabled', async () => (await rest('GET', `agents/${agentId}/slots/0`)).slot.enabled === true);
  await rest('POST', `experiments/${id}/kill`).catch(() => undefined);
});

test("a missing experiment or trial shows the API's message, never a blank page", async () => {
  const apiMessage = async (p) => {
    const r = await fetch(`${url}/api/v1/${p}`, { headers: { Authorization: `Bearer ${token}` } });
    assert.equal(r.status, 404);
    return (await r.json()).error.error;
  };
  const missingExperiment = await apiMessage('experiments/987654');
  await page.goto(`${url}/det/experiments/987654`);
  await page.locator('[role=alert]', { hasText: missingExperiment }).waitFor();
  await shot('error-missing-experiment');
  const missingTrial = await apiMessage('trials/987654');
  await page.goto(`${url}/det/experiments/${searchId}/trials/987654`);
  await page.locator('[role=alert]', { hasText: missingTrial }).waitFor();
  // The rung view of a searcher without rungs says why.
  const single = await fetch(`${url}/api/v1/experiments/${longId}/searcher/rungs`, { headers: { Authorization: `Bearer ${token}` } });
  assert.equal(single.status, 400);
  assert.match((await single.json()).error.error, /has no rungs/);
});

test('an expired or revoked token goes back to login', async () => {
  const cookies = await page.context().cookies();
  const auth = cookies.find((c) => c.name === 'auth');
  await fetch(`${url}/api/v1/auth/logout`, { method: 'POST', headers: { Authorization: `Bearer ${auth.value}` } });
  await page.goto(`${url}/det/experiments/${searchId}`);
  await page.waitForURL(/\/det\/login\?redirect=/);
});
