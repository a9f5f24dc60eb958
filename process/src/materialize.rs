//! Writing a passthrough plugin's [`MaterializedFile`]s where its CLI reads
//! them: private files into the host's private directory, project files into
//! the CLI's working directory. Every file is created new with mode 0600 and
//! never replaces one that is there (a user's own `.gemini/settings.json`
//! stays untouched: the write fails instead). Project files, and the
//! directories created for them, are removed again on drop; private files
//! go with the private directory their owner removes.

use std::io::Write;
use std::path::{Path, PathBuf};

use tether_core::passthrough::{FilePlace, MaterializedFile};

/// Files written into the CLI's working directory, removed on drop (with the
/// directories created for them, deepest first, when empty).
#[derive(Debug, Default)]
#[must_use = "dropping it removes the project files at once"]
pub struct WrittenFiles {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
}

impl WrittenFiles {
    /// Writes every file; on the first failure removes what was written and
    /// says which file failed and why (never its contents).
    pub fn write(
        files: &[MaterializedFile],
        private_dir: &Path,
        project_dir: &Path,
    ) -> Result<WrittenFiles, String> {
        let mut written = WrittenFiles::default();
        for file in files {
            if let Some(problem) = file.name_problem() {
                return Err(problem);
            }
            let path = match file.place {
                FilePlace::Private => private_dir.join(&file.name),
                FilePlace::Project => {
                    let path = project_dir.join(&file.name);
                    if let Some(parent) = path.parent() {
                        written.create_dirs(project_dir, parent)?;
                    }
                    path
                }
                _ => {
                    return Err(format!(
                        "{}: a file place this host does not know",
                        file.name
                    ));
                }
            };
            write_new(&path, &file.contents).map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    format!(
                        "{} already exists in the working directory; Tether never overwrites it (run in another directory)",
                        file.name
                    )
                } else {
                    format!("cannot write {}: {e}", file.name)
                }
            })?;
            if file.place == FilePlace::Project {
                written.files.push(path);
            }
        }
        Ok(written)
    }

    /// The project files written, in order.
    pub fn project_files(&self) -> &[PathBuf] {
        &self.files
    }

    fn create_dirs(&mut self, root: &Path, dir: &Path) -> Result<(), String> {
        let mut missing = Vec::new();
        let mut at = dir;
        while at != root && !at.exists() {
            missing.push(at.to_path_buf());
            match at.parent() {
                Some(parent) => at = parent,
                None => break,
            }
        }
        for dir in missing.into_iter().rev() {
            let mut builder = std::fs::DirBuilder::new();
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                builder.mode(0o700);
            }
            builder.create(&dir).map_err(|e| {
                format!(
                    "cannot create {}: {e}",
                    dir.strip_prefix(root).unwrap_or(&dir).display()
                )
            })?;
            self.dirs.push(dir);
        }
        Ok(())
    }
}

impl Drop for WrittenFiles {
    fn drop(&mut self) {
        for file in &self.files {
            if let Err(err) = std::fs::remove_file(file) {
                tracing::warn!(%err, "a materialized project file could not be removed");
            }
        }
        // Only directories this created, deepest first, and only when empty.
        for dir in self.dirs.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Creates `path` (which must not exist) with mode 0600 and writes it.
pub fn write_new(path: &Path, contents: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(contents.as_bytes())?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_files_are_written_0600_and_removed_with_their_new_directories() {
        let private = tempfile_dir("private");
        let project = tempfile_dir("project");
        std::fs::create_dir(project.join(".existing")).expect("mkdir");
        let files = [
            MaterializedFile::private("a.json", "{}"),
            MaterializedFile::project(".gemini/settings.json", "{\"x\":1}"),
            MaterializedFile::project(".existing/deep/mcp.json", "{}"),
        ];
        let written = WrittenFiles::write(&files, &private, &project).expect("write");
        assert!(private.join("a.json").exists());
        let settings = project.join(".gemini/settings.json");
        assert_eq!(
            std::fs::read_to_string(&settings).expect("read"),
            "{\"x\":1}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&settings)
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(written.project_files().len(), 2);
        drop(written);
        assert!(
            !project.join(".gemini").exists(),
            "created directory removed"
        );
        assert!(!project.join(".existing/deep").exists());
        assert!(
            project.join(".existing").exists(),
            "the user's directory stays"
        );
        assert!(
            private.join("a.json").exists(),
            "private files are the owner's"
        );
        let _ = std::fs::remove_dir_all(private);
        let _ = std::fs::remove_dir_all(project);
    }

    #[test]
    fn an_existing_project_file_is_never_overwritten() {
        let private = tempfile_dir("private2");
        let project = tempfile_dir("project2");
        std::fs::create_dir(project.join(".cursor")).expect("mkdir");
        std::fs::write(project.join(".cursor/mcp.json"), "mine").expect("write");
        let err = WrittenFiles::write(
            &[MaterializedFile::project(".cursor/mcp.json", "theirs")],
            &private,
            &project,
        )
        .expect_err("refused");
        assert!(err.contains("never overwrites"), "{err}");
        assert_eq!(
            std::fs::read_to_string(project.join(".cursor/mcp.json")).expect("read"),
            "mine"
        );
        for bad in ["../escape.json", "/etc/x", "a/./b", "a//b", ""] {
            let err =
                WrittenFiles::write(&[MaterializedFile::project(bad, "x")], &private, &project)
                    .expect_err(bad);
            assert!(err.contains("not a plain"), "{bad}: {err}");
        }
        let _ = std::fs::remove_dir_all(private);
        let _ = std::fs::remove_dir_all(project);
    }

    fn tempfile_dir(tag: &str) -> PathBuf {
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).expect("rng");
        let dir = std::env::temp_dir().join(format!(
            "tether-materialize-{tag}-{}",
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
        ));
        std::fs::create_dir(&dir).expect("mkdir");
        dir
    }
}
