//! `tether inventory` as a user runs it: one fixture home for every harness
//! (planted secrets throughout) read by the binary with every scanner linked,
//! malformed and hostile files, snapshots in the SQLite store, a snapshot
//! attached to an attempt, and an end-to-end run on servers added by the real
//! `claude mcp add` and `codex mcp add`. Each scanner's row-by-row fixture
//! tests live in its own crate (`tests/config_scan.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tether_core::inventory::InventoryDocument;
use tether_sdk::scan_fixture::{ON, ScanFixture, off, row, state};
use tether_tests::{peer, samples_dir, workspace_bin};

/// Secrets planted in env values, args, headers, URL userinfo and queries.
const SECRETS: [&str; 10] = [
    "sekret-env-71b2c",
    "sekret-arg-0d9e4",
    "sekret-pw-5c6a1",
    "sekret-q-88f02",
    "sekret-hdr-13aa7",
    "sekret-codex-env-9e0",
    "sekret-token-var-b7",
    "sekret-oc-env-2291",
    "sekret-cursor-hdr-6c",
    "sekret-gem-hdr-90ab",
];

/// A fixture machine (`tether_sdk::scan_fixture`) that runs the binary.
struct Fixture(ScanFixture);

impl std::ops::Deref for Fixture {
    type Target = ScanFixture;

    fn deref(&self) -> &ScanFixture {
        &self.0
    }
}

fn write(path: &Path, text: &str) {
    ScanFixture::write(path, text);
}

impl Fixture {
    fn new() -> Self {
        Fixture(ScanFixture::new())
    }

    fn tether(&self, args: &[&str]) -> Output {
        self.tether_with(args, &[])
    }

    fn tether_with(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut cmd = Command::new(workspace_bin("tether"));
        cmd.arg("inventory")
            .args(args)
            .arg("--project")
            .arg(&self.project)
            .arg("--system-root")
            .arg(&self.system)
            .env_clear()
            .env("HOME", &self.home)
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin.display()))
            .env("MY_TOKEN", "sekret-token-var-b7")
            .envs(env.iter().map(|(k, v)| (*k, *v)))
            .current_dir(&self.project);
        let started = Instant::now();
        let out = cmd.output().expect("run tether inventory");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "inventory took too long"
        );
        out
    }

    fn json(&self, extra: &[&str]) -> (InventoryDocument, Output) {
        let mut args = vec!["--json"];
        args.extend_from_slice(extra);
        let out = self.tether(&args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(text.lines().count(), 1, "one JSON document: {text}");
        let doc: InventoryDocument = serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!(
                "not an inventory document ({e}): {text}\nstderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (doc, out)
    }
}

fn assert_no_secret(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for secret in SECRETS {
        assert!(!text.contains(secret), "{what} leaked {secret}: {text}");
    }
}

/// Every harness's documented shapes, with secrets planted everywhere a value can be.
fn full_fixture() -> Fixture {
    let f = Fixture::new();
    let project_key = f.project.to_string_lossy().into_owned();
    f.home(
        ".claude.json",
        &json!({
            "mcpServers": {"c-user": {"command": "fake-mcp", "args": ["--token", "sekret-arg-0d9e4"],
                                      "env": {"API_TOKEN": "sekret-env-71b2c"}}},
            "projects": {project_key: {"hasTrustDialogAccepted": true,
                "mcpServers": {"c-local": {"type": "http",
                "url": "https://me:sekret-pw-5c6a1@mcp.example.com/mcp?key=sekret-q-88f02",
                "headers": {"Authorization": "Bearer sekret-hdr-13aa7"}}}}}
        })
        .to_string(),
    );
    f.project(
        ".mcp.json",
        &json!({"mcpServers": {"p-approved": {"command": "fake-mcp"},
                               "p-pending": {"type": "sse", "url": "https://sse.example.com/sse"},
                               "p-rejected": {"command": "fake-mcp"}}})
        .to_string(),
    );
    f.project(
        ".claude/settings.local.json",
        &json!({"enabledMcpjsonServers": ["p-approved"], "disabledMcpjsonServers": ["p-rejected"]})
            .to_string(),
    );
    f.home(
        ".codex/config.toml",
        "[mcp_servers.x-on]\ncommand = \"fake-mcp\"\nenv = { DB_PASSWORD = \"sekret-codex-env-9e0\" }\n\
         [mcp_servers.x-http]\nurl = \"https://codex.example.com/mcp\"\nbearer_token_env_var = \"MY_TOKEN\"\n",
    );
    f.home(
        ".config/opencode/opencode.jsonc",
        "{\n  // JSONC\n  \"mcp\": {\"o-local\": {\"type\": \"local\", \"command\": [\"fake-mcp\"],\n    \"environment\": {\"OC_KEY\": \"sekret-oc-env-2291\"}},},\n}",
    );
    f.home(
        ".cursor/mcp.json",
        &json!({"mcpServers": {"cur-user": {"url": "https://cursor.example.com/mcp",
                                            "headers": {"X-Api-Key": "sekret-cursor-hdr-6c"}}}})
        .to_string(),
    );
    f.home(
        ".gemini/settings.json",
        &json!({"mcpServers": {"g-http": {"httpUrl": "https://gem.example.com/mcp",
                                          "headers": {"Authorization": "Bearer sekret-gem-hdr-90ab"}}}})
        .to_string(),
    );
    f
}

#[test]
fn the_cli_links_every_scanner_prints_one_document_and_leaks_no_secret() {
    let f = full_fixture();
    let (doc, out) = f.json(&[]);
    assert!(
        out.status.success(),
        "exit {:?}: {:?}",
        out.status,
        doc.errors
    );
    assert!(doc.errors.is_empty(), "{:#?}", doc.errors);
    assert_no_secret("inventory --json", &out.stdout);
    assert_no_secret("inventory --json stderr", &out.stderr);

    // Every scanner is linked into the binary and reads its files; each
    // scanner's own fixture test (in its crate) checks states and reasons row
    // by row.
    let mut per_harness: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &doc.rows {
        *per_harness.entry(r.harness.as_str()).or_default() += 1;
        assert_eq!(r.stages.configured.state.as_str(), "yes");
        assert_eq!(
            r.stages.configured.provenance.map(|p| p.word().to_string()),
            Some("current_config".to_owned())
        );
        assert_eq!(
            r.stages.configured.at, doc.taken_at,
            "stamped with the scan's time"
        );
        assert_eq!(
            r.stages.model_visible.state.as_str(),
            "unknown",
            "never claimed"
        );
        assert_eq!(r.stages.initialized.state.as_str(), "unknown", "no --test");
        if r.reason_code.is_some() {
            assert!(
                r.summary.is_some(),
                "a reason comes with a sentence: {r:#?}"
            );
        }
    }
    assert_eq!(
        per_harness,
        BTreeMap::from([
            ("claude", 5),
            ("codex", 2),
            // Copilot reads the workspace's .mcp.json too, but only in a
            // trusted folder: listed, and held back as untrusted_folder.
            ("copilot", 3),
            ("cursor", 1),
            ("gemini", 1),
            ("opencode", 1),
            // Qwen 0.24 reads the project's .mcp.json as well, in any folder:
            // each server waits for its approval in ~/.qwen/mcpApprovals.json.
            ("qwen", 3)
        ]),
        "{:#?}",
        doc.rows
    );
    assert_eq!(
        state(row(&doc, "claude", "project", "p-pending")),
        off("not_approved")
    );
    for name in ["p-approved", "p-pending", "p-rejected"] {
        assert_eq!(
            state(row(&doc, "qwen", "project", name)),
            off("not_approved"),
            "{name}"
        );
    }
    assert_eq!(state(row(&doc, "claude", "project", "p-approved")), ON);

    // --harness narrows; the table shows the same and leaks nothing either.
    let (only, _) = f.json(&["--harness", "codex", "--harness", "cursor"]);
    assert!(
        only.rows
            .iter()
            .all(|r| r.harness == "codex" || r.harness == "cursor")
    );
    assert_eq!(only.rows.len(), 3);
    let table = f.tether(&[]);
    assert!(table.status.success());
    assert_no_secret("inventory table", &table.stdout);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("not_approved") && text.contains("p-pending"),
        "{text}"
    );
    let bad = f.tether(&["--harness", "vscode"]);
    assert_eq!(
        bad.status.code(),
        Some(2),
        "unknown harness is a usage error"
    );

    std::fs::write(
        samples_dir().join("inventory.json"),
        serde_json::to_vec_pretty(&doc).expect("json"),
    )
    .expect("sample");
}

#[test]
fn malformed_huge_looping_escaping_and_special_files_become_errors_not_crashes() {
    let f = Fixture::new();
    f.home(".claude.json", "{\"mcpServers\": {\"a\": ");
    f.home(
        ".codex/config.toml",
        "[mcp_servers.x\ncommand = \"fake-mcp\"\n",
    );
    f.home(".cursor/mcp.json", &" ".repeat(1024 * 1024 + 10));
    // A symlink loop.
    std::fs::create_dir_all(f.home.join(".gemini")).expect("mkdir");
    let gemini = f.home.join(".gemini");
    std::os::unix::fs::symlink(gemini.join("loop-b"), gemini.join("settings.json")).expect("ln");
    std::os::unix::fs::symlink(gemini.join("settings.json"), gemini.join("loop-b")).expect("ln");
    // A symlink out of the home: never followed, so its server never appears.
    let outside = f.home.parent().expect("root").join("outside-opencode.json");
    write(
        &outside,
        r#"{"mcp": {"escaped": {"type": "local", "command": ["fake-mcp"]}}}"#,
    );
    std::fs::create_dir_all(f.home.join(".config/opencode")).expect("mkdir");
    std::os::unix::fs::symlink(&outside, f.home.join(".config/opencode/opencode.json"))
        .expect("ln");
    // A FIFO where .mcp.json should be: reading it would block forever.
    let fifo = f.project.join(".mcp.json");
    let status = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(status.success());
    // Wrong types: one bad entry, one good one in the same file.
    f.project(
        ".cursor/mcp.json",
        r#"{"mcpServers": {"bad": {"command": 5}, "good": {"command": "fake-mcp"}}}"#,
    );
    f.project(
        ".gemini/settings.json",
        r#"{"mcpServers": ["not", "an", "object"]}"#,
    );

    let (doc, out) = f.json(&[]);
    assert_eq!(out.status.code(), Some(1), "unusable files exit 1");
    let errors: BTreeMap<(&str, &str), &str> = doc
        .errors
        .iter()
        .map(|e| {
            (
                (e.harness.as_str(), e.source.as_str()),
                e.reason_code.as_str(),
            )
        })
        .collect();
    let want = [
        (("claude", "~/.claude.json"), "invalid_config"),
        (("codex", "~/.codex/config.toml"), "invalid_config"),
        (("cursor", "~/.cursor/mcp.json"), "file_too_large"),
        (("gemini", "~/.gemini/settings.json"), "symlink_loop"),
        (
            ("opencode", "~/.config/opencode/opencode.json"),
            "symlink_outside_root",
        ),
        (("claude", "$PROJECT/.mcp.json"), "invalid_config"),
        (("cursor", "$PROJECT/.cursor/mcp.json"), "invalid_config"),
        (
            ("gemini", "$PROJECT/.gemini/settings.json"),
            "invalid_config",
        ),
    ];
    for (key, reason) in want {
        assert_eq!(
            errors.get(&key).copied(),
            Some(reason),
            "{key:?} in {:#?}",
            doc.errors
        );
    }
    let bad_entry = doc
        .errors
        .iter()
        .find(|e| e.source == "$PROJECT/.cursor/mcp.json")
        .expect("cursor error");
    assert!(bad_entry.summary.contains("\"bad\""), "{bad_entry:?}");
    assert_eq!(
        row(&doc, "cursor", "project", "good")
            .stages
            .enabled
            .state
            .as_str(),
        "yes"
    );
    assert!(
        doc.rows.iter().all(|r| r.name != "escaped"),
        "symlink followed: {:#?}",
        doc.rows
    );
    for e in &doc.errors {
        assert!(e.summary.len() <= 256);
        assert!(
            !e.summary.contains(&*f.home.to_string_lossy()),
            "absolute path in {e:?}"
        );
    }
}

#[test]
fn snapshots_record_and_show_changes_without_secrets_at_rest() {
    let f = full_fixture();
    let db = f.home.parent().expect("root").join("tether.db");
    let db_arg = db.to_string_lossy().into_owned();
    let first = f.tether(&["--record", "--db", &db_arg]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    // Change the configuration: approve p-pending, drop cur-user, add a Codex server.
    f.project(
        ".claude/settings.local.json",
        r#"{"enabledMcpjsonServers": ["p-approved", "p-pending"], "disabledMcpjsonServers": ["p-rejected"]}"#,
    );
    f.home(".cursor/mcp.json", r#"{"mcpServers": {}}"#);
    let codex = std::fs::read_to_string(f.home.join(".codex/config.toml")).expect("read");
    f.home(
        ".codex/config.toml",
        &format!("{codex}\n[mcp_servers.x-new]\nurl = \"https://new.example.com/mcp\"\n"),
    );

    let out = f.tether(&["--record", "--changes", "--json", "--db", &db_arg]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let changes: Value = serde_json::from_slice(&out.stdout).expect("changes json");
    let names = |key: &str| -> Vec<String> {
        changes[key]
            .as_array()
            .expect(key)
            .iter()
            .map(|r| {
                format!(
                    "{}/{}",
                    r["harness"].as_str().unwrap_or(""),
                    r["name"].as_str().unwrap_or("")
                )
            })
            .collect()
    };
    assert_eq!(names("added"), ["codex/x-new"]);
    assert_eq!(names("removed"), ["cursor/cur-user"]);
    let changed = changes["changed"].as_array().expect("changed");
    assert_eq!(changed.len(), 1, "{changed:#?}");
    assert_eq!(changed[0]["name"], "p-pending");
    let fields: Vec<&str> = changed[0]["changes"]
        .as_array()
        .expect("fields")
        .iter()
        .filter_map(|c| c["field"].as_str())
        .collect();
    assert_eq!(fields, ["reason_code", "enabled"]);
    assert!(changes["from"]["id"].as_i64() < changes["to"]["id"].as_i64());
    std::fs::write(samples_dir().join("inventory-changes.json"), &out.stdout).expect("sample");

    // The human form, from the database alone.
    let text = f.tether(&["--changes", "--db", &db_arg]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("+ codex/user x-new") && text.contains("- cursor/user cur-user"),
        "{text}"
    );

    // No planted secret anywhere at rest (database, WAL, SHM).
    for suffix in ["", "-wal", "-shm"] {
        let path = PathBuf::from(format!("{db_arg}{suffix}"));
        if let Ok(bytes) = std::fs::read(&path) {
            assert_no_secret(&path.display().to_string(), &bytes);
        }
    }
}

#[test]
fn a_snapshot_attached_to_an_attempt_stays_with_that_attempt() {
    use std::sync::Arc;
    use tether_core::DriveMode;
    use tether_core::registry::Registry;
    use tether_core::store::Store;
    use tether_core::vocab::Trigger;
    use tether_hub::{AttemptRequest, Hub, HubConfig};
    use tether_store::SqliteStore;

    let f = full_fixture();
    let (doc, _) = f.json(&[]);
    let claude = doc.for_harness("claude");
    assert!(claude.rows.iter().all(|r| r.harness == "claude") && !claude.rows.is_empty());
    let db = f.home.parent().expect("root").join("hub.db");
    let request = |session: &str| {
        AttemptRequest::new(
            tether_core::Owner {
                task: "task".into(),
                session: session.into(),
                execution: "exec".into(),
            },
            "claude",
            DriveMode::Passthrough,
            Trigger::PassthroughStart,
            vec![],
        )
    };
    {
        let hub = Hub::with_store(
            Registry::empty(),
            HubConfig::default(),
            Arc::new(SqliteStore::open(&db).expect("open")),
        );
        let first = hub.begin_attempt(request("s")).expect("begin");
        // Over the bound: a clear error, nothing queued.
        let mut huge = doc.clone();
        while huge.rows.len() <= 256 {
            huge.rows.extend(doc.rows.iter().cloned());
        }
        assert_eq!(
            first.sink.attach_config_snapshot(&huge),
            Err(tether_hub::PublishError::TooLarge)
        );
        first.sink.attach_config_snapshot(&claude).expect("attach");
        hub.flush_blocking();
        let second = hub.begin_attempt(request("s")).expect("begin again");
        // The superseded attempt takes nothing more.
        assert!(first.sink.attach_config_snapshot(&doc).is_err());
        second
            .sink
            .attach_config_snapshot(&doc.for_harness("codex"))
            .expect("attach");
        hub.flush_blocking();
        hub.flush_store();
    }
    let loaded = SqliteStore::open(&db)
        .expect("reopen")
        .load_all()
        .expect("load");
    let history = &loaded.histories[0];
    assert_eq!(history.attempts.len(), 2);
    let kept = |i: usize| {
        history.attempts[i].config_snapshot.as_ref().map(|s| {
            s.rows
                .iter()
                .map(|r| r.harness.clone())
                .collect::<std::collections::BTreeSet<_>>()
        })
    };
    assert_eq!(kept(0), Some(["claude".to_owned()].into()));
    assert_eq!(kept(1), Some(["codex".to_owned()].into()));
    let p = history.attempts[0]
        .config_snapshot
        .as_ref()
        .and_then(|s| s.rows.iter().find(|r| r.name == "p-pending"))
        .expect("p-pending kept");
    assert_eq!(
        p.reason_code.as_ref().map(|r| r.as_str()),
        Some("not_approved")
    );
    assert_no_secret("hub database", &std::fs::read(&db).expect("db"));
    let json = serde_json::to_string(history).expect("json");
    assert_no_secret("stored history", json.as_bytes());
    std::fs::write(
        samples_dir().join("history-with-config-snapshot.json"),
        &json,
    )
    .expect("sample");
}

/// Servers added by the real CLIs' own `mcp add`, plus hand-written OpenCode,
/// Cursor and Gemini configs; `--test` reaches the real ones.
#[test]
fn real_claude_and_codex_mcp_add_then_inventory_with_test() {
    let (Some(claude), Some(codex), Some(everything), Some(memory)) = (
        peer("node_modules/.bin/claude"),
        peer("node_modules/.bin/codex"),
        peer("node_modules/.bin/mcp-server-everything"),
        peer("node_modules/.bin/mcp-server-memory"),
    ) else {
        return;
    };
    let f = Fixture::new();
    let node_dir = tether_tests::node_dir();
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        f.bin.display(),
        node_dir
            .as_deref()
            .unwrap_or(Path::new("/usr/bin"))
            .display()
    );
    let cli = |program: &Path, args: &[&str]| {
        let out = Command::new(program)
            .args(args)
            .env_clear()
            .env("HOME", &f.home)
            .env("PATH", &path)
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .current_dir(&f.project)
            .output()
            .expect("run the real CLI");
        assert!(
            out.status.success(),
            "{} {args:?}: {}{}",
            program.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let everything = everything.to_string_lossy().into_owned();
    let memory = memory.to_string_lossy().into_owned();
    let memory_file = f.home.join("memory.json").to_string_lossy().into_owned();
    cli(
        &claude,
        &[
            "mcp",
            "add",
            "-s",
            "user",
            "everything",
            "-e",
            "API_KEY=sekret-env-71b2c",
            "--",
            &everything,
            "stdio",
        ],
    );
    cli(
        &claude,
        &[
            "mcp",
            "add",
            "-s",
            "local",
            "--transport",
            "http",
            "nowhere",
            "http://me:sekret-pw-5c6a1@127.0.0.1:9/mcp?key=sekret-q-88f02",
            "-H",
            "Authorization: Bearer sekret-hdr-13aa7",
        ],
    );
    cli(
        &claude,
        &["mcp", "add", "-s", "project", "shared", "--", &memory],
    );
    cli(
        &codex,
        &[
            "mcp",
            "add",
            "memory",
            "--env",
            &format!("MEMORY_FILE_PATH={memory_file}"),
            "--env",
            "DB_PASSWORD=sekret-codex-env-9e0",
            "--",
            &memory,
        ],
    );
    f.home(
        ".config/opencode/opencode.json",
        &json!({"mcp": {"oc-everything": {"type": "local", "command": [everything, "stdio"]},
                        "oc-off": {"type": "local", "command": [memory], "enabled": false,
                                   "environment": {"OC_KEY": "sekret-oc-env-2291"}}}})
        .to_string(),
    );
    f.project(
        ".cursor/mcp.json",
        &json!({"mcpServers": {"cur-memory": {"command": memory,
        "env": {"MEMORY_FILE_PATH": memory_file}}}})
        .to_string(),
    );
    f.home(
        ".gemini/settings.json",
        &json!({"mcpServers": {"gem-remote": {"httpUrl": "http://127.0.0.1:9/mcp",
        "headers": {"Authorization": "Bearer sekret-gem-hdr-90ab"}}}})
        .to_string(),
    );
    // Gemini 0.61.0 disables every server in a folder nothing trusts.
    write(
        &f.home.join(".gemini/trustedFolders.json"),
        &json!({f.project.display().to_string(): "TRUST_FOLDER"}).to_string(),
    );

    let mut cmd = Command::new(workspace_bin("tether"));
    cmd.args([
        "inventory",
        "--json",
        "--test",
        "--timeout",
        "20",
        "--project",
    ])
    .arg(&f.project)
    .arg("--system-root")
    .arg(&f.system)
    .env_clear()
    .env("HOME", &f.home)
    .env("PATH", &path)
    .current_dir(&f.project);
    let started = Instant::now();
    let out = cmd.output().expect("tether inventory --test");
    let elapsed = started.elapsed();
    assert_no_secret("inventory --test stdout", &out.stdout);
    assert_no_secret("inventory --test stderr", &out.stderr);
    let doc: InventoryDocument = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(doc.errors.is_empty(), "{:#?}", doc.errors);
    assert_eq!(
        out.status.code(),
        Some(1),
        "two servers are unreachable on purpose"
    );
    assert!(elapsed < Duration::from_secs(90), "took {elapsed:?}");
    eprintln!(
        "inventory --test over {} rows took {elapsed:?}",
        doc.rows.len()
    );
    std::fs::write(samples_dir().join("inventory-tested.json"), &out.stdout).expect("sample");
    // Copilot lists the project's .mcp.json too, held back (and not tested)
    // because the folder is not one Copilot trusts.
    let servers: Vec<_> = doc
        .rows
        .iter()
        .filter(|r| r.kind == tether_core::vocab::CapabilityKind::McpServer)
        .collect();
    let copilot: Vec<_> = servers.iter().filter(|r| r.harness == "copilot").collect();
    // Qwen 0.24 reads the project's .mcp.json too: held back until approved.
    let qwen: Vec<_> = servers.iter().filter(|r| r.harness == "qwen").collect();
    let others: Vec<_> = servers
        .iter()
        .filter(|r| r.harness != "copilot" && r.harness != "qwen")
        .collect();
    assert_eq!(others.len(), 8, "every server once: {:#?}", doc.rows);
    assert!(!qwen.is_empty(), "{:#?}", doc.rows);
    for row in &qwen {
        assert_eq!(state(row), off("not_approved"), "{row:#?}");
        assert!(row.endpoint_test.is_none(), "held back, so not tested");
    }
    assert_eq!(copilot.len(), 1, "{copilot:#?}");
    assert_eq!(state(copilot[0]), off("untrusted_folder"), "{copilot:#?}");
    assert!(
        copilot[0].endpoint_test.is_none(),
        "held back, so not tested"
    );

    let reached = |h, s, n, tools: u32| {
        let r = row(&doc, h, s, n);
        assert_eq!(state(r), ON, "{r:#?}");
        let test = r
            .endpoint_test
            .as_ref()
            .unwrap_or_else(|| panic!("{n} tested: {r:#?}"));
        assert!(test.succeeded, "{n}: {test:#?}");
        assert_eq!(test.tool_count, Some(tools), "{n}");
        for stage in [
            &r.stages.initialized,
            &r.stages.tools_listed,
            &r.stages.authenticated,
        ] {
            assert_eq!(stage.state.as_str(), "yes");
            assert_eq!(
                stage.provenance.map(|p| p.word().to_string()),
                Some("endpoint_test".to_owned())
            );
        }
        assert_eq!(
            r.stages.model_visible.state.as_str(),
            "unknown",
            "a test never shows model visibility"
        );
    };
    reached("claude", "user", "everything", 13);
    // Each listed tool is a row of its own, linked both ways, listed by the
    // test, with its token estimate; never claimed visible to the model.
    let everything = row(&doc, "claude", "user", "everything");
    let tools: Vec<_> = doc
        .rows
        .iter()
        .filter(|r| {
            r.kind == tether_core::vocab::CapabilityKind::McpTool
                && r.harness == "claude"
                && r.name.starts_with("everything/")
        })
        .collect();
    assert_eq!(tools.len(), 13, "{tools:#?}");
    for tool in &tools {
        assert_eq!(tool.stages.tools_listed.state.as_str(), "yes");
        assert_eq!(tool.stages.model_visible.state.as_str(), "unknown");
        assert!(tool.tool_tokens.is_some_and(|t| t > 0), "{tool:#?}");
        assert!(everything.links.iter().any(|l| l.name == tool.name));
    }
    let summed: u64 = tools.iter().filter_map(|t| t.tool_tokens).sum();
    assert_eq!(
        Some(summed),
        everything.tool_tokens,
        "the server's tokens are its tools'"
    );
    reached("codex", "user", "memory", 9);
    reached("opencode", "user", "oc-everything", 13);
    reached("cursor", "project", "cur-memory", 9);

    // Unreachable: the test says so, precisely; initialize did not happen.
    for (h, s, n) in [
        ("claude", "local", "nowhere"),
        ("gemini", "user", "gem-remote"),
    ] {
        let r = row(&doc, h, s, n);
        assert_eq!(r.stages.enabled.state.as_str(), "yes");
        let test = r.endpoint_test.as_ref().expect("tested");
        assert_eq!(
            test.reason_code.as_ref().map(|c| c.as_str()),
            Some("connection_refused"),
            "{r:#?}"
        );
        assert_eq!(r.stages.initialized.state.as_str(), "no");
        assert_eq!(r.target, "http://127.0.0.1:9");
    }
    // Held back by configuration: never tested.
    let shared = row(&doc, "claude", "project", "shared");
    assert_eq!(state(shared), off("not_approved"));
    assert!(shared.endpoint_test.is_none());
    let oc_off = row(&doc, "opencode", "user", "oc-off");
    assert_eq!(state(oc_off), off("disabled_in_config"));
    assert!(oc_off.endpoint_test.is_none());
    assert!(
        row(&doc, "claude", "user", "everything")
            .diagnostics
            .env
            .iter()
            .any(|e| e.name == "API_KEY"),
        "env names kept"
    );
}

mod planted_secrets {
    use super::*;
    use proptest::prelude::*;
    use tether_inventory::{ScanContext, scan_all, scanners};

    fn secret() -> impl Strategy<Value = String> {
        "[A-Za-z0-9]{12,32}".prop_filter("mixed", |s| {
            s.bytes().any(|b| b.is_ascii_digit()) && s.bytes().any(|b| b.is_ascii_alphabetic())
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// GIVEN secrets planted in env values, args, header values, URL
        /// userinfo, paths and queries, cwd and command directories of every
        /// harness's files, and inside a file that does not parse, THEN no
        /// secret is anywhere in the inventory document.
        #[test]
        fn no_planted_secret_reaches_the_document(s in secret(), t in secret(), u in secret()) {
            let f = Fixture::new();
            let url = format!("https://user:{s}@h.example.com/{t}/mcp?key={u}");
            let stdio = json!({"command": format!("/opt/{s}/bin/server"), "args": ["--token", t],
                               "env": {"API_KEY": u}, "cwd": format!("/srv/{t}")});
            let remote = json!({"type": "http", "url": url, "headers": {"Authorization": format!("Bearer {s}")}});
            let servers = json!({"a": stdio, "b": remote});
            f.home(".claude.json", &json!({"mcpServers": servers}).to_string());
            f.project(".mcp.json", &json!({"mcpServers": servers}).to_string());
            f.home(".cursor/mcp.json", &json!({"mcpServers": servers}).to_string());
            f.home(".gemini/settings.json", &json!({"mcpServers": {"a": stdio, "g": {"httpUrl": url, "headers": {"X-Key": t}}}}).to_string());
            f.home(".codex/config.toml", &format!(
                "[mcp_servers.a]\ncommand = \"/opt/{s}/x\"\nargs = [\"{t}\"]\nenv = {{ K = \"{u}\" }}\n\
                 [mcp_servers.b]\nurl = \"{url}\"\nhttp_headers = {{ \"X-Key\" = \"{s}\" }}\n\
                 [hooks.state.\"/opt/{s}/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:{t}\"\n"));
            // Hooks and skills: command lines, trust state, skill text.
            f.home(".codex/hooks.json", &json!({"hooks": {"Stop": [{"hooks": [
                {"type": "command", "command": format!("/opt/{s}/hook --token {t} KEY={u}")},
                {"type": "command", "command": format!("TOKEN={u} ./{s}/run.sh {t}")}]}]}}).to_string());
            f.home(".codex/skills/helper/SKILL.md", &format!("---\nname: helper\ndescription: uses {s}\n---\n{t} {u}\n"));
            f.home(".agents/skills/nofm/SKILL.md", &format!("no front matter {t}\n"));
            // Claude's settings `env` block: the tool search's switches
            // (kept as their meaning only), planted.
            f.home(".claude/settings.json", &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": format!("${{PLUGIN_DIR}}/{s}/x --key {t} {u}")}]}]},
                "env": {"ANTHROPIC_BASE_URL": url, "ENABLE_TOOL_SEARCH": t, "CLAUDE_CODE_USE_VERTEX": u}}).to_string());
            f.home(".config/opencode/opencode.json", &json!({"mcp": {
                "a": {"type": "local", "command": [format!("/opt/{s}/x"), t], "environment": {"K": u},
                      "cwd": format!("/srv/{t}")},
                "b": {"type": "remote", "url": url, "headers": {"X-Key": s}}}}).to_string());
            // A file that does not parse, with secrets right at the error.
            f.project(".cursor/mcp.json", &format!("{{\"mcpServers\": {{\"x\": {{\"env\": {{\"K\": \"{s}\" {t} {u}"));
            f.project(".codex/config.toml", &format!("[mcp_servers.x]\ncommand = {s} {t}\n"));
            let vars = BTreeMap::from([
                ("PATH".to_owned(), std::ffi::OsString::from("/usr/bin:/bin")),
                ("ANTHROPIC_BASE_URL".to_owned(), std::ffi::OsString::from(&url)),
                ("ENABLE_TOOL_SEARCH".to_owned(), std::ffi::OsString::from(&s)),
            ]);
            let ctx = ScanContext::new(f.home.clone(), Some(f.project.clone()), f.system.clone(), vars);
            let doc = scan_all(&ctx, &scanners(), &[]);
            prop_assert!(doc.rows.len() >= 12, "{:#?}", doc.rows);
            prop_assert!(doc.errors.len() >= 2, "{:#?}", doc.errors);
            let text = serde_json::to_string(&doc).expect("json");
            for planted in [&s, &t, &u] {
                prop_assert!(!text.contains(planted.as_str()), "{planted} leaked: {text}");
            }
        }
    }
}

/// GIVEN servers whose own configuration uses variables that are not set
/// (`${GITHUB_TOKEN}` in a header, `${MY_KEY}` in env, Codex's
/// `bearer_token_env_var`) WHEN `tether inventory` reads them THEN each
/// row says `unresolved_variable`, naming the variables (names only), a
/// default or a set variable is no such thing, and `--test` reports that
/// cause instead of testing into the network error it leads to; the
/// pinned and newest `claude mcp list` name the same variables.
#[test]
fn unset_variables_in_a_servers_configuration_are_the_cause_said() {
    let f = Fixture::new();
    write(
        &f.home.join(".claude.json"),
        &json!({"mcpServers": {
            "gh": {"type": "http", "url": "https://api.example.invalid/mcp",
                   "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}},
            "keyed": {"command": "/bin/true", "env": {"API_KEY": "${MY_KEY}"}},
            "defaulted": {"command": "/bin/true", "args": ["${LEVEL:-info}", "${HOME}"]}
        }})
        .to_string(),
    );
    write(
        &f.home.join(".codex/config.toml"),
        "[mcp_servers.remote]\nurl = \"https://api.example.invalid/mcp\"\nbearer_token_env_var = \"REMOTE_TOKEN\"\n",
    );
    for extra in [&[][..], &["--test"][..]] {
        let mut args = vec!["--harness", "claude", "--harness", "codex"];
        args.extend_from_slice(extra);
        let (doc, _) = f.json(&args);
        let row = |name: &str| {
            doc.rows
                .iter()
                .find(|r| r.name == name)
                .unwrap_or_else(|| panic!("{name}: {:#?}", doc.rows))
        };
        for (name, var) in [
            ("gh", "GITHUB_TOKEN"),
            ("keyed", "MY_KEY"),
            ("remote", "REMOTE_TOKEN"),
        ] {
            let r = row(name);
            assert_eq!(
                r.reason_code,
                Some(tether_core::vocab::ReasonCode::UnresolvedVariable),
                "{extra:?} {name}: {r:#?}"
            );
            assert_eq!(
                r.summary.as_deref(),
                Some(&*format!("not set here: {var}")),
                "{name}"
            );
            assert!(
                r.endpoint_test.is_none(),
                "{extra:?} {name}: not tested into its symptom"
            );
        }
        assert_ne!(
            row("defaulted").reason_code,
            Some(tether_core::vocab::ReasonCode::UnresolvedVariable),
            "a default and a set variable resolve"
        );
    }
    for release in tether_tests::Release::BOTH {
        let Some(claude) = release.peer("node_modules/.bin/claude") else {
            continue;
        };
        let out = Command::new(&claude)
            .args(["mcp", "list"])
            .env_clear()
            .env("HOME", &f.home)
            .env("PATH", release.path())
            .env("DISABLE_AUTOUPDATER", "1")
            .current_dir(&f.project)
            .output()
            .expect("claude mcp list");
        let said = String::from_utf8_lossy(&out.stdout);
        for (name, var) in [("gh", "GITHUB_TOKEN"), ("keyed", "MY_KEY")] {
            assert!(
                said.contains(&format!(
                    "[{name}] mcpServers.{name}: Missing environment variables: {var}"
                )),
                "{}: claude mcp list agrees: {said}",
                release.label()
            );
        }
        assert!(!said.contains("[defaulted]"), "{said}");
    }
}

/// GIVEN a user-level Gemini server and a folder nothing trusts WHEN
/// `tether inventory` and the real `gemini mcp list` read the same home
/// THEN both say it is disabled because the folder is untrusted; with
/// `GEMINI_CLI_TRUST_WORKSPACE=true`, both say it is not.
#[test]
fn gemini_folder_trust_agrees_with_gemini_mcp_list() {
    let Some(gemini) = peer("node_modules/.bin/gemini") else {
        return;
    };
    let f = Fixture::new();
    write(
        &f.home.join(".gemini/settings.json"),
        &json!({"mcpServers": {"u": {"command": "/bin/true"}}}).to_string(),
    );
    let node_dir = tether_tests::node_dir();
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        f.bin.display(),
        node_dir
            .as_deref()
            .unwrap_or(Path::new("/usr/bin"))
            .display()
    );
    for trust in [None, Some("true")] {
        let mut cmd = Command::new(&gemini);
        cmd.args(["mcp", "list"])
            .env_clear()
            .env("HOME", &f.home)
            .env("PATH", &path)
            .current_dir(&f.project);
        let mut inventory = Command::new(workspace_bin("tether"));
        inventory
            .args(["inventory", "--json", "--harness", "gemini", "--project"])
            .arg(&f.project)
            .env_clear()
            .env("HOME", &f.home)
            .env("PATH", &path);
        if let Some(value) = trust {
            cmd.env("GEMINI_CLI_TRUST_WORKSPACE", value);
            inventory.env("GEMINI_CLI_TRUST_WORKSPACE", value);
        }
        let said = cmd.output().expect("gemini mcp list");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&said.stdout),
            String::from_utf8_lossy(&said.stderr)
        );
        let doc: InventoryDocument =
            serde_json::from_slice(&inventory.output().expect("tether").stdout).expect("json");
        let row = doc.rows.iter().find(|r| r.name == "u").expect("row u");
        let untrusted = said.contains("disabled because this folder is untrusted");
        assert_eq!(untrusted, trust.is_none(), "gemini mcp list: {said}");
        assert_eq!(
            row.reason_code == Some(tether_core::vocab::ReasonCode::UntrustedFolder),
            untrusted,
            "tether agrees with gemini ({trust:?}): {row:#?}\n{said}"
        );
        assert_eq!(row.is_enabled(), !untrusted);
    }
}
