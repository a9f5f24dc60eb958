//! tether-store: where a host keeps Tether's histories and inventory snapshots.
//!
//! Each store implements [`tether_core::store::Store`] (one row per session:
//! the bounded history document and its `schema_version`, replaced
//! atomically) and loads rows through [`tether_core::store::rehydrate`], so
//! older documents migrate and newer ones load conservatively.
//! - [`sqlite::SqliteStore`]: the embedded default, one SQLite file.
//!
//! Architecture invariant: a store never changes live state; the hub writes
//! through its own thread and counts failures.

pub mod sqlite;

pub use sqlite::SqliteStore;
