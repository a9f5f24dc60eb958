//! The one store follower, against a real SQLite file another handle writes.

use std::sync::Arc;

use tether_core::store::Store;
use tether_store::conformance::sample_history;
use tether_store::{Followed, SqliteStore, StoreFollower};

fn changed(found: &[Followed]) -> Vec<(String, u64)> {
    found
        .iter()
        .filter_map(|f| match f {
            Followed::Changed(h) => Some((h.session_id.clone(), h.revision)),
            Followed::Removed(_) => None,
        })
        .collect()
}

/// GIVEN a store another writer changes WHEN the follower passes THEN it
/// reports exactly the sessions whose revision moved, removals first, and
/// nothing when nothing moved; following one session ignores the others.
#[test]
fn the_follower_reports_only_what_changed_and_removals_first() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("tether.db");
    let writer = SqliteStore::open(&path).expect("writer");
    writer.save(&sample_history("a", 1, "sk-a")).expect("a1");
    writer.save(&sample_history("b", 1, "sk-b")).expect("b1");
    let reader: Arc<dyn Store> = Arc::new(SqliteStore::open_read_only(&path).expect("reader"));

    let mut all = StoreFollower::new(Arc::clone(&reader), None);
    let mut only_b = StoreFollower::new(Arc::clone(&reader), None).only(Some("b".into()));
    let loaded = all.load().expect("load");
    let ids: Vec<&str> = loaded
        .histories
        .iter()
        .map(|h| h.session_id.as_str())
        .collect();
    assert_eq!(ids, ["a", "b"]);
    assert_eq!(only_b.load().expect("load b").histories.len(), 1);
    assert!(all.pass().expect("pass").is_empty(), "nothing moved");

    writer.save(&sample_history("a", 2, "sk-a")).expect("a2");
    writer.save(&sample_history("c", 1, "sk-c")).expect("c1");
    let found = all.pass().expect("pass");
    assert_eq!(changed(&found), [("a".into(), 2), ("c".into(), 1)]);
    assert!(only_b.pass().expect("pass b").is_empty(), "b did not move");
    assert!(
        all.pass().expect("again").is_empty(),
        "each change is told once"
    );

    writer.remove("b").expect("remove b");
    writer.save(&sample_history("c", 2, "sk-c")).expect("c2");
    let found = all.pass().expect("pass");
    assert!(
        matches!(&found[0], Followed::Removed(id) if id == "b"),
        "{found:?}"
    );
    assert_eq!(changed(&found), [("c".into(), 2)]);
    let found = only_b.pass().expect("pass b");
    assert!(
        matches!(found.as_slice(), [Followed::Removed(id)] if id == "b"),
        "{found:?}"
    );
}
