//! Hostile input against the CLI and every listener: each class of abuse
//! is bounded, refused in the documented shape, or made harmless, and says
//! what happened. One test per class, with more than one shape where the
//! class has them.

use std::path::Path;
use std::process::Command;

use tether_tests::workspace_bin;

fn tether(home: &Path) -> Command {
    let mut cmd = Command::new(workspace_bin("tether"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .current_dir(home);
    cmd
}

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/records")
}

/// What a terminal would act on: every control byte but a line break and a
/// tab, and the bidi marks that reorder text.
fn terminal_controls(bytes: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(bytes);
    text.char_indices()
        .filter(|(_, c)| {
            (c.is_control() && *c != '\n' && *c != '\t')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .map(|(i, c)| {
            let from = text[..i].char_indices().rev().nth(20).map_or(0, |(j, _)| j);
            format!("{c:?} after {:?}", &text[from..i])
        })
        .collect()
}

/// The escape sequences planted: clear the screen, set the window title,
/// ring the bell, reorder the line, and a C1 control.
const PLANTED: &str = "\u{1b}[2J\u{1b}]0;pwned\u{7}\u{202e}x\u{9b}";

/// GIVEN a home whose transcript file names, project folder, skill folder,
/// server names, commands and URLs all hold escape sequences WHEN `tether
/// sessions list`, `sessions show`, `inventory` (table and `--json`) and
/// `inventory --test` print them THEN no byte a terminal acts on reaches
/// stdout or stderr: each is shown as its visible escape.
#[test]
fn escape_bytes_never_reach_the_terminal_from_any_printed_field() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path();
    let copy = Command::new("cp")
        .arg("-r")
        .arg(fixtures().join("claude/."))
        .arg(home)
        .status()
        .expect("cp");
    assert!(copy.success());
    let projects = home.join(".claude/projects");
    let project = projects.join(format!("-tmp-{PLANTED}"));
    std::fs::rename(projects.join("-tmp--tmpf23dO3"), &project).expect("rename");
    // A transcript with a planted name: one record Tether does not read
    // (a `?` line) and one line that is not JSON.
    let original = project.join("2d8efbcf-e501-440d-89ec-66cb10f9d678.jsonl");
    let mut text = std::fs::read_to_string(&original).expect("transcript");
    text.push_str(&format!(
        "{{\"type\":\"{PLANTED}-kind\",\"sessionId\":\"2d8efbcf-e501-440d-89ec-66cb10f9d678\"}}\n"
    ));
    std::fs::write(project.join(format!("{PLANTED}.jsonl")), &text).expect("write");
    std::fs::write(
        project.join(format!("broken{PLANTED}.jsonl")),
        b"\xff\xfe{not json\n",
    )
    .expect("write");
    // A skill folder and servers with planted names, commands and URLs.
    let skill = home.join(format!(".claude/skills/{PLANTED}"));
    std::fs::create_dir_all(&skill).expect("skill");
    std::fs::write(
        skill.join("SKILL.md"),
        format!("---\nname: {PLANTED}\ndescription: {PLANTED}\n---\n"),
    )
    .expect("skill");
    std::fs::write(
        home.join(".claude.json"),
        serde_json::json!({"mcpServers": {
            format!("srv{PLANTED}"): {"command": format!("/nonexistent/{PLANTED}/bin"), "args": [PLANTED]},
            "web": {"type": "http", "url": format!("http://127.0.0.1:1/{PLANTED}"), "headers": {"X": PLANTED}},
        }})
        .to_string(),
    )
    .expect("config");

    let runs: [&[&str]; 6] = [
        &["sessions", "list"],
        &["sessions", "list", "--json"],
        &["sessions", "show", "2d8e"],
        &["inventory"],
        &["inventory", "--json"],
        &["inventory", "--test", "--timeout", "5"],
    ];
    for args in runs {
        let out = tether(home).args(args).output().expect("tether runs");
        let code = out.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "{args:?} exited {code:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            let found = terminal_controls(bytes);
            assert!(
                found.is_empty(),
                "{args:?} {stream} holds what a terminal acts on: {found:?}"
            );
        }
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        if args == ["sessions", "list"] {
            assert!(
                all.contains("\\u001b[2J\\u001b]0;pwned\\u0007"),
                "the planted path is shown, visibly: {all}"
            );
        }
    }
}

/// GIVEN a store path (or the WAL file beside it) that is a FIFO, a
/// directory or a device WHEN `tether serve`, `history`, `sessions import`
/// and `inventory --record` are pointed at it THEN each exits 1 at once
/// with a sentence saying what the path is, and nothing hangs.
#[test]
fn a_store_path_that_is_not_a_file_is_refused_at_once() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path();
    let fifo = home.join("store.fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo")
            .success()
    );
    let with_wal = home.join("wal.db");
    std::fs::write(&with_wal, b"").expect("an empty database");
    let wal = home.join("wal.db-wal");
    assert!(
        Command::new("mkfifo")
            .arg(&wal)
            .status()
            .expect("mkfifo")
            .success()
    );
    let dir = home.join("a-folder.db");
    std::fs::create_dir(&dir).expect("dir");
    let cases = [
        (fifo.display().to_string(), "a FIFO"),
        (with_wal.display().to_string(), "-wal file is a FIFO"),
        (dir.display().to_string(), "a directory"),
        ("/dev/zero".to_owned(), "a device"),
    ];
    for (db, what) in &cases {
        let runs: [Vec<&str>; 4] = [
            vec!["serve", "--db", db],
            vec!["history", "--db", db],
            vec!["sessions", "import", "--db", db],
            vec!["inventory", "--record", "--db", db],
        ];
        for args in runs {
            let mut cmd = tether(home);
            cmd.args(&args);
            let out = tether_tests::output_within(cmd, 30);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(err.contains(what), "{args:?} says what the path is: {err}");
        }
    }
}

/// GIVEN `tether collect` on a port WHEN `--forward` names that same
/// receiver in any form that reaches it (`0.0.0.0`, `[::]`, the integer and
/// short forms, IPv4-mapped IPv6, `localhost`) THEN it is refused as a loop
/// with exit 2, before anything is forwarded.
#[test]
fn collect_refuses_every_forward_that_reaches_itself() {
    let tmp = tempfile::tempdir().expect("tmp");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    for host in [
        "0.0.0.0",
        "[::]",
        "0",
        "127.1",
        "2130706433",
        "[::ffff:127.0.0.1]",
        "localhost",
        "127.0.0.2",
    ] {
        let mut cmd = tether(tmp.path());
        cmd.args([
            "collect",
            "--addr",
            &format!("127.0.0.1:{port}"),
            "--forward",
            &format!("http://{host}:{port}"),
        ]);
        let out = tether_tests::output_within(cmd, 30);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{host}: {err}");
        assert!(err.contains("would loop"), "{host}: {err}");
    }
}

/// Starts `tether ARGS --json` under a 1,024-open-file limit (the common
/// default) and reads its first line: the document with the address and
/// token.
fn start_limited(home: &Path, args: &[&str]) -> (std::process::Child, serde_json::Value) {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new("prlimit")
        .arg("--nofile=1024:1024")
        .arg(workspace_bin("tether"))
        .args(args)
        .arg("--json")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .current_dir(home)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .expect("prlimit runs tether");
    let (doc, _) = tether_tests::first_json_line(&mut child);
    (child, doc)
}

/// Holds `n` idle sockets to `port`, from helper processes of 500 each (a
/// test process may itself have only 1,024 files); they end with the guard.
struct IdleSockets(Vec<std::process::Child>);

impl IdleSockets {
    fn open(port: u16, n: usize) -> IdleSockets {
        use std::io::BufRead;
        let mut helpers = Vec::new();
        let mut left = n;
        while left > 0 {
            let here = left.min(500);
            left -= here;
            let mut child = Command::new("python3")
                .args([
                    "-c",
                    "import socket,sys,time\n\
                     s=[socket.create_connection(('127.0.0.1',int(sys.argv[1]))) for _ in range(int(sys.argv[2]))]\n\
                     print('ready',flush=True)\n\
                     time.sleep(120)",
                    &port.to_string(),
                    &here.to_string(),
                ])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("python3");
            let mut line = String::new();
            std::io::BufReader::new(child.stdout.take().expect("stdout"))
                .read_line(&mut line)
                .expect("ready");
            assert_eq!(line.trim(), "ready", "the idle sockets connected");
            helpers.push(child);
        }
        IdleSockets(helpers)
    }
}

impl Drop for IdleSockets {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// One HTTP/1.1 request on a fresh connection, answered within `bound`:
/// its status line.
fn status_within(addr: &str, raw: &str, body: &[u8], bound: std::time::Duration) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(bound)).expect("timeout");
    stream.write_all(raw.as_bytes()).expect("write");
    stream.write_all(body).expect("body");
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !got.windows(2).any(|w| w == b"\r\n") {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(err) => panic!("no answer within {bound:?}: {err}"),
        }
    }
    String::from_utf8_lossy(&got)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

fn stop(mut child: std::process::Child) {
    tether_tests::kill_group(&mut child);
}

/// GIVEN `tether collect` and `tether serve`, each under a 1,024-file
/// limit, and 1,100 sockets to each that connect and send nothing WHEN the
/// harness sends its export (and a page asks for its sessions) THEN each is
/// answered within 5 s: idle sockets make room instead of shutting the
/// harness out.
#[test]
fn eleven_hundred_idle_sockets_never_shut_out_the_harness() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path();
    let (collect, doc) = start_limited(home, &["collect", "--addr", "127.0.0.1:0"]);
    let token = serde_json::Value::String(tether_tests::kept_collect_token(home));
    answered_past_idle_sockets(&doc["endpoint"], &token, |addr, token| {
        format!(
            "POST /v1/logs HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: application/x-protobuf\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
    });
    stop(collect);

    let db = home.join("tether.db");
    tether_store::SqliteStore::open(&db).expect("an empty store");
    let (serve, doc) = start_limited(home, &["serve", "--db", db.to_str().expect("utf-8")]);
    answered_past_idle_sockets(&doc["url"], &doc["token"], |addr, token| {
        format!(
            "GET /api/v1/sessions HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
        )
    });
    stop(serve);
}

/// With 1,100 idle sockets held to the listener at `url`, the request
/// `raw(addr, token)` is answered 200 within 5 s, three times.
fn answered_past_idle_sockets(
    url: &serde_json::Value,
    token: &serde_json::Value,
    raw: impl Fn(&str, &str) -> String,
) {
    let addr = url
        .as_str()
        .expect("url")
        .trim_start_matches("http://")
        .to_owned();
    let token = token.as_str().expect("token");
    let port: u16 = addr
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    let idle = IdleSockets::open(port, 1100);
    for _ in 0..3 {
        let status = status_within(
            &addr,
            &raw(&addr, token),
            b"",
            std::time::Duration::from_secs(5),
        );
        assert_eq!(status, "HTTP/1.1 200 OK", "answered past the idle sockets");
    }
    drop(idle);
}

/// Opens `GET path` as an event stream and reads until its first event is
/// whole (or its refusal is); the stream stays open.
fn open_stream(addr: &str, token: &str, path: &str) -> (std::net::TcpStream, String) {
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .expect("timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\r\n"
    )
    .expect("write");
    let head = read_event(&mut stream, None);
    (stream, head)
}

/// Reads from `stream` until `want` (a whole event) has arrived, or, with
/// `None`, the response's head and its first event.
fn read_event(stream: &mut std::net::TcpStream, want: Option<&str>) -> String {
    use std::io::Read;
    let mut got = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let text = String::from_utf8_lossy(&got);
        let done = match want {
            // Chunked: an event's end is followed by the chunk's CRLF.
            Some(w) => text.find(w).is_some_and(|at| text[at..].contains("\n\n")),
            // A refusal's whole JSON body, or the head and a first event.
            None => text.find("\r\n\r\n").is_some_and(|head| {
                if text.starts_with("HTTP/1.1 200") {
                    text[head..].contains("}\n\n")
                } else {
                    text.ends_with('}')
                }
            }),
        };
        if done {
            return text.into_owned();
        }
        match stream.read(&mut buf) {
            Ok(0) => return text.into_owned(),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(err) => panic!("the stream stalled: {err}"),
        }
    }
}

/// GIVEN the status service over a hub with 2,000 sessions WHEN 60 pages
/// follow the session list (`/api/v1/events`) and the list changes three
/// times THEN every stream gets every change, the service grows by far less
/// than one copy of the list per stream, and a stream past the cap is a
/// `429` in the documented shape.
#[test]
fn event_streams_cost_does_not_grow_with_the_store_and_they_are_capped() {
    use std::io::{BufRead, Write};
    use std::os::unix::process::CommandExt;
    let mut host = Command::new(workspace_bin("tether-fleet-host"))
        .args(["--sessions", "2000"])
        .process_group(0)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("fleet host");
    let mut lines = std::io::BufReader::new(host.stdout.take().expect("stdout")).lines();
    let first = lines.next().expect("a line").expect("read");
    let doc: serde_json::Value = serde_json::from_str(&first).expect("json");
    let url = doc["url"].as_str().expect("url");
    let token = doc["token"].as_str().expect("token").to_owned();
    let addr = url.trim_start_matches("http://").to_owned();
    let pid = host.id().to_string();

    let (mut probe, head) = open_stream(&addr, &token, "/api/v1/events");
    assert!(
        head.contains("event: sessions"),
        "{}",
        &head[..head.len().min(300)]
    );
    let list_bytes = head.len();
    assert!(
        list_bytes > 200_000,
        "the list is large: {list_bytes} bytes"
    );
    let before = tether_tests::rss_kib(&pid);
    let mut streams = vec![];
    for _ in 0..59 {
        streams.push(open_stream(&addr, &token, "/api/v1/events").0);
    }
    let mut stdin = host.stdin.take().expect("stdin");
    for change in 0..3 {
        writeln!(stdin, "new change-{change}").expect("command");
        let answer = lines.next().expect("a line").expect("read");
        assert!(answer.starts_with("ok "), "{answer}");
        for stream in streams.iter_mut().chain(std::iter::once(&mut probe)) {
            read_event(stream, Some(&format!("change-{change}")));
        }
    }
    let after = tether_tests::rss_kib(&pid);
    let grown_kib = after.saturating_sub(before);
    // One copy of the list per stream would be 60 × the list.
    let one_copy_each_kib = 60 * list_bytes as u64 / 1024;
    eprintln!(
        "60 list streams over 2,000 sessions: the service grew {grown_kib} KiB (one copy of the list each: {one_copy_each_kib} KiB)"
    );
    assert!(
        grown_kib * 2 < one_copy_each_kib,
        "60 streams grew the service by {grown_kib} KiB; one copy each is {one_copy_each_kib} KiB"
    );
    // The cap: 64 streams in all; the next is refused in the documented shape.
    let mut more = vec![];
    for _ in 0..4 {
        more.push(open_stream(&addr, &token, "/api/v1/fleet/events").0);
    }
    let (_refused, answer) = open_stream(&addr, &token, "/api/v1/events");
    assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
    assert!(
        answer.contains("\"error\":\"too_many_streams\""),
        "{answer}"
    );
    // A closed stream gives its place back.
    drop(more.pop());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (_s, answer) = open_stream(&addr, &token, "/api/v1/fleet/events");
        if answer.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the place was never given back"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = writeln!(stdin, "quit");
    tether_tests::kill_group(&mut host);
}

/// `/proc/PID/status`'s `field` in KiB.
fn proc_kib(pid: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// An OTLP logs request of `n` empty log records (two bytes each on the
/// wire), gzip'd.
fn empty_records_gzip(n: usize) -> Vec<u8> {
    use std::io::Write;
    let mut scope = Vec::with_capacity(2 * n + 16);
    for _ in 0..n {
        scope.extend_from_slice(&[0x12, 0x00]);
    }
    let mut scope_logs = Vec::new();
    prost::encoding::encode_varint(0x12, &mut scope_logs);
    prost::encoding::encode_varint(scope.len() as u64, &mut scope_logs);
    scope_logs.extend_from_slice(&scope);
    let mut request = Vec::new();
    prost::encoding::encode_varint(0x0a, &mut request);
    prost::encoding::encode_varint(scope_logs.len() as u64, &mut request);
    request.extend_from_slice(&scope_logs);
    assert!(
        request.len() < 8 * 1024 * 1024,
        "under the decompression cap"
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&request).expect("gzip");
    gz.finish().expect("gzip")
}

/// GIVEN `tether collect` WHEN it is sent gzip bodies of a few KB that
/// decompress to just under the cap (4 million empty log records; JSON's
/// `{}` records; a million-entry packed bucket list), once and then by
/// three clients ten times each THEN each is refused with 413 before it is
/// decoded, the receiver's peak memory stays within 64 MiB of idle, and an
/// ordinary export is still taken.
#[test]
fn a_tiny_request_cannot_decode_into_hundreds_of_megabytes() {
    use std::io::Write;
    let tmp = tempfile::tempdir().expect("tmp");
    let (collect, doc) = start_limited(tmp.path(), &["collect", "--addr", "127.0.0.1:0"]);
    let endpoint = doc["endpoint"].as_str().expect("endpoint").to_owned();
    let token = tether_tests::kept_collect_token(tmp.path());
    let addr = endpoint.trim_start_matches("http://").to_owned();
    let pid = collect.id().to_string();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let idle = proc_kib(&pid, "VmRSS:");

    let proto_bomb = empty_records_gzip(4_000_000);
    assert!(
        proto_bomb.len() < 16 * 1024,
        "{} bytes sent",
        proto_bomb.len()
    );
    let json_bomb = {
        let records = vec!["{}"; 2_500_000].join(",");
        let body =
            format!(r#"{{"resourceLogs":[{{"scopeLogs":[{{"logRecords":[{records}]}}]}}]}}"#);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(body.as_bytes()).expect("gzip");
        gz.finish().expect("gzip")
    };
    let post = |path: &str, content_type: &str, body: &[u8]| {
        status_within(
            &addr,
            &format!(
                "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
                 Content-Type: {content_type}\r\nContent-Encoding: gzip\r\n\
                 Content-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            ),
            body,
            std::time::Duration::from_secs(30),
        )
    };
    assert_eq!(
        post("/v1/logs", "application/x-protobuf", &proto_bomb),
        "HTTP/1.1 413 Payload Too Large"
    );
    assert_eq!(
        post("/v1/logs", "application/json", &json_bomb),
        "HTTP/1.1 413 Payload Too Large"
    );
    std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| {
                for _ in 0..10 {
                    let status = post("/v1/logs", "application/x-protobuf", &proto_bomb);
                    assert!(
                        status == "HTTP/1.1 413 Payload Too Large"
                            || status == "HTTP/1.1 503 Service Unavailable",
                        "{status}"
                    );
                }
            });
        }
    });
    let peak = proc_kib(&pid, "VmHWM:");
    let grown_mib = peak.saturating_sub(idle) / 1024;
    eprintln!("decode amplification: idle {idle} KiB, peak {peak} KiB (+{grown_mib} MiB)");
    assert!(
        grown_mib <= 64,
        "the receiver peaked {grown_mib} MiB above idle"
    );
    // An ordinary (empty) export is still taken.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(b"").expect("gzip");
    let ordinary = gz.finish().expect("gzip");
    assert_eq!(
        post("/v1/logs", "application/x-protobuf", &ordinary),
        "HTTP/1.1 200 OK"
    );
    stop(collect);
}

/// GIVEN a Codex `config.toml` just under 1 MiB with 32,000 servers, beside
/// Gemini and Cursor configurations WHEN `tether inventory` reads them THEN
/// every Gemini and Cursor server is there, Codex's rows are cut at the cap
/// and the cut is said in the table, in `--json` (an error entry counting
/// what was not shown, `too_many_entries`) and in the exit code (1, as for
/// any file that could not be used).
#[test]
fn a_cap_on_one_harness_never_hides_another_and_says_what_it_cut() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path();
    std::fs::create_dir_all(home.join(".codex")).expect("codex");
    let mut toml = String::from("[mcp_servers]\n");
    for n in 0..32_000 {
        toml.push_str(&format!("s{n}={{command=\"x\"}}\n"));
    }
    assert!(toml.len() < 1024 * 1024, "{} bytes", toml.len());
    std::fs::write(home.join(".codex/config.toml"), toml).expect("config");
    std::fs::create_dir_all(home.join(".gemini")).expect("gemini");
    std::fs::write(
        home.join(".gemini/settings.json"),
        r#"{"mcpServers":{"gem-one":{"command":"x"},"gem-two":{"httpUrl":"http://127.0.0.1:9/mcp"}}}"#,
    )
    .expect("gemini");
    std::fs::create_dir_all(home.join(".cursor")).expect("cursor");
    std::fs::write(
        home.join(".cursor/mcp.json"),
        r#"{"mcpServers":{"cur-one":{"command":"x"}}}"#,
    )
    .expect("cursor");

    let project = home.join("project");
    std::fs::create_dir_all(&project).expect("project");
    let project = project.to_str().expect("utf-8");
    let out = tether(home)
        .args(["inventory", "--json", "--project", project])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1), "a cut is said in the exit code");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = doc["rows"].as_array().expect("rows");
    let names = |harness: &str| -> Vec<String> {
        rows.iter()
            .filter(|r| r["harness"] == harness && r["kind"] == "mcp_server")
            .map(|r| r["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let mut gemini = names("gemini");
    gemini.sort();
    assert_eq!(gemini, ["gem-one", "gem-two"]);
    assert_eq!(names("cursor"), ["cur-one"]);
    assert_eq!(names("codex").len(), 4096);
    let cut = doc["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .find(|e| e["reason_code"] == "too_many_entries")
        .expect("the cut is an error entry");
    assert_eq!(cut["harness"], "codex");
    let summary = cut["summary"].as_str().expect("summary");
    assert!(
        summary.contains("32000") || summary.contains("32,000"),
        "{summary}"
    );
    assert!(
        summary.contains("27904"),
        "counts what was not shown: {summary}"
    );

    let table = tether(home)
        .args(["inventory", "--project", project])
        .output()
        .expect("runs");
    assert_eq!(table.status.code(), Some(1));
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("too_many_entries"), "{text}");
}

/// GIVEN 20,000 Claude transcripts WHEN `tether sessions list` reads the
/// newest 10,000 THEN it says how many it did not read, where, and why, in
/// the table and in `--json`; with `--since` narrow enough, nothing is cut.
#[test]
fn sessions_list_says_how_many_files_it_did_not_read() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path();
    let project = home.join(".claude/projects/-tmp-many");
    std::fs::create_dir_all(&project).expect("project");
    for n in 0..20_000 {
        std::fs::write(project.join(format!("{n:05}.jsonl")), b"").expect("file");
    }
    let out = tether(home)
        .args(["sessions", "list", "--json"])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let cuts = doc["not_read"].as_array().expect("not_read");
    assert_eq!(cuts.len(), 1, "{cuts:?}");
    assert_eq!(cuts[0]["agent_kind"], "claude");
    assert_eq!(cuts[0]["root"], "~/.claude");
    assert_eq!(cuts[0]["found"], 20_000);
    assert_eq!(cuts[0]["not_read"], 10_000);
    assert_eq!(cuts[0]["reason_code"], "too_many_entries");

    let table = tether(home)
        .args(["sessions", "list"])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("! ~/.claude: 20000 session files; the newest 10000 were read and 10000 older ones were not"),
        "{text}"
    );
    let narrow = tether(home)
        .args(["sessions", "list", "--json", "--since", "1m"])
        .output()
        .expect("runs");
    let doc: serde_json::Value = serde_json::from_slice(&narrow.stdout).expect("json");
    // Every file was written just now: within a minute, all 20,000 are
    // wanted, so the cut stays; what --since excludes is never called cut.
    assert_eq!(doc["not_read"][0]["not_read"], 10_000);
}

/// The whole answer to one request on a fresh connection, read to its end.
fn answer(addr: &str, raw: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .expect("timeout");
    stream.write_all(raw.as_bytes()).expect("write");
    let mut got = Vec::new();
    let _ = stream.read_to_end(&mut got);
    String::from_utf8_lossy(&got).into_owned()
}

/// GIVEN `tether collect` and `tether serve` WHEN they refuse a request of
/// every kind (unknown path, wrong method, no token, wrong content type,
/// a body past the cap, a body that never finishes) THEN each refusal is in
/// the listener's documented shape: an OTLP `Status` from the receiver, a
/// `status-error` document from the status service.
#[test]
fn every_refusal_is_in_the_documented_shape() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path();
    let (collect, doc) = start_limited(home, &["collect", "--addr", "127.0.0.1:0"]);
    let addr = doc["endpoint"]
        .as_str()
        .expect("endpoint")
        .trim_start_matches("http://")
        .to_owned();
    let token = tether_tests::kept_collect_token(home);
    let cases = [
        (
            format!("GET /v1/logs HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
            "405",
        ),
        (
            format!(
                "POST /nope HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            ),
            "404",
        ),
        (
            format!(
                "POST /v1/logs HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            ),
            "401",
        ),
        (
            format!(
                "POST /v1/logs HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: text/plain\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            ),
            "415",
        ),
    ];
    for (raw, want) in &cases {
        let got = answer(&addr, raw);
        assert!(got.starts_with(&format!("HTTP/1.1 {want}")), "{got}");
        let body = got.split("\r\n\r\n").nth(1).unwrap_or_default();
        let status: serde_json::Value =
            serde_json::from_str(body).unwrap_or_else(|e| panic!("{want}: {e}: {got}"));
        assert!(
            status["code"].is_i64() && status["message"].is_string(),
            "{got}"
        );
    }
    stop(collect);

    let db = home.join("tether.db");
    tether_store::SqliteStore::open(&db).expect("an empty store");
    let (serve, doc) = start_limited(home, &["serve", "--db", db.to_str().expect("utf-8")]);
    let addr = doc["url"]
        .as_str()
        .expect("url")
        .trim_start_matches("http://")
        .to_owned();
    let token = doc["token"].as_str().expect("token").to_owned();
    let big = "x".repeat(5 * 1024);
    let cases = [
        (
            format!(
                "POST /api/v1/endpoint-test HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{big}",
                big.len()
            ),
            "413",
            "too_large",
        ),
        (
            format!(
                "DELETE /api/v1/sessions HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
            ),
            "405",
            "method_not_allowed",
        ),
        (
            format!("GET /api/v1/sessions HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
            "401",
            "unauthorized",
        ),
        (
            format!("GET /nope HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"),
            "404",
            "not_found",
        ),
        (
            "GET / HTTP/1.1\r\nHost: evil.example:80\r\nConnection: close\r\n\r\n".to_owned(),
            "421",
            "bad_host",
        ),
    ];
    for (raw, want, code) in &cases {
        let got = answer(&addr, raw);
        assert!(got.starts_with(&format!("HTTP/1.1 {want}")), "{got}");
        let body = got.split("\r\n\r\n").nth(1).unwrap_or_default();
        let error: serde_json::Value =
            serde_json::from_str(body.trim()).unwrap_or_else(|e| panic!("{want}: {e}: {got}"));
        assert_eq!(error["error"], *code, "{got}");
        assert!(error["message"].is_string(), "{got}");
    }
    stop(serve);
}
