// Playwright, driving Debian's Chromium (never a downloaded browser): the
// reference view on a desktop and on an emulated Pixel-class phone.
import { defineConfig, devices } from '@playwright/test';

const chromium = process.env.TETHER_CHROMIUM ?? '/usr/bin/chromium';
const launchOptions = {
  executablePath: chromium,
  // This machine's network is closed: keep Chromium from reaching out.
  args: [
    '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
};

export default defineConfig({
  testDir: './specs',
  outputDir: '../../target/playwright/results',
  timeout: 90_000,
  expect: { timeout: 15_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [['list']],
  use: { launchOptions, trace: 'off', screenshot: 'off' },
  projects: [
    {
      name: 'desktop',
      testMatch: /desktop\.spec\.mjs/,
      use: { ...devices['Desktop Chrome'], launchOptions, viewport: { width: 1280, height: 800 } },
    },
    {
      name: 'mobile',
      testMatch: /mobile\.spec\.mjs/,
      // Pixel 7: touch, a coarse pointer, 412 px wide.
      use: { ...devices['Pixel 7'], launchOptions },
    },
  ],
});
