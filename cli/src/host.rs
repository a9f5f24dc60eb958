//! What every command shares, so a subcommand's file holds only its own
//! flags and words: the store it opens (`--db`, else `TETHER_DB`, else the
//! default store in the platform's data directory,
//! `$XDG_DATA_HOME/tether/tether.db` or `~/.local/share/tether/tether.db`;
//! a SQLite file or a PostgreSQL database), the plugins' registry (the
//! compiled-in ones and every `--load`ed library, loaded once per command),
//! a hub on the two, today's configured servers, the runtime async commands
//! run on, and Ctrl-C. `collect`, `sessions import`, `serve`, `history`,
//! `inventory` and `mcp` see each other's sessions without being told where.

use crate::exit::Exit;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use tether_core::registry::{PluginSource, Registry};
use tether_core::store::Store;
use tether_store::{ChangeHint, PostgresStore, SqliteStore, is_postgres_url};

/// `--db`: declared once, flattened into every command that uses a store.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct StoreArgs {
    /// The store: a SQLite file (made on first write), or a PostgreSQL
    /// database (`postgres://host:port/db`; the password can come from
    /// PGPASSWORD or a password file instead of the URL). Without it,
    /// `TETHER_DB`, else the default store
    /// (`~/.local/share/tether/tether.db`, made on first use).
    #[arg(long, value_name = "PATH|URL")]
    db: Option<String>,
}

impl StoreArgs {
    /// The store these flags name; `Err` says what to give when there is
    /// no default (no home directory).
    pub(crate) fn at(&self) -> anyhow::Result<StoreAt> {
        store_at(self.db.as_deref())
    }

    /// The store opened to write, said first as `who`; a failure is said
    /// and is the exit code: 2 when there is no store to name (no home
    /// directory), 1 when it cannot be opened.
    pub(crate) fn open_writable(&self, who: &str) -> Result<Arc<dyn Store>, ExitCode> {
        let at = self.at().map_err(|err| {
            errln!("{who}: {err}");
            ExitCode::from(Exit::Usage)
        })?;
        at.announce(who);
        at.open_writable().map_err(|err| {
            errln!("{who}: cannot open the store {}: {err:#}", at.shown());
            ExitCode::FAILURE
        })
    }
}

/// `--load`: declared once, flattened into every command that takes
/// plugin libraries.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct PluginArgs {
    /// Load a plugin shared library (repeatable): its harnesses count as a
    /// compiled-in plugin's do.
    #[arg(long = "load", value_name = "PATH")]
    load: Vec<PathBuf>,
}

impl PluginArgs {
    /// The static plugins plus every `--load`ed library: a command calls
    /// this once and hands the registry on (a library is loaded once per
    /// command). A library that cannot be loaded is an error that names it
    /// (the process stays up).
    pub(crate) fn registry(&self) -> anyhow::Result<Registry> {
        let mut registry = Registry::with_static()?;
        for path in &self.load {
            tracing::debug!(path = %path.display(), "loading a plugin library");
            let plugin = tether_sdk::dynamic::load(path)?;
            registry.add(
                plugin,
                PluginSource::Dynamic {
                    path: path.display().to_string(),
                    abi_version: tether_sdk::dynamic::ABI_VERSION,
                },
            )?;
        }
        Ok(registry)
    }

    /// [`registry`](Self::registry), or the failure said as `who` and
    /// exit code 1.
    pub(crate) fn registry_or_say(&self, who: &str) -> Result<Registry, ExitCode> {
        self.registry().map_err(|err| {
            errln!("{who}: {err:#}");
            ExitCode::FAILURE
        })
    }
}

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

/// The store for a command given `--db` (or not).
fn store_at(given: Option<&str>) -> anyhow::Result<StoreAt> {
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

/// A store opened to read, as each kind is followed.
pub(crate) enum Opened {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
}

impl Opened {
    pub(crate) fn store(&self) -> &dyn Store {
        match self {
            Opened::Sqlite(s) => s,
            Opened::Postgres(s) => s,
        }
    }

    /// The store to follow, and what wakes its follower early: PostgreSQL's
    /// `NOTIFY` (subscribed here, before anything is read, so no change
    /// between the two is missed); SQLite is polled.
    pub(crate) fn into_followed(self) -> anyhow::Result<(Arc<dyn Store>, Option<ChangeHint>)> {
        Ok(match self {
            Opened::Postgres(store) => {
                let feed = store.listen()?;
                // A change or a resync wakes the reader; a feed that stopped
                // for good leaves the poll, never a busy loop.
                let hint: ChangeHint = Box::new(feed.into_wakeups());
                (Arc::new(store), Some(hint))
            }
            Opened::Sqlite(store) => (Arc::new(store), None),
        })
    }
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

    /// Whether this is a PostgreSQL database (else a SQLite file).
    pub(crate) fn is_postgres(&self) -> bool {
        is_postgres_url(&self.location)
    }

    /// Whether there is anything to read yet: a PostgreSQL database always
    /// is; a SQLite file once a command has written it.
    pub(crate) fn exists(&self) -> bool {
        self.is_postgres() || std::path::Path::new(&self.location).exists()
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
    pub(crate) fn open_writable(&self) -> anyhow::Result<Arc<dyn Store>> {
        self.prepare()?;
        if self.is_postgres() {
            Ok(Arc::new(PostgresStore::connect(&self.location)?))
        } else {
            Ok(Arc::new(SqliteStore::open(std::path::Path::new(
                &self.location,
            ))?))
        }
    }

    /// Opens the store to read; `None` (said as `who`) when it is a SQLite
    /// file no command has written yet.
    pub(crate) fn open_read_only(&self, who: &str) -> anyhow::Result<Option<Opened>> {
        if self.is_postgres() {
            return Ok(Some(Opened::Postgres(PostgresStore::connect_read_only(
                &self.location,
            )?)));
        }
        let path = PathBuf::from(&self.location);
        if !path.exists() {
            errln!(
                "{who}: no store at {} yet (`tether collect` or `tether sessions import` fills it; or give --db, the file a host writes, or a postgres:// URL)",
                path.display()
            );
            return Ok(None);
        }
        Ok(Some(Opened::Sqlite(SqliteStore::open_read_only(&path)?)))
    }

    /// The current attempt of every session stored here of `harnesses`
    /// (all when empty) updated since `since` (read only).
    pub(crate) fn current_attempts(
        &self,
        harnesses: &[String],
        since: Option<tether_core::model::Timestamp>,
    ) -> anyhow::Result<Vec<tether_core::history::AttachmentAttempt>> {
        let loaded = if self.is_postgres() {
            PostgresStore::connect_read_only(&self.location)?.load_all()?
        } else {
            SqliteStore::open_read_only(std::path::Path::new(&self.location))?.load_all()?
        };
        Ok(tether_core::store::current_attempts(
            loaded.histories,
            harnesses,
            since,
        ))
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

/// A hub on the store `store` names (said first as `who`), on `registry`;
/// without a home directory, a hub that keeps nothing. `None` when the
/// store cannot be opened (said).
pub(crate) fn hub_on_store(
    who: &str,
    store: &StoreArgs,
    registry: Registry,
) -> Option<Arc<tether_hub::Hub>> {
    let store = match store.at() {
        Ok(at) => {
            at.announce(who);
            match at.open_writable() {
                Ok(store) => Some(store),
                Err(err) => {
                    errln!("{who}: cannot open the store {}: {err}", at.shown());
                    return None;
                }
            }
        }
        // No home directory: the sessions are shown, not kept.
        Err(err) => {
            errln!("{who}: {err}; the sessions are shown, not kept");
            None
        }
    };
    Some(Arc::new(match store {
        Some(store) => tether_hub::Hub::with_store(registry, Default::default(), store),
        None => tether_hub::Hub::new(registry),
    }))
}

/// Today's configured servers per harness, as `tether inventory` finds them
/// (enabled rows with a usable endpoint).
pub(crate) fn configured_today()
-> std::collections::HashMap<String, Vec<tether_core::spec::ServerSpec>> {
    let ctx = tether_inventory::ScanContext::from_env(std::env::current_dir().ok());
    tether_inventory::configured_servers(&ctx)
}

/// The runtime every async subcommand runs on: two workers (the agent or
/// server, and Tether's own observation).
pub(crate) fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// A token Ctrl-C (SIGINT) cancels (call inside the runtime).
///
/// The handler is in place when this returns, not when a task first runs:
/// a command that prints its address or document after calling this
/// cannot be killed outright by a Ctrl-C sent the moment it reads that
/// line (a script, or CI, does exactly that).
pub(crate) fn cancel_on_ctrl_c() -> tokio_util::sync::CancellationToken {
    use tokio::signal::unix::{SignalKind, signal};
    let cancel = tokio_util::sync::CancellationToken::new();
    let on_signal = cancel.clone();
    match signal(SignalKind::interrupt()) {
        Ok(mut interrupt) => {
            tokio::spawn(async move {
                if interrupt.recv().await.is_some() {
                    on_signal.cancel();
                }
            });
        }
        Err(err) => tracing::debug!(%err, "cannot watch Ctrl-C; it stops the command outright"),
    }
    cancel
}

/// A flag in seconds (`--timeout`, `--startup-timeout`): 0 to 86,400,
/// fractions allowed.
pub(crate) fn parse_seconds(s: &str) -> Result<Duration, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=86_400.0).contains(&v) => Ok(Duration::from_secs_f64(v)),
        _ => Err("expected seconds between 0 and 86400".into()),
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
        assert!(at.is_postgres() && at.exists());
        let file = StoreAt {
            location: "/data/tether.db".into(),
            named: Named::Default,
        };
        assert_eq!(file.shown(), "/data/tether.db");
        assert!(!file.is_postgres());
    }
}
