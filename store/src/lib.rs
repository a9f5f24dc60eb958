//! tether-store: where a host keeps Tether's histories and inventory snapshots.
//!
//! Each store implements [`tether_core::store::Store`] (one row per session:
//! the bounded history document and its `schema_version`, replaced
//! atomically) and loads rows through [`tether_core::store::rehydrate`], so
//! older documents migrate and newer ones load conservatively.
//! - [`sqlite::SqliteStore`]: the embedded default, one SQLite file.
//! - [`follow::StoreFollower`]: the one read-only follower of a store another
//!   process writes (`tether history --follow`, the web service's `StoreSource`).
//! - `postgres::PostgresStore` (feature `postgres`): one database shared by
//!   many hosts, with changes announced by `NOTIFY` (ids only), over TLS
//!   with libpq's `sslmode` meanings (`pg_tls`).
//!
//! Both write a session only with a newer `revision` than the one stored, so
//! no stale writer wins; [`conformance`] is the suite every store passes.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`store/`), each
//! with the test that checks it.

#![warn(missing_docs)]

pub mod conformance;
pub mod follow;
#[cfg(feature = "postgres")]
pub mod pg_tls;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod sqlite;

pub use follow::{ChangeHint, Followed, StoreFollower};
#[cfg(feature = "postgres")]
pub use pg_tls::SslMode;
#[cfg(feature = "postgres")]
pub use postgres::{Change, ChangeFeed, PgTarget, PostgresStore, is_postgres_url};
pub use sqlite::SqliteStore;

/// How a store keeps why a telemetry answer could not be parsed: its
/// JSON word (`cut_short`, `not_json`, `wrong_type`).
fn why_word(why: tether_core::model::Unparsed) -> String {
    match serde_json::to_value(why) {
        Ok(serde_json::Value::String(word)) => word,
        _ => String::new(),
    }
}

/// One stored count read back; `None` (logged) where its why is a word
/// this build does not know (written by a newer one).
fn unparsed_row(
    session_id: &str,
    attempt_id: String,
    kind: String,
    attribute: String,
    why: &str,
    count: i64,
    last_at: i64,
) -> Option<tether_core::telemetry::UnparsedTelemetry> {
    let Ok(parsed) = serde_json::from_value(serde_json::Value::String(why.to_owned())) else {
        tracing::warn!(%session_id, why, "skipping a telemetry count of an unknown why");
        return None;
    };
    Some(tether_core::telemetry::UnparsedTelemetry::new(
        session_id,
        attempt_id,
        kind,
        attribute,
        parsed,
        u64::try_from(count).unwrap_or(0),
        tether_core::model::Timestamp(u64::try_from(last_at).unwrap_or(0)),
    ))
}
