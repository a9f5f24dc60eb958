//! A token kept in a file across starts, so what a harness was told once
//! keeps working (`tether collect`'s stable token): read when it is there
//! and private, else made from the OS RNG and written whole, mode 0600 in a
//! 0700 directory, never over a file another start wrote first.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::Token;

/// Where a kept token came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptHow {
    /// Read from an earlier start.
    Kept,
    /// None was kept: made now, and kept.
    New,
    /// Asked for a new one: made now, replacing the kept one.
    Rotated,
}

/// Why a kept token could not be used, with what to do. Never the token.
#[derive(Debug, thiserror::Error)]
pub enum KeptError {
    /// The path is not a regular file.
    #[error("{0} is not a regular file; remove it, or ask for a new token")]
    NotAFile(String),
    /// Others can read it.
    #[error(
        "{path} can be read by others (mode {mode:o}); `chmod 600 {path}`, or ask for a new token"
    )]
    Readable {
        /// The file.
        path: String,
        /// Its permission bits.
        mode: u32,
    },
    /// It does not hold a token Tether wrote.
    #[error("{0} does not hold a token Tether wrote; ask for a new one")]
    NotAToken(String),
    /// Reading or writing failed.
    #[error("cannot {what} {path}: {source}")]
    Io {
        /// read or write.
        what: &'static str,
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// The longest file a kept token is read from.
const MAX_TOKEN_FILE: u64 = 4096;

/// The token kept at `path`, or a new one kept there (`rotate`: always a new
/// one, replacing it). A kept file that others can read, or that holds no
/// token, is an error that says what to do, never silently replaced.
pub fn keep_token(path: &Path, rotate: bool) -> Result<(Token, KeptHow), KeptError> {
    let shown = path.display().to_string();
    if !rotate {
        match std::fs::symlink_metadata(path) {
            Ok(meta) => {
                if !meta.file_type().is_file() {
                    return Err(KeptError::NotAFile(shown));
                }
                if meta.mode() & 0o077 != 0 {
                    return Err(KeptError::Readable {
                        path: shown,
                        mode: meta.mode() & 0o777,
                    });
                }
                let mut text = String::new();
                std::fs::File::open(path)
                    .and_then(|f| f.take(MAX_TOKEN_FILE).read_to_string(&mut text))
                    .map_err(|source| KeptError::Io {
                        what: "read",
                        path: shown.clone(),
                        source,
                    })?;
                let token = Token::from_secret(&text).ok_or(KeptError::NotAToken(shown))?;
                return Ok((token, KeptHow::Kept));
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(KeptError::Io {
                    what: "read",
                    path: shown,
                    source,
                });
            }
        }
    }
    let io = |what, path: &Path| {
        let path = path.display().to_string();
        move |source| KeptError::Io { what, path, source }
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(io("create", dir))?;
    let token = Token::generate();
    // Written whole to a private temporary file, then put in place: a
    // reader never sees half a token.
    let temporary: PathBuf = dir.join(format!(
        ".{}.{}",
        path.file_name()
            .map_or("token".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temporary)
            .map_err(io("write", &temporary))?;
        file.write_all(format!("{}\n", token.secret()).as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(io("write", &temporary))?;
    }
    let placed = if rotate {
        std::fs::rename(&temporary, path).map(|()| KeptHow::Rotated)
    } else {
        // Never over one another start kept meanwhile: that one wins.
        let linked = std::fs::hard_link(&temporary, path).map(|()| KeptHow::New);
        let _ = std::fs::remove_file(&temporary);
        if matches!(&linked, Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists) {
            return keep_token(path, false);
        }
        linked
    };
    let how = placed.map_err(|source| {
        let _ = std::fs::remove_file(&temporary);
        KeptError::Io {
            what: "write",
            path: shown,
            source,
        }
    })?;
    Ok((token, how))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "tether-kept-{name}-{}-{}",
            std::process::id(),
            crate::random_hex(4)
        ));
        dir.join("state").join("token")
    }

    #[test]
    fn a_token_is_made_private_then_kept_then_rotated() {
        let path = scratch("cycle");
        let (first, how) = keep_token(&path, false).expect("new");
        assert_eq!(how, KeptHow::New);
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(path.parent().expect("dir"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        let (again, how) = keep_token(&path, false).expect("kept");
        assert_eq!(how, KeptHow::Kept);
        assert_eq!(again.secret(), first.secret());
        let (rotated, how) = keep_token(&path, true).expect("rotated");
        assert_eq!(how, KeptHow::Rotated);
        assert_ne!(rotated.secret(), first.secret());
        let (kept, _) = keep_token(&path, false).expect("kept");
        assert_eq!(kept.secret(), rotated.secret());
        // No temporary file is left beside it.
        let left: Vec<_> = std::fs::read_dir(path.parent().expect("dir"))
            .expect("dir")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left.len(), 1, "{left:?}");
        let _ = std::fs::remove_dir_all(path.parent().and_then(Path::parent).expect("root"));
    }

    #[test]
    fn a_readable_or_foreign_file_is_refused_and_left_alone() {
        let path = scratch("refuse");
        keep_token(&path, false).expect("new");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let err = keep_token(&path, false).expect_err("readable");
        assert!(
            matches!(err, KeptError::Readable { mode: 0o644, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("chmod 600"), "{err}");
        std::fs::write(&path, "not a token").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let err = keep_token(&path, false).expect_err("foreign");
        assert!(matches!(err, KeptError::NotAToken(_)), "{err}");
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "not a token",
            "left as it was"
        );
        let _ = std::fs::remove_dir_all(path.parent().and_then(Path::parent).expect("root"));
    }
}
