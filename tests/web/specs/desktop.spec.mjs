// The reference view on a desktop, asserted through the rendered page only.
import { test, expect } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startFixture, SCREENSHOTS, SECRET, MARKER } from './fixture.mjs';

let fixture;
test.beforeAll(async () => { fixture = await startFixture(); });
test.afterAll(async () => { fixture?.stop(); });

/** @param {import('@playwright/test').Page} page */
function panel(page) { return page.locator('#mcp-panel'); }
/** @param {import('@playwright/test').Page} page @param {string} name */
function row(page, name) { return page.locator(`#rows > li[data-server="${name}"]`); }

async function open(page) {
  await page.goto(await fixture.loginUrl());
  await expect(page.locator('#mcp-trigger')).toBeEnabled();
  // The one-time code is gone from the address bar.
  expect(page.url()).not.toContain('login=');
}

async function selectSession(page, id) {
  await page.locator('#session-select').selectOption(id);
  await expect(page.locator('#ids')).toContainText(id);
}

test('desktop: popover, every status from real agents, sessions apart, reload, actions', async ({ page, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: fixture.url });
  await open(page);
  const trigger = page.locator('#mcp-trigger');

  // Three sessions: the switcher shows them all.
  await expect(page.locator('#session-select option')).toHaveText([/alpha/, /beta/, /gamma/]);

  // Hover opens it transiently; leaving closes it.
  await expect(panel(page)).toBeHidden();
  await trigger.hover();
  await expect(panel(page)).toBeVisible();
  await expect(panel(page)).toHaveClass(/as-popover/);
  await expect(trigger).toHaveAttribute('aria-expanded', 'true');
  await page.mouse.move(5, 700);
  await expect(panel(page)).toBeHidden();
  await expect(trigger).toHaveAttribute('aria-expanded', 'false');

  // Keyboard focus opens it; Escape closes it and gives focus back.
  await page.locator('#session-select').focus();
  await page.keyboard.press('Tab');
  await expect(trigger).toBeFocused();
  await expect(panel(page)).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(panel(page)).toBeHidden();
  await expect(trigger).toBeFocused();

  // A click pins it: it stays when the pointer leaves; a second click closes it.
  await trigger.click();
  await page.mouse.move(5, 700);
  await page.waitForTimeout(400);
  await expect(panel(page)).toBeVisible();
  await trigger.click();
  await expect(panel(page)).toBeHidden();
  // An outside click closes a pinned popover.
  await trigger.click();
  await expect(panel(page)).toBeVisible();
  await page.mouse.click(5, 700);
  await expect(panel(page)).toBeHidden();

  // alpha, from the reference agent: Active and Delivered · unverified.
  await selectSession(page, 'alpha');
  await trigger.click();
  await expect(row(page, 'kandev')).toContainText('Active · 1 tool');
  await expect(row(page, 'kandev')).toHaveAttribute('data-status', 'active');
  await expect(row(page, 'notes')).toContainText('Delivered · connection unverified');
  await expect(row(page, 'kandev').locator('.check[data-stage="Tools listed"]')).toHaveAttribute('data-state', 'yes');
  await expect(row(page, 'notes').locator('.check[data-stage="Connected"]')).toHaveAttribute('data-state', 'unknown');
  // One level down: the server's tools, each with its way to the model,
  // the stages with what showed them, and what its definition costs.
  const tools = row(page, 'kandev').locator('details.tools');
  await expect(tools.locator('> summary')).toContainText(/Tools \(1\) · ≈\d+ tokens/);
  const tool = tools.locator('li.tool[data-tool="sentinel_echo"]');
  await expect(tool).toBeHidden();
  await tools.locator('> summary').click();
  await expect(tool).toBeVisible();
  await expect(tool.locator('.tool-tokens')).toHaveText(/≈\d+ tokens/);
  await tool.locator('summary').click();
  await expect(tool.locator('.tool-path')).toContainText('listed ✓ → accepted');
  await expect(tool.locator('.check[data-stage="Listed"]')).toHaveAttribute('data-state', 'yes');
  await expect(tool.locator('.check[data-stage="Listed"]')).toContainText('session event');
  // Nothing shows what a harness did with it: those stay unknown.
  await expect(tool.locator('.check[data-stage="Accepted by the harness"]')).toHaveAttribute('data-state', /unknown|yes/);
  await expect(row(page, 'notes').locator('details.tools')).toHaveCount(0);
  await expect(panel(page)).not.toContainText('broken-db');
  // The icon is neutral: it never takes a status color.
  const iconColor = await page.locator('#mcp-trigger .plug').evaluate((el) => getComputedStyle(el).color);
  const textColor = await page.locator('body').evaluate((el) => getComputedStyle(el).color);
  expect(iconColor).toBe(textColor);

  // beta, from the fake agent: Connected, Filtered and Failed; nothing of alpha's.
  await selectSession(page, 'beta');
  await expect(row(page, 'kandev')).toContainText('Connected · tools not listed yet');
  await expect(row(page, 'remote-search')).toContainText('Filtered · http unsupported');
  await expect(row(page, 'broken-db')).toContainText('Failed · session new failed');
  await expect(row(page, 'broken-db')).toHaveClass(/red/);
  await expect(row(page, 'notes')).toHaveCount(0);
  await expect(panel(page)).not.toContainText('Active · 1 tool');
  await expect(page.locator('#ids')).toContainText('beta');
  await expect(page.locator('#ids')).not.toContainText('alpha');

  // A reload hydrates: the same session and rows come back without any click but the trigger.
  await page.reload();
  await expect(trigger).toBeEnabled();
  await trigger.click();
  await expect(row(page, 'broken-db')).toContainText('Failed');
  await expect(page.locator('#ids')).toContainText('beta');

  // Recent output: never shown until asked, and only after a warning.
  await expect(page.locator('body')).not.toContainText(MARKER);
  await page.locator('#show-output').click();
  await expect(page.locator('#output-warning')).toBeVisible();
  await expect(page.locator('body')).not.toContainText(MARKER);
  await page.locator('#output-confirm').click();
  await expect(page.locator('#output-lines')).toContainText(MARKER);
  await expect(page.locator('#output-lines')).not.toContainText(SECRET);

  // Copy diagnostics: the sanitized report; no output, no secret.
  await page.locator('#copy-diagnostics').click();
  await expect(page.locator('#action-status')).toContainText('Copied');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  expect(copied).toContain('broken-db');
  expect(copied).toContain('session_new_failed');
  expect(copied).not.toContain(MARKER);
  expect(copied).not.toContain(SECRET);

  // Switching sessions clears the output: nothing of beta's shows under alpha.
  await selectSession(page, 'alpha');
  await expect(page.locator('#output')).toBeHidden();
  await expect(panel(page)).not.toContainText(MARKER);

  // An endpoint test, run from the page; its result lands in the history too.
  await page.getByRole('button', { name: 'Test endpoint kandev' }).click();
  await expect(row(page, 'kandev').locator('.test-result')).toContainText('Endpoint test passed: 1 tool');
  await expect(row(page, 'kandev').locator('.row-details')).toContainText('endpoint test (reachability only): passed');
  await expect(row(page, 'kandev')).toContainText('Active');

  const html = await page.content();
  expect(html).not.toContain(SECRET);
  expect(await page.evaluate(() => location.href)).not.toContain(fixture.token);
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, 'desktop.png'), fullPage: true });
});

test('desktop: testing the host endpoint of an agent that never connected leaves it Delivered', async ({ page }) => {
  await open(page);
  // gamma: the fake agent accepted the session and never connected.
  await selectSession(page, 'gamma');
  await page.locator('#mcp-trigger').click();
  await expect(row(page, 'kandev')).toContainText('Delivered · connection unverified');
  await page.getByRole('button', { name: 'Test endpoint kandev' }).click();
  await expect(row(page, 'kandev').locator('.test-result')).toContainText('Endpoint test passed: 1 tool');
  await expect(row(page, 'kandev').locator('.row-details')).toContainText('endpoint test (reachability only): passed');
  // Tether's own contact is never the agent's: still Delivered, never Active.
  await expect(row(page, 'kandev')).toHaveAttribute('data-status', 'delivered');
  await expect(row(page, 'kandev')).toContainText('Delivered · connection unverified');
  await expect(row(page, 'kandev')).not.toContainText('Active');
  await expect(row(page, 'kandev').locator('.check[data-stage="Connected"]')).toHaveAttribute('data-state', 'unknown');
});

test('desktop: a new attempt arrives live; the superseded one can be looked at, marked as history', async ({ page }) => {
  await open(page);
  await selectSession(page, 'alpha');
  await page.locator('#mcp-trigger').click();
  await expect(page.locator('#attempt-picker')).toBeHidden();
  const before = await page.locator('#ids').textContent();
  // The host starts a new attempt: the page follows without a reload.
  await fixture.command('renew alpha');
  await expect(page.locator('#attempt-select option')).toHaveCount(2);
  await expect(page.locator('#ids')).not.toHaveText(before ?? '');
  await expect(row(page, 'kandev')).toContainText('Active · 1 tool');
  await page.locator('#attempt-select').selectOption({ index: 1 });
  await expect(page.locator('#superseded-note')).toBeVisible();
  await expect(row(page, 'kandev')).toBeVisible();
  await expect(page.getByRole('button', { name: /Test endpoint/ })).toHaveCount(0);
  await page.locator('#attempt-select').selectOption({ index: 0 });
  await expect(page.locator('#superseded-note')).toBeHidden();
});

test('desktop: no token, no data; a used login link does not work twice', async ({ page }) => {
  const link = await fixture.loginUrl();
  await page.goto(link);
  await expect(page.locator('#mcp-trigger')).toBeEnabled();
  const other = await page.context().newPage();
  await other.goto(link);
  await expect(other.locator('#login')).toBeVisible();
  await expect(other.locator('#login-error')).toContainText('used already');
  await expect(other.locator('#mcp-trigger')).toBeDisabled();
  // Pasting the printed token works.
  await other.locator('#token-input').fill(fixture.token);
  await other.locator('#login-form button').click();
  await expect(other.locator('#mcp-trigger')).toBeEnabled();
});
