//! What people download (`cargo xtask dist`, book/src/install.md) holds the
//! `tether` these tests run.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The unpacked archive folders `cargo xtask dist` leaves in Cargo's
/// target folder's `dist/`.
fn archive_folders(tested: &Path) -> (PathBuf, Vec<PathBuf>) {
    // target/<profile>/tether → target/dist
    let dist = tested
        .parent()
        .and_then(Path::parent)
        .map(|t| t.join("dist"))
        .expect("the tests' binary is in a profile folder");
    let folders = std::fs::read_dir(&dist)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("tether-") && n != "npm")
        })
        .collect();
    (dist, folders)
}

fn version_of(binary: &Path) -> String {
    let out = Command::new(binary)
        .arg("--version")
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", binary.display()));
    assert!(out.status.success(), "{}", binary.display());
    String::from_utf8(out.stdout).expect("utf-8")
}

/// GIVEN the archive folder `cargo xtask dist` wrote WHEN its `tether` and
/// the one the tests run print `--version` THEN both print the same
/// version and commit (and the commit is there, where git was).
#[test]
fn the_archive_s_tether_prints_the_tests_tether_s_version() {
    let tested = tether_tests::workspace_bin("tether");
    let (dist, folders) = archive_folders(&tested);
    if folders.is_empty() {
        assert!(
            std::env::var_os("TETHER_REQUIRE_DIST").is_none(),
            "TETHER_REQUIRE_DIST is set but {} holds no archive folder",
            dist.display()
        );
        eprintln!(
            "SKIP: no archive in {} (run `cargo xtask dist`; .ci/run does)",
            dist.display()
        );
        return;
    }
    let expected = version_of(&tested);
    assert!(expected.starts_with("tether "), "{expected}");
    let required = std::env::var_os("TETHER_REQUIRE_DIST").is_some();
    for folder in folders {
        let shipped = folder.join(format!("tether{}", std::env::consts::EXE_SUFFIX));
        let got = version_of(&shipped);
        // Built from another commit: an archive left from before, unless CI
        // just built it (then it must be this one).
        if !required && commit(&got) != commit(&expected) {
            eprintln!(
                "SKIP: {} is from another commit ({}; the tests' is {}): run `cargo xtask dist`",
                shipped.display(),
                got.trim(),
                expected.trim()
            );
            continue;
        }
        assert_eq!(
            got,
            expected,
            "{} is not the tether the tests run: run `cargo xtask dist` again",
            shipped.display()
        );
    }
}

/// The `(HASH DATE)` part of a `--version` line.
fn commit(version: &str) -> Option<&str> {
    version.split_once('(').map(|(_, c)| c)
}
