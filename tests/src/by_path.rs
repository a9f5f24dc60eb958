//! Shared set-up for the by-path tests: `tether sessions show PATH` and
//! `tether sessions import PATH` run with a private HOME and a bound, the
//! document parsed, a row found, and a planted secret looked for in every
//! output and the store.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// How long one `tether sessions` command may take before the test fails
/// (a generous bound: it reads one file).
const BOUND_SECS: u64 = 120;

/// `tests/fixtures`.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// `tether sessions ARGS` with `home` as HOME, bounded: (exit code,
/// stdout, stderr).
pub fn sessions(home: &Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = crate::tether_at_home(home);
    cmd.arg("sessions").args(args);
    let out = crate::output_within(cmd, BOUND_SECS);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `tether sessions show WHAT --json` in `home`, which must exit 0: its
/// document and everything it printed (stdout then stderr).
pub fn show_json_at(home: &Path, what: &str) -> (Value, String) {
    let (code, stdout, stderr) = sessions(home, &["show", what, "--json"]);
    assert_eq!(code, 0, "{what}: {stderr}");
    let doc = serde_json::from_str(&stdout).expect("one document");
    (doc, stdout + &stderr)
}

/// `tether sessions show PATH --json` in `home`, which must exit 0.
pub fn show_json(home: &Path, path: &Path) -> Value {
    show_json_at(home, &path.display().to_string()).0
}

/// The document's row named `name`, if there is one.
pub fn find_row<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["name"] == name)
}

/// The document's row named `name`; the test fails without it.
pub fn row<'a>(doc: &'a Value, name: &str) -> &'a Value {
    find_row(doc, name).unwrap_or_else(|| panic!("no row {name} in {doc:#}"))
}

/// Each JSON line of `real`, changed by `plant` and written back as one
/// line each (the file is a fixture: it must read).
pub fn planted_lines(real: &Path, mut plant: impl FnMut(&mut Value)) -> Vec<String> {
    std::fs::read_to_string(real)
        .unwrap_or_else(|e| panic!("{}: {e}", real.display()))
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).expect("JSON lines");
            plant(&mut value);
            value.to_string()
        })
        .collect()
}

/// Fails when `text` (what `label` printed) holds `secret`.
pub fn assert_no_secret(secret: &str, label: &str, text: &str) {
    assert!(!text.contains(secret), "{label}: {text}");
}

/// Fails when the store at `db`, or its write-ahead log, shared memory or
/// journal where they are left, holds `secret` anywhere in its bytes.
pub fn assert_store_clean(label: &str, db: &Path, secret: &str) {
    let stored = std::fs::read(db).expect("the store");
    assert!(
        !stored.windows(secret.len()).any(|w| w == secret.as_bytes()),
        "{label}: the store holds the secret"
    );
    for tail in ["-wal", "-shm", "-journal"] {
        let mut side = db.as_os_str().to_owned();
        side.push(tail);
        if let Ok(bytes) = std::fs::read(&side) {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{label}: {} holds the secret",
                Path::new(&side).display()
            );
        }
    }
}

/// Shows `path` as text, as JSON and with `--tools`, then imports it into
/// `db`, all in `home`: each must exit 0 and print no `secret` (`label`
/// names the case in a failure).
pub fn assert_shown_and_imported_clean(
    label: &str,
    home: &Path,
    path: &Path,
    db: &Path,
    secret: &str,
) {
    let path = path.display().to_string();
    let db = db.display().to_string();
    for args in [
        vec!["show", &path],
        vec!["show", &path, "--json"],
        vec!["show", &path, "--tools"],
        vec!["import", &path, "--db", &db],
    ] {
        let (code, stdout, stderr) = sessions(home, &args);
        assert_eq!(code, 0, "{label} {args:?}: {stderr}");
        assert_no_secret(secret, &format!("{label} {args:?}"), &(stdout + &stderr));
    }
}

/// `tether history --db DB --json` in `home`: what it printed.
pub fn history_json(home: &Path, db: &Path) -> String {
    let mut cmd = crate::tether_at_home(home);
    cmd.args(["history", "--db", &db.display().to_string(), "--json"]);
    String::from_utf8_lossy(&crate::output_within(cmd, BOUND_SECS).stdout).into_owned()
}

/// Writes Copilot CLI's configuration under `home`: `~/.copilot/mcp-config.json`
/// naming `servers` (the `mcpServers` object) and `~/.copilot/config.json`
/// trusting `~/work`. Returns (`~/.copilot`, `~/work`).
pub fn copilot_home(home: &Path, servers: Value) -> (PathBuf, PathBuf) {
    let dir = home.join(".copilot");
    let work = home.join("work");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::create_dir_all(&work).expect("work");
    let servers = serde_json::json!({ "mcpServers": servers });
    std::fs::write(dir.join("mcp-config.json"), servers.to_string()).expect("mcp config");
    let trusted = serde_json::json!({"trusted_folders": [work]}).to_string();
    std::fs::write(dir.join("config.json"), &trusted).expect("config");
    (dir, work)
}

/// Copilot's `mcpServers` for a by-path run: `count`, `run`'s counting
/// peer (its log where `run` says), and `broken`, whose command (naming
/// `planted`) does not exist.
pub fn copilot_count_and_broken(run: &crate::refusal_run::RefusalHome, planted: &str) -> Value {
    let (var, log) = run.log_env();
    serde_json::json!({
        "count": {"type": "local", "command": run.server(), "args": run.server_args(),
                  "env": {var: log}, "tools": ["*"]},
        "broken": {"type": "local", "command": format!("/nonexistent/{planted}/server"),
                   "args": [], "tools": ["*"]}
    })
}

/// Copilot CLI at `copilot` in a `-p "what time is it"` run with `args`,
/// offline, in `work` with `home` as HOME, its model the fake model at
/// `model_base` (`gpt-4o`, a dummy key): the command, to be run bounded.
pub fn copilot_offline(
    copilot: &Path,
    home: &Path,
    work: &Path,
    model_base: &str,
    args: &[&str],
) -> std::process::Command {
    let mut cmd = std::process::Command::new(copilot);
    cmd.args(["-p", "what time is it"])
        .args(args)
        .current_dir(work)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_AUTO_UPDATE", "false")
        .env("COPILOT_PKG_CACHE_HOME", home.join("pkg"))
        .env("COPILOT_PROVIDER_BASE_URL", format!("{model_base}/v1"))
        .env("COPILOT_PROVIDER_API_KEY", "dummy")
        .env("COPILOT_MODEL", "gpt-4o");
    cmd
}

/// `codex exec --skip-git-repo-check --json "what time is it"` in `work`,
/// with `home` as HOME and `codex_home` as `CODEX_HOME` (a dummy
/// `FAKE_KEY`), in its own process group, no stdin and no stderr; stdout
/// is the caller's to set. To be spawned and waited on with a bound.
pub fn codex_exec(
    codex: &Path,
    home: &Path,
    codex_home: &Path,
    work: &Path,
) -> std::process::Command {
    let mut cmd = std::process::Command::new(codex);
    cmd.args(["exec", "--skip-git-repo-check", "--json", "what time is it"])
        .current_dir(work)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("CODEX_HOME", codex_home)
        .env("FAKE_KEY", "dummy")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    cmd
}

/// Claude Code's headless run printing stream-json: `-p "what time is
/// it" --output-format stream-json --verbose`.
pub const CLAUDE_STREAM_ARGS: [&str; 5] = [
    "-p",
    "what time is it",
    "--output-format",
    "stream-json",
    "--verbose",
];

/// Sets `cmd` (Claude Code) to run in `dir` with only `home` as HOME,
/// `path` as PATH and the fake model at `model_base` (a dummy key, no
/// retries).
pub fn claude_env<'a>(
    cmd: &'a mut std::process::Command,
    dir: &Path,
    home: &Path,
    path: &str,
    model_base: &str,
) -> &'a mut std::process::Command {
    cmd.current_dir(dir)
        .env_clear()
        .env("HOME", home)
        .env("PATH", path)
        .env("ANTHROPIC_API_KEY", "dummy")
        .env("ANTHROPIC_BASE_URL", model_base)
        .env("CLAUDE_CODE_MAX_RETRIES", "0")
}

/// The pinned Copilot CLI's binary, or `None` with a loud SKIP where it is
/// not installed.
pub fn pinned_copilot() -> Option<PathBuf> {
    crate::Release::Pinned
        .peer("node_modules/@github/copilot-linux-x64/copilot")
        .or_else(|| {
            eprintln!("SKIP: Copilot CLI is not installed (run `npm ci` in tests/peers)");
            None
        })
}

/// The first transcript (`*.jsonl`) in a project folder under
/// `home/.claude/projects`, if Claude Code wrote one.
pub fn claude_transcript(home: &Path) -> Option<PathBuf> {
    std::fs::read_dir(home.join(".claude/projects"))
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|f| f.path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
}

/// Imports `file` into `db` twice in `home`: the first says `1 new`, the
/// second `1 unchanged`.
pub fn assert_imported_once(home: &Path, file: &Path, db: &Path) {
    let file = file.display().to_string();
    let db = db.display().to_string();
    for want in ["1 new", "1 unchanged"] {
        let (code, _, stderr) = sessions(home, &["import", &file, "--db", &db]);
        assert_eq!(code, 0, "{stderr}");
        assert!(stderr.contains(want), "{stderr}");
    }
}

/// Every rollout (`*.jsonl`) under `codex_home/sessions`, in the order a
/// depth-first walk meets them.
pub fn codex_rollouts(codex_home: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![codex_home.join("sessions")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path);
            }
        }
    }
    found
}

/// Calls `plant` with every string in `value` and the key it stands under
/// (an array's items stand under the array's key; `key` is the one `value`
/// stands under): where a planting test puts its secret.
pub fn plant_strings<F: FnMut(Option<&str>, &mut String)>(
    value: &mut Value,
    key: Option<&str>,
    plant: &mut F,
) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                plant_strings(v, Some(k), plant);
            }
        }
        Value::Array(items) => {
            for v in items {
                plant_strings(v, key, plant);
            }
        }
        Value::String(s) => plant(key, s),
        _ => {}
    }
}

/// A string as a TOML basic string (a JSON string is one).
pub fn toml_string(s: &str) -> String {
    serde_json::to_string(s).expect("a TOML basic string is a JSON string")
}

/// Codex's folders under `home`'s home (`~/.codex`, `~/work`), made, and
/// the start of its `config.toml`: the fake model at `model_base` as its
/// provider and `[mcp_servers.time]`, the counting server with its log,
/// last (so the caller may add to its table, then more tables).
pub fn codex_time_config(
    home: &crate::refusal_run::RefusalHome,
    model_base: &str,
) -> (PathBuf, PathBuf, String) {
    let codex_home = home.home().join(".codex");
    let work = home.home().join("work");
    std::fs::create_dir_all(&codex_home).expect("dir");
    std::fs::create_dir_all(&work).expect("dir");
    let (var, calls_log) = home.log_env();
    let config = format!(
        "model = \"gpt-5.1\"\nmodel_provider = \"fake\"\n\
         [model_providers.fake]\nname = \"fake\"\nbase_url = {}\nwire_api = \"responses\"\nenv_key = \"FAKE_KEY\"\n\
         [mcp_servers.time]\ncommand = {}\nenv = {{ {var} = {} }}\n",
        toml_string(&format!("{model_base}/v1")),
        toml_string(&home.server().display().to_string()),
        toml_string(&calls_log),
    );
    (codex_home, work, config)
}
