//! Forward-only schema migrations under an advisory lock, recorded in
//! `tether_schema_migrations`; a newer database is refused for writing.

use super::*;

/// The newest database schema this build knows.
pub const POSTGRES_SCHEMA_VERSION: i32 = 4;

/// Forward-only migrations: (version, SQL). Each runs once, in order.
pub(super) const MIGRATIONS: &[(i32, &str)] = &[
    (
        1,
        "CREATE TABLE IF NOT EXISTS attachment_history (
             session_id TEXT PRIMARY KEY,
             task_id TEXT NOT NULL,
             schema_version INTEGER NOT NULL,
             document TEXT NOT NULL,
             updated_at BIGINT NOT NULL,
             revision BIGINT NOT NULL DEFAULT 0
         )",
    ),
    // Documents are ≈ 20 KiB of JSON, rewritten whole on every change:
    // lz4 compresses them several times faster than the default pglz. A
    // server without lz4 (before 14, or built without it) keeps pglz.
    (
        2,
        "DO $$
         BEGIN
             EXECUTE 'ALTER TABLE attachment_history ALTER COLUMN document SET COMPRESSION lz4';
         EXCEPTION WHEN OTHERS THEN
             RAISE NOTICE 'lz4 is not available here; documents keep the default compression';
         END $$",
    ),
    // The tool definition pins: hashes only, never a definition's text.
    (
        3,
        "CREATE TABLE IF NOT EXISTS tool_pin (
             server TEXT NOT NULL,
             tool TEXT NOT NULL,
             pinned TEXT,
             pinned_at BIGINT,
             seen TEXT,
             seen_at BIGINT NOT NULL,
             PRIMARY KEY (server, tool)
         )",
    ),
    // Per session and attempt, the telemetry answers that could not be
    // parsed: counts only, never what could not be parsed.
    (
        4,
        "CREATE TABLE IF NOT EXISTS telemetry_unparsed (
             session_id TEXT NOT NULL,
             attempt_id TEXT NOT NULL,
             kind TEXT NOT NULL,
             attribute TEXT NOT NULL,
             why TEXT NOT NULL,
             count BIGINT NOT NULL,
             last_at BIGINT NOT NULL,
             PRIMARY KEY (session_id, attempt_id, kind, attribute, why)
         )",
    ),
];

pub(super) async fn migrate(inner: &Inner) -> Result<(), StoreError> {
    let mut guard = inner.client().await?;
    let client = guard.as_mut().ok_or_else(closed)?;
    let fail = |e| inner.target.driver_error("migration failed", &e);
    let tx = client.transaction().await.map_err(fail)?;
    // One migrator at a time across every host sharing the database.
    tx.batch_execute(
        "SELECT pg_advisory_xact_lock(7421596302);
         CREATE TABLE IF NOT EXISTS tether_schema_migrations (
             version INTEGER PRIMARY KEY,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
         );",
    )
    .await
    .map_err(fail)?;
    let found: i32 = tx
        .query_one(
            "SELECT COALESCE(MAX(version), 0) FROM tether_schema_migrations",
            &[],
        )
        .await
        .map_err(fail)?
        .get(0);
    if found > POSTGRES_SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            found: u32::try_from(found).unwrap_or(u32::MAX),
            known: POSTGRES_SCHEMA_VERSION as u32,
        });
    }
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > found) {
        tx.batch_execute(sql).await.map_err(fail)?;
        tx.execute(
            "INSERT INTO tether_schema_migrations (version) VALUES ($1)",
            &[version],
        )
        .await
        .map_err(fail)?;
    }
    tx.commit().await.map_err(fail)
}
