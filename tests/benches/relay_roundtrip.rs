//! The observing relay's cost (issue 16), printed as a table for
//! docs/PERFORMANCE.md: the tools/call round trip to a real stdio MCP server
//! (`tether-modern-mcp`, built on rmcp) direct and through `tether-relay`,
//! measured in one run, p50 and p99; and the relay's resident memory idle
//! and after the load.
//!
//! `cargo bench -p tether-tests --bench relay_roundtrip` (add `-- quick` for
//! a smaller run). Not criterion: the two sides must share one run.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tether_core::DriveMode;
use tether_core::spec::{Endpoint, ServerSpec};
use tether_core::vocab::Trigger;
use tether_hub::AttemptRequest;
use tether_relay::RelayHost;
use tether_tests::workspace_bin;

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}"#;

struct Peer {
    child: Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Peer {
    fn start(mut command: Command) -> Peer {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Peer {
            child,
            stdin,
            stdout,
        }
    }

    fn call(&mut self, line: &str) -> Duration {
        let start = Instant::now();
        writeln!(self.stdin, "{line}").expect("write");
        self.stdin.flush().expect("flush");
        // Skip the server's notifications; the answer carries the result.
        loop {
            let mut answer = String::new();
            self.stdout.read_line(&mut answer).expect("read");
            if answer.contains("\"result\"") {
                return start.elapsed();
            }
            assert!(
                !answer.contains("\"error\"") && !answer.is_empty(),
                "{answer}"
            );
        }
    }

    fn run(&mut self, calls: usize) -> Vec<Duration> {
        self.call(&format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{{{META}}}}}"#
        ));
        let mut times: Vec<Duration> = (1..=calls)
            .map(|i| {
                self.call(&format!(
                    r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"sentinel_echo","arguments":{{"text":"x"}},{META}}}}}"#
                ))
            })
            .collect();
        times.sort();
        times
    }

    /// The legacy handshake (server-everything).
    fn handshake_legacy(&mut self) {
        self.call(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#);
        writeln!(
            self.stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .expect("write");
    }

    fn echo(&mut self, i: usize) -> Duration {
        self.call(&format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"x"}}}}}}"#
        ))
    }
}

/// `echo` calls on two server-everything peers interleaved one by one, so
/// neither gets the other's warm-up (Node's JIT): sorted times of each.
fn interleaved_legacy(a: &mut Peer, b: &mut Peer, calls: usize) -> (Vec<Duration>, Vec<Duration>) {
    a.handshake_legacy();
    b.handshake_legacy();
    let (mut ta, mut tb) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
    for i in 1..=calls {
        ta.push(a.echo(i));
        tb.push(b.echo(i));
    }
    ta.sort();
    tb.sort();
    (ta, tb)
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The command an agent runs for a relayed server: the relay, with its ticket.
fn relay_command(relayed: &ServerSpec) -> Command {
    let Endpoint::Stdio { command, env, .. } = &relayed.endpoints[0] else {
        panic!("relay endpoint");
    };
    let mut cmd = Command::new(command);
    cmd.envs(env.iter().map(|kv| (kv.name.clone(), kv.value.clone())));
    cmd
}

/// One streamable-HTTP MCP session: initialize and initialized done.
struct HttpSession {
    client: reqwest::Client,
    url: String,
    token: Option<String>,
    session: Option<String>,
}

impl HttpSession {
    async fn open(url: &str, token: Option<&str>) -> HttpSession {
        let mut this = HttpSession {
            client: reqwest::Client::new(),
            url: url.to_owned(),
            token: token.map(str::to_owned),
            session: None,
        };
        let init = this
            .post(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#.into())
            .await;
        this.session = init
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        init.bytes().await.expect("initialize body");
        this.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into())
            .await;
        this
    }

    async fn post(&self, body: String) -> reqwest::Response {
        let mut request = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if let Some(token) = &self.token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        request.send().await.expect("send")
    }

    /// One tools/call round trip, read to its end.
    async fn call(&self, id: usize) -> Duration {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hi"}}}}}}"#
        );
        let start = Instant::now();
        let bytes = self.post(body).await.bytes().await.expect("body");
        let elapsed = start.elapsed();
        assert!(
            bytes.windows(8).any(|w| w == b"\"result\""),
            "an answer: {}",
            String::from_utf8_lossy(&bytes)
        );
        elapsed
    }
}

/// Direct and relayed calls interleaved one by one, so neither side gets
/// the other's warm-up (Node's JIT, connection pools): sorted times of each.
async fn http_interleaved(
    direct: &HttpSession,
    relayed: &HttpSession,
    calls: usize,
) -> (Vec<Duration>, Vec<Duration>) {
    let (mut d, mut r) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
    for i in 1..=calls {
        d.push(direct.call(i).await);
        r.push(relayed.call(i).await);
    }
    d.sort();
    r.sort();
    (d, r)
}

fn print_row(path: &str, times: &[Duration]) {
    println!(
        "| {path} | {:.1} µs | {:.1} µs |",
        pct(times, 0.5),
        pct(times, 0.99)
    );
}

fn print_ratio(what: &str, relayed: &[Duration], direct: &[Duration]) {
    println!(
        "{what}relayed/direct at p50: {:.2}; at p99: {:.2}",
        pct(relayed, 0.5) / pct(direct, 0.5),
        pct(relayed, 0.99) / pct(direct, 0.99)
    );
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1e6
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let calls = if quick { 500 } else { 5000 };
    let server = workspace_bin("tether-modern-mcp");
    let relay_bin = workspace_bin("tether-relay");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let hub = tether_tests::acp_hub();
    let relay = runtime
        .block_on(RelayHost::start(relay_bin))
        .expect("relay host");

    let direct_times = {
        let mut direct = Peer::start(Command::new(&server));
        direct.run(calls)
    };
    let spec = tether_tests::stdio_server("modern", &server.display().to_string(), &[], &[]);
    let (relayed, ticket) = relay.relay(&spec).expect("relay");
    let handle = hub
        .begin_attempt(AttemptRequest::new(
            tether_core::Owner {
                task: "t".into(),
                session: "s".into(),
                execution: "e".into(),
            },
            "bench",
            DriveMode::Acp,
            Trigger::SessionNew,
            vec![relayed.clone()],
        ))
        .expect("attempt");
    ticket.bind(handle.sink.clone());
    let mut through = Peer::start(relay_command(&relayed));
    let relay_pid = through.child.id();
    // Idle: after the handshake and one discovery, before the load.
    through.call(&format!(
        r#"{{"jsonrpc":"2.0","id":"warm","method":"server/discover","params":{{{META}}}}}"#
    ));
    std::thread::sleep(Duration::from_millis(200));
    let idle = tether_tests::rss_kib(&relay_pid.to_string());
    let relayed_times = through.run(calls);
    let loaded = tether_tests::rss_kib(&relay_pid.to_string());
    drop(through);
    runtime.block_on(hub.flush());
    let observed = hub.snapshot("s").and_then(|h| {
        h.current()
            .and_then(|a| a.server("modern").map(|r| r.status))
    });

    println!("tools/call round trip over stdio, {calls} sequential calls each, one run");
    println!("| path | p50 | p99 |");
    println!("|---|---:|---:|");
    print_row("direct", &direct_times);
    print_row("through tether-relay", &relayed_times);
    print_ratio("", &relayed_times, &direct_times);
    // A real Node.js server (when the pinned peers are installed).
    if let Some(everything) = tether_tests::peer("node_modules/.bin/mcp-server-everything") {
        let calls = calls / 5;
        let spec =
            tether_tests::stdio_server("everything", &everything.display().to_string(), &[], &[]);
        let (relayed, ticket) = relay.relay(&spec).expect("relay");
        ticket.bind(handle.sink.clone());
        let (direct, through) = interleaved_legacy(
            &mut Peer::start(Command::new(&everything)),
            &mut Peer::start(relay_command(&relayed)),
            calls,
        );
        print_row(
            &format!("server-everything (Node.js), direct, {calls} calls (interleaved)"),
            &direct,
        );
        print_row("server-everything through tether-relay", &through);
        print_ratio("server-everything ", &through, &direct);
    }
    // The HTTP relay: server-everything over streamable HTTP, direct and
    // through the host's proxy (one session each, sequential calls).
    if let Some((server, url)) =
        runtime.block_on(tether_tests::everything_over_http("streamableHttp"))
    {
        let calls = calls / 5;
        let spec = tether_core::ServerSpec::new(
            "everything-http",
            tether_core::vocab::ServerSource::Profile,
            Endpoint::Http {
                url: url.clone(),
                headers: vec![],
            },
        );
        let (relayed, ticket) = runtime
            .block_on(async { relay.relay(&spec) })
            .expect("relay");
        ticket.bind(handle.sink.clone());
        let Endpoint::Http {
            url: agent_url,
            headers,
        } = &relayed.endpoints[0]
        else {
            panic!("an HTTP relay endpoint");
        };
        let token = headers[0].value.trim_start_matches("Bearer ").to_owned();
        let (direct, through) = runtime.block_on(async {
            let direct = HttpSession::open(&url, None).await;
            let relayed = HttpSession::open(agent_url, Some(&token)).await;
            http_interleaved(&direct, &relayed, calls).await
        });
        // Killed as it drops, on the runtime that spawned it.
        runtime.block_on(async move { drop(server) });
        print_row(
            &format!("server-everything over streamable HTTP, direct, {calls} calls (interleaved)"),
            &direct,
        );
        print_row("server-everything through the HTTP relay", &through);
        print_ratio("over HTTP, ", &through, &direct);
    }
    println!("tether-relay resident memory: idle {idle} KiB, after the load {loaded} KiB");
    println!(
        "the relayed row: {observed:?}; observations not published: {}",
        relay.not_published()
    );
}
