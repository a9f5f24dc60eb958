use super::*;

/// A fake server on 127.0.0.1: the first connection agrees to TLS
/// (`S`) and then hangs up mid-handshake; any later one answers the
/// plain startup message with a FATAL error naming itself. Returns the
/// port and how many connections it saw.
fn tls_breaking_server() -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming().take(4) {
            let Ok(mut stream) = stream else { return };
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let mut length = [0u8; 4];
            if stream.read_exact(&mut length).is_err() {
                continue;
            }
            let mut rest = vec![0u8; (u32::from_be_bytes(length) as usize).saturating_sub(4)];
            let _ = stream.read_exact(&mut rest);
            if n == 0 {
                // SSLRequest: yes, then no TLS at all.
                let _ = stream.write_all(b"S");
            } else {
                let mut fields = Vec::new();
                for (code, text) in [
                    (b'S', "FATAL"),
                    (b'C', "28000"),
                    (b'M', "plain attempt reached"),
                ] {
                    fields.push(code);
                    fields.extend_from_slice(text.as_bytes());
                    fields.push(0);
                }
                fields.push(0);
                let mut message = vec![b'E'];
                message.extend_from_slice(&(fields.len() as u32 + 4).to_be_bytes());
                message.extend_from_slice(&fields);
                let _ = stream.write_all(&message);
            }
        }
    });
    (port, seen)
}

#[test]
fn libpq_environment_variables_fill_what_the_string_leaves_out() {
    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    let env = vars(&[
        ("PGCONNECT_TIMEOUT", "3"),
        ("PGAPPNAME", "host-42"),
        ("PGOPTIONS", "-c search_path=tether"),
        ("PGTARGETSESSIONATTRS", "read-write"),
    ]);
    let t = PgTarget::resolve_with("postgres://u@db/fleet", &env).expect("resolve");
    assert_eq!(
        t.config.get_connect_timeout(),
        Some(&Duration::from_secs(3))
    );
    assert_eq!(t.config.get_application_name(), Some("host-42"));
    assert_eq!(t.config.get_options(), Some("-c search_path=tether"));
    assert_eq!(
        t.config.get_target_session_attrs(),
        tokio_postgres::config::TargetSessionAttrs::ReadWrite
    );
    // The string wins over the environment.
    let t = PgTarget::resolve_with(
        "postgres://u@db/fleet?application_name=mine&connect_timeout=7",
        &env,
    )
    .expect("resolve");
    assert_eq!(t.config.get_application_name(), Some("mine"));
    assert_eq!(
        t.config.get_connect_timeout(),
        Some(&Duration::from_secs(7))
    );
    // Nothing set: tether, 10 s.
    let none = |_: &str| None;
    let t = PgTarget::resolve_with("postgres://u@db/fleet", &none).expect("resolve");
    assert_eq!(t.config.get_application_name(), Some("tether"));
    assert_eq!(
        t.config.get_connect_timeout(),
        Some(&Duration::from_secs(10))
    );
    let bad = vars(&[("PGTARGETSESSIONATTRS", "primary-ish")]);
    assert!(PgTarget::resolve_with("postgres://u@db/fleet", &bad).is_err());
}

#[test]
fn prefer_falls_back_to_plain_when_the_tls_handshake_fails_and_require_does_not() {
    let (port, seen) = tls_breaking_server();
    let spec = format!("postgres://u:pw@127.0.0.1:{port}/db?sslmode=prefer&connect_timeout=5");
    let err = PostgresStore::connect(&spec).expect_err("the fake refuses everyone");
    assert!(
        err.to_string().contains("plain attempt reached"),
        "a plain attempt followed the failed handshake: {err}"
    );
    assert_eq!(seen.load(Ordering::SeqCst), 2);

    let (port, seen) = tls_breaking_server();
    let spec = format!("postgres://u:pw@127.0.0.1:{port}/db?sslmode=require&connect_timeout=5");
    let err = PostgresStore::connect(&spec).expect_err("TLS is required");
    assert!(err.to_string().contains("TLS handshake"), "{err}");
    assert_eq!(seen.load(Ordering::SeqCst), 1, "no plain attempt");
    assert!(!format!("{err:?}").contains(":pw@"));
}

#[test]
fn pgpass_lines_split_on_unescaped_colons() {
    assert_eq!(
        split_pgpass(r"host:5432:db:user:pa\:ss\\word"),
        vec!["host", "5432", "db", "user", r"pa:ss\word"]
    );
}

#[test]
fn a_resolved_target_never_shows_its_password() {
    let target =
        PgTarget::resolve("postgres://alice:sk-pg-planted@db.internal:6543/fleet?sslmode=disable")
            .expect("resolve");
    let shown = format!("{target} {target:?}");
    assert_eq!(target.to_string(), "postgres://db.internal:6543/fleet");
    assert!(!shown.contains("sk-pg-planted"), "{shown}");
    assert!(!shown.contains("alice"), "{shown}");
    let err = target.error(
        "cannot connect",
        "password authentication failed: sk-pg-planted",
    );
    assert!(!err.to_string().contains("sk-pg-planted"), "{err}");
}

#[test]
fn a_malformed_string_is_refused_without_echoing_it() {
    let err = PgTarget::resolve("postgres://u:sk-pg-bad@host:notaport/db").expect_err("malformed");
    assert!(!err.to_string().contains("sk-pg-bad"), "{err}");
}
