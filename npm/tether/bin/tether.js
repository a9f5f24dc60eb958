#!/usr/bin/env node
// The `tether` command of the npm package: it finds the binary that this
// platform's package (an optional dependency, one per os and cpu, as
// @openai/codex ships) holds, and runs it with the same arguments, stdio
// and exit status. Signals sent to this process are passed on, so
// `tether run` can pass them to the harness it wraps.
"use strict";

const { spawn } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const LAUNCHER = require("../package.json");
const { platforms } = require("../platforms.json");

function fail(lines) {
  for (const line of lines) process.stderr.write(`tether: ${line}\n`);
  process.exit(1);
}

// Which platform package fits this machine, or why none does.
function platformPackage() {
  const here = `${process.platform}-${process.arch}`;
  const fits = platforms.filter((p) => p.os === process.platform && p.cpu === process.arch);
  if (fits.length === 0) {
    const built = platforms.map((p) => `${p.os}-${p.cpu}`).join(", ");
    fail([
      `no release binary is built for this platform (${here}); there is one for ${built}.`,
      "Build it from source instead: cargo install --locked tether-mcp-cli",
    ]);
  }
  return { here, name: `${LAUNCHER.name}-${fits[0].os}-${fits[0].cpu}` };
}

// The binary inside the installed platform package.
function binary() {
  const { here, name } = platformPackage();
  let dir;
  try {
    dir = path.dirname(require.resolve(`${name}/package.json`));
  } catch {
    fail([
      `the package ${name}, which holds the binary for ${here}, is not installed.`,
      "npm leaves it out with --omit=optional (or --no-optional), and on a libc it was not built for (it needs glibc).",
      `Install it: npm install -g ${LAUNCHER.name}@${LAUNCHER.version} (without --omit=optional),`,
      "or build from source: cargo install --locked tether-mcp-cli",
    ]);
  }
  const exe = path.join(dir, "bin", process.platform === "win32" ? "tether.exe" : "tether");
  if (!fs.existsSync(exe)) {
    fail([`${name} is installed, but holds no ${exe}: reinstall ${LAUNCHER.name}.`]);
  }
  return exe;
}

function run() {
  const exe = binary();
  const child = spawn(exe, process.argv.slice(2), { stdio: "inherit" });
  const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"].filter(
    (s) => process.platform !== "win32" || s === "SIGINT",
  );
  // A terminal's Ctrl-C and Ctrl-\ reach the binary already (it is in this
  // process's group): passing them on too would send them twice. Sent to
  // this process alone (a CI runner's kill), they are passed on.
  const fromTerminal = new Set(process.stdin.isTTY ? ["SIGINT", "SIGQUIT"] : []);
  const pass = (signal) => {
    if (!fromTerminal.has(signal) && child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
    }
  };
  for (const s of forwarded) process.on(s, pass);
  child.on("error", (err) => fail([`could not start ${exe}: ${err.message}`]));
  child.on("exit", (code, signal) => {
    for (const s of forwarded) process.off(s, pass);
    if (signal) {
      // End the same way the binary did, so a caller sees the signal.
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code ?? 1);
  });
}

run();
