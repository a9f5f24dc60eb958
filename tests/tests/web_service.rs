//! The live status service over real HTTP: against a real hub fed by real
//! agents (the `tether-web-fixture` host: the reference agent and the fake
//! agent), and against a store another process writes (`tether serve`).
//!
//! Every response body any test reads is kept and searched for the planted
//! secret at the end of the test.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tether_core::DriveMode;
use tether_core::model::{Evidence, Timestamp};
use tether_core::vocab::{EvidenceKind, Trigger};
use tether_diagnostics::api::Diagnostics;
use tether_diagnostics::endpoint_check::CheckLimits;
use tether_hub::AttemptRequest;
use tether_tests::{acp_hub as hub, kill_group, stdio_server, workspace_bin};
use tether_web::StatusService;

const SECRET: &str = "sk-web-planted-5f0c1e2d3a4b";
const MARKER: &str = "fixture agent says the model is warming up";

// === A small HTTP/1.1 client: full control over Host, Origin and bodies ===

struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Answer {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let mut text = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        text.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        text.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(body) = body {
        text.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    text.push_str("\r\n");
    if let Some(body) = body {
        text.push_str(body);
    }
    stream.write_all(text.as_bytes()).expect("write");
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    parse(&raw)
}

fn parse(raw: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Answer {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// An open Server-Sent Events stream, read event by event.
struct Events {
    reader: BufReader<TcpStream>,
}

impl Events {
    fn open(addr: SocketAddr, path: &str, token: &str) -> Events {
        let mut stream = TcpStream::connect(addr).expect("connect");
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nAccept: text/event-stream\r\n\r\n"
        )
        .expect("write");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).expect("status line");
        assert!(line.contains(" 200 "), "stream refused: {line}");
        loop {
            line.clear();
            reader.read_line(&mut line).expect("header");
            if line == "\r\n" {
                break;
            }
        }
        Events { reader }
    }

    /// The next event (name, data), skipping heartbeats and chunk framing.
    fn next(&mut self) -> (String, String) {
        let mut name = String::from("message");
        let mut data = String::new();
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.reader.read_line(&mut line).expect("read event");
            assert!(n > 0, "the stream ended");
            let l = line.trim_end_matches(['\r', '\n']);
            if let Some(v) = l.strip_prefix("event:") {
                name = v.trim().to_owned();
            } else if let Some(v) = l.strip_prefix("data:") {
                data.push_str(v.strip_prefix(' ').unwrap_or(v));
            } else if l.is_empty() && !data.is_empty() {
                return (name, data);
            }
        }
    }
}

// === The fixture host ===

struct Fixture {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    addr: SocketAddr,
    token: String,
    seen: Vec<String>,
    secret: String,
}

impl Fixture {
    fn start(db: Option<&std::path::Path>) -> Fixture {
        // Each fixture's own secret: it sits on its agents' and servers'
        // command lines, so finding it in /proc afterwards finds leftovers.
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let secret = format!(
            "{SECRET}x{}x{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        let mut command = Command::new(workspace_bin("tether-web-fixture"));
        command
            .args(["--secret", &secret, "--say", MARKER])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0);
        if let Some(db) = db {
            command.arg("--db").arg(db);
        }
        let mut child = command.spawn().expect("fixture");
        let stdin = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("fixture banner");
        let banner: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("fixture banner ({e}): {line:?}"));
        let url = banner["url"].as_str().expect("url");
        let addr = url.trim_start_matches("http://").parse().expect("addr");
        Fixture {
            child,
            stdin,
            stdout,
            addr,
            token: banner["token"].as_str().expect("token").to_owned(),
            seen: vec![line],
            secret,
        }
    }

    fn command(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").expect("command");
        let mut answer = String::new();
        self.stdout.read_line(&mut answer).expect("answer");
        answer.trim().to_owned()
    }

    fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }

    fn get(&mut self, path: &str) -> Answer {
        let bearer = self.bearer();
        let answer = request(self.addr, "GET", path, &[("Authorization", &bearer)], None);
        self.seen.push(answer.body.clone());
        answer
    }

    fn post(&mut self, path: &str, body: &str) -> Answer {
        let bearer = self.bearer();
        let answer = request(
            self.addr,
            "POST",
            path,
            &[
                ("Authorization", &bearer),
                ("Content-Type", "application/json"),
                ("Origin", &format!("http://{}", self.addr)),
            ],
            Some(body),
        );
        self.seen.push(answer.body.clone());
        answer
    }

    /// Quits the fixture (it kills its agents by process group) and checks
    /// no response carried the planted secret.
    fn finish(mut self) {
        let _ = self.command("quit");
        let deadline = Instant::now() + Duration::from_secs(15);
        while Instant::now() < deadline {
            if self.child.try_wait().ok().flatten().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let left = tether_tests::leftovers(&self.secret);
        assert!(left.is_empty(), "agents or servers left running: {left:?}");
        for body in &self.seen {
            assert!(
                !body.contains(SECRET),
                "a response carried the planted secret: {body}"
            );
        }
    }
}

/// A child in its own process group, killed with the group when dropped
/// (a failing test leaves nothing behind).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        kill_group(&mut self.0);
    }
}

/// `tether serve --json --db DB` in its own process group, killed with it
/// when dropped.
struct TetherServe {
    _child: Killed,
    banner: Value,
    addr: SocketAddr,
    token: String,
}

impl TetherServe {
    fn start(db: &str) -> TetherServe {
        let mut serve = Command::new(workspace_bin("tether"));
        serve
            .args(["serve", "--json", "--db", db])
            .stdout(Stdio::piped())
            .process_group(0);
        let mut child = Killed(serve.spawn().expect("tether serve"));
        let mut stdout = BufReader::new(child.0.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("banner");
        let banner: Value = serde_json::from_str(&line).expect("banner json");
        let addr = banner["url"]
            .as_str()
            .and_then(|u| u.strip_prefix("http://"))
            .and_then(|a| a.parse().ok())
            .expect("addr");
        let token = banner["token"].as_str().expect("token").to_owned();
        TetherServe {
            _child: child,
            banner,
            addr,
            token,
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        kill_group(&mut self.child);
    }
}

fn rows(status: &Value) -> Vec<(String, String)> {
    status["attempts"]
        .as_array()
        .expect("attempts")
        .iter()
        .find(|a| a["current"] == true)
        .expect("a current attempt")["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap_or("").to_owned(),
                r["status"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// A server's row in a session status document's current attempt.
fn current_row(status: &Value, server: &str) -> Value {
    status["history"]["attempts"]
        .as_array()
        .expect("attempts")
        .iter()
        .find(|a| a["attempt_id"] == status["history"]["current_attempt_id"])
        .expect("current")["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .find(|r| r["name"] == server)
        .unwrap_or_else(|| panic!("no row {server}"))
        .clone()
}

/// Keeps a served document for the out-of-process schema check (.ci/run).
fn sample(name: &str, body: &str) {
    std::fs::write(
        tether_tests::samples_dir().join(format!("{name}.json")),
        body,
    )
    .expect("write sample");
}

// === Tests ===

#[test]
fn every_status_comes_from_real_agents_and_the_stream_hydrates_then_follows_changes() {
    let mut fx = Fixture::start(None);
    let list = fx.get("/api/v1/sessions");
    assert_eq!(list.status, 200, "{}", list.body);
    let list = list.json();
    assert_eq!(list["actions"], true);
    let ids: Vec<&str> = list["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .filter_map(|s| s["session_id"].as_str())
        .collect();
    assert_eq!(ids, ["alpha", "beta", "gamma"]);

    sample("status-sessions", &fx.get("/api/v1/sessions").body);
    let alpha = fx.get("/api/v1/sessions/alpha");
    sample("status-session-alpha", &alpha.body);
    sample("status-session-beta", &fx.get("/api/v1/sessions/beta").body);
    let alpha = alpha.json();
    assert_eq!(
        rows(&alpha),
        [
            ("kandev".to_owned(), "active".to_owned()),
            ("notes".to_owned(), "delivered".to_owned())
        ]
    );
    let beta = fx.get("/api/v1/sessions/beta").json();
    assert_eq!(
        rows(&beta),
        [
            ("kandev".to_owned(), "connected".to_owned()),
            ("remote-search".to_owned(), "filtered".to_owned()),
            ("broken-db".to_owned(), "failed".to_owned())
        ]
    );
    // Evidence never leaks between sessions: beta's document names only beta.
    assert!(!fx.get("/api/v1/sessions/beta").body.contains("alpha"));

    // Hydration: the stream's first event is the current state.
    let token = fx.token.clone();
    let mut stream = Events::open(fx.addr, "/api/v1/sessions/alpha/events", &token);
    let (name, data) = stream.next();
    assert_eq!(name, "status");
    let first: Value = serde_json::from_str(&data).expect("status json");
    assert_eq!(first["history"], alpha["history"]);
    let mut list_stream = Events::open(fx.addr, "/api/v1/events", &token);
    let (name, data) = list_stream.next();
    assert_eq!(name, "sessions");
    assert!(data.contains("\"beta\""));

    // A live change: a new attempt arrives as a later event, without a reload.
    assert_eq!(fx.command("renew alpha"), "ok");
    let before = first["history"]["current_attempt_id"].clone();
    let deadline = Instant::now() + Duration::from_secs(20);
    let latest = loop {
        assert!(Instant::now() < deadline, "no live change arrived");
        let (name, data) = stream.next();
        assert_eq!(name, "status");
        let doc: Value = serde_json::from_str(&data).expect("status json");
        if doc["history"]["current_attempt_id"] != before
            && rows(&doc).first().map(|r| r.1.as_str()) == Some("active")
        {
            break doc;
        }
    };
    assert_eq!(
        latest["history"]["attempts"].as_array().map(Vec::len),
        Some(2)
    );
    fx.seen.push(latest.to_string());

    // Removal: the session's stream says so and ends; the list follows.
    let mut beta_stream = Events::open(fx.addr, "/api/v1/sessions/beta/events", &token);
    let _ = beta_stream.next();
    assert_eq!(fx.command("remove beta"), "ok");
    // Changes queued before the removal may still arrive; then the end.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(Instant::now() < deadline, "the stream never said removed");
        let (name, _) = beta_stream.next();
        if name == "removed" {
            break;
        }
        assert_eq!(name, "status");
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(Instant::now() < deadline, "the list never dropped beta");
        let (_, data) = list_stream.next();
        if !data.contains("\"beta\"") {
            break;
        }
    }
    assert_eq!(fx.get("/api/v1/sessions/beta").status, 404);
    fx.finish();
}

#[test]
fn the_locks_hold_token_host_origin_bodies_and_caller_supplied_targets() {
    let mut fx = Fixture::start(None);
    let addr = fx.addr;
    let bearer = fx.bearer();
    let own_origin = format!("http://{addr}");
    // No token, a wrong token, a token in the wrong scheme.
    for auth in [None, Some("Bearer 00"), Some(fx.token.as_str())] {
        let headers: Vec<(&str, &str)> = auth.map(|a| ("Authorization", a)).into_iter().collect();
        let answer = request(addr, "GET", "/api/v1/sessions", &headers, None);
        assert_eq!(answer.status, 401, "{auth:?}: {}", answer.body);
        sample("status-error", &answer.body);
        assert_eq!(answer.header("www-authenticate"), Some("Bearer"));
    }
    let stream = request(addr, "GET", "/api/v1/sessions/alpha/events", &[], None);
    assert_eq!(stream.status, 401);
    // The service goes through the guard every listener shares: its rules
    // (a case-insensitive scheme, `localhost` for a loopback address) and
    // its refusal codes.
    let lower = format!("bearer {}", fx.token);
    let answer = request(
        addr,
        "GET",
        "/api/v1/sessions",
        &[("Authorization", &lower)],
        None,
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let localhost = format!("localhost:{}", addr.port());
    let answer = request(
        addr,
        "GET",
        "/api/v1/sessions",
        &[("Host", &localhost), ("Authorization", &bearer)],
        None,
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let answer = request(
        addr,
        "GET",
        "/api/v1/sessions",
        &[("Host", "attacker.example"), ("Authorization", &bearer)],
        None,
    );
    assert_eq!(
        answer.json()["error"],
        tether_guard::Refusal::BadHost.code()
    );
    // A foreign Host (DNS rebinding) is refused even with the token, pages included.
    for path in ["/api/v1/sessions", "/"] {
        let answer = request(
            addr,
            "GET",
            path,
            &[("Host", "attacker.example"), ("Authorization", &bearer)],
            None,
        );
        assert_eq!(answer.status, 421, "{path}: {}", answer.body);
    }
    // A foreign Origin on an action is refused; no CORS header is ever granted.
    for origin in ["http://evil.example", "null", "http://127.0.0.1:1"] {
        let answer = request(
            addr,
            "POST",
            "/api/v1/endpoint-test",
            &[
                ("Authorization", &bearer),
                ("Origin", origin),
                ("Content-Type", "application/json"),
            ],
            Some(r#"{"session_id":"alpha","server_name":"kandev"}"#),
        );
        assert_eq!(answer.status, 403, "{origin}: {}", answer.body);
        assert_eq!(answer.header("access-control-allow-origin"), None);
    }
    let preflight = request(
        addr,
        "OPTIONS",
        "/api/v1/endpoint-test",
        &[("Origin", "http://evil.example")],
        None,
    );
    assert_eq!(preflight.header("access-control-allow-origin"), None);
    // Caller-supplied targets: only a session and a server name are accepted.
    for body in [
        r#"{"session_id":"alpha","server_name":"kandev","url":"http://127.0.0.1:1/mcp"}"#,
        r#"{"session_id":"alpha","server_name":"kandev","command":"sh"}"#,
        r#"{"session_id":"alpha","server_name":"kandev","headers":{"a":"b"}}"#,
        r#"{"session_id":"alpha","server_name":"kandev","env":{"A":"b"}}"#,
        r#"{"session_id":"alpha","url":"http://127.0.0.1:1/mcp"}"#,
        "not json",
    ] {
        let answer = fx.post("/api/v1/endpoint-test", body);
        assert_eq!(answer.status, 400, "{body}: {}", answer.body);
        assert_eq!(answer.json()["error"], "invalid_request");
    }
    let answer = fx.post(
        "/api/v1/recent-output",
        r#"{"session_id":"alpha","command":"cat /etc/passwd"}"#,
    );
    assert_eq!(answer.status, 400);
    // A server name the session does not have.
    let answer = fx.post(
        "/api/v1/endpoint-test",
        r#"{"session_id":"alpha","server_name":"http://127.0.0.1:1/mcp"}"#,
    );
    assert_eq!(answer.status, 404, "{}", answer.body);
    // Bodies are capped, and must be JSON.
    let big = format!(
        r#"{{"session_id":"alpha","server_name":"{}"}}"#,
        "x".repeat(64 * 1024)
    );
    // Every refusal is a status-error document, the framework's own too:
    // a body past the cap, 5 KB (just over it) or 64 KB, and a wrong method.
    for size in [5 * 1024, 64 * 1024] {
        let big = format!(
            r#"{{"session_id":"alpha","server_name":"{}"}}"#,
            "x".repeat(size)
        );
        let answer = fx.post("/api/v1/endpoint-test", &big);
        assert_eq!(answer.status, 413);
        assert_eq!(answer.json()["error"], "too_large", "{}", answer.body);
    }
    let answer = fx.post("/api/v1/sessions", "{}");
    assert_eq!(answer.status, 405);
    assert_eq!(
        answer.json()["error"],
        "method_not_allowed",
        "{}",
        answer.body
    );
    assert_eq!(fx.post("/api/v1/endpoint-test", &big).status, 413);
    let plain = request(
        addr,
        "POST",
        "/api/v1/recent-output",
        &[("Authorization", &bearer), ("Content-Type", "text/plain")],
        Some(r#"{"session_id":"alpha"}"#),
    );
    assert_eq!(plain.status, 415);
    // A login code works once, from the page's own origin only.
    let link = fx.post("/api/v1/login-links", "{}").json();
    let code = link["path"]
        .as_str()
        .and_then(|p| p.strip_prefix("/#login="))
        .expect("login path")
        .to_owned();
    let redeem = |origin: Option<&str>| {
        let mut headers = vec![("Content-Type", "application/json")];
        if let Some(o) = origin {
            headers.push(("Origin", o));
        }
        request(
            addr,
            "POST",
            "/api/v1/login",
            &headers,
            Some(&format!(r#"{{"code":"{code}"}}"#)),
        )
    };
    assert_eq!(redeem(None).status, 403, "no Origin: not the page");
    assert_eq!(redeem(Some("http://evil.example")).status, 403);
    let bought = redeem(Some(&own_origin));
    assert_eq!(bought.status, 200, "{}", bought.body);
    assert_eq!(bought.json()["token"], fx.token.as_str());
    assert_eq!(redeem(Some(&own_origin)).status, 401, "a code works once");
    // The page itself: no token needed, locked down by its headers.
    let page = request(addr, "GET", "/", &[], None);
    assert_eq!(page.status, 200);
    let csp = page.header("content-security-policy").unwrap_or("");
    assert!(csp.contains("default-src 'none'") && csp.contains("connect-src 'self'"));
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
    assert!(
        !page.body.contains(&fx.token),
        "the page never embeds the token"
    );
    // It carries core's display vocabulary as data (not script the policy
    // would run), so the view spells no label, color or sentence itself.
    let open = r#"<script type="application/json" id="display">"#;
    let start = page.body.find(open).expect("the display vocabulary") + open.len();
    let end = start + page.body[start..].find("</script>").expect("closed");
    let carried = &page.body[start..end];
    assert!(!carried.contains('<'), "nothing in it can end the element");
    let carried: serde_json::Value = serde_json::from_str(carried).expect("JSON");
    assert_eq!(
        carried,
        serde_json::to_value(tether_words::display::vocabulary()).expect("json")
    );
    assert_eq!(carried["steps"][2]["label"], "Connected", "{carried}");
    sample("status-display", &carried.to_string());
    fx.finish();
}

#[test]
fn actions_test_the_endpoint_into_the_history_and_recent_output_never_reaches_the_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("web.db");
    let mut fx = Fixture::start(Some(&db));
    let agent_row = current_row(&fx.get("/api/v1/sessions/alpha").json(), "kandev");
    // The endpoint test runs through the diagnostics API and lands in the
    // history, so every viewer sees it.
    let answer = fx.post(
        "/api/v1/endpoint-test",
        r#"{"session_id":"alpha","server_name":"kandev"}"#,
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let report = answer.json();
    assert_eq!(report["succeeded"], true, "{report}");
    assert_eq!(report["tool_count"], 1);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let row = current_row(&fx.get("/api/v1/sessions/alpha").json(), "kandev");
        if row["endpoint_test"]["succeeded"] == true {
            // Reachability only: the status, the agent's client and its
            // newest connection are untouched.
            assert_eq!(row["status"], "active");
            assert_eq!(row["client"], agent_row["client"], "{row}");
            assert_ne!(row["client"]["name"], "tether-endpoint-test", "{row}");
            assert_eq!(row["connection_id"], agent_row["connection_id"], "{row}");
            assert_eq!(row["connections"], agent_row["connections"], "{row}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the result never reached the history"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // A third-party server's test goes through the same path.
    let notes = fx.post(
        "/api/v1/endpoint-test",
        r#"{"session_id":"alpha","server_name":"notes"}"#,
    );
    assert_eq!(notes.json()["succeeded"], true, "{}", notes.body);

    // Recent output: live, scrubbed, returned, and never stored.
    let output = fx.post("/api/v1/recent-output", r#"{"session_id":"beta"}"#);
    assert_eq!(output.status, 200, "{}", output.body);
    let doc = output.json();
    assert_eq!(doc["state"], "live");
    sample("status-recent-output", &output.body);
    assert!(output.body.contains(MARKER), "{}", output.body);
    // The copy-safe diagnostics carry neither the output nor a secret.
    let copy = fx.get("/api/v1/sessions/beta/diagnostics");
    assert_eq!(copy.status, 200);
    sample("status-diagnostics", &copy.body);
    let text = copy.json()["text"].as_str().expect("text").to_owned();
    assert!(
        text.contains("broken-db") && text.contains("session_new_failed"),
        "{text}"
    );
    assert!(!text.contains(MARKER), "{text}");
    let unknown = fx.post("/api/v1/recent-output", r#"{"session_id":"nobody"}"#);
    assert_eq!(unknown.json()["state"], "unavailable");
    fx.finish();
    // Every byte of the store, WAL included: no output, no secret.
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(dir.path()).expect("dir").flatten() {
        bytes.extend(std::fs::read(entry.path()).expect("read"));
    }
    let haystack = String::from_utf8_lossy(&bytes);
    assert!(haystack.contains("broken-db"), "the store was written");
    assert!(
        !haystack.contains(MARKER),
        "recent output reached the store"
    );
    assert!(!haystack.contains(SECRET), "a secret reached the store");
}

/// GIVEN the host's own server delivered to an agent that never connects
/// (`gamma`) WHEN the page's "Test endpoint" runs on it THEN the test passes
/// and lands beside the row, and the row stays Delivered: no client, no
/// connection. Tether's own contact is reachability, never attachment.
#[test]
fn an_endpoint_test_of_the_hosts_own_server_never_makes_a_delivered_row_connected() {
    let mut fx = Fixture::start(None);
    let current_kandev =
        |fx: &mut Fixture| current_row(&fx.get("/api/v1/sessions/gamma").json(), "kandev");
    let deadline = Instant::now() + Duration::from_secs(10);
    while current_kandev(&mut fx)["status"] != "delivered" {
        assert!(Instant::now() < deadline, "{}", current_kandev(&mut fx));
        std::thread::sleep(Duration::from_millis(100));
    }
    let answer = fx.post(
        "/api/v1/endpoint-test",
        r#"{"session_id":"gamma","server_name":"kandev"}"#,
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.json()["succeeded"], true, "{}", answer.body);
    let deadline = Instant::now() + Duration::from_secs(10);
    let row = loop {
        let row = current_kandev(&mut fx);
        if row["endpoint_test"]["succeeded"] == true {
            break row;
        }
        assert!(
            Instant::now() < deadline,
            "the result never reached the row"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(row["status"], "delivered", "{row}");
    assert!(row["client"].is_null(), "{row}");
    assert_eq!(row["connections"], serde_json::json!([]), "{row}");
    fx.finish();
}

#[test]
fn tether_serve_follows_a_store_another_process_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("serve.db");
    let mut fx = Fixture::start(Some(&db));
    let served = TetherServe::start(db.to_str().expect("path"));
    let (addr, token) = (served.addr, served.token.clone());
    assert!(
        served.banner["login_url"]
            .as_str()
            .is_some_and(|u| u.contains("/#login="))
    );
    let bearer = format!("Bearer {token}");
    let list = request(
        addr,
        "GET",
        "/api/v1/sessions",
        &[("Authorization", &bearer)],
        None,
    );
    assert_eq!(list.status, 200, "{}", list.body);
    assert_eq!(
        list.json()["actions"],
        false,
        "a store reader has no actions"
    );
    // The host writes through in the background: wait (bounded) for both rows.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !request(
        addr,
        "GET",
        "/api/v1/sessions",
        &[("Authorization", &bearer)],
        None,
    )
    .body
    .contains("\"beta\"")
    {
        assert!(
            Instant::now() < deadline,
            "the stored sessions never appeared"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut stream = Events::open(addr, "/api/v1/sessions/alpha/events", &token);
    let (_, data) = stream.next();
    let first: Value = serde_json::from_str(&data).expect("json");
    // The host changes the store; the reader's stream follows without a reload.
    assert_eq!(fx.command("renew alpha"), "ok");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        assert!(Instant::now() < deadline, "the store change never arrived");
        let (_, data) = stream.next();
        let doc: Value = serde_json::from_str(&data).expect("json");
        if doc["history"]["current_attempt_id"] != first["history"]["current_attempt_id"] {
            assert!(!data.contains(SECRET));
            break;
        }
    }
    // Actions are refused honestly; recent output is unavailable, never read from the store.
    let test = request(
        addr,
        "POST",
        "/api/v1/endpoint-test",
        &[
            ("Authorization", &bearer),
            ("Content-Type", "application/json"),
        ],
        Some(r#"{"session_id":"alpha","server_name":"kandev"}"#),
    );
    assert_eq!(test.status, 409, "{}", test.body);
    let output = request(
        addr,
        "POST",
        "/api/v1/recent-output",
        &[
            ("Authorization", &bearer),
            ("Content-Type", "application/json"),
        ],
        Some(r#"{"session_id":"beta"}"#),
    );
    assert_eq!(output.json()["state"], "unavailable");
    drop(served);
    fx.finish();
}

/// `tether check ARGS --db DB --format json` on the same store: its exit
/// code, stdout and stderr.
fn tether_check(db: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(workspace_bin("tether"))
        .args(["check", "--db", db, "--format", "json"])
        .args(args)
        .output()
        .expect("tether check");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// GIVEN a store a real host writes and `tether serve` reading it
/// WHEN a client asks `/api/v1/sessions/alpha/check` with requirements
/// THEN it gets the CheckDocument `tether check alpha` prints on that store
/// (one verdict, whatever the way in), a misspelt stage is a 400 in `tether
/// check`'s words (its exit 2), and the route is locked like every other.
#[test]
fn a_stored_session_checked_over_http_gives_tether_checks_verdict() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("check.db");
    let db_path = db.to_str().expect("path").to_owned();
    let mut fx = Fixture::start(Some(&db));
    let served = TetherServe::start(&db_path);
    let bearer = format!("Bearer {}", served.token);
    let get = |path: &str| {
        request(
            served.addr,
            "GET",
            path,
            &[("Authorization", &bearer)],
            None,
        )
    };
    let path = "/api/v1/sessions/alpha/check?require=kandev:tools_listed&require=notes\
                &require=nope&require_tool=kandev/echo:used";
    // A call of kandev's `echo`, observed on alpha.
    assert!(fx.command("publish alpha echo").starts_with("ok"));
    // The host writes through in the background: wait (bounded) until the
    // store holds alpha's rows as the live host shows them, the call too.
    let deadline = Instant::now() + Duration::from_secs(20);
    let doc = loop {
        let answer = get(path);
        fx.seen.push(answer.body.clone());
        let outcomes = &answer.json()["sessions"][0]["requirements"];
        if answer.status == 200 && outcomes[0]["met"] == true && outcomes[3]["met"] == true {
            break answer.json();
        }
        assert!(
            Instant::now() < deadline,
            "alpha's kandev and its call never read as stored: {} {}",
            answer.status,
            answer.body
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let outcomes = doc["sessions"][0]["requirements"]
        .as_array()
        .expect("requirements");
    let met: Vec<(&str, bool)> = outcomes
        .iter()
        .map(|o| (o["requirement"].as_str().unwrap_or("?"), o["met"] == true))
        .collect();
    assert_eq!(
        met,
        [
            ("kandev:tools_listed", true),
            ("notes", false),
            ("nope", false),
            ("kandev/echo:used", true)
        ],
        "{doc:#}"
    );
    assert_eq!(doc["met"], false);
    // The CLI on the same store: the same document, and its exit 4.
    let (code, stdout, stderr) = tether_check(
        &db_path,
        &[
            "alpha",
            "--require",
            "kandev:tools_listed",
            "--require-tool",
            "kandev/echo:used",
            "--require",
            "notes",
            "--require",
            "nope",
        ],
    );
    assert_eq!(code, 4, "{stderr}");
    let cli: Value = serde_json::from_str(&stdout).expect("check json");
    assert_eq!(cli, doc, "tether check and the service disagree");
    // Without requirements, every server the session names, at `reached`.
    let every = get("/api/v1/sessions/alpha/check");
    assert_eq!(every.status, 200, "{}", every.body);
    let (_, stdout, _) = tether_check(&db_path, &["alpha"]);
    assert_eq!(
        every.json(),
        serde_json::from_str::<Value>(&stdout).expect("json")
    );
    fx.seen.push(every.body);

    // A misspelt stage: 400, in `tether check`'s words (exit 2 there).
    let bad = get("/api/v1/sessions/alpha/check?require=kandev:usedd");
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(bad.json()["error"], "bad_requirement");
    let message = bad.json()["message"].as_str().expect("message").to_owned();
    let words = message
        .strip_prefix("require: ")
        .expect("names its parameter");
    assert!(words.contains("did you mean \"used\""), "{message}");
    let (code, _, stderr) = tether_check(&db_path, &["alpha", "--require", "kandev:usedd"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains(words), "{stderr} lacks {words}");
    // A tool's stage a tool cannot have, a parameter the route does not take.
    for query in ["require_tool=kandev/echo:initialized", "format=json"] {
        let bad = get(&format!("/api/v1/sessions/alpha/check?{query}"));
        assert_eq!(bad.status, 400, "{query}: {}", bad.body);
        fx.seen.push(bad.body);
    }
    // A session the store does not hold; more requirements than a check takes.
    assert_eq!(
        get("/api/v1/sessions/zeta/check?require=kandev").status,
        404
    );
    let many = vec!["require=kandev"; tether_web::service::MAX_REQUIREMENTS + 1].join("&");
    let refused = get(&format!("/api/v1/sessions/alpha/check?{many}"));
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(refused.json()["error"], "bad_requirement");
    // Locked like every route: the token, then the Host.
    let none = request(
        served.addr,
        "GET",
        "/api/v1/sessions/alpha/check",
        &[],
        None,
    );
    assert_eq!(none.status, 401, "{}", none.body);
    let foreign = request(
        served.addr,
        "GET",
        "/api/v1/sessions/alpha/check",
        &[("Host", "attacker.example"), ("Authorization", &bearer)],
        None,
    );
    assert_eq!(foreign.status, 421, "{}", foreign.body);
    fx.seen.push(message);
    drop(served);
    fx.finish();
}

// === In process: a slow client, one test in flight ===

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_client_skips_to_the_latest_state_and_one_test_runs_per_server() {
    let hub = hub();
    let hostile = workspace_bin("tether-hostile-mcp");
    let handle = hub
        .begin_attempt(AttemptRequest::new(
            tether_core::Owner {
                task: "t".into(),
                session: "slow".into(),
                execution: "e".into(),
            },
            "agent",
            DriveMode::Acp,
            Trigger::SessionNew,
            vec![stdio_server(
                "hangs",
                hostile.to_str().expect("path"),
                &["--mode", "never"],
                &[],
            )],
        ))
        .expect("attempt");
    let diagnostics = Arc::new(
        Diagnostics::new(tether_diagnostics::api::allow_all()).with_limits(CheckLimits {
            timeout: Duration::from_secs(3),
            ..CheckLimits::default()
        }),
    );
    diagnostics.remember_attempt("slow", &handle);
    let running = StatusService::for_hub(Arc::clone(&hub), Some(Arc::clone(&diagnostics)))
        .serve("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("serve");
    let addr = running.addr();
    let token = running.token().secret().to_owned();

    // A client that opens the stream and then does not read while 3,000
    // changes happen (each a whole-state event of several KiB).
    let slow = tokio::task::spawn_blocking({
        let token = token.clone();
        move || Events::open(addr, "/api/v1/sessions/slow/events", &token)
    })
    .await
    .expect("open");
    for i in 0..3000u32 {
        let evidence = Evidence::new(
            EvidenceKind::ToolCallObserved,
            Timestamp(1000 + u64::from(i)),
        )
        .server("hangs")
        .tool_call(format!("tool-{i}"), true);
        while handle.sink.publish(evidence.clone()).is_err() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        if i % 100 == 0 {
            hub.flush().await;
        }
    }
    hub.flush().await;
    let final_revision = hub.snapshot("slow").expect("snapshot").revision;
    // Now read: far fewer events than changes, and the last is the latest.
    let (events, last) = tokio::task::spawn_blocking(move || {
        let mut slow = slow;
        let mut events = 0;
        loop {
            let (name, data) = slow.next();
            assert_eq!(name, "status");
            events += 1;
            let doc: Value = serde_json::from_str(&data).expect("json");
            if doc["history"]["revision"].as_u64() == Some(final_revision) {
                return (events, doc);
            }
        }
    })
    .await
    .expect("read");
    assert!(
        events < 3000 / 2,
        "{events} events for 3000 changes: not latest-wins"
    );
    let last_call = &last["history"]["attempts"][0]["servers"][0]["last_tool_call"]["tool"];
    assert_eq!(last_call, "tool-2999");

    // One endpoint test in flight per server: the second is refused while the
    // first waits on a server that never answers (bounded by the limit).
    let post = move || {
        let bearer = format!("Bearer {token}");
        request(
            addr,
            "POST",
            "/api/v1/endpoint-test",
            &[
                ("Authorization", bearer.as_str()),
                ("Content-Type", "application/json"),
            ],
            Some(r#"{"session_id":"slow","server_name":"hangs"}"#),
        )
    };
    let first = tokio::task::spawn_blocking(post.clone());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let second = tokio::task::spawn_blocking(post.clone())
        .await
        .expect("second");
    assert_eq!(second.status, 409, "{}", second.body);
    assert_eq!(second.json()["error"], "busy");
    let first = first.await.expect("first");
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(
        first.json()["succeeded"],
        false,
        "a silent server fails its test"
    );
    assert_eq!(first.json()["reason_code"], "timeout");
    // Done: the next test may run.
    let third = tokio::task::spawn_blocking(post).await.expect("third");
    assert_eq!(third.status, 200);
    running.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_authorizer_sees_each_session_and_hides_what_it_refuses() {
    let hub = hub();
    for session in ["mine", "theirs"] {
        hub.begin_attempt(AttemptRequest::new(
            tether_core::Owner {
                task: "t".into(),
                session: session.into(),
                execution: "e".into(),
            },
            "agent",
            DriveMode::Acp,
            Trigger::SessionNew,
            vec![stdio_server("files", "mcp-files", &[], &[])],
        ))
        .expect("attempt");
    }
    hub.flush().await;
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = Arc::clone(&asked);
    let running = StatusService::for_hub(Arc::clone(&hub), None)
        .with_authorizer(Arc::new(
            move |principal: &str, session: &str, action: tether_web::Action| {
                log.lock()
                    .expect("log")
                    .push(format!("{principal} {session} {action:?}"));
                if session == "theirs" {
                    Err("not your session".to_owned())
                } else {
                    Ok(())
                }
            },
        ))
        .serve("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("serve");
    let addr = running.addr();
    let bearer = format!("Bearer {}", running.token().secret());
    let answers = tokio::task::spawn_blocking(move || {
        let get = |path: &str| request(addr, "GET", path, &[("Authorization", &bearer)], None);
        let post = |path: &str, body: &str| {
            request(
                addr,
                "POST",
                path,
                &[
                    ("Authorization", &bearer),
                    ("Content-Type", "application/json"),
                ],
                Some(body),
            )
        };
        vec![
            get("/api/v1/sessions"),
            get("/api/v1/sessions/mine"),
            get("/api/v1/sessions/theirs"),
            get("/api/v1/sessions/theirs/events"),
            get("/api/v1/sessions/theirs/diagnostics"),
            get("/api/v1/sessions/theirs/check?require=files"),
            post(
                "/api/v1/endpoint-test",
                r#"{"session_id":"theirs","server_name":"files"}"#,
            ),
            post("/api/v1/recent-output", r#"{"session_id":"theirs"}"#),
        ]
    })
    .await
    .expect("requests");
    let list = answers[0].json();
    let ids: Vec<&str> = list["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .filter_map(|s| s["session_id"].as_str())
        .collect();
    assert_eq!(ids, ["mine"], "a refused session is not even listed");
    assert_eq!(answers[1].status, 200);
    for refused in &answers[2..] {
        assert_eq!(refused.status, 403, "{}", refused.body);
        assert!(refused.body.contains("not your session"));
        assert!(!refused.body.contains("mcp-files"));
    }
    let asked = asked.lock().expect("log").clone();
    assert!(
        asked.contains(&"status-token theirs EndpointTest".to_owned()),
        "{asked:?}"
    );
    assert!(
        asked.contains(&"status-token theirs RecentOutput".to_owned()),
        "{asked:?}"
    );
    running.shutdown().await;
}

/// The test server (`TETHER_TEST_POSTGRES`), or a loud skip.
fn test_postgres(what: &str) -> Option<String> {
    let url = std::env::var("TETHER_TEST_POSTGRES").ok();
    if url.is_none() {
        assert!(
            std::env::var_os("TETHER_REQUIRE_POSTGRES").is_none(),
            "TETHER_REQUIRE_POSTGRES=1 but TETHER_TEST_POSTGRES names no server"
        );
        eprintln!("SKIP: TETHER_TEST_POSTGRES is not set; {what} did not run");
    }
    url
}

#[test]
fn tether_serve_follows_postgres_by_notify() {
    let Some(url) = test_postgres("tether serve over PostgreSQL") else {
        return;
    };
    use tether_core::store::Store;
    let store = tether_store::PostgresStore::connect(&url).expect("connect");
    let session = format!("web-serve-{}", std::process::id());
    let first = tether_store::conformance::sample_history(&session, 1, SECRET);
    store.save(&first).expect("save");
    let served = TetherServe::start(&url);
    assert!(
        !served.banner.to_string().contains("postgres://"),
        "the banner never shows the store URL"
    );
    let (addr, token) = (served.addr, served.token.clone());
    let mut stream = Events::open(addr, &format!("/api/v1/sessions/{session}/events"), &token);
    let (_, data) = stream.next();
    assert!(data.contains("\"revision\":1"), "{data}");
    // Another writer raises the revision; NOTIFY wakes the reader.
    let mut second = first.clone();
    second.revision = 2;
    second.attempts.truncate(1);
    store.save(&second).expect("save revision 2");
    let (_, data) = stream.next();
    assert!(data.contains("\"revision\":2"), "{data}");
    assert!(!data.contains(SECRET));
    // Removal ends the session's stream.
    store.remove(&session).expect("remove");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(Instant::now() < deadline, "the removal never arrived");
        if stream.next().0 == "removed" {
            break;
        }
    }
    drop(served);
}

// === A fleet: two hosts on one PostgreSQL, one killed and restarted ===

/// One `tether-store-writer` host in its own process group (killed with it
/// when dropped), its stdout lines collected as they come.
struct WriterHost {
    _child: Killed,
    pid: u32,
    lines: Arc<std::sync::Mutex<Vec<String>>>,
}

impl WriterHost {
    fn start(url: &str, prefix: &str) -> WriterHost {
        let mut command = Command::new(workspace_bin("tether-store-writer"));
        command
            .args([url, prefix])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0);
        let mut child = Killed(command.spawn().expect("tether-store-writer"));
        let stdout = child.0.stdout.take().expect("stdout");
        let lines = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.lock().expect("lines").push(line);
            }
        });
        WriterHost {
            pid: child.0.id(),
            _child: child,
            lines,
        }
    }

    /// The first line `pick` accepts, waiting at most 30 s.
    fn wait_for<T>(&self, what: &str, pick: impl Fn(&str) -> Option<T>) -> T {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(found) = self
                .lines
                .lock()
                .expect("lines")
                .iter()
                .find_map(|l| pick(l))
            {
                return found;
            }
            assert!(Instant::now() < deadline, "writer {}: no {what}", self.pid);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The newest `ROUND stale=S failed=F` line: (round, stale, failed).
    fn counters(&self) -> (u64, u64, u64) {
        let lines = self.lines.lock().expect("lines");
        lines
            .iter()
            .rev()
            .find_map(|l| parse_counters(l))
            .unwrap_or((0, 0, 0))
    }

    fn wait_round(&self, round: u64) {
        self.wait_for(&format!("round {round}"), |l| {
            parse_counters(l).filter(|(n, _, _)| *n >= round)
        });
    }
}

fn parse_counters(line: &str) -> Option<(u64, u64, u64)> {
    let mut words = line.split(' ');
    let round = words.next()?.parse().ok()?;
    let stale = words.next()?.strip_prefix("stale=")?.parse().ok()?;
    let failed = words.next()?.strip_prefix("failed=")?.parse().ok()?;
    Some((round, stale, failed))
}

/// What issue 18 says will be checked: two host processes write the same
/// sessions into one PostgreSQL; one is killed with SIGKILL mid-burst and
/// restarted. Then: no stored revision ever went back (watched throughout by
/// a third process's reads), no row is torn, the restarted host restored the
/// stored sessions and its writes land again, the stale-write counters show
/// the refusals and no failure, and the live view (`tether serve`, woken by
/// NOTIFY) follows the restarted host without ever going back either.
#[test]
fn two_hosts_on_one_postgres_one_killed_and_restarted_mid_burst() {
    use tether_core::store::Store;
    let Some(url) = test_postgres("the two-host fleet test") else {
        return;
    };
    let prefix = format!("fleet-{}-", std::process::id());
    let sessions: Vec<String> = (0..4).map(|i| format!("{prefix}s{i}")).collect();
    let a = WriterHost::start(&url, &prefix);
    let b = WriterHost::start(&url, &prefix);
    a.wait_round(20);
    b.wait_round(20);

    // A third process's view of the rows, read all along: never backwards.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (url, sessions, stop) = (url.clone(), sessions.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let reader = tether_store::PostgresStore::connect(&url).expect("reader");
            let mut newest = vec![0u64; sessions.len()];
            let mut backwards = Vec::new();
            let mut reads = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for (i, session) in sessions.iter().enumerate() {
                    if let Ok(Some(history)) = reader.load(session) {
                        reads += 1;
                        if history.revision < newest[i] {
                            backwards.push((session.clone(), newest[i], history.revision));
                        }
                        newest[i] = newest[i].max(history.revision);
                    }
                }
            }
            (backwards, newest, reads)
        })
    };

    let served = TetherServe::start(&url);
    let mut stream = Events::open(
        served.addr,
        &format!("/api/v1/sessions/{}/events", sessions[0]),
        &served.token,
    );

    // SIGKILL the first host mid-burst, then start it again.
    let (_, stale_a, failed_a) = a.counters();
    let killed_pid = a.pid;
    drop(a);
    let a2 = WriterHost::start(&url, &prefix);
    let restored = a2.wait_for("restored line", |l| {
        l.strip_prefix("restored ")
            .and_then(|n| n.parse::<usize>().ok())
    });
    assert_eq!(
        restored, 4,
        "the restarted host restored the four stored sessions"
    );
    a2.wait_round(20);
    // Two live hosts writing one session take turns only by chance: each
    // write must outrun the other's revision, a random walk with no bound.
    // So once both have raced through the restart, the other host stops,
    // and from then on the restarted host's writes must land.
    b.wait_round(b.counters().0 + 20);
    let (_, stale_b, failed_b) = b.counters();
    drop(b);

    // Its writes land again: a stored row's current attempt is its own.
    let reader = tether_store::PostgresStore::connect(&url).expect("reader");
    let mine = format!("e-{}", a2.pid);
    // Bounded, and ended by the evidence itself.
    let deadline = Instant::now() + Duration::from_secs(90);
    let landed = loop {
        let found = sessions.iter().find(|s| {
            reader
                .load(s)
                .ok()
                .flatten()
                .is_some_and(|h| h.current().is_some_and(|c| c.execution_id == mine))
        });
        if let Some(found) = found {
            break found.clone();
        }
        assert!(
            Instant::now() < deadline,
            "the restarted host's writes never landed (all refused as stale?)"
        );
        std::thread::sleep(Duration::from_millis(50));
    };

    // The live view follows: revisions only go up, and the restarted host shows.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut last = 0u64;
    let mut events = 0;
    loop {
        let (name, data) = stream.next();
        if name == "removed" {
            panic!("{} was removed while two hosts wrote it", sessions[0]);
        }
        let Ok(doc) = serde_json::from_str::<Value>(&data) else {
            continue;
        };
        let Some(revision) = doc["history"]["revision"].as_u64() else {
            continue;
        };
        events += 1;
        assert!(
            revision >= last,
            "the live view went back from {last} to {revision}"
        );
        last = revision;
        if data.contains(&format!("\"execution_id\":\"{mine}\"")) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the live view never showed the restarted host ({events} events, newest revision {last})"
        );
    }

    // The counters: refusals counted (two hosts on the same sessions), no failure.
    let (_, stale_a2, failed_a2) = a2.counters();
    assert_eq!(
        (failed_a, failed_b, failed_a2),
        (0, 0, 0),
        "no write failed (host {killed_pid} before its kill, the other, the restarted one)"
    );
    assert!(
        stale_a + stale_b + stale_a2 > 0,
        "two hosts writing the same sessions were refused as stale at least once"
    );
    drop(a2);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (backwards, newest, reads) = watcher.join().expect("watcher");
    assert!(reads > 0, "the watcher read the rows");
    assert!(
        backwards.is_empty(),
        "a stored revision went back: {backwards:?}"
    );

    let after = reader.load_all().expect("load all");
    tether_tests::assert_no_torn_row(&after, &prefix);
    for (i, session) in sessions.iter().enumerate() {
        let stored = reader.load(session).expect("load").expect("row");
        assert!(
            stored.revision >= newest[i],
            "{session} went back at the end"
        );
    }
    eprintln!(
        "fleet: stale refusals {stale_a} (killed host) + {stale_b} + {stale_a2} (restarted), \
         {reads} watcher reads, {events} live events, restarted host landed on {landed}"
    );
    for session in &sessions {
        let _ = reader.remove(session);
    }
    drop(served);
}

/// GIVEN a store holding live sessions of the reference agent (written by a
/// host) and the six harnesses' real recorded sessions (imported with
/// `tether sessions import`) WHEN `tether serve` answers the fleet page's
/// routes THEN every filter narrows the list to exactly the sessions that
/// match, pages are disjoint and counted over every match, the server view's
/// counts are the sum over its harnesses and over the sessions the list
/// gives for that server, a bad filter is a 400 that names it, no route
/// answers without the token, and a session added later is told on the
/// fleet's event stream and then in the list.
#[test]
fn tether_serve_answers_the_fleet_page_over_live_and_recorded_sessions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("fleet.db");
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/records");
    let import = |kind: &str| {
        let out = Command::new(workspace_bin("tether"))
            .args(["sessions", "import", "--db"])
            .arg(&db)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", fixtures.join(kind))
            .output()
            .expect("tether sessions import");
        assert!(
            out.status.success(),
            "{kind}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    for kind in ["claude", "codex", "gemini", "qwen", "copilot"] {
        import(kind);
    }
    let fx = Fixture::start(Some(&db));
    let served = TetherServe::start(db.to_str().expect("path"));
    let (addr, token) = (served.addr, served.token.clone());
    let bearer = format!("Bearer {token}");
    let get = |path: &str| request(addr, "GET", path, &[("Authorization", &bearer)], None);
    // Wait (bounded) for the host's live sessions to be written through.
    let deadline = Instant::now() + Duration::from_secs(20);
    let all = loop {
        let all = get("/api/v1/fleet/sessions?limit=200");
        assert_eq!(all.status, 200, "{}", all.body);
        let doc = all.json();
        // Five imported, and the host's alpha, beta and gamma.
        if doc["harnesses"]["tether-reference-agent"].as_u64() == Some(1)
            && doc["total"].as_u64() >= Some(8)
        {
            break doc;
        }
        assert!(
            Instant::now() < deadline,
            "the live sessions never arrived: {doc:#}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    std::fs::write(
        tether_tests::samples_dir().join("status-fleet-sessions.json"),
        all.to_string(),
    )
    .expect("sample");
    let listed = get("/api/v1/sessions").json();
    assert_eq!(
        all["total"].as_u64(),
        Some(listed["sessions"].as_array().expect("sessions").len() as u64),
        "the fleet list holds every session"
    );
    let sessions = |query: &str| -> Vec<Value> {
        let answer = get(&format!("/api/v1/fleet/sessions?{query}"));
        assert_eq!(answer.status, 200, "{query}: {}", answer.body);
        let doc = answer.json();
        let page = doc["sessions"].as_array().expect("sessions").clone();
        assert_eq!(
            doc["total"].as_u64(),
            Some(page.len() as u64),
            "{query}: one page holds all"
        );
        page
    };
    let detail = |id: &str| -> Value {
        let answer = get(&format!("/api/v1/sessions/{}", id.replace(':', "%3A")));
        assert_eq!(answer.status, 200, "{id}: {}", answer.body);
        answer.json()
    };
    let current_rows = |id: &str| -> Vec<Value> {
        let doc = detail(id);
        let current = doc["history"]["current_attempt_id"].clone();
        doc["history"]["attempts"]
            .as_array()
            .expect("attempts")
            .iter()
            .find(|a| a["attempt_id"] == current)
            .expect("current")["servers"]
            .as_array()
            .expect("servers")
            .clone()
    };
    // Harness.
    let claude = sessions("harness=claude&limit=200");
    assert_eq!(claude.len(), 1);
    assert_eq!(
        claude[0]["session_id"],
        "claude:2d8efbcf-e501-440d-89ec-66cb10f9d678"
    );
    assert_eq!(claude[0]["project"], ".tmpf23dO3");
    // Status, with a server: exactly the sessions where that server failed.
    let broken = sessions("server=broken&status=failed&limit=200");
    assert!(!broken.is_empty());
    for s in &all["sessions"].as_array().expect("sessions").clone() {
        let id = s["session_id"].as_str().expect("id");
        let failed = current_rows(id)
            .iter()
            .any(|r| r["name"] == "broken" && r["status"] == "failed");
        assert_eq!(
            broken.iter().any(|b| b["session_id"] == id),
            failed,
            "{id}: in the list exactly when its broken row failed"
        );
    }
    // Free text, any case, on server names.
    let text = sessions("q=TIM&limit=200");
    for s in &text {
        let id = s["session_id"].as_str().expect("id");
        assert!(
            current_rows(id).iter().any(|r| r["name"]
                .as_str()
                .is_some_and(|n| n.to_lowercase().contains("tim"))),
            "{id}"
        );
    }
    // Pages: disjoint, in order, counted over every match.
    let page = |offset: u32| get(&format!("/api/v1/fleet/sessions?limit=2&offset={offset}")).json();
    let (one, two) = (page(0), page(2));
    assert_eq!(one["total"], all["total"]);
    let ids = |doc: &Value| -> Vec<String> {
        doc["sessions"]
            .as_array()
            .expect("sessions")
            .iter()
            .map(|s| s["session_id"].as_str().expect("id").to_owned())
            .collect()
    };
    let first_four: Vec<String> = ids(&all).into_iter().take(4).collect();
    assert_eq!([ids(&one), ids(&two)].concat(), first_four);
    // The server view: its counts are the sum over harnesses, and over the
    // sessions the list gives for that server.
    let servers = get("/api/v1/fleet/servers");
    assert_eq!(servers.status, 200, "{}", servers.body);
    let servers = servers.json();
    std::fs::write(
        tether_tests::samples_dir().join("status-fleet-servers.json"),
        servers.to_string(),
    )
    .expect("sample");
    for server in servers["servers"].as_array().expect("servers") {
        let name = server["name"].as_str().expect("name");
        let by_harness = server["by_harness"].as_object().expect("by_harness");
        for field in [
            "sessions",
            "active",
            "failed",
            "needs_auth",
            "delivered",
            "held_back",
            "unknown",
        ] {
            let sum: u64 = by_harness
                .values()
                .map(|c| c[field].as_u64().expect("n"))
                .sum();
            assert_eq!(server["all"][field].as_u64(), Some(sum), "{name}.{field}");
        }
        let with = sessions(&format!("server={}&limit=200", name.replace(':', "%3A")));
        assert_eq!(
            server["all"]["sessions"].as_u64(),
            Some(with.len() as u64),
            "{name}"
        );
        let failed = sessions(&format!(
            "server={}&status=failed&limit=200",
            name.replace(':', "%3A")
        ));
        assert_eq!(
            server["all"]["failed"].as_u64(),
            Some(failed.len() as u64),
            "{name}"
        );
    }
    let authy = servers["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .find(|s| s["name"] == "authy")
        .expect("authy, from the recorded sessions");
    assert!(authy["all"]["needs_auth"].as_u64() >= Some(1), "{authy:#}");
    // The recorded sessions say a login wanted (Claude's and Copilot's
    // logs: oauth_required) or a bare needs-auth (Qwen's, OpenCode's):
    // the top reason is one of the two, never another.
    assert!(
        matches!(
            authy["top_reason"]["code"].as_str(),
            Some("auth_required" | "oauth_required")
        ),
        "{authy:#}"
    );
    // Refusals.
    let bad = get("/api/v1/fleet/sessions?status=sideways");
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert_eq!(bad.json()["error"], "invalid_request");
    assert!(bad.body.contains("status"), "{}", bad.body);
    for path in [
        "/api/v1/fleet/sessions",
        "/api/v1/fleet/servers",
        "/api/v1/fleet/events",
    ] {
        assert_eq!(request(addr, "GET", path, &[], None).status, 401, "{path}");
    }
    // A live change: told on the stream, then in the list.
    let mut events = Events::open(addr, "/api/v1/fleet/events", &token);
    let (name, _) = events.next();
    assert_eq!(name, "fleet");
    import("opencode");
    let (name, data) = events.next();
    assert_eq!(name, "fleet", "{data}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while sessions("harness=opencode&limit=200").is_empty() {
        assert!(
            Instant::now() < deadline,
            "the imported session never reached the list"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    fx.finish();
}
