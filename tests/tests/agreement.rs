//! Tether agrees with each harness's own list: a generated corpus of
//! configurations (scopes, trusted and untrusted folders, approved and
//! unapproved project servers, disabled flags, unset variables, one name in
//! two scopes) is read by `tether inventory` and by the harness's own list
//! command (`claude mcp list`, `gemini mcp list`, `qwen mcp list`, `codex mcp
//! list --json`, `opencode mcp list`, `copilot mcp list --json`), on the
//! pinned and the newest release
//! where they differ; each server's enabled state must be the same, but for
//! the known differences written down below, with why. The agreement per
//! harness is printed.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::json;
use tether_core::inventory::InventoryDocument;
use tether_tests::{Release, workspace_bin};

/// One configuration: files under the home and the project, and variables.
struct Case {
    name: &'static str,
    home: Vec<(&'static str, String)>,
    project: Vec<(&'static str, String)>,
    env: Vec<(&'static str, &'static str)>,
}

fn case(name: &'static str) -> Case {
    Case {
        name,
        home: Vec::new(),
        project: Vec::new(),
        env: Vec::new(),
    }
}

/// A harness, its list command, and how to read what it printed: each
/// server it names, and whether it would run it.
struct Harness {
    name: &'static str,
    cli: &'static str,
    releases: &'static [Release],
    args: &'static [&'static str],
    read: fn(&str) -> BTreeMap<String, bool>,
    cases: fn(&Path) -> Vec<Case>,
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `NAME: TARGET - ✘ Failed to connect` / `- ⏸ Pending approval …`.
fn read_claude(text: &str) -> BTreeMap<String, bool> {
    strip_ansi(text)
        .lines()
        .filter(|l| l.contains(" - "))
        .filter_map(|l| {
            let (name, rest) = l.split_once(": ")?;
            (!name.contains(' ')).then(|| {
                let status = rest.rsplit_once(" - ").map_or(rest, |(_, s)| s);
                (
                    name.to_owned(),
                    !status.contains("Pending approval") && !status.contains("Disabled"),
                )
            })
        })
        .collect()
}

/// `✓ NAME: TARGET (stdio) - Connected` / `○ NAME: … - Disabled`.
fn read_gemini(text: &str) -> BTreeMap<String, bool> {
    strip_ansi(text)
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let mut chars = l.chars();
            let mark = chars.next()?;
            if !matches!(mark, '✓' | '✗' | '○' | '…') {
                return None;
            }
            let rest = chars.as_str().trim_start();
            let (name, rest) = rest.split_once(": ")?;
            let status = rest.rsplit_once(" - ").map_or(rest, |(_, s)| s);
            Some((name.to_owned(), !status.trim().starts_with("Disabled")))
        })
        .collect()
}

/// The first JSON document in what a list command printed, from `start`
/// on (a warning may come before or after it).
fn first_json(text: &str, start: Option<usize>) -> Option<serde_json::Value> {
    serde_json::Deserializer::from_str(&text[start.unwrap_or(0)..])
        .into_iter::<serde_json::Value>()
        .next()
        .and_then(Result::ok)
}

/// `codex mcp list --json`: `[{name, enabled}]` (a warning may follow).
fn read_codex(text: &str) -> BTreeMap<String, bool> {
    first_json(text, text.find("[\n").or_else(|| text.find('[')))
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|s| Some((s["name"].as_str()?.to_owned(), s["enabled"].as_bool()?)))
        .collect()
}

/// `copilot mcp list --json`: `{"mcpServers": {NAME: {enabled, source}}}`,
/// one entry per name (the one it uses).
fn read_copilot(text: &str) -> BTreeMap<String, bool> {
    first_json(text, text.find('{'))
        .and_then(|v| v.get("mcpServers").and_then(|m| m.as_object()).cloned())
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(name, s)| Some((name, s["enabled"].as_bool()?)))
        .collect()
}

/// `●  ✗ NAME failed` / `●  ○ NAME disabled`.
fn read_opencode(text: &str) -> BTreeMap<String, bool> {
    strip_ansi(text)
        .lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix('●')?.trim_start();
            let mut words = rest.split_whitespace().skip(1);
            let name = words.next()?;
            let status = words.next().unwrap_or_default();
            Some((name.to_owned(), status != "disabled"))
        })
        .collect()
}

fn claude_cases(project: &Path) -> Vec<Case> {
    let p = project.display().to_string();
    let mcp_json = json!({"mcpServers": {
        "p-approved": {"command": "/bin/true"},
        "p-waiting": {"command": "/bin/true"},
        "p-rejected": {"command": "/bin/true"},
        "dup": {"command": "/bin/true"}
    }})
    .to_string();
    let local = json!({"enabledMcpjsonServers": ["p-approved", "dup"],
                       "disabledMcpjsonServers": ["p-rejected"]})
    .to_string();
    let state = |trusted: bool| {
        json!({
            "mcpServers": {
                "u-plain": {"command": "/bin/true"},
                "u-unset": {"type": "http", "url": "https://api.example.invalid/mcp",
                            "headers": {"Authorization": "Bearer ${AGREE_UNSET_TOKEN}"}},
                "dup": {"command": "/bin/true"}
            },
            "projects": {p.clone(): {"hasTrustDialogAccepted": trusted,
                                     "mcpServers": {"l-local": {"command": "/bin/true"}}}}
        })
        .to_string()
    };
    let mut trusted = case("claude: trusted folder, approvals in settings.local.json");
    trusted.home.push((".claude.json", state(true)));
    trusted.project.push((".mcp.json", mcp_json.clone()));
    trusted
        .project
        .push((".claude/settings.local.json", local.clone()));
    let mut untrusted = case("claude: the folder's trust dialog never accepted");
    untrusted.home.push((".claude.json", state(false)));
    untrusted.project.push((".mcp.json", mcp_json.clone()));
    untrusted
        .project
        .push((".claude/settings.local.json", local));
    let mut all = case("claude: enableAllProjectMcpServers");
    all.home.push((".claude.json", state(true)));
    all.project.push((".mcp.json", mcp_json));
    all.project.push((
        ".claude/settings.local.json",
        json!({"enableAllProjectMcpServers": true}).to_string(),
    ));
    vec![trusted, untrusted, all]
}

fn gemini_like_cases(dir: &'static str, harness: &'static str) -> impl Fn(&Path) -> Vec<Case> {
    move |project: &Path| {
        let settings = |trust: bool| {
            let mut v = json!({
                "mcp": {"excluded": ["u-excluded"]},
                "mcpServers": {
                    "u-plain": {"command": "/bin/true"},
                    "u-excluded": {"command": "/bin/true"},
                    "dup": {"command": "/bin/true"}
                }
            });
            if trust {
                v["security"] = json!({"folderTrust": {"enabled": true}});
            }
            v.to_string()
        };
        let proj = json!({"mcpServers": {"p-srv": {"command": "/bin/true"},
                                          "dup": {"command": "/bin/false"}}})
        .to_string();
        let settings_file: &'static str = if dir == ".gemini" {
            ".gemini/settings.json"
        } else {
            ".qwen/settings.json"
        };
        let trusted_file: &'static str = if dir == ".gemini" {
            ".gemini/trustedFolders.json"
        } else {
            ".qwen/trustedFolders.json"
        };
        let rule = json!({project.display().to_string(): "TRUST_FOLDER"}).to_string();
        let mut out = Vec::new();
        let mut plain = case("no trust setting, no rule");
        plain.home.push((settings_file, settings(false)));
        plain.project.push((settings_file, proj.clone()));
        out.push(plain);
        let mut on = case("folder trust on, no rule");
        on.home.push((settings_file, settings(true)));
        on.project.push((settings_file, proj.clone()));
        out.push(on);
        let mut ruled = case("folder trust on, the folder trusted");
        ruled.home.push((settings_file, settings(true)));
        ruled.home.push((trusted_file, rule));
        ruled.project.push((settings_file, proj.clone()));
        out.push(ruled);
        if harness == "gemini" {
            let mut env = case("GEMINI_CLI_TRUST_WORKSPACE=true");
            env.home.push((settings_file, settings(false)));
            env.project.push((settings_file, proj));
            env.env.push(("GEMINI_CLI_TRUST_WORKSPACE", "true"));
            out.push(env);
        }
        out
    }
}

fn gemini_cases(project: &Path) -> Vec<Case> {
    gemini_like_cases(".gemini", "gemini")(project)
}

fn qwen_cases(project: &Path) -> Vec<Case> {
    let mut cases = gemini_like_cases(".qwen", "qwen")(project);
    // 0.24: the project's `.mcp.json`, each server approved for its entry
    // as it is (its hash), for an entry since edited, or not at all.
    let hash = |entry: serde_json::Value| {
        tether_passthrough_gemini::config_scan::qwen_entry_hash(
            entry.as_object().expect("an entry object"),
        )
    };
    let mcp_json = json!({"mcpServers": {
        "m-approved": {"command": "/bin/true"},
        "m-http": {"type": "http", "url": "http://127.0.0.1:1/mcp"},
        "m-edited": {"command": "/bin/true", "args": ["--new"]},
        "m-waiting": {"command": "/bin/true"},
        "m-rejected": {"command": "/bin/true"}
    }})
    .to_string();
    let approvals = json!({project.display().to_string(): {
        "m-approved": {"hash": hash(json!({"command": "/bin/true"})), "status": "approved"},
        "m-http": {"hash": hash(json!({"httpUrl": "http://127.0.0.1:1/mcp"})), "status": "approved"},
        "m-edited": {"hash": hash(json!({"command": "/bin/true"})), "status": "approved"},
        "m-rejected": {"hash": hash(json!({"command": "/bin/true"})), "status": "rejected"}
    }})
    .to_string();
    for trust in [false, true] {
        let mut c = case(if trust {
            "qwen: .mcp.json and approvals, folder trust on, no rule"
        } else {
            "qwen: .mcp.json and approvals"
        });
        if trust {
            c.home.push((
                ".qwen/settings.json",
                json!({"security": {"folderTrust": {"enabled": true}}}).to_string(),
            ));
        }
        c.home.push((".qwen/mcpApprovals.json", approvals.clone()));
        c.project.push((".mcp.json", mcp_json.clone()));
        cases.push(c);
    }
    cases
}

fn codex_cases(project: &Path) -> Vec<Case> {
    let config = |trust: &str| {
        format!(
            "[mcp_servers.u-plain]\ncommand = \"/bin/true\"\n\n[mcp_servers.u-off]\ncommand = \"/bin/true\"\nenabled = false\n\n[mcp_servers.u-bearer]\nurl = \"https://api.example.invalid/mcp\"\nbearer_token_env_var = \"AGREE_UNSET_TOKEN\"\n\n[projects.\"{}\"]\ntrust_level = \"{trust}\"\n",
            project.display()
        )
    };
    let proj = "[mcp_servers.p-srv]\ncommand = \"/bin/true\"\n".to_owned();
    let mut trusted = case("codex: trusted project");
    trusted.home.push((".codex/config.toml", config("trusted")));
    trusted.project.push((".codex/config.toml", proj.clone()));
    let mut untrusted = case("codex: untrusted project");
    untrusted
        .home
        .push((".codex/config.toml", config("untrusted")));
    untrusted.project.push((".codex/config.toml", proj));
    vec![trusted, untrusted]
}

fn opencode_cases(_: &Path) -> Vec<Case> {
    let user = json!({"mcp": {
        "u-plain": {"type": "local", "command": ["/bin/true"]},
        "u-off": {"type": "local", "command": ["/bin/true"], "enabled": false},
        "dup": {"type": "local", "command": ["/bin/true"]}
    }})
    .to_string();
    let proj = json!({"mcp": {
        "p-srv": {"type": "local", "command": ["/bin/true"]},
        "dup": {"type": "local", "command": ["/bin/true"], "enabled": false}
    }})
    .to_string();
    let mut c = case("opencode: user and project, one name in both");
    c.home.push((".config/opencode/opencode.json", user));
    c.project.push(("opencode.json", proj));
    vec![c]
}

fn copilot_cases(project: &Path) -> Vec<Case> {
    let local = json!({"type": "local", "command": "/bin/true", "args": [], "tools": ["*"]});
    let user = json!({"mcpServers": {
        "u-plain": local,
        "u-off": local,
        "dup": local,
        "u-unset": {"type": "http", "url": "https://api.example.invalid/mcp",
                    "headers": {"Authorization": "Bearer ${AGREE_UNSET_TOKEN}"}, "tools": ["*"]}
    }})
    .to_string();
    let settings = json!({"disabledMcpServers": ["u-off"]}).to_string();
    let mcp_json = json!({"mcpServers": {"p-srv": local, "dup": local}}).to_string();
    let github = json!({"mcpServers": {"g-srv": local}}).to_string();
    let trust = |key: &str| json!({key: [project.display().to_string()]}).to_string();
    let base = |name| {
        let mut c = case(name);
        c.home.push((".copilot/mcp-config.json", user.clone()));
        c.home.push((".copilot/settings.json", settings.clone()));
        c
    };
    let mut untrusted = base("copilot: untrusted folder, both workspace files");
    untrusted.project.push((".mcp.json", mcp_json.clone()));
    untrusted.project.push((".github/mcp.json", github.clone()));
    let mut trusted = base("copilot: trusted folder, both workspace files");
    trusted
        .home
        .push((".copilot/config.json", trust("trusted_folders")));
    trusted.project.push((".mcp.json", mcp_json.clone()));
    trusted.project.push((".github/mcp.json", github.clone()));
    let mut github_only = base("copilot: trusted (trustedFolders), .github/mcp.json alone");
    github_only
        .home
        .push((".copilot/config.json", trust("trustedFolders")));
    github_only
        .project
        .push((".github/mcp.json", github.clone()));
    let mut empty = base("copilot: trusted, an empty .mcp.json beside .github/mcp.json");
    empty
        .home
        .push((".copilot/config.json", trust("trusted_folders")));
    empty.project.push((".mcp.json", "{}".to_owned()));
    empty.project.push((".github/mcp.json", github));
    vec![untrusted, trusted, github_only, empty]
}

const HARNESSES: &[Harness] = &[
    Harness {
        name: "claude",
        cli: "node_modules/.bin/claude",
        releases: &Release::BOTH,
        args: &["mcp", "list"],
        read: read_claude,
        cases: claude_cases,
    },
    Harness {
        name: "gemini",
        cli: "node_modules/.bin/gemini",
        releases: &[Release::Pinned],
        args: &["mcp", "list"],
        read: read_gemini,
        cases: gemini_cases,
    },
    Harness {
        name: "qwen",
        cli: "node_modules/.bin/qwen",
        releases: &Release::BOTH,
        args: &["mcp", "list"],
        read: read_gemini,
        cases: qwen_cases,
    },
    Harness {
        name: "codex",
        cli: "node_modules/.bin/codex",
        releases: &[Release::Pinned],
        args: &["mcp", "list", "--json"],
        read: read_codex,
        cases: codex_cases,
    },
    Harness {
        name: "copilot",
        cli: "node_modules/.bin/copilot",
        releases: &[Release::Pinned],
        args: &["mcp", "list", "--json"],
        read: read_copilot,
        cases: copilot_cases,
    },
    Harness {
        name: "opencode",
        cli: "node_modules/.bin/opencode",
        releases: &[Release::Pinned],
        args: &["mcp", "list"],
        read: read_opencode,
        cases: opencode_cases,
    },
];

/// Differences known and kept, with why: (harness, release, case, server,
/// why). Each is checked to still differ: one that agrees again fails, so
/// the list cannot go stale.
const KNOWN: &[(&str, &str, &str, &str, &str)] = &[
    (
        "qwen",
        "*",
        "*",
        "u-excluded",
        "`qwen mcp list` connects to every configured server, excluded ones too; the session itself drops `mcp.excluded` servers (its config loader), which is what Tether says",
    ),
    (
        "qwen",
        "pinned",
        "folder trust on, no rule",
        "p-srv",
        "0.15 trusts a folder no trustedFolders.json rule names (`isTrusted ?? true`); 0.24 does not, and Tether reads it as 0.24 does",
    ),
    (
        "qwen",
        "pinned",
        "no trust setting, no rule",
        "p-srv",
        "0.15 has no approval of a project's servers; 0.24 waits for one in ~/.qwen/mcpApprovals.json, and Tether reads it as 0.24 does",
    ),
    (
        "qwen",
        "pinned",
        "no trust setting, no rule",
        "dup",
        "the project's `dup` overrides the user's; 0.15 runs it unapproved, 0.24 waits (as above)",
    ),
    (
        "qwen",
        "pinned",
        "folder trust on, the folder trusted",
        "p-srv",
        "0.15 has no approval of a project's servers (as above)",
    ),
    (
        "qwen",
        "pinned",
        "folder trust on, the folder trusted",
        "dup",
        "0.15 has no approval of a project's servers (as above)",
    ),
    (
        "qwen",
        "pinned",
        ".mcp.json and approvals*",
        "m-approved",
        "0.15 does not read a project's `.mcp.json`; 0.24 does (each server once approved), and Tether reads it as 0.24 does",
    ),
    (
        "qwen",
        "pinned",
        ".mcp.json and approvals*",
        "m-http",
        "0.15 does not read a project's `.mcp.json` (as above)",
    ),
];

/// Which scope's server a harness uses when one name is in several,
/// strongest first.
fn precedence(harness: &str) -> &'static [&'static str] {
    match harness {
        "claude" => &["local", "project", "user"],
        "gemini" | "qwen" => &["system", "project", "user", "plugin"],
        _ => &["project", "user"],
    }
}

fn node_path(release: Release) -> String {
    let node = tether_tests::node_dir();
    format!(
        "{}:{}",
        release.path(),
        node.map(|d| d.display().to_string()).unwrap_or_default()
    )
}

/// A release's report line and its disagreements.
type Agreed = (String, Vec<String>);

/// One release of one harness against Tether, case by case: its report
/// line and its disagreements; `None` where its CLI is not installed.
fn agree_on(harness: &Harness, release: &Release) -> Option<Agreed> {
    let cli = release.peer(harness.cli)?;
    let mut disagreements = Vec::new();
    let (mut agree, mut total, mut known_seen) = (0usize, 0usize, 0usize);
    let dir = tempfile::tempdir().expect("dir");
    let root = dir.path().canonicalize().expect("canonical");
    let project_dir = root.join("work");
    for (n, case) in (harness.cases)(&project_dir).into_iter().enumerate() {
        let home = root.join(format!("home-{n}"));
        let project = &project_dir;
        let _ = std::fs::remove_dir_all(project);
        std::fs::create_dir_all(project).expect("project");
        for (rel, text) in &case.home {
            let path = home.join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
            std::fs::write(path, text).expect("write");
        }
        for (rel, text) in &case.project {
            let path = project.join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
            std::fs::write(path, text).expect("write");
        }
        let path = node_path(*release);
        let listed = Command::new(&cli)
            .args(harness.args)
            .env_clear()
            .env("HOME", &home)
            .env("PATH", &path)
            .env("CODEX_HOME", home.join(".codex"))
            .env("DISABLE_AUTOUPDATER", "1")
            .envs(case.env.iter().copied())
            .current_dir(project)
            .output()
            .expect("the harness's list");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&listed.stdout),
            String::from_utf8_lossy(&listed.stderr)
        );
        let theirs = (harness.read)(&said);
        let out = Command::new(workspace_bin("tether"))
            .args([
                "inventory",
                "--json",
                "--harness",
                harness.name,
                "--project",
            ])
            .arg(project)
            .env_clear()
            .env("HOME", &home)
            .env("PATH", &path)
            .env("CODEX_HOME", home.join(".codex"))
            .envs(case.env.iter().copied())
            .current_dir(project)
            .output()
            .expect("tether inventory");
        let doc: InventoryDocument =
            serde_json::from_slice(&out.stdout).expect("an inventory document");
        // Per name, the row the harness would use: the strongest
        // scope's, of the files it reads at all (an untrusted
        // folder's settings are not read, nor a shadowed file).
        let mut ours: BTreeMap<String, (usize, bool)> = BTreeMap::new();
        let order = precedence(harness.name);
        for row in doc.rows.iter().filter(|r| {
            r.kind == tether_core::vocab::CapabilityKind::McpServer
                && !matches!(
                    r.reason_code,
                    Some(
                        tether_core::vocab::ReasonCode::UntrustedFolder
                            | tether_core::vocab::ReasonCode::FileShadowed
                    )
                )
        }) {
            let rank = order
                .iter()
                .position(|s| *s == row.scope.to_string())
                .unwrap_or(order.len());
            let entry = ours.entry(row.name.clone()).or_insert((usize::MAX, false));
            if rank < entry.0 {
                *entry = (rank, row.is_enabled());
            }
        }
        // A server every row of which an untrusted folder holds back.
        for row in doc
            .rows
            .iter()
            .filter(|r| r.kind == tether_core::vocab::CapabilityKind::McpServer)
        {
            ours.entry(row.name.clone()).or_insert((usize::MAX, false));
        }
        let ours: BTreeMap<String, bool> = ours.into_iter().map(|(k, (_, on))| (k, on)).collect();
        let names: std::collections::BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
        for name in names {
            total += 1;
            let (a, b) = (
                ours.get(name).copied().unwrap_or(false),
                theirs.get(name).copied().unwrap_or(false),
            );
            let known = KNOWN.iter().find(|(h, r, c, s, _)| {
                *h == harness.name
                    && (*r == "*" || *r == release.label())
                    && (*c == "*"
                        || case.name.ends_with(c)
                        || c.strip_suffix('*').is_some_and(|p| case.name.contains(p)))
                    && *s == name
            });
            if a == b {
                agree += 1;
                if let Some(k) = known.filter(|k| k.2 != "*" && k.1 != "*") {
                    disagreements.push(format!(
                        "{} {} / {} / {name}: a known difference agrees now; remove it: {}",
                        harness.name,
                        release.label(),
                        case.name,
                        k.4
                    ));
                }
            } else if known.is_some() {
                known_seen += 1;
            } else {
                disagreements.push(format!(
                    "{} {} / {} / {name}: tether says {}, the harness says {}\n{said}",
                    harness.name,
                    release.label(),
                    case.name,
                    if a { "enabled" } else { "not enabled" },
                    if b { "enabled" } else { "not enabled" },
                ));
            }
        }
    }
    let line = format!(
        "{} ({}): {agree}/{total} agree, {known_seen} known difference(s)",
        harness.name,
        release.label()
    );
    Some((line, disagreements))
}

/// How many releases are compared at once: each compares in its own
/// folders, and a list command's health checks here end at once (every
/// server is `/bin/true` or an `.invalid` address), so nothing waits on
/// another run.
const AT_ONCE: usize = 2;

#[test]
fn tether_agrees_with_each_harness_s_own_list() {
    let jobs: Vec<(&Harness, &Release)> = HARNESSES
        .iter()
        .flat_map(|h| h.releases.iter().map(move |r| (h, r)))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: Vec<std::sync::Mutex<Option<Agreed>>> =
        jobs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..AT_ONCE {
            scope.spawn(|| {
                loop {
                    let n = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some((harness, release)) = jobs.get(n) else {
                        break;
                    };
                    let result = agree_on(harness, release);
                    *done[n].lock().unwrap_or_else(|p| p.into_inner()) = result;
                }
            });
        }
    });
    let mut report = Vec::new();
    let mut disagreements = Vec::new();
    for slot in done {
        if let Some((line, mut theirs)) = slot.into_inner().unwrap_or_else(|p| p.into_inner()) {
            report.push(line);
            disagreements.append(&mut theirs);
        }
    }
    eprintln!("agreement per harness:\n  {}", report.join("\n  "));
    assert!(
        disagreements.is_empty(),
        "{}",
        disagreements.join("\n---\n")
    );
}
