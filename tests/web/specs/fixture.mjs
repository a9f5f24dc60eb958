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
