//! TLS to a real PostgreSQL with libpq's `sslmode` meanings.
//!
//! `.ci/run` starts the throwaway cluster with `ssl=on` and certificates from
//! `tests/scripts/pg-tls-certs.sh` (a root, a server certificate for
//! `DNS:localhost` only, a client certificate for role `tether_cert`, and an
//! unrelated root), and exports `TETHER_TEST_POSTGRES_TLS_DIR`. Without it
//! these tests skip loudly; with `TETHER_REQUIRE_POSTGRES=1` they must run.
//!
//! Whether a connection is encrypted is asked of the server (`pg_stat_ssl`),
//! never taken from the setting.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use tether_core::store::Store;
use tether_store::{PostgresStore, SslMode, conformance};

struct Tls {
    dir: PathBuf,
    port: u16,
    password: String,
}

impl Tls {
    fn file(&self, name: &str) -> String {
        self.dir.join(name).to_string_lossy().into_owned()
    }

    /// `postgres://tether:PASSWORD@HOST:PORT/postgres?QUERY`
    fn url(&self, host: &str, query: &str) -> String {
        format!(
            "postgres://tether:{}@{host}:{}/postgres?connect_timeout=5&{query}",
            self.password, self.port
        )
    }
}

fn tls() -> Option<Tls> {
    let found = (|| {
        let dir = PathBuf::from(std::env::var("TETHER_TEST_POSTGRES_TLS_DIR").ok()?);
        let tcp = std::env::var("TETHER_TEST_POSTGRES_TCP").ok()?;
        let password = std::env::var("TETHER_TEST_POSTGRES_PASSWORD").ok()?;
        let port = tcp.rsplit_once(':')?.1.split('/').next()?.parse().ok()?;
        dir.join("ca.crt").is_file().then_some(Tls {
            dir,
            port,
            password,
        })
    })();
    if found.is_none() {
        assert!(
            std::env::var("TETHER_REQUIRE_POSTGRES").as_deref() != Ok("1"),
            "TETHER_REQUIRE_POSTGRES=1 but TETHER_TEST_POSTGRES_TLS_DIR (with ca.crt), \
             TETHER_TEST_POSTGRES_TCP and _PASSWORD are not all set"
        );
        eprintln!(
            "SKIP: no PostgreSQL with TLS (TETHER_TEST_POSTGRES_TLS_DIR); run .ci/run for the cluster"
        );
    }
    found
}

fn connect_err(url: &str, password: &str) -> String {
    let err = PostgresStore::connect(url).expect_err("must be refused");
    let text = format!("{err} {err:?}");
    assert!(!text.contains(password), "the password leaked: {text}");
    text
}

#[test]
fn verify_full_encrypts_checks_the_chain_and_the_name_and_carries_the_store() {
    let Some(t) = tls() else { return };
    let ca = t.file("ca.crt");
    let store = PostgresStore::connect(&t.url(
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={ca}"),
    ))
    .expect("verify-full against the root that signed the server");
    let version = store.tls_version().expect("pg_stat_ssl");
    assert!(
        version.as_deref().is_some_and(|v| v.starts_with("TLSv1.")),
        "the server says this connection is encrypted: {version:?}"
    );
    let described = store.describe();
    assert!(
        described.contains("certificate and host name checked, sslmode=verify-full"),
        "{described}"
    );
    assert!(!described.contains(&t.password), "{described}");

    // The store works over it, and so does LISTEN (its own connection).
    let session = format!("tls-{}", std::process::id());
    let feed = store.listen().expect("LISTEN over TLS");
    store
        .save(&conformance::sample_history(&session, 1, "sk-tls-planted"))
        .expect("save over TLS");
    let loaded = store.load(&session).expect("load").expect("stored");
    assert_eq!(loaded.session_id, session);
    let mut heard = None;
    for _ in 0..50 {
        match feed.next(Duration::from_millis(100)).expect("feed") {
            Some(tether_store::Change::Session(id)) if id == session => {
                heard = Some(id);
                break;
            }
            _ => {}
        }
    }
    assert_eq!(
        heard.as_deref(),
        Some(session.as_str()),
        "NOTIFY arrives over TLS"
    );
    store.remove(&session).expect("remove");
}

#[test]
fn verify_full_refuses_a_host_the_certificate_does_not_name_and_verify_ca_accepts_it() {
    let Some(t) = tls() else { return };
    let ca = t.file("ca.crt");
    // The certificate names DNS:localhost only.
    let text = connect_err(
        &t.url(
            "127.0.0.1",
            &format!("sslmode=verify-full&sslrootcert={ca}"),
        ),
        &t.password,
    );
    assert!(
        text.contains("NotValidForName") || text.contains("not valid for name"),
        "says the name is wrong: {text}"
    );
    let store =
        PostgresStore::connect(&t.url("127.0.0.1", &format!("sslmode=verify-ca&sslrootcert={ca}")))
            .expect("verify-ca checks the chain only");
    assert!(store.tls_version().expect("pg_stat_ssl").is_some());
    assert!(
        store
            .describe()
            .contains("certificate checked, host name not"),
        "{}",
        store.describe()
    );
}

#[test]
fn a_certificate_from_another_root_is_refused_and_require_with_a_root_checks_it() {
    let Some(t) = tls() else { return };
    let other = t.file("other-ca.crt");
    for mode in ["verify-full", "verify-ca", "require"] {
        let text = connect_err(
            &t.url("localhost", &format!("sslmode={mode}&sslrootcert={other}")),
            &t.password,
        );
        assert!(
            text.contains("UnknownIssuer") || text.contains("unknown issuer"),
            "sslmode={mode} says who signed is unknown: {text}"
        );
    }
}

#[test]
fn require_and_prefer_encrypt_without_checking_and_disable_does_not_encrypt() {
    let Some(t) = tls() else { return };
    for (query, encrypted, mode) in [
        ("sslmode=require", true, SslMode::Require),
        ("sslmode=prefer", true, SslMode::Prefer),
        // libpq's default is prefer, and so is ours.
        ("application_name=x", true, SslMode::Prefer),
        ("sslmode=disable", false, SslMode::Disable),
    ] {
        let store = PostgresStore::connect(&t.url("127.0.0.1", query)).expect(query);
        let version = store.tls_version().expect("pg_stat_ssl");
        assert_eq!(version.is_some(), encrypted, "{query}: {version:?}");
        let resolved = tether_store::PgTarget::resolve(&t.url("127.0.0.1", query)).expect("ok");
        assert_eq!(resolved.ssl_mode(), mode, "{query}");
        if !encrypted {
            assert!(
                store.describe().contains("not encrypted, sslmode=disable"),
                "{}",
                store.describe()
            );
        }
    }
}

#[test]
fn a_client_certificate_authenticates_without_a_password_and_a_loose_key_is_refused() {
    let Some(t) = tls() else { return };
    let (ca, cert, key) = (t.file("ca.crt"), t.file("client.crt"), t.file("client.key"));
    // pg_hba: `hostssl all tether_cert 127.0.0.1/32 cert`: the certificate is the credential.
    let url = format!(
        "postgres://tether_cert@localhost:{}/postgres?sslmode=verify-full&sslrootcert={ca}&sslcert={cert}&sslkey={key}",
        t.port
    );
    let store = PostgresStore::connect_read_only(&url).expect("certificate authentication");
    assert!(store.tls_version().expect("pg_stat_ssl").is_some());

    let without = format!(
        "postgres://tether_cert@localhost:{}/postgres?connect_timeout=5&sslmode=verify-full&sslrootcert={ca}",
        t.port
    );
    let err = PostgresStore::connect_read_only(&without).expect_err("no certificate, no entry");
    assert!(
        err.to_string()
            .contains("requires a valid client certificate"),
        "the server says why: {err}"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let loose = dir.path().join("client.key");
    std::fs::copy(&key, &loose).expect("copy key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    }
    let url = format!(
        "postgres://tether_cert@localhost:{}/postgres?sslmode=verify-full&sslrootcert={ca}&sslcert={cert}&sslkey={}",
        t.port,
        loose.display()
    );
    let err = PostgresStore::connect_read_only(&url).expect_err("a key others can read");
    assert!(err.to_string().contains("chmod 600"), "{err}");
}

#[test]
fn the_cli_takes_tls_from_pgsslmode_and_pgsslrootcert_with_no_secret_on_the_command_line() {
    let Some(t) = tls() else { return };
    let url = format!("postgres://tether@localhost:{}/postgres", t.port);
    let run = |root: &str| {
        Command::new(tether_tests::workspace_bin("tether"))
            .args(["history", "--db", &url, "--json"])
            .env("PGPASSWORD", &t.password)
            .env("PGSSLMODE", "verify-full")
            .env("PGSSLROOTCERT", root)
            .env_remove("PGPASSFILE")
            .env("HOME", std::env::temp_dir().join("tether-no-home"))
            .output()
            .expect("run tether history")
    };
    let out = run(&t.file("ca.crt"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("one JSON document");

    let out = run(&t.file("other-ca.crt"));
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("TLS") || stderr.contains("certificate"),
        "{stderr}"
    );
    assert!(!stderr.contains(&t.password), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(&t.password));
}

#[test]
fn scram_is_bound_to_the_servers_certificate_when_channel_binding_is_required() {
    let Some(t) = tls() else { return };
    // The role signs in with SCRAM over TLS; `require` fails unless the
    // client offers SCRAM-SHA-256-PLUS with the certificate's hash, and the
    // server checks that hash against its own certificate.
    let store = PostgresStore::connect(&t.url(
        "localhost",
        &format!(
            "sslmode=verify-full&sslrootcert={}&channel_binding=require",
            t.file("ca.crt")
        ),
    ))
    .expect("SCRAM-SHA-256-PLUS with tls-server-end-point");
    assert!(store.tls_version().expect("pg_stat_ssl").is_some());
    // Without TLS there is nothing to bind to: refused, never downgraded.
    let text = connect_err(
        &t.url("127.0.0.1", "sslmode=disable&channel_binding=require"),
        &t.password,
    );
    assert!(text.contains("channel binding"), "{text}");
}
