//! The suite every [`Store`] passes: SQLite and PostgreSQL here, and any
//! store a host writes for its own database.
//!
//! Each check takes freshly opened handles and a `prefix` that keeps its
//! session ids apart from other data in the same database. A check returns
//! `Err(what went wrong)`; [`run_all`] runs them in order and names the one
//! that failed. What needs processes (two writers, `kill -9`) or the bytes at
//! rest lives in the test harness (`tests/tests/store_conformance.rs`), which
//! drives these same stores.

use std::sync::Arc;

use tether_core::history::AttachmentHistory;
use tether_core::model::{Evidence, Timestamp};
use tether_core::registry::Registry;
use tether_core::store::{Store, StoreError};
use tether_core::vocab::{EvidenceKind, ServerSource, Trigger};
use tether_core::{DriveMode, Endpoint, KeyValue, ServerSpec};
use tether_hub::{AttemptRequest, Hub};

/// Writes a raw row, bypassing the store's checks (for corrupt and newer rows).
pub trait RawRows {
    /// Puts `document` at `schema_version` for `session_id`, revision 0.
    fn put_raw(&self, session_id: &str, schema_version: u32, document: &str) -> Result<(), String>;
}

/// Opens a new handle on the same database (a second connection).
pub type Open<'a> = &'a dyn Fn() -> Result<Box<dyn Store>, StoreError>;

/// A realistic history for `session_id` at `revision`: one attempt with a
/// configured server, contact evidence and a tool call, built by a real hub.
/// The server's configuration carries `secret` in its env, header and
/// arguments, which must never reach a store.
pub fn sample_history(session_id: &str, revision: u64, secret: &str) -> AttachmentHistory {
    let hub = Hub::new(Registry::empty());
    let spec = ServerSpec::new(
        "srv",
        ServerSource::Profile,
        Endpoint::Stdio {
            command: "/usr/bin/mcp-srv".into(),
            args: vec![format!("--token={secret}")],
            env: vec![KeyValue::new("API_KEY", secret)],
            cwd: None,
        },
    );
    let handle = hub
        .begin_attempt(AttemptRequest::new(
            tether_core::Owner {
                task: "task".into(),
                session: session_id.into(),
                execution: "exec".into(),
            },
            "kind",
            DriveMode::Acp,
            Trigger::SessionNew,
            vec![spec],
        ))
        .expect("a fresh hub begins");
    for evidence in [
        Evidence::new(EvidenceKind::Delivered, Timestamp(1_000)).server("srv"),
        Evidence::new(EvidenceKind::ToolCallObserved, Timestamp(2_000))
            .server("srv")
            .tool_call("echo", true),
        Evidence::new(EvidenceKind::ExplicitError, Timestamp(3_000))
            .server("srv")
            .reason(
                tether_core::ReasonCode::ProtocolError,
                Some(format!("the server echoed {secret}")),
            ),
    ] {
        let _ = handle.sink.publish(evidence);
    }
    hub.flush_blocking();
    let mut history = hub.snapshot(session_id).expect("the hub holds the session");
    history.revision = revision;
    history
}

fn find<'a>(histories: &'a [AttachmentHistory], id: &str) -> Option<&'a AttachmentHistory> {
    histories.iter().find(|h| h.session_id == id)
}

fn ours(store: &dyn Store, prefix: &str) -> Result<Vec<AttachmentHistory>, String> {
    let loaded = store.load_all().map_err(|e| format!("load_all: {e}"))?;
    Ok(loaded
        .histories
        .into_iter()
        .filter(|h| h.session_id.starts_with(prefix))
        .collect())
}

/// Saved histories load back equal; a newer revision replaces the row whole.
pub fn round_trip(open: Open<'_>, prefix: &str) -> Result<(), String> {
    let store = open().map_err(|e| format!("open: {e}"))?;
    let a = sample_history(&format!("{prefix}a"), 1, "sk-conformance-a");
    let b = sample_history(&format!("{prefix}b"), 1, "sk-conformance-b");
    store.save(&a).map_err(|e| format!("save a: {e}"))?;
    store.save(&b).map_err(|e| format!("save b: {e}"))?;
    let mut a2 = a.clone();
    a2.revision = 2;
    a2.attempts.truncate(0);
    a2.current_attempt_id = None;
    store
        .save(&a2)
        .map_err(|e| format!("save a at revision 2: {e}"))?;
    // A second handle sees the same rows.
    let other = open().map_err(|e| format!("second open: {e}"))?;
    let loaded = ours(other.as_ref(), prefix)?;
    if find(&loaded, &b.session_id) != Some(&b) {
        return Err("b did not load back equal".into());
    }
    if find(&loaded, &a.session_id) != Some(&a2) {
        return Err("a was not replaced whole by its newer revision".into());
    }
    // The keyed read agrees.
    match other.load(&b.session_id) {
        Ok(Some(h)) if h == b => {}
        other => return Err(format!("load(b): {other:?}")),
    }
    match other.load(&format!("{prefix}never-written")) {
        Ok(None) => {}
        other => return Err(format!("load of an absent session: {other:?}")),
    }
    // The revision index agrees with the documents, without reading them.
    let revisions: Vec<(String, u64)> = other
        .revisions()
        .map_err(|e| format!("revisions: {e}"))?
        .into_iter()
        .filter(|(id, _)| id.starts_with(prefix))
        .collect();
    if revisions != vec![(a.session_id.clone(), 2), (b.session_id.clone(), 1)] {
        return Err(format!("revisions: {revisions:?}"));
    }
    Ok(())
}

/// `remove` drops the row; removing an absent row is not an error.
pub fn removal(open: Open<'_>, prefix: &str) -> Result<(), String> {
    let store = open().map_err(|e| format!("open: {e}"))?;
    let h = sample_history(&format!("{prefix}gone"), 1, "sk-conformance-gone");
    store.save(&h).map_err(|e| format!("save: {e}"))?;
    store
        .remove(&h.session_id)
        .map_err(|e| format!("remove: {e}"))?;
    store
        .remove(&h.session_id)
        .map_err(|e| format!("second remove: {e}"))?;
    if store
        .load(&h.session_id)
        .map_err(|e| format!("load: {e}"))?
        .is_some()
    {
        return Err("the row survived remove".into());
    }
    Ok(())
}

/// An older or equal revision is refused with `Stale` and changes nothing.
pub fn stale_writer_refused(open: Open<'_>, prefix: &str) -> Result<(), String> {
    let store = open().map_err(|e| format!("open: {e}"))?;
    let id = format!("{prefix}stale");
    let newer = sample_history(&id, 5, "sk-conformance-stale");
    store.save(&newer).map_err(|e| format!("save at 5: {e}"))?;
    let mut older = newer.clone();
    older.revision = 3;
    older.attempts.clear();
    older.current_attempt_id = None;
    for (attempt, revision) in [(&older, 3), (&newer, 5)] {
        match store.save(attempt) {
            Err(StoreError::Stale { stored, attempted })
                if stored == 5 && attempted == revision => {}
            other => {
                return Err(format!(
                    "a write at revision {revision} over 5 was not refused as stale: {other:?}"
                ));
            }
        }
    }
    if store.load(&id).map_err(|e| format!("load: {e}"))? != Some(newer.clone()) {
        return Err("a refused write changed the row".into());
    }
    let mut next = newer.clone();
    next.revision = 6;
    store.save(&next).map_err(|e| format!("save at 6: {e}"))?;
    Ok(())
}

/// `save_batch` writes each history under the same rule: newer ones land,
/// a stale one is refused on its own, and the results come back in order.
pub fn batch_writes(open: Open<'_>, prefix: &str) -> Result<(), String> {
    let store = open().map_err(|e| format!("open: {e}"))?;
    let held = sample_history(&format!("{prefix}batch-held"), 9, "sk-conformance-batch");
    store.save(&held).map_err(|e| format!("save at 9: {e}"))?;
    let first = sample_history(&format!("{prefix}batch-1"), 1, "sk-conformance-batch");
    let mut stale = held.clone();
    stale.revision = 4;
    let third = sample_history(&format!("{prefix}batch-3"), 1, "sk-conformance-batch");
    let results = store.save_batch(&[&first, &stale, &third]);
    match results.as_slice() {
        [
            Ok(()),
            Err(StoreError::Stale {
                stored: 9,
                attempted: 4,
            }),
            Ok(()),
        ] => {}
        other => return Err(format!("batch results: {other:?}")),
    }
    for want in [&first, &held, &third] {
        if store
            .load(&want.session_id)
            .map_err(|e| format!("load: {e}"))?
            .as_ref()
            != Some(want)
        {
            return Err(format!("{} is not as written", want.session_id));
        }
    }
    Ok(())
}

/// Two handles racing on one session with interleaved revisions: the row
/// ends at the highest revision either wrote, and it never went backwards.
pub fn concurrent_writers(open: Open<'_>, prefix: &str) -> Result<(), String> {
    let id = format!("{prefix}race");
    let base = sample_history(&id, 0, "sk-conformance-race");
    let stores: Vec<Arc<dyn Store>> = (0..2)
        .map(|_| open().map(Arc::from).map_err(|e| format!("open: {e}")))
        .collect::<Result<_, _>>()?;
    let threads: Vec<_> = stores
        .iter()
        .enumerate()
        .map(|(i, store)| {
            let store = Arc::clone(store);
            let mut history = base.clone();
            std::thread::spawn(move || {
                let mut refused = 0u32;
                // Writer 0 writes even revisions, writer 1 odd ones, both rising.
                for step in 0..100u64 {
                    history.revision = step * 2 + i as u64 + 1;
                    match store.save(&history) {
                        Ok(()) => {}
                        Err(StoreError::Stale { stored, attempted }) if stored >= attempted => {
                            refused += 1
                        }
                        Err(e) => return Err(format!("writer {i}: {e}")),
                    }
                }
                Ok(refused)
            })
        })
        .collect();
    for thread in threads {
        thread
            .join()
            .map_err(|_| "a writer panicked".to_owned())??;
    }
    match stores[0]
        .load(&id)
        .map_err(|e| format!("load: {e}"))?
        .as_ref()
    {
        Some(h) if h.revision == 200 => Ok(()),
        Some(h) => Err(format!(
            "the race ended at revision {}, not 200",
            h.revision
        )),
        None => Err("the raced row is missing".into()),
    }
}

/// A corrupt row is skipped and named; a row from a newer schema loads
/// conservatively (unknown words kept, unknown statuses read as unknown).
pub fn corrupt_and_newer_rows(
    open: Open<'_>,
    raw: &dyn RawRows,
    prefix: &str,
) -> Result<(), String> {
    let store = open().map_err(|e| format!("open: {e}"))?;
    let corrupt = format!("{prefix}corrupt");
    raw.put_raw(&corrupt, 1, "{not json")?;
    let newer_id = format!("{prefix}newer");
    let mut newer = serde_json::to_value(sample_history(&newer_id, 0, "sk-conformance-newer"))
        .map_err(|e| e.to_string())?;
    newer["schema_version"] = 99.into();
    newer["field_from_the_future"] = "kept or ignored, never fatal".into();
    newer["attempts"][0]["servers"][0]["status"] = "transcendent".into();
    raw.put_raw(&newer_id, 99, &newer.to_string())?;
    let loaded = store.load_all().map_err(|e| format!("load_all: {e}"))?;
    if !loaded.skipped.iter().any(|s| s.session_id == corrupt) {
        return Err("the corrupt row was not reported as skipped".into());
    }
    let Some(h) = find(&loaded.histories, &newer_id) else {
        return Err("the newer row did not load".into());
    };
    let status = h
        .attempts
        .first()
        .and_then(|a| a.servers.first())
        .map(|r| r.status);
    if status != Some(tether_core::DisplayStatus::Unknown) {
        return Err(format!("an unknown status read as {status:?}, not unknown"));
    }
    Ok(())
}

/// Tool pins: written, read back (one server's and everyone's), replaced
/// whole, and forgotten, on a second handle too; hashes only go in.
pub fn tool_pins(open: Open<'_>, prefix: &str) -> Result<(), String> {
    use tether_core::pins::{DefinitionHashes, ToolPin};
    let store = open().map_err(|e| e.to_string())?;
    let server = format!("{prefix}srv@npx");
    let other = format!("{prefix}other@https://mcp.example");
    let hashes = |d: &str| DefinitionHashes {
        description: Some(d.repeat(64)),
        input_schema: Some("f".repeat(64)),
        ..DefinitionHashes::default()
    };
    let pin = |server: &str, tool: &str, seen: Option<DefinitionHashes>| ToolPin {
        server: server.to_owned(),
        tool: tool.to_owned(),
        pinned: Some(hashes("a")),
        pinned_at: Some(Timestamp(1_000)),
        seen,
        seen_at: Timestamp(2_000),
    };
    let first = vec![
        pin(&server, "add", Some(hashes("a"))),
        pin(&server, "echo", None),
    ];
    store
        .replace_tool_pins(&server, &first)
        .map_err(|e| e.to_string())?;
    store
        .replace_tool_pins(&other, &[pin(&other, "x", Some(hashes("b")))])
        .map_err(|e| e.to_string())?;
    let again = open().map_err(|e| e.to_string())?;
    let read = again.tool_pins(Some(&server)).map_err(|e| e.to_string())?;
    if read != first {
        return Err(format!("read back {read:?}, wrote {first:?}"));
    }
    let all = again.tool_pins(None).map_err(|e| e.to_string())?;
    let ours: Vec<&ToolPin> = all
        .iter()
        .filter(|p| p.server.starts_with(prefix))
        .collect();
    if ours.len() != 3 {
        return Err(format!(
            "every server's pins: {} of ours, not 3",
            ours.len()
        ));
    }
    let replaced = vec![pin(&server, "add", Some(hashes("c")))];
    store
        .replace_tool_pins(&server, &replaced)
        .map_err(|e| e.to_string())?;
    if again.tool_pins(Some(&server)).map_err(|e| e.to_string())? != replaced {
        return Err("a replacement did not replace the server's rows".into());
    }
    if store
        .replace_tool_pins(&server, &[pin(&other, "x", None)])
        .is_ok()
    {
        return Err("a pin of another server was taken".into());
    }
    store
        .replace_tool_pins(&server, &[])
        .map_err(|e| e.to_string())?;
    if !again
        .tool_pins(Some(&server))
        .map_err(|e| e.to_string())?
        .is_empty()
    {
        return Err("a forgotten server still has pins".into());
    }
    if again
        .tool_pins(Some(&other))
        .map_err(|e| e.to_string())?
        .len()
        != 1
    {
        return Err("forgetting one server touched another".into());
    }
    Ok(())
}

/// Unparsed telemetry counts add up per session, attempt, kind, attribute
/// and why (duplicates in one call too), keep the later time, read back
/// from another handle for their session only, and go with `remove`.
pub fn unparsed_telemetry(open: Open<'_>, prefix: &str) -> Result<(), String> {
    use tether_core::model::Unparsed;
    use tether_core::telemetry::UnparsedTelemetry;
    let store = open().map_err(|e| format!("open: {e}"))?;
    let (session, other) = (format!("{prefix}tel"), format!("{prefix}tel-other"));
    let h = sample_history(&session, 1, "sk-conformance-telemetry");
    store.save(&h).map_err(|e| format!("save: {e}"))?;
    let row = |s: &str, attempt: &str, why, count, at| {
        UnparsedTelemetry::new(
            s,
            attempt,
            "tool_result",
            "tool_parameters",
            why,
            count,
            Timestamp(at),
        )
    };
    store
        .add_unparsed_telemetry(&[
            row(&session, "att_1", Unparsed::CutShort, 2, 5_000),
            row(&session, "att_1", Unparsed::CutShort, 1, 4_000),
            row(&session, "att_1", Unparsed::NotJson, 1, 6_000),
            row(&other, "att_9", Unparsed::WrongType, 7, 1_000),
        ])
        .map_err(|e| format!("add: {e}"))?;
    store
        .add_unparsed_telemetry(&[
            row(&session, "att_1", Unparsed::CutShort, 4, 3_000),
            row(&session, "att_2", Unparsed::WrongType, 1, 9_000),
        ])
        .map_err(|e| format!("second add: {e}"))?;
    let again = open().map_err(|e| format!("reopen: {e}"))?;
    let read = again
        .unparsed_telemetry(&session)
        .map_err(|e| format!("read: {e}"))?;
    let want = vec![
        row(&session, "att_1", Unparsed::CutShort, 7, 5_000),
        row(&session, "att_1", Unparsed::NotJson, 1, 6_000),
        row(&session, "att_2", Unparsed::WrongType, 1, 9_000),
    ];
    if read != want {
        return Err(format!("counts read back: {read:?}, want {want:?}"));
    }
    again.remove(&session).map_err(|e| format!("remove: {e}"))?;
    let gone = again
        .unparsed_telemetry(&session)
        .map_err(|e| format!("read after remove: {e}"))?;
    if !gone.is_empty() {
        return Err(format!("counts survived remove: {gone:?}"));
    }
    let kept = again
        .unparsed_telemetry(&other)
        .map_err(|e| format!("read the other: {e}"))?;
    if kept != vec![row(&other, "att_9", Unparsed::WrongType, 7, 1_000)] {
        return Err(format!("removing one session touched another: {kept:?}"));
    }
    again
        .remove(&other)
        .map_err(|e| format!("remove the other: {e}"))?;
    Ok(())
}

/// Runs every check; the error names the first that failed.
pub fn run_all(open: Open<'_>, raw: Option<&dyn RawRows>, prefix: &str) -> Result<(), String> {
    round_trip(open, prefix).map_err(|e| format!("round_trip: {e}"))?;
    removal(open, prefix).map_err(|e| format!("removal: {e}"))?;
    stale_writer_refused(open, prefix).map_err(|e| format!("stale_writer_refused: {e}"))?;
    batch_writes(open, prefix).map_err(|e| format!("batch_writes: {e}"))?;
    concurrent_writers(open, prefix).map_err(|e| format!("concurrent_writers: {e}"))?;
    tool_pins(open, prefix).map_err(|e| format!("tool_pins: {e}"))?;
    unparsed_telemetry(open, prefix).map_err(|e| format!("unparsed_telemetry: {e}"))?;
    if let Some(raw) = raw {
        corrupt_and_newer_rows(open, raw, prefix)
            .map_err(|e| format!("corrupt_and_newer_rows: {e}"))?;
    }
    Ok(())
}
