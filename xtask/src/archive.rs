//! The release archive: a folder `tether-VERSION-TARGET/` with the
//! binaries, the licences, the README, completions, the man page and a
//! `SHA256SUMS`, packed with `tar` (GNU tar on Linux, bsdtar on macOS and
//! Windows: both read and write gzip).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};

use crate::{BINARIES, Workspace, copy, exe, run};

/// Each shell clap_complete writes for, and the file name its own
/// conventions give the script.
const COMPLETIONS: [(&str, &str); 5] = [
    ("bash", "tether.bash"),
    ("zsh", "_tether"),
    ("fish", "tether.fish"),
    ("powershell", "_tether.ps1"),
    ("elvish", "tether.elv"),
];

/// Writes `out/tether-VERSION-TARGET.tar.gz` from the binaries in `built`,
/// and returns its path.
pub fn write(ws: &Workspace, built: &Path, target: &str, out: &Path) -> anyhow::Result<PathBuf> {
    let name = format!("tether-{}-{target}", ws.version);
    let folder = out.join(&name);
    std::fs::create_dir_all(folder.join("completions"))?;
    std::fs::create_dir_all(folder.join("man"))?;
    for (_, bin) in BINARIES {
        let file = exe(bin, target);
        copy(&built.join(&file), &folder.join(&file))?;
    }
    for doc in ["LICENSE-MIT", "LICENSE-APACHE", "README.md"] {
        copy(&ws.root.join(doc), &folder.join(doc))?;
    }
    let tether = folder.join(exe("tether", target));
    for (shell, file) in COMPLETIONS {
        let script = output_of(&tether, &["completions", shell], target)?;
        std::fs::write(folder.join("completions").join(file), script)?;
    }
    let man = output_of(&tether, &["man"], target)?;
    std::fs::write(folder.join("man/tether.1"), man)?;
    let inside = files_under(&folder)?;
    let sums = sha256sums(&folder, &inside)?;
    std::fs::write(folder.join("SHA256SUMS"), sums)?;
    let archive = out.join(format!("{name}.tar.gz"));
    run(Command::new("tar")
        // bsdtar on macOS would add AppleDouble files for extended attributes.
        .env("COPYFILE_DISABLE", "1")
        .arg("-czf")
        .arg(&archive)
        .arg("-C")
        .arg(out)
        .arg(&name))?;
    Ok(archive)
}

/// What `tether ARGS` prints; the binary must run here, so an archive is
/// built on a machine of its target.
fn output_of(tether: &Path, args: &[&str], target: &str) -> anyhow::Result<Vec<u8>> {
    let out = Command::new(tether).args(args).output().with_context(|| {
        format!(
            "could not run {} to write its completions and man page: an archive for {target} \
             is built on a {target} machine",
            tether.display()
        )
    })?;
    if !out.status.success() || out.stdout.is_empty() {
        bail!(
            "{} {} failed: {}",
            tether.display(),
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(out.stdout)
}

/// Every file under `dir`, relative to it, sorted.
fn files_under(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(next) = todo.pop() {
        for entry in std::fs::read_dir(&next)? {
            let path = entry?.path();
            if path.is_dir() {
                todo.push(path);
            } else {
                files.push(path.strip_prefix(dir)?.to_path_buf());
            }
        }
    }
    files.sort();
    Ok(files)
}

/// `sha256sum`'s format (`HASH  PATH`, forward slashes) for `files` under
/// `dir`, so `sha256sum -c SHA256SUMS` checks them there.
pub fn sha256sums(dir: &Path, files: &[PathBuf]) -> anyhow::Result<String> {
    let mut sums = String::new();
    for file in files {
        let path = dir.join(file);
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let hash = Sha256::digest(&bytes);
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        let relative = path.strip_prefix(dir).unwrap_or(file);
        let shown: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let _ = writeln!(sums, "{hex}  {}", shown.join("/"));
    }
    Ok(sums)
}
