//! Everyday failures on the real Gemini CLI (the pin, 0.61.0, which is
//! npm's newest), each compared with Gemini's own words for it.
//!
//! - A call's failure (issue 68 §3): the model calls a tool the server does
//!   not have; a tool whose server never answers within the server's own
//!   `timeout`; one whose server exits on the call; one answered with a
//!   JSON-RPC error. Gemini's stream-json and chat say so in its words
//!   (`tool_not_registered` "Tool \"…\" not found.", and "MCP error -32001:
//!   Request timed out", "-32000: Connection closed", "-32602: …" inside an
//!   `mcp_tool_error`); the server's own log says whether the call reached
//!   it. Tether's tool row: refused `tool_not_available` (no call, no
//!   use), or one failed call with `timeout`, `connection_closed`,
//!   `protocol_error`.
//! - A server that does not start (issue 67 §1): a command not found (bare
//!   and absolute), a `cwd` that does not exist, a server that exits at
//!   once, one that never answers (Gemini's `timeout` small), a token
//!   rejected (401), a token variable that is unset, one that wants an
//!   OAuth login. In a `-p` run Gemini
//!   writes the reason only to its debug log (`GEMINI_DEBUG_LOG_FILE`:
//!   "[MCP error] Error during discovery for MCP server 'S': …", "[MCP
//!   info] MCP server 'S' requires authentication"), which names no
//!   session; its stream-json and chat say nothing of the server. Tether's
//!   session row claims nothing the records do not show, and `tether
//!   inventory --test` gives each its own reason.
//!
//! - A run whose model API fails (issue 67 §1): nothing listens at its
//!   base URL, it refuses the key (401), no key at all. Gemini says so in
//!   its stream-json `result` line (`[API Error: …]`) or, with no key, on
//!   stderr (exit 41); `tether run` prints Gemini's exit status and the
//!   reason in Tether's words (never Gemini's, nor the API's message).
//!
//! Each run ends on the CLI's exit (bounded by `output_within`); the test
//! skips loudly where Gemini CLI is not installed (`npm ci` in
//! tests/peers).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tether_tests::Release;
use tether_tests::by_path::{find_row, row, show_json};

/// A stdio MCP server in `sh`, for the failures a real server is not
/// made to have: `$1` is its mode (`ok`, `hang`: never answers a call,
/// `exit`: exits on a call, `err`: answers a call with a JSON-RPC
/// error), `$2` the file each `tools/call` it
/// receives is counted in (one line, nothing of the call).
const SERVER: &str = r#"mode=$1; log=$2
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"method":"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"sh","version":"1"}}}\n' "$id" ;;
    *'"method":"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"stamp","description":"t","inputSchema":{"type":"object","properties":{}}}]}}\n' "$id" ;;
    *'"method":"tools/call"'*)
      echo call >> "$log"
      case "$mode" in
        hang) ;;
        exit) exit 3 ;;
        err) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"bad"}}\n' "$id" ;;
        *) printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}\n' "$id" ;;
      esac ;;
    *) [ -n "$id" ] && printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
  esac
done
"#;

/// A fake Gemini API: the first request is answered with a call of
/// `call` (where given), every later one (its result in the history) with
/// text.
async fn model(call: Option<&'static str>) -> (String, tokio::task::JoinHandle<()>) {
    use axum::response::IntoResponse;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binding the fake model on 127.0.0.1");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let app = axum::Router::new().fallback(move |body: axum::body::Bytes| async move {
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let answered = request["contents"].to_string().contains("functionResponse");
        let parts = match call {
            Some(name) if !answered => json!([{"functionCall": {"name": name, "args": {}}}]),
            _ => json!([{"text": "done"}]),
        };
        let body = json!({"candidates": [{"content": {"role": "model", "parts": parts},
            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}});
        (
            [(axum::http::header::CONTENT_TYPE, "text/event-stream")],
            format!("data: {body}\n\n"),
        )
            .into_response()
    });
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (base, task)
}

/// One finished run: its home, the stream-json it printed (saved), its
/// debug log, and the server's count of calls.
struct Run {
    home: tempfile::TempDir,
    stream: PathBuf,
    debug: String,
    calls: usize,
}

/// Runs `gemini -p` with `srv` (its `mcpServers` entry) and the fake model
/// calling `call`, to its exit.
async fn gemini(srv: Value, call: Option<&'static str>) -> Option<Run> {
    gemini_with(json!({ "srv": srv }), call).await
}

/// Runs `gemini -p` with `servers` (its `mcpServers`) and the fake model
/// calling `call`, to its exit.
async fn gemini_with(servers: Value, call: Option<&'static str>) -> Option<Run> {
    let gemini = Release::Pinned.peer("node_modules/.bin/gemini")?;
    let home = tempfile::tempdir().expect("home");
    let dir = home.path().join(".gemini");
    std::fs::create_dir_all(&dir).expect("dir");
    let settings = json!({"security": {"auth": {"selectedType": "gemini-api-key"}},
        "mcpServers": servers});
    std::fs::write(dir.join("settings.json"), settings.to_string()).expect("settings");
    let (base, model) = model(call).await;
    let debug = home.path().join("debug.log");
    let mut cmd = std::process::Command::new(&gemini);
    cmd.args(["-m", "gemini-2.5-pro", "-p", "what time is it"])
        .args(["--approval-mode", "yolo", "--output-format", "stream-json"])
        .current_dir(home.path())
        .env_clear()
        .env("PATH", Release::Pinned.path())
        .env("HOME", home.path())
        .env("GEMINI_API_KEY", "dummy")
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .env("GEMINI_DEBUG_LOG_FILE", &debug)
        .env("TMPDIR", home.path())
        .env("GOOGLE_GEMINI_BASE_URL", base);
    let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 120))
        .await
        .expect("the run");
    model.abort();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stream = home.path().join("run.stream.jsonl");
    std::fs::write(&stream, &out.stdout).expect("stream-json");
    let calls = std::fs::read_to_string(home.path().join("calls"))
        .unwrap_or_default()
        .lines()
        .count();
    Some(Run {
        debug: std::fs::read_to_string(&debug).unwrap_or_default(),
        home,
        stream,
        calls,
    })
}

/// The `sh` server's entry in `mode`, counting calls in the run's home
/// (written before the run: the home is made by [`gemini`], so the path
/// is given relative to the working directory, which is the home).
fn sh_server(mode: &str) -> Value {
    json!({"command": "sh", "args": ["-c", SERVER, "sh", mode, "calls"], "timeout": 1500})
}

/// The run's chat file.
fn chat_of(home: &Path) -> PathBuf {
    let tmp = home.join(".gemini/tmp");
    for project in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
        for chat in std::fs::read_dir(project.path().join("chats"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if chat.path().extension().is_some_and(|x| x == "jsonl") {
                return chat.path();
            }
        }
    }
    panic!("no chat under {}", tmp.display());
}

/// GIVEN the real Gemini CLI and a server whose tool call fails each way
/// (and a call of a tool it does not have) WHEN the run's stream-json and
/// chat are shown THEN each tool row reads as Gemini's own words say, the
/// server's count agrees (no call for "not found", one for the others),
/// and both files read the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_failed_call_reads_as_gemini_words_say() {
    for (mode, call, tool, words, reason, reached) in [
        (
            "ok",
            "mcp_srv_gone",
            "gone",
            "tool_not_registered",
            "tool_not_available",
            0,
        ),
        (
            "hang",
            "mcp_srv_stamp",
            "stamp",
            "MCP error -32001: Request timed out",
            "(timeout)",
            1,
        ),
        (
            "exit",
            "mcp_srv_stamp",
            "stamp",
            "MCP error -32000: Connection closed",
            "(connection closed)",
            1,
        ),
        (
            "err",
            "mcp_srv_stamp",
            "stamp",
            "MCP error -32602: bad",
            "(protocol error)",
            1,
        ),
    ] {
        let _one = tether_tests::one_real_cli_at_a_time().await;
        let Some(run) = gemini(sh_server(mode), Some(call)).await else {
            return;
        };
        let said = std::fs::read_to_string(&run.stream).expect("stream");
        assert!(said.contains(words), "{mode}: Gemini's words: {said}");
        assert_eq!(run.calls, reached, "{mode}: calls the server received");
        let chat = chat_of(run.home.path());
        for file in [&run.stream, &chat] {
            let doc = show_json(run.home.path(), file);
            let r = row(&doc, &format!("srv/{tool}"));
            let n = |k: &str| r[k].as_u64().unwrap_or(0);
            if reached == 0 {
                // Refused: never a call, never a use, never offered.
                assert_eq!((n("calls"), n("refused_calls")), (0, 1), "{mode}: {r:#}");
                assert_eq!(r["reason_code"], reason, "{mode}: {r:#}");
                assert_ne!(r["stages"]["called"]["state"], "yes", "{mode}: {r:#}");
            } else {
                // One call that reached the server and failed, for the
                // reason Gemini's words name (the row's sentence says it).
                assert_eq!((n("calls"), n("failed_calls")), (1, 1), "{mode}: {r:#}");
                let stopped = r["stopped"].as_str().unwrap_or_default();
                assert!(stopped.ends_with(reason), "{mode}: {r:#}");
            }
        }
    }
}

/// GIVEN a server that cannot start or answer, each the way people meet
/// it WHEN the real Gemini CLI runs `-p` THEN its own debug log says why
/// (its words, per case) and nothing in its stream-json names the server;
/// AND `tether sessions show` of the run claims no connection and no
/// failure for it (the records show none); AND `tether inventory --test`
/// gives each its own reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_does_not_start_reads_as_gemini_debug_log_says() {
    let (unauthorized, _auth) = tether_tests::fake_model::start_auth().await;
    let rejecting = refusing_server().await;
    let cases = [
        (
            "bare",
            json!({"command": "tether-no-such-command"}),
            "spawn tether-no-such-command ENOENT",
            "command_not_found",
        ),
        (
            "absolute",
            json!({"command": "/opt/tether-nope/server"}),
            "spawn /opt/tether-nope/server ENOENT",
            "command_not_found",
        ),
        // Node says the command is missing; the folder is.
        (
            "cwd",
            json!({"command": "sh", "args": ["-c", "cat >/dev/null"], "cwd": "/tether-no-such-dir"}),
            "spawn sh ENOENT",
            "cwd_not_found",
        ),
        (
            "exits",
            json!({"command": "sh", "args": ["-c", "exit 3"]}),
            "MCP error -32000: Connection closed",
            "server_exited",
        ),
        (
            "silent",
            // Reads, never answers; Gemini's own `timeout` ends the wait.
            json!({"command": "sh", "args": ["-c", "cat >/dev/null"], "timeout": 1500}),
            "MCP error -32001: Request timed out",
            "timeout",
        ),
        (
            "token",
            json!({"httpUrl": format!("{rejecting}/mcp"), "headers": {"Authorization": "Bearer sk-planted-rejected-77"}}),
            "requires authentication",
            "auth_rejected",
        ),
        // Gemini sends `${VAR}` as written when VAR is unset (0.61.0
        // bundle chunk-2YTYPKEZ.js 15646 `resolveEnvVarsInString`), so the
        // server refuses it; the cause is the variable.
        (
            "unset",
            json!({"httpUrl": format!("{rejecting}/mcp"), "headers": {"Authorization": "Bearer ${TETHER_TEST_UNSET_GEMINI_TOKEN}"}}),
            "requires authentication",
            "unresolved_variable",
        ),
        (
            "oauth",
            json!({"httpUrl": format!("{}/mcp", unauthorized.base())}),
            "requires authentication",
            "oauth_required",
        ),
    ];
    // One run with every case, each its own server (`srv-CASE`): Gemini
    // discovers each server on its own, all at once (`Promise.all` of
    // `maybeDiscoverMcpServer` per entry, each failure reported by name:
    // 0.61.0 bundle/chunk-JDPZ4CE3.js:370729, :370671), so one start-up of
    // the CLI and one `tether inventory --test` serve every case.
    let name = |case: &str| format!("srv-{case}");
    let servers: serde_json::Map<String, Value> = cases
        .iter()
        .map(|(case, srv, _, _)| (name(case), srv.clone()))
        .collect();
    let Some(run) = ({
        let _one = tether_tests::one_real_cli_at_a_time().await;
        gemini_with(servers.into(), None).await
    }) else {
        return;
    };
    let said = std::fs::read_to_string(&run.stream).expect("stream");
    assert!(!said.contains("srv"), "{said}");
    let shown: Vec<Value> = [run.stream.clone(), chat_of(run.home.path())]
        .iter()
        .map(|file| show_json(run.home.path(), file))
        .collect();
    let doc = inventory(run.home.path());
    assert!(!doc.to_string().contains("sk-planted"));
    for (case, _, words, reason) in cases {
        let srv = name(case);
        let line = run
            .debug
            .lines()
            .find(|l| l.contains(&format!("MCP server '{srv}'")))
            .unwrap_or_else(|| panic!("{case}: Gemini's debug log names no {srv}: {}", run.debug));
        assert!(line.contains(words), "{case}: {line}");
        for doc in &shown {
            if let Some(r) = find_row(doc, &srv) {
                let status = r["status"].as_str().unwrap_or_default();
                assert!(
                    !["active", "connected", "failed"].contains(&status),
                    "{case}: {r:#}"
                );
            }
        }
        let rows: Vec<&Value> = doc["rows"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["name"] == srv.as_str())
            .collect();
        assert!(!rows.is_empty(), "{case}: {doc:#}");
        for r in rows {
            assert_eq!(r["reason_code"], reason, "{case}: {r:#}");
        }
    }
}

/// `tether inventory --harness gemini --test --json` in the run's home
/// (which is also its project).
fn inventory(home: &Path) -> Value {
    let mut cmd = tether_tests::tether_at_home(home);
    cmd.env("TETHER_DB", tether_tests::scratch_store())
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .current_dir(home)
        .args(["inventory", "--json", "--harness", "gemini", "--test"])
        .args(["--timeout", "5", "--project"])
        .arg(home);
    let out = tether_tests::output_within(cmd, 120);
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout} {out:?}"))
}

/// An HTTP MCP endpoint that refuses every request with a bare 401 (no
/// OAuth metadata): a token the server rejects.
async fn refusing_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binding on 127.0.0.1");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let app = axum::Router::new().fallback(|| async {
        (
            axum::http::StatusCode::UNAUTHORIZED,
            axum::Json(json!({"error": "invalid_token"})),
        )
    });
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    base
}

/// A fake Gemini API that refuses every request as the API refuses a key
/// (HTTP 401, the API's error body, with a planted secret in its message).
async fn refusing_model() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binding on 127.0.0.1");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    let app = axum::Router::new().fallback(|| async {
        (
            axum::http::StatusCode::UNAUTHORIZED,
            axum::Json(json!({"error": {"code": 401, "status": "UNAUTHENTICATED",
                "message": "key sk-planted-model-99 not valid"}})),
        )
    });
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    base
}

/// GIVEN the real Gemini CLI in a `-p` run whose model API fails each way
/// people meet it (nothing listens at its base URL, a 401 for the key, no
/// key at all), set to try once (its own `general.maxAttempts` and
/// `retryFetchErrors`, so the run ends on the failure, not on retries)
/// WHEN run through `tether run` THEN Gemini says so in its own words (its
/// stream-json `result` line; with no key, stderr) AND Tether's exit line
/// gives Gemini's exit status and the reason in Tether's words, or says
/// the records say no more, never the API's message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_model_api_fails_says_why_in_tether_s_words() {
    let refusing = refusing_model().await;
    // A port nothing listens on: bound, then let go.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| format!("http://{a}"))
        .expect("a port");
    for (case, base, key, words, why) in [
        (
            "unreachable",
            &closed,
            true,
            "[API Error: exception TypeError: fetch failed sending request]",
            ": its model API could not be reached: its request got no HTTP answer [session_request_failed]",
        ),
        (
            "key refused",
            &refusing,
            true,
            "\"code\\\":401",
            ": its model provider refused the credentials it sent [auth_rejected]",
        ),
        (
            "not logged in",
            &closed,
            false,
            "Please set an Auth method",
            "; its records say no more of why (its own output does)",
        ),
    ] {
        let _one = tether_tests::one_real_cli_at_a_time().await;
        let Some(gemini) = Release::Pinned.peer("node_modules/.bin/gemini") else {
            return;
        };
        let home = tempfile::tempdir().expect("home");
        let mut settings = json!({"general": {"maxAttempts": 1, "retryFetchErrors": false}});
        if key {
            settings["security"] = json!({"auth": {"selectedType": "gemini-api-key"}});
        }
        std::fs::create_dir_all(home.path().join(".gemini")).expect("dir");
        std::fs::write(
            home.path().join(".gemini/settings.json"),
            settings.to_string(),
        )
        .expect("settings");
        let mut cmd = tether_tests::tether_at_home(home.path());
        cmd.env("PATH", Release::Pinned.path())
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            // Gemini writes a report of each API error to its temporary
            // folder: the run's own, removed with it.
            .env("TMPDIR", home.path())
            .args(["run", "--db"])
            .arg(home.path().join("tether.db"))
            .arg("--")
            .arg(&gemini)
            .args(["-m", "gemini-2.5-pro", "-p", "what time is it"])
            .args(["--output-format", "stream-json"])
            .stdin(std::process::Stdio::null());
        // With no key, no base URL either: Gemini takes a base URL for
        // an auth method of its own (`gateway`, 0.61.0 chunk-5FZXKDXH.js
        // 313366 `getAuthTypeFromEnv`).
        if key {
            cmd.env("GEMINI_API_KEY", "dummy")
                .env("GOOGLE_GEMINI_BASE_URL", base);
        }
        let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 120))
            .await
            .expect("the run");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stdout.contains(words) || stderr.contains(words),
            "{case}: Gemini's own words: {stdout} {stderr}"
        );
        let code = out.status.code().expect("an exit code");
        assert_ne!(code, 0, "{case}: {stderr}");
        let line = format!("tether run: gemini exited {code}{why}");
        assert!(
            stderr.lines().any(|l| l == line),
            "{case}: no `{line}` in {stderr}"
        );
        for own in stderr.lines().filter(|l| l.starts_with("tether")) {
            assert!(!own.contains("sk-planted"), "{case}: {own}");
            assert!(!own.contains("API Error"), "{case}: never its words: {own}");
        }
    }
}
