//! Cross-crate integration tests live in `tests/tests/`. This library links the
//! first-party plugins so their `inventory` registrations are present.
//!
//! The shared set-ups of the cross-crate tests:
//! - [`fake_model`]: a fake model endpoint and an MCP server that always wants OAuth;
//! - [`auth_server`]: an MCP endpoint that wants auth each everyday way (a token
//!   refused, an OAuth login, no challenge, a scope);
//! - [`counting`]: how the counting MCP peers count the calls they receive;
//! - [`breaking`]: the tools of `tether-breaking-mcp`, made to break the last mile;
//! - [`last_mile`]: the ground truth of what the model was really sent;
//! - [`refusal_run`]: what every real-CLI refusal test shares;
//! - [`tap_run`]: a real CLI run through the model tap against the fake model;
//! - [`collected`]: one real harness session with its own telemetry collected;
//! - [`by_path`]: `tether sessions show|import PATH` run and checked for planted secrets;
//! - [`differential`]: one record written every way JSON allows, for a reader's
//!   fast path against its plain one.

pub mod auth_server;
pub mod breaking;
pub mod by_path;
pub mod collected;
pub mod counting;
pub mod differential;
pub mod fake_model;
pub mod last_mile;
pub mod refusal_run;
pub mod tap_run;

pub use tether_first_party;

/// Where tests write sample documents for the out-of-process schema check.
pub fn samples_dir() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
        .join("tether-samples");
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// The target directory of the running test's profile:
/// target/<profile>/deps/<test> → target/<profile>.
fn profile_dir() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("test executable");
    exe.parent()
        .and_then(std::path::Path::parent)
        .expect("target profile dir")
        .to_path_buf()
}

/// The `cargo build` arguments that build into [`profile_dir`]: nothing for
/// `target/debug`, `--release` for `target/release`, `--profile NAME` else.
/// Test helpers must build in the profile the test itself runs in, or a
/// `cargo test --release` would look for binaries that were never built.
fn profile_args() -> Vec<String> {
    let dir = profile_dir();
    match dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => vec![],
        Some("release") => vec!["--release".into()],
        Some(other) => vec!["--profile".into(), other.into()],
    }
}

/// A binary of this workspace (`tether`, `tether-reference-agent`, …), built
/// on demand when this package's tests run without the rest of the workspace.
pub fn workspace_bin(name: &str) -> std::path::PathBuf {
    static BUILD: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let path = profile_dir().join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    let _guard = BUILD.lock().unwrap_or_else(|p| p.into_inner());
    if !path.exists() {
        // `cargo test` builds a package's plain binaries only for that package's
        // own integration tests, so other packages' binaries may be missing.
        let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "--workspace", "--bins"])
            .args(profile_args())
            .current_dir(workspace)
            .status()
            .expect("running cargo build");
        assert!(status.success(), "cargo build --workspace --bins failed");
        assert!(path.exists(), "{} was not built", path.display());
    }
    path
}

/// A store of this test process's own (`TETHER_DB`), for `tether` runs
/// that would otherwise write to the caller's default store (the endpoint
/// check pins each tool's definition there).
pub fn scratch_store() -> std::path::PathBuf {
    // Under the workspace's `target/` (removed with it), one per process.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../target/tmp")
        .join(format!("scratch-store-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir.join("tether.db")
}

/// `tether` as a new user runs it on a private home: an empty environment
/// but `HOME` (the home) and `PATH`, in the home. Add arguments, more
/// variables and pipes at the call.
pub fn tether_at_home(home: &std::path::Path) -> std::process::Command {
    let mut cmd = std::process::Command::new(workspace_bin("tether"));
    cmd.env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .current_dir(home);
    cmd
}

/// A shared library of this workspace (a plugin), built on demand.
pub fn workspace_lib(crate_name: &str) -> std::path::PathBuf {
    let file = format!(
        "{}{}{}",
        std::env::consts::DLL_PREFIX,
        crate_name.replace('-', "_"),
        std::env::consts::DLL_SUFFIX
    );
    let path = profile_dir().join(file);
    if !path.exists() {
        let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "-p", crate_name])
            .args(profile_args())
            .current_dir(workspace)
            .status()
            .expect("running cargo build");
        assert!(status.success(), "cargo build -p {crate_name} failed");
    }
    path
}

/// A pinned real peer under `tests/peers` (for example
/// `node_modules/.bin/claude`), or a loud skip: `None` with a SKIP line on
/// stderr, and a failure when `TETHER_REQUIRE_PEERS` is set (as `.ci/run` does).
pub fn peer(relative: &str) -> Option<std::path::PathBuf> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("peers")
        .join(relative);
    if path.exists() {
        return Some(path);
    }
    let message = format!("SKIP: {relative} is not installed (see tests/peers)");
    assert!(
        std::env::var_os("TETHER_REQUIRE_PEERS").is_none(),
        "{message} and TETHER_REQUIRE_PEERS is set"
    );
    eprintln!("{message}");
    None
}

/// Which release of a harness a test runs: today's pin (`tests/peers`) or
/// the newest release npm serves (`tests/peers/newest`, with the Node 22 it
/// needs from npm's own `node` package). Both are pinned by lockfile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// `tests/peers`.
    Pinned,
    /// `tests/peers/newest`.
    Newest,
}

impl Release {
    /// Both, pinned first.
    pub const BOTH: [Release; 2] = [Release::Pinned, Release::Newest];

    /// The release's folder under `tests/peers` (`""` or `newest/`).
    fn folder(self) -> &'static str {
        match self {
            Release::Pinned => "",
            Release::Newest => "newest/",
        }
    }

    /// The release's peer at `relative` (as [`peer`]: a loud skip when it
    /// is not installed).
    pub fn peer(self, relative: &str) -> Option<std::path::PathBuf> {
        peer(&format!("{}{relative}", self.folder()))
    }

    /// A `PATH` for running this release: the newest release's own
    /// `node_modules/.bin` (its Node 22 among them) before the caller's.
    pub fn path(self) -> String {
        let inherited = std::env::var("PATH").unwrap_or_default();
        match self {
            Release::Pinned => inherited,
            Release::Newest => {
                let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("peers/newest/node_modules/.bin");
                format!("{}:{inherited}", bin.display())
            }
        }
    }

    /// A short label for messages (`pinned`, `newest`).
    pub fn label(self) -> &'static str {
        match self {
            Release::Pinned => "pinned",
            Release::Newest => "newest",
        }
    }
}

/// The directory of the `node` this test process's `PATH` finds (npm's
/// CLIs run on it when a test clears the environment), if any.
pub fn node_dir() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find(|d| d.join("node").is_file())
}

/// Runs `cmd` to its end with its output, in its own process group, bounded:
/// one that is still running after `secs` seconds is killed with everything
/// it started, and the test fails instead of hanging.
pub fn output_within(mut cmd: std::process::Command, secs: u64) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let program = cmd.get_program().to_string_lossy().into_owned();
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0);
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("{program} does not start: {e}"));
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(out) => out.unwrap_or_else(|e| panic!("{program}: {e}")),
        Err(_) => {
            // The waiting thread owns the child: kill its group by id.
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
            panic!("{program} did not finish within {secs} s");
        }
    }
}

/// Kills the process group `child` leads (everything it started) and
/// reaps the leader.
pub fn kill_group(child: &mut std::process::Child) {
    // `--`: procps reads a bare negative pid as an option.
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(std::process::Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

/// Live (not zombie) processes whose command line holds `token`, read from
/// `/proc`: what a cleanup test asserts is empty.
pub fn living_with(token: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let state = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next())
                .unwrap_or("Z");
            state != "Z" && state != "X"
        })
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                String::from_utf8_lossy(&c)
                    .replace('\0', " ")
                    .contains(token)
            })
        })
        .collect()
}

/// Waits up to two seconds for every process holding `token` to be gone;
/// returns those still alive.
pub fn leftovers(token: &str) -> Vec<u32> {
    for _ in 0..40 {
        let alive = living_with(token);
        if alive.is_empty() {
            return alive;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    living_with(token)
}

/// A hub whose registry holds the ACP plugin alone, with the default
/// config: what tests and benches that begin attempts by hand plan with.
pub fn acp_hub() -> std::sync::Arc<tether_hub::Hub> {
    let mut registry = tether_core::registry::Registry::empty();
    registry
        .add(
            std::sync::Arc::new(tether_acp_structured::AcpStructured),
            tether_core::registry::PluginSource::Static,
        )
        .expect("the ACP plugin registers");
    std::sync::Arc::new(tether_hub::Hub::with_config(
        registry,
        tether_hub::HubConfig::default(),
    ))
}

/// A profile-configured stdio server.
pub fn stdio_server(
    name: &str,
    command: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> tether_core::spec::ServerSpec {
    tether_core::spec::ServerSpec::new(
        name,
        tether_core::vocab::ServerSource::Profile,
        tether_core::spec::Endpoint::Stdio {
            command: command.into(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: env
                .iter()
                .map(|(k, v)| tether_core::spec::KeyValue::new(*k, *v))
                .collect(),
            cwd: None,
        },
    )
}

/// One real agent CLI at a time within a test binary: several Node CLIs
/// starting at once on a 2-core machine push their MCP connections past the
/// CLIs' own timeouts, which would test the machine, not Tether. Hold the
/// guard for the whole probe.
pub async fn one_real_cli_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static REAL_CLI: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    REAL_CLI.lock().await
}

/// An independent count of what a stdio MCP server's tools cost the model
/// (`tests/scripts/count-tool-tokens.mjs`: its own MCP client, js-tiktoken's
/// o200k_base over each tool's `JSON.stringify`):
/// `{"tool_count", "total", "tools": {name: tokens}}`. `None` (skipped
/// loudly) without js-tiktoken.
pub fn independent_token_count(command: &std::path::Path) -> Option<serde_json::Value> {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    peer("node_modules/js-tiktoken/package.json")?;
    let out = std::process::Command::new("node")
        .arg(here.join("scripts/count-tool-tokens.mjs"))
        .arg(here.join("peers"))
        .arg("--")
        .arg(command)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("json"))
}

/// A free port on 127.0.0.1 (bound, read, released).
pub async fn free_port() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    listener.local_addr().expect("addr").port()
}

/// Waits (10 s at most) until something listens on 127.0.0.1:`port`.
pub async fn wait_listening(port: u16) {
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("nothing listened on {port}");
}

/// The pinned server-everything serving `mode` (`streamableHttp` or `sse`)
/// on 127.0.0.1 only (`peers/localhost-only.cjs`), in its own process group,
/// killed when the child is dropped; with its URL (`/mcp` or `/sse`). `None`
/// (a loud skip) without the peers.
pub async fn everything_over_http(mode: &str) -> Option<(tokio::process::Child, String)> {
    let command = peer("node_modules/.bin/mcp-server-everything")?;
    let peers = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("peers");
    let port = free_port().await;
    let child = tokio::process::Command::new(&command)
        .arg(mode)
        .env("PORT", port.to_string())
        .env(
            "NODE_OPTIONS",
            format!("--require={}", peers.join("localhost-only.cjs").display()),
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .expect("spawn server-everything");
    wait_listening(port).await;
    let path = if mode == "sse" { "sse" } else { "mcp" };
    Some((child, format!("http://127.0.0.1:{port}/{path}")))
}

/// Resident memory of a process (`"self"` or a pid) in KiB, from
/// `/proc/<it>/status`; 0 where that cannot be read.
pub fn rss_kib(process: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{process}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// No stored row of the sessions named `prefix…` was skipped as unreadable
/// (a torn write would be): what every kill-mid-write test checks.
pub fn assert_no_torn_row(loaded: &tether_core::store::Loaded, prefix: &str) {
    let torn: Vec<_> = loaded
        .skipped
        .iter()
        .filter(|s| s.session_id.starts_with(prefix))
        .collect();
    assert!(torn.is_empty(), "no torn row: {torn:?}");
}

/// The token `tether collect` keeps for a private `home` (its
/// `~/.local/state/tether/collect-token`): `--json` prints it only with
/// `--print-env`.
pub fn kept_collect_token(home: &std::path::Path) -> String {
    std::fs::read_to_string(home.join(".local/state/tether/collect-token"))
        .expect("the kept token")
        .trim()
        .to_owned()
}

/// Serves `handler` as an MCP server on stdin/stdout until the client
/// goes (the test peers' `main`): success, or failure with why on stderr.
pub fn serve_stdio<H: rmcp::ServerHandler>(name: &str, handler: H) -> std::process::ExitCode {
    use rmcp::ServiceExt;
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return std::process::ExitCode::FAILURE;
    };
    runtime.block_on(async {
        match handler.serve(rmcp::transport::stdio()).await {
            Ok(running) => {
                let _ = running.waiting().await;
                std::process::ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("{name}: {err}");
                std::process::ExitCode::FAILURE
            }
        }
    })
}

/// Keeps a copy of a test's private home under `$TETHER_KEEP_HOMES/LABEL`
/// (to record fixtures from, or to look at what a harness wrote).
pub fn keep_home(label: &str, home: &std::path::Path) {
    if let Some(dir) = std::env::var_os("TETHER_KEEP_HOMES") {
        let to = std::path::Path::new(&dir).join(label);
        let _ = std::fs::remove_dir_all(&to);
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::process::Command::new("cp")
            .arg("-a")
            .arg(home)
            .arg(&to)
            .status();
    }
}

/// The environment that keeps OpenCode inside a private `home` (its XDG
/// folders) and offline (no model list fetched, no update).
pub fn opencode_env(home: &std::path::Path) -> Vec<(String, String)> {
    let dir = |rel: &str| home.join(rel).display().to_string();
    vec![
        ("XDG_CONFIG_HOME".into(), dir(".config")),
        ("XDG_DATA_HOME".into(), dir(".local/share")),
        ("XDG_STATE_HOME".into(), dir(".local/state")),
        ("XDG_CACHE_HOME".into(), dir(".cache")),
        ("OPENCODE_DISABLE_MODELS_FETCH".into(), "true".into()),
        ("OPENCODE_DISABLE_AUTOUPDATE".into(), "true".into()),
    ]
}

/// The first line a child prints on its stdout (piped), as one JSON
/// document, with the line itself: how a command that prints its document
/// first (`tether collect --json`, `tether tap --json`) is read while it
/// runs on.
pub fn first_json_line(child: &mut std::process::Child) -> (serde_json::Value, String) {
    use std::io::BufRead as _;
    let stdout = child.stdout.take().expect("a piped stdout");
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .expect("one line");
    let doc = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
    (doc, line)
}

/// OpenCode's configuration against the fake model at `model` (its base
/// URL): the fake provider and its one model, no updates, no sharing, with
/// `extra`'s keys (servers, plugins, telemetry) beside them.
pub fn opencode_config(model: &str, extra: serde_json::Value) -> serde_json::Value {
    let mut config = serde_json::json!({
        "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "fake",
            "options": {"baseURL": format!("{model}/v1"), "apiKey": "dummy"},
            "models": {"gpt-4o": {"name": "gpt-4o", "tool_call": true}}}},
        "model": "fake/gpt-4o", "small_model": "fake/gpt-4o",
        "autoupdate": false, "share": "disabled"
    });
    if let (Some(config), serde_json::Value::Object(extra)) = (config.as_object_mut(), extra) {
        config.extend(extra);
    }
    config
}
