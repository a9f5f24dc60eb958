//! A corpus of Claude Code transcripts of real shape, for measuring
//! `tether sessions` whole-process beside `jq` (`tests/scripts/records-vs-jq.sh`,
//! through the `tether-records-corpus` bin).
//!
//! Each record carries the header Claude Code's transcript writer adds to
//! every message (read in the pinned 2.1.197's shipped code: `parentUuid`,
//! `isSidechain`, `userType`, `entrypoint`, `cwd`, `sessionId`, `version`,
//! `gitBranch`, `slug`; `promptId` on prompts; `requestId` on model turns),
//! written as 2.1.223. A turn is what a working session writes: the prompt;
//! the model's thinking (with its signature), text and tool call, each its
//! own `assistant` record as Claude Code splits them, with the API's
//! `usage`; the `progress` of the call's PreToolUse hook; its
//! `hook_success` attachment (one in seven `hook_non_blocking_error`); the
//! result, as the model got it (`content`) and as the tool gave it
//! (`toolUseResult`: a file's lines, a command's output, an MCP server's
//! text), with the escapes code has; a final text; the turn's
//! `stop_hook_summary` (two Stop hooks) and a `file-history-snapshot`.
//! Some calls are refused or fail in Claude Code's own words (no
//! permission in a headless run, a PreToolUse hook's block, a deny rule,
//! a JSON-RPC error). A session opens with a `deferred_tools_delta` of 64
//! deferred tools (two claude.ai connectors needing a login, named by
//! display name), a `skill_listing`, a `SessionStart` hook's attachment and
//! an `mcp_dropped_tools_delta` (the kind 2.1.3xx writes).

use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};

/// What a record shares with every other of its session.
struct Head<'a> {
    session: &'a str,
    cwd: &'a str,
    slug: &'a str,
}

impl Head<'_> {
    /// `record` with the header Claude Code's writer puts on a message.
    fn wrap(&self, parent: &str, uuid: &str, ts: &str, mut record: Value) -> Value {
        let head = json!({
            "parentUuid": parent, "isSidechain": false, "userType": "external",
            "entrypoint": "cli", "cwd": self.cwd, "sessionId": self.session,
            "version": "2.1.223", "gitBranch": "main", "slug": self.slug,
            "uuid": uuid, "timestamp": ts,
        });
        if let (Some(record), Value::Object(head)) = (record.as_object_mut(), head) {
            for (k, v) in head {
                record.entry(k).or_insert(v);
            }
        }
        record
    }
}

/// About 4 KiB of source code, with its quotes, backslashes and tabs.
fn code(i: u64) -> String {
    let mut s = String::with_capacity(4200);
    for line in 0..60 {
        s.push_str(&format!(
            "    let v{line} = parse(\"{{\\\"k\\\": {i}}}\", '\\t')?; // line {line}\n"
        ));
    }
    s
}

/// One turn's usage, as the API gives it.
fn usage(i: u64) -> Value {
    json!({"input_tokens": 4, "cache_creation_input_tokens": 1200 + i % 500,
        "cache_read_input_tokens": 40_000 + i * 13 % 9000, "output_tokens": 180 + i % 300,
        "service_tier": "standard",
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": 1200 + i % 500}})
}

/// The tools a call goes to, in turn (MCP and Claude Code's own).
const TOOLS: &[&str] = &[
    "Read",
    "mcp__github__get_issue",
    "Bash",
    "mcp__time__get_current_time",
    "Edit",
    "mcp__claude_ai_Slack__slack_search_public",
    "Grep",
    "mcp__github__list_pull_requests",
];

/// One session's transcript of about `bytes` bytes; returns what it wrote.
fn transcript(out: &mut impl Write, head: &Head<'_>, day: u64, bytes: usize) -> usize {
    let mut written = 0;
    let mut put = |v: Value, written: &mut usize| {
        let text = v.to_string();
        *written += text.len() + 1;
        let _ = writeln!(out, "{text}");
    };
    let ts = |s: u64| {
        format!(
            "2026-11-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            1 + day % 28,
            (s / 3600) % 24,
            (s / 60) % 60,
            s % 60,
            s % 1000
        )
    };
    let mut parent = String::new();
    let uuid = |n: &mut u64| {
        *n += 1;
        format!("{:08x}-1c2d-4e5f-8a9b-{:012x}", day, *n)
    };
    let mut n = 0u64;
    // The session's start.
    let deferred: Vec<String> = (0..64)
        .map(|t| match t % 4 {
            0 => format!("mcp__github__tool_{t}"),
            1 => format!("mcp__claude_ai_Slack__slack_tool_{t}"),
            2 => format!("mcp__linear__linear_tool_{t}"),
            _ => format!("mcp__claude_ai_Notion__notion_tool_{t}"),
        })
        .collect();
    let start = [
        json!({"type": "attachment", "attachment": {"type": "deferred_tools_delta",
            "addedNames": deferred, "addedLines": [], "removedNames": [], "readdedNames": [],
            "pendingMcpServers": ["linear"], "needsAuthMcpServers": ["claude.ai Slack", "claude.ai Notion"]}}),
        json!({"type": "attachment", "attachment": {"type": "skill_listing",
            "content": "- release-notes: Writes the release notes from the changelog\n- review: Reviews the diff\n- tools:lint: Lints",
            "skillCount": 3, "isInitial": true, "names": ["release-notes", "review", "tools:lint"]}}),
        json!({"type": "attachment", "attachment": {"type": "hook_success",
            "hookName": "SessionStart:startup", "hookEvent": "SessionStart", "toolUseID": "SessionStart",
            "content": "loaded the project's context", "stdout": "loaded the project's context\n",
            "stderr": "", "exitCode": 0, "command": "/home/me/.claude/hooks/context.sh", "durationMs": 31}}),
        json!({"type": "attachment", "attachment": {"type": "mcp_dropped_tools_delta",
            "addedEntries": ["\"bad_schema_tool\" (MCP server \"github\"): input schema is not supported"],
            "removedEntries": []}}),
    ];
    for record in start {
        let id = uuid(&mut n);
        put(head.wrap(&parent, &id, &ts(0), record), &mut written);
        parent = id;
    }
    let body = code(day);
    let mut i = 0u64;
    while written < bytes {
        i += 1;
        let s = i * 7;
        let tool = TOOLS[(i as usize) % TOOLS.len()];
        let call = format!("toolu_01{day:04}{i:012}");
        let msg = format!("msg_01{day:04}{i:012}");
        let request = format!("req_011C{day:04}{i:012}");
        let mut turn: Vec<Value> = Vec::with_capacity(12);
        turn.push(json!({"type": "user", "promptId": format!("p{i}"),
            "message": {"role": "user", "content": format!("please look at the build and fix the failing test in the parser module (turn {i}); keep the public API as it is")}}));
        let assistant = |content: Value, stop: Value| {
            json!({"type": "assistant", "requestId": request,
                "message": {"model": "claude-opus-4-1-20250805", "id": msg, "type": "message", "role": "assistant",
                    "content": [content], "stop_reason": stop, "stop_sequence": null, "usage": usage(i)}})
        };
        turn.push(assistant(
            json!({"type": "thinking", "thinking": "The test fails because the parser does not accept a trailing comma. I should read the file, find the grammar rule and check what the other callers expect before I change anything. ".repeat(6),
                "signature": "EqQBCkYIBxgCKkA".repeat(40)}),
            Value::Null,
        ));
        turn.push(assistant(
            json!({"type": "text", "text": "Let me read the file first and then check the tests."}),
            Value::Null,
        ));
        let input = match tool {
            "Read" => json!({"file_path": "/home/me/src/app/src/parser.rs"}),
            "Bash" => {
                json!({"command": "cargo test -p parser -- trailing", "description": "Run the parser's tests"})
            }
            "Edit" => {
                json!({"file_path": "/home/me/src/app/src/parser.rs", "old_string": body[..400], "new_string": body[..420]})
            }
            "Grep" => json!({"pattern": "fn parse_list", "path": "src", "output_mode": "content"}),
            _ => json!({"owner": "me", "repo": "app", "issue_number": i % 400}),
        };
        turn.push(assistant(
            json!({"type": "tool_use", "id": call, "name": tool, "input": input}),
            json!("tool_use"),
        ));
        let hook = format!("PreToolUse:{tool}");
        turn.push(
            json!({"type": "progress", "data": {"type": "hook_progress", "hookEvent": "PreToolUse",
            "hookName": hook, "command": "/home/me/.claude/hooks/check.sh --strict"},
            "parentToolUseID": call, "toolUseID": call}),
        );
        let failing_hook = i.is_multiple_of(7);
        turn.push(json!({"type": "attachment", "attachment": {
            "type": if failing_hook { "hook_non_blocking_error" } else { "hook_success" },
            "hookName": hook, "hookEvent": "PreToolUse", "toolUseID": call,
            "content": "checked the command; nothing to report", "stdout": "checked the command; nothing to report\n",
            "stderr": "", "exitCode": if failing_hook { 1 } else { 0 },
            "command": "/home/me/.claude/hooks/check.sh --strict", "durationMs": 12}}));
        // How the call ended: refused or failed in Claude Code's own
        // words now and then, else its output.
        let refused = match i % 97 {
            13 => Some(format!(
                "Claude requested permissions to use {tool}, but you haven't granted it yet."
            )),
            29 => Some(format!("PreToolUse:{tool} hook error: blocked by policy")),
            41 => Some(format!("Permission to use {tool} has been denied.")),
            57 if tool.starts_with("mcp__") => {
                Some("MCP error -32603: internal error in the server".to_owned())
            }
            _ => None,
        };
        let (content, result) = match (&refused, tool) {
            (Some(words), _) => (json!(words), json!(format!("Error: {words}"))),
            (None, "Read") => (
                json!(body),
                json!({"type": "text", "file": {"filePath": "/home/me/src/app/src/parser.rs",
                    "content": body, "numLines": 60, "startLine": 1, "totalLines": 60}}),
            ),
            (None, "Bash" | "Grep" | "Edit") => (
                json!(body[..2000]),
                json!({"stdout": body[..2000], "stderr": "", "interrupted": false, "isImage": false}),
            ),
            (None, _) => (
                json!([{"type": "text", "text": body}]),
                json!([{"type": "text", "text": body}]),
            ),
        };
        turn.push(
            json!({"type": "user", "message": {"role": "user", "content": [{
            "tool_use_id": call, "type": "tool_result", "content": content,
            "is_error": refused.is_some() || i.is_multiple_of(11)}]},
            "toolUseResult": result, "sourceToolAssistantUUID": parent}),
        );
        turn.push(assistant(
            json!({"type": "text", "text": "The test passes now: the list rule accepts a trailing comma, and the other callers are unchanged."}),
            json!("end_turn"),
        ));
        turn.push(
            json!({"type": "system", "subtype": "stop_hook_summary", "hookCount": 2,
            "hookInfos": [{"command": "/home/me/.claude/hooks/lint.sh --fix", "durationMs": 40},
                {"command": "notify-send done", "durationMs": 5}],
            "hookErrors": [], "preventedContinuation": false, "stopReason": "", "hasOutput": false,
            "level": "suggestion", "toolUseID": format!("stop{i}")}),
        );
        for record in turn {
            let id = uuid(&mut n);
            put(head.wrap(&parent, &id, &ts(s), record), &mut written);
            parent = id;
        }
        let snapshot = json!({"type": "file-history-snapshot", "messageId": format!("p{i}"),
            "snapshot": {"messageId": format!("p{i}"), "trackedFileBackups": {
                "/home/me/src/app/src/parser.rs": {"backupFileName": format!("a1b2c3@v{i}"), "version": i, "backupTime": ts(s)}},
                "timestamp": ts(s)}, "isSnapshotUpdate": false});
        put(snapshot, &mut written);
    }
    written
}

/// Writes about `total` bytes of sessions under `home`'s
/// `.claude/projects/…` (eight projects, sessions of 0.25 to 8 MiB);
/// returns (sessions, bytes).
pub fn home(home: &Path, total: u64) -> std::io::Result<(usize, u64)> {
    let mut bytes = 0u64;
    let mut sessions = 0usize;
    while bytes < total {
        let project = sessions % 8;
        let cwd = format!("/home/me/src/app{project}");
        let dir = home.join(format!(".claude/projects/-home-me-src-app{project}"));
        std::fs::create_dir_all(&dir)?;
        let session = format!("7b2c{sessions:04x}-3d4e-4f5a-9b6c-{sessions:012x}");
        let size = (256usize << 10) << (sessions % 6); // 0.25 .. 8 MiB
        let mut f =
            std::io::BufWriter::new(std::fs::File::create(dir.join(format!("{session}.jsonl")))?);
        let head = Head {
            session: &session,
            cwd: &cwd,
            slug: "quiet-blue-harbor",
        };
        bytes += transcript(&mut f, &head, sessions as u64, size) as u64;
        f.flush()?;
        sessions += 1;
    }
    Ok((sessions, bytes))
}
