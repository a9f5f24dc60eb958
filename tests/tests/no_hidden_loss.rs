//! Issue 68 §2: "No reader uses `unwrap_or_default()` or an all-or-nothing
//! parse where that hides a loss."
//!
//! - GIVEN a line a reader knows, in a shape it cannot parse (cut short,
//!   not JSON, a field of the wrong type), as the harness writes it
//!   (compact) WHEN read THEN it is said unparsed, by its kind and why,
//!   never passed over as a line that says nothing, nor counted as a kind
//!   this Tether does not read.
//! - GIVEN the passthrough plugins' record and telemetry readers WHEN
//!   scanned THEN every `unwrap_or_default()` and `unwrap_or("")` in them
//!   is on the allowlist below, each entry saying why it hides nothing: a
//!   new one must be looked at before it is kept.

use std::path::Path;

use tether_core::records::{RecordAnswer, RecordFile, Unparsed};

fn file<'a>(role: &'a str, segments: &'a [String]) -> RecordFile<'a> {
    RecordFile {
        role,
        segments,
        session: None,
        configured: &[],
    }
}

fn segments(of: &[&str]) -> Vec<String> {
    of.iter().map(|s| (*s).to_owned()).collect()
}

/// Copilot CLI 1.0.102's process log line for a server that did not start
/// (`tests/fixtures/records-by-path/copilot-1.0.102-broken.process.log`,
/// a real run), and the same line with its JSON cut short or broken.
#[test]
fn a_copilot_process_log_line_whose_fields_do_not_parse_is_said_unparsed() {
    use tether_passthrough_copilot::records::{PROCESS_LOG, plain, read};
    let head = "2026-12-03T19:29:31.244Z [WARNING] \
                [rust:copilot_runtime::mcp::native_connector] MCP server connection failed ";
    let whole = format!(
        "{head}{{\"server_name\":\"broken\",\"raw_error\":\"failed to spawn MCP server \
         process: No such file or directory (os error 2)\",\"stderr_detail\":\"\"}}"
    );
    let segs = segments(&[".copilot", "logs", "process-1.log"]);
    let log = file(PROCESS_LOG, &segs);
    // The line as written reads: the server failed.
    for answer in [read(&log, &whole), plain::read(&log, &whole)] {
        let RecordAnswer::Read(reading) = answer else {
            panic!("the real line reads: {answer:?}");
        };
        assert_eq!(reading.evidence.len(), 1, "{reading:?}");
        assert_eq!(reading.evidence[0].server.as_deref(), Some("broken"));
    }
    let kind = Some("MCP server connection failed".to_owned());
    let cut = format!("{head}{{\"server_name\":\"broken\",\"raw_error\":\"failed to sp");
    let broken = format!("{head}{{\"server_name\":\"broken\",\"raw_error\":}}");
    for (line, why) in [(cut, Unparsed::CutShort), (broken, Unparsed::NotJson)] {
        for answer in [read(&log, &line), plain::read(&log, &line)] {
            assert_eq!(
                answer,
                RecordAnswer::Unparsed {
                    why,
                    kind: kind.clone()
                },
                "{line}"
            );
        }
    }
}

/// `codex exec --json` 0.171.0's `item.completed` for an MCP call
/// (`tests/fixtures/refusals/codex-0.171.0-toolerror.exec.jsonl`, a real
/// run), with one field of another type, and cut short.
#[test]
fn a_codex_exec_line_of_a_known_event_that_does_not_parse_is_said_unparsed() {
    use tether_passthrough_codex::records::{EXEC_JSON, read};
    let segs = segments(&["run.exec.jsonl"]);
    let exec = file(EXEC_JSON, &segs);
    let line = |server: &str| {
        format!(
            "{{\"type\":\"item.completed\",\"item\":{{\"type\":\"mcp_tool_call\",\"id\":\
             \"item_1\",\"server\":{server},\"tool\":\"erroring_tool\",\"status\":\"failed\",\
             \"arguments\":{{}},\"result\":null,\"error\":null}}}}"
        )
    };
    let RecordAnswer::Read(reading) = read(&exec, &line("\"time\"")) else {
        panic!("the real line reads");
    };
    assert!(
        reading
            .evidence
            .iter()
            .any(|e| e.server.as_deref() == Some("time")),
        "{reading:?}"
    );
    assert_eq!(
        read(&exec, &line("7")),
        RecordAnswer::Unparsed {
            why: Unparsed::WrongType,
            kind: Some("item.completed".to_owned())
        }
    );
    let whole = line("\"time\"");
    assert_eq!(
        read(&exec, &whole[..whole.len() - 9]),
        RecordAnswer::Unparsed {
            why: Unparsed::CutShort,
            kind: None
        }
    );
    // Valid JSON of no event Codex prints stays a kind this Tether does
    // not know (version drift), as before.
    assert_eq!(
        read(&exec, "{\"type\":\"thread.renamed\",\"x\":7}"),
        RecordAnswer::Unknown
    );
    assert_eq!(read(&exec, "[7]"), RecordAnswer::Unknown);
}

/// Each `unwrap_or_default()` / `unwrap_or("")` kept in a reader (its
/// tests apart), by file and the text its line starts with, how many such
/// lines, and why it hides nothing. The
/// readers' structs read a field of another type as unread (noted where
/// the reader notes odd fields, `records/lenient.rs`), so a default here
/// is of a field that is absent, `null` or unread: what matters is that
/// the record is still kept and its other fields still read.
const ALLOWED: &[(&str, &str, usize, &str)] = &[
    // Claude Code.
    (
        "passthrough-claude/src/records.rs",
        "let command = info.command.as_deref()",
        1,
        "a Stop hook's command, optional; its hook is still read without it",
    ),
    (
        "passthrough-claude/src/records.rs",
        ".and_then(|t| hook_run_id(t, &hook, command",
        1,
        "the run id's command part, optional; the hook is read without it",
    ),
    (
        "passthrough-claude/src/records/model_api.rs",
        "let said = ended.result",
        1,
        "a failed run's words, compared only: without them the run is still failed",
    ),
    (
        "passthrough-claude/src/records/progress.rs",
        "let command = data.command.as_deref()",
        1,
        "a hook run's command, optional (lenient: odd noted)",
    ),
    // Codex.
    (
        "passthrough-codex/src/records.rs",
        "let tool = payload.name.as_deref()",
        1,
        "a function call with no name is then no MCP call (name() refuses empty)",
    ),
    (
        "passthrough-codex/src/records.rs",
        "let top = kinds.kind.as_ref()",
        1,
        "naming an unparsed record's kind: no kind is no name, the loss already said",
    ),
    (
        "passthrough-codex/src/records.rs",
        ".unwrap_or(\"\");",
        1,
        "the same, for the payload's kind",
    ),
    (
        "passthrough-codex/src/records/plain.rs",
        "let tool = text(payload, \"name\")",
        1,
        "the plain path's twin of the fast path's tool name",
    ),
    (
        "passthrough-codex/src/records/resources.rs",
        ".unwrap_or_default()",
        1,
        "a resource call with no listing still shows its own server answered",
    ),
    (
        "passthrough-codex/src/telemetry.rs",
        ".unwrap_or_default();",
        1,
        "a conversation start with no mcp_servers attribute names no server",
    ),
    // Copilot CLI.
    (
        "passthrough-copilot/src/output.rs",
        ".unwrap_or_default()",
        1,
        "a cut output's session id part: the file's own name still places it",
    ),
    (
        "passthrough-copilot/src/records.rs",
        ".map(|w| w.split(\". Execute \").next()",
        1,
        "a failed server's words, scanned for why: the failure is kept without them",
    ),
    (
        "passthrough-copilot/src/records.rs",
        ".unwrap_or_default();",
        1,
        "the same words, where the message has none",
    ),
    (
        "passthrough-copilot/src/records.rs",
        "crate::output::server_failed(&server, f.raw_error",
        1,
        "a failed server's raw_error, scanned for why: the failure is kept without it",
    ),
    (
        "passthrough-copilot/src/records/words.rs",
        "let message = message",
        1,
        "a refusal's words, scanned: no words is no refusal known by them",
    ),
    (
        "passthrough-copilot/src/telemetry.rs",
        ".unwrap_or_default();",
        1,
        "a span's tool name, hashed: no name is `sha256:unknown`, the call kept",
    ),
    // Gemini CLI and Qwen Code.
    (
        "passthrough-gemini/src/ended.rs",
        "let words = words",
        1,
        "a denied call's words, scanned: without them the call is still denied",
    ),
    (
        "passthrough-gemini/src/stream_json.rs",
        "let words = words",
        1,
        "the same, in the stream's reader",
    ),
    (
        "passthrough-gemini/src/telemetry.rs",
        ".unwrap_or_default();",
        2,
        "an attribute absent from a span: the span is still read",
    ),
    (
        "passthrough-gemini/src/telemetry.rs",
        ".unwrap_or_default()",
        1,
        "the same",
    ),
    (
        "passthrough-gemini/src/telemetry.rs",
        "let function = t::text(record, \"function_name\")",
        1,
        "a call with no function name is then no MCP call (name() refuses empty)",
    ),
    // OpenCode.
    (
        "passthrough-opencode/src/records.rs",
        "let message = field(\"message\")",
        1,
        "a log line's message, compared: no message matches none",
    ),
    (
        "passthrough-opencode/src/records.rs",
        "&& let Some(failed) = plugin_failed(&plugin, &field(\"error\")",
        1,
        "a failed plugin's words, scanned for why: the failure is kept without them",
    ),
    (
        "passthrough-opencode/src/stream_json.rs",
        "Some(\"error\") => Some(error_word(state[\"error\"].as_str()",
        1,
        "an errored call's words, scanned: it is still failed without them",
    ),
];

/// The readers this guard covers: the five passthrough plugins' record and
/// telemetry readers (not their configuration scans or censuses).
fn reader_files(plugins: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for harness in ["claude", "codex", "copilot", "gemini", "opencode"] {
        let src = plugins.join(format!("passthrough-{harness}/src"));
        let mut stack = vec![src.clone()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let rel = path
                    .strip_prefix(plugins)
                    .expect("below plugins")
                    .to_string_lossy()
                    .replace('\\', "/");
                if path.is_dir() {
                    if rel.ends_with("/records") {
                        stack.push(path);
                    }
                    continue;
                }
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                let reader = rel.contains("/records/")
                    || matches!(
                        name,
                        "records.rs"
                            | "telemetry.rs"
                            | "stream_json.rs"
                            | "ended.rs"
                            | "output.rs"
                            | "parts.rs"
                            | "plain.rs"
                    );
                if reader && name.ends_with(".rs") {
                    let text = std::fs::read_to_string(&path).expect("a reader's source");
                    out.push((rel, text));
                }
            }
        }
    }
    out
}

/// GIVEN the readers' sources WHEN scanned for `unwrap_or_default()` and
/// `unwrap_or("")` THEN each is on the allowlist (by file and the text
/// before it on its line), and each allowlist entry is still used.
#[test]
fn every_default_in_a_reader_is_on_the_allowlist() {
    let plugins = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins");
    let files = reader_files(&plugins);
    assert!(files.len() >= 20, "the readers were found: {}", files.len());
    let mut used = vec![0usize; ALLOWED.len()];
    let mut unlisted = Vec::new();
    for (rel, text) in &files {
        for (n, line) in product_lines(text) {
            let trimmed = line.trim_start();
            for needle in ["unwrap_or_default()", "unwrap_or(\"\")"] {
                let Some(at) = trimmed.find(needle) else {
                    continue;
                };
                let before = &trimmed[..at];
                let listed = ALLOWED.iter().position(|(file, prefix, _, _)| {
                    file == rel && (before.starts_with(prefix) || trimmed.starts_with(prefix))
                });
                match listed {
                    Some(i) => used[i] += 1,
                    None => unlisted.push(format!("{rel}:{}: {trimmed}", n + 1)),
                }
            }
        }
    }
    assert!(
        unlisted.is_empty(),
        "a default in a reader may hide a field of the wrong type or a lost \
         record (issue 68 §2): read it leniently and say the loss, or add it \
         to ALLOWED saying why it hides nothing:\n{}",
        unlisted.join("\n")
    );
    let stale: Vec<_> = ALLOWED
        .iter()
        .zip(&used)
        .filter(|((_, _, count, _), used)| *count != **used)
        .map(|((file, prefix, count, _), used)| format!("{file}: {prefix} ({used}, not {count})"))
        .collect();
    assert!(
        stale.is_empty(),
        "allowlist entries whose count of lines changed (a new one looked at, or one gone): {stale:?}"
    );
}

/// A source's lines that are product code, numbered from 1: neither a
/// comment nor in its tests (a file's `#[cfg(test)]` module, its last
/// item, and what follows it).
fn product_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .take_while(|(_, line)| *line != "#[cfg(test)]")
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
}

/// The six harness readers' sources (every file of their plugins but
/// tests): Claude Code, Codex, Copilot CLI, Gemini CLI and Qwen Code,
/// OpenCode, Cursor.
fn harness_files(plugins: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for harness in ["claude", "codex", "copilot", "gemini", "opencode", "cursor"] {
        let mut stack = vec![plugins.join(format!("passthrough-{harness}/src"))];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let rel = path
                        .strip_prefix(plugins)
                        .expect("below plugins")
                        .to_string_lossy()
                        .replace('\\', "/");
                    let text = std::fs::read_to_string(&path).expect("a reader's source");
                    out.push((rel, text));
                }
            }
        }
    }
    out.sort();
    out
}

/// What a parse failure is dropped by: `.ok()` (and `.ok()?`,
/// `.ok().and_then`, `.ok().flatten()`), `Result::ok`, `let Ok(..) = ..
/// else`, `if let Ok(..)`, and `Err(_)` matched away.
const DROPS: [&str; 4] = [".ok()", "Result::ok", "let Ok(", "Err(_)"];

/// GIVEN the six harness readers' sources (tests apart) WHEN scanned for
/// a dropped error ([`DROPS`]) THEN each is on [`OK_ALLOWED`] (by file and
/// a fragment of its line or the two before it, its chain's head), and
/// each entry's count of lines is still the count found.
#[test]
fn every_dropped_error_in_a_harness_reader_is_on_the_allowlist() {
    let plugins = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins");
    let files = harness_files(&plugins);
    assert!(files.len() >= 40, "the readers were found: {}", files.len());
    let mut used = vec![0usize; OK_ALLOWED.len()];
    let mut unlisted = Vec::new();
    for (rel, text) in &files {
        let lines: Vec<(usize, &str)> = product_lines(text).collect();
        for (i, (n, line)) in lines.iter().enumerate() {
            let trimmed = line.trim();
            if !DROPS.iter().any(|d| trimmed.contains(d)) {
                continue;
            }
            let window: Vec<&str> = lines[i.saturating_sub(2)..=i]
                .iter()
                .map(|(_, l)| l.trim())
                .collect();
            let window = window.join(" ");
            let listed = OK_ALLOWED
                .iter()
                .position(|(file, fragment, _, _)| file == rel && window.contains(fragment));
            match listed {
                Some(i) => used[i] += 1,
                None => unlisted.push(format!("{rel}:{}: {trimmed}", n + 1)),
            }
        }
    }
    assert!(
        unlisted.is_empty(),
        "a parse failure dropped in a harness reader may hide a lost record \
         (issue 68 §2): say it unparsed (cut short, not JSON, a field of the \
         wrong type), or add it to OK_ALLOWED saying why it hides nothing:\n{}",
        unlisted.join("\n")
    );
    let stale: Vec<_> = OK_ALLOWED
        .iter()
        .zip(&used)
        .filter(|((_, _, count, _), used)| *count != **used)
        .map(|((file, fragment, count, _), used)| {
            format!("{file}: {fragment} ({used}, not {count})")
        })
        .collect();
    assert!(
        stale.is_empty(),
        "OK_ALLOWED entries whose count of lines changed (a new one looked at, or one gone): {stale:?}"
    );
}

/// Each dropped error kept in a harness reader: file, a fragment of its
/// line (or of the two before it, for a chain), how many such lines, and
/// why it hides no loss.
const OK_ALLOWED: &[(&str, &str, usize, &str)] = &[
    // Claude Code.
    (
        "passthrough-claude/src/config_scan.rs",
        "Err(_) => out.error(",
        1,
        "a plugin installed outside the root: said (symlink_outside_root), not dropped",
    ),
    (
        "passthrough-claude/src/records.rs",
        "Err(_) => read(&[]),",
        1,
        "a record whose blanked form parsed parses as written (a lone surrogate as U+FFFD); were it not to, the plain path says it unparsed and the differential finds them differ",
    ),
    (
        "passthrough-claude/src/records/lenient.rs",
        "Err(_) => {",
        1,
        "a number outside i32: that field unread and noted (wrong_type where the record then says nothing)",
    ),
    (
        "passthrough-claude/src/records/fields.rs",
        "u16::from_str_radix(digits, 16).ok()",
        1,
        "four hex digits, checked just before: cannot fail",
    ),
    (
        "passthrough-claude/src/records/fields.rs",
        "i32::try_from(n).ok()",
        1,
        "a number outside i32: noted on the next line (odd), as the fast path notes it",
    ),
    (
        "passthrough-claude/src/records/model_api.rs",
        "parsed = super::fields::parse(record).ok()?;",
        2,
        "a record whose head parsed, re-read whole the plain way: parses; were it not to, an api_error record is said unparsed (wrong type) by its caller, and an assistant record is read as the assistant record it is",
    ),
    (
        "passthrough-claude/src/records/model_api.rs",
        ".and_then(|s| i32::try_from(s).ok());",
        1,
        "a status outside i32 is no HTTP status: the retried request is said without one, as when none is written",
    ),
    (
        "passthrough-claude/src/records/progress.rs",
        "if let Ok(value) = super::fields::parse(record)",
        1,
        "a record whose blanked form parsed, re-read the plain way after its borrowed parse failed: parses",
    ),
    (
        "passthrough-claude/src/records/stream_json.rs",
        "Err(_) if let Some(fixed) = super::fields::lone_surrogates_replaced",
        1,
        "a lone surrogate: the line is read again with it as U+FFFD; any other error is said unparsed below",
    ),
    (
        "passthrough-claude/src/records/stream_json.rs",
        "Whole::Written(record) => serde_json::from_str::<serde_json::Value>(record)",
        1,
        "a line that parsed as its head parses as a value; were it not to, its reports are read from the line as written",
    ),
    (
        "passthrough-claude/src/records/stream_json.rs",
        "Err(_) => Vec::new(),",
        1,
        "the init line's tools, of a line that parsed as its head (lenient: a tool of another type is that tool unread)",
    ),
    (
        "passthrough-claude/src/records/words.rs",
        "let value = super::fields::parse(record).ok()?;",
        1,
        "a record whose blanked form parsed, re-read the plain way after its borrowed parse failed: parses",
    ),
    (
        "passthrough-claude/src/tool_search.rs",
        ".and_then(|d| d.parse::<i64>().ok())",
        1,
        "JavaScript's parseInt of a setting: no digits is NaN, as Claude Code reads it",
    ),
    // Codex.
    (
        "passthrough-codex/src/config_scan.rs",
        "let resolved = std::fs::canonicalize(&path).ok();",
        1,
        "a skill's path that does not resolve is compared as written",
    ),
    (
        "passthrough-codex/src/lib.rs",
        "serde_json::to_string(&format!(\"{base_url}/v1\")).ok()?",
        1,
        "a string written as JSON: cannot fail (setup text, no record)",
    ),
    (
        "passthrough-codex/src/records.rs",
        "let Ok(kinds) = serde_json::from_str::<Kinds>(record) else {",
        1,
        "naming an unparsed record's kind: it is said unparsed either way",
    ),
    (
        "passthrough-codex/src/records/exec_json.rs",
        "let value = serde_json::from_str::<serde_json::Value>(record).ok();",
        1,
        "a line whose error was a field's type is valid JSON: it parses (naming its event)",
    ),
    (
        "passthrough-codex/src/records/plain.rs",
        "let v: Value = serde_json::from_str(t).ok()?;",
        1,
        "a call result's text that is no JSON is no resource listing (any tool's text); the call and its outcome are read without it",
    ),
    (
        "passthrough-codex/src/records/resources.rs",
        "let listing = serde_json::from_str::<Listing>(text).ok()?;",
        1,
        "the fast path's twin: a text that begins as a listing and does not parse is none (lenient: a server of another type is that resource unread); the call is read without it",
    ),
    // Copilot CLI (another helper's files: listed, not changed).
    (
        "passthrough-copilot/src/config_scan.rs",
        "p.strip_prefix(&home_dir)",
        1,
        "a plugin's cache outside the Copilot home is not read (configuration, not a record)",
    ),
    (
        "passthrough-copilot/src/lib.rs",
        "let Ok(doc) = serde_json::from_str::<Value>(line) else {",
        1,
        "a saved output's line reached here parsed already; a live run's line that is no JSON is no status event (LOSS? a live line cut short is dropped unsaid: see issue 68 report)",
    ),
    (
        "passthrough-copilot/src/output.rs",
        "let Ok(event) = serde_json::from_str::<serde_json::Value>(record) else {",
        1,
        "a record that parsed as its event already: parses",
    ),
    (
        "passthrough-copilot/src/output.rs",
        ".and_then(|(c, _)| c.parse::<i64>().ok());",
        1,
        "an exit code in a failure's words: the server still failed (server_exited) without it",
    ),
    (
        "passthrough-copilot/src/output.rs",
        "let ms: u64 = after.split(' ').next()?.parse().ok()?;",
        1,
        "a time limit in a failure's words: without it the words read as the generic failure",
    ),
    (
        "passthrough-copilot/src/records.rs",
        ".next()? .parse() .ok()",
        1,
        "an exit code in a hook error's words: the hook still failed without it",
    ),
    (
        "passthrough-copilot/src/records.rs",
        "let fields = || tail.and_then(|t| fields(t).ok());",
        1,
        "a fielded line whose fields do not parse is said unparsed just above; others have no fields to lose",
    ),
    (
        "passthrough-copilot/src/records/words.rs",
        "let status: u16 = status.parse().ok()?;",
        1,
        "an HTTP status in a challenge's words: no status is no challenge known by them",
    ),
    // Gemini CLI and Qwen Code.
    (
        "passthrough-gemini/src/ended.rs",
        "if let Ok(parts) = serde_json::from_str::<serde_json::Value>(after) {",
        1,
        "a search for where the parts' JSON begins: a try that fails moves to the next split",
    ),
    (
        "passthrough-gemini/src/ended.rs",
        "let code = serde_json::from_str::<serde_json::Value>(error.strip_suffix(']')?)",
        1,
        "an API error's body that is no JSON gives no code; its status words are still compared",
    ),
    (
        "passthrough-gemini/src/older.rs",
        "let mut parts = version.split('.').map(|p| p.parse::<u64>().ok());",
        1,
        "a version that is no number is no release before 0.15",
    ),
    (
        "passthrough-gemini/src/shape.rs",
        "match serde_json::from_str::<Value>(record)",
        1,
        "a record whose error was a field's type is valid JSON: it parses (naming its kind)",
    ),
    (
        "passthrough-gemini/src/telemetry.rs",
        ".and_then(|v| v.parse::<i32>().ok());",
        1,
        "a hook's exit code that is no whole number: the hook is read, its outcome from success",
    ),
    // OpenCode (another helper's files: listed, not changed).
    (
        "passthrough-opencode/src/config_scan.rs",
        "std::fs::canonicalize(a).ok() == std::fs::canonicalize(b).ok()",
        1,
        "two plugin paths compared resolved where they resolve (configuration, not a record)",
    ),
    (
        "passthrough-opencode/src/lib.rs",
        "serde_json::to_string_pretty(&block).ok()?",
        1,
        "a value written as JSON: cannot fail (setup text, no record)",
    ),
    (
        "passthrough-opencode/src/records.rs",
        "u64::try_from(ms).ok()",
        1,
        "a time before 1970 is no time: the row is still read",
    ),
    (
        "passthrough-opencode/src/records.rs",
        // (Last of its file: an entry matches before those after it.)
        ".ok()",
        3,
        "a database row tried as six, five, then four columns: a row none fits is said unparsed (ok_or_else)",
    ),
];
