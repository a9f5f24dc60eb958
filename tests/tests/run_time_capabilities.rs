//! Skills, hooks and plugins at run time, verified against the real CLIs:
//! each harness runs one session against the fake model (which invokes a
//! skill) with a user skill, a plugin's skill, a plugin that fails to load,
//! and at session start, before a tool and at stop a hook that succeeds,
//! one that fails and one whose command does not exist. What the session
//! shows (`tether sessions show`) must match what the harness did: each
//! hook's own marks, the fake model's requests for the skills offered and
//! invoked, and the harness's own report of its plugins. Secrets and prose
//! planted in skill descriptions, hook commands, hook output and plugin
//! manifests appear in no output and no store.
//!
//! Each skips loudly where its CLI (tests/peers, `npm ci`) is not
//! installed. Waits end at the CLI's exit, bounded.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tether_tests::Release;

/// In a skill's description (prose the model is sent, never Tether).
const PLANTED_DESCRIPTION: &str = "sk-planted-desc-Q8vX2wLm";
/// In a hook's command line (an argument).
const PLANTED_ARGUMENT: &str = "planted-hook-arg-M3nB6tRe";
/// What the hooks print (their output, which the harness records).
const PLANTED_OUTPUT: &str = "planted-hook-out-Z7kP4yHq";
/// In the broken plugin's manifest.
const PLANTED_MANIFEST: &str = "planted-manifest-R5tY1uIo";

const PLANTED: [&str; 4] = [
    PLANTED_DESCRIPTION,
    PLANTED_ARGUMENT,
    PLANTED_OUTPUT,
    PLANTED_MANIFEST,
];

/// The hook events each harness run fires, by the harness's own names.
const EVENTS: [&str; 3] = ["SessionStart", "PreToolUse", "Stop"];

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    write(path, text);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// The scripts every hook runs: `ok.sh MARK` and `fail.sh MARK` append
/// their mark to `marks` (their own record of having run) and print the
/// planted output; `fail.sh` then exits 3.
struct Hooks {
    dir: PathBuf,
    marks: PathBuf,
}

impl Hooks {
    fn new(dir: &Path) -> Self {
        let marks = dir.join("marks.log");
        for (name, exit) in [("ok.sh", 0), ("fail.sh", 3)] {
            executable(
                &dir.join(name),
                &format!(
                    "#!/bin/sh\necho \"$1\" >> '{}'\necho '{PLANTED_OUTPUT}'\necho '{PLANTED_OUTPUT}' >&2\nexit {exit}\n",
                    marks.display()
                ),
            );
        }
        // Marks its start, sleeps past a one-second limit, marks its end:
        // a run its harness cut leaves the first mark only.
        executable(
            &dir.join("slow.sh"),
            &format!(
                "#!/bin/sh\necho \"$1-start\" >> '{0}'\nsleep 5\necho \"$1-end\" >> '{0}'\n",
                marks.display()
            ),
        );
        Hooks {
            dir: dir.to_path_buf(),
            marks,
        }
    }

    /// A command that runs past a one-second limit.
    fn slow(&self, event: &str) -> String {
        format!("{} {event}-slow", self.dir.join("slow.sh").display())
    }

    /// The three commands of `event`: succeeds, fails, does not exist.
    fn commands(&self, event: &str) -> [String; 3] {
        [
            format!(
                "{} {event}-ok {PLANTED_ARGUMENT}",
                self.dir.join("ok.sh").display()
            ),
            format!(
                "{} {event}-fail {PLANTED_ARGUMENT}",
                self.dir.join("fail.sh").display()
            ),
            format!(
                "/nonexistent/hooks/{}.sh {PLANTED_ARGUMENT}",
                event.to_lowercase()
            ),
        ]
    }

    /// How many times each mark was written.
    fn marks(&self) -> std::collections::BTreeMap<String, u32> {
        let text = std::fs::read_to_string(&self.marks).unwrap_or_default();
        let mut out = std::collections::BTreeMap::new();
        for line in text.lines() {
            *out.entry(line.trim().to_owned()).or_insert(0) += 1;
        }
        out
    }
}

/// A plugin directory `goodplug` with the skill `greet`, and a broken one
/// (`plug-bad`) whose manifest is not JSON.
fn plugins(dir: &Path) -> (PathBuf, PathBuf) {
    let good = dir.join("plug-good");
    write(
        &good.join(".claude-plugin/plugin.json"),
        &json!({"name": "goodplug", "version": "1.0.0"}).to_string(),
    );
    write(
        &good.join("skills/greet/SKILL.md"),
        &format!("---\nname: greet\ndescription: Say hi {PLANTED_DESCRIPTION}\n---\nSay hi.\n"),
    );
    let bad = dir.join("plug-bad");
    write(
        &bad.join(".claude-plugin/plugin.json"),
        &format!("{{\"name\": \"badplug\", \"description\": \"{PLANTED_MANIFEST}\", "),
    );
    (good, bad)
}

/// The user skill `release-notes` in `dir` (`dir/SKILL.md`), its
/// description prose with a planted secret.
fn user_skill(dir: &Path) {
    write(
        &dir.join("SKILL.md"),
        &format!(
            "---\nname: release-notes\ndescription: Writes release notes {PLANTED_DESCRIPTION}\n---\nWrite them.\n"
        ),
    );
}

/// How many times the fake model called `tool`.
fn calls_to(log: &tether_tests::fake_model::ModelLog, tool: &str) -> u64 {
    log.turns()
        .iter()
        .filter(|t| t.called.as_deref() == Some(tool))
        .count() as u64
}

/// Runs `cmd` (its stdin closed) to its exit, bounded; keeps its home
/// where `TETHER_KEEP_HOMES` says, as `label`; the CLI must have asked the
/// fake model (`log`) at least once.
async fn ran_to_exit(
    cmd: std::process::Command,
    home: &Path,
    label: &str,
    log: &tether_tests::fake_model::ModelLog,
) -> std::process::Output {
    let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 180))
        .await
        .expect("the run");
    tether_tests::keep_home(label, home);
    assert!(
        !log.turns().is_empty(),
        "{label}: the CLI never asked the model (exit {:?}): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// What one run left: the home, the fake model's log, the CLI's stdout.
struct Ran {
    home: tempfile::TempDir,
    hooks: Hooks,
    log: tether_tests::fake_model::ModelLog,
    stdout: String,
}

/// Claude Code at `release`, once, invoking the skill `release-notes`.
async fn claude(release: Release) -> Option<Ran> {
    let Some(program) = release.peer("node_modules/.bin/claude") else {
        eprintln!(
            "SKIP: claude ({}) is not installed (run `npm ci` in tests/peers)",
            release.label()
        );
        return None;
    };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let (model, log) =
        tether_tests::fake_model::start_model_calling("Skill", json!({"skill": "release-notes"}))
            .await;
    let home = tempfile::tempdir().expect("home");
    let hooks = Hooks::new(&home.path().join("hooks"));
    let (good, bad) = plugins(home.path());
    user_skill(&home.path().join(".claude/skills/release-notes"));
    let mut settings = serde_json::Map::new();
    let slow = hooks.slow("SessionStart");
    for event in EVENTS {
        let mut hooks: Vec<Value> = hooks
            .commands(event)
            .iter()
            .map(|c| json!({"type": "command", "command": c}))
            .collect();
        if event == "SessionStart" {
            // One that runs past its one-second limit.
            hooks.push(json!({"type": "command", "command": slow.clone(), "timeout": 1}));
        }
        let group = match event {
            "PreToolUse" => json!({"matcher": "*", "hooks": hooks}),
            _ => json!({"hooks": hooks}),
        };
        settings.insert(event.to_owned(), json!([group]));
    }
    write(
        &home.path().join(".claude/settings.json"),
        &json!({ "hooks": settings }).to_string(),
    );
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    let mut cmd = std::process::Command::new(program);
    cmd.args([
        "-p",
        "write the release notes",
        "--plugin-dir",
        &good.display().to_string(),
        "--plugin-dir",
        &bad.display().to_string(),
        "--output-format",
        "stream-json",
        "--verbose",
    ])
    .env_clear()
    .env("PATH", release.path())
    .env("HOME", home.path())
    .env("ANTHROPIC_API_KEY", "dummy")
    .env("ANTHROPIC_BASE_URL", model.base())
    .env("CLAUDE_CODE_MAX_RETRIES", "0")
    .current_dir(&work)
    .stdin(std::process::Stdio::null());
    let out = ran_to_exit(
        cmd,
        home.path(),
        &format!("run-time-claude-{}", release.label()),
        &log,
    )
    .await;
    Some(Ran {
        home,
        hooks,
        log,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    })
}

/// `tether ARGS --json` on `home`: its one document and its raw text.
fn tether_json(home: &Path, args: &[&str]) -> (Value, String) {
    let out = tether_tests::tether_at_home(home)
        .args(args)
        .arg("--json")
        .output()
        .expect("tether runs");
    assert!(
        out.status.success(),
        "tether {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (serde_json::from_str(&text).expect("one document"), text)
}

/// The one session `tether sessions` finds in `home`, shown.
fn shown_session(home: &Path) -> (Value, String) {
    let (list, _) = tether_json(home, &["sessions", "list"]);
    let sessions = list["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 1, "{list:#}");
    let id = sessions[0]["session_id"]
        .as_str()
        .expect("an id")
        .to_owned();
    tether_json(home, &["sessions", "show", &id])
}

fn rows<'a>(doc: &'a Value, kind: &str) -> Vec<&'a Value> {
    doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["kind"] == kind)
        .collect()
}

/// How many runs of one hook (event and command) ended `outcome`.
fn runs(doc: &Value, event: &str, command: &str, outcome: &str) -> u64 {
    rows(doc, "hook")
        .into_iter()
        .filter(|r| r["event"] == event && r["command"] == command)
        .flat_map(|r| r["outcomes"].as_array().cloned().unwrap_or_default())
        .filter(|o| o["outcome"] == outcome)
        .map(|o| o["count"].as_u64().unwrap_or(0))
        .sum()
}

fn assert_nothing_planted(what: &str, text: &str) {
    for planted in PLANTED {
        assert!(!text.contains(planted), "{what} holds {planted}");
    }
}

async fn claude_session_matches_what_it_did(release: Release) {
    let Some(ran) = claude(release).await else {
        return;
    };
    let (doc, text) = shown_session(ran.home.path());
    let label = release.label();

    // Hooks: each run the harness recorded is a run the hook itself marked.
    let marks = ran.hooks.marks();
    for event in EVENTS {
        let ok = u64::from(marks.get(&format!("{event}-ok")).copied().unwrap_or(0));
        let fail = u64::from(marks.get(&format!("{event}-fail")).copied().unwrap_or(0));
        assert!(
            ok > 0 && fail > 0,
            "{label}: {event}'s hooks never ran: {marks:?}"
        );
        assert_eq!(
            runs(&doc, event, "ok.sh", "succeeded"),
            ok,
            "{label} {event} ok.sh"
        );
        assert_eq!(
            runs(&doc, event, "fail.sh", "failed"),
            fail,
            "{label} {event} fail.sh"
        );
        // The missing command ran as often as its neighbours did.
        let missing = format!("{}.sh", event.to_lowercase());
        assert_eq!(
            runs(&doc, event, &missing, "command_not_found"),
            ok,
            "{label} {event} {missing}"
        );
    }
    for row in rows(&doc, "hook") {
        assert_eq!(
            row["status"] == "failed",
            row["command"] != "ok.sh",
            "{row:#}"
        );
    }
    // The slow hook started (its first mark) and had not finished when the
    // session went on (no second mark): timed out, as Claude Code recorded
    // it (`hook_cancelled` with `timedOut`).
    assert!(marks.contains_key("SessionStart-slow-start"), "{marks:?}");
    assert!(!marks.contains_key("SessionStart-slow-end"), "{marks:?}");
    assert_eq!(
        runs(&doc, "SessionStart", "slow.sh", "timed_out"),
        u64::from(marks["SessionStart-slow-start"]),
        "{label}"
    );
    let slow_row = rows(&doc, "hook")
        .into_iter()
        .find(|r| r["command"] == "slow.sh")
        .expect("the slow hook's row");
    assert_eq!(slow_row["reason_code"], "hook_timed_out", "{slow_row:#}");
    let missing = rows(&doc, "hook")
        .into_iter()
        .find(|r| r["command"] == "stop.sh")
        .expect("the missing Stop hook's row");
    assert_eq!(missing["reason_code"], "command_not_found");

    // Skills: offered as the fake model was sent them, invoked as it asked.
    let turns = ran.log.turns();
    let sent: std::collections::BTreeSet<String> =
        turns.iter().flat_map(|t| t.skills.clone()).collect();
    assert!(sent.contains("release-notes"), "{label}: {sent:?}");
    let listed: std::collections::BTreeSet<String> = rows(&doc, "skill")
        .into_iter()
        .filter(|r| r["stages"]["listed"]["state"] == "yes")
        .map(|r| match r["plugin"].as_str() {
            Some(plugin) => format!("{plugin}:{}", r["name"].as_str().unwrap_or("")),
            None => r["name"].as_str().unwrap_or("").to_owned(),
        })
        .collect();
    assert_eq!(listed, sent, "{label}: the skills offered");
    let invoked = calls_to(&ran.log, "Skill");
    let notes = rows(&doc, "skill")
        .into_iter()
        .find(|r| r["name"] == "release-notes" && r["plugin"].is_null())
        .expect("the user skill's row");
    assert_eq!(notes["calls"].as_u64(), Some(invoked), "{notes:#}");
    assert_eq!(notes["status"], "active");
    let greet = rows(&doc, "skill")
        .into_iter()
        .find(|r| r["name"] == "greet")
        .expect("the plugin skill's row");
    assert_eq!(greet["plugin"], "goodplug");
    assert_eq!(greet["status"], "delivered", "offered, never invoked");

    // Plugins: the records show the good one loaded (its skill was
    // listed); the harness's own report (its stream-json init, read by its
    // plugin) names the broken one's failure.
    let good = rows(&doc, "plugin")
        .into_iter()
        .find(|r| r["name"] == "goodplug")
        .expect("the good plugin's row");
    assert_eq!(good["status"], "active");
    let registry = tether_core::registry::Registry::with_static().expect("registry");
    let harness = registry.harness("claude").expect("claude's plugin");
    let strategy = harness.strategy.expect("a passthrough strategy");
    let reported: Vec<tether_core::model::Evidence> = ran
        .stdout
        .lines()
        .flat_map(|l| strategy.read_output(l, tether_core::model::Timestamp(1)))
        .collect();
    let mut attempt_rows = Vec::new();
    for ev in &reported {
        let _ = tether_core::capability::apply(&mut attempt_rows, ev);
    }
    let plugin = |name: &str| {
        attempt_rows
            .iter()
            .find(|r| r.kind == tether_core::vocab::CapabilityKind::Plugin && r.name == name)
            .unwrap_or_else(|| panic!("{label}: no {name} in {attempt_rows:#?}"))
            .clone()
    };
    assert_eq!(plugin("goodplug").status.as_str(), "active");
    let bad = plugin("plug-bad");
    assert_eq!(bad.status.as_str(), "failed");
    assert_eq!(
        bad.reason_code,
        Some(tether_core::vocab::ReasonCode::PluginLoadFailed)
    );
    assert_nothing_planted("the reported plugins", &format!("{reported:?}"));

    // The run's own stream-json, saved and read by path: the session it
    // names is the one its transcript holds, and where the release prints
    // each hook's end (2.1.3xx: `hook_response`), every SessionStart hook
    // that ran is there with how it ended, as the hooks' own marks say.
    let saved = ran.home.path().join("stream.jsonl");
    std::fs::write(&saved, &ran.stdout).expect("save the stream-json");
    let (streamed, streamed_text) = tether_json(
        ran.home.path(),
        &["sessions", "show", &saved.display().to_string()],
    );
    assert_eq!(
        streamed["session"]["session_id"], doc["session"]["session_id"],
        "{label}: the stream-json's session"
    );
    assert_nothing_planted("the stream-json, read by path", &streamed_text);
    if ran.stdout.contains("\"hook_response\"") {
        let started: u64 = rows(&streamed, "hook")
            .into_iter()
            .filter(|r| r["event"] == "SessionStart")
            .map(|r| r["calls"].as_u64().unwrap_or(0))
            .sum();
        let marks_start = [
            "SessionStart-ok",
            "SessionStart-fail",
            "SessionStart-slow-start",
        ]
        .iter()
        .map(|m| u64::from(marks.get(*m).copied().unwrap_or(0)))
        .sum::<u64>()
            + u64::from(marks.get("SessionStart-ok").copied().unwrap_or(0));
        // ok.sh, fail.sh, the missing command (which runs as often as
        // ok.sh) and the slow one.
        assert_eq!(
            started, marks_start,
            "{label}: SessionStart runs in the stream-json"
        );
    }

    // `tether inventory --sessions`: each configured hook carries what the
    // session showed of it.
    let (inventory, inventory_text) = tether_json(
        ran.home.path(),
        &["inventory", "--harness", "claude", "--sessions"],
    );
    let settings_of = |name: &str| -> Vec<String> {
        inventory["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .find(|r| r["kind"] == "hook" && r["name"] == name)
            .unwrap_or_else(|| panic!("no hook {name} in {inventory:#}"))["diagnostics"]["settings"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    };
    let stop_ok = settings_of("Stop");
    assert!(stop_ok.contains(&"status=active".to_owned()), "{stop_ok:?}");
    assert!(
        stop_ok.contains(&format!(
            "uses={}",
            marks.get("Stop-ok").copied().unwrap_or(0)
        )),
        "{stop_ok:?}"
    );
    let stop_missing = settings_of("Stop#3");
    assert!(
        stop_missing.contains(&"status=failed".to_owned()),
        "{stop_missing:?}"
    );
    assert_nothing_planted("inventory --sessions --json", &inventory_text);

    // Nothing planted reaches a document, the text view or a store.
    assert_nothing_planted("sessions show --json", &text);
    let id = doc["session"]["session_id"]
        .as_str()
        .expect("id")
        .to_owned();
    let out = tether_tests::tether_at_home(ran.home.path())
        .args(["sessions", "show", &id])
        .output()
        .expect("tether runs");
    assert_nothing_planted("sessions show", &String::from_utf8_lossy(&out.stdout));
    let db = ran.home.path().join("store.db");
    let out = tether_tests::tether_at_home(ran.home.path())
        .args(["sessions", "import", "--db", &db.display().to_string()])
        .output()
        .expect("tether runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&db).expect("the store");
    let stored = String::from_utf8_lossy(&bytes);
    assert!(stored.contains("release-notes"), "the store holds the rows");
    assert_nothing_planted("the store", &stored);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_pinned_shows_the_skills_hooks_and_plugins_it_ran() {
    claude_session_matches_what_it_did(Release::Pinned).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_newest_shows_the_skills_hooks_and_plugins_it_ran() {
    claude_session_matches_what_it_did(Release::Newest).await;
}

/// Copilot CLI, once, invoking the skill `release-notes`: hooks at
/// session start and end (one that succeeds, one that fails, one whose
/// command does not exist) and before a tool (one that succeeds: Copilot
/// denies the tool when a `preToolUse` hook fails).
///
/// With `plugin`, the plugin `demo` (its skill `greet`, its manifest
/// holding a planted secret) is installed first by `copilot plugin
/// install`, and the model loads `skill` (`greet`).
async fn copilot(skill: &str, plugin: bool) -> Option<Ran> {
    let Some(program) = tether_tests::peer("node_modules/@github/copilot-linux-x64/copilot") else {
        eprintln!("SKIP: copilot is not installed (run `npm ci` in tests/peers)");
        return None;
    };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let (model, log) =
        tether_tests::fake_model::start_model_calling("skill", json!({ "skill": skill })).await;
    let home = tempfile::tempdir().expect("home");
    let copilot = |args: &[&str]| {
        let mut cmd = std::process::Command::new(&program);
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", home.path())
            .env("COPILOT_OFFLINE", "true")
            .env("COPILOT_AUTO_UPDATE", "false")
            .env("COPILOT_PKG_CACHE_HOME", home.path().join("pkg"))
            .env("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", model.base()))
            .env("COPILOT_PROVIDER_API_KEY", "dummy")
            .env("COPILOT_MODEL", "gpt-4o")
            .current_dir(home.path().join("work"))
            .stdin(std::process::Stdio::null());
        cmd
    };
    std::fs::create_dir_all(home.path().join("work")).expect("work");
    let hooks = Hooks::new(&home.path().join("hooks"));
    user_skill(&home.path().join(".copilot/skills/release-notes"));
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    let mut events = serde_json::Map::new();
    for (event, copilot_event) in [
        ("SessionStart", "sessionStart"),
        ("PreToolUse", "preToolUse"),
        ("Stop", "sessionEnd"),
    ] {
        let commands = hooks.commands(event);
        let keep = if event == "PreToolUse" { 1 } else { 3 };
        let entries: Vec<Value> = commands[..keep]
            .iter()
            .map(|c| json!({"type": "command", "bash": c, "timeoutSec": 30}))
            .collect();
        events.insert(copilot_event.to_owned(), json!(entries));
    }
    write(
        &home.path().join(".copilot/settings.json"),
        &json!({"version": 1, "hooks": events}).to_string(),
    );
    write(
        &home.path().join(".copilot/config.json"),
        &json!({"trustedFolders": [work], "trusted_folders": [work]}).to_string(),
    );
    // Installed after the trust is written: Copilot keeps its installs in
    // the same file.
    if plugin {
        let source = home.path().join("src/demo");
        write(
            &source.join("plugin.json"),
            &json!({"name": "demo", "version": "1.0.0", "skills": "skills/",
                    "description": PLANTED_MANIFEST})
            .to_string(),
        );
        write(
            &source.join("skills/greet/SKILL.md"),
            &format!("---\nname: greet\ndescription: Say hi {PLANTED_DESCRIPTION}\n---\nSay hi.\n"),
        );
        let installed = tether_tests::output_within(
            {
                let mut cmd = copilot(&["plugin", "install", &source.display().to_string()]);
                cmd.stdout(std::process::Stdio::null());
                cmd
            },
            120,
        );
        assert!(
            installed.status.success(),
            "copilot plugin install: {installed:?}"
        );
    }
    let cmd = copilot(&["-p", "write the release notes", "--allow-all-tools"]);
    let out = ran_to_exit(cmd, home.path(), "run-time-copilot", &log).await;
    Some(Ran {
        home,
        hooks,
        log,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
    })
}

/// A plugin's skill, installed by `copilot plugin install` itself: the
/// model loads `greet`, Copilot records it as the plugin's
/// (`skill.invoked`'s `pluginName`), and the row matches the inventory's
/// `demo:greet`. Nothing of the manifest or the skill's prose comes out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_shows_a_plugin_s_skill_it_loaded() {
    let Some(ran) = copilot("greet", true).await else {
        return;
    };
    let (doc, text) = shown_session(ran.home.path());
    let greet = rows(&doc, "skill")
        .into_iter()
        .find(|r| r["name"] == "greet")
        .unwrap_or_else(|| panic!("no greet in {doc:#}"));
    assert_eq!(greet["plugin"], "demo", "{greet:#}");
    assert_eq!(greet["status"], "active", "{greet:#}");
    assert_eq!(
        greet["calls"].as_u64(),
        Some(calls_to(&ran.log, "skill")),
        "{greet:#}"
    );
    assert_eq!(greet["in_config"], true, "{greet:#}");
    assert_nothing_planted("sessions show --json", &text);
}

/// Copilot records each event's hooks as one run (`hook.end`, its
/// failure's exit status the one its error names) and each skill it loads
/// for the model (`skill.invoked`); it records no skill listing and no
/// plugin loads, so those rows stay as the configuration left them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_shows_the_hooks_and_skills_it_ran() {
    let Some(ran) = copilot("release-notes", false).await else {
        return;
    };
    let (doc, text) = shown_session(ran.home.path());
    let marks = ran.hooks.marks();
    let hook = |event: &str| {
        rows(&doc, "hook")
            .into_iter()
            .find(|r| r["event"] == event && r["calls"].as_u64().unwrap_or(0) > 0)
            .unwrap_or_else(|| panic!("no {event} run in {doc:#}"))
            .clone()
    };
    for (event, copilot_event) in [
        ("SessionStart", "sessionStart"),
        ("PreToolUse", "preToolUse"),
        ("Stop", "sessionEnd"),
    ] {
        let ok = u64::from(marks.get(&format!("{event}-ok")).copied().unwrap_or(0));
        assert!(ok > 0, "{event}'s hooks never ran: {marks:?}");
        let row = hook(copilot_event);
        // One run of the event's hooks per time its succeeding hook ran.
        assert_eq!(row["calls"].as_u64(), Some(ok), "{row:#}");
        if event == "PreToolUse" {
            assert_eq!(row["status"], "active", "{row:#}");
        } else {
            let failed = marks.get(&format!("{event}-fail")).copied().unwrap_or(0);
            assert!(failed > 0, "{marks:?}");
            assert_eq!(row["status"], "failed", "{row:#}");
            let code = row["outcomes"][0]["exit_code"].as_i64();
            assert!(matches!(code, Some(3) | Some(127)), "{row:#}");
        }
        // Today's configuration names the event's hooks.
        assert_eq!(row["in_config"], true, "{row:#}");
    }
    let invoked = calls_to(&ran.log, "skill");
    let notes = rows(&doc, "skill")
        .into_iter()
        .find(|r| r["name"] == "release-notes")
        .expect("the skill's row");
    assert_eq!(notes["calls"].as_u64(), Some(invoked), "{notes:#}");
    assert_eq!(notes["status"], "active");
    assert_nothing_planted("sessions show --json", &text);
}

/// Gemini CLI, once, activating the skill `release-notes`, its own
/// telemetry collected: hooks at session start and end (one that
/// succeeds, one that fails, one whose command does not exist) and before
/// a tool (one that succeeds: a failing `BeforeTool` hook blocks the
/// tool). Its telemetry (`gemini_cli.hook_call`) names each hook's run,
/// its event and exit status; its chat record names the skill it
/// activated. It records no skill listing and no plugin loads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_shows_the_hooks_and_skills_it_ran() {
    let Some(program) = tether_tests::peer("node_modules/.bin/gemini") else {
        eprintln!("SKIP: gemini is not installed (run `npm ci` in tests/peers)");
        return;
    };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let (model, log) = tether_tests::fake_model::start_model_calling(
        "activate_skill",
        json!({"name": "release-notes"}),
    )
    .await;
    let (receiver, batches, _running, setup) =
        tether_tests::collected::receiver_and_setup("gemini").await;
    let home = tempfile::tempdir().expect("home");
    let hooks = Hooks::new(&home.path().join("hooks"));
    user_skill(&home.path().join(".gemini/skills/release-notes"));
    // An extension that loads (a planted secret in its manifest) and one
    // whose manifest is not JSON.
    let extensions = home.path().join(".gemini/extensions");
    write(
        &extensions.join("demo/gemini-extension.json"),
        &json!({"name": "demo", "version": "1.0.0", "description": PLANTED_MANIFEST}).to_string(),
    );
    write(
        &extensions.join("broken/gemini-extension.json"),
        &format!("{{\"name\": \"broken\", \"description\": \"{PLANTED_MANIFEST}\", "),
    );
    let mut events = serde_json::Map::new();
    for (event, gemini_event) in [
        ("SessionStart", "SessionStart"),
        ("PreToolUse", "BeforeTool"),
        ("Stop", "SessionEnd"),
    ] {
        let keep = if event == "PreToolUse" { 1 } else { 3 };
        let entries: Vec<Value> = hooks.commands(event)[..keep]
            .iter()
            .map(|c| json!({"type": "command", "command": c}))
            .collect();
        events.insert(gemini_event.to_owned(), json!([{"hooks": entries}]));
    }
    write(
        &home.path().join(".gemini/settings.json"),
        &json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "hooks": events,
        })
        .to_string(),
    );
    let mut env = tether_tests::collected::setup_env(&setup);
    env.extend([
        ("GEMINI_API_KEY".to_owned(), "dummy".to_owned()),
        ("GEMINI_CLI_TRUST_WORKSPACE".to_owned(), "true".to_owned()),
        ("GOOGLE_GEMINI_BASE_URL".to_owned(), model.base()),
    ]);
    let args = [
        "-m",
        "gemini-2.5-pro",
        "--approval-mode",
        "yolo",
        "-p",
        "write the release notes",
    ]
    .map(str::to_owned)
    .to_vec();
    // Done once the session-end hooks' runs arrived.
    let ended = |a: &tether_core::history::AttachmentAttempt| {
        a.capabilities
            .iter()
            .filter(|r| r.event.as_deref() == Some("SessionEnd"))
            .count()
            >= 3
    };
    let attempt = tether_tests::collected::collect_session(
        "gemini",
        &program,
        args,
        env,
        home.path(),
        home.path(),
        Vec::new(),
        receiver,
        batches,
        ended,
    )
    .await
    .expect("the session's telemetry arrived");
    tether_tests::keep_home("run-time-gemini", home.path());
    let marks = hooks.marks();
    let uses = |event: &str, outcome: &str| -> u32 {
        attempt
            .capabilities
            .iter()
            .filter(|r| r.event.as_deref() == Some(event))
            .flat_map(|r| r.outcomes.iter())
            .filter(|o| o.outcome.as_str() == outcome)
            .map(|o| o.count)
            .sum()
    };
    for (event, gemini_event) in [
        ("SessionStart", "SessionStart"),
        ("PreToolUse", "BeforeTool"),
        ("Stop", "SessionEnd"),
    ] {
        let ok = marks.get(&format!("{event}-ok")).copied().unwrap_or(0);
        assert!(ok > 0, "{event}'s hooks never ran: {marks:?}");
        assert_eq!(uses(gemini_event, "succeeded"), ok, "{gemini_event}");
        if event != "PreToolUse" {
            let fail = marks.get(&format!("{event}-fail")).copied().unwrap_or(0);
            assert_eq!(uses(gemini_event, "failed"), fail, "{gemini_event}");
            assert_eq!(
                uses(gemini_event, "command_not_found"),
                ok,
                "{gemini_event}"
            );
        }
    }
    // The extension that loaded is a loaded plugin; the broken one is only
    // a warning on Gemini's stderr, so nothing claims it loaded.
    let plugin = |name: &str| {
        attempt
            .capabilities
            .iter()
            .find(|r| r.kind == tether_core::vocab::CapabilityKind::Plugin && r.name == name)
    };
    let demo = plugin("demo").unwrap_or_else(|| panic!("{:#?}", attempt.capabilities));
    assert_eq!(demo.status, tether_core::vocab::DisplayStatus::Active);
    assert!(plugin("broken").is_none());
    let telemetry = serde_json::to_string(&attempt).expect("json");
    assert_nothing_planted("the collected session", &telemetry);

    // The chat record names the skill the model activated.
    let (doc, text) = shown_session(home.path());
    let invoked = calls_to(&log, "activate_skill");
    assert!(invoked > 0);
    let notes = rows(&doc, "skill")
        .into_iter()
        .find(|r| r["name"] == "release-notes" && r["calls"].as_u64().unwrap_or(0) > 0)
        .unwrap_or_else(|| panic!("no invoked skill in {doc:#}"));
    assert_eq!(notes["calls"].as_u64(), Some(invoked), "{notes:#}");
    assert_eq!(notes["status"], "active");
    assert_nothing_planted("sessions show --json", &text);
}

/// Qwen Code at `release`, once, loading the skill `release-notes`, its
/// own telemetry collected. Its chat record names the skill call (its
/// outcome the call's result) and its telemetry each skill launch
/// (`qwen-code.skill_launch`). It records no hook's run by command (its
/// `qwen-code.hook` span reports an event with no hooks configured as a
/// failure), so configured hooks say the harness does not record them.
async fn qwen_shows_the_skills_it_ran(release: Release) {
    let Some(program) = release.peer("node_modules/.bin/qwen") else {
        eprintln!(
            "SKIP: qwen ({}) is not installed (run `npm ci` in tests/peers)",
            release.label()
        );
        return;
    };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let (model, log) =
        tether_tests::fake_model::start_model_calling("skill", json!({"skill": "release-notes"}))
            .await;
    let (receiver, batches, _running, setup) =
        tether_tests::collected::receiver_and_setup("qwen").await;
    let home = tempfile::tempdir().expect("home");
    let hooks = Hooks::new(&home.path().join("hooks"));
    user_skill(&home.path().join(".qwen/skills/release-notes"));
    let entries: Vec<Value> = hooks.commands("SessionStart")[..1]
        .iter()
        .map(|c| json!({"type": "command", "command": c}))
        .collect();
    write(
        &home.path().join(".qwen/settings.json"),
        &json!({
            "security": {"auth": {"selectedType": "openai"}},
            "model": {"name": "gpt-4o"},
            "hooks": {"SessionStart": [{"hooks": entries}]},
        })
        .to_string(),
    );
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    let mut env = tether_tests::collected::setup_env(&setup);
    env.extend([
        ("PATH".to_owned(), release.path()),
        ("OPENAI_API_KEY".to_owned(), "dummy".to_owned()),
        ("OPENAI_BASE_URL".to_owned(), format!("{}/v1", model.base())),
        ("OPENAI_MODEL".to_owned(), "gpt-4o".to_owned()),
        ("QWEN_CODE_TRUST_WORKSPACE".to_owned(), "true".to_owned()),
    ]);
    let mut args = vec!["-p".to_owned(), "write the release notes".to_owned()];
    if release == Release::Newest {
        args.push("--yolo".into());
    }
    let launched = |a: &tether_core::history::AttachmentAttempt| {
        a.capabilities
            .iter()
            .any(|r| r.name == "release-notes" && r.uses() > 0)
    };
    let attempt = tether_tests::collected::collect_session(
        "qwen",
        &program,
        args,
        env,
        home.path(),
        &work,
        Vec::new(),
        receiver,
        batches,
        launched,
    )
    .await
    .expect("the session's telemetry arrived");
    tether_tests::keep_home(&format!("run-time-qwen-{}", release.label()), home.path());
    let label = release.label();
    let invoked = calls_to(&log, "skill");
    assert!(invoked > 0, "{label}: the model never loaded the skill");
    let live = attempt
        .capabilities
        .iter()
        .find(|r| r.name == "release-notes")
        .unwrap_or_else(|| panic!("{label}: no launch in {:#?}", attempt.capabilities));
    assert_eq!(u64::from(live.uses()), invoked, "{label}: {live:#?}");
    assert_nothing_planted(
        "the collected session",
        &serde_json::to_string(&attempt).expect("json"),
    );

    let (doc, text) = shown_session(home.path());
    let notes = rows(&doc, "skill")
        .into_iter()
        .find(|r| r["name"] == "release-notes" && r["calls"].as_u64().unwrap_or(0) > 0)
        .unwrap_or_else(|| panic!("{label}: no invoked skill in {doc:#}"));
    assert_eq!(notes["calls"].as_u64(), Some(invoked), "{notes:#}");
    assert_eq!(notes["status"], "active");
    // The hook ran (its own mark, where the release runs hooks: 0.15.10
    // does not) but Qwen records no run of it: its row says so instead of
    // "never fired".
    eprintln!("{label}: the hook's marks: {:?}", hooks.marks());
    let hook = rows(&doc, "hook")
        .into_iter()
        .find(|r| r["command"] == "ok.sh")
        .unwrap_or_else(|| panic!("{label}: no configured hook in {doc:#}"));
    assert_eq!(
        hook["stopped"], "configured; the harness does not record its hooks' runs",
        "{hook:#}"
    );
    assert_nothing_planted("sessions show --json", &text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_pinned_shows_the_skills_it_ran() {
    qwen_shows_the_skills_it_ran(Release::Pinned).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_newest_shows_the_skills_it_ran() {
    qwen_shows_the_skills_it_ran(Release::Newest).await;
}

/// Codex, once, with a user skill and hooks at session start and stop
/// (run, with `--dangerously-bypass-hook-trust`, as their own marks show).
/// Its rollout lists the skills offered to the model (`world_state`'s
/// `host_skills`), which must equal what the fake model was sent; a hook's
/// run leaves no record of its own, so each configured hook says the
/// harness does not record it, never that it did not fire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_shows_the_skills_it_offered_and_says_it_records_no_hook() {
    let Some(program) = tether_tests::peer("node_modules/.bin/codex") else {
        eprintln!("SKIP: codex is not installed (run `npm ci` in tests/peers)");
        return;
    };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let (model, log) = tether_tests::fake_model::start_model("no-such-tool").await;
    let home = tempfile::tempdir().expect("home");
    let hooks = Hooks::new(&home.path().join("hooks"));
    let codex_home = home.path().join(".codex");
    user_skill(&codex_home.join("skills/release-notes"));
    let toml = |s: &str| serde_json::to_string(s).expect("a TOML basic string");
    write(
        &codex_home.join("config.toml"),
        &format!(
            "model = \"gpt-5.1\"\nmodel_provider = \"fake\"\napproval_policy = \"never\"\n\
             [model_providers.fake]\nname = \"fake\"\nbase_url = {}\nwire_api = \"responses\"\nenv_key = \"FAKE_KEY\"\n",
            toml(&format!("{}/v1", model.base()))
        ),
    );
    let mut events = serde_json::Map::new();
    for event in ["SessionStart", "Stop"] {
        let entries: Vec<Value> = hooks
            .commands(event)
            .iter()
            .map(|c| json!({"type": "command", "command": c}))
            .collect();
        events.insert(event.to_owned(), json!([{"hooks": entries}]));
    }
    write(
        &codex_home.join("hooks.json"),
        &json!({ "hooks": events }).to_string(),
    );
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    let mut cmd = std::process::Command::new(program);
    cmd.args([
        "exec",
        "--dangerously-bypass-hook-trust",
        "--skip-git-repo-check",
        "--json",
        "write the release notes",
    ])
    .env_clear()
    .env("PATH", std::env::var("PATH").unwrap_or_default())
    .env("HOME", home.path())
    .env("CODEX_HOME", &codex_home)
    .env("FAKE_KEY", "dummy")
    .current_dir(&work)
    .stdin(std::process::Stdio::null());
    ran_to_exit(cmd, home.path(), "run-time-codex", &log).await;
    let out = tether_tests::tether_at_home(home.path())
        .env("CODEX_HOME", &codex_home)
        .args(["sessions", "list", "--json"])
        .output()
        .expect("tether runs");
    let list: Value = serde_json::from_slice(&out.stdout).expect("one document");
    let id = list["sessions"][0]["session_id"]
        .as_str()
        .expect("a session")
        .to_owned();
    // From the project Codex ran in (from the home, `.codex` would be a
    // project's configuration too).
    let out = tether_tests::tether_at_home(home.path())
        .env("CODEX_HOME", &codex_home)
        .current_dir(&work)
        .args(["sessions", "show", &id, "--json"])
        .output()
        .expect("tether runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let doc: Value = serde_json::from_str(&text).expect("one document");
    let sent: std::collections::BTreeSet<String> =
        log.turns().iter().flat_map(|t| t.skills.clone()).collect();
    assert!(sent.contains("release-notes"), "{sent:?}");
    let listed: std::collections::BTreeSet<String> = rows(&doc, "skill")
        .into_iter()
        .filter(|r| r["stages"]["listed"]["state"] == "yes")
        .map(|r| r["name"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(listed, sent, "the skills offered");
    let marks = hooks.marks();
    assert!(
        marks.contains_key("SessionStart-ok") && marks.contains_key("Stop-ok"),
        "{marks:?}"
    );
    // Six hooks configured (off in Codex's own trust, which the flag
    // bypassed): each says the harness does not record it.
    let hook_rows = rows(&doc, "hook");
    let names: Vec<String> = hook_rows
        .iter()
        .map(|r| format!("{} {} {}", r["name"], r["command"], r["stopped"]))
        .collect();
    assert_eq!(hook_rows.len(), 6, "{names:#?}");
    for row in hook_rows {
        let stopped = row["stopped"].as_str().unwrap_or("");
        assert!(
            stopped.ends_with("; the harness does not record its hooks' runs"),
            "{row:#}"
        );
    }
    assert_nothing_planted("sessions show --json", &text);
}

/// OpenCode, once, with two plugin files (one whose export is not a
/// plugin, its text holding a planted secret) and a user skill the model
/// loads. Its log names the plugin that failed to load (before the
/// session is created: the thread's later record names the session); its
/// database names each `skill` call, with its outcome.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_shows_the_plugin_that_failed_and_the_skill_it_loaded() {
    let Some(program) = tether_tests::peer("node_modules/.bin/opencode") else {
        eprintln!("SKIP: opencode is not installed (run `npm ci` in tests/peers)");
        return;
    };
    let _one = tether_tests::one_real_cli_at_a_time().await;
    let (model, log) =
        tether_tests::fake_model::start_model_calling("skill", json!({"name": "release-notes"}))
            .await;
    let home = tempfile::tempdir().expect("home");
    let config = home.path().join(".config/opencode");
    write(
        &config.join("plugin/bad.js"),
        &format!("export const Bad = \"{PLANTED_MANIFEST}\";\n"),
    );
    write(
        &config.join("plugin/good.js"),
        "export const Good = async () => ({});\n",
    );
    user_skill(&config.join("skill/release-notes"));
    write(
        &config.join("opencode.json"),
        &tether_tests::opencode_config(&model.base(), json!({})).to_string(),
    );
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).expect("work");
    let mut cmd = std::process::Command::new(program);
    cmd.args(["run", "write the release notes"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .envs(tether_tests::opencode_env(home.path()))
        .current_dir(&work)
        .stdin(std::process::Stdio::null());
    ran_to_exit(cmd, home.path(), "run-time-opencode", &log).await;
    let show = |args: &[&str]| {
        let out = tether_tests::tether_at_home(home.path())
            .envs(tether_tests::opencode_env(home.path()))
            .current_dir(&work)
            .args(args)
            .output()
            .expect("tether runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let list: Value = serde_json::from_str(&show(&["sessions", "list", "--json"])).expect("list");
    let sessions = list["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 1, "{list:#}");
    let id = sessions[0]["session_id"].as_str().expect("id").to_owned();
    let text = show(&["sessions", "show", &id, "--json"]);
    let doc: Value = serde_json::from_str(&text).expect("one document");
    let bad = rows(&doc, "plugin")
        .into_iter()
        .find(|r| r["name"] == "bad")
        .unwrap_or_else(|| panic!("no bad plugin in {doc:#}"));
    assert_eq!(bad["status"], "failed", "{bad:#}");
    assert_eq!(bad["reason_code"], "plugin_load_failed", "{bad:#}");
    assert_eq!(bad["in_config"], true, "{bad:#}");
    let good = rows(&doc, "plugin")
        .into_iter()
        .find(|r| r["name"] == "good")
        .unwrap_or_else(|| panic!("no good plugin in {doc:#}"));
    assert_ne!(good["status"], "failed", "{good:#}");
    let invoked = calls_to(&log, "skill");
    assert!(invoked > 0);
    let notes = rows(&doc, "skill")
        .into_iter()
        .find(|r| r["name"] == "release-notes")
        .unwrap_or_else(|| panic!("no skill in {doc:#}"));
    assert_eq!(notes["calls"].as_u64(), Some(invoked), "{notes:#}");
    // Its outcome is the harness's own (its database's status): a failed
    // call reads failed, with the skill's reason.
    let failed = notes["status"] == "failed";
    assert!(failed || notes["status"] == "active", "{notes:#}");
    assert_eq!(failed, notes["reason_code"] == "skill_failed", "{notes:#}");
    assert_nothing_planted("sessions show --json", &text);
}
