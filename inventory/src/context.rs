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

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
