// The reference view on an emulated Pixel-class phone (touch, coarse pointer).
import { test, expect } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startFixture, SCREENSHOTS, SECRET, MARKER } from './fixture.mjs';

let fixture;
test.beforeAll(async () => { fixture = await startFixture(); });
test.afterAll(async () => { fixture?.stop(); });

function row(page, name) { return page.locator(`#rows > li[data-server="${name}"]`); }

async function noSidewaysScroll(page) {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
}

test('mobile: a 44 px trigger opens the drawer with the same rows and actions', async ({ page }) => {
  await page.goto(await fixture.loginUrl());
  const trigger = page.locator('#mcp-trigger');
  await expect(trigger).toBeEnabled();
  expect(await page.evaluate(() => matchMedia('(pointer: coarse)').matches)).toBe(true);
  const box = await trigger.boundingBox();
  expect(box?.height).toBeGreaterThanOrEqual(44);
  expect(box?.width).toBeGreaterThanOrEqual(44);
  await noSidewaysScroll(page);

  await page.locator('#session-select').selectOption('beta');
  await trigger.tap();
  const panel = page.locator('#mcp-panel');
  await expect(panel).toBeVisible();
  await expect(panel).toHaveClass(/as-drawer/);
  await expect(page.locator('#mcp-backdrop')).toBeVisible();
  await expect(trigger).toHaveAttribute('aria-expanded', 'true');
  await expect(row(page, 'kandev')).toContainText('Connected');
  await expect(row(page, 'remote-search')).toContainText('Filtered · http unsupported');
  await expect(row(page, 'broken-db')).toContainText('Failed');
  await expect(page.getByRole('button', { name: 'Test endpoint kandev' })).toBeVisible();
  await expect(page.locator('#show-output')).toBeVisible();
  await expect(page.locator('#copy-diagnostics')).toBeVisible();
  // Every button in the drawer is a 44 px touch target.
  for (const button of await panel.locator('button:visible').all()) {
    const b = await button.boundingBox();
    expect(b?.height ?? 0).toBeGreaterThanOrEqual(44);
  }

  // The drawer is modal: Tab and Shift+Tab stay inside it.
  for (const key of ['Tab', 'Tab', 'Tab', 'Tab', 'Tab', 'Tab', 'Tab', 'Tab', 'Tab', 'Tab', 'Shift+Tab', 'Shift+Tab']) {
    await page.keyboard.press(key);
    expect(await page.evaluate(() => document.getElementById('mcp-panel')?.contains(document.activeElement))).toBe(true);
  }

  // The drawer sits inside the safe area: inset from the edges by at least
  // max(8px, env(safe-area-inset-*)), and the rule says so.
  const drawer = await panel.boundingBox();
  const viewport = page.viewportSize();
  expect(drawer.x).toBeGreaterThanOrEqual(8);
  expect(drawer.x + drawer.width).toBeLessThanOrEqual(viewport.width - 8);
  expect(drawer.y + drawer.height).toBeLessThanOrEqual(viewport.height - 8);
  const safeRules = await page.evaluate(() => [...document.styleSheets]
    .flatMap((s) => [...s.cssRules])
    .map((r) => r.cssText)
    .filter((t) => t.includes('.as-drawer') && t.includes('safe-area-inset-bottom')).length);
  expect(safeRules).toBeGreaterThan(0);
  await noSidewaysScroll(page);

  // One diagnostic action works from the drawer.
  await page.getByRole('button', { name: 'Test endpoint kandev' }).tap();
  await expect(row(page, 'kandev').locator('.test-result')).toContainText('Endpoint test passed');

  // Recent output still needs the warning first.
  await page.locator('#show-output').tap();
  await expect(page.locator('#output-warning')).toBeVisible();
  await expect(page.locator('body')).not.toContainText(MARKER);
  await page.locator('#output-confirm').tap();
  await expect(page.locator('#output-lines')).toContainText(MARKER);
  await noSidewaysScroll(page);
  expect(await page.content()).not.toContain(SECRET);
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, 'mobile.png') });

  // Closing: the close button, and the backdrop.
  await page.locator('#mcp-close').tap();
  await expect(panel).toBeHidden();
  await trigger.tap();
  await expect(panel).toBeVisible();
  await page.locator('#mcp-backdrop').tap({ position: { x: 10, y: 10 } });
  await expect(panel).toBeHidden();
});

test('mobile: the drawer owns its scroll; the page behind never moves', async ({ page }) => {
  // A short screen, so the drawer's content must scroll.
  await page.setViewportSize({ width: 412, height: 480 });
  await page.goto(await fixture.loginUrl());
  await page.locator('#session-select').selectOption('beta');
  await page.locator('#mcp-trigger').tap();
  await expect(row(page, 'broken-db')).toBeVisible();
  const body = page.locator('#mcp-body');
  const { scrollHeight, clientHeight } = await body.evaluate((el) => ({
    scrollHeight: el.scrollHeight, clientHeight: el.clientHeight,
  }));
  expect(scrollHeight).toBeGreaterThan(clientHeight);
  const box = await body.boundingBox();
  // A touch-driven scroll inside the drawer.
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.wheel(0, 400);
  await expect.poll(() => body.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);
  expect(await page.evaluate(() => window.scrollY)).toBe(0);
  const overscroll = await body.evaluate((el) => getComputedStyle(el).overscrollBehaviorY);
  expect(overscroll).toBe('contain');
  await noSidewaysScroll(page);
});

test('mobile: the tool level opens in the drawer with touch-sized toggles', async ({ page }) => {
  await page.goto(await fixture.loginUrl());
  await page.locator('#session-select').selectOption('alpha');
  await page.locator('#mcp-trigger').tap();
  await expect(page.locator('#mcp-panel')).toHaveClass(/as-drawer/);
  const tools = row(page, 'kandev').locator('details.tools');
  const summary = tools.locator('> summary');
  await expect(summary).toContainText('Tools (1)');
  const box = await summary.boundingBox();
  expect(box?.height ?? 0).toBeGreaterThanOrEqual(44);
  await summary.tap();
  const tool = tools.locator('li.tool[data-tool="sentinel_echo"]');
  await expect(tool).toBeVisible();
  const toolBox = await tool.locator('summary').boundingBox();
  expect(toolBox?.height ?? 0).toBeGreaterThanOrEqual(44);
  await tool.locator('summary').tap();
  await expect(tool.locator('.tool-path')).toContainText('listed ✓');
  await expect(tool.locator('.check[data-stage="Listed"]')).toHaveAttribute('data-state', 'yes');
  await noSidewaysScroll(page);
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, 'mobile-tools.png') });
});
