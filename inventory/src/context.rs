//! What a scan runs against: the home, the project, the system root and the
//! environment, read once.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use tether_core::vocab::CwdClass;

use crate::root::ConfigRoot;

/// What a scan is run against.
#[derive(Debug, Clone)]
pub struct ScanContext {
    /// The user's home directory.
    pub home: PathBuf,
    /// The project, absolute (canonical when it exists).
    pub project: Option<PathBuf>,
    /// Where system paths (`/etc/…`) are looked up; `/` normally.
    pub system_root: PathBuf,
    /// The environment variables scanners may consult (PATH, XDG_CONFIG_HOME, CODEX_HOME, …).
    pub vars: BTreeMap<String, OsString>,
}

impl ScanContext {
    /// From this process: `$HOME`, the current environment, system root `/`.
    pub fn from_env(project: Option<PathBuf>) -> Self {
        let vars: BTreeMap<String, OsString> = std::env::vars_os()
            .filter_map(|(k, v)| k.into_string().ok().map(|k| (k, v)))
            .collect();
        let home = vars
            .get("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/"));
        Self::new(home, project, PathBuf::from("/"), vars)
    }

    /// An explicit context (tests, hosts scanning for another user).
    pub fn new(
        home: PathBuf,
        project: Option<PathBuf>,
        system_root: PathBuf,
        vars: BTreeMap<String, OsString>,
    ) -> Self {
        let project = project.map(|p| std::fs::canonicalize(&p).unwrap_or(p));
        ScanContext {
            home,
            project,
            system_root,
            vars,
        }
    }

    /// A path as a harness wrote it (a key in `~/.claude.json` `projects`, a
    /// Codex trust entry), canonicalized when it exists, so that a project
    /// reached through a symlink still matches.
    pub fn resolve_written_path(&self, written: &str) -> PathBuf {
        let path = Path::new(written);
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    }

    /// Whether a path a harness wrote names the project.
    pub fn is_project(&self, written: &str) -> bool {
        self.project
            .as_ref()
            .is_some_and(|p| self.resolve_written_path(written) == *p)
    }

    /// An environment variable, when set and not empty.
    pub fn var(&self, name: &str) -> Option<&OsString> {
        self.vars.get(name).filter(|v| !v.is_empty())
    }

    /// An environment variable as UTF-8.
    pub fn var_str(&self, name: &str) -> Option<String> {
        self.var(name).and_then(|v| v.to_str()).map(str::to_owned)
    }

    /// The home directory, shown as `~`.
    pub fn home_root(&self) -> ConfigRoot {
        ConfigRoot::new(self.home.clone(), "~")
    }

    /// The project, shown as `$PROJECT`.
    pub fn project_root(&self) -> Option<ConfigRoot> {
        self.project
            .as_ref()
            .map(|p| ConfigRoot::new(p.clone(), "$PROJECT"))
    }

    /// A system directory such as `/etc/codex`, under the system root.
    pub fn system_dir(&self, absolute: &str) -> ConfigRoot {
        let rel = absolute.trim_start_matches('/');
        ConfigRoot::new(self.system_root.join(rel), absolute.trim_end_matches('/'))
    }

    /// A directory named by an environment variable (shown as `$NAME`), or
    /// `fallback` under home (shown as `~/fallback`).
    pub fn env_dir(&self, var: &str, home_fallback: &str) -> ConfigRoot {
        match self.var(var) {
            Some(dir) => ConfigRoot::new(PathBuf::from(dir), format!("${var}")),
            None => self.home_root().join(home_fallback),
        }
    }

    /// Whether a stdio command resolves: a path must be an executable file; a
    /// bare name must be one on PATH.
    pub fn command_resolves(&self, command: &str, cwd: Option<&Path>) -> bool {
        let command = command.trim();
        if command.is_empty() {
            return false;
        }
        if command.contains('/') {
            let path = Path::new(command);
            let path = if path.is_absolute() {
                path.to_path_buf()
            } else {
                cwd.or(self.project.as_deref())
                    .map(|c| c.join(path))
                    .unwrap_or_else(|| path.to_path_buf())
            };
            return is_executable(&path);
        }
        let Some(path) = self.var("PATH") else {
            return false;
        };
        std::env::split_paths(path).any(|dir| is_executable(&dir.join(command)))
    }

    /// The name on this context's PATH that `command`, a bare name on no
    /// folder of it, is a slip of ([`near_on_path`]).
    pub fn near_command(&self, command: &str) -> Option<String> {
        near_on_path(command, self.var("PATH")?)
    }

    /// The class of a stdio server's cwd.
    pub fn cwd_class(&self, cwd: Option<&str>) -> CwdClass {
        let Some(cwd) = cwd.map(str::trim).filter(|c| !c.is_empty()) else {
            return CwdClass::Unset;
        };
        let path = Path::new(cwd);
        if !path.is_absolute() {
            return CwdClass::Relative;
        }
        if !path.exists() {
            return CwdClass::Missing;
        }
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if self
            .project
            .as_ref()
            .is_some_and(|p| canonical.starts_with(p))
        {
            CwdClass::Project
        } else if canonical.starts_with(std::fs::canonicalize(&self.home).unwrap_or_default()) {
            CwdClass::Home
        } else {
            CwdClass::Other
        }
    }
}

/// At most this many folders of PATH are looked in for a near name.
pub const NEAR_PATH_DIRS: usize = 64;
/// At most this many names are read, over all of PATH's folders (a PATH
/// can hold thousands of files).
pub const NEAR_PATH_NAMES: usize = 20_000;
/// At most this many near names are looked at (the nearest first) for one
/// that is an executable file.
const NEAR_PATH_LOOKS: usize = 4;

/// The executable on `path` (a `PATH` value) whose name `command`, a bare
/// name on no folder of it, is a slip of ("did you mean",
/// [`tether_words::near::nearest`]): `mcp-server-time` for
/// `mcp-server-tiem`. Bounded: names only are read (no file is looked at
/// but the few nearest, one of which must be an executable file), from
/// the first [`NEAR_PATH_DIRS`] folders, [`NEAR_PATH_NAMES`] names in all. A path
/// (a name with a `/`) is never looked up on PATH: `None`.
pub fn near_on_path(command: &str, path: &std::ffi::OsStr) -> Option<String> {
    let command = command.trim();
    if command.is_empty() || command.contains('/') {
        return None;
    }
    let letters = command.chars().count();
    let dirs: Vec<PathBuf> = std::env::split_paths(path)
        .filter(|d| d.is_absolute())
        .take(NEAR_PATH_DIRS)
        .collect();
    let mut budget = NEAR_PATH_NAMES;
    let mut names: Vec<String> = Vec::new();
    for dir in &dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.take(budget) {
            budget -= 1;
            let Ok(entry) = entry else { continue };
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            // At most two edits apart: the lengths differ by two at most.
            if !name.starts_with('.')
                && name.chars().count().abs_diff(letters) <= 2
                && !names.contains(&name)
            {
                names.push(name);
            }
        }
        if budget == 0 {
            break;
        }
    }
    // The nearest that is an executable file (a few looked at, at most).
    for _ in 0..NEAR_PATH_LOOKS {
        let meant = tether_words::near::nearest(command, &names)?.to_owned();
        if dirs.iter().any(|d| is_executable(&d.join(&meant))) {
            return Some(meant);
        }
        names.retain(|n| *n != meant);
    }
    None
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
