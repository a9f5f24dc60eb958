//! tether-harness-configs: `tether inventory` scanners for the harnesses that
//! have no Tether plugin of their own (OpenCode, Cursor, Gemini CLI). Each
//! registers itself with [`tether_inventory::register_scanner!`]; linking this
//! crate is enough.

pub mod cursor;
pub mod gemini;
pub mod opencode;
