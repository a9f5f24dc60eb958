//! The architecture invariants a machine can check (see ARCHITECTURE.md):
//! - every crate declares its layer in `[package.metadata.tether]`, and
//!   dependencies point one way: core ← kits (sdk, inventory, catalog) ←
//!   plugins ← host machinery ← glue (cli, examples, tests); an edge against
//!   the grain is declared in `[package.metadata.tether.also]` with why;
//! - no plugin depends on another plugin (but by such a declaration);
//! - tether-core talks to nothing: no files, no environment, no processes,
//!   no sockets, no threads, no sleeping, no clock;
//! - every listener goes through tether-guard, and Tether's own bind loopback;
//! - ARCHITECTURE.md's code map names every crate and only paths that exist,
//!   and each crate's doc lists its public modules;
//! - no module's children import each other in a circle;
//! - a plugin returns data: it writes no file and starts no process;
//! - the inventory kit speaks no MCP.
//!
//! The dependency graph is read from `cargo metadata` (the data `cargo tree`
//! prints), normal and build dependencies only: dev-dependencies never ship.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;
// Links the first-party plugins, so the registry and the scanners know them.
use tether_tests as _;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Layer {
    Core,
    Kit,
    Plugin,
    Machinery,
    Glue,
}

impl Layer {
    fn parse(word: &str) -> Option<Layer> {
        Some(match word {
            "core" => Layer::Core,
            "kit" => Layer::Kit,
            "plugin" => Layer::Plugin,
            "machinery" => Layer::Machinery,
            "glue" => Layer::Glue,
            _ => return None,
        })
    }
}

/// One workspace package as its manifest declares it.
#[derive(Debug)]
struct Package {
    /// `[package.metadata.tether] layer`.
    layer: Layer,
    /// Normal and build dependencies on other workspace packages.
    deps: BTreeSet<String>,
    /// `[package.metadata.tether.also]`: edges against the grain the
    /// package declares, each with why.
    also: BTreeMap<String, String>,
    /// The package's folder, relative to the workspace.
    dir: PathBuf,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("workspace root")
}

/// Every workspace package, its declared layer and exceptions, and its
/// dependencies on other workspace packages.
fn graph() -> BTreeMap<String, Package> {
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
        let declared = &p["metadata"]["tether"];
        let layer = declared["layer"]
            .as_str()
            .and_then(Layer::parse)
            .unwrap_or_else(|| {
                panic!(
                    "{name} declares no layer: add [package.metadata.tether] layer = \
                     \"core\" | \"kit\" | \"plugin\" | \"machinery\" | \"glue\""
                )
            });
        let also = declared["also"]
            .as_object()
            .map(|o| {
                o.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_owned()))
                    .collect()
            })
            .unwrap_or_default();
        let deps = p["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .filter(|d| d["kind"].is_null() || d["kind"] == "build")
            .filter_map(|d| d["name"].as_str())
            .filter(|d| names.contains(*d))
            .map(str::to_owned)
            .collect();
        graph.insert(
            name,
            Package {
                layer,
                deps,
                also,
                dir,
            },
        );
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
    for (name, package) in &graph {
        for dep in &package.deps {
            let dep_layer = graph[dep].layer;
            let allowed = match package.layer {
                Layer::Core => false,
                Layer::Kit => dep_layer <= Layer::Kit,
                // A plugin sees the contract and the kits, never a sibling.
                Layer::Plugin => dep_layer < Layer::Plugin,
                Layer::Machinery => dep_layer <= Layer::Machinery,
                Layer::Glue => true,
            };
            let declared = package.also.get(dep).is_some_and(|why| why.len() >= 20);
            if !allowed && !declared {
                wrong.push(format!(
                    "{name} ({:?}) → {dep} ({dep_layer:?})",
                    package.layer
                ));
            }
        }
        // A declared exception is a real edge, never glue, and says why.
        for (dep, why) in &package.also {
            if !package.deps.contains(dep) || why.len() < 20 {
                wrong.push(format!("{name} declares `also.{dep}` but {why:?} is stale"));
            }
            if graph.get(dep).is_none_or(|d| d.layer == Layer::Glue) {
                wrong.push(format!("{name}: `also.{dep}` names no library"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "dependencies against the grain: {wrong:#?}"
    );
    // The contract depends on no Tether crate; the MCP client transports
    // stand alone, so an agent can use them cheaply.
    assert!(graph["tether-core"].deps.is_empty());
    assert!(graph["tether-mcp-client"].deps.is_empty());
    // Every folder under plugins/ holds a plugin; the folder does not decide
    // the layer, the manifest does.
    for (name, package) in &graph {
        if package.dir.starts_with("plugins") {
            assert_eq!(package.layer, Layer::Plugin, "{name}");
        }
    }
    // Spot-check the reading itself, so a misread manifest cannot pass.
    assert_eq!(graph["tether-core"].layer, Layer::Core);
    assert_eq!(graph["tether-hub"].layer, Layer::Machinery);
    assert_eq!(graph["tether-gemini-plugin"].layer, Layer::Plugin);
    assert!(graph["tether-probe"].deps.contains("tether-acp-structured"));
    assert!(
        graph["tether-acp-structured"]
            .also
            .contains_key("tether-hub")
    );
}

/// Every crate that listens goes through tether-guard, and only tether-guard
/// draws listener secrets, compares them or parses bearer headers.
#[test]
fn one_guard_for_every_listener() {
    let graph = graph();
    let root = workspace();
    let mut listeners = BTreeSet::new();
    let mut wrong = Vec::new();
    for (name, package) in &graph {
        let src = root.join(&package.dir).join("src");
        let mut text = String::new();
        read_tree(&src, &mut text);
        let code: String = text
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        if name == "tether-guard" {
            assert!(code.contains("fn constant_time_eq") && code.contains("getrandom::fill"));
            continue;
        }
        if code.contains("TcpListener::bind") && package.layer != Layer::Glue {
            listeners.insert(name.clone());
            if !package.deps.contains("tether-guard") {
                wrong.push(format!("{name} listens without tether-guard"));
            }
        }
        for own in [
            "fn constant_time_eq",
            "fn bearer_token",
            "fn random_hex(bytes",
        ] {
            if code.contains(own) {
                wrong.push(format!("{name} has its own `{own}`"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    for listener in [
        "tether-kandev-endpoint",
        "tether-relay",
        "tether-web",
        "tether-collect",
        "tether-tap",
    ] {
        assert!(
            listeners.contains(listener),
            "{listener} was not seen listening: {listeners:?}"
        );
    }
}

/// A plugin returns data: it never writes files or starts processes (the
/// host does both, `tether_process`). Plugins that declare host machinery
/// (`also`) hold a host adapter too, and are read by their own tests.
#[test]
fn plugins_return_data_and_touch_nothing() {
    let graph = graph();
    let root = workspace();
    let forbidden = [
        "std::process",
        "tokio::process",
        "Command::new",
        "fs::write",
        "File::create",
        "OpenOptions",
        "create_dir",
        "remove_file",
        "remove_dir",
        "fs::rename",
        "set_permissions",
    ];
    let mut read = 0;
    let mut wrong = Vec::new();
    for (name, package) in &graph {
        if package.layer != Layer::Plugin || !package.also.is_empty() {
            continue;
        }
        let mut text = String::new();
        read_tree(&root.join(&package.dir).join("src"), &mut text);
        read += 1;
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            for word in forbidden {
                if code.contains(word) {
                    wrong.push(format!("{name}: {}", line.trim()));
                }
            }
        }
    }
    assert!(read >= 6, "the plugins were not read");
    assert!(wrong.is_empty(), "a plugin touches the world: {wrong:#?}");
}

/// What Tether's own listeners bind is loopback, named in the code (the web
/// service binds the address its host gives it; the CLI defaults to
/// 127.0.0.1).
#[test]
fn tethers_own_listeners_bind_loopback() {
    let root = workspace();
    let mut binds = 0;
    for dir in ["plugins/kandev-endpoint/src", "relay/src"] {
        let mut text = String::new();
        read_tree(&root.join(dir), &mut text);
        for line in text.lines().filter(|l| l.contains("TcpListener::bind(")) {
            binds += 1;
            assert!(
                line.contains("127.0.0.1") || line.contains("loopback"),
                "{dir}: {line}"
            );
        }
        assert!(
            !text.contains("0.0.0.0") && !text.contains("UNSPECIFIED"),
            "{dir} names the wildcard address"
        );
    }
    assert!(binds >= 3, "the binds were not read");
    let endpoint = std::fs::read_to_string(root.join("plugins/kandev-endpoint/src/endpoint.rs"))
        .expect("endpoint.rs");
    assert!(endpoint.contains("let loopback = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));"));
}

/// GIVEN tether-words' source (test modules left out) and manifest WHEN
/// they are read THEN, like core, it does no I/O and runs nothing: the
/// words people read are a pure projection of the documents.
#[test]
fn the_words_do_no_io() {
    let mut text = String::new();
    read_tree(&workspace().join("words").join("src"), &mut text);
    assert!(text.contains("pub fn vocabulary"), "words/src was not read");
    let forbidden = [
        "std::fs",
        "std::env",
        "std::process",
        "std::net",
        "std::thread",
        "sleep(",
        "::now(",
        "Instant",
        "tokio",
        "File::",
    ];
    let found: Vec<String> = text
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .flat_map(|code| {
            forbidden
                .iter()
                .filter(move |word| code.contains(**word))
                .map(move |word| format!("{word}: {}", code.trim()))
        })
        .collect();
    assert!(found.is_empty(), "I/O in tether-words: {found:#?}");
    let manifest = std::fs::read_to_string(workspace().join("words").join("Cargo.toml"))
        .expect("words manifest");
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .and_then(|rest| rest.split("\n[").next())
        .unwrap_or("");
    for crate_name in ["rusqlite", "rmcp", "reqwest", "axum", "tokio"] {
        assert!(
            !deps.contains(crate_name),
            "tether-words depends on {crate_name}"
        );
    }
}

fn read_tree(dir: &Path, out: &mut String) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            read_tree(&path, out);
        } else if path.extension().and_then(|e| e.to_str()) == Some("rs")
            // A test module in a file of its own (`mod tests;`).
            && path.file_name().is_some_and(|n| n != "tests.rs")
        {
            let text = std::fs::read_to_string(&path).expect("read");
            // Test modules may build what they like.
            out.push_str(text.split("#[cfg(test)]").next().unwrap_or(""));
            out.push('\n');
        }
    }
}

#[test]
fn core_does_no_io() {
    let src = workspace().join("core").join("src");
    // No I/O, no threads, no sleeping, no clock: the hub runtime is
    // host machinery (tether-hub).
    let forbidden = [
        "std::fs",
        "std::env",
        "std::process",
        "std::net",
        "std::thread",
        "thread::spawn",
        "sleep(",
        "::now(",
        "Instant",
        "tokio",
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
        "tokio",
    ] {
        assert!(
            !deps.contains(crate_name),
            "tether-core depends on {crate_name}"
        );
    }
}

/// One `.rs` file under a crate's `src/`, as its module and its product
/// code ([`product_code`]).
struct SourceFile {
    /// The file.
    file: PathBuf,
    /// Its module's path from the crate's root (`src/a/b.rs` and
    /// `src/a/b/mod.rs` are `["a", "b"]`, `src/lib.rs` is `[]`); `None` for
    /// the root of another crate built from the same folder (`src/bin/…`,
    /// `src/main.rs` beside a `src/lib.rs`).
    module: Option<Vec<String>>,
    /// Its product code.
    code: String,
}

/// Every `.rs` file under `src`, but those only tests compile: `tests.rs`,
/// files under a `tests/` folder, and modules declared under a `#[cfg]`
/// that names `test` (`#[cfg(any(test, feature = "test-support"))]`).
fn source_files(src: &Path) -> Vec<SourceFile> {
    let gated =
        regex::Regex::new(r"#\[cfg\(([^\]\n]*)\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;")
            .expect("pattern");
    let test_word = regex::Regex::new(r"\btest\b").expect("pattern");
    let has_lib = src.join("lib.rs").exists();
    let mut files = Vec::new();
    let mut test_only: BTreeSet<Vec<String>> = BTreeSet::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "tests" {
                    stack.push(path);
                }
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") || name == "tests.rs" {
                continue;
            }
            let rel: Vec<String> = path
                .strip_prefix(src)
                .unwrap_or(&path)
                .with_extension("")
                .iter()
                .map(|c| c.to_string_lossy().into_owned())
                .collect();
            let module = match rel.iter().map(String::as_str).collect::<Vec<_>>()[..] {
                ["lib"] => Some(Vec::new()),
                ["main"] => (!has_lib).then(Vec::new),
                ["bin", ..] => None,
                [.., "mod"] => Some(rel[..rel.len() - 1].to_vec()),
                _ => Some(rel),
            };
            let text = std::fs::read_to_string(&path).expect("source");
            if let Some(module) = &module {
                for cap in gated.captures_iter(&text) {
                    if test_word.is_match(&cap[1]) && !cap[1].contains("not(") {
                        let mut child = module.clone();
                        child.push(cap[2].to_owned());
                        test_only.insert(child);
                    }
                }
            }
            files.push(SourceFile {
                file: path,
                module,
                code: product_code(&text),
            });
        }
    }
    files.retain(|f| {
        f.module
            .as_ref()
            .is_none_or(|m| !test_only.iter().any(|t| m.starts_with(t)))
    });
    files.sort_by(|a, b| a.file.cmp(&b.file));
    files
}

/// A crate's module graph, as its siblings see each other: for each module
/// that has submodules (by its path, `[]` for the crate's root), which of
/// its children names which other (`crate::a::b`, `super::b`, or `b` inside
/// a `crate::{…}` or `super::{…}` group), read from every file of the
/// child and below. What a module reaches through a re-export at its
/// parent is not seen; a `use` of the module's own path always is.
fn module_graph(
    files: &[(Vec<String>, String)],
) -> BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> {
    let path = regex::Regex::new(r"\b(crate|super|self)((?:::\w+)*)(::\{)?").expect("pattern");
    let mut graph: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for (module, _) in files {
        for depth in 0..module.len() {
            graph
                .entry(module[..depth].to_vec())
                .or_default()
                .entry(module[depth].clone())
                .or_default();
        }
    }
    for (module, code) in files {
        for cap in path.captures_iter(code) {
            let mut at = match &cap[1] {
                "crate" => Vec::new(),
                "super" => module[..module.len().saturating_sub(1)].to_vec(),
                _ => module.clone(),
            };
            for segment in cap[2].split("::").filter(|s| !s.is_empty()) {
                if segment == "super" {
                    at.pop();
                } else {
                    at.push(segment.to_owned());
                }
            }
            let mut targets = vec![at.clone()];
            if cap.get(3).is_some() {
                let rest = &code[cap.get(0).expect("match").end()..];
                targets = braced_heads(rest)
                    .into_iter()
                    .map(|head| {
                        let mut t = at.clone();
                        if head != "self" {
                            t.push(head);
                        }
                        t
                    })
                    .collect();
            }
            for target in targets {
                let common = module
                    .iter()
                    .zip(&target)
                    .take_while(|(a, b)| a == b)
                    .count();
                let (Some(from), Some(to)) = (module.get(common), target.get(common)) else {
                    continue; // the module itself, an ancestor or a child
                };
                if let Some(siblings) = graph.get_mut(&module[..common])
                    && siblings.contains_key(to)
                {
                    siblings.get_mut(from).expect("a child").insert(to.clone());
                }
            }
        }
    }
    graph
}

/// The first segment of each top-level item of a `use` group, read from just
/// after its `{`: `a::{B, C}, d}` gives `a` and `d`.
fn braced_heads(rest: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut item = String::new();
    for c in rest.chars() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                heads.push(std::mem::take(&mut item));
                continue;
            }
            _ => {}
        }
        if depth == 0 || c == '{' {
            item.push(c);
        }
    }
    heads.push(item);
    heads
        .iter()
        .filter_map(|i| i.trim().split("::").next().map(str::to_owned))
        .filter(|h| !h.is_empty())
        .collect()
}

/// The circles of a graph: each set of two or more nodes that reach each
/// other (a strongly connected component), however many loops tie it.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reach = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&String> = graph.get(from).into_iter().flatten().collect();
        while let Some(node) = stack.pop() {
            if seen.insert(node.clone()) {
                stack.extend(graph.get(node).into_iter().flatten());
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|n| (n, reach(n))).collect();
    let mut found: Vec<BTreeSet<String>> = Vec::new();
    for (node, from_node) in &reaches {
        if found.iter().any(|c| c.contains(*node)) {
            continue;
        }
        let circle: BTreeSet<String> = from_node
            .iter()
            .filter(|other| reaches.get(other).is_some_and(|r| r.contains(*node)))
            .cloned()
            .collect();
        if circle.len() >= 2 {
            found.push(circle);
        }
    }
    found
}

/// The inventory kit reads configuration and speaks no MCP: an endpoint
/// check is handed in (`tether-diagnostics` does).
#[test]
fn the_inventory_kit_speaks_no_mcp() {
    let manifest = std::fs::read_to_string(workspace().join("inventory").join("Cargo.toml"))
        .expect("inventory manifest");
    for crate_name in ["rmcp", "reqwest", "tether-mcp-client", "tether-diagnostics"] {
        assert!(
            !manifest.contains(crate_name),
            "tether-inventory depends on {crate_name}"
        );
    }
}

/// GIVEN the two observers of MCP traffic (the observed endpoint and the
/// relay) WHEN their product code is read THEN neither builds the evidence
/// an exchange proves itself: both go through `tether_core::traffic`, so
/// the same exchange is the same evidence whoever saw it.
#[test]
fn mcp_traffic_becomes_evidence_in_one_place() {
    let built = regex::Regex::new(
        r"Evidence::new\(\s*(?:tether_core::)?(?:EvidenceKind::)?(?:InitializeObserved|ToolsListObserved|ToolCallObserved|ConnectionClosed)\b|ReasonCode::ProtocolError\b",
    )
    .expect("pattern");
    let mut found = Vec::new();
    for dir in ["plugins/kandev-endpoint/src", "relay/src"] {
        let mut code = String::new();
        read_tree(&workspace().join(dir), &mut code);
        assert!(
            code.contains("traffic::evidence"),
            "{dir} maps through core"
        );
        let code = product_code(&code);
        found.extend(
            built
                .find_iter(&code)
                .map(|m| format!("{dir}: {}", m.as_str())),
        );
    }
    assert!(
        found.is_empty(),
        "evidence built outside tether_core::traffic:\n{}",
        found.join("\n")
    );
}

/// GIVEN the types third parties build on (the contract's vocabularies, a
/// plugin's answers and what it builds, and the documents it reads) WHEN
/// core's source is read THEN each is `#[non_exhaustive]`, so a later
/// Tether adds a variant or a field without breaking a plugin.
#[test]
fn what_third_parties_build_on_is_non_exhaustive() {
    let mut code = String::new();
    read_tree(&workspace().join("core/src"), &mut code);
    // The display's words a plugin may match on (`ColorClass`) live in
    // tether-words.
    read_tree(&workspace().join("words/src"), &mut code);
    let vocab = std::fs::read_to_string(workspace().join("core/src/vocab.rs")).expect("vocab");
    assert_eq!(
        vocab.matches("#[non_exhaustive]").count(),
        2,
        "both vocabulary macros declare their enums non-exhaustive"
    );
    let mut missing = Vec::new();
    for (item, name) in [
        ("enum", "Decision"),
        ("enum", "Delivery"),
        ("enum", "DriveMode"),
        ("enum", "TelemetryAnswer"),
        ("enum", "TelemetryValue"),
        ("enum", "TelemetrySignal"),
        ("enum", "HeadersSent"),
        ("enum", "RecordAnswer"),
        ("enum", "RecordFormat"),
        ("enum", "FilePlace"),
        ("enum", "ColorClass"),
        ("enum", "Verdict"),
        ("enum", "Served"),
        ("enum", "ServedOutcome"),
        ("enum", "Exchange"),
        ("enum", "RegistryError"),
        ("struct", "PluginDescriptor"),
        ("struct", "AgentCapabilities"),
        ("struct", "Materialized"),
        ("struct", "NamedServer"),
        ("struct", "SetupSnippet"),
        ("struct", "RecordReading"),
        ("struct", "TelemetryReading"),
        ("struct", "Evidence"),
        ("struct", "AttachmentHistory"),
        ("struct", "AttachmentAttempt"),
        ("struct", "ServerAttachment"),
        ("struct", "PluginListing"),
    ] {
        let marked = regex::Regex::new(&format!(r"#\[non_exhaustive\]\s*\npub {item} {name}\b"))
            .expect("pattern");
        if !marked.is_match(&code) {
            missing.push(format!("{item} {name}"));
        }
    }
    assert!(missing.is_empty(), "not #[non_exhaustive]: {missing:?}");
}

/// GIVEN every workspace crate's modules WHEN the modules each file names
/// (`crate::a::b`, `super::b`, `use` groups) are read THEN no module's
/// children import each other in a circle: each crate reads one way, from
/// its root to its leaves (core's `plan` → `reducer`, a plugin's `records`
/// → `stream_json`), at every depth (`records/plain.rs` and
/// `records/mcp_log.rs` too).
#[test]
fn no_crate_s_modules_import_each_other_in_a_circle() {
    // The reading itself, on a crate made up here: a circle through a
    // plain path and a `use` group at the root, one through `super::`
    // below it, and edges that are no circle.
    let made_up: Vec<(Vec<String>, String)> = [
        ("", "pub mod a; pub mod b; pub mod c; pub mod d; pub mod r;"),
        ("a", "use super::b::X; fn f() -> crate::c::Z { todo!() }"),
        ("b", "use crate::{a::{Y, W}, b::V};"),
        ("c", "use self::inner::Q;"),
        ("c/inner", "use super::super::r::T;"),
        ("d", ""),
        ("r", "pub mod p; pub mod q;"),
        ("r/p", "use super::q::V; use super::super::d::Y;"),
        ("r/q", "use crate::r::p::U;"),
    ]
    .into_iter()
    .map(|(path, code)| {
        let module = path.split('/').filter(|s| !s.is_empty());
        (module.map(str::to_owned).collect(), code.to_owned())
    })
    .collect();
    let made_up = module_graph(&made_up);
    let found: Vec<Vec<BTreeSet<String>>> = made_up.values().map(circles).collect();
    let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(
        found,
        [vec![set(&["a", "b"])], vec![], vec![set(&["p", "q"])]]
    );
    assert_eq!(made_up[&vec![]]["c"], set(&["r"]), "{made_up:?}");
    assert_eq!(made_up[&vec![]]["r"], set(&["d"]), "{made_up:?}");
    assert_eq!(braced_heads("a::{B, C}, d, e::f::g};"), ["a", "d", "e"]);

    let mut found = Vec::new();
    let mut crates = 0;
    for (name, package) in graph() {
        let files: Vec<(Vec<String>, String)> =
            source_files(&workspace().join(&package.dir).join("src"))
                .into_iter()
                .filter_map(|f| Some((f.module?, f.code)))
                .collect();
        let graph = module_graph(&files);
        crates += usize::from(!graph.is_empty());
        if name == "tether-core" {
            assert!(
                graph[&vec![]]["plan"].contains("reducer"),
                "core was read: {graph:?}"
            );
        }
        for (parent, siblings) in &graph {
            for circle in circles(siblings) {
                let ties: Vec<String> = circle
                    .iter()
                    .flat_map(|from| {
                        siblings[from]
                            .intersection(&circle)
                            .map(move |to| format!("{from} → {to}"))
                    })
                    .collect();
                found.push((name.clone(), parent.join("::"), circle, ties.join(", ")));
            }
        }
    }
    assert!(crates >= 25, "read {crates} crates' modules");
    // Issue 71 §6 broke the last circle: none is allowed now.
    let problems: Vec<String> = found
        .iter()
        .map(|(name, parent, _, ties)| {
            let place = if parent.is_empty() {
                "the root"
            } else {
                parent
            };
            format!("{name}, under {place}: {ties}")
        })
        .collect();
    assert!(
        problems.is_empty(),
        "modules that import each other in a circle:\n{}",
        problems.join("\n")
    );
}

/// GIVEN every workspace crate's product code (the tests crate's shared
/// corpus file aside) WHEN it is read THEN no module is reached through a
/// `#[path]` attribute: a module's file is where its name says, so the tree
/// on disk is the module tree (`policy.rs` is `crate::policy`, never a child
/// of `config_scan` that points at a sibling's file).
#[test]
fn every_module_s_file_is_where_its_name_says() {
    let mut found = BTreeSet::new();
    let mut read = 0;
    for package in graph().values() {
        if package.dir.starts_with("tests") {
            continue;
        }
        for source in source_files(&workspace().join(&package.dir).join("src")) {
            read += 1;
            if source.code.contains("#[path") {
                let file = source
                    .file
                    .strip_prefix(workspace())
                    .unwrap_or(&source.file);
                found.insert(file.display().to_string());
            }
        }
    }
    assert!(read >= 200, "read {read} files");
    assert!(
        found.is_empty(),
        "files with a #[path] module: make each an ordinary one: {found:?}"
    );
}

/// A source file as product code: comments, `#[cfg(test)]` modules (to the
/// end of the file, where this house keeps them) and doc lines left out.
fn product_code(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        // A trailing comment (outside a string, as far as a line can say).
        let code = match line.find(" // ") {
            Some(i) if line[..i].matches('"').count() % 2 == 0 => &line[..i],
            _ => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// GIVEN every harness the registry and the inventory's scanners know WHEN
/// the product code outside `plugins/` is read (crates' `src/`; tests,
/// modules only tests compile, and comments left out) THEN none of it names a harness: no string, no
/// identifier. What a harness is, its plugin says.
#[test]
fn no_product_code_outside_plugins_names_a_harness() {
    let registry = tether_core::registry::Registry::with_static().expect("registry");
    let mut names: BTreeSet<String> = registry
        .plugins()
        .iter()
        .filter(|p| p.descriptor.drive_mode == tether_core::DriveMode::Passthrough)
        .flat_map(|p| p.descriptor.agent_kinds.iter().cloned())
        .collect();
    names.extend(
        tether_inventory::scanners()
            .iter()
            .map(|s| s.harness().to_owned()),
    );
    assert!(names.len() >= 7, "{names:?}");
    let patterns: Vec<(String, regex::Regex)> = names
        .iter()
        .map(|name| {
            let word = regex::escape(name).replace("\\-", "[-_]?");
            // A quoted name, a capitalized identifier (`Cursor`, `OpenCode`),
            // or a snake-case one built on it (`codex_server`).
            let pattern = format!(
                r#"(?i:"[^"\n]*\b{word}\b[^"\n]*")|\b(?i:{word})[A-Z_]\w*|\b{cap}\w*|\b{word}_\w+"#,
                cap = {
                    let mut c = name.chars();
                    c.next()
                        .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                        .unwrap_or_default()
                },
            );
            (name.clone(), regex::Regex::new(&pattern).expect("pattern"))
        })
        .collect();
    let mut found = Vec::new();
    for (name, package) in graph() {
        if package.dir.starts_with("plugins")
            || package.dir.starts_with("tests")
            || package.dir.starts_with("examples")
        {
            continue;
        }
        for source in source_files(&workspace().join(&package.dir).join("src")) {
            for (harness, pattern) in &patterns {
                for m in pattern.find_iter(&source.code) {
                    found.push(format!(
                        "{name}: {}: {harness}: {}",
                        source
                            .file
                            .strip_prefix(workspace())
                            .unwrap_or(&source.file)
                            .display(),
                        m.as_str()
                    ));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "harnesses named outside plugins/:\n{}",
        found.join("\n")
    );
}

/// GIVEN ARCHITECTURE.md WHEN each "Architecture Invariant" paragraph is
/// read THEN it says how it is checked (or that nothing checks it), and
/// every test it names, `file.rs` (`test_name`, …), is a function in that
/// file: an invariant never points at a test that was renamed or removed.
#[test]
fn every_invariant_names_tests_that_exist() {
    let text =
        std::fs::read_to_string(workspace().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let named = regex::Regex::new(r"`([\w/\-.]+\.rs)`\s*\(([^)]*)\)").expect("pattern");
    let test_name = regex::Regex::new(r"`([a-z0-9_…]+)`").expect("pattern");
    let mut problems = Vec::new();
    let mut invariants = 0;
    // An invariant is the text from its marker to the next marker, list
    // item or blank line (they are written as paragraphs or list items).
    let marker = "**Architecture Invariant:**";
    for piece in text.split(marker).skip(1) {
        let invariant = piece
            .split("\n\n")
            .next()
            .and_then(|p| p.split("\n- ").next())
            .unwrap_or("");
        invariants += 1;
        let flat = invariant.split_whitespace().collect::<Vec<_>>().join(" ");
        let says_how = [
            "Checked by",
            "checked by",
            "No test",
            "no test",
            "Checked in",
        ]
        .iter()
        .any(|w| flat.contains(w));
        if !says_how {
            problems.push(format!(
                "says not how it is checked: {}",
                &flat[..flat.len().min(90)]
            ));
        }
        for m in named.captures_iter(&flat) {
            let path = workspace().join(&m[1]);
            let Ok(source) = std::fs::read_to_string(&path) else {
                // A module named in passing (`reducer/fold.rs`), not a test file.
                continue;
            };
            for name in test_name.captures_iter(&m[2]) {
                let name = &name[1];
                // Test names are snake case with several words; `…` stands
                // for words left out.
                if name.matches('_').count() < 2 {
                    continue;
                }
                let pattern = name
                    .split('…')
                    .map(regex::escape)
                    .collect::<Vec<_>>()
                    .join(r"\w*");
                let defined = regex::Regex::new(&format!(r"fn {pattern}\b")).expect("name");
                if !defined.is_match(&source) {
                    problems.push(format!("{}: no fn {name}", &m[1]));
                }
            }
        }
    }
    assert!(invariants >= 50, "read {invariants} invariants");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// ARCHITECTURE.md's code map: from `## Code map` to the next `## `
/// heading, as (the folders its `### ` heading names, its text) per
/// section.
fn code_map() -> Vec<(Vec<String>, String)> {
    let text =
        std::fs::read_to_string(workspace().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let start = text.find("\n## Code map").expect("a `## Code map` section");
    let rest = &text[start + 1..];
    let map = match rest[3..].find("\n## ") {
        Some(end) => &rest[..end + 3],
        None => rest,
    };
    let folder = regex::Regex::new(r"`([\w./*-]+/)`").expect("pattern");
    map.split("\n### ")
        .skip(1)
        .map(|section| {
            let heading = section.lines().next().unwrap_or("");
            let folders = folder
                .captures_iter(heading)
                .map(|c| c[1].to_owned())
                .collect();
            (folders, section.to_owned())
        })
        .collect()
}

/// The paths under `root` that `pattern` names, where a `*` in a
/// segment stands for any run of characters within that segment.
fn expand(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let mut found = vec![root.to_path_buf()];
    for segment in pattern.trim_end_matches('/').split('/') {
        let mut next = Vec::new();
        for dir in &found {
            if let Some((before, after)) = segment.split_once('*') {
                for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    if name.len() >= before.len() + after.len()
                        && name.starts_with(before)
                        && name.ends_with(after)
                    {
                        next.push(entry.path());
                    }
                }
            } else if dir.join(segment).exists() {
                next.push(dir.join(segment));
            }
        }
        found = next;
    }
    found
}

/// GIVEN ARCHITECTURE.md's code map WHEN it is read against the
/// workspace THEN every workspace crate (the root manifest's members, as
/// `cargo metadata` lists them) is named in it, by its folder or its
/// package name; every module of tether-core is named by its file; and
/// every path it names exists: from the workspace's root, or from the
/// folder its section is about (`src/lib.rs` under
/// `plugins/passthrough-*/`), a `*` matching at least one.
#[test]
fn the_code_map_names_every_crate_and_only_paths_that_exist() {
    let root = workspace();
    let sections = code_map();
    assert!(sections.len() >= 15, "read {} sections", sections.len());
    let map: String = sections.iter().map(|(_, text)| text.as_str()).collect();
    let mut problems = Vec::new();

    for (name, package) in graph() {
        let dir = package.dir.display().to_string();
        let word = regex::Regex::new(&format!(r"(^|[^\w-]){}($|[^\w-])", regex::escape(&name)))
            .expect("pattern");
        if !map.contains(&format!("`{dir}/`")) && !word.is_match(&map) {
            problems.push(format!("the crate {name} ({dir}/) is not in the code map"));
        }
    }

    let lib = std::fs::read_to_string(root.join("core/src/lib.rs")).expect("core/src/lib.rs");
    let module = regex::Regex::new(r"(?m)^pub mod (\w+);").expect("pattern");
    let modules: Vec<String> = module
        .captures_iter(&lib)
        .map(|c| c[1].to_owned())
        .collect();
    assert!(modules.len() >= 10, "{modules:?}");
    for m in modules {
        if !map.contains(&format!("`core/src/{m}.rs`"))
            && !map.contains(&format!("`core/src/{m}/`"))
        {
            problems.push(format!("core's module {m} is not in the code map"));
        }
    }

    let quoted = regex::Regex::new(r"`([^`\s]+)`").expect("pattern");
    let extension =
        regex::Regex::new(r"\.(rs|md|toml|json|py|js|mjs|cjs|html|css|go|sh)$").expect("pattern");
    let mut checked = 0;
    for (folders, text) in &sections {
        for cap in quoted.captures_iter(text) {
            let token = &cap[1];
            if ["://", ":", "<", "{", "=", "…"]
                .iter()
                .any(|c| token.contains(c))
                || token.starts_with('/')
                || token.starts_with('~')
                || token.starts_with('$')
                // What a build writes, there only after that build.
                || token.starts_with("target/")
            {
                continue;
            }
            let first = token.split('/').next().unwrap_or("");
            let at_root = token.contains('/') && !first.contains('*') && root.join(first).exists();
            if !at_root && !extension.is_match(token) {
                continue; // a word, a method (`tools/list`), not a path
            }
            checked += 1;
            let mut bases = vec![root.clone()];
            for folder in folders {
                for base in expand(&root, folder) {
                    bases.push(base.join("src"));
                    bases.push(base);
                }
            }
            if !bases.iter().any(|base| !expand(base, token).is_empty()) {
                problems.push(format!("the code map names {token}, which does not exist"));
            }
        }
    }
    assert!(checked >= 100, "the checker found the paths ({checked})");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// GIVEN ARCHITECTURE.md WHEN its characters are counted THEN it is no
/// longer than rust-analyzer's `docs/dev/architecture.md` (27,347
/// characters at commit 82fd044), the length issue 71 aims for: it stays a
/// map, and what a newcomer needs beyond it goes to `book/src/internals.md`.
#[test]
fn the_map_is_no_longer_than_rust_analyzer_s() {
    const RUST_ANALYZER_S: usize = 27_347;
    let text =
        std::fs::read_to_string(workspace().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let length = text.chars().count();
    assert!(length > 1_000, "ARCHITECTURE.md was not read");
    assert!(
        length <= RUST_ANALYZER_S,
        "ARCHITECTURE.md is {length} characters, over rust-analyzer's {RUST_ANALYZER_S}: \
         keep what is where and the invariants, and move the rest to book/src/internals.md"
    );
}

/// The names a crate doc's list gives that are nothing of the crate: each
/// list item that starts with a plain name (`` - [`x`]: `` or `` - `x`: ``)
/// must name a module file (`src/x.rs`, `src/x/`) or something `lib.rs`
/// declares or re-exports.
fn listed_but_missing(doc: &str, code: &str, src: &Path) -> Vec<String> {
    let item = regex::Regex::new(r"(?m)^//!\s*- \[?`(\w+)`\]?").expect("pattern");
    item.captures_iter(doc)
        .map(|cap| cap[1].to_owned())
        .filter(|name| {
            let word = regex::Regex::new(&format!(r"\b{name}\b")).expect("name");
            !src.join(format!("{name}.rs")).exists()
                && !src.join(name).is_dir()
                && !word.is_match(code)
        })
        .collect()
}

/// GIVEN every workspace crate's `src/lib.rs` WHEN its crate doc (the
/// leading `//!` lines) is read against its `pub mod` lines THEN each
/// public module is named in the doc (as `` [`name`] `` or `` `name` ``),
/// so the crate's map lists every public module; `#[doc(hidden)]` modules
/// are not part of the API and need no line; and every name its list gives
/// is there ([`listed_but_missing`]): no module the crate no longer has.
#[test]
fn every_crate_doc_lists_its_public_modules() {
    let made_up = "//! - [`kept`]: here;\n//! - `gone`: not;\n//! - [`Thing`] and [`f`]: both;";
    assert_eq!(
        listed_but_missing(
            made_up,
            "mod kept;\npub use kept::Thing;",
            Path::new("/nowhere")
        ),
        ["gone"]
    );
    let module = regex::Regex::new(r"(?m)^(#\[doc\(hidden\)\]\n)?pub mod (\w+)").expect("pattern");
    let mut problems = Vec::new();
    let mut crates = 0;
    for package in graph().values() {
        let src = workspace().join(&package.dir).join("src");
        let Ok(text) = std::fs::read_to_string(src.join("lib.rs")) else {
            continue;
        };
        crates += 1;
        let doc: String = text
            .lines()
            .take_while(|line| line.starts_with("//!"))
            .collect::<Vec<_>>()
            .join("\n");
        for cap in module.captures_iter(&text) {
            let name = &cap[2];
            if cap.get(1).is_some() {
                continue;
            }
            let named = regex::Regex::new(&format!(r"`(crate::)?{name}(::\w+)*`")).expect("name");
            if !named.is_match(&doc) {
                problems.push(format!(
                    "{}: `pub mod {name}` is not in the crate doc's list",
                    package.dir.display()
                ));
            }
        }
        for name in listed_but_missing(&doc, &product_code(&text), &src) {
            problems.push(format!(
                "{}: the crate doc's list names `{name}`, which the crate does not have",
                package.dir.display()
            ));
        }
    }
    assert!(crates >= 25, "read {crates} crates' lib.rs");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The long flags the CLI's product code declares, as (file, flag): each
/// `#[arg(…)]` with `long`, named by its `long = "…"` or by the field it is
/// on (`no_pins` is `--no-pins`).
fn cli_flags() -> Vec<(String, String)> {
    let long = regex::Regex::new(r#"\blong\b(\s*=\s*"([\w-]+)")?"#).expect("pattern");
    let field = regex::Regex::new(r"^\s*(?:pub(?:\([\w:]+\))?\s+)?(\w+)\s*:").expect("pattern");
    let mut flags = Vec::new();
    let mut stack = vec![workspace().join("cli/src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs")
                || path.file_name().is_some_and(|n| n == "tests.rs")
            {
                continue;
            }
            let file = path
                .strip_prefix(workspace())
                .unwrap_or(&path)
                .display()
                .to_string();
            let code = product_code(&std::fs::read_to_string(&path).expect("source"));
            let lines: Vec<&str> = code.lines().collect();
            let mut at = 0;
            while at < lines.len() {
                if !lines[at].trim_start().starts_with("#[arg(") {
                    at += 1;
                    continue;
                }
                // The attribute, over as many lines as it takes.
                let mut attribute = lines[at].trim().to_owned();
                while !attribute.ends_with(")]") && at + 1 < lines.len() {
                    at += 1;
                    attribute.push_str(lines[at].trim());
                }
                at += 1;
                let Some(m) = long.captures(&attribute) else {
                    continue;
                };
                let name = match m.get(2) {
                    Some(named) => named.as_str().to_owned(),
                    None => lines[at..]
                        .iter()
                        .find(|l| !l.trim_start().starts_with("#["))
                        .and_then(|l| field.captures(l))
                        .map(|c| c[1].replace('_', "-"))
                        .unwrap_or_default(),
                };
                flags.push((file.clone(), name));
            }
        }
    }
    flags
}

/// GIVEN the CLI's product code WHEN every long flag it declares is read
/// THEN the flags every command shares are declared once, in the shared
/// files: `--json` once (`flags::Output`, each command naming its document
/// in its own help), `--harness` only in `cli/src/flags.rs` (as a filter and
/// as a name), `--db` and `--load` once each in `cli/src/host.rs`.
#[test]
fn the_shared_flags_are_declared_once_in_the_shared_files() {
    let flags = cli_flags();
    assert!(flags.len() >= 40, "the flags were not read: {flags:?}");
    assert!(
        flags
            .iter()
            .any(|(file, flag)| file.ends_with("probe.rs") && flag == "otlp"),
        "a flag named by its field: {flags:?}"
    );
    let declared = |name: &str| -> Vec<&str> {
        flags
            .iter()
            .filter(|(_, flag)| flag == name)
            .map(|(file, _)| file.as_str())
            .collect()
    };
    assert_eq!(declared("json"), ["cli/src/flags.rs"], "--json");
    let harness = declared("harness");
    assert!(
        !harness.is_empty() && harness.iter().all(|f| *f == "cli/src/flags.rs"),
        "--harness: {harness:?}"
    );
    assert_eq!(declared("db"), ["cli/src/host.rs"], "--db");
    assert_eq!(declared("load"), ["cli/src/host.rs"], "--load");
}

/// GIVEN the CLI's product code WHEN it is read THEN no exit code is made
/// outside `cli/src/exit.rs` but from an `Exit` (no `ExitCode::from(2)`, no
/// `process::exit`): every command ends through the one type the exit-code
/// page is generated from.
#[test]
fn exit_codes_are_spelled_only_by_the_exit_type() {
    let mut code = String::new();
    let mut read = 0;
    let mut stack = vec![workspace().join("cli/src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs")
                && path
                    .file_name()
                    .is_some_and(|n| n != "exit.rs" && n != "tests.rs")
            {
                // Each file's test module is left out (`product_code` stops
                // at it), so it is read file by file.
                code.push_str(&product_code(
                    &std::fs::read_to_string(&path).expect("source"),
                ));
                read += 1;
            }
        }
    }
    assert!(read >= 10, "cli/src was not read");
    assert!(
        code.contains("ExitCode::from(Exit::Usage)"),
        "the reading works"
    );
    let spelled =
        regex::Regex::new(r"ExitCode::from\(\s*(?:(?:crate::)?(?:exit::)?Exit::)?|process::exit\(")
            .expect("pattern");
    let found: Vec<String> = spelled
        .find_iter(&code)
        .filter(|m| !m.as_str().ends_with("Exit::"))
        .map(|m| {
            let line_end = code[m.start()..]
                .find('\n')
                .map_or(code.len(), |i| m.start() + i);
            code[m.start()..line_end].trim().to_owned()
        })
        .collect();
    assert!(
        found.is_empty(),
        "exit codes spelled outside cli/src/exit.rs:\n{}",
        found.join("\n")
    );
}
