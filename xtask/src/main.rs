//! Tether's release tasks, run as `cargo xtask …` (the alias is in
//! `.cargo/config.toml`).
//!
//! `cargo xtask dist [--profile NAME] [--target TRIPLE] [--no-npm] [--no-build]`
//! builds the binaries people download (the `dist` profile unless told
//! otherwise; `--no-build` takes those already built, as CI does after its
//! own build) and writes into `target/dist/`, after emptying it:
//! - `tether-VERSION-TARGET.tar.gz`: one folder holding the binaries
//!   (`tether`, the `tether-relay` and `tether-bridge` it starts from beside
//!   itself, and `tether-reference-agent` for the tour), LICENSE-MIT,
//!   LICENSE-APACHE, README.md, `completions/` and `man/tether.1` (made by
//!   the built binary itself), and a `SHA256SUMS` of all of them;
//! - the npm packages, packed with `npm pack`: the launcher
//!   (`npm/tether/`) and this target's platform package (`npm/platform/`),
//!   for the targets `npm/platforms.json` lists;
//! - `SHA256SUMS`: the archive and the npm tarballs.

mod archive;
mod npm;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// The binaries an archive holds: (package, binary).
const BINARIES: [(&str, &str); 4] = [
    ("tether-mcp-cli", "tether"),
    ("tether-relay", "tether-relay"),
    ("tether-kandev-endpoint", "tether-bridge"),
    ("tether-reference-agent", "tether-reference-agent"),
];

/// What `cargo xtask dist` was asked for.
struct Dist {
    profile: String,
    target: Option<String>,
    npm: bool,
    build: bool,
}

/// What the workspace says about itself (`cargo metadata`).
pub struct Workspace {
    /// The workspace's root folder.
    pub root: PathBuf,
    /// Cargo's target folder (`CARGO_TARGET_DIR` respected).
    pub target_dir: PathBuf,
    /// The CLI's version.
    pub version: String,
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("dist") => dist(parse_dist(&args[1..])?),
        _ => bail!(
            "usage: cargo xtask dist [--profile dist|release|dev] [--target TRIPLE] [--no-npm] [--no-build]\n\
             (the book's install page, book/src/install.md, says what it writes)"
        ),
    }
}

fn parse_dist(args: &[String]) -> anyhow::Result<Dist> {
    let mut dist = Dist {
        profile: "dist".into(),
        target: None,
        npm: true,
        build: true,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--profile" => dist.profile = it.next().context("--profile needs a name")?.clone(),
            "--target" => dist.target = Some(it.next().context("--target needs a triple")?.clone()),
            "--no-npm" => dist.npm = false,
            "--no-build" => dist.build = false,
            other => bail!("cargo xtask dist: unknown argument {other:?}"),
        }
    }
    Ok(dist)
}

fn dist(dist: Dist) -> anyhow::Result<()> {
    let ws = workspace()?;
    let target = match &dist.target {
        Some(t) => t.clone(),
        None => host_target()?,
    };
    let built = build(&ws, &dist, &target)?;
    let out = ws.target_dir.join("dist");
    if out.exists() {
        std::fs::remove_dir_all(&out).with_context(|| format!("emptying {}", out.display()))?;
    }
    std::fs::create_dir_all(&out)?;
    let mut artifacts = vec![archive::write(&ws, &built, &target, &out)?];
    if dist.npm {
        artifacts.extend(npm::pack(&ws, &built, &target, &out)?);
    }
    let sums = archive::sha256sums(&out, &artifacts)?;
    std::fs::write(out.join("SHA256SUMS"), &sums)?;
    println!("wrote {}:", out.display());
    print!("{sums}");
    Ok(())
}

/// Builds every binary of [`BINARIES`] with `profile` for `target`, and
/// returns the folder they are in.
fn build(ws: &Workspace, dist: &Dist, target: &str) -> anyhow::Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&ws.root)
        .args(["build", "--locked", "--profile", &dist.profile]);
    for (package, bin) in BINARIES {
        cmd.args(["-p", package, "--bin", bin]);
    }
    if let Some(t) = &dist.target {
        cmd.args(["--target", t]);
    }
    if dist.build {
        run(&mut cmd)?;
    }
    let profile_dir = match dist.profile.as_str() {
        "dev" | "test" => "debug",
        "bench" => "release",
        other => other,
    };
    let mut dir = ws.target_dir.clone();
    if dist.target.is_some() {
        dir.push(target);
    }
    Ok(dir.join(profile_dir))
}

/// The workspace's root, target folder and the CLI's version.
fn workspace() -> anyhow::Result<Workspace> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .context("running cargo metadata")?;
    if !out.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let text = |v: &serde_json::Value| v.as_str().map(PathBuf::from).context("cargo metadata");
    let version = meta["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == BINARIES[0].0)
        .and_then(|p| p["version"].as_str())
        .context("cargo metadata names no tether-mcp-cli")?
        .to_owned();
    Ok(Workspace {
        root: text(&meta["workspace_root"])?,
        target_dir: text(&meta["target_directory"])?,
        version,
    })
}

/// The host's target triple (`rustc -vV`).
fn host_target() -> anyhow::Result<String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .context("running rustc -vV")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .map(str::to_owned)
        .context("rustc -vV names no host")
}

/// Runs `cmd`, failing with its command line when it fails.
pub fn run(cmd: &mut Command) -> anyhow::Result<()> {
    let status = cmd
        .status()
        .with_context(|| format!("could not start {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed: {status}");
    }
    Ok(())
}

/// `name` with this target's executable suffix.
pub fn exe(name: &str, target: &str) -> String {
    if target.contains("windows") {
        format!("{name}.exe")
    } else {
        name.to_owned()
    }
}

/// Copies `from` to `to`, saying which when it cannot.
pub fn copy(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::copy(from, to)
        .map(drop)
        .with_context(|| format!("copying {} to {}", from.display(), to.display()))
}
