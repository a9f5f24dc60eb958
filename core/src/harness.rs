//! A harness, the agent program a user thinks in ("my Claude Code"):
//! - [`HarnessId`], its one name across Tether (its plugin's first agent
//!   kind, its configuration scanner's harness, the prefix of its sessions,
//!   `KIND:ID`);
//! - [`Roles`], what its plugin says of it apart from starting it
//!   ([`PassthroughStrategy`](crate::passthrough::PassthroughStrategy)), one
//!   trait per role so a plugin implements only what its harness has and a
//!   host reading one role sees no other: its session records
//!   ([`RecordReader`](crate::records::RecordReader)), its telemetry
//!   ([`TelemetryReader`](crate::telemetry::TelemetryReader)), its census
//!   ([`HarnessCensus`]), its last mile
//!   ([`LastMile`](crate::last_mile::LastMile)), a server's set-up
//!   ([`SetupGuide`], [`ServerSetup`]) and its model tap
//!   ([`ModelTap`](crate::model_tap::ModelTap)).
//!
//! [`Registry::harnesses`] lists the harnesses a registry holds, each with
//! its roles.
//!
//! [`Registry::harnesses`]: crate::registry::Registry::harnesses

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

pub use crate::capability::RunTimeShown;

/// The longest harness name.
pub const MAX_HARNESS_ID: usize = 32;

/// A harness's name: 1 to 32 characters, lowercase ASCII letters, digits
/// and `-`, starting with a letter (`claude`, `gemini-cli`). Serialized as
/// the plain string.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct HarnessId(String);

/// A name that is not a harness name, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct HarnessIdError(&'static str);

impl HarnessId {
    /// The name, checked.
    pub fn new(name: &str) -> Result<Self, HarnessIdError> {
        if name.is_empty() || name.len() > MAX_HARNESS_ID {
            return Err(HarnessIdError("a harness name has 1 to 32 characters"));
        }
        if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
            return Err(HarnessIdError(
                "a harness name starts with a lowercase letter",
            ));
        }
        if !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Err(HarnessIdError(
                "a harness name holds lowercase letters, digits and `-` only",
            ));
        }
        Ok(HarnessId(name.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for HarnessId {
    type Error = HarnessIdError;
    fn try_from(name: String) -> Result<Self, Self::Error> {
        HarnessId::new(&name)
    }
}

impl From<HarnessId> for String {
    fn from(id: HarnessId) -> String {
        id.0
    }
}

impl std::str::FromStr for HarnessId {
    type Err = HarnessIdError;
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        HarnessId::new(name)
    }
}

impl AsRef<str> for HarnessId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for HarnessId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for HarnessId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl fmt::Display for HarnessId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl JsonSchema for HarnessId {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("HarnessId")
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": "^[a-z][a-z0-9-]{0,31}$"
        })
    }
}

/// How to add one stdio MCP server to a harness's own configuration, for a
/// user to do (`tether mcp --print-config HARNESS`): pure text, never a
/// write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerSetup {
    /// The harness's own command that adds it, where it has one.
    pub command: Option<String>,
    /// The block to merge into its configuration file.
    pub file: crate::telemetry::SetupSnippet,
    /// What else to know, in plain sentences (a gate that keeps it off).
    pub notes: Vec<String>,
}

impl ServerSetup {
    /// The block for `file`'s configuration file, with no command or note.
    pub fn new(file: crate::telemetry::SetupSnippet) -> Self {
        ServerSetup {
            command: None,
            file,
            notes: Vec::new(),
        }
    }

    /// With the harness's own command that adds it.
    pub fn with_command(mut self, command: impl Into<String>) -> Self {
        self.command = Some(command.into());
        self
    }

    /// With one more note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
}

/// The census role of a harness's plugin: every kind of record, event,
/// field and telemetry its shipped code writes that bears on MCP servers,
/// tools, skills, hooks, plugins, auth or permissions, each read (with the
/// evidence it gives) or not (with why). The book's table of records is
/// written from it.
pub trait HarnessCensus: Send + Sync {
    /// The entries.
    fn census(&self) -> Vec<crate::records::CensusEntry>;
}

/// The set-up role of a harness's plugin (`tether mcp --print-config`): how
/// a user adds a server to the harness's own configuration.
pub trait SetupGuide: Send + Sync {
    /// How a user adds the stdio MCP server `name` (`command` with `args`)
    /// to the harness's own configuration, user-wide: its command, and the
    /// block for its file.
    fn server_setup(&self, name: &str, command: &str, args: &[String]) -> Option<ServerSetup>;
}

/// The roles a harness's plugin has, each its own trait, so a host that
/// reads one role sees no other and a plugin implements only what its
/// harness has ([`TransportObserver::roles`](crate::TransportObserver::roles)).
/// Every role is pure: no I/O. Build it with [`Roles::none`] and the
/// builders.
#[derive(Clone, Copy, Default)]
#[non_exhaustive]
pub struct Roles<'a> {
    /// Its session records (`tether sessions`).
    pub records: Option<&'a dyn crate::records::RecordReader>,
    /// Its own telemetry (`tether collect`).
    pub telemetry: Option<&'a dyn crate::telemetry::TelemetryReader>,
    /// Its census of what its shipped code writes.
    pub census: Option<&'a dyn HarnessCensus>,
    /// What it does to tools before the model.
    pub last_mile: Option<&'a dyn crate::last_mile::LastMile>,
    /// How a user adds a server to it (`tether mcp --print-config`).
    pub setup: Option<&'a dyn SetupGuide>,
    /// How its model traffic goes through `tether tap`.
    pub model_tap: Option<&'a dyn crate::model_tap::ModelTap>,
}

impl<'a> Roles<'a> {
    /// No role.
    pub fn none() -> Self {
        Roles::default()
    }

    /// With its session records.
    pub fn records(mut self, role: &'a dyn crate::records::RecordReader) -> Self {
        self.records = Some(role);
        self
    }

    /// With its telemetry.
    pub fn telemetry(mut self, role: &'a dyn crate::telemetry::TelemetryReader) -> Self {
        self.telemetry = Some(role);
        self
    }

    /// With its census.
    pub fn census(mut self, role: &'a dyn HarnessCensus) -> Self {
        self.census = Some(role);
        self
    }

    /// With its last mile.
    pub fn last_mile(mut self, role: &'a dyn crate::last_mile::LastMile) -> Self {
        self.last_mile = Some(role);
        self
    }

    /// With its server set-up.
    pub fn setup(mut self, role: &'a dyn SetupGuide) -> Self {
        self.setup = Some(role);
        self
    }

    /// With its model tap.
    pub fn model_tap(mut self, role: &'a dyn crate::model_tap::ModelTap) -> Self {
        self.model_tap = Some(role);
        self
    }

    /// Whether it has no role at all.
    pub fn is_empty(&self) -> bool {
        self.names().is_empty()
    }

    /// The names of the roles it has (`records`, `telemetry`, `census`,
    /// `last_mile`, `setup`, `model_tap`).
    pub fn names(&self) -> Vec<&'static str> {
        [
            ("records", self.records.is_some()),
            ("telemetry", self.telemetry.is_some()),
            ("census", self.census.is_some()),
            ("last_mile", self.last_mile.is_some()),
            ("setup", self.setup.is_some()),
            ("model_tap", self.model_tap.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, has)| has.then_some(name))
        .collect()
    }
}

impl fmt::Debug for Roles<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_harness_name_is_checked_and_serializes_as_itself() {
        for good in ["claude", "gemini-cli", "q2"] {
            let id = HarnessId::new(good).expect(good);
            assert_eq!(
                serde_json::to_string(&id).expect("json"),
                format!("\"{good}\"")
            );
            let back: HarnessId = serde_json::from_str(&format!("\"{good}\"")).expect("back");
            assert_eq!(back, id);
        }
        for bad in [
            "",
            "Claude",
            "-x",
            "2x",
            "a b",
            "a_b",
            "x/../y",
            &"a".repeat(33),
        ] {
            assert!(HarnessId::new(bad).is_err(), "{bad:?}");
            assert!(serde_json::from_str::<HarnessId>(&format!("{bad:?}")).is_err());
        }
    }
}
