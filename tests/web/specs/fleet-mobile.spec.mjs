// The fleet page on a phone: cards, nothing sideways, 44 px targets.
import { test, expect } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startFleet, SCREENSHOTS } from './fixture.mjs';

let fleet;
test.beforeAll(async () => { fleet = await startFleet(); });
test.afterAll(async () => { fleet?.stop(); });

test('mobile fleet: cards, filters and the drawer', async ({ page }) => {
  await page.goto(await fleet.loginUrl());
  const list = page.locator('#fleet-list > li');
  await expect(list).toHaveCount(8);
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
  }));
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
  // Cards: one column, each as wide as the list.
  const columns = await list.first().evaluate((li) => getComputedStyle(li).gridTemplateColumns.split(' ').length);
  expect(columns).toBe(1);
  for (const control of await page.locator('#filters select, #filters input, #filters button, #fleet-list button, #tab-sessions, #tab-servers').all()) {
    const box = await control.boundingBox();
    expect(box?.height ?? 0).toBeGreaterThanOrEqual(44);
  }
  await page.getByLabel('Status').selectOption('failed');
  const failed = await fleet.api('/api/v1/fleet/sessions?status=failed');
  await expect(list).toHaveCount(failed.total);
  await list.first().getByRole('button').tap();
  await expect(page.locator('#mcp-panel')).toHaveClass(/as-drawer/);
  await page.locator('#mcp-close').tap();
  expect(page.url()).not.toContain(fleet.token);
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, 'fleet-mobile.png'), fullPage: true });
});
