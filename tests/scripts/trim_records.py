#!/usr/bin/env python3
"""Copies the session records a harness wrote into a kept home (see
TETHER_KEEP_HOMES in tests/tests/harness_sessions.rs) into
tests/fixtures/records/KIND/, trimmed to metadata: in JSON records every
string is replaced by "[trimmed]" unless its key is one the readers take
(names, ids, times, statuses, the working directory); text logs keep only
their lines about MCP servers and sessions.

usage: trim_records.py KEPT_HOMES_DIR FIXTURES_DIR
"""
import json
import os
import re
import sys

KEEP = {
    "type", "sessionId", "session_id", "id", "timestamp", "cwd", "version", "name",
    "namespace", "call_id", "server", "tool", "status", "displayName", "tool_use_id",
    "callId", "mcpServerName", "mcpToolName", "mcpConfigServerName", "toolCallId",
    "copilotVersion", "cli_version", "startTime", "subtype", "kind", "role", "operation",
    "uuid", "parentUuid", "projectHash", "debug", "error", "event.name", "function_name",
    "mcp_server_name", "tool_type", "originator", "source", "addedNames",
    "pendingMcpServers", "needsAuthMcpServers", "lastUpdated", "thread_id", "turn_id",
}
SOURCES = [
    ("claude", ".claude/projects", r".*\.jsonl$"),
    ("claude", ".cache/claude-cli-nodejs", r".*/mcp-logs-[^/]+/.*\.jsonl$"),
    ("codex", ".codex/sessions", r".*rollout-.*\.jsonl$"),
    ("gemini", ".gemini/tmp", r".*/chats/session-.*\.jsonl$"),
    ("qwen", ".qwen/projects", r".*/chats/.*\.jsonl$"),
    ("qwen", ".qwen/debug", r"[^/]+\.txt$"),
    ("copilot", ".copilot/session-state", r"[^/]+/events\.jsonl$"),
    ("copilot", ".copilot/logs", r"process-.*\.log$"),
    ("opencode", ".local/share/opencode/log", r".*\.log$"),
]
LOG_LINE = re.compile(r"MCP|mcp|[Ss]ession|Workspace initialized|ToolRegistry|server unavailable|message=created")


def trim(value, key=None):
    if isinstance(value, dict):
        return {k: trim(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [trim(v, key) for v in value]
    if isinstance(value, str) and key not in KEEP:
        return "[trimmed]"
    return value


def trim_opencode_db(kept, out):
    """OpenCode's database, as a fresh one holding only what the reader
    selects: sessions (id, time, directory, version) and tool parts (the
    session, time, tool, call id and status; never input or output)."""
    import shutil
    import sqlite3
    import tempfile
    src = os.path.join(kept, "opencode", ".local/share/opencode/opencode.db")
    if not os.path.exists(src):
        return
    with tempfile.TemporaryDirectory() as snap:
        for suffix in ("", "-wal"):
            if os.path.exists(src + suffix):
                shutil.copy(src + suffix, os.path.join(snap, "s.db" + suffix))
        db = sqlite3.connect(os.path.join(snap, "s.db"))
        sessions = db.execute("SELECT id, time_created, directory, version FROM session").fetchall()
        parts = db.execute(
            "SELECT session_id, time_created, json_extract(data,'$.type'), json_extract(data,'$.tool'),"
            " json_extract(data,'$.callID'), json_extract(data,'$.state.status') FROM part").fetchall()
        db.close()
    target = os.path.join(out, "opencode", ".local/share/opencode/opencode.db")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    if os.path.exists(target):
        os.remove(target)
    db = sqlite3.connect(target)
    db.execute("CREATE TABLE session (id TEXT PRIMARY KEY, time_created INTEGER, directory TEXT, version TEXT)")
    db.execute("CREATE TABLE part (id INTEGER PRIMARY KEY, session_id TEXT, time_created INTEGER, data TEXT)")
    db.executemany("INSERT INTO session VALUES (?,?,?,?)", sessions)
    for session, created, kind, tool, call, status in parts:
        data = {"type": kind}
        if kind == "tool":
            data.update({"tool": tool, "callID": call, "state": {"status": status}})
        db.execute("INSERT INTO part (session_id, time_created, data) VALUES (?,?,?)",
                   (session, created, json.dumps(data)))
    db.commit()
    db.close()


def main(kept, out):
    for kind, root, pattern in SOURCES:
        base = os.path.join(kept, kind, root)
        for dirpath, _, files in os.walk(base):
            for f in files:
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, base)
                if not re.match(pattern, rel):
                    continue
                target = os.path.join(out, kind, root, rel)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(path, encoding="utf-8") as src, open(target, "w", encoding="utf-8") as dst:
                    for line in src:
                        line = line.rstrip("\n")
                        if f.endswith(".jsonl"):
                            try:
                                dst.write(json.dumps(trim(json.loads(line)), separators=(",", ":")) + "\n")
                            except ValueError:
                                continue
                        elif LOG_LINE.search(line):
                            dst.write(line + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
    trim_opencode_db(sys.argv[1], sys.argv[2])
