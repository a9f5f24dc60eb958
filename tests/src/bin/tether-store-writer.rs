//! `tether-store-writer DB [PREFIX]`: writes attachment histories through a
//! hub into a store (a SQLite path, or a `postgres://` URL) as fast as it
//! can, forever, so a test can `kill -9` it in the middle of a write, or run
//! two at once on one database, and check what survives.
//!
//! Like a host, it first restores the stored sessions it writes (so a
//! restarted writer continues their revisions). Its attempts carry execution
//! id `e-PID`. It prints `restored N`, then every ten rounds
//! `ROUND stale=S failed=F`: the hub's store counters.

use std::sync::Arc;
use std::time::Duration;

use tether_core::model::{Evidence, Timestamp};
use tether_core::registry::Registry;
use tether_core::vocab::{EvidenceKind, ServerSource, Trigger};
use tether_core::{DriveMode, Endpoint, ServerSpec};
use tether_hub::{AttemptRequest, Hub, HubConfig};
use tether_store::SqliteStore;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: tether-store-writer DB [SESSION_PREFIX]");
        std::process::exit(2);
    };
    // Keeps concurrent tests on one shared database apart.
    let prefix = std::env::args().nth(2).unwrap_or_default();
    let opened: Result<Arc<dyn tether_core::store::Store>, _> =
        if tether_store::is_postgres_url(&path) {
            tether_store::PostgresStore::connect(&path).map(|s| Arc::new(s) as _)
        } else {
            SqliteStore::open(std::path::Path::new(&path)).map(|s| Arc::new(s) as _)
        };
    let store = match opened {
        Ok(store) => store,
        Err(err) => {
            eprintln!("tether-store-writer: {err}");
            std::process::exit(1);
        }
    };
    let config = HubConfig {
        persist_interval: Duration::from_millis(1),
        ..HubConfig::default()
    };
    let hub = Hub::with_store(Registry::empty(), config, Arc::clone(&store));
    let mine: Vec<_> = match store.load_all() {
        Ok(loaded) => loaded
            .histories
            .into_iter()
            .filter(|h| h.session_id.starts_with(&prefix))
            .collect(),
        Err(err) => {
            eprintln!("tether-store-writer: {err}");
            std::process::exit(1);
        }
    };
    println!("restored {}", hub.restore(mine));
    let execution = format!("e-{}", std::process::id());
    let server = ServerSpec::new(
        "srv",
        ServerSource::Profile,
        Endpoint::Stdio {
            command: "srv".into(),
            args: vec![],
            env: vec![],
            cwd: None,
        },
    );
    for n in 0u64.. {
        let session = format!("{prefix}s{}", n % 4);
        let handle = hub
            .begin_attempt(AttemptRequest::new(
                tether_core::Owner {
                    task: "t".into(),
                    session: (&session).into(),
                    execution: (&execution).into(),
                },
                "k",
                DriveMode::Acp,
                Trigger::SessionNew,
                vec![server.clone()],
            ))
            .expect("begin");
        for i in 0..50 {
            let _ = handle.sink.publish(
                Evidence::new(EvidenceKind::ToolCallObserved, Timestamp(n * 100 + i))
                    .server("srv")
                    .tool_call("echo", true),
            );
        }
        if n % 10 == 0 {
            println!(
                "{n} stale={} failed={}",
                hub.store_stale_refusals(),
                hub.store_failures()
            );
        }
    }
}
