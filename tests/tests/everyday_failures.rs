//! The everyday failures of an endpoint test, each its own reason, against
//! real processes and real sockets: a program that echoes its input, one
//! that exits with an error, one that keeps running and never answers, a
//! command missing (bare and as a path), a `cwd` that does not exist, and
//! the four ways of auth (a token refused, an OAuth login wanted, a token
//! variable left unset, credentials wanted and none sent). No sentence
//! holds a library's internals or a planted secret.

use std::path::Path;
use std::time::Duration;

use tether_core::model::EndpointTestResult;
use tether_core::vocab::ReasonCode;
use tether_core::{Endpoint, KeyValue};
use tether_diagnostics::endpoint_check::{CheckLimits, check_endpoint};
use tokio_util::sync::CancellationToken;

const PLANTED: &str = "sk-planted-everyday-4f9a1c";

fn stdio(command: &str, args: &[&str], env: &[(&str, &str)], cwd: Option<&str>) -> Endpoint {
    Endpoint::Stdio {
        command: command.to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: env.iter().map(|(k, v)| KeyValue::new(*k, *v)).collect(),
        cwd: cwd.map(str::to_owned),
    }
}

async fn check(endpoint: &Endpoint, seconds: u64) -> EndpointTestResult {
    let limits = CheckLimits {
        timeout: Duration::from_secs(seconds),
        ..CheckLimits::default()
    };
    check_endpoint(endpoint, limits, CancellationToken::new()).await
}

/// No library's names, no error chain, no planted secret.
fn assert_plain_words(what: &str, report: &EndpointTestResult) {
    let summary = report.summary.as_deref().unwrap_or("");
    assert!(!summary.is_empty(), "{what}: no sentence: {report:?}");
    for internal in [
        "rmcp",
        "Transport [",
        "WorkerTransport",
        "TappedHttp",
        "reqwest",
        "Send message error",
        "when send",
        "ClientInitializeError",
        PLANTED,
    ] {
        assert!(
            !summary.contains(internal),
            "{what}: the sentence holds {internal:?}: {summary}"
        );
    }
    let json = serde_json::to_string(report).expect("json");
    assert!(!json.contains(PLANTED), "{what}: {json}");
}

/// GIVEN `cat`, which writes back what it is sent WHEN it is tested THEN
/// the test names the echo at once (a protocol error, not a start failure
/// after the whole timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_echoes_its_input_is_named_at_once() {
    let report = check(&stdio("/bin/cat", &[], &[], None), 30).await;
    assert_eq!(
        report.reason_code,
        Some(ReasonCode::ProtocolError),
        "{report:?}"
    );
    assert!(
        report.summary.as_deref().unwrap_or("").contains("echoes"),
        "{report:?}"
    );
    // Ended on the echo, long before the 30 s bound.
    assert!(report.elapsed_ms < 15_000, "{report:?}");
    assert_plain_words("cat", &report);
}

/// GIVEN a server that starts, prints why on stderr (with a planted token
/// from its env) and exits 3 WHEN it is tested THEN it is `server_exited`
/// with status 3 and its last stderr line, the token scrubbed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_with_an_error_says_its_status() {
    let endpoint = stdio(
        "sh",
        &["-c", "echo \"fatal: key $API_KEY refused\" >&2; exit 3"],
        &[("API_KEY", PLANTED)],
        None,
    );
    let report = check(&endpoint, 20).await;
    assert_eq!(
        report.reason_code,
        Some(ReasonCode::ServerExited),
        "{report:?}"
    );
    let summary = report.summary.as_deref().unwrap_or("");
    assert!(summary.contains("status 3"), "{summary}");
    assert!(summary.contains("fatal: key"), "{summary}");
    assert_plain_words("exit 3", &report);
}

/// GIVEN a program that reads its input to the end, answers nothing and
/// exits only when its input closes WHEN the test's bound runs out THEN
/// it is a `timeout`: it started and kept running, and the exit the
/// test's own closing caused is not read as a start failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_never_answers_is_a_timeout_not_a_start_failure() {
    let report = check(&stdio("sh", &["-c", "cat > /dev/null"], &[], None), 2).await;
    assert_eq!(report.reason_code, Some(ReasonCode::Timeout), "{report:?}");
    assert!(
        report
            .summary
            .as_deref()
            .unwrap_or("")
            .contains("kept running"),
        "{report:?}"
    );
    assert_plain_words("never answers", &report);
}

/// GIVEN a bare command on no folder of PATH, an absolute path where no
/// file is, and a real command whose `cwd` does not exist WHEN each is
/// tested THEN each says which, naming the command by its basename only
/// (never the path or the cwd).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_command_path_or_cwd_each_says_which() {
    let missing_dir = format!("/opt/nope-{PLANTED}");
    let absolute = format!("{missing_dir}/server");
    let real = Path::new("/bin/cat");
    for (what, endpoint, reason, says) in [
        (
            "bare",
            stdio("tether-no-such-server-3k2", &[], &[], None),
            ReasonCode::CommandNotFound,
            "PATH",
        ),
        (
            "absolute",
            stdio(&absolute, &[], &[], None),
            ReasonCode::CommandNotFound,
            "path given for `server` does not exist",
        ),
        (
            "cwd",
            stdio(&real.display().to_string(), &[], &[], Some(&missing_dir)),
            ReasonCode::CwdNotFound,
            "working directory",
        ),
    ] {
        let report = check(&endpoint, 10).await;
        assert_eq!(report.reason_code, Some(reason), "{what}: {report:?}");
        let summary = report.summary.as_deref().unwrap_or("");
        assert!(summary.contains(says), "{what}: {summary}");
        assert!(!summary.contains("/opt/nope"), "{what}: {summary}");
        assert!(
            !summary.contains("does not resolve on PATH"),
            "{what}: {summary}"
        );
        assert_plain_words(what, &report);
    }
}

/// An MCP endpoint that wants auth each everyday way
/// ([`tether_tests::auth_server`]).
async fn auth_server() -> std::net::SocketAddr {
    tether_tests::auth_server::AuthServer::start().await.addr
}

/// GIVEN a real local server that wants auth WHEN it is tested with a
/// planted token (in a header, an API-key header, the URL's query), with
/// an empty bearer (an unset variable), and with nothing THEN a refused
/// token is `auth_rejected`, an OAuth login `oauth_required` (from the
/// challenge, or from the well-known metadata for SSE), the empty bearer
/// `unresolved_variable`, and credentials wanted with no OAuth
/// `auth_required`; each sentence says what to do, in Tether's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_auth_failure_has_its_own_reason_and_no_internals() {
    let addr = auth_server().await;
    let http = |path: &str, headers: &[(&str, &str)]| Endpoint::Http {
        url: format!("http://{addr}{path}"),
        headers: headers.iter().map(|(k, v)| KeyValue::new(*k, *v)).collect(),
    };
    let bearer = format!("Bearer {PLANTED}");
    for (what, endpoint, reason, says) in [
        (
            "oauth, nothing sent",
            http("/mcp", &[]),
            ReasonCode::OauthRequired,
            "log in through the harness",
        ),
        (
            "oauth over sse, from the well-known metadata",
            Endpoint::Sse {
                url: format!("http://{addr}/sse"),
                headers: vec![],
            },
            ReasonCode::OauthRequired,
            "OAuth login",
        ),
        (
            "a bearer token refused",
            http("/mcp", &[("Authorization", &bearer)]),
            ReasonCode::AuthRejected,
            "refused the credentials sent (HTTP 401)",
        ),
        (
            "an api key refused",
            http("/plain/mcp", &[("X-API-Key", PLANTED)]),
            ReasonCode::AuthRejected,
            "make a new one",
        ),
        (
            "a token in the query refused",
            Endpoint::Http {
                url: format!("http://{addr}/plain/mcp?api_key={PLANTED}"),
                headers: vec![],
            },
            ReasonCode::AuthRejected,
            "refused the credentials",
        ),
        (
            "a token without the scope",
            http("/scoped/mcp", &[("Authorization", &bearer)]),
            ReasonCode::AuthRejected,
            "insufficient_scope",
        ),
        (
            "an unset token variable",
            http("/mcp", &[("Authorization", "Bearer ")]),
            ReasonCode::UnresolvedVariable,
            "set the variable",
        ),
        (
            "credentials wanted, none sent, no OAuth",
            http("/plain/mcp", &[]),
            ReasonCode::AuthRequired,
            "none were sent",
        ),
    ] {
        let report = check(&endpoint, 10).await;
        assert!(!report.succeeded, "{what}");
        assert_eq!(report.reason_code, Some(reason), "{what}: {report:?}");
        let summary = report.summary.as_deref().unwrap_or("");
        assert!(summary.contains(says), "{what}: {summary}");
        assert_plain_words(what, &report);
    }
}

/// GIVEN the same server WHEN a new user runs `tether endpoint-test --url
/// … --header 'Authorization: Bearer <token>'` THEN the line says
/// `auth_rejected` and what to do, exits 1, and neither stream holds the
/// token or rmcp's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_says_a_refused_token_in_plain_words() {
    let addr = auth_server().await;
    let home = tempfile::tempdir().expect("home");
    let mut cmd = tether_tests::tether_at_home(home.path());
    cmd.env("TETHER_DB", tether_tests::scratch_store()).args([
        "endpoint-test",
        "--url",
        &format!("http://{addr}/mcp"),
        "--header",
        &format!("Authorization: Bearer {PLANTED}"),
    ]);
    let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 60))
        .await
        .expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("auth_rejected"), "{stdout}{stderr}");
    for text in [&stdout, &stderr] {
        assert!(!text.contains(PLANTED), "{text}");
        assert!(!text.contains("rmcp"), "{text}");
        assert!(!text.contains("Transport"), "{text}");
    }
}

/// GIVEN `~/.claude.json` with two HTTP servers on the project's own auth
/// server, one with no credentials (it wants an OAuth login) and one with
/// a planted token it refuses WHEN the real Claude Code (pinned and
/// newest) lists its servers and `tether inventory --test` tests them THEN
/// they agree: Claude's "Needs authentication" is `oauth_required`, its
/// "Failed to connect" (2.1.332: "Server rejected the configured
/// Authorization header (HTTP 401)") is `auth_rejected`; and Tether's
/// output holds neither the token nor rmcp's words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_and_tether_agree_on_a_login_wanted_and_a_token_refused() {
    let addr = auth_server().await;
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let url = format!("http://{addr}/mcp");
    let state = serde_json::json!({"mcpServers": {
        "oauthy": {"type": "http", "url": url},
        "tokeny": {"type": "http", "url": url,
                   "headers": {"Authorization": format!("Bearer {PLANTED}")}},
    }});
    std::fs::write(home.path().join(".claude.json"), state.to_string()).expect("write");

    let mut cmd = tether_tests::tether_at_home(home.path());
    cmd.env("TETHER_DB", tether_tests::scratch_store())
        .args(["inventory", "--json", "--harness", "claude", "--test"])
        .args(["--timeout", "20", "--project"])
        .arg(project.path());
    let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 120))
        .await
        .expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    for text in [&stdout, &String::from_utf8_lossy(&out.stderr).into_owned()] {
        assert!(!text.contains(PLANTED), "{text}");
        assert!(!text.contains("rmcp"), "{text}");
    }
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let reason = |name: &str| {
        doc["rows"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["name"] == name))
            .map(|r| r["endpoint_test"]["reason_code"].clone())
            .unwrap_or_else(|| panic!("no {name}: {doc}"))
    };
    assert_eq!(reason("oauthy"), "oauth_required", "{doc}");
    assert_eq!(reason("tokeny"), "auth_rejected", "{doc}");

    for release in tether_tests::Release::BOTH {
        let Some(claude) = release.peer("node_modules/.bin/claude") else {
            continue;
        };
        let mut cmd = std::process::Command::new(claude);
        cmd.env_clear()
            .env("HOME", home.path())
            .env("PATH", release.path())
            .current_dir(project.path())
            .args(["mcp", "list"]);
        let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 120))
            .await
            .expect("join");
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        let line = |name: &str| {
            said.lines()
                .find(|l| l.starts_with(&format!("{name}:")))
                .unwrap_or_else(|| panic!("{}: no {name}: {said}", release.label()))
                .to_owned()
        };
        assert!(
            line("oauthy").contains("Needs authentication"),
            "{}: {said}",
            release.label()
        );
        assert!(
            line("tokeny").contains("Failed to connect"),
            "{}: {said}",
            release.label()
        );
        if release == tether_tests::Release::Newest {
            assert!(
                line("tokeny").contains("Server rejected the configured Authorization header"),
                "{said}"
            );
        }
    }
}

/// One everyday startup failure, as a Codex `[mcp_servers.NAME]` table:
/// its entry, the words Codex 0.171.0 says of it, and Tether's reason.
struct CodexCase {
    name: &'static str,
    entry: String,
    /// Each in Codex's stderr after `required MCP servers failed to
    /// initialize: NAME: ` (measured on 0.171.0; each phrase is in its
    /// binary's strings).
    codex_says: &'static [&'static str],
    tether: ReasonCode,
}

/// The nine cases, on the project's own auth server at `addr`. The token
/// Codex sends comes from `TETHER_PLANTED_TOKEN` (Codex refuses a literal
/// `bearer_token` for streamable HTTP: "bearer_token is not supported").
fn codex_cases(addr: std::net::SocketAddr, missing_dir: &Path) -> Vec<CodexCase> {
    let url = format!("http://{addr}/mcp");
    let cwd = missing_dir.display();
    vec![
        CodexCase {
            // A refused token on a server that answers with a challenge
            // (`Bearer error="invalid_token"`, as RFC 6750 servers do):
            // Codex says `Auth required`, the words it says for a login
            // wanted; Tether tells the two apart.
            name: "tokeny",
            entry: format!("url = \"{url}\"\nbearer_token_env_var = \"TETHER_PLANTED_TOKEN\""),
            codex_says: &["Auth required"],
            tether: ReasonCode::AuthRejected,
        },
        CodexCase {
            // A refused token, no challenge: Codex's `unexpected server
            // response: HTTP 401`.
            name: "plainy",
            entry: format!(
                "url = \"http://{addr}/plain/mcp\"\nbearer_token_env_var = \"TETHER_PLANTED_TOKEN\""
            ),
            codex_says: &["unexpected server response: HTTP 401"],
            tether: ReasonCode::AuthRejected,
        },
        CodexCase {
            name: "oauthy",
            entry: format!("url = \"{url}\""),
            codex_says: &["Auth required"],
            tether: ReasonCode::OauthRequired,
        },
        CodexCase {
            name: "unsetvar",
            entry: format!("url = \"{url}\"\nbearer_token_env_var = \"TETHER_UNSET_TOKEN_VAR\""),
            codex_says: &[
                "Environment variable TETHER_UNSET_TOKEN_VAR for MCP server 'unsetvar' is not set",
            ],
            tether: ReasonCode::UnresolvedVariable,
        },
        CodexCase {
            name: "barecmd",
            entry: "command = \"tether-no-such-server-4f9a\"".to_owned(),
            codex_says: &["No such file or directory (os error 2)"],
            tether: ReasonCode::CommandNotFound,
        },
        CodexCase {
            name: "abscmd",
            entry: "command = \"/opt/tether-nope-4f9a/server\"".to_owned(),
            codex_says: &["No such file or directory (os error 2)"],
            tether: ReasonCode::CommandNotFound,
        },
        CodexCase {
            name: "nocwd",
            entry: format!("command = \"sh\"\nargs = [\"-c\", \"cat\"]\ncwd = \"{cwd}\""),
            codex_says: &["No such file or directory (os error 2)"],
            tether: ReasonCode::CwdNotFound,
        },
        CodexCase {
            name: "exits",
            entry: "command = \"sh\"\nargs = [\"-c\", \"echo boom >&2; exit 3\"]".to_owned(),
            codex_says: &["handshaking with MCP server failed"],
            tether: ReasonCode::ServerExited,
        },
        CodexCase {
            // Codex's own deadline, set small: it ends the wait, not a sleep.
            name: "silent",
            entry: "command = \"sleep\"\nargs = [\"1000\"]\nstartup_timeout_sec = 1".to_owned(),
            codex_says: &["timed out handshaking with MCP server after"],
            tether: ReasonCode::Timeout,
        },
    ]
}

/// A Codex home holding `servers` (each `required` where asked), the model
/// at `model_base` (the fake model, or a closed port).
fn codex_home(
    dir: &Path,
    model_base: &str,
    servers: &[&CodexCase],
    required: bool,
) -> std::path::PathBuf {
    let codex_home = dir.join(".codex");
    std::fs::create_dir_all(&codex_home).expect("codex home");
    std::fs::create_dir_all(dir.join("work")).expect("work");
    let mut config = format!(
        "model = \"gpt-5.1\"\nmodel_provider = \"fake\"\napproval_policy = \"never\"\n\
         [model_providers.fake]\nname = \"fake\"\nbase_url = \"{model_base}/v1\"\n\
         wire_api = \"responses\"\nenv_key = \"FAKE_KEY\"\n"
    );
    for case in servers {
        config.push_str(&format!(
            "[mcp_servers.{}]\nrequired = {required}\n{}\n",
            case.name, case.entry
        ));
    }
    std::fs::write(codex_home.join("config.toml"), config).expect("config");
    codex_home
}

/// `codex exec --json` in `dir`'s home, the planted token in its
/// environment: ends when Codex exits (bounded, its group killed).
fn codex_exec(codex: &Path, dir: &Path, codex_home: &Path) -> std::process::Command {
    let mut cmd = tether_tests::by_path::codex_exec(codex, dir, codex_home, &dir.join("work"));
    cmd.env("TETHER_PLANTED_TOKEN", PLANTED);
    cmd
}

/// GIVEN each everyday startup failure (a token refused, an OAuth login
/// wanted, an unset token variable, a command missing bare and as a path,
/// a missing `cwd`, a server that exits at once, one that never answers)
/// as a `required` Codex server WHEN the real Codex 0.171.0 (the pin and
/// npm's newest) runs `exec` THEN Codex exits 1 before writing a rollout
/// and names the server and its reason on stderr; AND WHEN `tether
/// inventory --test` reads the same configuration THEN each row's reason
/// is the one Codex's words name (where Codex says only `No such file or
/// directory` for a bare command, a path and a `cwd`, Tether tells the
/// three apart), with no planted token and no rmcp words.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_and_tether_agree_on_each_startup_failure() {
    let Some(codex) = tether_tests::peer("node_modules/.bin/codex") else {
        return;
    };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let addr = auth_server().await;
    let scratch = tempfile::tempdir().expect("scratch");
    let cases = codex_cases(addr, &scratch.path().join("no/such/dir"));
    // The model is never asked: a required server's failure ends the run
    // first. A closed port, so a run that went on could not pass.
    let model = "http://127.0.0.1:9";
    for case in &cases {
        let dir = scratch.path().join(case.name);
        let codex_home = codex_home(&dir, model, &[case], true);
        let cmd = codex_exec(&codex, &dir, &codex_home);
        let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 120))
            .await
            .expect("join");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}: {stderr}", case.name);
        let said = stderr
            .split_once(&format!(
                "required MCP servers failed to initialize: {}: ",
                case.name
            ))
            .map(|(_, words)| words.lines().next().unwrap_or_default())
            .unwrap_or_else(|| panic!("{}: Codex named no reason: {stderr}", case.name));
        for words in case.codex_says {
            assert!(said.contains(words), "{}: Codex said {said}", case.name);
        }
        assert!(
            tether_tests::by_path::codex_rollouts(&codex_home).is_empty(),
            "{}: a rollout was written",
            case.name
        );
    }

    let all: Vec<&CodexCase> = cases.iter().collect();
    let codex_home = codex_home(scratch.path(), model, &all, false);
    let mut cmd = tether_tests::tether_at_home(scratch.path());
    cmd.env("TETHER_DB", tether_tests::scratch_store())
        .env("CODEX_HOME", &codex_home)
        .env("TETHER_PLANTED_TOKEN", PLANTED)
        .args([
            "inventory",
            "--json",
            "--harness",
            "codex",
            "--kind",
            "mcp_server",
        ])
        .args(["--test", "--timeout", "5"]);
    let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 120))
        .await
        .expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    for text in [&stdout, &String::from_utf8_lossy(&out.stderr).into_owned()] {
        assert!(!text.contains(PLANTED), "{text}");
        assert!(!text.contains("rmcp"), "{text}");
    }
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    for case in &cases {
        let row = doc["rows"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["name"] == case.name))
            .unwrap_or_else(|| panic!("no {}: {doc}", case.name));
        assert_eq!(
            row["reason_code"],
            case.tether.as_str(),
            "{}: {row}",
            case.name
        );
    }
}

/// GIVEN the same servers not `required`, beside the fake model WHEN the
/// real Codex 0.171.0 runs `exec` THEN it runs its turn and exits 0, and
/// its rollout holds no word of any server's start (Codex keeps
/// `mcp_startup_update` in the process; the census says so); AND WHEN
/// `tether sessions show ROLLOUT --json` reads it THEN no failing server is
/// shown past what the configuration here says (configured, enabled, a
/// variable unset here), used or failed: Tether says what Codex recorded,
/// nothing shows, and infers no start from the configuration.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rollout_that_says_nothing_of_a_failed_start_reads_as_nothing_shown() {
    let Some(codex) = tether_tests::peer("node_modules/.bin/codex") else {
        return;
    };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let addr = auth_server().await;
    let (model, _log) = tether_tests::fake_model::start_model("time/get_current_time").await;
    let scratch = tempfile::tempdir().expect("scratch");
    let cases = codex_cases(addr, &scratch.path().join("no/such/dir"));
    let all: Vec<&CodexCase> = cases.iter().collect();
    let codex_home = codex_home(scratch.path(), &model.base(), &all, false);
    let cmd = codex_exec(&codex, scratch.path(), &codex_home);
    let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 120))
        .await
        .expect("join");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("\"turn.completed\""), "{stdout}");
    let rollouts = tether_tests::by_path::codex_rollouts(&codex_home);
    let [rollout] = rollouts.as_slice() else {
        panic!("one rollout: {rollouts:?}");
    };
    let text = std::fs::read_to_string(rollout).expect("rollout");
    for case in &cases {
        assert!(
            !text.contains(&format!("\"{}\"", case.name)),
            "{}: {text}",
            case.name
        );
    }
    let mut cmd = tether_tests::tether_at_home(scratch.path());
    cmd.env("TETHER_DB", tether_tests::scratch_store())
        .env("CODEX_HOME", &codex_home)
        .env("TETHER_PLANTED_TOKEN", PLANTED)
        .args(["sessions", "show", "--json"])
        .arg(rollout);
    let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 60))
        .await
        .expect("join");
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!shown.contains(PLANTED), "{shown}");
    let doc: serde_json::Value = serde_json::from_str(&shown).expect("json");
    for case in &cases {
        let row = doc["rows"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["name"] == case.name))
            .unwrap_or_else(|| panic!("no {}: {doc}", case.name));
        // Only what the configuration here says (configured, enabled, a
        // variable unset here): no stage the session would have to show.
        assert_eq!(row["status"], "unknown", "{}: {row}", case.name);
        assert_eq!(row["calls"], 0, "{}: {row}", case.name);
        let stages = row["stages"].as_object().expect("stages");
        for (stage, seen) in stages {
            assert!(
                matches!(stage.as_str(), "configured" | "enabled")
                    && seen["provenance"] == "current_config",
                "{}: {row}",
                case.name
            );
        }
    }
}
