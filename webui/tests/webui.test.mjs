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
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

let dataDir;
let url;
let token;
let browser;
let page;
let searchId; // the fixture's adaptive search, run to the end
let longId; // a long single-trial experiment, paused/activated and reprioritized

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

async function shot(name) {
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

function createExperiment(configText) {
  const file = path.join(dataDir, `exp-${Date.now()}.yaml`);
  fs.writeFileSync(file, configText);
  const out = det('experiment', 'create', file, FIXTURE);
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

  searchId = createExperiment(fs.readFileSync(path.join(FIXTURE, 'hpsearch.yaml'), 'utf8'));
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

  await page.goto(`${url}/det/experiments/${searchId}`);
  const canvas = page.locator('[data-testid=learning-curve] canvas');
  await canvas.waitFor();
  await page.locator('[data-testid=trials-table]').waitFor();
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

test('the cluster page lists the agent and its slots', async () => {
  await page.goto(`${url}/det/clusters`);
  await page.locator('[data-testid=agent-table] tbody tr').first().waitFor();
  await waitFor('two slots', async () => (await page.locator('.slot').count()) === 2, 20_000);
  assert.match(await page.locator('[data-testid=pool-table]').innerText(), /default/);
  await shot('cluster');
});

test('an expired or revoked token goes back to login', async () => {
  const cookies = await page.context().cookies();
  const auth = cookies.find((c) => c.name === 'auth');
  await fetch(`${url}/api/v1/auth/logout`, { method: 'POST', headers: { Authorization: `Bearer ${auth.value}` } });
  await page.goto(`${url}/det/experiments/${searchId}`);
  await page.waitForURL(/\/det\/login\?redirect=/);
});
