//! How soon `tether probe` prints its verdict (issue 27, item 6), printed as
//! a table for docs/PERFORMANCE.md: for each agent, over repeated runs of
//! `tether probe --json -- AGENT`, p50 and max of
//! - decided → printed: from the deciding evidence (the later of the
//!   sentinel's tools/list and the session's acceptance, both timestamped by
//!   the hub) to the moment the JSON line reached this process;
//! - printed → exited: the cleanup after it (the agent's group, the sentinel);
//! - the whole process, from spawn to exit.
//!
//! `cargo bench -p tether-tests --bench probe_verdict` (add `-- quick` for a
//! smaller run). Not criterion: three figures come from one run. Real peers
//! (`claude-agent-acp`) are measured when `tests/peers` has them.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tether_tests::workspace_bin;

struct Run {
    decided_to_printed: Duration,
    printed_to_exited: Duration,
    whole: Duration,
}

fn epoch_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn run_once(agent: &str, args: &[&str]) -> Run {
    let started = Instant::now();
    let mut child = Command::new(workspace_bin("tether"))
        .args(["probe", "--json", "--timeout", "60", "--"])
        .arg(agent)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn tether probe");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    stdout.read_line(&mut line).expect("read the report");
    let printed_ms = epoch_ms();
    let printed = Instant::now();
    let status = child.wait().expect("wait");
    let exited = Instant::now();
    assert!(status.code().is_some(), "tether probe was killed");
    let doc: serde_json::Value = serde_json::from_str(&line).expect("one JSON document");
    assert_eq!(doc["verdict"], "active", "{doc}");
    let attempt = &doc["report"];
    let sentinel = doc["sentinel"]["name"].as_str().unwrap_or_default();
    let listed = attempt["evidence"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["kind"] == "tools_list_observed" && e["server"] == sentinel)
        .filter_map(|e| e["at"].as_u64())
        .min()
        .expect("the sentinel's tools/list");
    let accepted = attempt["accepted_at"].as_u64().expect("accepted");
    let decided = listed.max(accepted);
    Run {
        decided_to_printed: Duration::from_millis(printed_ms.saturating_sub(decided)),
        printed_to_exited: exited - printed,
        whole: exited - started,
    }
}

fn stats(mut values: Vec<Duration>) -> (Duration, Duration) {
    values.sort();
    (values[values.len() / 2], values[values.len() - 1])
}

fn ms(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1000.0)
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let runs = if quick { 3 } else { 10 };
    let reference = workspace_bin("tether-reference-agent");
    workspace_bin("tether-bridge");
    let mut agents: Vec<(String, String, Vec<&str>)> = vec![(
        "reference agent, sentinel only".into(),
        reference.display().to_string(),
        vec![],
    )];
    let peers = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/node_modules/.bin");
    let claude = peers.join("claude-agent-acp");
    if claude.exists() {
        agents.push((
            "claude-agent-acp".into(),
            claude.display().to_string(),
            vec![],
        ));
    } else {
        eprintln!("SKIP: claude-agent-acp is not installed in tests/peers");
    }
    println!(
        "| agent | runs | decided → printed p50 / max (ms) | printed → exited p50 / max (ms) | whole process p50 / max (ms) |"
    );
    println!("|---|---|---|---|---|");
    for (label, program, args) in &agents {
        // One warm-up run (first start of a node agent reads its files cold).
        let _ = run_once(program, args);
        let measured: Vec<Run> = (0..runs).map(|_| run_once(program, args)).collect();
        let (d50, dmax) = stats(measured.iter().map(|r| r.decided_to_printed).collect());
        let (c50, cmax) = stats(measured.iter().map(|r| r.printed_to_exited).collect());
        let (w50, wmax) = stats(measured.iter().map(|r| r.whole).collect());
        println!(
            "| {label} | {runs} | {} / {} | {} / {} | {} / {} |",
            ms(d50),
            ms(dmax),
            ms(c50),
            ms(cmax),
            ms(w50),
            ms(wmax)
        );
    }
}
