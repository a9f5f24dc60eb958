//! `tether sessions` reading harness transcripts: throughput on a generated
//! corpus of Claude Code transcripts of realistic shape (prompts, MCP and
//! native tool calls, tool results carrying file contents, attachments),
//! memory as a file grows, and what `jq` takes to pull the same fields
//! from the same files (what a user would do instead).
//!
//! Also the home-shaped corpus (`tests/benches/corpus/claude.rs`,
//! `home_shaped`), read the first time and again over unchanged files with
//! a store's ledger.
//!
//! Run: `cargo bench -p tether-tests --bench records_import`. The figures
//! are recorded in docs/PERFORMANCE.md.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::sync::Arc;
use tether_core::registry::Registry;
use tether_records::{Filter, Home, Records};
// Links the compiled-in plugins (the Claude reader among them).
use tether_tests as _;

#[path = "corpus/claude.rs"]
#[allow(dead_code)]
mod shaped;

/// One session's transcript of about `bytes` bytes.
fn transcript(out: &mut impl Write, session: &str, bytes: usize) -> usize {
    let mut written = 0;
    let mut i = 0u64;
    let body = "fn main() { println!(\"hello\"); }\n".repeat(120); // ~4 KiB of "file"
    while written < bytes {
        i += 1;
        let ts = format!(
            "2026-12-01T{:02}:{:02}:{:02}.000Z",
            (i / 3600) % 24,
            (i / 60) % 60,
            i % 60
        );
        let lines = [
            serde_json::json!({"type": "user", "sessionId": session, "timestamp": ts, "cwd": "/home/me/src/app",
                "version": "2.1.197", "uuid": format!("u{i}"),
                "message": {"role": "user", "content": "please look at the build and fix the failing test in the parser module"}}),
            serde_json::json!({"type": "assistant", "sessionId": session, "timestamp": ts, "cwd": "/home/me/src/app",
                "message": {"role": "assistant", "content": [
                    {"type": "text", "text": "Let me read the file first and then check the tests."},
                    {"type": "tool_use", "id": format!("toolu_{i}"), "name": if i.is_multiple_of(3) { "Read".to_owned() } else { format!("mcp__github__tool_{}", i % 7) },
                     "input": {"path": "src/parser.rs", "query": "failing test"}}]}}),
            serde_json::json!({"type": "user", "sessionId": session, "timestamp": ts, "cwd": "/home/me/src/app",
                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{i}"),
                    "is_error": i.is_multiple_of(11), "content": body}]},
                "toolUseResult": {"stdout": body}}),
            serde_json::json!({"type": "attachment", "sessionId": session, "timestamp": ts,
                "attachment": {"type": "deferred_tools_delta", "addedNames": ["mcp__github__tool_1", "mcp__time__get_current_time"],
                "removedNames": [], "pendingMcpServers": [], "needsAuthMcpServers": ["linear"]}}),
            // Each tool call's PreToolUse hook, as Claude Code records it
            // (its output in `stdout` and `content`), one in seven failing.
            serde_json::json!({"type": "attachment", "sessionId": session, "timestamp": ts, "uuid": format!("h{i}"),
                "attachment": {"type": if i.is_multiple_of(7) { "hook_non_blocking_error" } else { "hook_success" },
                "hookName": "PreToolUse:Read", "hookEvent": "PreToolUse", "toolUseID": format!("toolu_{i}"),
                "content": "checked the command; nothing to report", "stdout": "checked the command; nothing to report\n",
                "stderr": "", "exitCode": if i.is_multiple_of(7) { 1 } else { 0 },
                "command": "/home/me/.claude/hooks/check.sh --strict", "durationMs": 12}}),
        ];
        if i.is_multiple_of(50) {
            // A skill listing now and then (names, and their prose).
            let listing = serde_json::json!({"type": "attachment", "sessionId": session, "timestamp": ts,
                "attachment": {"type": "skill_listing", "content": "- release-notes: Writes the release notes from the changelog\n- review: Reviews the diff",
                "skillCount": 2, "isInitial": false, "names": ["release-notes", "review"]}})
            .to_string();
            written += listing.len() + 1;
            let _ = writeln!(out, "{listing}");
        }
        for line in lines {
            let text = line.to_string();
            written += text.len() + 1;
            let _ = writeln!(out, "{text}");
        }
    }
    written
}

/// A home with `sessions` transcripts of `each` bytes; returns its size.
fn corpus(home: &Path, sessions: usize, each: usize) -> u64 {
    let dir = home.join(".claude/projects/-home-me-src-app");
    std::fs::create_dir_all(&dir).expect("dir");
    let mut total = 0;
    for s in 0..sessions {
        let session = format!("00000000-0000-0000-0000-{s:012}");
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(dir.join(format!("{session}.jsonl"))).expect("file"),
        );
        total += transcript(&mut f, &session, each) as u64;
    }
    total
}

fn read_all(home: &Path) -> usize {
    read_kept(home, None)
}

/// [`read_all`], keeping `store`'s ledger of how far each file was read.
fn read_kept(home: &Path, store: Option<&Arc<tether_store::SqliteStore>>) -> usize {
    let registry = Registry::with_static().expect("registry");
    let mut records = Records::new(
        &registry,
        &Home::new(home, HashMap::new()),
        HashMap::new(),
        Filter {
            harnesses: vec!["claude".into()],
            ..Filter::default()
        },
    );
    if let Some(store) = store {
        records.keep_in(Arc::clone(store) as Arc<dyn tether_core::store::Store>);
    }
    records.read(true);
    records.sessions().len()
}

/// The peak resident set so far (Linux), in KiB.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn bench(c: &mut Criterion) {
    let home = tempfile::tempdir().expect("home");
    let bytes = corpus(home.path(), 16, 4 << 20);
    let mut group = c.benchmark_group("records");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes));
    group.bench_function("read_claude_transcripts_64MiB", |b| {
        b.iter(|| assert_eq!(read_all(home.path()), 16));
    });
    group.finish();

    // A home's shape (`tether-records-corpus HOME 64 home`): many small
    // sessions, sub-agents, twelve projects; read the first time (no
    // ledger), and again over unchanged files with a store's ledger.
    let shaped_home = tempfile::tempdir().expect("home");
    let (files, shaped_bytes) =
        shaped::home_shaped(shaped_home.path(), 64_000_000, &[]).expect("corpus");
    let db = tempfile::tempdir().expect("db");
    let store = Arc::new(tether_store::SqliteStore::open(&db.path().join("t.db")).expect("store"));
    let sessions = read_kept(shaped_home.path(), Some(&store));
    let mut group = c.benchmark_group("records");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(shaped_bytes));
    group.bench_function(format!("home_shaped_{files}_files_first"), |b| {
        b.iter(|| assert_eq!(read_all(shaped_home.path()), sessions));
    });
    group.bench_function(format!("home_shaped_{files}_files_unchanged"), |b| {
        b.iter(|| assert_eq!(read_kept(shaped_home.path(), Some(&store)), sessions));
    });
    group.finish();

    // Side by side: one pass of Tether, one of jq pulling the same fields.
    let started = Instant::now();
    read_all(home.path());
    let tether = started.elapsed();
    let mb = bytes as f64 / 1e6;
    println!(
        "tether: {mb:.0} MB in {:.3} s = {:.0} MB/s",
        tether.as_secs_f64(),
        mb / tether.as_secs_f64()
    );
    let files: Vec<_> = std::fs::read_dir(home.path().join(".claude/projects/-home-me-src-app"))
        .expect("dir")
        .flatten()
        .map(|e| e.path())
        .collect();
    let filter = r#"[.sessionId, .timestamp, (.message.content? | arrays | .[] | select(.type == "tool_use" or .type == "tool_result") | [.name, .id, .tool_use_id, .is_error]), (.attachment.addedNames?)] | select(length > 2)"#;
    let started = Instant::now();
    let jq = std::process::Command::new("jq")
        .arg("-c")
        .arg(filter)
        .args(&files)
        .stdout(std::process::Stdio::null())
        .status();
    match jq {
        Ok(status) if status.success() => {
            let jq = started.elapsed();
            println!(
                "jq: {mb:.0} MB in {:.3} s = {:.0} MB/s; tether is {:.1}x faster",
                jq.as_secs_f64(),
                mb / jq.as_secs_f64(),
                jq.as_secs_f64() / tether.as_secs_f64()
            );
        }
        _ => println!("jq: not installed here; no comparison"),
    }

    // Memory as one file grows: 64 MiB, then 512 MiB, in one session.
    for size in [64usize << 20, 512 << 20] {
        let one = tempfile::tempdir().expect("home");
        corpus(one.path(), 1, size);
        let before = peak_rss_kib();
        let started = Instant::now();
        read_all(one.path());
        println!(
            "one {} MiB transcript: {:.2} s, peak RSS {} MiB (grew {} KiB)",
            size >> 20,
            started.elapsed().as_secs_f64(),
            peak_rss_kib() / 1024,
            peak_rss_kib().saturating_sub(before)
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
