//! Stamps the commit this binary was built from into `tether --version`
//! (`TETHER_COMMIT`: a short hash and the commit's date, or empty).
//!
//! Where it comes from, first found wins:
//! - `TETHER_BUILD_COMMIT` in the environment (a packager that knows better);
//! - `.cargo_vcs_info.json` beside this manifest: `cargo package` writes it
//!   into every crate it packs, so a build from crates.io knows its commit
//!   without git;
//! - `git`, only when this manifest is Tether's own `cli/` in a work tree
//!   (a crate unpacked inside someone else's repository must not take that
//!   repository's commit).
//!
//! Nothing here fails the build: no git, no `.git`, no work tree is a
//! version without a commit.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=TETHER_BUILD_COMMIT");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let vcs_info = manifest.join(".cargo_vcs_info.json");
    // Watched only where it exists: cargo reruns a build script on every
    // build while a file it watches is missing.
    if vcs_info.exists() {
        println!("cargo:rerun-if-changed={}", vcs_info.display());
    }
    let commit = std::env::var("TETHER_BUILD_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .or_else(|| from_vcs_info(&vcs_info))
        .or_else(|| from_git(&manifest))
        .unwrap_or_default();
    println!("cargo:rustc-env=TETHER_COMMIT={}", commit.trim());
}

/// The hash `cargo package` recorded (`{"git": {"sha1": "…"}}`).
fn from_vcs_info(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    // A small, fixed document: find the 40 hex digits after "sha1".
    let after = &text[text.find("\"sha1\"")? + 6..];
    let start = after.find(|c: char| c.is_ascii_hexdigit())?;
    let hash: String = after[start..]
        .chars()
        .take_while(char::is_ascii_hexdigit)
        .collect();
    (hash.len() == 40).then(|| hash[..12].to_owned())
}

/// `git`'s short hash and commit date, when this is Tether's own work tree;
/// it asks to be run again when HEAD or the branch it points at moves.
fn from_git(manifest: &Path) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .args(args)
            .current_dir(manifest)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    if git(&["rev-parse", "--show-prefix"])? != "cli/" {
        return None;
    }
    let mut watch = vec![git(&["rev-parse", "--git-path", "HEAD"])?];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch.push(git(&["rev-parse", "--git-path", &branch])?);
    }
    watch.push(git(&["rev-parse", "--git-path", "packed-refs"])?);
    for file in watch {
        let path = manifest.join(file);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    git(&[
        "log",
        "-1",
        "--no-show-signature",
        "--date=short",
        "--format=%h %cd",
        "--abbrev=12",
    ])
    .filter(|s| !s.is_empty())
}
