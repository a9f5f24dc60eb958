// Starts `tether-web-fixture` (a host with two sessions run by real agents)
// in its own process group, and kills the group afterwards.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const BIN_DIR = process.env.TETHER_BIN_DIR ?? join(here, '..', '..', '..', 'target', 'debug');
export const SCREENSHOTS = join(here, '..', '..', '..', 'target', 'playwright');
export const SECRET = 'sk-browser-planted-9d8c7b6a5f4e';
export const MARKER = 'fixture agent says the model is warming up';

export async function startFixture() {
  const child = spawn(join(BIN_DIR, 'tether-web-fixture'), ['--secret', SECRET, '--say', MARKER], {
    detached: true,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the fixture did not start in 60 s')), 60_000);
    lines.once('line', (line) => { clearTimeout(timer); resolve(line); });
    child.once('exit', (code) => reject(new Error(`the fixture exited (${code})`)));
  });
  const banner = JSON.parse(first);
  return {
    ...banner,
    /** A fresh one-time login URL, minted with the token (as a host would). */
    async loginUrl() {
      const response = await fetch(`${banner.url}/api/v1/login-links`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${banner.token}` },
      });
      const { path } = await response.json();
      return `${banner.url}${path}`;
    },
    /** Sends a command (`renew SESSION`, `remove SESSION`) and waits for its answer. */
    async command(line, withValue = false) {
      const answer = new Promise((resolve) => lines.once('line', resolve));
      child.stdin.write(`${line}\n`);
      const text = await answer;
      if (withValue ? !text.startsWith('ok ') : text !== 'ok') throw new Error(`fixture: ${line}: ${text}`);
      return text;
    },
    stop() {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
    },
  };
}

const RECORDS = join(here, '..', '..', 'fixtures', 'records');

/** Imports one harness's real recorded session (tests/fixtures/records/KIND) into `db`. */
export async function importRecords(db, kind) {
  await new Promise((resolve, reject) => {
    const child = spawn(join(BIN_DIR, 'tether'), ['sessions', 'import', '--db', db], {
      env: { PATH: process.env.PATH ?? '', HOME: join(RECORDS, kind) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`import ${kind}: exit ${code}: ${stderr}`))));
  });
}

/**
 * A fleet in one store: the five harnesses' real recorded sessions
 * imported, the fixture host's live sessions of real agents written
 * through, and `tether serve` over it all (read-only, as a fleet is watched).
 */
export async function startFleet() {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(join(tmpdir(), 'tether-fleet-'));
  const db = join(dir, 'fleet.db');
  for (const kind of ['claude', 'codex', 'gemini', 'qwen', 'copilot']) await importRecords(db, kind);
  const host = spawn(join(BIN_DIR, 'tether-web-fixture'), ['--secret', SECRET, '--say', MARKER, '--db', db], {
    detached: true,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  await new Promise((resolve, reject) => {
    createInterface({ input: host.stdout }).once('line', resolve);
    host.once('exit', (code) => reject(new Error(`the fixture exited (${code})`)));
  });
  const serve = spawn(join(BIN_DIR, 'tether'), ['serve', '--json', '--db', db], {
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const banner = JSON.parse(await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('tether serve did not start in 60 s')), 60_000);
    createInterface({ input: serve.stdout }).once('line', (line) => { clearTimeout(timer); resolve(line); });
  }));
  return {
    ...banner,
    db,
    async loginUrl() {
      const response = await fetch(`${banner.url}/api/v1/login-links`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${banner.token}` },
      });
      const { path } = await response.json();
      return `${banner.url}${path}`;
    },
    /** The fleet API, asked directly (to compare the page with). */
    async api(path) {
      const response = await fetch(`${banner.url}${path}`, { headers: { Authorization: `Bearer ${banner.token}` } });
      return response.json();
    },
    stop() {
      for (const child of [host, serve]) {
        try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
      }
    },
  };
}
