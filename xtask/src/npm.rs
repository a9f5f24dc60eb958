//! The npm packages, the way @openai/codex ships: a launcher
//! (`npm/tether/`, whose `bin` runs the platform package's binary) with one
//! optional dependency per platform in `npm/platforms.json`, and the
//! platform package of this target, holding the binaries. Both are staged
//! under `target/dist/npm/` and packed with `npm pack`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::{Value, json};

use crate::{BINARIES, Workspace, copy, exe};

/// One line of `npm/platforms.json`.
struct Platform {
    target: String,
    os: String,
    cpu: String,
    libc: Option<String>,
}

/// Packs the launcher and `target`'s platform package into `out`, and
/// returns the tarballs.
pub fn pack(
    ws: &Workspace,
    built: &Path,
    target: &str,
    out: &Path,
) -> anyhow::Result<Vec<PathBuf>> {
    let platforms = platforms(ws)?;
    let Some(this) = platforms.iter().find(|p| p.target == target) else {
        bail!(
            "npm/platforms.json lists no npm platform for {target}: add it there, or pass --no-npm"
        );
    };
    let launcher: Value = read_json(&ws.root.join("npm/tether/package.json"))?;
    let scope_name = launcher["name"]
        .as_str()
        .context("npm/tether/package.json: name")?;
    let stage = out.join("npm");
    let launcher_dir = stage.join("tether");
    std::fs::create_dir_all(launcher_dir.join("bin"))?;
    copy(
        &ws.root.join("npm/tether/bin/tether.js"),
        &launcher_dir.join("bin/tether.js"),
    )?;
    copy(
        &ws.root.join("npm/platforms.json"),
        &launcher_dir.join("platforms.json"),
    )?;
    copy(
        &ws.root.join("npm/tether/README.md"),
        &launcher_dir.join("README.md"),
    )?;
    let mut manifest = launcher.clone();
    manifest["version"] = json!(ws.version);
    manifest["optionalDependencies"] = platforms
        .iter()
        .map(|p| (package_name(scope_name, p), json!(ws.version)))
        .collect::<serde_json::Map<_, _>>()
        .into();
    write_package(ws, &launcher_dir, &manifest)?;

    let platform_dir = stage.join(format!("tether-{}-{}", this.os, this.cpu));
    std::fs::create_dir_all(platform_dir.join("bin"))?;
    for (_, bin) in BINARIES {
        let file = exe(bin, target);
        copy(&built.join(&file), &platform_dir.join("bin").join(&file))?;
    }
    let readme = std::fs::read_to_string(ws.root.join("npm/platform/README.md"))?;
    std::fs::write(
        platform_dir.join("README.md"),
        readme.replace("{PLATFORM}", &format!("{}-{}", this.os, this.cpu)),
    )?;
    let mut manifest = json!({
        "name": package_name(scope_name, this),
        "version": ws.version,
        "description": format!("The tether binary for {} {} (installed by {scope_name}).", this.os, this.cpu),
        "license": launcher["license"],
        "repository": launcher["repository"],
        "homepage": launcher["homepage"],
        "os": [this.os],
        "cpu": [this.cpu],
        "files": ["bin/", "README.md", "LICENSE-MIT", "LICENSE-APACHE"],
        "preferUnplugged": true,
    });
    if let Some(libc) = &this.libc {
        manifest["libc"] = json!([libc]);
    }
    write_package(ws, &platform_dir, &manifest)?;
    Ok(vec![
        npm_pack(&launcher_dir, out)?,
        npm_pack(&platform_dir, out)?,
    ])
}

/// `@scope/tether-OS-CPU` for the launcher `@scope/tether`.
fn package_name(launcher: &str, p: &Platform) -> String {
    format!("{launcher}-{}-{}", p.os, p.cpu)
}

fn platforms(ws: &Workspace) -> anyhow::Result<Vec<Platform>> {
    let doc = read_json(&ws.root.join("npm/platforms.json"))?;
    let field = |p: &Value, k: &str| p[k].as_str().map(str::to_owned);
    doc["platforms"]
        .as_array()
        .context("npm/platforms.json: platforms")?
        .iter()
        .map(|p| {
            Ok(Platform {
                target: field(p, "target").context("a platform's target")?,
                os: field(p, "os").context("a platform's os")?,
                cpu: field(p, "cpu").context("a platform's cpu")?,
                libc: field(p, "libc"),
            })
        })
        .collect()
}

fn read_json(path: &Path) -> anyhow::Result<Value> {
    let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_slice(&text).with_context(|| format!("{} is not JSON", path.display()))
}

/// `package.json` and the licences into a staged package.
fn write_package(ws: &Workspace, dir: &Path, manifest: &Value) -> anyhow::Result<()> {
    for doc in ["LICENSE-MIT", "LICENSE-APACHE"] {
        copy(&ws.root.join(doc), &dir.join(doc))?;
    }
    let mut text = serde_json::to_string_pretty(manifest)?;
    text.push('\n');
    std::fs::write(dir.join("package.json"), text)?;
    Ok(())
}

/// `npm pack` of `dir` into `out`; returns the tarball.
fn npm_pack(dir: &Path, out: &Path) -> anyhow::Result<PathBuf> {
    let npm = if cfg!(windows) { "npm.cmd" } else { "npm" };
    let output = Command::new(npm)
        .args(["pack", "--json", "--loglevel=error", "--pack-destination"])
        .arg(out)
        .current_dir(dir)
        .output()
        .context("could not run npm (install Node.js, or pass --no-npm)")?;
    if !output.status.success() {
        bail!(
            "npm pack in {} failed: {}",
            dir.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let packed: Value = serde_json::from_slice(&output.stdout).context("npm pack --json")?;
    let file = packed[0]["filename"]
        .as_str()
        .context("npm pack --json names no file")?;
    Ok(out.join(file))
}
