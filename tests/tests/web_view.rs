//! The reference view, checked from outside Rust:
//! - TypeScript types generated from `tether schema` (json-schema-to-typescript)
//!   and `tsc --noEmit --checkJs` of `web/assets/view.js` against them, so a
//!   schema change that breaks the view fails here;
//! - the Playwright specs in `tests/web/specs/`, in Debian's Chromium, on a
//!   desktop and an emulated phone, against `tether-web-fixture` (real agents).
//!
//! Needs Node.js with `tests/web/node_modules` (`npm install` there) and
//! Chromium (`/usr/bin/chromium`, or `TETHER_CHROMIUM`). Without them the test
//! skips loudly; with `TETHER_REQUIRE_BROWSER` set (as `.ci/run` does) it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use tether_tests::workspace_bin;

fn web_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("web")
}

/// `Some(reason)` when something the view checks need is missing.
fn missing() -> Option<String> {
    let chromium = std::env::var("TETHER_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    if Command::new("node").arg("--version").output().is_err() {
        return Some("Node.js is not installed".into());
    }
    if !web_dir().join("node_modules/.bin/playwright").exists() {
        return Some("tests/web/node_modules is missing (run npm install in tests/web)".into());
    }
    if !Path::new(&chromium).exists() {
        return Some(format!(
            "Chromium is not at {chromium} (Debian's package chromium)"
        ));
    }
    None
}

fn skip_or_fail() -> bool {
    let Some(reason) = missing() else {
        return false;
    };
    assert!(
        std::env::var_os("TETHER_REQUIRE_BROWSER").is_none(),
        "{reason}, and TETHER_REQUIRE_BROWSER is set"
    );
    eprintln!(
        "SKIP (loudly): {reason}; the reference view was not type-checked or run in a browser"
    );
    true
}

fn run(program: &Path, args: &[&str], what: &str) {
    let out = Command::new(program)
        .args(args)
        .current_dir(web_dir())
        .env(
            "TETHER_BIN_DIR",
            workspace_bin("tether-web-fixture")
                .parent()
                .expect("bin dir"),
        )
        .output()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{text}");
    assert!(out.status.success(), "{what} failed:\n{text}");
}

#[test]
fn the_view_type_checks_against_the_schemas_and_passes_its_browser_specs() {
    if skip_or_fail() {
        return;
    }
    // Fresh screenshots only: an old one must not pass for this run's.
    let _ = std::fs::remove_dir_all(web_dir().join("../../target/playwright"));
    let tether = workspace_bin("tether");
    // The fixture and the agents it runs.
    for bin in [
        "tether-web-fixture",
        "tether-reference-agent",
        "tether-fake-agent",
        "tether-modern-mcp",
        "tether-bridge",
    ] {
        workspace_bin(bin);
    }
    run(
        Path::new("node"),
        &["gen-types.mjs", tether.to_str().expect("path")],
        "generating TypeScript types from tether schema",
    );
    run(
        &web_dir().join("node_modules/.bin/tsc"),
        &["-p", "tsconfig.json"],
        "tsc --noEmit --checkJs web/assets/view.js",
    );
    run(
        &web_dir().join("node_modules/.bin/playwright"),
        &["test"],
        "Playwright (desktop and mobile, Debian's Chromium)",
    );
    for shot in [
        "desktop.png",
        "mobile.png",
        "fleet-desktop.png",
        "fleet-mobile.png",
    ] {
        let path = web_dir().join("../../target/playwright").join(shot);
        assert!(path.exists(), "no screenshot at {}", path.display());
    }
}
