//! The last mile, verified against the real CLIs: each harness, at its
//! pinned and newest releases, runs one session against the fake model
//! with `tether-breaking-mcp` as server `brk` (tools whose names and
//! schemas break what harnesses do between `tools/list` and the model's
//! request). What the fake model received is the ground truth; Tether's
//! prediction for each tool ([`tether_core::last_mile::predict`], by the
//! harness's own rules from its plugin) must equal it: the name the model
//! got, or why it got none.
//!
//! Each skips loudly where its CLI (tests/peers, `npm ci`) is not
//! installed. Waits end at the CLI's exit, bounded.

use std::path::{Path, PathBuf};

use tether_core::registry::Registry;
use tether_tests::Release;

/// One CLI run: what to start, with what, where.
struct Run {
    program: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    cwd: PathBuf,
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("dir");
    }
    std::fs::write(path, text).expect("write");
}

/// The tool each filtering run's configuration leaves out.
const FILTERED: &str = "dotted.name";

/// How `kind` runs one prompt in `home`, with `brk` (its command line) as
/// its only MCP server and `model` (the fake model's base URL) as its model;
/// with `filter`, the harness's own tool filter leaves [`FILTERED`] out.
fn run_of(
    kind: &str,
    release: Release,
    home: &Path,
    brk: &[String],
    model: &str,
    filter: bool,
) -> Option<Run> {
    let json = |v: serde_json::Value| v.to_string();
    // Gemini CLI's and Qwen Code's exclude list, as their settings take it.
    let gemini_brk = |command: &str, args: &[String]| {
        let mut brk = serde_json::json!({"command": command, "args": args});
        if filter {
            brk["excludeTools"] = serde_json::json!([FILTERED]);
        }
        brk
    };
    let (command, args) = (brk[0].clone(), brk[1..].to_vec());
    let path = release.path();
    let run = match kind {
        "claude" => {
            let program = release.peer("node_modules/.bin/claude")?;
            let config = home.join("mcp.json");
            write(
                &config,
                &json(
                    serde_json::json!({"mcpServers": {"brk": {"command": command, "args": args}}}),
                ),
            );
            Run {
                program,
                args: s(&[
                    "-p",
                    "echo something",
                    "--mcp-config",
                    &config.display().to_string(),
                    "--strict-mcp-config",
                    "--allowedTools",
                    "mcp__brk__echo",
                ]),
                env: vec![
                    ("PATH".into(), path),
                    ("ANTHROPIC_API_KEY".into(), "dummy".into()),
                    ("ANTHROPIC_BASE_URL".into(), model.to_owned()),
                    ("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()),
                ],
                cwd: home.to_path_buf(),
            }
        }
        "gemini" => {
            let program = release.peer("node_modules/.bin/gemini")?;
            write(
                &home.join(".gemini/settings.json"),
                &json(serde_json::json!({
                    "security": {"auth": {"selectedType": "gemini-api-key"}},
                    "mcpServers": {"brk": gemini_brk(&command, &args)}
                })),
            );
            Run {
                program,
                args: s(&[
                    "-m",
                    "gemini-2.5-pro",
                    "--approval-mode",
                    "yolo",
                    "-p",
                    "echo something",
                ]),
                env: vec![
                    ("PATH".into(), path),
                    ("GEMINI_API_KEY".into(), "dummy".into()),
                    ("GEMINI_CLI_TRUST_WORKSPACE".into(), "true".into()),
                    ("GOOGLE_GEMINI_BASE_URL".into(), model.to_owned()),
                ],
                cwd: home.to_path_buf(),
            }
        }
        "qwen" => {
            let program = release.peer("node_modules/.bin/qwen")?;
            write(
                &home.join(".qwen/settings.json"),
                &json(serde_json::json!({
                    "security": {"auth": {"selectedType": "openai"}},
                    "model": {"name": "gpt-4o"},
                    "mcpServers": {"brk": gemini_brk(&command, &args)}
                })),
            );
            let mut args = s(&["-p", "echo something"]);
            if release == Release::Newest {
                args.push("--yolo".into());
            }
            Run {
                program,
                args,
                env: vec![
                    ("PATH".into(), path),
                    ("OPENAI_API_KEY".into(), "dummy".into()),
                    ("OPENAI_BASE_URL".into(), format!("{model}/v1")),
                    ("OPENAI_MODEL".into(), "gpt-4o".into()),
                    ("QWEN_CODE_TRUST_WORKSPACE".into(), "true".into()),
                ],
                cwd: home.to_path_buf(),
            }
        }
        "copilot" => {
            let program = release.peer("node_modules/@github/copilot-linux-x64/copilot")?;
            let work = home.join("work");
            std::fs::create_dir_all(&work).expect("work");
            // Its allow list: every tool but the filtered one.
            let tools: Vec<String> = if filter {
                tether_tests::breaking::tools(0)
                    .into_iter()
                    .map(|(n, _)| n)
                    .filter(|n| n != FILTERED)
                    .collect()
            } else {
                vec!["*".into()]
            };
            write(
                &home.join(".copilot/mcp-config.json"),
                &json(serde_json::json!({"mcpServers": {
                    "brk": {"type": "local", "command": command, "args": args, "tools": tools}
                }})),
            );
            let trusted =
                json(serde_json::json!({"trusted_folders": [work], "trustedFolders": [work]}));
            write(&home.join(".copilot/config.json"), &trusted);
            write(&home.join(".copilot/settings.json"), &trusted);
            Run {
                program,
                args: s(&["-p", "echo something", "--allow-all-tools"]),
                env: vec![
                    ("PATH".into(), path),
                    ("COPILOT_OFFLINE".into(), "true".into()),
                    ("COPILOT_AUTO_UPDATE".into(), "false".into()),
                    (
                        "COPILOT_PKG_CACHE_HOME".into(),
                        home.join("pkg").display().to_string(),
                    ),
                    ("COPILOT_PROVIDER_BASE_URL".into(), format!("{model}/v1")),
                    ("COPILOT_PROVIDER_API_KEY".into(), "dummy".into()),
                    ("COPILOT_MODEL".into(), "gpt-4o".into()),
                ],
                cwd: work,
            }
        }
        "codex" => {
            let program = release.peer("node_modules/.bin/codex")?;
            let codex_home = home.join(".codex");
            let toml = |s: &str| serde_json::to_string(s).expect("a TOML basic string");
            let args = args.iter().map(|a| toml(a)).collect::<Vec<_>>().join(", ");
            write(
                &codex_home.join("config.toml"),
                &format!(
                    "model = \"gpt-5.1\"\nmodel_provider = \"fake\"\napproval_policy = \"never\"\n\
                     [model_providers.fake]\nname = \"fake\"\nbase_url = {}\nwire_api = \"responses\"\nenv_key = \"FAKE_KEY\"\n\
                     [mcp_servers.brk]\ncommand = {}\nargs = [{args}]\nrequired = true\n{}",
                    toml(&format!("{model}/v1")),
                    toml(&command),
                    if filter {
                        format!("disabled_tools = [{}]\n", toml(FILTERED))
                    } else {
                        String::new()
                    },
                ),
            );
            Run {
                program,
                args: s(&["exec", "--skip-git-repo-check", "--json", "echo something"]),
                env: vec![
                    ("PATH".into(), path),
                    ("CODEX_HOME".into(), codex_home.display().to_string()),
                    ("FAKE_KEY".into(), "dummy".into()),
                ],
                cwd: home.to_path_buf(),
            }
        }
        "opencode" => {
            let program = release.peer("node_modules/.bin/opencode")?;
            let work = home.join("work");
            std::fs::create_dir_all(&work).expect("work");
            let mut cmd = vec![command];
            cmd.extend(args);
            write(
                &home.join(".config/opencode/opencode.json"),
                &json(tether_tests::opencode_config(
                    model,
                    serde_json::json!({
                        "mcp": {"brk": {"type": "local", "command": cmd, "enabled": true}}
                    }),
                )),
            );
            let mut env = vec![("PATH".into(), path)];
            env.extend(tether_tests::opencode_env(home));
            Run {
                program,
                args: s(&["run", "echo something"]),
                env,
                cwd: work,
            }
        }
        other => panic!("no run for {other}"),
    };
    Some(run)
}

/// What one session's model was sent of `brk`'s tools (and the home and
/// run it came from, for `tether inventory` to read the same files).
struct Got {
    home: tempfile::TempDir,
    run: Run,
    /// The fake model's log.
    log: tether_tests::fake_model::ModelLog,
    /// Per offered name of a `brk` tool, the listed tool it came from.
    offered: Vec<(String, String)>,
    /// The names the model called.
    called: Vec<String>,
    /// Every `mcp__…` name the requests mention outside their tool
    /// definitions: what a deferring harness told the model it can search.
    named: std::collections::BTreeSet<String>,
    /// The harness's stderr (for a loud message where it started without
    /// its server).
    stderr: String,
}

/// Runs `kind` at `release` once against the fake model with `brk`
/// (`tether-breaking-mcp --many MANY`); `None` where the CLI is not
/// installed (a loud skip).
async fn what_the_model_got(
    kind: &str,
    release: Release,
    many: usize,
    filter: bool,
    env: &[(&str, &str)],
) -> Option<Got> {
    session_of(kind, release, many, filter, env, false)
        .await
        .map(|(got, _)| got)
}

/// What the model's call carries through the tap (and the tool's result
/// carries back).
const PLANTED_ARGUMENT: &str = "a planted argument ZqWx8rK2pL that stays in the traffic";
/// The harness's API key through the tap.
const PLANTED_KEY: &str = "sk-planted-key-Vb7nQ2mX9tLcR4";

/// `tether tap` between the harness and the fake model, and the hub its
/// sessions land in.
struct Tapped {
    tap: tether_tap::RunningTap,
    hub: std::sync::Arc<tether_hub::Hub>,
}

/// One session of `kind` against the fake model, through the tap when
/// `tapped` (its upstream the fake model; `brk` the harness's configured
/// server).
async fn session_of(
    kind: &str,
    release: Release,
    many: usize,
    filter: bool,
    env: &[(&str, &str)],
    tapped: bool,
) -> Option<(Got, Option<Tapped>)> {
    let _one = tether_tests::one_real_cli_at_a_time().await;
    // Through the tap, the model calls with a planted argument (it comes
    // back in the next request as the tool's result) and the harness's key
    // is a planted secret: neither may reach what the tap keeps.
    let (model, log) = if tapped {
        tether_tests::fake_model::start_model_calling(
            "brk/echo",
            serde_json::json!({"text": PLANTED_ARGUMENT}),
        )
        .await
    } else {
        tether_tests::fake_model::start_model("brk/echo").await
    };
    let home = tempfile::tempdir().expect("home");
    let mut brk = vec![
        tether_tests::workspace_bin("tether-breaking-mcp")
            .display()
            .to_string(),
    ];
    if many > 0 {
        brk.extend(["--many".to_owned(), many.to_string()]);
    }
    let tap = if tapped {
        let registry = Registry::with_static().expect("registry");
        let hub = std::sync::Arc::new(tether_hub::Hub::new(registry.clone()));
        let spec = tether_core::spec::ServerSpec::new(
            "brk",
            tether_core::ServerSource::Profile,
            tether_core::spec::Endpoint::Stdio {
                command: brk[0].clone(),
                args: brk[1..].to_vec(),
                env: Vec::new(),
                cwd: None,
            },
        );
        let config = tether_tap::TapConfig {
            upstream: Some(url::Url::parse(&model.base()).expect("url")),
            configured: [(kind.to_owned(), vec![spec])].into_iter().collect(),
            ..Default::default()
        };
        let tap = tether_tap::Tap::serve(
            config,
            "127.0.0.1:0".parse().expect("addr"),
            registry,
            Some(std::sync::Arc::clone(&hub)),
        )
        .await
        .expect("the tap");
        Some(Tapped { tap, hub })
    } else {
        None
    };
    let base = tap
        .as_ref()
        .map_or_else(|| model.base(), |t| t.tap.base_url());
    let Some(mut run) = run_of(kind, release, home.path(), &brk, &base, filter) else {
        eprintln!(
            "SKIP: {kind} ({}) is not installed (run `npm ci` in tests/peers)",
            release.label()
        );
        return None;
    };
    if tapped {
        for (_, value) in run.env.iter_mut().filter(|(_, v)| v == "dummy") {
            *value = PLANTED_KEY.to_owned();
        }
    }
    run.env
        .push(("HOME".into(), home.path().display().to_string()));
    run.env
        .extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    let mut cmd = std::process::Command::new(&run.program);
    cmd.args(&run.args)
        .env_clear()
        .envs(run.env.iter().cloned())
        .current_dir(&run.cwd)
        .stdin(std::process::Stdio::null());
    let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 180))
        .await
        .expect("the run");
    // `TETHER_KEEP_HOMES=DIR` keeps what the harness wrote, to look at.
    tether_tests::keep_home(
        &format!("last-mile-{kind}-{}", release.label()),
        home.path(),
    );
    let turns = log.turns();
    assert!(
        !turns.is_empty(),
        "{kind} ({}) never asked the model (exit {:?}): {}",
        release.label(),
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut offered: Vec<(String, String)> = turns.iter().flat_map(|t| t.origins.clone()).collect();
    offered.sort();
    offered.dedup();
    let got = Got {
        home,
        run,
        log,
        offered,
        called: turns.iter().filter_map(|t| t.called.clone()).collect(),
        named: turns.iter().flat_map(|t| t.named.clone()).collect(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    Some((got, tap))
}

/// `kind`'s rules at `release`, from its plugin.
fn rules(kind: &str, version: &str) -> tether_core::last_mile::Rules {
    Registry::with_static()
        .expect("registry")
        .harness(kind)
        .and_then(|h| h.roles.last_mile?.rules(Some(version)))
        .unwrap_or_else(|| panic!("{kind} declares no last-mile rules"))
}

/// The installed version of `kind` at `release` (its package.json).
fn version(kind: &str, release: Release) -> String {
    let package = match kind {
        "claude" => "@anthropic-ai/claude-code",
        "gemini" => "@google/gemini-cli",
        "qwen" => "@qwen-code/qwen-code",
        "copilot" => "@github/copilot",
        "codex" => "@openai/codex",
        "opencode" => "opencode-ai",
        other => panic!("no package for {other}"),
    };
    let file = release
        .peer(&format!("node_modules/{package}/package.json"))
        .expect("installed");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).expect("package.json")).expect("json");
    json["version"].as_str().expect("a version").to_owned()
}

/// The last mile of `kind` at `release`: Tether's prediction for every
/// tool of `brk` equals what the fake model received.
async fn predicted_equals_received(kind: &str, release: Release, env: &[(&str, &str)]) {
    let Some(got) = what_the_model_got(kind, release, 0, false, env).await else {
        return;
    };
    let version = version(kind, release);
    // The rules in the environment the run started the harness with (it
    // decides Claude Code's tool search: `ENABLE_TOOL_SEARCH`, the model URL).
    let rules = rules(kind, &version).in_context(&tether_core::last_mile::Context::of_env(
        got.run.env.iter().cloned(),
    ));
    let listed: Vec<tether_core::last_mile::Listed> = tether_tests::breaking::tools(0)
        .iter()
        .map(|(n, schema)| tether_core::last_mile::Listed::new(n.clone(), Some(schema)))
        .collect();
    let predicted = tether_core::last_mile::predict(&rules, "brk", &listed);
    let label = format!("{kind} {version}");
    eprintln!("{label}: the model got {:?}", got.offered);
    let on_disk = records_agree(kind, &version, &got);
    assert!(on_disk.is_some(), "{label}: its records hold no session");
    // A tool the harness dropped for its schema, and said so in its own
    // records, reads as such.
    if let Some(attempt) = &on_disk {
        for p in predicted
            .iter()
            .filter(|p| p.reason_code == Some(tether_core::vocab::ReasonCode::SchemaUnsupported))
        {
            let row = attempt
                .server("brk")
                .and_then(|r| r.tools.iter().find(|t| t.name == p.tool));
            if let Some(row) = row {
                assert_eq!(row.reason_code, p.reason_code, "{label}: {row:?}");
                assert_ne!(row.model_visible.state, tether_core::vocab::StageState::Yes);
            }
        }
    }
    let got_of = |tool: &str| -> Vec<&String> {
        got.offered
            .iter()
            .filter(|(_, listed)| listed == tool)
            .map(|(name, _)| name)
            .collect()
    };
    if rules.defers == Some(true) {
        // Every tool held behind the search: none sent but the one the
        // model searched for and called, under its predicted name.
        let echo = predicted.iter().find(|p| p.tool == "echo").expect("echo");
        assert!(echo.deferred, "{label}: {echo:?}");
        assert!(
            got.called.contains(&echo.model_name),
            "{label}: the model called {:?}, not {}",
            got.called,
            echo.model_name
        );
        for (name, listed) in &got.offered {
            assert_eq!(
                listed, "echo",
                "{label}: {name} was sent whole, not deferred"
            );
        }
        // The model is told each deferred tool's name, as the rules spell
        // it; a tool the rules drop is not among them.
        for p in &predicted {
            if p.offered {
                assert!(
                    got.named.contains(&p.model_name),
                    "{label}: {p:?} is not among the names the model was told: {:?}",
                    got.named
                );
            } else if p.reason_code != Some(tether_core::vocab::ReasonCode::NameCollision) {
                assert!(
                    !got.named.contains(&p.model_name),
                    "{label}: {p:?} was named to the model"
                );
            }
        }
        // And every name it was told leads back to its tool.
        let names = tether_core::last_mile::ModelNames::new(&rules, &[("brk", &listed)]);
        for name in got.named.iter().filter(|n| n.starts_with("mcp__brk")) {
            assert!(
                names.resolve(name).is_some(),
                "{label}: {name} leads to no tool"
            );
        }
        return;
    }
    for p in &predicted {
        let sent = got_of(&p.tool);
        if p.is_sent() {
            // A provider's limit is the provider's: the harness sends the
            // tool (the fake model takes any name), under the name Tether
            // says, and that name breaks the documented limit.
            let right = sent.iter().any(|n| p.spells(n));
            assert!(right, "{label}: predicted {p:?}, the model got {sent:?}");
        } else {
            assert!(
                sent.is_empty(),
                "{label}: predicted {p:?}, the model got {sent:?}"
            );
        }
    }
    // And nothing the model got was left out of the prediction; each
    // name the model got leads back to the tool it came from (a hashed
    // name shared by several tools leads nowhere: never a guess).
    let names = tether_core::last_mile::ModelNames::new(&rules, &[("brk", &listed)]);
    for (name, listed) in &got.offered {
        assert!(
            predicted.iter().any(|p| &p.tool == listed),
            "{label}: {name} ({listed}) was not predicted"
        );
        let suffixed = predicted.iter().any(|p| &p.tool == listed && p.suffixed);
        let back = names.resolve(name);
        if suffixed {
            assert!(
                back.is_none_or(|b| b == ("brk", listed.as_str())),
                "{label}: {name} → {back:?}"
            );
        } else {
            assert_eq!(back, Some(("brk", listed.as_str())), "{label}: {name}");
        }
    }
}

/// The session as `kind`'s own records show it (read as `tether sessions`
/// reads them), where it wrote any.
fn recorded(kind: &str, got: &Got) -> Option<tether_core::history::AttachmentAttempt> {
    recorded_into(kind, got, None)?.current().cloned()
}

/// The session's history from `kind`'s own records, merged into
/// `existing` (as `tether sessions import` merges into a store).
fn recorded_into(
    kind: &str,
    got: &Got,
    existing: Option<tether_core::history::AttachmentHistory>,
) -> Option<tether_core::history::AttachmentHistory> {
    use tether_core::spec::{Endpoint, ServerSpec};
    let registry = Registry::with_static().expect("registry");
    let home = tether_records::Home::new(got.home.path(), got.run.env.iter().cloned().collect());
    let filter = tether_records::Filter {
        harnesses: vec![kind.to_owned()],
        ..Default::default()
    };
    let brk = ServerSpec::new(
        "brk",
        tether_core::vocab::ServerSource::Profile,
        Endpoint::Stdio {
            command: tether_tests::workspace_bin("tether-breaking-mcp")
                .display()
                .to_string(),
            args: vec![],
            env: vec![],
            cwd: None,
        },
    );
    let mut records = tether_records::Records::new(
        &registry,
        &home,
        std::collections::HashMap::from([(kind.to_owned(), vec![brk])]),
        filter,
    );
    records.read(true);
    let facts = records.sessions().values().next()?;
    records.history(facts, existing).ok()
}

/// No claim the harness's records give Tether about `brk`'s tools
/// contradicts what the model was sent (the reusable comparison of
/// `tether_tests::last_mile`); returns the records' attempt.
fn records_agree(
    kind: &str,
    version: &str,
    got: &Got,
) -> Option<tether_core::history::AttachmentAttempt> {
    let attempt = recorded(kind, got)?;
    let rules = rules(kind, version);
    let said =
        tether_tests::last_mile::compare(&attempt, &got.log, &["brk"], |s, t| (rules.naming)(s, t));
    assert!(
        said.wrong.is_empty(),
        "{kind} {version} (records): {:#?}",
        said.wrong
    );
    Some(attempt)
}

macro_rules! last_mile_tests {
    ($($name:ident: $kind:literal, $release:expr $(, $env:expr)?;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            let env: &[(&str, &str)] = &[$($env)?];
            predicted_equals_received($kind, $release, env).await;
        }
    )*};
}

last_mile_tests! {
    claude_pinned: "claude", Release::Pinned;
    claude_newest: "claude", Release::Newest;
    claude_newest_without_tool_search: "claude", Release::Newest, ("ENABLE_TOOL_SEARCH", "false");
    qwen_pinned: "qwen", Release::Pinned;
    qwen_newest: "qwen", Release::Newest;
    gemini_pinned: "gemini", Release::Pinned;
    copilot_pinned: "copilot", Release::Pinned;
    codex_pinned: "codex", Release::Pinned;
    opencode_pinned: "opencode", Release::Pinned;
}

/// `tether inventory --test --json --kind mcp_tool` of the files a run
/// used: the user-scope rows of `brk`'s tools for `kind`.
async fn inventory_of(kind: &str, got: &Got) -> Vec<serde_json::Value> {
    let mut cmd = std::process::Command::new(tether_tests::workspace_bin("tether"));
    cmd.args(["inventory", "--test", "--json", "--kind", "mcp_tool"])
        .env_clear()
        .envs(got.run.env.iter().cloned())
        .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
        .env("QWEN_CODE_TRUST_WORKSPACE", "true")
        .current_dir(&got.run.cwd);
    let out = tokio::task::spawn_blocking(move || tether_tests::output_within(cmd, 120))
        .await
        .expect("inventory");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{kind}: inventory --json: {e}: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["harness"] == kind && r["scope"] == "user")
        .filter(|r| r["name"].as_str().is_some_and(|n| n.starts_with("brk/")))
        .cloned()
        .collect()
}

/// The harness's own tool filter, end to end: a configuration that leaves
/// [`FILTERED`] out keeps it from the model, and `tether inventory --test`
/// of the same files says so (`excluded`) and spells every other tool as
/// the model received it.
async fn the_filter_and_the_inventory_agree(kind: &str, release: Release) {
    let Some(got) = what_the_model_got(kind, release, 0, true, &[]).await else {
        return;
    };
    let label = format!("{kind} ({})", release.label());
    assert!(
        !got.offered.iter().any(|(_, listed)| listed == FILTERED),
        "{label}: the filtered tool reached the model: {:?}",
        got.offered
    );
    let rows = inventory_of(kind, &got).await;
    assert_eq!(
        rows.len(),
        tether_tests::breaking::tools(0).len(),
        "{label}: {rows:#?}"
    );
    for row in &rows {
        let tool = row["name"]
            .as_str()
            .and_then(|n| n.strip_prefix("brk/"))
            .expect("name");
        if tool == FILTERED {
            assert_eq!(row["reason_code"], "excluded", "{label}: {row:#}");
            assert!(row.get("model").is_none(), "{label}: {row:#}");
            continue;
        }
        let model: tether_core::last_mile::Prediction =
            serde_json::from_value(row["model"].clone()).expect("a prediction");
        let sent: Vec<&String> = got
            .offered
            .iter()
            .filter(|(_, listed)| listed == tool)
            .map(|(n, _)| n)
            .collect();
        if model.deferred {
            continue;
        }
        let name = &model.model_name;
        if model.offered {
            assert!(
                sent.iter().any(|n| model.spells(n)),
                "{label}: inventory says {tool} reaches the model as {name}; it got {sent:?}"
            );
        } else if !model.is_sent() {
            assert!(
                sent.is_empty(),
                "{label}: inventory says {tool} is kept out: {row:#}; it got {sent:?}"
            );
        }
    }
    drop(got.home);
}

macro_rules! filter_tests {
    ($($name:ident: $kind:literal, $release:expr;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            the_filter_and_the_inventory_agree($kind, $release).await;
        }
    )*};
}

filter_tests! {
    gemini_filtered: "gemini", Release::Pinned;
    qwen_filtered: "qwen", Release::Newest;
    copilot_filtered: "copilot", Release::Pinned;
    codex_filtered: "codex", Release::Pinned;
}

/// A provider's tool-count limit: Copilot CLI sends all of 211 tools
/// itself (so the limit is its provider's, whose documented 128 the
/// request passes), and `tether inventory --test` of the same files says
/// every tool's request is refused (`tool_limit_exceeded`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_sends_every_tool_and_the_provider_s_limit_is_predicted() {
    let many = 200;
    let Some(got) = what_the_model_got("copilot", Release::Pinned, many, false, &[]).await else {
        return;
    };
    let listed = tether_tests::breaking::tools(many).len();
    let sent: std::collections::BTreeSet<&String> = got.offered.iter().map(|(_, l)| l).collect();
    // Of two equal names Copilot keeps one (`a.b` and `a-b`).
    assert_eq!(
        sent.len(),
        listed - 1,
        "Copilot CLI capped its tools itself"
    );
    let rows = inventory_of("copilot", &got).await;
    assert!(!rows.is_empty());
    for row in rows
        .iter()
        .filter(|r| r["model"]["reason_code"] != "name_collision")
    {
        assert_eq!(row["reason_code"], "tool_limit_exceeded", "{row:#}");
        assert_eq!(
            row["stages"]["current_thread"]["provenance"], "documented_rule",
            "{row:#}"
        );
    }
}

/// One tapped session and what the tap recorded of its model requests.
struct TappedOnce {
    got: Got,
    tapped: Tapped,
    records: Vec<tether_tap::TapRecord>,
}

/// One session of `kind` at `release` through the tap (with `env` added to
/// the harness's), and the tap's records of it, asserted to be what the
/// fake model received (its own log of each request, the ground truth):
/// a tool the tap lost or made up fails here, whatever the harness sent.
async fn tapped_once(
    kind: &str,
    release: Release,
    label: &str,
    env: &[(&str, &str)],
) -> Option<TappedOnce> {
    let (got, tapped) = session_of(kind, release, 0, false, env, true).await?;
    let tapped = tapped.expect("a tapped session has its tap");
    // Every record made (the observer reads the copies off the path):
    // one per request the model answered, bounded.
    let turns: Vec<_> = got
        .log
        .turns()
        .into_iter()
        .filter(|t| tether_tap::api::Api::of(&t.path).is_some())
        .collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let records = loop {
        let records: Vec<_> = tapped
            .tap
            .tap()
            .recent()
            .into_iter()
            .filter(|r| r.api.is_some())
            .collect();
        if records.len() >= turns.len() || std::time::Instant::now() > deadline {
            break records;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    // Per request, the tools offered in order, then those sent with
    // `defer_loading` (the tap keeps them apart: not model-visible).
    // Names as Tether shows every name: through its one sanitizer (a
    // hex run, such as Codex's collision suffix, reads as a credential).
    let shown = |n: &String| tether_core::sanitize::name(n);
    let mut sent: Vec<Vec<String>> = turns
        .iter()
        .map(|t| t.tools.iter().map(shown).collect())
        .collect();
    let deferred: std::collections::BTreeSet<String> = records
        .iter()
        .flat_map(|r| {
            r.deferred
                .iter()
                .filter(|t| t.hash.is_some())
                .map(|t| t.name.clone())
        })
        .collect();
    for tools in &mut sent {
        let (mut kept, later): (Vec<_>, Vec<_>) =
            tools.drain(..).partition(|t| !deferred.contains(t));
        kept.extend(later);
        *tools = kept;
    }
    let mut seen: Vec<Vec<String>> = records
        .iter()
        .map(|r| {
            r.offered
                .iter()
                .chain(r.deferred.iter().filter(|t| t.hash.is_some()))
                .map(|t| t.name.clone())
                .collect()
        })
        .collect();
    sent.sort();
    seen.sort();
    assert_eq!(seen, sent, "{label}: the tap's tools per request");
    Some(TappedOnce {
        got,
        tapped,
        records,
    })
}

/// Whether the model was sent anything of `brk` in the session: a tool
/// (its description names where it came from), a name behind a tool
/// search, or a call. From the fake model's own log.
fn model_got_brk(got: &Got) -> bool {
    !got.offered.is_empty()
        || got.named.iter().any(|n| n.starts_with("mcp__brk"))
        || got.called.iter().any(|c| c.contains("brk"))
}

/// Where Gemini CLI writes its debug log, relative to its working
/// directory (the run's private home): `GEMINI_DEBUG_LOG_FILE`, read by its
/// `DebugLogger` (bundle/chunk-JDPZ4CE3.js:247444), which gets each MCP
/// diagnostic's own words (`[MCP error] Error during discovery for MCP
/// server 'brk': …`, :370425) where its stderr says only `MCP issues
/// detected`.
const GEMINI_DEBUG_LOG: &str = "gemini-debug.log";

/// What the harness had to say about MCP, for a loud message: its
/// stderr's lines on MCP and Gemini's MCP diagnostics in its debug log;
/// bounded.
fn mcp_lines(got: &Got) -> String {
    use std::io::Read;
    let mut log = String::new();
    if let Ok(file) = std::fs::File::open(got.run.cwd.join(GEMINI_DEBUG_LOG)) {
        let mut bytes = Vec::new();
        let _ = file.take(1 << 20).read_to_end(&mut bytes);
        log = String::from_utf8_lossy(&bytes).into_owned();
    }
    got.stderr
        .lines()
        .filter(|l| l.to_ascii_lowercase().contains("mcp"))
        .chain(log.lines().filter(|l| l.contains("[MCP ")))
        .take(10)
        .map(|l| l.chars().take(300).collect::<String>())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// A tapped session whose model was sent nothing of `brk` (its harness
/// started without the server: Gemini CLI 0.61 in `-p` waits for MCP
/// discovery, but a server that fails to start or list is left out and
/// the run goes on): the tap named no tool `brk`'s, and neither the tap's
/// evidence nor the harness's own records say any of `brk` reached the
/// model.
async fn assert_nothing_of_brk_claimed(kind: &str, label: &str, run: &TappedOnce) {
    let claimed: Vec<_> = run
        .records
        .iter()
        .flat_map(|r| r.offered.iter().chain(&r.called).chain(&r.deferred))
        .filter(|t| t.server.as_deref() == Some("brk"))
        .collect();
    assert!(claimed.is_empty(), "{label}: {claimed:?}");
    run.tapped.tap.tap().settle().await;
    run.tapped.hub.flush().await;
    let sessions: std::collections::BTreeSet<_> = run
        .records
        .iter()
        .filter_map(|r| r.session.clone())
        .collect();
    let rows: Vec<_> = sessions
        .iter()
        .filter_map(|s| run.tapped.hub.snapshot(s))
        .filter_map(|h| h.current().and_then(|a| a.server("brk")).cloned())
        .chain(recorded(kind, &run.got).and_then(|a| a.server("brk").cloned()))
        .collect();
    // The tap was told of `brk` (as configured): its session has the row.
    assert!(!rows.is_empty(), "{label}: no brk row in {sessions:?}");
    for row in rows {
        assert_ne!(
            row.stages.model_visible.state,
            tether_core::vocab::StageState::Yes,
            "{label}: brk said model-visible: {row:?}"
        );
        for tool in &row.tools {
            assert!(!tool.model_visible.is_yes(), "{label}: {tool:?}");
        }
    }
}

/// Runs `once` and, where the harness started without `brk` (the model
/// was sent nothing of it: [`model_got_brk`]), says so loudly, asserts
/// `check` of that run and runs it once more, which must have `brk`.
/// `None` where the CLI is not installed.
async fn with_brk<T>(
    label: &str,
    got: impl Fn(&T) -> &Got,
    mut once: impl AsyncFnMut() -> Option<T>,
    check: impl AsyncFn(&T),
) -> Option<T> {
    let first = once().await?;
    if model_got_brk(got(&first)) {
        return Some(first);
    }
    check(&first).await;
    eprintln!(
        "RETRY: {label}: the harness started without brk's tools (the fake model was sent \
         nothing of brk in any of its {} requests; not a tap's loss: the tap saw the same); \
         what it said of MCP: [{}]; running it once more",
        got(&first).log.turns().len(),
        mcp_lines(got(&first))
    );
    let again = once().await.expect("installed: it just ran");
    assert!(
        model_got_brk(got(&again)),
        "{label}: the harness started without brk's tools twice; what it said of MCP: [{}]",
        mcp_lines(got(&again))
    );
    Some(again)
}

/// Through `tether tap`: every request the fake model was sent is one the
/// tap recorded, with the same tools in the same order (deferred ones
/// apart), the same calls, each `brk` tool mapped back to `brk` and the
/// tool it came from by the harness's own naming; the session is the
/// harness's own where it sends its id, a tap session of its own where it
/// does not; and what the tap saw lands on that session's `brk` row as
/// `model_tap` evidence. A run whose harness started without `brk` (the
/// fake model's log says it was sent nothing of it) is checked for what
/// Tether says of it and run once more, loudly.
async fn tapped_equals_received(kind: &str, release: Release) {
    let label = format!("{kind} ({}) through the tap", release.label());
    // Gemini's own MCP diagnostics, for what a run without `brk` says.
    let env: &[(&str, &str)] = if kind == "gemini" {
        &[("GEMINI_DEBUG_LOG_FILE", GEMINI_DEBUG_LOG)]
    } else {
        &[]
    };
    let Some(TappedOnce {
        got,
        tapped,
        records,
    }) = with_brk(
        &label,
        |r: &TappedOnce| &r.got,
        async || tapped_once(kind, release, &label, env).await,
        async |r: &TappedOnce| assert_nothing_of_brk_claimed(kind, &label, r).await,
    )
    .await
    else {
        return;
    };
    // The session's own behaviour is unchanged: run directly, the harness
    // sent the model the same requests (paths, tools) and got the same
    // calls.
    let direct = with_brk(
        &format!("{kind} ({}) run directly", release.label()),
        |g: &Got| g,
        async || what_the_model_got(kind, release, 0, false, env).await,
        async |_: &Got| {},
    )
    .await
    .expect("installed: it just ran");
    let shape = |log: &tether_tests::fake_model::ModelLog| {
        let mut turns: Vec<(String, Vec<String>, Option<String>)> = log
            .turns()
            .into_iter()
            .map(|t| (t.path, t.tools, t.called))
            .collect();
        turns.sort();
        turns
    };
    assert_eq!(
        shape(&got.log),
        shape(&direct.log),
        "{label}: the requests, tapped and direct"
    );
    let shown = |n: &String| tether_core::sanitize::name(n);
    assert!(
        records
            .iter()
            .all(|r| r.outcome == "completed" && r.unread.is_empty()),
        "{label}: {records:?}"
    );
    let mut called: Vec<String> = got.called.iter().map(shown).collect();
    let mut tapped_calls: Vec<String> = records
        .iter()
        .flat_map(|r| r.called.iter().map(|t| t.name.clone()))
        .collect();
    called.sort();
    tapped_calls.sort();
    assert_eq!(tapped_calls, called, "{label}: the calls");
    assert!(
        records
            .iter()
            .all(|r| r.agent_kind.as_deref() == Some(kind)),
        "{label}: {records:?}"
    );
    // Each brk tool mapped back by the harness's own spelling.
    let rules = rules(kind, &version(kind, release));
    let brk: Vec<_> = records
        .iter()
        .flat_map(|r| r.offered.iter().chain(&r.called))
        .filter(|t| t.server.as_deref() == Some("brk"))
        .collect();
    // A name whose tool a hash hides names its server alone.
    let spelled = brk
        .iter()
        .filter(|t| !t.name.contains(tether_core::sanitize::REDACTED) && t.tool.is_some());
    assert!(
        !brk.is_empty(),
        "{label}: no tool mapped to brk: {records:?}"
    );
    for t in spelled {
        let tool = t.tool.as_deref().expect("a tool");
        assert_eq!((rules.naming)("brk", tool), t.name, "{label}: {t:?}");
    }
    // Its session: the harness's own id where it sends one.
    let sessions: std::collections::BTreeSet<_> =
        records.iter().filter_map(|r| r.session.clone()).collect();
    assert_eq!(sessions.len(), 1, "{label}: {sessions:?}");
    let session = sessions.into_iter().next().expect("one");
    let sends_its_id = matches!(kind, "claude" | "codex" | "opencode");
    assert_eq!(
        !session.starts_with(&format!("{kind}:tap-")),
        sends_its_id,
        "{label}: {session}"
    );
    tapped.hub.flush().await;
    tether_tests::tap_run::model_visible_in(&tapped.hub, &session, &label, "brk");
    // The planted argument went through in every call the model made (and
    // back in the history of the requests after it), the key in every
    // request; neither is kept.
    assert!(!got.called.is_empty(), "{label}: the model called nothing");
    let kept = format!(
        "{}{}",
        serde_json::to_string(&tapped.tap.tap().recent()).expect("json"),
        serde_json::to_string(&tapped.hub.snapshot(&session)).expect("json")
    );
    for planted in ["ZqWx8rK2pL", "Vb7nQ2mX9tLcR4"] {
        assert!(!kept.contains(planted), "{label}: {planted} was kept");
    }
    // Nothing refused, dropped or left unread on the way.
    let stats = tapped.tap.tap().stats();
    assert_eq!(
        (stats.refused, stats.dropped, stats.upstream_errors),
        (0, 0, 0),
        "{label}: {stats:?}"
    );
}

macro_rules! tap_tests {
    ($($name:ident: $kind:literal, $release:expr;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            tapped_equals_received($kind, $release).await;
        }
    )*};
}

tap_tests! {
    tapped_claude_pinned: "claude", Release::Pinned;
    tapped_claude_newest: "claude", Release::Newest;
    tapped_qwen_pinned: "qwen", Release::Pinned;
    tapped_qwen_newest: "qwen", Release::Newest;
    tapped_gemini: "gemini", Release::Pinned;
    tapped_copilot: "copilot", Release::Pinned;
    tapped_codex: "codex", Release::Pinned;
    tapped_opencode: "opencode", Release::Pinned;
}

/// Gemini CLI 0.61 started without its server, as a failed start or
/// listing leaves it: `-p` waits for MCP discovery (`await
/// this.mcpInitializationPromise` when not interactive, `Config._initialize`,
/// bundle/chunk-JDPZ4CE3.js:379237), but `maybeDiscoverMcpServer` only
/// reports a server that fails (:370671; `MCP issues detected`, :370429)
/// and the run goes on without its tools. Here `brk`'s command, as its
/// system settings (`GEMINI_CLI_SYSTEM_SETTINGS_PATH`,
/// chunk-2YTYPKEZ.js:16142) override it, does not exist on the first run:
/// the fake model was sent nothing of `brk`, the tap saw exactly that,
/// Gemini said so itself, and nothing of Tether's says `brk` reached the
/// model; [`with_brk`] says so loudly and runs once more, with `brk`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tapped_gemini_started_without_its_server() {
    // Gemini skips a system settings file under a directory others may
    // write to (such as /tmp: chunk-JDPZ4CE3.js:365863).
    let trusted = match tether_tests::last_mile::gemini_trusted_dir(Path::new(env!(
        "CARGO_TARGET_TMPDIR"
    ))) {
        Ok(dir) => dir,
        Err(why) => {
            eprintln!(
                "SKIPPED tapped_gemini_started_without_its_server: no folder here that Gemini trusts for a system settings file ({why})"
            );
            return;
        }
    };
    let dir = tempfile::tempdir_in(trusted).expect("dir");
    let system = dir.path().join("system-settings.json");
    let missing = dir.path().join("no-such-server");
    write(
        &system,
        &serde_json::json!({"mcpServers": {"brk": {"command": missing}}}).to_string(),
    );
    let system = system.display().to_string();
    let broken = [
        ("GEMINI_CLI_SYSTEM_SETTINGS_PATH", system.as_str()),
        ("GEMINI_DEBUG_LOG_FILE", GEMINI_DEBUG_LOG),
    ];
    let label = "gemini (pinned) through the tap, brk not started at first";
    let mut runs = 0;
    let Some(run) = with_brk(
        label,
        |r: &TappedOnce| &r.got,
        async || {
            runs += 1;
            let env: &[(&str, &str)] = if runs == 1 { &broken } else { &[] };
            tapped_once("gemini", Release::Pinned, label, env).await
        },
        async |r: &TappedOnce| {
            // Its own word: `MCP issues detected. Run /mcp list for status.`
            // and, in its debug log, why.
            let said = mcp_lines(&r.got);
            assert!(said.contains("MCP issues detected"), "{label}: {said}");
            assert!(
                said.contains("Error during discovery for MCP server 'brk'"),
                "{label}: {said}"
            );
            assert!(!r.records.is_empty(), "{label}: the tap recorded nothing");
            assert_nothing_of_brk_claimed("gemini", label, r).await;
        },
    )
    .await
    else {
        return;
    };
    assert_eq!(runs, 2, "{label}: the first run had brk");
    assert!(model_got_brk(&run.got), "{label}");
}
