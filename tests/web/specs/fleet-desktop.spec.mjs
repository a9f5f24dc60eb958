// The fleet page on a desktop: many sessions from real agents and real
// recorded harness sessions, filters in the URL, the server view, live.
import { test, expect } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startFleet, importRecords, SCREENSHOTS, SECRET } from './fixture.mjs';

let fleet;
test.beforeAll(async () => { fleet = await startFleet(); });
test.afterAll(async () => { fleet?.stop(); });

/** @param {import('@playwright/test').Page} page */
function items(page) { return page.locator('#fleet-list > li'); }

test('desktop fleet: filters narrow the list, the server view adds up, a live change appears', async ({ page }) => {
  await page.goto(await fleet.loginUrl());
  await expect(page.locator('#mcp-trigger')).toBeEnabled();
  // Five recorded sessions and the host's three live ones.
  await expect(items(page)).toHaveCount(8);
  await expect(page.locator('#page-label')).toHaveText('1–8 of 8');

  // Harness: only Codex's session.
  await page.getByLabel('Harness').selectOption('codex');
  await expect(items(page)).toHaveCount(1);
  await expect(items(page).first()).toContainText('codex');
  expect(page.url()).toContain('harness=codex');
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await expect(items(page)).toHaveCount(8);

  // Status needs auth: exactly the sessions the API says.
  await page.getByLabel('Status').selectOption('needs_auth');
  const needsAuth = await fleet.api('/api/v1/fleet/sessions?status=needs_auth');
  expect(needsAuth.total).toBeGreaterThan(0);
  await expect(items(page)).toHaveCount(needsAuth.total);
  await expect.poll(async () => (await items(page).evaluateAll((lis) => lis.map((li) => li.dataset.session))).sort())
    .toEqual(needsAuth.sessions.map((s) => s.session_id).sort());

  // Free text on server names.
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await page.getByLabel('Name contains').fill('broken');
  const broken = await fleet.api('/api/v1/fleet/sessions?q=broken');
  await expect(items(page)).toHaveCount(broken.total);

  // The filters live in the URL: a reload (or a shared link) shows the same view.
  expect(page.url()).toContain('q=broken');
  await page.reload();
  await expect(page.getByLabel('Name contains')).toHaveValue('broken');
  await expect(items(page)).toHaveCount(broken.total);
  await page.getByRole('button', { name: 'Clear filters' }).click();

  // The server view: each server's count equals the sum over its sessions.
  await page.getByRole('tab', { name: 'Servers' }).click();
  expect(page.url()).toContain('view=servers');
  const servers = await fleet.api('/api/v1/fleet/servers');
  for (const server of servers.servers) {
    const sessions = await fleet.api(`/api/v1/fleet/sessions?server=${encodeURIComponent(server.name)}&limit=200`);
    expect(server.all.sessions).toBe(sessions.total);
    await expect(page.locator(`#server-list > li[data-server="${server.name}"]`))
      .toContainText(`${server.all.sessions} session`);
  }
  // "Is authy broken everywhere?": a server opens the sessions where it failed.
  await page.getByRole('button', { name: 'Sessions where authy failed' }).click();
  await expect(page.getByRole('tab', { name: 'Sessions' })).toHaveAttribute('aria-selected', 'true');
  const authy = await fleet.api('/api/v1/fleet/sessions?server=authy&status=failed');
  await expect(items(page)).toHaveCount(authy.total);
  expect(page.url()).toContain('server=authy');

  // A session opens the existing popover, unchanged.
  await items(page).first().getByRole('button').click();
  await expect(page.locator('#mcp-panel')).toBeVisible();
  await expect(page.locator('#rows > li[data-server="authy"]')).toContainText('Failed');
  await page.keyboard.press('Escape');
  await expect(page.locator('#mcp-panel')).toBeHidden();

  // Keyboard: the filters and the list are reachable, and named.
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await page.getByLabel('Status').focus();
  await expect(page.getByLabel('Status')).toBeFocused();

  // A live change: a session imported now appears without a reload.
  await expect(items(page)).toHaveCount(8);
  await importRecords(fleet.db, 'opencode');
  await expect(items(page)).toHaveCount(9);
  await expect(page.locator('#fleet-list')).toContainText('opencode');

  // No token, ever, in the address bar or the page.
  expect(page.url()).not.toContain(fleet.token);
  const html = await page.content();
  expect(html).not.toContain(fleet.token);
  expect(html).not.toContain(SECRET);
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, 'fleet-desktop.png'), fullPage: true });
});
