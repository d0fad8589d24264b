// Time from navigation to the first rendered row of the experiment list (and, with
// EXPERIMENT=id, to a drawn learning curve), against a running master:
//   DET_MASTER=http://127.0.0.1:8080 node bench/first_paint.mjs [list-query]
// Prints one line per measurement, the median of RUNS (default 5) cold page loads; the element
// is looked for on every animation frame, so a figure is the paint, not a polling interval.
import { chromium } from 'playwright-core';

const master = process.env.DET_MASTER || 'http://127.0.0.1:8080';
const runs = Number(process.env.RUNS || 5);
const query = process.argv[2] || '';

const login = await fetch(`${master}/api/v1/auth/login`, {
  method: 'POST',
  body: JSON.stringify({ username: process.env.DET_USER || 'determined', password: process.env.DET_PASS || '' }),
});
const { token } = await login.json();
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium' });

async function measure(path, selector) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const ctx = await browser.newContext();
    await ctx.addCookies([{ name: 'auth', value: token, url: master }]);
    const page = await ctx.newPage();
    const t0 = Date.now();
    await page.goto(`${master}${path}`);
    // Checked on every animation frame in the page: locator.waitFor() polls with a back-off
    // that reaches 500 ms after ~0.3 s, which would round a paint up by as much.
    await page.waitForFunction(
      (sel) => {
        const el = document.querySelector(sel);
        return !!el && el.getClientRects().length > 0;
      },
      selector,
      { polling: 'raf', timeout: 60_000 },
    );
    times.push(Date.now() - t0);
    await ctx.close();
  }
  times.sort((a, b) => a - b);
  console.log(`${times[Math.floor(times.length / 2)]} ms  ${path}  (runs: ${times.join(', ')})`);
}

const total = (await (await fetch(`${master}/api/v1/experiments?limit=1`, { headers: { Authorization: `Bearer ${token}` } })).json())
  .pagination?.total;
console.log(`${total} experiments`);
await measure(`/det/experiments${query ? `?${query}` : ''}`, '[data-testid^=experiment-row-]');
if (process.env.EXPERIMENT) {
  await measure(`/det/experiments/${process.env.EXPERIMENT}`, '[data-testid=learning-curve] canvas');
}
await browser.close();
