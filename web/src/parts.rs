//! What the session documents and the fleet documents both carry: the
//! API's version and a skill's, hook's or plugin's view.

use schemars::JsonSchema;
use serde::Serialize;

/// The version of the status API's documents this build serves (the `/api/v1/` prefix).
pub const STATUS_API_SCHEMA_VERSION: u32 = 1;

/// One skill, hook or plugin, ready to render: its words are tether-words'
/// (`tether_words::display::capability_row` and `MatrixRow::label`), as
/// `tether sessions show` prints them.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CapabilityView {
    /// `skill`, `hook` or `plugin`.
    pub kind: tether_core::vocab::CapabilityKind,
    /// Its name as a table shows it (`greet (goodplug)`, `Stop · check.sh`).
    pub label: String,
    /// Its display status.
    pub status: tether_core::vocab::DisplayStatus,
    /// Why it failed, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason_code: Option<tether_core::vocab::ReasonCode>,
    /// Where it got, in words ("fired once: 1 command not found (exit 127)").
    pub stopped: String,
}

impl CapabilityView {
    /// The view of one row.
    pub fn of(row: &tether_core::capability::CapabilityRow) -> Self {
        let row = tether_words::display::capability_row(row);
        CapabilityView {
            label: row.label(),
            kind: row.kind,
            status: row.status,
            reason_code: row.reason_code,
            stopped: row.stopped,
        }
    }
}
