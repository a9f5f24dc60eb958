//! Reading session records across processes (`Records::keep_in`): a file
//! read in any split of appends, each part by a separate `Records` sharing
//! one store's ledger, gives the sessions a whole read gives; so does a
//! file replaced by a shorter one, one cut short, one rewritten in place
//! with the same size; one that vanished is marked gone in the ledger and
//! its sessions stay in the store.
//! An import of what did not change reads nothing and writes nothing.
//! A session id checked once per run of records is never skipped for
//! another (a planted secret between real ones is refused each time).

#[path = "../benches/corpus/claude.rs"]
#[allow(dead_code)]
mod corpus;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use proptest::prelude::*;
use tether_core::history::AttachmentHistory;
use tether_core::records::{FileReport, SessionSummary};
use tether_core::registry::Registry;
use tether_core::store::Store;
use tether_records::{Filter, Home, Records};
use tether_store::SqliteStore;
// Links the compiled-in plugins (the Claude reader among them).
use tether_tests as _;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Claude Code's files under `home` as `tether sessions` reads them, with
/// `store`'s ledger where given.
fn records(home: &Path, store: Option<&Arc<SqliteStore>>) -> Records {
    let registry = Registry::with_static().expect("registry");
    let vars = HashMap::from([(
        "XDG_CACHE_HOME".to_owned(),
        home.join(".cache").display().to_string(),
    )]);
    let mut records = Records::new(
        &registry,
        &Home::new(home, vars),
        HashMap::new(),
        Filter {
            harnesses: vec!["claude".into()],
            ..Filter::default()
        },
    );
    if let Some(store) = store {
        records.keep_in(Arc::clone(store) as Arc<dyn Store>);
    }
    records
}

/// What `tether sessions list --json` shows of a read: each session's
/// summary and history, and each file's report.
type Shown = (Vec<(SessionSummary, AttachmentHistory)>, Vec<FileReport>);

fn shown(records: &mut Records) -> Shown {
    records.read(true);
    (records.summaries(), records.files())
}

/// What `tether sessions list` prints of a read: each session's summary,
/// each file's report and the reader notes.
type Listed = (
    Vec<SessionSummary>,
    Vec<FileReport>,
    Vec<tether_core::records::ReaderNote>,
);

/// A listing of `home` with `store`'s ledger and kept summaries
/// (`Records::listing_only`, as `tether sessions list` reads), and how
/// many files it read.
fn listed(home: &Path, store: &Arc<SqliteStore>) -> (Listed, usize) {
    let mut records = records(home, Some(store));
    records.listing_only();
    let pass = records.read(true);
    let listing = records.listing();
    (
        (listing, records.files(), records.reader_notes()),
        pass.files_read,
    )
}

/// A whole read of `home` as a listing shows it, with no ledger.
fn whole_listed(home: &Path) -> Listed {
    let mut records = records(home, None);
    records.read(true);
    let summaries = records.summaries().into_iter().map(|(s, _)| s).collect();
    (summaries, records.files(), records.reader_notes())
}

/// The files of a home: a generated session with its sub-agent's
/// transcript, the real transcripts of other releases, and the recorded
/// test home's transcript and server logs (a second source).
fn contents() -> Vec<(PathBuf, Vec<u8>)> {
    let scratch = tempfile::tempdir().expect("scratch");
    corpus::session(
        scratch.path(),
        1,
        "0a1b2c3d-5e6f-4a7b-8c9d-000000000001",
        3,
        48 << 10,
        Some(("a0f0f0", 20 << 10)),
    )
    .expect("generated");
    let real = fixtures().join("records-real");
    for (i, name) in [
        "claude-2.1.38-subagent.jsonl",
        "claude-2.1.39-progress-rejection.jsonl",
        "claude-2.1.14-stop-feedback.jsonl",
    ]
    .iter()
    .enumerate()
    {
        let id = format!("0a1b2c3d-5e6f-4a7b-8c9d-00000000010{i}");
        corpus::replicate_one(&real.join(name), scratch.path(), 2, &id).expect("copied");
    }
    let mut out = Vec::new();
    for root in [scratch.path(), &fixtures().join("records/claude")] {
        for path in walk(root) {
            let rel = path.strip_prefix(root).expect("under").to_path_buf();
            out.push((rel, std::fs::read(&path).expect("read")));
        }
    }
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Writes `bytes` at `home/rel`, making its folders.
fn put(home: &Path, rel: &Path, bytes: &[u8]) {
    let path = home.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    std::fs::write(path, bytes).expect("write");
}

/// Appends `bytes` to `home/rel` (the same file, as a harness writes).
fn append(home: &Path, rel: &Path, bytes: &[u8]) {
    use std::io::Write as _;
    let path = home.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dir");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open");
    f.write_all(bytes).expect("append");
}

/// A whole read of `home`, with no ledger.
fn whole(home: &Path) -> Shown {
    shown(&mut records(home, None))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Each file written in up to five parts cut anywhere (mid-line too),
    /// each part read by a separate `Records` sharing one store: the end
    /// is a whole read's.
    #[test]
    fn any_split_of_appends_reads_as_the_whole(
        cuts in proptest::collection::vec(proptest::collection::vec(0.0f64..1.0, 0..5), 16),
    ) {
        let files = contents();
        let home = tempfile::tempdir().expect("home");
        let db = tempfile::tempdir().expect("db");
        let store = Arc::new(SqliteStore::open(&db.path().join("t.db")).expect("store"));
        // Each file's cut points, in bytes, in order, ending at its length.
        let plans: Vec<Vec<usize>> = files
            .iter()
            .enumerate()
            .map(|(i, (_, bytes))| {
                let mut at: Vec<usize> = cuts[i % cuts.len()]
                    .iter()
                    .map(|f| (f * bytes.len() as f64) as usize)
                    .collect();
                at.push(bytes.len());
                at.sort_unstable();
                at
            })
            .collect();
        let steps = plans.iter().map(Vec::len).max().unwrap_or(1);
        let mut written = vec![0usize; files.len()];
        let mut last = None;
        for step in 0..steps {
            for (i, (rel, bytes)) in files.iter().enumerate() {
                let to = plans[i].get(step).copied().unwrap_or(bytes.len());
                if to > written[i] {
                    append(home.path(), rel, &bytes[written[i]..to]);
                    written[i] = to;
                }
            }
            last = Some(shown(&mut records(home.path(), Some(&store))));
        }
        let whole = whole(home.path());
        prop_assert!(whole.0.len() >= 5, "{:?}", whole.1);
        prop_assert_eq!(last.expect("read"), whole);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// A listing after each part of any split of appends (each by a
    /// separate `Records` sharing one store, the sessions whose files did
    /// not change listed from their kept summaries) is a whole read's: a
    /// session whose file grew is never listed from its summary as it was.
    #[test]
    fn a_listing_after_any_split_of_appends_is_a_whole_read(
        cuts in proptest::collection::vec(proptest::collection::vec(0.0f64..1.0, 0..4), 16),
    ) {
        let files = contents();
        let home = tempfile::tempdir().expect("home");
        let db = tempfile::tempdir().expect("db");
        let store = Arc::new(SqliteStore::open(&db.path().join("t.db")).expect("store"));
        let plans: Vec<Vec<usize>> = files
            .iter()
            .enumerate()
            .map(|(i, (_, bytes))| {
                let mut at: Vec<usize> = cuts[i % cuts.len()]
                    .iter()
                    .map(|f| (f * bytes.len() as f64) as usize)
                    .collect();
                at.push(bytes.len());
                at.sort_unstable();
                at
            })
            .collect();
        let steps = plans.iter().map(Vec::len).max().unwrap_or(1);
        let mut written = vec![0usize; files.len()];
        for step in 0..steps {
            for (i, (rel, bytes)) in files.iter().enumerate() {
                let to = plans[i].get(step).copied().unwrap_or(bytes.len());
                if to > written[i] {
                    append(home.path(), rel, &bytes[written[i]..to]);
                    written[i] = to;
                }
            }
            if step % 2 == 1 {
                // Read by an import (which keeps no summaries): the
                // listing after it must not list a summary from before.
                let mut import = records(home.path(), Some(&store));
                import.only_changed();
                import.read(true);
                import.import(store.as_ref(), None).expect("import");
            }
            let (listing, _) = listed(home.path(), &store);
            prop_assert_eq!(listing, whole_listed(home.path()), "step {}", step);
        }
        // Nothing changed since: nothing is read, the same is listed.
        let (listing, read) = listed(home.path(), &store);
        prop_assert_eq!(read, 0);
        prop_assert_eq!(listing, whole_listed(home.path()));
    }
}

/// A listing with kept summaries, then one file grown: the second listing
/// reads nothing, the third reads the grown file alone, and each is a
/// whole read's; a session listed from its summary is built when asked for
/// by id (`sessions show`, `check`), as a whole read builds it.
#[test]
fn a_listing_reads_only_what_changed_and_builds_a_session_asked_for() {
    let files = contents();
    let home = tempfile::tempdir().expect("home");
    let db = tempfile::tempdir().expect("db");
    let store = Arc::new(SqliteStore::open(&db.path().join("t.db")).expect("store"));
    for (rel, bytes) in &files {
        put(home.path(), rel, bytes);
    }
    let (first, read) = listed(home.path(), &store);
    assert!(read > 0 && first.0.len() >= 5, "{:?}", first.1);
    assert_eq!(first, whole_listed(home.path()));
    let (second, read) = listed(home.path(), &store);
    assert_eq!(read, 0, "nothing read");
    assert_eq!(second, first);
    // Asked for by id: built from its files' kept state, as a whole read.
    let mut whole = records(home.path(), None);
    whole.read(true);
    for summary in &first.0 {
        let mut one = records(home.path(), Some(&store));
        one.listing_only();
        one.read(true);
        assert!(one.sessions().is_empty(), "nothing built before asked");
        let id = summary.session_id.clone();
        one.build_where(|tether_id, _| tether_id == id);
        let facts = one.sessions().get(&id).expect("built");
        let kept = one.history(facts, None).expect("history");
        let read = whole
            .history(&whole.sessions()[&id], None)
            .expect("history");
        assert_eq!(kept, read, "{id}");
    }
    // Grown: its session's summary is built again, never the kept one.
    let (rel, bytes) = largest(&files);
    // Its own records again, with new call ids and a month later (so its
    // summary's last time moves).
    let more = String::from_utf8_lossy(&bytes[..])
        .replace("toolu_", "toolZ_")
        .replace("\"2026-11-", "\"2026-12-");
    append(home.path(), rel, more.as_bytes());
    let (third, read) = listed(home.path(), &store);
    assert_eq!(read, 1);
    assert_ne!(third.0, first.0, "the grown session's summary changed");
    assert_eq!(third, whole_listed(home.path()));
    // Grown again, and read first by an import, which keeps the file's
    // row but no summary: the listing after it reads nothing and builds
    // that session again, never listing its summary from before.
    let more = more
        .replace("toolZ_", "toolW_")
        .replace("\"2026-12-", "\"2027-01-");
    append(home.path(), rel, more.as_bytes());
    let mut import = records(home.path(), Some(&store));
    import.only_changed();
    assert_eq!(import.read(true).files_read, 1);
    import.import(store.as_ref(), None).expect("import");
    let (fourth, read) = listed(home.path(), &store);
    assert_eq!(read, 0, "the import read it");
    assert_ne!(fourth.0, third.0, "the grown session's summary changed");
    assert_eq!(fourth, whole_listed(home.path()));
}

/// A home read once with the ledger, then changed by `change`, then read
/// again by a new `Records`: the same as a whole read of what is there.
fn changed_reads_as_whole(change: impl FnOnce(&Path, &[(PathBuf, Vec<u8>)])) {
    let files = contents();
    let home = tempfile::tempdir().expect("home");
    let db = tempfile::tempdir().expect("db");
    let store = Arc::new(SqliteStore::open(&db.path().join("t.db")).expect("store"));
    for (rel, bytes) in &files {
        put(home.path(), rel, bytes);
    }
    let first = shown(&mut records(home.path(), Some(&store)));
    assert!(first.0.len() >= 5, "{:?}", first.1);
    assert_eq!(first, whole(home.path()));
    change(home.path(), &files);
    let again = shown(&mut records(home.path(), Some(&store)));
    assert_eq!(again, whole(home.path()));
}

/// The generated session's transcript (the largest file).
fn largest(files: &[(PathBuf, Vec<u8>)]) -> &(PathBuf, Vec<u8>) {
    files.iter().max_by_key(|(_, b)| b.len()).expect("a file")
}

#[test]
fn a_file_replaced_by_a_shorter_one_reads_as_the_new_one() {
    changed_reads_as_whole(|home, files| {
        let (rel, bytes) = largest(files);
        // Another file put in its place (a new inode), shorter: its first
        // half, to the end of a line.
        let half = &bytes[..bytes.len() / 2];
        let end = half.iter().rposition(|b| *b == b'\n').expect("a line") + 1;
        let fresh = home.join("replacement.tmp");
        std::fs::write(&fresh, &half[..end]).expect("write");
        std::fs::rename(&fresh, home.join(rel)).expect("rename");
    });
}

#[test]
fn a_file_cut_short_reads_as_what_is_left() {
    changed_reads_as_whole(|home, files| {
        let (rel, bytes) = largest(files);
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(home.join(rel))
            .expect("open");
        f.set_len(bytes.len() as u64 / 3).expect("truncate");
    });
}

#[test]
fn a_file_rewritten_in_place_with_the_same_size_reads_as_rewritten() {
    changed_reads_as_whole(|home, files| {
        let (rel, bytes) = largest(files);
        // The same length, other calls: every tool id renamed in place
        // (same number of bytes), and a time the file never had.
        let text = String::from_utf8(bytes.clone()).expect("utf-8");
        let rewritten = text.replace("toolu_", "toolX_");
        assert_eq!(rewritten.len(), text.len());
        assert_ne!(rewritten, text);
        let path = home.join(rel);
        std::fs::write(&path, rewritten).expect("rewrite");
        let f = std::fs::File::options()
            .write(true)
            .open(&path)
            .expect("open");
        f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000))
            .expect("mtime");
    });
}

#[test]
fn a_vanished_file_is_marked_gone_and_its_sessions_stay_imported() {
    let files = contents();
    let home = tempfile::tempdir().expect("home");
    let db = tempfile::tempdir().expect("db");
    let store = Arc::new(SqliteStore::open(&db.path().join("t.db")).expect("store"));
    for (rel, bytes) in &files {
        put(home.path(), rel, bytes);
    }
    let mut first = records(home.path(), Some(&store));
    first.read(true);
    first.import(store.as_ref(), None).expect("import");
    let stored = store.load_all().expect("load").histories;
    let (rel, _) = largest(&files);
    std::fs::remove_file(home.path().join(rel)).expect("remove");
    // What is on disk no longer holds it; the store still does.
    let again = shown(&mut records(home.path(), Some(&store)));
    assert_eq!(again, whole(home.path()));
    let mut later = records(home.path(), Some(&store));
    later.only_changed();
    later.read(true);
    later.import(store.as_ref(), None).expect("import");
    assert_eq!(store.load_all().expect("load").histories, stored);
    let rows = store.record_files().expect("ledger");
    let gone: Vec<&str> = rows
        .iter()
        .filter(|r| r.gone)
        .map(|r| r.path.as_str())
        .collect();
    assert_eq!(gone.len(), 1, "{gone:?}");
    assert!(gone[0].ends_with(&*rel.to_string_lossy()));
}

#[test]
fn an_import_of_what_did_not_change_reads_nothing_and_writes_nothing() {
    let files = contents();
    let home = tempfile::tempdir().expect("home");
    let db = tempfile::tempdir().expect("db");
    let store = Arc::new(SqliteStore::open(&db.path().join("t.db")).expect("store"));
    for (rel, bytes) in &files {
        put(home.path(), rel, bytes);
    }
    let import = |store: &Arc<SqliteStore>| {
        let mut r = records(home.path(), Some(store));
        r.only_changed();
        let pass = r.read(true);
        let done = r.import(store.as_ref(), None).expect("import");
        (pass.files_read, done)
    };
    let (read, first) = import(&store);
    assert!(read > 0 && first.new > 0, "{first:?}");
    let revisions = store.revisions().expect("revisions");
    let (read, second) = import(&store);
    assert_eq!(read, 0, "nothing read");
    assert_eq!(second.unchanged, first.new, "{second:?}");
    assert_eq!(second.new + second.updated, 0, "{second:?}");
    assert_eq!(
        store.revisions().expect("revisions"),
        revisions,
        "nothing written"
    );
    // Grown: only its session is read again, and it is what a whole
    // import into a fresh store holds.
    // A store imported whole, without a ledger, at the same two moments.
    let plain_db = tempfile::tempdir().expect("db");
    let plain = Arc::new(SqliteStore::open(&plain_db.path().join("t.db")).expect("store"));
    let import_whole = || {
        let mut whole = records(home.path(), None);
        whole.read(true);
        whole.import(plain.as_ref(), None).expect("import")
    };
    import_whole();
    // Grown: only its file is read again, and the store holds what a
    // whole import gives.
    let (rel, bytes) = largest(&files);
    let more = String::from_utf8_lossy(&bytes[..]).replace("toolu_", "toolY_");
    append(home.path(), rel, more.as_bytes());
    let (read, third) = import(&store);
    assert_eq!(read, 1);
    assert_eq!(third.updated, 1, "{third:?}");
    assert_eq!(third.unchanged, first.new - 1, "{third:?}");
    assert_eq!(import_whole().updated, 1);
    let docs = |s: &SqliteStore| {
        let mut all: Vec<AttachmentHistory> = s.load_all().expect("load").histories;
        all.sort_by(|a, b| a.session_id.cmp(&b.session_id));
        all
    };
    assert_eq!(docs(&store), docs(&plain));
}

/// A session id is checked once per run of records naming it (the check's
/// credential patterns are costly), never skipped for another: records
/// whose session id is a planted secret, between records of a real one,
/// are refused each time, and the secret names no session; the real
/// session is read as before.
#[test]
fn a_secret_session_id_between_real_ones_is_refused_each_time() {
    const SECRET: &str = "sk-live-PLANTED0123456789abcdefABCDEF";
    let real = std::fs::read_to_string(
        fixtures().join("records-real/claude-2.1.39-progress-rejection.jsonl"),
    )
    .expect("fixture");
    let session = "11111111-2222-4333-8444-555555555555";
    assert!(real.contains(session));
    let lines: Vec<&str> = real.lines().collect();
    let mut mixed = String::new();
    for (i, line) in lines.iter().enumerate() {
        let line = if i % 2 == 1 {
            line.replace(session, SECRET)
        } else {
            (*line).to_owned()
        };
        mixed.push_str(&line);
        mixed.push('\n');
    }
    let planted = lines.len() / 2;
    let home = tempfile::tempdir().expect("home");
    let rel = Path::new(".claude/projects/-tmp-ws").join(format!("{session}.jsonl"));
    put(home.path(), &rel, mixed.as_bytes());
    let mut read = records(home.path(), None);
    let (summaries, files) = shown(&mut read);
    let ids: Vec<&String> = read.sessions().keys().collect();
    assert_eq!(ids, [&format!("claude:{session}")], "{files:?}");
    assert!(
        !format!("{summaries:?}{files:?}").contains("PLANTED"),
        "the secret reaches no summary or report"
    );
    assert!(files[0].refused >= planted as u64, "{:?}", files[0]);
}

/// A first import keeps each new session's summary beside the ledger (it
/// built the session as a listing does), so the listing after it builds
/// no session and reads no file, and lists what a whole read lists.
#[test]
fn a_listing_after_a_first_import_builds_nothing() {
    let files = contents();
    let home = tempfile::tempdir().expect("home");
    let db = tempfile::tempdir().expect("db");
    let store = Arc::new(SqliteStore::open(&db.path().join("t.db")).expect("store"));
    for (rel, bytes) in &files {
        put(home.path(), rel, bytes);
    }
    let mut import = records(home.path(), Some(&store));
    import.only_changed();
    import.read(true);
    let done = import.import(store.as_ref(), None).expect("import");
    assert!(done.new >= 5, "{done:?}");
    let mut list = records(home.path(), Some(&store));
    list.listing_only();
    assert_eq!(list.read(true).files_read, 0);
    assert!(list.sessions().is_empty(), "nothing built");
    let listing = (list.listing(), list.files(), list.reader_notes());
    assert_eq!(listing, whole_listed(home.path()));
}

/// What a store holds after a read: every session's history, the ledger's
/// rows and the kept summaries, each in id or path order.
type Held = (
    Vec<AttachmentHistory>,
    Vec<tether_core::store::RecordFileRow>,
    Vec<(String, u64, Vec<u8>)>,
);

fn held(store: &SqliteStore) -> Held {
    let mut histories = store.load_all().expect("load").histories;
    histories.sort_by(|a, b| a.session_id.cmp(&b.session_id));
    let mut rows = store.record_files().expect("rows");
    rows.sort_by(|a, b| a.path.cmp(&b.path));
    let states = store
        .record_file_states(&rows.iter().map(|r| r.path.clone()).collect::<Vec<_>>())
        .expect("states");
    for (path, state) in states {
        if let Some(row) = rows.iter_mut().find(|r| r.path == path) {
            row.state = state;
        }
    }
    let mut kept: Vec<(String, u64, Vec<u8>)> = store
        .record_sessions()
        .expect("summaries")
        .into_iter()
        .map(|r| (r.session_id, r.stamp, r.summary))
        .collect();
    kept.sort();
    (histories, rows, kept)
}

/// A row's state as JSON with every array and map in order: a file's facts
/// are sets and maps, written in no set order.
fn canonical(state: &[u8]) -> String {
    fn sort(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Array(items) => {
                items.iter_mut().for_each(sort);
                items.sort_by_key(|i| i.to_string());
            }
            serde_json::Value::Object(map) => {
                let mut all: Vec<(String, serde_json::Value)> =
                    std::mem::take(map).into_iter().collect();
                all.sort_by(|a, b| a.0.cmp(&b.0));
                for (k, mut v) in all {
                    sort(&mut v);
                    map.insert(k, v);
                }
            }
            _ => {}
        }
    }
    let mut v: serde_json::Value = serde_json::from_slice(state).unwrap_or_default();
    sort(&mut v);
    v.to_string()
}

/// `held(a) == held(b)`, saying what differs where it does not.
#[track_caller]
fn assert_same_held(a: &SqliteStore, b: &SqliteStore) {
    let (a, b) = (held(a), held(b));
    let ids = |h: &Held| -> Vec<String> { h.0.iter().map(|h| h.session_id.clone()).collect() };
    assert_eq!(ids(&a), ids(&b), "the same sessions");
    for (x, y) in a.0.iter().zip(&b.0) {
        assert!(x == y, "{} differs: {x:#?}\n{y:#?}", x.session_id);
    }
    let paths = |h: &Held| -> Vec<String> { h.1.iter().map(|r| r.path.clone()).collect() };
    assert_eq!(paths(&a), paths(&b), "the same ledger rows");
    for (x, y) in a.1.iter().zip(&b.1) {
        let text = |r: &tether_core::store::RecordFileRow| {
            format!(
                "{} {} {} {} {} {} {}\n{}\n{}",
                r.path,
                r.size,
                r.offset,
                r.tail_hash,
                r.gone,
                r.imported,
                r.generation,
                String::from_utf8_lossy(&r.head),
                canonical(&r.state)
            )
        };
        let (x, y) = (text(x), text(y));
        if x != y {
            let at = x.bytes().zip(y.bytes()).take_while(|(a, b)| a == b).count();
            let from = at.saturating_sub(200);
            panic!(
                "a ledger row differs at byte {at}:\n{}\n{}",
                &x[from..(at + 300).min(x.len())],
                &y[from..(at + 300).min(y.len())]
            );
        }
    }
    let kept = |h: &Held| -> Vec<String> {
        h.2.iter()
            .map(|(id, stamp, s)| format!("{id} {stamp} {}", String::from_utf8_lossy(s)))
            .collect()
    };
    assert_eq!(kept(&a), kept(&b), "the same kept summaries");
}

fn fresh_store(dir: &tempfile::TempDir, name: &str) -> Arc<SqliteStore> {
    Arc::new(SqliteStore::open(&dir.path().join(name)).expect("store"))
}

/// A home of many files: the home shape at 2 MB (small sessions, sub-agents'
/// transcripts, twelve projects, real transcripts of other releases) and
/// [`contents`] (a recorded home's server logs: a second source, whose
/// files feed a session whose transcript is in another group).
fn many_files(home: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let real: Vec<PathBuf> = corpus::transcripts_in(&fixtures().join("records-real"))
        .into_iter()
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            name.is_some_and(|n| n.starts_with("claude-") && !n.contains(".stream."))
        })
        .collect();
    corpus::home_shaped(home, 2 << 20, &real).expect("home");
    let files = contents();
    for (rel, bytes) in &files {
        put(home, rel, bytes);
    }
    files
}

/// Read a group at a time (here two files and 32 KiB a group, so a
/// session's files fall in several groups), a listing lists, and an import
/// imports and keeps, what a whole read does (one `Records` holding every
/// file's facts): the first time, an import after a listing, and after
/// files grew (sessions the store holds, updated or not).
#[test]
fn a_read_a_group_at_a_time_lists_and_imports_what_a_whole_read_does() {
    let home = tempfile::tempdir().expect("home");
    let files = many_files(home.path());
    let db = tempfile::tempdir().expect("db");
    let grouped = |store: &Arc<SqliteStore>| {
        let mut r = records(home.path(), Some(store));
        r.group_bounds(32 << 10, 2);
        r
    };
    let list_grouped = |store: &Arc<SqliteStore>| {
        let mut r = grouped(store);
        r.listing_only();
        r.summing_up();
        r.read(true);
        (r.listing(), r.files(), r.reader_notes())
    };
    let import_grouped = |store: &Arc<SqliteStore>| {
        let mut r = grouped(store);
        r.only_changed();
        r.read(true);
        (r.import(store.as_ref(), None).expect("import"), r.files())
    };
    // Whole: every file's facts held, every session built at once.
    let list_whole = |store: &Arc<SqliteStore>| {
        let mut r = records(home.path(), Some(store));
        r.read(true);
        (r.listing(), r.files(), r.reader_notes())
    };
    let import_whole = |store: &Arc<SqliteStore>| {
        let mut r = records(home.path(), Some(store));
        r.read(true);
        (r.import(store.as_ref(), None).expect("import"), r.files())
    };

    // A first listing.
    let (g, w) = (fresh_store(&db, "g1.db"), fresh_store(&db, "w1.db"));
    let listed = list_grouped(&g);
    assert!(listed.0.len() >= 8, "{} sessions", listed.0.len());
    assert!(listed.1.len() >= 12, "{} files", listed.1.len());
    assert_eq!(listed, list_whole(&w));
    assert_eq!(listed, whole_listed(home.path()));
    assert_same_held(&g, &w);

    // A first import, then an import after a listing.
    let (g, w) = (fresh_store(&db, "g2.db"), fresh_store(&db, "w2.db"));
    let imported = import_grouped(&g);
    assert!(imported.0.new >= 8, "{:?}", imported.0);
    assert_eq!(imported, import_whole(&w));
    assert_same_held(&g, &w);
    let (g3, w3) = (fresh_store(&db, "g3.db"), fresh_store(&db, "w3.db"));
    list_grouped(&g3);
    list_whole(&w3);
    assert_eq!(import_grouped(&g3), import_whole(&w3));
    assert_same_held(&g3, &w3);

    // Grown: a session's transcript and a server log (a session fed by two
    // groups' files), and a sub-agent's; imported into stores that hold
    // every session.
    let log = files
        .iter()
        .find(|(rel, _)| rel.starts_with(".cache"))
        .expect("a server log");
    let transcript = largest(&files);
    let sub = walk(home.path())
        .into_iter()
        .find(|p| p.to_string_lossy().contains("subagents"))
        .expect("a sub-agent's transcript");
    let sub = sub.strip_prefix(home.path()).expect("under").to_path_buf();
    for (rel, bytes) in [log, transcript] {
        let more = String::from_utf8_lossy(bytes).replace("toolu_", "toolZ_");
        append(home.path(), rel, more.as_bytes());
    }
    let more = std::fs::read_to_string(home.path().join(&sub)).expect("sub");
    append(
        home.path(),
        &sub,
        more.replace("toolu_", "toolZ_").as_bytes(),
    );
    let (done, _) = import_grouped(&g);
    assert!(done.updated >= 1 && done.unchanged >= 5, "{done:?}");
    assert_eq!(done, import_whole(&w).0);
    assert_same_held(&g, &w);
    // And listed again.
    assert_eq!(list_grouped(&g), list_whole(&w));
    assert_same_held(&g, &w);
}
