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
    /// A sub-agent's transcript: its agent's id (its records carry
    /// `isSidechain: true` and `agentId`, as the real 2.1.38 sub-agent
    /// transcript in `tests/fixtures/records-real/` does).
    agent: Option<&'a str>,
}

impl Head<'_> {
    /// `record` with the header Claude Code's writer puts on a message.
    fn wrap(&self, parent: &str, uuid: &str, ts: &str, mut record: Value) -> Value {
        let mut head = json!({
            "parentUuid": parent, "isSidechain": self.agent.is_some(), "userType": "external",
            "entrypoint": "cli", "cwd": self.cwd, "sessionId": self.session,
            "version": "2.1.223", "gitBranch": "main", "slug": self.slug,
            "uuid": uuid, "timestamp": ts,
        });
        if let (Some(agent), Some(head)) = (self.agent, head.as_object_mut()) {
            head.insert("agentId".into(), json!(agent));
        }
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
            agent: None,
        };
        bytes += transcript(&mut f, &head, sessions as u64, size) as u64;
        f.flush()?;
        sessions += 1;
    }
    Ok((sessions, bytes))
}

/// One session of about `bytes` bytes in project `project` of `home`
/// (and, with `agent`, its sub-agent's transcript of about `agent_bytes`
/// beside it, in `SESSION/subagents/agent-ID.jsonl` as Claude Code keeps
/// them); returns the bytes written.
pub fn session(
    home: &Path,
    project: usize,
    id: &str,
    day: u64,
    bytes: usize,
    agent: Option<(&str, usize)>,
) -> std::io::Result<u64> {
    let cwd = format!("/home/me/src/app{project}");
    let dir = home.join(format!(".claude/projects/-home-me-src-app{project}"));
    std::fs::create_dir_all(&dir)?;
    let mut head = Head {
        session: id,
        cwd: &cwd,
        slug: "quiet-blue-harbor",
        agent: None,
    };
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join(format!("{id}.jsonl")))?);
    let mut written = transcript(&mut f, &head, day, bytes) as u64;
    f.flush()?;
    if let Some((agent, agent_bytes)) = agent {
        let sub = dir.join(id).join("subagents");
        std::fs::create_dir_all(&sub)?;
        head.agent = Some(agent);
        let mut f = std::io::BufWriter::new(std::fs::File::create(
            sub.join(format!("agent-{agent}.jsonl")),
        )?);
        written += transcript(&mut f, &head, day, agent_bytes) as u64;
        f.flush()?;
    }
    Ok(written)
}

/// A home shaped like a heavy user's: about `total` bytes in twelve
/// projects, mostly small sessions (16 KiB to 1 MiB, spread evenly on a log
/// scale), one in four with a sub-agent's transcript, one in sixty long
/// (8 to 16 MiB), and, where `real` names transcripts, one in eight a copy
/// of a real one of another release under a fresh session id
/// ([`replicate_one`]). Returns (files, bytes).
pub fn home_shaped(
    home: &Path,
    total: u64,
    real: &[std::path::PathBuf],
) -> std::io::Result<(usize, u64)> {
    let (mut bytes, mut files, mut i) = (0u64, 0usize, 0u64);
    // A small generator of its own, so every run writes the same home.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    while bytes < total {
        let project = (i % 12) as usize;
        let id = format!("{:08x}-5e6f-4a7b-8c9d-{:012x}", 0x70c0_0000 + i, i);
        if !real.is_empty() && i % 8 == 7 {
            let from = &real[(i / 8) as usize % real.len()];
            bytes += replicate_one(from, home, project, &id)?;
            files += 1;
        } else {
            let size = if i % 60 == 59 {
                (8usize << 20) + (next() as usize % (8 << 20))
            } else {
                // 2^14 .. 2^20, even on a log scale.
                let tenths = 140 + next() % 61;
                (2f64.powf(tenths as f64 / 10.0)) as usize
            };
            let agent = (i % 4 == 1).then(|| format!("a{:06x}", i));
            let agent = agent.as_deref().map(|a| (a, size / 4 + 4096));
            bytes += session(home, project, &id, i, size, agent)?;
            files += 1 + usize::from(agent.is_some());
        }
        i += 1;
    }
    Ok((files, bytes))
}

/// Copies the transcript `from` into project `project` of `home` as session
/// `id`: every occurrence of its own session id (its file's name, or its
/// first record's `sessionId`) replaced by `id`, nothing else changed. A
/// sub-agent's transcript (in a `subagents` folder) goes under its new
/// session's folder. Returns the bytes written.
pub fn replicate_one(from: &Path, home: &Path, project: usize, id: &str) -> std::io::Result<u64> {
    let text = std::fs::read_to_string(from)?;
    let old = session_of(from, &text);
    let text = match &old {
        Some(old) if !old.is_empty() => text.replace(old.as_str(), id),
        _ => text,
    };
    let dir = home.join(format!(".claude/projects/-home-me-src-app{project}"));
    let sub = from
        .parent()
        .and_then(|p| p.file_name())
        .is_some_and(|n| n == "subagents");
    let path = if sub {
        let name = from
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        dir.join(id).join("subagents").join(name)
    } else {
        dir.join(format!("{id}.jsonl"))
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&path, text.as_bytes())?;
    Ok(text.len() as u64)
}

/// A transcript's own session id: its sub-agent folder's session, its
/// name where that is an id, else its first record's `sessionId`.
fn session_of(path: &Path, text: &str) -> Option<String> {
    let is_id = |s: &str| s.len() == 36 && s.bytes().filter(|b| *b == b'-').count() == 4;
    if path
        .parent()
        .and_then(|p| p.file_name())
        .is_some_and(|n| n == "subagents")
    {
        let session = path
            .parent()?
            .parent()?
            .file_name()?
            .to_string_lossy()
            .into_owned();
        if is_id(&session) {
            return Some(session);
        }
    }
    let stem = path.file_stem()?.to_string_lossy().into_owned();
    if is_id(&stem) {
        return Some(stem);
    }
    text.lines().find_map(|line| {
        let v: Value = serde_json::from_str(line).ok()?;
        v.get("sessionId")?.as_str().map(str::to_owned)
    })
}

/// Every `.jsonl` file below `dir` (sorted, at most 100,000).
pub fn transcripts_in(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() && p.extension().is_some_and(|x| x == "jsonl") => out.push(p),
                _ => {}
            }
        }
        if out.len() > 100_000 {
            break;
        }
    }
    out.sort();
    out
}

/// Real transcripts copied into `home` under fresh session ids, round after
/// round, until about `total` bytes: each round writes every file of
/// `from` once, a session's sub-agent transcripts beside it, spread over
/// twelve projects. Returns (files, bytes).
pub fn replicate(from: &Path, home: &Path, total: u64) -> std::io::Result<(usize, u64)> {
    let all = transcripts_in(from);
    if all.is_empty() {
        return Err(std::io::Error::other("no .jsonl transcripts there"));
    }
    let (mut bytes, mut files, mut round) = (0u64, 0usize, 0u64);
    while bytes < total {
        // One fresh id per session of the source, for this round.
        let mut ids: std::collections::HashMap<String, (String, usize)> = Default::default();
        for path in &all {
            if bytes >= total {
                break;
            }
            let text = std::fs::read_to_string(path)?;
            let key = session_of(path, &text).unwrap_or_else(|| path.display().to_string());
            let fresh = ids.len();
            let (id, project) = ids
                .entry(key)
                .or_insert_with(|| {
                    let id = format!("{round:08x}-7a8b-4c9d-8e0f-{fresh:012x}");
                    (id, (fresh + round as usize) % 12)
                })
                .clone();
            bytes += replicate_one(path, home, project, &id)?;
            files += 1;
        }
        round += 1;
    }
    Ok((files, bytes))
}
