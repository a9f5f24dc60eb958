//! How long `tether inventory` takes to read a large configuration: five
//! harnesses, user and project scopes, 50 servers per file (500 rows), with
//! secrets in every entry so the row builder's scrubbing is paid in full.

use std::collections::BTreeMap;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use tether_inventory::{ScanContext, scan_all, scanners};
use tether_passthrough_claude as _;
use tether_passthrough_codex as _;
use tether_passthrough_copilot as _;
use tether_passthrough_cursor as _;
use tether_passthrough_gemini as _;
use tether_passthrough_opencode as _;

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
    assert_eq!(
        doc.rows.len(),
        10 * PER_FILE,
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
    c.bench_function("inventory/scan_all_500_rows", |b| {
        b.iter(|| scan_all(&ctx, &all, &[]))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
