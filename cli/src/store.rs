//! Which store a command uses: `--db`, else `TETHER_DB`, else the default
//! store in the platform's data directory (`$XDG_DATA_HOME/tether/tether.db`,
//! else `~/.local/share/tether/tether.db`), so `collect`, `sessions import`,
//! `serve`, `history` and `inventory` see each other's sessions without
//! being told where.

use std::path::PathBuf;

/// Who named the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Named {
    /// `--db`.
    Flag,
    /// `TETHER_DB`.
    Env,
    /// Nobody: the default store.
    Default,
}

/// A command's store, and who named it.
#[derive(Debug, Clone)]
pub(crate) struct StoreAt {
    /// A SQLite path or a `postgres://` URL.
    pub(crate) location: String,
    pub(crate) named: Named,
}

/// The default store's file, when the platform has a data directory.
fn default_store() -> Option<PathBuf> {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    let data = std::env::var_os("XDG_DATA_HOME")
        .and_then(absolute)
        .or_else(|| {
            std::env::var_os("HOME")
                .and_then(absolute)
                .map(|home| home.join(".local/share"))
        })?;
    Some(data.join("tether").join("tether.db"))
}

/// The store for a command given `--db` (or not). `Err` says what to give
/// when there is no default (no home directory).
pub(crate) fn store_at(given: Option<&str>) -> anyhow::Result<StoreAt> {
    if let Some(db) = given {
        return Ok(StoreAt {
            location: db.to_owned(),
            named: Named::Flag,
        });
    }
    if let Some(db) = std::env::var("TETHER_DB")
        .ok()
        .filter(|v| !v.trim().is_empty())
    {
        return Ok(StoreAt {
            location: db,
            named: Named::Env,
        });
    }
    let path = default_store().ok_or_else(|| {
        anyhow::anyhow!(
            "no home directory for the default store: give --db PATH|URL or set TETHER_DB"
        )
    })?;
    Ok(StoreAt {
        location: path.display().to_string(),
        named: Named::Default,
    })
}

impl StoreAt {
    /// The location as it may be shown: a PostgreSQL URL without its
    /// user, password or query.
    pub(crate) fn shown(&self) -> String {
        let url = &self.location;
        let Some((scheme, rest)) = url.split_once("://") else {
            return url.clone();
        };
        let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
        let rest = rest.split_once('?').map_or(rest, |(path, _)| path);
        format!("{scheme}://{rest}")
    }

    /// The line a command prints first (on stderr, so `--json` stays one
    /// document): which store, and who named it.
    pub(crate) fn announce(&self, command: &str) {
        let why = match self.named {
            Named::Flag => "--db",
            Named::Env => "TETHER_DB",
            Named::Default => "the default store; --db or TETHER_DB for another",
        };
        errln!("{command}: store {} ({why})", self.shown());
    }

    /// Opens the store to write: the default store's directory made
    /// first ([`prepare`](Self::prepare)).
    pub(crate) fn open_writable(
        &self,
    ) -> anyhow::Result<std::sync::Arc<dyn tether_core::store::Store>> {
        self.prepare()?;
        crate::collect::open_store(&self.location)
    }

    /// Makes the default store's directory (0700) before a command writes
    /// it; a store someone named is theirs to have made.
    pub(crate) fn prepare(&self) -> std::io::Result<()> {
        use std::os::unix::fs::DirBuilderExt;
        if self.named != Named::Default {
            return Ok(());
        }
        match PathBuf::from(&self.location).parent() {
            Some(dir) => std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_postgres_url_is_shown_without_its_secrets() {
        let at = StoreAt {
            location: "postgres://tether:s3cr3t@db.example:5432/tether?sslmode=require&password=x"
                .into(),
            named: Named::Flag,
        };
        assert_eq!(at.shown(), "postgres://db.example:5432/tether");
        let file = StoreAt {
            location: "/data/tether.db".into(),
            named: Named::Default,
        };
        assert_eq!(file.shown(), "/data/tether.db");
    }
}
