//! The architecture invariants a machine can check (see ARCHITECTURE.md):
//! - dependencies point one way: core ← kits (sdk, inventory) ← plugins ←
//!   host machinery ← cli and examples;
//! - no plugin depends on another plugin;
//! - tether-core talks to nothing: no files, no environment, no processes,
//!   no sockets.
//!
//! The dependency graph is read from `cargo metadata` (the data `cargo tree`
//! prints), normal and build dependencies only: dev-dependencies never ship.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Layer {
    Core,
    Kit,
    Plugin,
    Machinery,
    Binary,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("workspace root")
}

/// Each workspace package's layer, and its normal and build dependencies on
/// other workspace packages.
fn graph() -> BTreeMap<String, (Layer, BTreeSet<String>)> {
    let root = workspace();
    let out = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(&root)
        .output()
        .expect("cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("metadata json");
    let packages = meta["packages"].as_array().expect("packages");
    let names: BTreeSet<String> = packages
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect();
    let mut graph = BTreeMap::new();
    for p in packages {
        let name = p["name"].as_str().expect("name").to_owned();
        let manifest = PathBuf::from(p["manifest_path"].as_str().expect("manifest"));
        let dir = manifest
            .parent()
            .expect("package dir")
            .strip_prefix(&root)
            .expect("inside the workspace")
            .to_path_buf();
        let top = dir
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .unwrap_or("")
            .to_owned();
        let layer = match top.as_str() {
            "core" => Layer::Core,
            "sdk" | "inventory" | "catalog" => Layer::Kit,
            "plugins" => Layer::Plugin,
            "cli" | "examples" | "tests" => Layer::Binary,
            _ => Layer::Machinery,
        };
        let deps = p["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .filter(|d| d["kind"].is_null() || d["kind"] == "build")
            .filter_map(|d| d["name"].as_str())
            .filter(|d| names.contains(*d))
            .map(str::to_owned)
            .collect();
        graph.insert(name, (layer, deps));
    }
    graph
}

#[test]
fn dependencies_point_one_way_and_no_plugin_depends_on_a_plugin() {
    let graph = graph();
    assert!(
        graph.len() >= 15,
        "the workspace was not read: {:?}",
        graph.keys()
    );
    let mut wrong = Vec::new();
    for (name, (layer, deps)) in &graph {
        for dep in deps {
            let (dep_layer, _) = &graph[dep];
            let allowed = match layer {
                Layer::Core => false,
                Layer::Kit => *dep_layer <= Layer::Kit,
                // A plugin sees the contract and the kits, never a sibling.
                Layer::Plugin => *dep_layer < Layer::Plugin,
                Layer::Machinery => *dep_layer <= Layer::Machinery,
                Layer::Binary => true,
            };
            if !allowed {
                wrong.push(format!("{name} ({layer:?}) → {dep} ({dep_layer:?})"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "dependencies against the grain: {wrong:#?}"
    );
    // The MCP client transports stand alone, so an agent can use them cheaply.
    assert!(graph["tether-mcp-client"].1.is_empty());
    // Spot-check the layering itself, so a misread layout cannot pass.
    assert_eq!(graph["tether-core"].0, Layer::Core);
    assert_eq!(graph["tether-kandev-endpoint"].0, Layer::Plugin);
    assert_eq!(graph["tether-probe"].0, Layer::Machinery);
    assert!(graph["tether-probe"].1.contains("tether-acp-structured"));
}

#[test]
fn core_does_no_io() {
    let src = workspace().join("core").join("src");
    let forbidden = [
        "std::fs",
        "std::env",
        "std::process",
        "std::net",
        "tokio::fs",
        "tokio::process",
        "tokio::net",
        "File::",
        "rusqlite",
    ];
    let mut found = Vec::new();
    let mut files = 0;
    for entry in std::fs::read_dir(&src).expect("core/src") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(&path).expect("read");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for word in forbidden {
                if code.contains(word) {
                    found.push(format!("{}:{}: {word}", path.display(), n + 1));
                }
            }
        }
    }
    assert!(files >= 10, "core/src was not read");
    assert!(found.is_empty(), "I/O in tether-core: {found:#?}");
    let manifest = std::fs::read_to_string(workspace().join("core").join("Cargo.toml"))
        .expect("core manifest");
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .unwrap_or("");
    for crate_name in [
        "rusqlite",
        "rmcp",
        "agent-client-protocol",
        "reqwest",
        "axum",
    ] {
        assert!(
            !deps.contains(crate_name),
            "tether-core depends on {crate_name}"
        );
    }
}

/// The modules of tether-core that each core module names (`crate::x`),
/// outside comments and test modules.
fn core_module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = workspace().join("core").join("src");
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(&src).expect("core/src") {
        let path = entry.expect("entry").path();
        let Some(module) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if module == "lib" || path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let mut uses = BTreeSet::new();
        for line in code.lines() {
            let line = line.split("//").next().unwrap_or("");
            for part in line.split("crate::").skip(1) {
                let name: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != module && src.join(format!("{name}.rs")).exists() {
                    uses.insert(name);
                }
            }
        }
        graph.insert(module.to_owned(), uses);
    }
    graph
}

#[test]
fn core_modules_import_each_other_without_a_cycle() {
    let graph = core_module_graph();
    assert!(graph.len() >= 15, "core/src was not read: {graph:?}");
    assert!(
        graph["hub"].contains("reducer"),
        "the reading works: {graph:?}"
    );
    // Depth-first search for a back edge.
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) {
        if done.contains(node) {
            return;
        }
        if let Some(at) = path.iter().position(|n| n == node) {
            panic!("an import circle in tether-core: {:?}", &path[at..]);
        }
        path.push(node.to_owned());
        for next in &graph[node] {
            visit(next, graph, path, done);
        }
        path.pop();
        done.insert(node.to_owned());
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        visit(node, &graph, &mut Vec::new(), &mut done);
    }
}
