//! How long `tether inventory` takes to read a large configuration: five
//! harnesses, user and project scopes, 50 servers per file (600 rows: Copilot reads the project's `.mcp.json` too, Qwen Code its settings), with
//! secrets in every entry so the row builder's scrubbing is paid in full;
//! and a Claude home of 50 installed plugins, 200 skills and 200 hooks (each
//! hook command checked: variables, resolution), the capability goal's shape.

use std::collections::BTreeMap;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use tether_first_party as _;
use tether_inventory::{ScanContext, scan_all, scanners};

const PER_FILE: usize = 50;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn servers(prefix: &str) -> Value {
    let mut map = Map::new();
    for i in 0..PER_FILE {
        let entry = if i % 2 == 0 {
            json!({"command": "node", "args": ["server.js", "--token", format!("tok-{prefix}-{i}-9f8e7d")],
                   "env": {"API_KEY": format!("key-{prefix}-{i}-1a2b3c"), "LOG_LEVEL": "info"}})
        } else {
            json!({"type": "http", "url": format!("https://u:pw{i}x@h{i}.example.com/mcp?k=q{i}zz"),
                   "headers": {"Authorization": format!("Bearer b-{prefix}-{i}-77aa")}})
        };
        map.insert(format!("{prefix}-{i}"), entry);
    }
    Value::Object(map)
}

fn fixture(root: &Path) -> ScanContext {
    let home = root.join("home");
    let project = root.join("proj");
    let mcp = |p: &str| json!({"mcpServers": servers(p)}).to_string();
    write(
        &home.join(".claude.json"),
        &json!({"mcpServers": servers("cu")}).to_string(),
    );
    write(&project.join(".mcp.json"), &mcp("cp"));
    write(&home.join(".cursor/mcp.json"), &mcp("ku"));
    write(&project.join(".cursor/mcp.json"), &mcp("kp"));
    write(&home.join(".gemini/settings.json"), &mcp("gu"));
    write(&project.join(".gemini/settings.json"), &mcp("gp"));
    let mut toml = String::new();
    for i in 0..PER_FILE {
        toml.push_str(&format!(
            "[mcp_servers.x{i}]\ncommand = \"node\"\nargs = [\"s.js\"]\nenv = {{ TOKEN = \"t{i}-abcdef\" }}\nenabled_tools = [\"a\", \"b\"]\n\n"
        ));
    }
    write(&home.join(".codex/config.toml"), &toml);
    write(&project.join(".codex/config.toml"), &toml);
    let mut oc = Map::new();
    for i in 0..PER_FILE {
        oc.insert(
            format!("o{i}"),
            json!({"type": "local", "command": ["node", "s.js"], "environment": {"K": format!("v{i}-secret")}}),
        );
    }
    write(
        &home.join(".config/opencode/opencode.json"),
        &json!({"mcp": oc}).to_string(),
    );
    write(
        &project.join("opencode.json"),
        &json!({"mcp": oc}).to_string(),
    );
    let vars = BTreeMap::from([("PATH".to_owned(), std::ffi::OsString::from("/usr/bin:/bin"))]);
    ScanContext::new(home, Some(project), root.join("sys"), vars)
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = fixture(dir.path());
    let all = scanners();
    let doc = scan_all(&ctx, &all, &[]);
    let mut per: BTreeMap<String, usize> = BTreeMap::new();
    for r in &doc.rows {
        *per.entry(format!("{}/{}", r.harness, r.scope)).or_default() += 1;
    }
    // Ten files; Copilot reads the project's `.mcp.json` too (as Claude
    // does), and Qwen Code the project's `.gemini`-shaped settings.
    assert_eq!(
        doc.rows.len(),
        12 * PER_FILE,
        "rows: {per:?} {:?}",
        doc.errors
    );
    assert!(doc.errors.is_empty(), "{:?}", doc.errors);
    let json = serde_json::to_string(&doc).expect("json");
    eprintln!(
        "inventory of {} rows: JSON document {} KiB",
        doc.rows.len(),
        json.len() / 1024
    );
    c.bench_function("inventory/scan_all_600_rows", |b| {
        b.iter(|| scan_all(&ctx, &all, &[]))
    });
}

/// A Claude home with 50 installed plugins (each with 2 skills and 2 hooks),
/// 100 user skills and 100 settings hooks: 50 plugins, 200 skills, 200 hooks.
fn capability_home(root: &Path) -> ScanContext {
    let home = root.join("home");
    let project = root.join("proj");
    let mut installed = Map::new();
    let mut enabled = Map::new();
    for p in 0..50 {
        let name = format!("kit{p}");
        let dir = home.join(format!(".claude/plugins/cache/mkt/{name}/1.0.0"));
        write(
            &dir.join(".claude-plugin/plugin.json"),
            &json!({"name": name, "version": "1.0.0"}).to_string(),
        );
        for s in 0..2 {
            write(
                &dir.join(format!("skills/s{s}/SKILL.md")),
                "---\nname: s\n---\n",
            );
        }
        write(
            &dir.join("hooks/hooks.json"),
            &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/a.sh --token t0k3n"},
                {"type": "command", "command": "sh -c true"}]}]}})
            .to_string(),
        );
        installed.insert(
            format!("{name}@mkt"),
            json!([{"scope": "user", "installPath": dir.display().to_string()}]),
        );
        enabled.insert(format!("{name}@mkt"), json!(true));
    }
    for s in 0..100 {
        write(
            &home.join(format!(".claude/skills/u{s}/SKILL.md")),
            "---\nname: u\n---\n",
        );
    }
    let hooks: Vec<Value> = (0..100)
        .map(|i| json!({"type": "command", "command": format!("$HOME/bin/h{i} --secret s{i}")}))
        .collect();
    write(
        &home.join(".claude/settings.json"),
        &json!({"enabledPlugins": enabled, "hooks": {"PostToolUse": [{"hooks": hooks}]}})
            .to_string(),
    );
    write(
        &home.join(".claude/plugins/installed_plugins.json"),
        &json!({"version": 2, "plugins": installed}).to_string(),
    );
    let vars = BTreeMap::from([
        ("PATH".to_owned(), std::ffi::OsString::from("/usr/bin:/bin")),
        ("HOME".to_owned(), home.clone().into_os_string()),
    ]);
    ScanContext::new(home, Some(project), root.join("sys"), vars)
}

fn bench_capabilities(c: &mut Criterion) {
    use tether_core::vocab::CapabilityKind;
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = capability_home(dir.path());
    let all = scanners();
    let only = ["claude".to_owned()];
    let doc = scan_all(&ctx, &all, &only);
    let count = |k: CapabilityKind| doc.rows.iter().filter(|r| r.kind == k).count();
    assert_eq!(
        (
            count(CapabilityKind::Plugin),
            count(CapabilityKind::Skill),
            count(CapabilityKind::Hook)
        ),
        (50, 200, 200),
        "{:?}",
        doc.errors
    );
    c.bench_function(
        "inventory/scan_claude_50_plugins_200_skills_200_hooks",
        |b| b.iter(|| scan_all(&ctx, &all, &only)),
    );
}

/// A Codex home as `codex plugin add` leaves it: 50 plugins (2 skills and 2
/// hooks each), 100 user skills (each SKILL.md read for its front matter),
/// 100 user hooks with their trust state.
fn codex_capability_home(root: &Path) -> ScanContext {
    let home = root.join("home");
    let codex = home.join(".codex");
    let mut config = String::new();
    for p in 0..50 {
        let name = format!("kit{p}");
        let dir = codex.join(format!("plugins/cache/mkt/{name}/1.0.0"));
        write(
            &dir.join(".codex-plugin/plugin.json"),
            &json!({"name": name, "version": "1.0.0"}).to_string(),
        );
        for s in 0..2 {
            write(
                &dir.join(format!("skills/s{s}/SKILL.md")),
                "---\nname: s\ndescription: d\n---\n",
            );
        }
        write(
            &dir.join("hooks/hooks.json"),
            &json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "${PLUGIN_ROOT}/a.sh --token t0k3n"},
                {"type": "command", "command": "sh -c true"}]}]}})
            .to_string(),
        );
        config.push_str(&format!("[plugins.\"{name}@mkt\"]\nenabled = true\n"));
    }
    for s in 0..100 {
        write(
            &codex.join(format!("skills/u{s}/SKILL.md")),
            &format!("---\nname: u{s}\ndescription: d\n---\nbody\n"),
        );
    }
    let hooks: Vec<Value> = (0..100)
        .map(|i| json!({"type": "command", "command": format!("$HOME/bin/h{i} --secret s{i}")}))
        .collect();
    write(
        &codex.join("hooks.json"),
        &json!({"hooks": {"PostToolUse": [{"hooks": hooks}]}}).to_string(),
    );
    for i in 0..100 {
        config.push_str(&format!(
            "[hooks.state.\"{}:post_tool_use:0:{i}\"]\ntrusted_hash = \"sha256:00\"\n",
            codex.join("hooks.json").display()
        ));
    }
    write(&codex.join("config.toml"), &config);
    let vars = BTreeMap::from([
        ("PATH".to_owned(), std::ffi::OsString::from("/usr/bin:/bin")),
        ("HOME".to_owned(), home.clone().into_os_string()),
    ]);
    ScanContext::new(home, Some(root.join("proj")), root.join("sys"), vars)
}

fn bench_codex_capabilities(c: &mut Criterion) {
    use tether_core::vocab::CapabilityKind;
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = codex_capability_home(dir.path());
    let all = scanners();
    let only = ["codex".to_owned()];
    let doc = scan_all(&ctx, &all, &only);
    let count = |k: CapabilityKind| doc.rows.iter().filter(|r| r.kind == k).count();
    assert_eq!(
        (
            count(CapabilityKind::Plugin),
            count(CapabilityKind::Skill),
            count(CapabilityKind::Hook)
        ),
        (50, 200, 200),
        "{:?}",
        doc.errors
    );
    c.bench_function(
        "inventory/scan_codex_50_plugins_200_skills_200_hooks",
        |b| b.iter(|| scan_all(&ctx, &all, &only)),
    );
}

criterion_group!(benches, bench, bench_capabilities, bench_codex_capabilities);
criterion_main!(benches);
