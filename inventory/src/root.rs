//! Safe reads: the only way scanners touch files.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use tether_core::sanitize;
use tether_core::vocab::ReasonCode;

/// Configuration files larger than this are refused.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// A directory configuration is read from, and how it is shown.
#[derive(Debug, Clone)]
pub struct ConfigRoot {
    dir: PathBuf,
    /// What reads must stay inside: the top root this one was joined from.
    bound: PathBuf,
    shown: String,
    /// For a root made from one file a variable names: that file's name.
    single_file: Option<String>,
    /// `bound`'s real path, resolved once for this root and every root
    /// joined from it (a record source's files are opened one by one: the
    /// root was resolved again for each, about a third of its `readlink`s).
    /// Kept only once resolved: a root that appears later is still found.
    /// Resolved once, a root relinked during a run refuses what it now
    /// reaches, never the reverse.
    bound_real: std::sync::Arc<std::sync::OnceLock<PathBuf>>,
}

/// Why a file could not be used: a reason and a safe summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadFailure {
    /// The reason.
    pub reason: ReasonCode,
    /// A safe sentence (no content, no absolute path).
    pub summary: String,
}

impl ReadFailure {
    fn new(reason: ReasonCode, summary: impl Into<String>) -> Self {
        ReadFailure {
            reason,
            summary: summary.into(),
        }
    }
}

const ELOOP: i32 = 40;

impl ConfigRoot {
    /// A root at `dir`, shown as `shown`.
    pub fn new(dir: PathBuf, shown: impl Into<String>) -> Self {
        ConfigRoot {
            bound: dir.clone(),
            dir,
            shown: shown.into(),
            single_file: None,
            bound_real: Default::default(),
        }
    }

    /// A root for the one file an environment variable names (for example
    /// `OPENCODE_CONFIG`), shown as `$NAME`; returns it with the relative name
    /// to read. The file's directory is the root, so a symlink out of it is
    /// refused like any other.
    pub fn named_file(path: &Path, var: &str) -> Option<(ConfigRoot, String)> {
        let name = path.file_name()?.to_str()?.to_owned();
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty())?;
        Some((
            ConfigRoot {
                dir: dir.to_path_buf(),
                bound: dir.to_path_buf(),
                shown: format!("${var}"),
                single_file: Some(name.clone()),
                bound_real: Default::default(),
            },
            name,
        ))
    }

    /// The directory (for the scanner's own lookups, never for display).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A sub-root (shown with the relative path appended). Reads through it
    /// still stay inside this root: a symlinked `~/.claude` that points out
    /// of the home is not followed.
    pub fn join(&self, rel: &str) -> ConfigRoot {
        ConfigRoot {
            dir: self.dir.join(rel),
            bound: self.bound.clone(),
            shown: self.source(rel),
            single_file: None,
            bound_real: self.bound_real.clone(),
        }
    }

    /// How `rel` under this root is shown: `~/.claude.json`, `$PROJECT/.mcp.json`, …
    pub fn source(&self, rel: &str) -> String {
        let rel = rel.trim_start_matches('/');
        let shown = if rel.is_empty() || self.single_file.as_deref() == Some(rel) {
            self.shown.clone()
        } else {
            format!("{}/{rel}", self.shown.trim_end_matches('/'))
        };
        // Relative names come from the scanner or a directory walk; keep them bounded and scrubbed.
        sanitize::cap_with_ellipsis(&shown, 300)
    }

    /// Reads `rel`: `Ok(None)` when it does not exist; an error when it exists
    /// but cannot be used (too large, unreadable, a special file, a symlink
    /// loop or a symlink out of this root).
    pub fn read(&self, rel: &str) -> Result<Option<String>, ReadFailure> {
        match self.contained(rel)? {
            Some(real) => read_capped(&real).map(Some),
            None => Ok(None),
        }
    }

    /// Opens `rel` for reading, with [`read`](Self::read)'s containment
    /// checks (no path out of the root, no symlink out of it, no special
    /// file) but no size cap: for files read as a stream, in bounded
    /// pieces, by their caller. `Ok(None)` when it does not exist. The file
    /// is opened read-only and never locked.
    pub fn open(&self, rel: &str) -> Result<Option<(std::fs::File, u64)>, ReadFailure> {
        let Some(real) = self.contained(rel)? else {
            return Ok(None);
        };
        open_regular(&real).map(Some)
    }

    /// The real path of `rel`, checked to stay inside the root.
    fn contained(&self, rel: &str) -> Result<Option<PathBuf>, ReadFailure> {
        let rel_path = Path::new(rel);
        if rel_path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::RootDir))
        {
            return Err(ReadFailure::new(
                ReasonCode::InvalidConfig,
                "a path that leaves its root",
            ));
        }
        let path = self.dir.join(rel_path);
        match std::fs::symlink_metadata(&path) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) if e.raw_os_error() == Some(ELOOP) => {
                return Err(ReadFailure::new(ReasonCode::SymlinkLoop, "symlinks loop"));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => return Ok(None),
            Err(e) => {
                return Err(ReadFailure::new(
                    ReasonCode::Unreadable,
                    format!("cannot inspect it: {}", e.kind()),
                ));
            }
        }
        let root = match self.bound_real.get() {
            Some(root) => root.clone(),
            None => {
                let Ok(root) = std::fs::canonicalize(&self.bound) else {
                    return Ok(None);
                };
                self.bound_real.get_or_init(|| root).clone()
            }
        };
        let real = match std::fs::canonicalize(&path) {
            Ok(real) => real,
            Err(e) if e.raw_os_error() == Some(ELOOP) => {
                return Err(ReadFailure::new(ReasonCode::SymlinkLoop, "symlinks loop"));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ReadFailure::new(
                    ReasonCode::Unreadable,
                    "a symlink that points nowhere",
                ));
            }
            Err(e) => {
                return Err(ReadFailure::new(
                    ReasonCode::Unreadable,
                    format!("cannot resolve it: {}", e.kind()),
                ));
            }
        };
        if !real.starts_with(&root) {
            return Err(ReadFailure::new(
                ReasonCode::SymlinkOutsideRoot,
                format!(
                    "a symlink to somewhere outside {}; not followed",
                    self.shown
                ),
            ));
        }
        Ok(Some(real))
    }

    /// Files named one of `names` under `rel`, at most `max_depth` directories
    /// deep, as paths relative to this root, sorted. Symlinked directories are
    /// not entered; at most 10 000 entries are looked at.
    pub fn find_files(&self, rel: &str, names: &[&str], max_depth: usize) -> Vec<String> {
        self.find_files_where(rel, max_depth, |name| names.contains(&name))
    }

    /// Files whose name `matches` under `rel` (`*.json` in a hooks folder,
    /// say), with [`find_files`](Self::find_files)' bounds.
    pub fn find_files_where(
        &self,
        rel: &str,
        max_depth: usize,
        matches: impl Fn(&str) -> bool,
    ) -> Vec<String> {
        let mut found = Vec::new();
        let mut budget = 10_000usize;
        let mut stack = vec![(rel.trim_end_matches('/').to_owned(), 0usize)];
        while let Some((dir, depth)) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(self.dir.join(&dir)) else {
                continue;
            };
            for entry in entries.flatten() {
                if budget == 0 {
                    return found;
                }
                budget -= 1;
                let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                let child = if dir.is_empty() {
                    name.clone()
                } else {
                    format!("{dir}/{name}")
                };
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    if depth < max_depth {
                        stack.push((child, depth + 1));
                    }
                } else if matches(&name) {
                    found.push(child);
                }
            }
        }
        found.sort();
        found
    }
}

/// Reads a regular file of at most [`MAX_CONFIG_BYTES`] as UTF-8 text: the
/// size is checked before and while reading, and special files (a FIFO would
/// block) are refused. Used by [`ConfigRoot::read`] after its containment
/// checks, and by `tether endpoint-test --config` for the file a user names.
pub fn read_capped(path: &Path) -> Result<String, ReadFailure> {
    let (file, len) = open_regular(path)?;
    if len > MAX_CONFIG_BYTES {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| {
            ReadFailure::new(
                ReasonCode::Unreadable,
                format!("cannot read it: {}", e.kind()),
            )
        })?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_large());
    }
    String::from_utf8(bytes)
        .map_err(|_| ReadFailure::new(ReasonCode::InvalidConfig, "not UTF-8 text"))
}

/// Opens a regular file read-only, with its length: a special file is
/// refused before it is opened (opening a FIFO would block).
fn open_regular(path: &Path) -> Result<(std::fs::File, u64), ReadFailure> {
    let meta = std::fs::metadata(path).map_err(|e| {
        ReadFailure::new(
            ReasonCode::Unreadable,
            format!("cannot inspect it: {}", e.kind()),
        )
    })?;
    if !meta.is_file() {
        return Err(ReadFailure::new(
            ReasonCode::InvalidConfig,
            "not a regular file",
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| {
        ReadFailure::new(
            ReasonCode::Unreadable,
            format!("cannot open it: {}", e.kind()),
        )
    })?;
    Ok((file, meta.len()))
}

fn too_large() -> ReadFailure {
    ReadFailure::new(
        ReasonCode::FileTooLarge,
        format!("larger than {} KiB; not read", MAX_CONFIG_BYTES / 1024),
    )
}
