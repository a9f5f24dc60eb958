//! GIVEN the JSON Schemas committed in `tests/schema/golden/` (the public
//! contract, saved before any restructuring) WHEN `tether schema <doc>` runs
//! THEN its output is byte-identical. A schema changes only on purpose: bump
//! `schema_version` and update the golden file in the same commit.

use std::process::Command;

use tether_tests::workspace_bin;

fn golden_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join("golden")
}

#[test]
fn every_schema_is_byte_identical_to_its_golden_file() {
    let golden = golden_dir();
    let mut documents: Vec<String> = std::fs::read_dir(&golden)
        .expect("tests/schema/golden exists")
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".schema.json"))
                .map(str::to_owned)
        })
        .collect();
    documents.sort();
    assert!(
        documents.len() >= 7,
        "expected a golden file for every document, found {documents:?}"
    );
    for doc in documents {
        let out = Command::new(workspace_bin("tether"))
            .args(["schema", &doc])
            .output()
            .expect("run tether schema");
        assert!(out.status.success(), "tether schema {doc} failed");
        let want = std::fs::read(golden.join(format!("{doc}.schema.json"))).expect("golden");
        assert!(
            out.stdout == want,
            "tether schema {doc} differs from tests/schema/golden/{doc}.schema.json"
        );
    }
}
