// The fleet page with 10,000 sessions on a real hub, in Debian's Chromium:
// - first render: from navigation to the first page of sessions and its
//   count ("1–50 of 10000") on screen;
// - a live change: from a host beginning a session to its row in the list,
//   p50 and p99 over N probes (same machine, same clock);
// - memory: the page's JS heap after a forced GC, before and after paging
//   through the whole list and back.
//
//   node bench/fleet.mjs [SESSIONS] [PROBES]   (from tests/web; build the workspace first)
import { chromium } from '@playwright/test';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { BIN_DIR, loginUrl, started } from '../specs/fixture.mjs';

const sessions = Number(process.argv[2] ?? 10000);
const probes = Number(process.argv[3] ?? 200);

const host = spawn(join(BIN_DIR, 'tether-fleet-host'), ['--sessions', String(sessions)], {
  detached: true,
  stdio: ['pipe', 'pipe', 'inherit'],
});
const { lines, banner } = await started(host, 'tether-fleet-host');
async function command(line) {
  const answer = new Promise((resolve) => lines.once('line', resolve));
  host.stdin.write(`${line}\n`);
  const text = await answer;
  if (!text.startsWith('ok ')) throw new Error(`host: ${line}: ${text}`);
  return Number(text.split(' ')[1]);
}

const browser = await chromium.launch({
  executablePath: process.env.TETHER_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--js-flags=--expose-gc', '--enable-precise-memory-info'],
});
const at = (xs, p) => xs[Math.min(xs.length - 1, Math.round((xs.length - 1) * p))];
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  // First render, five times (a fresh page each).
  const renders = [];
  for (let i = 0; i < 5; i += 1) {
    const url = await loginUrl(banner);
    await page.goto('about:blank');
    await page.goto(url);
    await page.locator('#page-label').filter({ hasText: `of ${sessions}` }).waitFor();
    await page.locator('#fleet-list > li').nth(49).waitFor();
    renders.push(await page.evaluate(() => performance.now()));
  }
  renders.sort((a, b) => a - b);

  // A live change: the host begins a session; the page shows it at the top.
  const latencies = [];
  for (let i = 0; i < probes; i += 1) {
    const id = `live${String(i).padStart(4, '0')}`;
    await page.evaluate((text) => {
      window.__seen = new Promise((resolve) => {
        const list = document.getElementById('fleet-list');
        const observer = new MutationObserver(() => {
          if (list?.querySelector(`li[data-session="${text}"]`)) {
            observer.disconnect();
            resolve(performance.timeOrigin + performance.now());
          }
        });
        if (list) observer.observe(list, { childList: true, subtree: true });
      });
    }, id);
    const begun = await command(`new ${id}`);
    const seen = await page.evaluate(() => window.__seen);
    latencies.push(seen - begun);
    await page.waitForTimeout(30);
  }
  latencies.sort((a, b) => a - b);

  // Memory: page through every page and back; the heap after GC stays flat.
  const heap = () => page.evaluate(() => { window.gc?.(); return performance.memory?.usedJSHeapSize ?? 0; });
  const before = await heap();
  const pages = Math.ceil((sessions + probes) / 50);
  for (let i = 1; i < Math.min(pages, 60); i += 1) {
    await page.locator('#page-next').click();
    await page.locator('#page-label').filter({ hasText: `${i * 50 + 1}–` }).waitFor();
  }
  const deep = await heap();
  for (let i = 0; i < Math.min(pages, 60); i += 1) {
    if (await page.locator('#page-prev').isDisabled()) break;
    await page.locator('#page-prev').click();
  }
  await page.locator('#page-label').filter({ hasText: /^1–50 / }).waitFor();
  const after = await heap();

  console.log(`fleet page, ${sessions} sessions on a live hub (Chromium ${browser.version()}):`);
  console.log(`first render: median ${at(renders, 0.5).toFixed(0)} ms, max ${renders.at(-1).toFixed(0)} ms (5 loads)`);
  console.log(`live change → visible: p50 ${at(latencies, 0.5).toFixed(2)} ms, p99 ${at(latencies, 0.99).toFixed(2)} ms, max ${latencies.at(-1).toFixed(2)} ms (${probes} probes)`);
  console.log(`JS heap after GC: ${(before / 1048576).toFixed(2)} MiB on page 1, ${(deep / 1048576).toFixed(2)} MiB after ${Math.min(pages, 60) - 1} pages, ${(after / 1048576).toFixed(2)} MiB back on page 1`);
} finally {
  await browser.close();
  try { process.kill(-host.pid, 'SIGKILL'); } catch { /* gone */ }
}
