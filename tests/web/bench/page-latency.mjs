// From EvidenceSink::publish in a host to the change being visible in the
// reference view, in Debian's Chromium: p50 and p99 over N probes.
//
//   node bench/page-latency.mjs [PROBES]   (from tests/web; build the workspace first)
//
// The fixture host publishes a tool call on the kandev row and prints the
// wall-clock time of the publish; the page resolves a MutationObserver
// promise with its own wall-clock time (performance.timeOrigin + now()) when
// the tool's name appears in the rendered rows. Same machine, same clock.
import { chromium } from '@playwright/test';
import { startFixture } from '../specs/fixture.mjs';

const probes = Number(process.argv[2] ?? 200);
const fixture = await startFixture();
const browser = await chromium.launch({
  executablePath: process.env.TETHER_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(await fixture.loginUrl());
  await page.locator('#session-select').selectOption('alpha');
  await page.locator('#mcp-trigger').click();
  await page.locator('#rows > li[data-server="kandev"]').waitFor();
  const latencies = [];
  for (let i = 0; i < probes; i += 1) {
    const needle = `bench_tool_${i}_`;
    await page.evaluate((text) => {
      window.__seen = new Promise((resolve) => {
        const rows = document.getElementById('rows');
        const observer = new MutationObserver(() => {
          if (rows?.textContent?.includes(text)) {
            observer.disconnect();
            resolve(performance.timeOrigin + performance.now());
          }
        });
        if (rows) observer.observe(rows, { childList: true, subtree: true, characterData: true });
      });
    }, needle);
    const answer = await fixture.command(`publish alpha ${needle}`, true);
    const published = Number(answer.split(' ')[1]);
    const seen = await page.evaluate(() => window.__seen);
    latencies.push(seen - published);
    await page.waitForTimeout(20);
  }
  latencies.sort((a, b) => a - b);
  const at = (p) => latencies[Math.min(latencies.length - 1, Math.round((latencies.length - 1) * p))];
  console.log(`publish → visible in the page (Chromium ${browser.version()}), ${probes} probes:`);
  console.log(`p50 ${at(0.5).toFixed(2)} ms, p99 ${at(0.99).toFixed(2)} ms, max ${latencies.at(-1).toFixed(2)} ms`);
} finally {
  await browser.close();
  fixture.stop();
}
