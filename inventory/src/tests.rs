//! The kit's own tests: env classes, JSONC, every dialect, reference
//! expansion, contained reads, and snapshot differences.

use std::collections::BTreeMap;

use serde_json::Value;
use tether_core::inventory::diff;
use tether_core::spec::{Endpoint, KeyValue};
use tether_core::vocab::{ConfigScope, EnvClass, ReasonCode, Transport};

use crate::context::ScanContext;
use crate::dialect::*;
use crate::root::ConfigRoot;
use crate::rows::*;

#[test]
fn env_names_are_classed_by_name() {
    for secret in [
        "API_KEY",
        "GITHUB_TOKEN",
        "DB_PASSWORD",
        "AUTH",
        "OPENAI_APIKEY",
        "MY_SECRET_X",
    ] {
        assert_eq!(env_class(secret), EnvClass::SecretLike, "{secret}");
    }
    for plain in [
        "PATH",
        "TZ",
        "NODE_ENV",
        "KEYBOARD_LAYOUT",
        "HOME",
        "PATTERN",
    ] {
        assert_eq!(env_class(plain), EnvClass::Plain, "{plain}");
    }
}

#[test]
fn jsonc_comments_and_trailing_commas() {
    let text = "{\n // c\n \"a\": \"x // not a comment\", /* b */\n \"b\": [1,2,],\n}\n";
    let map = parse_json_object(text, true).expect("jsonc");
    assert_eq!(map["a"], "x // not a comment");
    assert_eq!(map["b"].as_array().map(Vec::len), Some(2));
    let err = parse_json_object("{\n\"a\": }", false).expect_err("bad");
    assert!(err.contains("line 2"), "{err}");
    assert!(
        parse_json_object("[1]", false)
            .expect_err("array")
            .contains("array")
    );
}

#[test]
fn entries_of_every_dialect() {
    let none = |_: &str| None;
    let e = |v: Value, d| entry_endpoint(&v, d, &none);
    let sse = e(
        serde_json::json!({"url": "http://h/sse"}),
        EntryDialect::McpJsonHttpUrl,
    )
    .expect("g");
    assert_eq!(sse.transport(), Transport::Sse);
    let http = e(
        serde_json::json!({"url": "http://h/mcp"}),
        EntryDialect::McpJson,
    )
    .expect("c");
    assert_eq!(http.transport(), Transport::Http);
    let oc = e(
        serde_json::json!({"type": "local", "command": ["npx", "-y", "x"]}),
        EntryDialect::TypedLocalRemote,
    )
    .expect("oc");
    assert!(
        matches!(oc, Endpoint::Stdio { ref command, ref args, .. } if command == "npx" && args.len() == 2)
    );
    let err = e(serde_json::json!({"command": 5}), EntryDialect::McpJson).expect_err("type");
    assert!(err.contains("\"command\" should be string"), "{err}");
    let err = e(serde_json::json!([1]), EntryDialect::McpJson).expect_err("shape");
    assert!(err.contains("array"), "{err}");
    let lookup = |name: &str| (name == "TOK").then(|| "s3cr3t".to_owned());
    let codex = entry_endpoint(
        &serde_json::json!({"url": "http://h/mcp", "bearer_token_env_var": "TOK"}),
        EntryDialect::TomlTable,
        &lookup,
    )
    .expect("codex");
    assert!(
        matches!(codex, Endpoint::Http { ref headers, .. } if headers[0].value == "Bearer s3cr3t")
    );
}

#[test]
fn environment_references_expand_as_each_harness_does() {
    let lookup = |name: &str| (name == "TOK").then(|| "v4lue".to_owned());
    let run = |text: &str, dialect| {
        let (mut names, mut unset) = (Vec::new(), Vec::new());
        let out = expand_text(text, dialect, &lookup, &mut names, &mut unset);
        assert!(unset.iter().all(|u| names.contains(u)), "{unset:?}");
        (out, names)
    };
    assert_eq!(
        run("Bearer ${TOK}", EntryDialect::McpJson).0,
        "Bearer v4lue"
    );
    assert_eq!(run("${MISSING:-dflt}/x", EntryDialect::McpJson).0, "dflt/x");
    assert_eq!(run("${env:TOK}", EntryDialect::McpJson).0, "v4lue");
    assert_eq!(
        run("$TOK and ${UNSET}", EntryDialect::McpJsonHttpUrl),
        (
            "v4lue and ${UNSET}".into(),
            vec!["TOK".into(), "UNSET".into()]
        )
    );
    assert_eq!(run("$TOK stays", EntryDialect::McpJson).0, "$TOK stays");
    assert_eq!(
        run("{env:TOK}!", EntryDialect::TypedLocalRemote).0,
        "v4lue!"
    );
    assert_eq!(
        run("${ unterminated", EntryDialect::McpJson).0,
        "${ unterminated"
    );
    assert_eq!(run("$", EntryDialect::McpJsonHttpUrl).0, "$");
    let mut endpoint = Endpoint::Http {
        url: "https://h/mcp".into(),
        headers: vec![KeyValue::new("Authorization", "Bearer ${TOK}")],
    };
    let (names, unset) = expand_references(&mut endpoint, EntryDialect::McpJson, &lookup);
    assert_eq!(names, ["TOK"]);
    assert!(unset.is_empty());
    // Unset, with no default: named as unset (a default is not unset).
    let mut stdio = Endpoint::Stdio {
        command: "${BIN:-npx}".into(),
        args: vec!["--key=${API_KEY}".into()],
        env: vec![KeyValue::new("T", "$TOK ${OTHER}")],
        cwd: None,
    };
    let (names, unset) = expand_references(&mut stdio, EntryDialect::McpJson, &lookup);
    assert_eq!(
        names,
        ["API_KEY", "BIN", "OTHER"],
        "`$TOK` is not Claude's syntax"
    );
    assert_eq!(unset, ["API_KEY", "OTHER"]);
    assert!(
        matches!(endpoint, Endpoint::Http { ref headers, .. } if headers[0].value == "Bearer v4lue")
    );
}

#[test]
fn reads_stay_inside_their_root() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root_dir = tmp.path().join("home");
    std::fs::create_dir_all(&root_dir).expect("mkdir");
    std::fs::write(tmp.path().join("outside.json"), "{}").expect("write");
    std::fs::write(root_dir.join("ok.json"), "{}").expect("write");
    std::os::unix::fs::symlink(
        tmp.path().join("outside.json"),
        root_dir.join("escape.json"),
    )
    .expect("symlink");
    std::os::unix::fs::symlink(root_dir.join("ok.json"), root_dir.join("inside.json"))
        .expect("symlink");
    std::os::unix::fs::symlink(root_dir.join("loop-b"), root_dir.join("loop-a")).expect("l");
    std::os::unix::fs::symlink(root_dir.join("loop-a"), root_dir.join("loop-b")).expect("l");
    std::fs::write(root_dir.join("big.json"), vec![b' '; 2 * 1024 * 1024]).expect("big");
    let root = ConfigRoot::new(root_dir, "~");
    assert_eq!(root.read("ok.json"), Ok(Some("{}".into())));
    assert_eq!(root.read("inside.json"), Ok(Some("{}".into())));
    assert_eq!(root.read("absent.json"), Ok(None));
    assert_eq!(root.read("no/such/dir.json"), Ok(None));
    let reason = |rel| root.read(rel).expect_err(rel).reason;
    assert_eq!(reason("escape.json"), ReasonCode::SymlinkOutsideRoot);
    assert_eq!(reason("loop-a"), ReasonCode::SymlinkLoop);
    assert_eq!(reason("big.json"), ReasonCode::FileTooLarge);
    assert_eq!(reason("../outside.json"), ReasonCode::InvalidConfig);
    assert_eq!(root.source(".claude.json"), "~/.claude.json");
    // A joined root is bound by its parent: a symlinked directory out of it is refused.
    std::os::unix::fs::symlink(tmp.path(), root.dir().join("linked-dir")).expect("ln");
    let joined = root.join("linked-dir");
    assert_eq!(
        joined.read("outside.json").expect_err("escape").reason,
        ReasonCode::SymlinkOutsideRoot
    );
}

#[test]
fn diff_finds_added_removed_and_changed() {
    let ctx = ScanContext::new("/nonexistent".into(), None, "/".into(), BTreeMap::new());
    let mut a = ScanOutput::default();
    let endpoint = |url: &str| Endpoint::Http {
        url: url.into(),
        headers: vec![],
    };
    a.push(
        &ctx,
        FoundServer::new(
            "x",
            ConfigScope::User,
            "keep",
            "~/f".into(),
            endpoint("http://a"),
        ),
    );
    a.push(
        &ctx,
        FoundServer::new(
            "x",
            ConfigScope::User,
            "gone",
            "~/f".into(),
            endpoint("http://a"),
        ),
    );
    let mut b = ScanOutput::default();
    let mut off = FoundServer::new(
        "x",
        ConfigScope::User,
        "keep",
        "~/f".into(),
        endpoint("http://a"),
    );
    off.enablement = Enablement::Off(ReasonCode::DisabledInConfig, "enabled = false".into());
    b.push(&ctx, off);
    b.push(
        &ctx,
        FoundServer::new(
            "x",
            ConfigScope::User,
            "new",
            "~/f".into(),
            endpoint("http://a"),
        ),
    );
    let doc = |o: ScanOutput| o.into_document(None);
    let changes = diff(&doc(a), &doc(b));
    assert_eq!(changes.added.len(), 1);
    assert_eq!(changes.added[0].name, "new");
    assert_eq!(changes.removed[0].name, "gone");
    let fields: Vec<_> = changes.changed[0]
        .changes
        .iter()
        .map(|c| c.field.as_str())
        .collect();
    assert_eq!(fields, ["reason_code", "enabled"]);
}

/// A call-policy prediction and a note, whatever a scanner wrote in them
/// (a rule holding a token, a file under a folder named like a secret, an
/// environment value), keep no secret once they are a row: every shape
/// below, in every field, in every combination of where it sits.
#[test]
fn call_policies_and_notes_never_keep_a_planted_secret() {
    use tether_core::inventory::{CallPolicy, CallVerdict, RowNote, ToolCallPolicy};
    use tether_core::model::ProvenanceCode;
    let shapes = [
        "sk-ant-api03-Zx9planted0000000000000000",
        "ghp_planted000000000000000000000000000",
        "github_pat_11PLANTED0000000000_abcdefghijk",
        "xoxb-1111-2222-plantedslack",
        "AKIAPLANTED000000000",
        "https://user:pw-planted-77@host.example.com/mcp",
        "https://host.example.com/mcp?token=planted-query-99",
        "Bearer planted-bearer-value-123456",
        "env-value-planted-4411",
    ];
    // What each shape leaves behind if it leaks.
    let needle = |shape: &str| -> String {
        match shape.split_once("planted") {
            Some((_, rest)) => format!("planted{rest}"),
            None => shape.to_owned(),
        }
    };
    let wraps: [fn(&str) -> String; 4] = [
        |s| s.to_owned(),
        |s| format!("mcp__srv__{s}"),
        |s| format!("~/{s}/settings.json"),
        |s| format!("$CLAUDE_CODE_MANAGED_SETTINGS_PATH/{s}/managed-settings.json"),
    ];
    for shape in shapes {
        for wrap in wraps {
            let planted = wrap(shape);
            let leaf = CallPolicy {
                verdict: CallVerdict::Denied,
                headless_refuses: Some(true),
                provenance: ProvenanceCode::CurrentConfig,
                reason_code: Some(ReasonCode::DeniedByPolicy),
                rule: Some(format!("permissions.deny: {planted}")),
                source: Some(planted.clone()),
                summary: format!("denied by managed policy ({planted}): {planted}"),
                tools: Vec::new(),
            };
            let mut policy = leaf.clone();
            policy.tools = vec![ToolCallPolicy {
                tool: planted.clone(),
                policy: leaf,
            }];
            let mut found = FoundServer::new(
                "claude",
                ConfigScope::User,
                "srv",
                "~/.claude.json".into(),
                Endpoint::Stdio {
                    command: "fake-mcp".into(),
                    args: vec![],
                    env: vec![KeyValue {
                        name: "API_TOKEN".into(),
                        value: "env-value-planted-4411".into(),
                    }],
                    cwd: None,
                },
            );
            found.call_policy = Some(policy);
            found.notes.push(RowNote {
                provenance: ProvenanceCode::DocumentedRule,
                reason_code: None,
                text: format!("a note naming {planted}"),
            });
            let mut out = ScanOutput::default();
            out.push(&ScanContext::from_env(None), found);
            let json = serde_json::to_string(&out.rows).expect("json");
            let leaked = needle(shape);
            assert!(
                !json.contains(&leaked),
                "{planted:?} leaked {leaked:?} into {json}"
            );
            // The prediction itself survives the scrubbing.
            let row = &out.rows[0];
            let kept = row.call_policy.as_ref().expect("a policy");
            assert_eq!(kept.verdict, CallVerdict::Denied);
            assert_eq!(kept.tools.len(), 1);
            assert_eq!(row.notes.len(), 1);
        }
    }
}

/// An executable file (or a plain one) named `name` in `dir`.
fn put_file(dir: &std::path::Path, name: &str, executable: bool) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, "#!/bin/sh\n").expect("a file");
    let mode = if executable { 0o755 } else { 0o644 };
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("its mode");
}

/// GIVEN a PATH holding an executable a slip away from a command, a plain
/// file a slip away, or nothing near WHEN the near name is looked for THEN
/// only the executable is named, a path is never looked up, and a folder
/// past the bound is not read.
#[test]
fn the_near_command_on_path_is_an_executable_a_slip_away_and_the_look_is_bounded() {
    use crate::context::{NEAR_PATH_DIRS, near_on_path};
    let base = tempfile::tempdir().expect("a folder");
    let (near, plain, empty) = (
        base.path().join("near"),
        base.path().join("plain"),
        base.path().join("empty"),
    );
    for dir in [&near, &plain, &empty] {
        std::fs::create_dir(dir).expect("a folder");
    }
    put_file(&near, "mcp-server-time", true);
    put_file(&near, "unrelated", true);
    put_file(&plain, "mcp-server-time", false);
    let path = |dirs: &[&std::path::Path]| std::env::join_paths(dirs).expect("a PATH");
    assert_eq!(
        near_on_path("mcp-server-tiem", &path(&[&empty, &near])).as_deref(),
        Some("mcp-server-time")
    );
    assert_eq!(near_on_path("mcp-server-tiem", &path(&[&empty])), None);
    assert_eq!(
        near_on_path("mcp-server-tiem", &path(&[&plain])),
        None,
        "a file that is not executable is not meant"
    );
    assert_eq!(
        near_on_path("/opt/mcp-server-tiem", &path(&[&near])),
        None,
        "a path is not looked up on PATH"
    );
    assert_eq!(
        near_on_path("zzzzzzzzzz", &path(&[&near])),
        None,
        "nothing near"
    );
    // The near name only in a folder past the bound: not read.
    let mut dirs: Vec<std::path::PathBuf> = (0..NEAR_PATH_DIRS)
        .map(|i| {
            let d = base.path().join(format!("d{i}"));
            std::fs::create_dir(&d).expect("a folder");
            d
        })
        .collect();
    dirs.push(near.clone());
    let far = std::env::join_paths(&dirs).expect("a PATH");
    assert_eq!(near_on_path("mcp-server-tiem", &far), None);
    // Through a scan's context, as `tether inventory` looks.
    let mut ctx = ScanContext::from_env(None);
    ctx.vars.insert("PATH".into(), path(&[&near]));
    assert_eq!(
        ctx.near_command("mcp-server-tiem").as_deref(),
        Some("mcp-server-time")
    );
}
