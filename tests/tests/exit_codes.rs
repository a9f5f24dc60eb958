//! The exit-code page of the user guide (book/src/exit-codes.md) is what
//! the one type that defines the codes (cli/src/exit.rs, `Exit` and its
//! page) generates today (`TETHER_UPDATE_BOOK=1` rewrites it); and the
//! codes the page promises are the codes the commands give:
//! - GIVEN a misspelt stage, kind or harness THEN exit 2, with "did you mean";
//! - GIVEN a reader that closes the pipe at once THEN every command that
//!   prints ends quietly with 0.

use std::path::Path;
use std::process::{Command, Stdio};

fn tether() -> Command {
    Command::new(tether_tests::workspace_bin("tether"))
}

#[test]
fn the_exit_code_page_is_what_the_code_generates_today() {
    let out = tether()
        .args(["explain", "--exit-codes"])
        .output()
        .expect("tether runs");
    assert!(out.status.success());
    let fresh = String::from_utf8(out.stdout).expect("utf-8");
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../book/src/exit-codes.md");
    if std::env::var_os("TETHER_UPDATE_BOOK").is_some() {
        std::fs::write(&path, &fresh).expect("write");
        return;
    }
    let on_page = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_page == fresh,
        "book/src/exit-codes.md is behind cli/src/exit.rs: run TETHER_UPDATE_BOOK=1 cargo test -p tether-tests --test exit_codes"
    );
    for code in ["| 0 |", "| 1 |", "| 2 |", "| 3 |", "| 4 |"] {
        assert!(fresh.contains(code), "{code}");
    }
}

/// GIVEN a slip of the keyboard in a stage, a kind or a harness WHEN a
/// command reads it THEN it is a usage error (exit 2) that names what was
/// meant, never an empty answer.
#[test]
fn a_misspelt_name_is_a_usage_error_that_names_the_one_meant() {
    let home = tempfile::tempdir().expect("home");
    for (args, meant) in [
        (
            vec!["check", "x.jsonl", "--require", "time:usedd"],
            "did you mean \"used\"",
        ),
        (
            vec!["check", "x.jsonl", "--require-tool", "time/now:calable"],
            "did you mean \"callable\"",
        ),
        (
            vec!["inventory", "--kind", "mcp_servr"],
            "did you mean \"mcp_server\"",
        ),
        (
            vec!["inventory", "--harness", "claud"],
            "did you mean \"claude\"",
        ),
        (
            vec!["sessions", "list", "--harness", "gemni"],
            "did you mean \"gemini\"",
        ),
        (
            vec!["run", "--harness", "codx", "--", "true"],
            "did you mean \"codex\"",
        ),
        (
            vec!["explain", "untrusted_foldr"],
            "did you mean \"untrusted_folder\"",
        ),
    ] {
        let out = tether_tests::tether_at_home(home.path())
            .args(&args)
            .output()
            .expect("tether runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(meant), "{args:?}: {stderr}");
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("is configured"),
            "{args:?}: a typo never reads as nothing configured"
        );
    }
}

/// GIVEN a reader that has gone before the first byte (`| head -0`) WHEN
/// a command prints THEN it ends quietly: exit 0, nothing on stderr.
#[test]
fn a_closed_pipe_ends_quietly_with_0() {
    let home = tempfile::tempdir().expect("home");
    for args in [
        vec!["explain"],
        vec!["explain", "--markdown"],
        vec!["schema", "check"],
        vec!["inventory"],
        vec!["inventory", "--json"],
        vec!["sessions", "list"],
        vec!["plugins"],
    ] {
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let out = tether_tests::tether_at_home(home.path())
            .args(&args)
            .stdout(Stdio::from(writer))
            .stderr(Stdio::piped())
            .output()
            .expect("tether runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{args:?}: {stderr}");
    }
}
