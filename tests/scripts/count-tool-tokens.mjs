// An independent count of what a stdio MCP server's tools cost the model:
// it speaks MCP itself (initialize, notifications/initialized, tools/list
// with every page), then counts o200k_base tokens of each tool's
// JSON.stringify output with js-tiktoken, a separate implementation of the
// encoding from tiktoken-rs. Prints {"tool_count":N,"total":T,"tools":{name:tokens}}.
//
// usage: node count-tool-tokens.mjs PEERS_DIR -- COMMAND [ARGS...]
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import path from "node:path";

const [peers, dashdash, command, ...args] = process.argv.slice(2);
if (!peers || dashdash !== "--" || !command) {
  console.error("usage: count-tool-tokens.mjs PEERS_DIR -- COMMAND [ARGS...]");
  process.exit(2);
}
const require = createRequire(path.resolve(peers, "package.json"));
const { Tiktoken } = require("js-tiktoken/lite");
const o200k = require("js-tiktoken/ranks/o200k_base");
const enc = new Tiktoken(o200k.default ?? o200k);

const server = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"] });
const timer = setTimeout(() => { server.kill("SIGKILL"); console.error("timed out"); process.exit(1); }, 20000);
let buffer = "";
const waiting = new Map();
server.stdout.on("data", (chunk) => {
  buffer += chunk;
  let nl;
  while ((nl = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, nl);
    buffer = buffer.slice(nl + 1);
    let msg;
    try { msg = JSON.parse(line); } catch { continue; }
    if (msg.id !== undefined && waiting.has(msg.id)) {
      waiting.get(msg.id)(msg);
      waiting.delete(msg.id);
    }
  }
});
let next = 1;
const request = (method, params) => new Promise((resolve) => {
  const id = next++;
  waiting.set(id, resolve);
  server.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
});

const init = await request("initialize", {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "independent-token-count", version: "1" },
});
if (init.error) { console.error(JSON.stringify(init.error)); process.exit(1); }
server.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n");
const tools = [];
let cursor;
do {
  const page = await request("tools/list", cursor ? { cursor } : {});
  tools.push(...page.result.tools);
  cursor = page.result.nextCursor;
} while (cursor);
const counts = {};
let total = 0;
for (const tool of tools) {
  const n = enc.encode(JSON.stringify(tool)).length;
  counts[tool.name] = n;
  total += n;
}
console.log(JSON.stringify({ tool_count: tools.length, total, tools: counts }));
clearTimeout(timer);
server.kill("SIGTERM");
process.exit(0);
