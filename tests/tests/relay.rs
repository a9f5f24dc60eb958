//! The observing relay as a real process: byte-exactness both ways (with
//! `cat` as the server, what goes in must come back out unchanged), the
//! evidence it reports for a real MCP server, one-time tickets, fail-open
//! when the host goes away, and no leftovers.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use proptest::prelude::*;
use tether_core::DriveMode;
use tether_core::registry::Registry;
use tether_core::spec::{Endpoint, ServerSpec};
use tether_core::vocab::{DisplayStatus, ServerSource, Trigger};
use tether_hub::{AttemptHandle, AttemptRequest, Hub};
use tether_relay::RelayHost;
use tether_tests::{acp_hub as hub, stdio_server as stdio, workspace_bin};

struct Relayed {
    handle: AttemptHandle,
    command: String,
    env: Vec<(String, String)>,
}

/// Relays `spec` for a fresh attempt of session `session`.
fn offer(hub: &Hub, relay: &RelayHost, spec: &ServerSpec, session: &str) -> Relayed {
    let (relayed, ticket) = relay.relay(spec).expect("stdio relays");
    let (command, env) = match &relayed.endpoints[0] {
        Endpoint::Stdio {
            command, env, args, ..
        } => {
            assert!(
                args.is_empty(),
                "the real arguments never reach the relay's command line"
            );
            (
                command.clone(),
                env.iter()
                    .map(|kv| (kv.name.clone(), kv.value.clone()))
                    .collect(),
            )
        }
        other => panic!("relay endpoint: {other:?}"),
    };
    let handle = hub
        .begin_attempt(AttemptRequest::new(
            tether_core::Owner {
                task: "t".into(),
                session: session.into(),
                execution: "e".into(),
            },
            "agent",
            DriveMode::Acp,
            Trigger::SessionNew,
            vec![relayed],
        ))
        .expect("attempt");
    ticket.bind(handle.sink.clone());
    Relayed {
        handle,
        command,
        env,
    }
}

fn spawn(relayed: &Relayed) -> std::process::Child {
    use std::os::unix::process::CommandExt;
    Command::new(&relayed.command)
        .envs(relayed.env.iter().cloned())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("relay")
}

/// Writes `chunks` to the relay (one write each), closes stdin, and returns
/// everything it wrote back.
fn round_trip(child: &mut std::process::Child, chunks: Vec<Vec<u8>>) -> Vec<u8> {
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = child.stdout.take().expect("stdout");
    let writer = std::thread::spawn(move || {
        for chunk in chunks {
            if stdin.write_all(&chunk).is_err() {
                return;
            }
            let _ = stdin.flush();
        }
    });
    let mut out = Vec::new();
    stdout.read_to_end(&mut out).expect("read");
    writer.join().expect("writer");
    out
}

/// The host's relay channel, on `rt`, for relays built in this profile.
fn relay_host(rt: &tokio::runtime::Runtime) -> RelayHost {
    rt.block_on(RelayHost::start(workspace_bin("tether-relay")))
        .expect("relay host")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// Frames of every awkward kind: JSON-RPC requests, batches, non-JSON
/// lines, invalid UTF-8, empty lines.
fn frame() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        "[a-z]{1,8}"
            .prop_map(|m| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{m}"}}"#).into_bytes()),
        "[a-z]{1,8}".prop_map(|m| format!(
            r#"[{{"jsonrpc":"2.0","id":"a","method":"{m}"}},{{"jsonrpc":"2.0","method":"n"}}]"#
        )
        .into_bytes()),
        "[ -~]{0,200}".prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 0..300),
        Just(Vec::new()),
    ]
    .prop_map(|mut f| {
        f.retain(|b| *b != b'\n');
        f.push(b'\n');
        f
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// GIVEN any frames, split and merged at random THEN the server receives
    /// exactly what the agent sent, and the agent exactly what the server sent.
    #[test]
    fn bytes_pass_unchanged_both_ways(
        frames in proptest::collection::vec(frame(), 1..40),
        cuts in proptest::collection::vec(1usize..512, 1..40),
        tail_without_newline in any::<bool>(),
    ) {
        let rt = runtime();
        let hub = hub();
        let relay = relay_host(&rt);
        let relayed = offer(&hub, &relay, &stdio("echo", "cat", &[], &[]), "s");
        let mut input: Vec<u8> = frames.concat();
        if tail_without_newline {
            input.extend_from_slice(b"{\"partial\":");
        }
        // Re-cut the stream at arbitrary places: frames split and merged.
        let mut chunks = Vec::new();
        let mut rest = input.as_slice();
        for cut in cuts.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let n = (*cut).min(rest.len());
            chunks.push(rest[..n].to_vec());
            rest = &rest[n..];
        }
        let mut child = spawn(&relayed);
        let out = round_trip(&mut child, chunks);
        let status = child.wait().expect("wait");
        prop_assert_eq!(out.len(), input.len());
        prop_assert!(out == input, "bytes changed on the way through");
        prop_assert!(status.success(), "{status:?}");
        drop(relay);
    }
}

#[test]
fn a_16_mib_frame_passes_unchanged() {
    let rt = runtime();
    let hub = hub();
    let relay = relay_host(&rt);
    let relayed = offer(&hub, &relay, &stdio("echo", "cat", &[], &[]), "s");
    let mut frame = br#"{"jsonrpc":"2.0","id":1,"result":{"blob":""#.to_vec();
    frame.extend((0..16 * 1024 * 1024).map(|i| b'a' + (i % 26) as u8));
    frame.extend_from_slice(b"\"}}\n");
    let mut child = spawn(&relayed);
    let chunks: Vec<Vec<u8>> = frame.chunks(1 << 20).map(<[u8]>::to_vec).collect();
    let out = round_trip(&mut child, chunks);
    assert!(
        out == frame,
        "the 16 MiB frame changed ({} bytes back)",
        out.len()
    );
    assert!(child.wait().expect("wait").success());
    // Too large to observe, both ways: relayed unchanged, and said so.
    let mut err = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("stderr");
    assert!(
        err.contains("2 frame(s) too large or too dense to observe"),
        "{err}"
    );
}

/// One JSON-RPC line in, one read back (a tiny MCP client for tests).
fn call(
    stdin: &mut std::process::ChildStdin,
    stdout: &mut std::io::BufReader<std::process::ChildStdout>,
    line: &str,
) -> serde_json::Value {
    use std::io::BufRead;
    writeln!(stdin, "{line}").expect("write");
    stdin.flush().expect("flush");
    let mut answer = String::new();
    stdout.read_line(&mut answer).expect("read");
    serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer:?}"))
}

#[test]
fn a_relayed_server_reaches_active_from_its_own_traffic_with_relay_provenance() {
    let rt = runtime();
    let hub = hub();
    let relay = relay_host(&rt);
    let secret = "sk-relay-planted-31337abc";
    let modern = workspace_bin("tether-modern-mcp");
    let spec = stdio(
        "modern",
        modern.to_str().expect("path"),
        &[&format!("--api-key={secret}")],
        &[("MODERN_TOKEN", secret)],
    );
    let relayed = offer(&hub, &relay, &spec, "s");
    // The relay's own command line and environment carry no secret.
    assert!(!relayed.command.contains(secret));
    assert!(relayed.env.iter().all(|(_, v)| !v.contains(secret)));
    let mut child = spawn(&relayed);
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let discover = call(
        &mut stdin,
        &mut stdout,
        r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"relay-test-client","version":"9.9"}}}}"#,
    );
    assert!(discover.get("result").is_some(), "{discover}");
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"relay-test-client","version":"9.9"}}"#;
    let list = call(
        &mut stdin,
        &mut stdout,
        &format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{{{meta}}}}}"#),
    );
    let tools = list["result"]["tools"].as_array().expect("tools").clone();
    let tool = tools[0]["name"].as_str().expect("name").to_owned();
    let called = call(
        &mut stdin,
        &mut stdout,
        &format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"{tool}","arguments":{{}},{meta}}}}}"#
        ),
    );
    assert!(called.get("result").is_some(), "{called}");
    drop(stdin);
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status:?}");
    let history = rt.block_on(async {
        // The relay hands its last observations over as it exits.
        for _ in 0..50 {
            hub.flush().await;
            let h = hub.snapshot("s").expect("history");
            let row = &h.current().expect("attempt").servers[0];
            if row.connections.iter().any(|c| c.closed_at.is_some()) {
                return h;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        hub.snapshot("s").expect("history")
    });
    let row = &history.current().expect("attempt").servers[0];
    assert_eq!(row.status, DisplayStatus::Active, "{row:?}");
    assert_eq!(
        row.tool_count,
        Some(u32::try_from(tools.len()).expect("count"))
    );
    assert_eq!(
        row.last_tool_call.as_ref().map(|c| c.tool.as_str()),
        Some(tool.as_str())
    );
    assert_eq!(
        row.client.as_ref().map(|c| c.name.as_str()),
        Some("relay-test-client")
    );
    assert_eq!(
        row.target, "tether-modern-mcp",
        "the row shows the real server"
    );
    assert_eq!(
        row.stages
            .initialized
            .provenance
            .map(|p| p.word().as_str().to_owned()),
        Some("relay".to_owned())
    );
    assert!(
        row.connections.iter().any(|c| c.closed_at.is_some()),
        "the close is observed"
    );
    let stored = serde_json::to_string(&history).expect("json");
    assert!(!stored.contains(secret), "a secret reached the history");
    assert_eq!(relay.connections(), 1);
    drop(relayed.handle);
}

#[test]
fn a_ticket_works_once_and_a_refused_relay_exits_plainly() {
    let rt = runtime();
    let hub = hub();
    let relay = relay_host(&rt);
    let relayed = offer(&hub, &relay, &stdio("echo", "cat", &[], &[]), "s");
    let mut first = spawn(&relayed);
    let out = round_trip(&mut first, vec![b"hello\n".to_vec()]);
    assert_eq!(out, b"hello\n");
    assert!(first.wait().expect("wait").success());
    // The same ticket again: refused, with a message, and a plain exit.
    let mut second = spawn(&relayed);
    drop(second.stdin.take());
    let mut err = String::new();
    second
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err)
        .expect("stderr");
    let status = second.wait().expect("wait");
    assert!(!status.success());
    assert!(err.contains("refused"), "{err}");
}

#[test]
fn the_relay_keeps_relaying_when_the_host_is_gone() {
    let rt = runtime();
    let hub = hub();
    let relay = relay_host(&rt);
    let relayed = offer(&hub, &relay, &stdio("echo", "cat", &[], &[]), "s");
    let mut child = spawn(&relayed);
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let before = call(
        &mut stdin,
        &mut stdout,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    );
    assert_eq!(before["method"], "ping");
    // The host goes away: its channel and its runtime.
    drop(relay);
    drop(rt);
    std::thread::sleep(Duration::from_millis(200));
    for i in 2..50 {
        let echoed = call(
            &mut stdin,
            &mut stdout,
            &format!(
                r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"x"}}}}"#
            ),
        );
        assert_eq!(echoed["id"], i, "relaying stopped with the host");
    }
    drop(stdin);
    assert!(child.wait().expect("wait").success());
}

#[test]
fn nothing_the_relay_started_outlives_it() {
    let rt = runtime();
    let hub = hub();
    let relay = relay_host(&rt);
    let token = format!("relay-leftover-{}", std::process::id());
    let hostile = workspace_bin("tether-hostile-mcp");
    let pids = std::env::temp_dir().join(format!("{token}.pids"));
    let spec = stdio(
        "daemonizing",
        hostile.to_str().expect("path"),
        &[
            "--mode",
            "grandchildren",
            "--pids",
            pids.to_str().expect("path"),
            &token,
        ],
        &[],
    );
    let relayed = offer(&hub, &relay, &spec, "s");
    let mut child = spawn(&relayed);
    std::thread::sleep(Duration::from_millis(500));
    // The agent hangs up.
    drop(child.stdin.take());
    let _ = child.wait();
    let left = tether_tests::leftovers(&token);
    let recorded = std::fs::read_to_string(&pids).unwrap_or_default();
    let _ = std::fs::remove_file(&pids);
    assert!(!recorded.is_empty(), "the server never started");
    assert!(left.is_empty(), "left running: {left:?}");
    // The grandchildren (sleep 1000) carry no token; check their pids.
    for pid in recorded
        .split_whitespace()
        .filter_map(|p| p.parse::<u32>().ok())
    {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().next());
        assert!(
            stat.is_empty() || state == Some("Z"),
            "process {pid} outlived the relay: {stat}"
        );
    }
}

/// The pinned real servers, relayed to a real agent by `tether probe
/// --observe-servers`: each row reaches Active with its real tool count,
/// from the server's own traffic (provenance `relay`).
async fn probe_with_relayed_servers(
    program: std::path::PathBuf,
    args: &[&str],
    prompt: Option<&str>,
) -> Option<tether_core::probe::ProbeReport> {
    let everything = tether_tests::peer("node_modules/.bin/mcp-server-everything")?;
    let memory = tether_tests::peer("node_modules/.bin/mcp-server-memory")?;
    let servers = vec![
        stdio("everything", everything.to_str().expect("path"), &[], &[]),
        // Named like one of its own arguments: a value the scrubber redacts.
        stdio(
            "memory",
            memory.to_str().expect("path"),
            &["memory"],
            &[("MEMORY_FILE_PATH", "/tmp/tether-relay-memory.json")],
        ),
    ];
    let opts = tether_probe::ProbeOptions {
        prompt: prompt.map(str::to_owned),
        authenticate: None,
        target: tether_probe::ProbeTarget {
            grace: Duration::from_secs(15),
            timeout: Duration::from_secs(120),
            extra_servers: servers,
            observe_servers: true,
            ..tether_probe::ProbeTarget::new(program.display().to_string(), args)
        },
    };
    Some(tether_probe::run_probe(opts, |_| {}).await.report)
}

fn assert_relayed_active(report: &tether_core::probe::ProbeReport, who: &str) {
    let attempt = report.report.as_ref().expect("attempt");
    for (name, tools, target) in [
        ("everything", 13, "mcp-server-everything"),
        ("memory", 9, "mcp-server-memory"),
    ] {
        let row = attempt
            .server(name)
            .unwrap_or_else(|| panic!("{who}: no row {name}"));
        assert_eq!(row.status, DisplayStatus::Active, "{who}: {name}: {row:#?}");
        // server-everything registers more tools for clients that advertise
        // more capabilities (13 for rmcp's, 14 for OpenCode's, 15 for
        // Claude Code's): the count is what this client was really served.
        let count = row.tool_count.unwrap_or(0);
        if name == "everything" {
            assert!(
                (tools..=tools + 4).contains(&count),
                "{who}: {name}: {count} tools"
            );
        } else {
            assert_eq!(count, tools, "{who}: {name}");
        }
        assert_eq!(row.target, target, "{who}: {name}");
        // What the tools cost the model, from the tool definitions the relay
        // saw go by: one figure per tool served, by the shared method.
        let catalog = row
            .tool_catalog
            .as_ref()
            .unwrap_or_else(|| panic!("{who}: {name}: no catalog: {row:#?}"));
        assert_eq!(catalog.method, tether_core::model::CATALOG_METHOD);
        assert_eq!(Some(catalog.tool_count), row.tool_count, "{who}: {name}");
        assert_eq!(
            catalog.total_tokens,
            catalog
                .tools
                .iter()
                .map(|t| u64::from(t.token_estimate))
                .sum::<u64>()
        );
        if name == "memory"
            && let Some(memory) = tether_tests::peer("node_modules/.bin/mcp-server-memory")
            && let Some(theirs) = tether_tests::independent_token_count(&memory)
        {
            assert_eq!(
                serde_json::json!(catalog.total_tokens),
                theirs["total"],
                "{who}: the relayed estimate equals js-tiktoken's count"
            );
        }
        assert_eq!(
            row.stages
                .tools_listed
                .provenance
                .map(|p| p.word().as_str().to_owned()),
            Some("relay".to_owned()),
            "{who}: {name}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_agent_gets_real_servers_through_the_relay_and_its_tool_call_is_seen() {
    let agent = workspace_bin("tether-reference-agent");
    workspace_bin("tether-relay");
    let Some(report) = probe_with_relayed_servers(agent, &[], Some("call the echo tool")).await
    else {
        return;
    };
    assert_relayed_active(&report, "tether-reference-agent");
    let attempt = report.report.as_ref().expect("attempt");
    let everything = attempt.server("everything").expect("row");
    assert_eq!(
        everything.last_tool_call.as_ref().map(|c| c.tool.as_str()),
        Some("echo"),
        "{everything:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_agent_acp_gets_real_servers_through_the_relay() {
    workspace_bin("tether-relay");
    let Some(agent) = tether_tests::peer("node_modules/.bin/claude-agent-acp") else {
        return;
    };
    let Some(report) = probe_with_relayed_servers(agent, &[], None).await else {
        return;
    };
    assert_relayed_active(&report, "claude-agent-acp");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_gets_real_servers_through_the_relay() {
    workspace_bin("tether-relay");
    let Some(agent) = tether_tests::peer("node_modules/.bin/opencode") else {
        return;
    };
    let Some(report) = probe_with_relayed_servers(agent, &["acp"], None).await else {
        return;
    };
    assert_relayed_active(&report, "opencode");
}

/// The real Claude Code and Codex CLIs (passthrough), given server-everything
/// and server-memory through the relay by `tether probe --passthrough KIND
/// --observe-servers`: each row reaches Active from its server's own traffic.
async fn passthrough_relayed(kind: &str, bin: &str, args: &[&str]) {
    workspace_bin("tether-relay");
    let Some(cli) = tether_tests::peer(&format!("node_modules/.bin/{bin}")) else {
        return;
    };
    let Some(everything) = tether_tests::peer("node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let Some(memory) = tether_tests::peer("node_modules/.bin/mcp-server-memory") else {
        return;
    };
    let opts = tether_probe::PassthroughOptions {
        kind: kind.into(),
        target: tether_probe::ProbeTarget {
            grace: Duration::from_secs(20),
            // Two relayed servers: each relay must get its own ticket, and
            // `memory` is also one of its own arguments.
            extra_servers: vec![
                stdio("everything", everything.to_str().expect("path"), &[], &[]),
                stdio(
                    "memory",
                    memory.to_str().expect("path"),
                    &["memory"],
                    &[("MEMORY_FILE_PATH", "/tmp/tether-relay-memory-pt.json")],
                ),
            ],
            observe_servers: true,
            ..tether_probe::ProbeTarget::new(cli.display().to_string(), args)
        },
    };
    let registry = Registry::with_static().expect("registry");
    let outcome = tether_probe::run_passthrough_probe(registry, opts, |_| {}).await;
    let attempt = outcome.report.report.as_ref().expect("attempt");
    for (name, least) in [("everything", 13), ("memory", 9)] {
        let row = attempt.server(name).expect("row");
        assert_eq!(row.status, DisplayStatus::Active, "{kind}: {row:#?}");
        assert!(row.tool_count.unwrap_or(0) >= least, "{kind}: {row:#?}");
        assert!(
            attempt
                .evidence
                .iter()
                .any(|e| e.kind.as_str() == "tools_list_observed"
                    && e.server.as_deref() == Some(name)
                    && e.provenance.as_str() == "relay"),
            "{kind}: the relay's own tools/list evidence for {name}: {:#?}",
            attempt.evidence
        );
    }
    assert_eq!(attempt.unattributed_evidence, 0, "{kind}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_code_gets_a_real_server_through_the_relay() {
    passthrough_relayed(
        "claude",
        "claude",
        &["-p", "hi", "--output-format", "stream-json", "--verbose"],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_gets_a_real_server_through_the_relay() {
    passthrough_relayed("codex", "codex", &["exec", "--skip-git-repo-check", "hi"]).await;
}

/// GIVEN a server that answers once and dies WHEN the agent still holds its
/// stdin open THEN through the relay the agent sees what it sees directly:
/// the same bytes, end of file, and the same exit status.
#[test]
fn a_dying_server_looks_the_same_through_the_relay() {
    let rt = runtime();
    let hub = hub();
    let relay = relay_host(&rt);
    let script = "head -n 1; echo bye >&2; exit 3";
    let spec = stdio("dies", "sh", &["-c", script], &[]);
    let run = |mut command: Command| {
        use std::os::unix::process::CommandExt;
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("spawn");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
            .expect("write");
        stdin.flush().expect("flush");
        // stdin stays open: the server's exit alone must end the stream.
        let mut out = Vec::new();
        child
            .stdout
            .take()
            .expect("stdout")
            .read_to_end(&mut out)
            .expect("read");
        let status = child.wait().expect("wait");
        drop(stdin);
        (out, status.code())
    };
    let mut direct = Command::new("sh");
    direct.args(["-c", script]);
    let (direct_out, direct_code) = run(direct);
    let relayed = offer(&hub, &relay, &spec, "s");
    let mut through = Command::new(&relayed.command);
    through.envs(relayed.env.iter().cloned());
    let (relayed_out, relayed_code) = run(through);
    assert_eq!(relayed_out, direct_out);
    assert_eq!(relayed_code, direct_code);
    assert_eq!(direct_code, Some(3));
}

/// A host opts in per server: the chosen stdio and HTTP servers go through
/// the relay (from sync code too: the proxy runs on the relay host's
/// runtime), one whose URL does not parse is delivered directly with a note,
/// and one not chosen is left alone.
#[test]
fn a_host_opts_in_per_server_and_what_cannot_be_relayed_says_why() {
    let rt = runtime();
    let relay = relay_host(&rt);
    let http = ServerSpec::new(
        "remote",
        ServerSource::Profile,
        Endpoint::Http {
            url: "https://mcp.example.com/mcp".into(),
            headers: vec![],
        },
    );
    let odd = ServerSpec::new(
        "odd",
        ServerSource::Profile,
        Endpoint::Http {
            url: "not a url".into(),
            headers: vec![],
        },
    );
    let specs = vec![
        stdio("chosen", "mcp-chosen", &[], &[]),
        http,
        odd,
        stdio("left-alone", "mcp-other", &[], &[]),
    ];
    let offered = relay.offer(&specs, |s| s.name != "left-alone");
    assert_eq!(offered.relayed, ["chosen", "remote"]);
    assert!(offered.specs[0].relayed.is_some());
    assert!(offered.specs[1].relayed.is_some());
    assert_eq!(offered.specs[2].endpoints, specs[2].endpoints);
    assert!(
        offered.specs[2]
            .note
            .as_deref()
            .is_some_and(|n| n.starts_with("delivered directly")),
        "{:?}",
        offered.specs[2]
    );
    assert_eq!(offered.specs[3], specs[3]);
    assert_eq!(offered.notes.len(), 1);
    assert!(
        offered.notes[0].starts_with("odd: delivered directly"),
        "{:?}",
        offered.notes
    );
    // The plan's row for the relayed server shows the real command, not the relay.
    let hub = hub();
    let handle = hub
        .begin_attempt(AttemptRequest::new(
            tether_core::Owner {
                task: "t".into(),
                session: "s".into(),
                execution: "e".into(),
            },
            "agent",
            DriveMode::Acp,
            Trigger::SessionNew,
            offered.specs.clone(),
        ))
        .expect("attempt");
    offered.bind(&handle.sink);
    let history = hub.snapshot("s").expect("history");
    let row = history
        .current()
        .expect("attempt")
        .server("chosen")
        .expect("row");
    assert_eq!(row.target, "mcp-chosen");
}
