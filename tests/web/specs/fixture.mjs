// Starts `tether-web-fixture` (a host with two sessions run by real agents)
// in its own process group, and kills the group afterwards.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const BIN_DIR = process.env.TETHER_BIN_DIR ?? join(here, '..', '..', '..', 'target', 'debug');
export const SCREENSHOTS = join(here, '..', '..', '..', 'target', 'playwright');
export const SECRET = 'sk-browser-planted-9d8c7b6a5f4e';
export const MARKER = 'fixture agent says the model is warming up';

/**
 * A fresh one-time login URL for a service's banner (`{url, token}`),
 * minted with its token as a host would.
 */
export async function loginUrl(banner) {
  const response = await fetch(`${banner.url}/api/v1/login-links`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${banner.token}` },
  });
  const { path } = await response.json();
  return `${banner.url}${path}`;
}

/**
 * Waits for a child's first line, its JSON banner: it ends on that line, on
 * the child's exit, or after 60 s. Returns the banner and the child's lines.
 */
export function started(child, what) {
  const lines = createInterface({ input: child.stdout });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start in 60 s`)), 60_000);
    lines.once('line', (line) => { clearTimeout(timer); resolve({ lines, banner: JSON.parse(line) }); });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${what} exited (${code})`)); });
  });
}

export async function startFixture() {
  const child = spawn(join(BIN_DIR, 'tether-web-fixture'), ['--secret', SECRET, '--say', MARKER], {
    detached: true,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const { lines, banner } = await started(child, 'the fixture');
  return {
    ...banner,
    /** A fresh one-time login URL, minted with the token (as a host would). */
    loginUrl: () => loginUrl(banner),
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
  const dir = mkdtempSync(join(tmpdir(), 'tether-fleet-'));
  const db = join(dir, 'fleet.db');
  const imported = ['claude', 'codex', 'gemini', 'qwen', 'copilot'];
  for (const kind of imported) await importRecords(db, kind);
  const host = spawn(join(BIN_DIR, 'tether-web-fixture'), ['--secret', SECRET, '--say', MARKER, '--db', db], {
    detached: true,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const { banner: live } = await started(host, 'the fixture');
  const serve = spawn(join(BIN_DIR, 'tether'), ['serve', '--json', '--db', db], {
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const { banner } = await started(serve, 'tether serve');
  // The host writes its sessions through in the background: ready once the
  // store holds every one (bounded), so the specs compare a settled fleet.
  const want = imported.length + live.sessions.length;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const response = await fetch(`${banner.url}/api/v1/fleet/sessions?limit=1`, {
      headers: { Authorization: `Bearer ${banner.token}` },
    });
    if ((await response.json()).total === want) break;
    if (Date.now() > deadline) throw new Error(`the store never held the ${want} sessions`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    ...banner,
    db,
    loginUrl: () => loginUrl(banner),
    /** The fleet API, asked directly (to compare the page with). */
    async api(path) {
      const response = await fetch(`${banner.url}${path}`, { headers: { Authorization: `Bearer ${banner.token}` } });
      return response.json();
    },
    stop() {
      for (const child of [host, serve]) {
        try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
