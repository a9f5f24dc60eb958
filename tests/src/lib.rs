//! Cross-crate integration tests live in `tests/tests/`. This library links the
//! first-party plugins so their `inventory` registrations are present.

pub use tether_acp_structured;
pub use tether_passthrough_claude;
pub use tether_passthrough_codex;

/// Where tests write sample documents for the out-of-process schema check.
pub fn samples_dir() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("target")
        .join("tether-samples");
    let _ = std::fs::create_dir_all(&dir);
    dir
}
