//! Where and how to connect: a connection string and the `PG*`
//! environment resolved into a [`PgTarget`] (TLS, password file), which
//! holds the password and never prints it.

use super::*;

/// Where and how to connect, resolved from a connection string and the `PG*`
/// environment. Holds the password; never printed.
#[derive(Clone)]
pub struct PgTarget {
    pub(super) config: Config,
    pub(super) tls: PgTls,
    pub(super) shown: String,
    pub(super) scrubber: Scrubber,
}

impl std::fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl std::fmt::Display for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// Whether `spec` names a PostgreSQL database (`postgres://…`, `postgresql://…`).
pub fn is_postgres_url(spec: &str) -> bool {
    spec.starts_with("postgres://") || spec.starts_with("postgresql://")
}

pub(super) fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl PgTarget {
    /// Resolves `spec` (a `postgres://` URL or `key=value` string; empty for
    /// the environment alone). Values the string leaves out come from
    /// `PGHOST`, `PGPORT`, `PGUSER`, `PGDATABASE`, `PGPASSWORD`, then the
    /// password file (`PGPASSFILE`, else `~/.pgpass`).
    ///
    /// Also from the environment, as libpq reads them: `PGCONNECT_TIMEOUT`
    /// (else 10 s), `PGAPPNAME` (else `tether`; a string's
    /// `application_name` wins, so each host can name itself in
    /// `pg_stat_activity`), `PGOPTIONS` (say `-c search_path=tether`),
    /// `PGTARGETSESSIONATTRS` (`read-write` to skip a standby), and the TLS
    /// variables (`PGSSLMODE`, `PGSSLROOTCERT`, `PGSSLCERT`, `PGSSLKEY`).
    pub fn resolve(spec: &str) -> Result<PgTarget, StoreError> {
        Self::resolve_with(spec, &env)
    }

    pub(super) fn resolve_with(
        spec: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<PgTarget, StoreError> {
        let mut secrets: Vec<String> = Vec::new();
        if !spec.is_empty() {
            secrets.push(spec.to_owned());
        }
        // The TLS keys (`sslrootcert`, `verify-full`, …) are ours; the driver would refuse them.
        let (driver_spec, tls_settings) = take_tls_settings(spec)?;
        let tls_settings = tls_settings.with_env(env);
        let mut config = if driver_spec.is_empty() {
            Config::new()
        } else {
            Config::from_str(&driver_spec).map_err(|_| {
                StoreError::Backend(
                    "not a PostgreSQL connection string (postgres://user@host:port/db)".into(),
                )
            })?
        };
        if config.get_hosts().is_empty() {
            let host = env("PGHOST").unwrap_or_else(|| "/var/run/postgresql".into());
            for h in host.split(',') {
                if h.starts_with('/') {
                    config.host_path(h);
                } else {
                    config.host(h);
                }
            }
        }
        if config.get_ports().is_empty()
            && let Some(port) = env("PGPORT").and_then(|p| p.parse::<u16>().ok())
        {
            config.port(port);
        }
        if config.get_user().is_none() {
            let user = env("PGUSER")
                .or_else(|| env("USER"))
                .unwrap_or_else(|| "postgres".into());
            config.user(&user);
        }
        if config.get_dbname().is_none()
            && let Some(db) = env("PGDATABASE")
        {
            config.dbname(&db);
        }
        if config.get_password().is_none() {
            if let Some(password) = env("PGPASSWORD") {
                config.password(&password);
            } else if let Some(password) = password_from_file(&config, env) {
                config.password(&password);
            }
        }
        if let Some(password) = config.get_password() {
            secrets.push(String::from_utf8_lossy(password).into_owned());
        }
        if config.get_connect_timeout().is_none() {
            let seconds = env("PGCONNECT_TIMEOUT")
                .and_then(|t| t.trim().parse::<u64>().ok())
                .filter(|t| *t > 0)
                .unwrap_or(10);
            config.connect_timeout(Duration::from_secs(seconds));
        }
        if config.get_application_name().is_none() {
            config.application_name(env("PGAPPNAME").unwrap_or_else(|| "tether".into()));
        }
        if config.get_options().is_none()
            && let Some(options) = env("PGOPTIONS")
        {
            config.options(&options);
        }
        if let Some(attrs) = env("PGTARGETSESSIONATTRS")
            && !driver_spec.contains("target_session_attrs")
        {
            use tokio_postgres::config::TargetSessionAttrs;
            config.target_session_attrs(match attrs.as_str() {
                "read-write" => TargetSessionAttrs::ReadWrite,
                "read-only" => TargetSessionAttrs::ReadOnly,
                "any" => TargetSessionAttrs::Any,
                _ => {
                    return Err(StoreError::Backend(
                        "PGTARGETSESSIONATTRS must be any, read-write or read-only".into(),
                    ));
                }
            });
        }
        let home = env("HOME").map(std::path::PathBuf::from);
        let tls = PgTls::resolve(&tls_settings, home.as_deref(), only_unix_sockets(&config))?;
        config.ssl_mode(tls.mode().driver());
        let host = match config.get_hosts().first() {
            Some(Host::Tcp(h)) => h.clone(),
            Some(Host::Unix(p)) => format!("[{}]", p.display()),
            None => "?".into(),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let db = config
            .get_dbname()
            .or(config.get_user())
            .unwrap_or("postgres")
            .to_owned();
        let shown = tether_core::sanitize::cap_with_ellipsis(
            &format!("postgres://{host}:{port}/{db}"),
            200,
        );
        Ok(PgTarget {
            config,
            tls,
            shown,
            scrubber: Scrubber::new().with_secrets(secrets),
        })
    }

    /// Opens one connection. With `sslmode=prefer` (or `allow`) a failed TLS
    /// handshake is followed by a plain attempt, as libpq does; every other
    /// mode fails instead.
    pub(super) async fn connect(&self) -> Result<(Client, FeedConnection), tokio_postgres::Error> {
        match self.config.connect(self.tls.clone()).await {
            Err(err) if self.tls.mode() == SslMode::Prefer && is_tls_handshake_failure(&err) => {
                tracing::warn!(
                    target = %self.shown,
                    "the TLS handshake failed with sslmode=prefer; connecting without TLS, as libpq does"
                );
                let mut plain = self.config.clone();
                plain.ssl_mode(tokio_postgres::config::SslMode::Disable);
                plain.connect(self.tls.clone()).await
            }
            other => other,
        }
    }

    /// The TLS mode in force (`disable` on a Unix socket, whatever was asked).
    pub fn ssl_mode(&self) -> SslMode {
        self.tls.mode()
    }

    pub(super) fn only_unix_sockets(&self) -> bool {
        only_unix_sockets(&self.config)
    }

    pub(super) fn error(&self, what: &str, err: impl std::fmt::Display) -> StoreError {
        StoreError::Backend(format!(
            "{what} ({}): {}",
            self.shown,
            self.scrubber.summary(&err.to_string())
        ))
    }

    /// A driver error with its causes ("error connecting to server: Connection refused").
    pub(super) fn driver_error(&self, what: &str, err: &tokio_postgres::Error) -> StoreError {
        let mut text = err.to_string();
        let mut source = std::error::Error::source(err);
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        if text.contains("UnknownIssuer") {
            text.push_str(
                " (no root in sslrootcert signed the server's certificate; give the root that did)",
            );
        }
        self.error(what, text)
    }
}

/// Whether the driver failed in the TLS handshake itself (after the server
/// agreed to TLS), as opposed to the network or authentication.
pub(super) fn is_tls_handshake_failure(err: &tokio_postgres::Error) -> bool {
    err.to_string()
        .starts_with("error performing TLS handshake")
}

/// libpq never uses TLS on a Unix socket.
pub(super) fn only_unix_sockets(config: &Config) -> bool {
    config
        .get_hosts()
        .iter()
        .all(|h| matches!(h, Host::Unix(_)))
}

/// The password for `config` from a libpq password file
/// (`hostname:port:database:username:password`, `*` matches anything).
pub(super) fn password_from_file(
    config: &Config,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let path = env("PGPASSFILE")
        .map(std::path::PathBuf::from)
        .or_else(|| env("HOME").map(|home| std::path::Path::new(&home).join(".pgpass")))?;
    let text = std::fs::read_to_string(path).ok()?;
    let host = match config.get_hosts().first()? {
        Host::Tcp(h) => h.clone(),
        Host::Unix(_) => "localhost".into(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let db = config.get_dbname().unwrap_or("").to_owned();
    let user = config.get_user().unwrap_or("").to_owned();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_pgpass(line);
        if fields.len() != 5 {
            continue;
        }
        let matches = |field: &str, value: &str| field == "*" || field == value;
        if matches(&fields[0], &host)
            && matches(&fields[1], &port)
            && matches(&fields[2], &db)
            && matches(&fields[3], &user)
        {
            return Some(fields[4].clone());
        }
    }
    None
}

/// Splits a `.pgpass` line on unescaped colons (`\:` and `\\` are escapes).
pub(super) fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next()
                    && let Some(last) = fields.last_mut()
                {
                    last.push(next);
                }
            }
            ':' => fields.push(String::new()),
            c => {
                if let Some(last) = fields.last_mut() {
                    last.push(c);
                }
            }
        }
    }
    fields
}
