//! tether-inventory: reading MCP server configuration safely.
//!
//! The kit every configuration scanner is written with, and the runner behind
//! `tether inventory`. The document it produces
//! ([`InventoryDocument`](tether_core::inventory::InventoryDocument)) is part
//! of the core contract; reading files is this crate's job:
//! - [`scan`]: the [`ConfigScanner`] trait a harness plugin implements
//!   (registered with [`register_scanner!`]), and [`scan_all`];
//! - [`context`]: what a scan runs against ([`ScanContext`]: home, project,
//!   system root and environment, read once);
//! - [`root`]: [`ConfigRoot`], the only way scanners read files;
//! - [`rows`]: the row builder ([`ScanOutput`]) that turns a found server
//!   into a sanitized row;
//! - [`dialect`]: JSON, JSONC and TOML parsing and one server-entry reader
//!   per harness dialect ([`entry_endpoint`]);
//! - [`lookup`]: one named server from a file a user names
//!   (`tether endpoint-test --config`);
//! - [`endpoint_test`]: which rows an endpoint test covers and running those tests a
//!   few at a time, with whatever tester the host supplies;
//! - [`capability`]: rows beyond servers (plugins, skills, hooks) and their commands' diagnostics;
//! - [`session_tools`]: tool rows from what a harness's own session records showed
//!   ([`apply_session_tools`]).
//!
//! Its invariants are written once, in ARCHITECTURE.md (`inventory/`), each
//! with the test that checks it.

pub mod capability;
pub mod context;
pub mod dialect;
pub mod endpoint_test;
pub mod lookup;
pub mod root;
pub mod rows;
pub mod scan;
pub mod session_tools;

pub use capability::{
    FoundCapability, FoundCommand, HookEntry, Installed, check_command, hook_commands,
    hook_entries, skill_front_matter_name, skills_under,
};
pub use context::ScanContext;
pub use dialect::{EntryDialect, entry_endpoint, expand, string_list, string_map, substitute};
pub use root::{ConfigRoot, MAX_CONFIG_BYTES, ReadFailure, read_capped};
pub use rows::{Enablement, FoundServer, ScanOutput, env_class};
pub use scan::{ConfigScanner, MAX_ERRORS, MAX_ROWS, configured_servers, scan_all, scanners};
pub use session_tools::{SessionTools, apply_session_tools};

/// What `register_scanner!` expands to needs; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use inventory;
}

#[cfg(test)]
mod tests;
