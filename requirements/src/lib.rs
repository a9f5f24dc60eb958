//! What a requirement on a session means, in one place: `tether run`,
//! `tether check` (an id or a saved file), the web service and Go hosts
//! (through [`document::CheckDocument`]) all give the same verdict for the
//! same evidence.
//!
//! A requirement names a server (`--require SERVER[:STAGE]`) or one of its
//! tools (`--require-tool SERVER/TOOL[:STAGE]`) and a stage it must have
//! reached. It never passes on silence: a stage nothing showed is
//! `unknown`, and unknown is unmet. `model_visible` passes only on a
//! model-side signal (a request that left for the model, a model turn, the
//! tap), never on the harness's own list of the tools it holds.
//!
//! Modules:
//! - [`requirement`]: the stages a requirement can ask for and how one is
//!   written (`time`, `time:callable`, `time/get_current_time:used`),
//!   with "did you mean" for a misspelt stage.
//! - [`evaluate`](mod@evaluate): one requirement against one session's matrix rows, one
//!   session against its requirements, and the document of several.
//! - [`document`](mod@document): [`document::CheckDocument`], the public JSON document
//!   (`tether schema check`, bindings/go).
//! - `sample` (tests and the `test-support` feature only): matrix rows and
//!   a summary built in a line, for this crate's tests and its hosts'.

pub mod document;
pub mod evaluate;
pub mod requirement;
#[cfg(any(test, feature = "test-support"))]
pub mod sample;

pub use document::{
    CHECK_SCHEMA_VERSION, CheckDocument, CheckedSession, RequirementOutcome, SessionError,
};
pub use evaluate::{
    check_history, check_session, check_stored, document, evaluate, every_server, summary_of,
};
pub use requirement::{Need, ParseError, Requirement, STAGES_HELP, parse_server, parse_tool};

/// Exit code: a requirement is not met (the harness succeeded, or for
/// `check` the session was read). Neither 1 nor 2, so a CI step tells it
/// from a failed harness or a usage error.
pub const EXIT_UNMET: u8 = 4;

#[cfg(test)]
mod tests;
