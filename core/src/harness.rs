//! A harness, the agent program a user thinks in ("my Claude Code"):
//! - [`HarnessId`], its one name across Tether (its plugin's first agent
//!   kind, its configuration scanner's harness, the prefix of its sessions,
//!   `KIND:ID`);
//! - [`HarnessReader`], what it says about its own sessions (its telemetry,
//!   its session files) and its own configuration ([`ServerSetup`]), apart
//!   from what starting it needs
//!   ([`PassthroughStrategy`](crate::passthrough::PassthroughStrategy)).
//!
//! [`Registry::harnesses`] lists the harnesses a registry holds.
//!
//! [`Registry::harnesses`]: crate::registry::Registry::harnesses
//!
//! `HarnessId` (a harness's one validated name) and `HarnessReader`, what a
//! harness says about its own sessions and configuration, apart from starting
//! it: its telemetry (`telemetry_setup`, `read_telemetry`), its session files
//! (`record_sources`, `read_record`, `records_verified_on`) and `server_setup`;
//! `Registry::harnesses()` pairs each with its plugin and its strategy.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

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

/// What a harness says about itself, for sessions Tether may never have
/// started (`tether collect`, `tether sessions`, `tether mcp
/// --print-config`): how its own telemetry reaches a receiver and reads,
/// where its own session files are and how they read, and how a user adds
/// a server to its configuration.
///
/// Every method is pure (no I/O: it crosses the dynamic plugin boundary as
/// data) and has a default that says nothing, so a plugin implements only
/// what its harness has. Take names, codes, counts, times and outcomes
/// only; never a value, argument, prompt or result.
pub trait HarnessReader: Send + Sync {
    /// What the harness needs to send its own OpenTelemetry to `target`
    /// (`tether collect --print-env`); `None`: this plugin reads no
    /// telemetry. Variables, a snippet and notes, never a write.
    fn telemetry_setup(
        &self,
        target: &crate::telemetry::TelemetryTarget,
    ) -> Option<crate::telemetry::TelemetrySetup> {
        let _ = target;
        None
    }

    /// Reads one record of the harness's own telemetry (`tether collect`):
    /// which session it belongs to, which servers it names, and what it
    /// proves, as `harness_telemetry` evidence. `configured` holds the
    /// server names the harness's configuration gives it today (a harness
    /// that hashes names in its telemetry is matched against them). The
    /// default reads nothing: every record is
    /// [`NotMine`](crate::telemetry::TelemetryAnswer::NotMine).
    fn read_telemetry(
        &self,
        record: &crate::telemetry::TelemetryRecord,
        configured: &[String],
    ) -> crate::telemetry::TelemetryAnswer {
        let _ = (record, configured);
        crate::telemetry::TelemetryAnswer::NotMine
    }

    /// Where the harness writes its own session records (transcripts, logs,
    /// session files), for `tether sessions`. The default: nowhere.
    fn record_sources(&self) -> Vec<crate::records::RecordSource> {
        Vec::new()
    }

    /// The harness versions the record reader was verified on (oldest,
    /// newest): a session from a newer version is still read, and `tether
    /// sessions` says so once per harness and version. The default: none
    /// named.
    fn records_verified_on(&self) -> Option<crate::records::VerifiedRange> {
        None
    }

    /// The harness's census: every kind of record, event, field and
    /// telemetry its shipped code writes that bears on MCP servers, tools,
    /// skills, hooks, plugins, auth or permissions, each read (with the
    /// evidence it gives) or not (with why). The book's table of records is
    /// written from it. The default: none taken.
    fn census(&self) -> Vec<crate::records::CensusEntry> {
        Vec::new()
    }

    /// What the harness's session records show of its skills, hooks and
    /// plugins at run time: where they show a kind, a configured one the
    /// session never showed reads "never fired"; where they do not, it
    /// reads that the harness does not record it. The default: nothing.
    fn records_show(&self) -> RunTimeShown {
        RunTimeShown::none()
    }

    /// The same, for the harness's telemetry (`tether collect`). The
    /// default: nothing.
    fn telemetry_shows(&self) -> RunTimeShown {
        RunTimeShown::none()
    }

    /// Reads one record of a file from one of its
    /// [`record_sources`](Self::record_sources): which session it belongs
    /// to, which servers it names, and what it proves. The default knows
    /// no record.
    fn read_record(
        &self,
        file: &crate::records::RecordFile<'_>,
        record: &str,
    ) -> crate::records::RecordAnswer {
        let _ = (file, record);
        crate::records::RecordAnswer::Unknown
    }

    /// What the harness does to a server's tools between `tools/list` and
    /// the model's request, at `version` (`None`: the newest verified): its
    /// spelling of each tool's name, what it does with names that collide,
    /// schemas it drops, tools it defers, and its provider's documented
    /// limits ([`Rules`](crate::last_mile::Rules)). Given only where each
    /// rule was verified against what a model was really sent. The
    /// default: this plugin does not say.
    fn last_mile(&self, version: Option<&str>) -> Option<crate::last_mile::Rules> {
        let _ = version;
        None
    }

    /// How the harness spells `server`'s `tool` to the model (Claude Code:
    /// `mcp__time__get_current_time`), by its newest verified rules (two
    /// tools that collide can be spelled apart: see
    /// [`predict`](crate::last_mile::predict)).
    fn model_tool_name(&self, server: &str, tool: &str) -> Option<String> {
        self.last_mile(None).map(|r| (r.naming)(server, tool))
    }

    /// How a user adds the stdio MCP server `name` (`command` with `args`)
    /// to the harness's own configuration, user-wide: its command, and the
    /// block for its file. The default: this plugin does not say.
    fn server_setup(&self, name: &str, command: &str, args: &[String]) -> Option<ServerSetup> {
        let _ = (name, command, args);
        None
    }

    /// What the harness needs to send its model requests through `tether
    /// tap` at `base_url` (`http://127.0.0.1:PORT/TOKEN`): the variable or
    /// the block that moves its model endpoint, and which sign-ins that
    /// covers. The default: this plugin does not say.
    fn model_setup(&self, base_url: &str) -> Option<crate::model_tap::ModelSetup> {
        let _ = base_url;
        None
    }

    /// Whether one model request is this harness's, read from its headers
    /// (names and values; never kept): its version and its own session id
    /// where it sends one ([`ModelCaller`](crate::model_tap::ModelCaller)).
    /// The default: not this harness's.
    fn model_caller(&self, headers: &[(&str, &str)]) -> Option<crate::model_tap::ModelCaller> {
        let _ = headers;
        None
    }
}

/// The reader of a harness whose plugin has none: it says nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct SilentReader;

impl HarnessReader for SilentReader {}

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

/// Which uses of skills, hooks and plugins a harness's records (or its
/// telemetry) show: what lets "never fired in this session" be said, and
/// what makes it "the harness does not record it" instead.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunTimeShown {
    /// The skills offered to the model (a listing it was sent).
    pub skills_listed: bool,
    /// The skills the model invoked.
    pub skills_invoked: bool,
    /// Each run of a hook.
    pub hooks_fired: bool,
    /// Every plugin loaded (or failing to).
    pub plugins_loaded: bool,
    /// Where hooks' runs are shown only sometimes (a harness that records
    /// a hook only when it fails or prints): what a hook with no record
    /// reads instead of "never fired", from the harness's census.
    pub hooks_silence: Option<&'static str>,
}

impl RunTimeShown {
    /// Shows nothing.
    pub fn none() -> Self {
        RunTimeShown::default()
    }

    /// Also the skills offered to the model.
    pub fn skills_listed(mut self) -> Self {
        self.skills_listed = true;
        self
    }

    /// Also the skills invoked.
    pub fn skills_invoked(mut self) -> Self {
        self.skills_invoked = true;
        self
    }

    /// Also each hook's runs.
    pub fn hooks_fired(mut self) -> Self {
        self.hooks_fired = true;
        self
    }

    /// Also hooks' runs, but only some of them (those that failed or
    /// printed, say): a hook with no record reads `silence`, never "never
    /// fired".
    pub fn hooks_fired_sometimes(mut self, silence: &'static str) -> Self {
        self.hooks_fired = true;
        self.hooks_silence = Some(silence);
        self
    }

    /// Also plugins loaded and failed.
    pub fn plugins_loaded(mut self) -> Self {
        self.plugins_loaded = true;
        self
    }

    /// Either's.
    pub fn or(self, other: RunTimeShown) -> Self {
        RunTimeShown {
            skills_listed: self.skills_listed || other.skills_listed,
            skills_invoked: self.skills_invoked || other.skills_invoked,
            hooks_fired: self.hooks_fired || other.hooks_fired,
            plugins_loaded: self.plugins_loaded || other.plugins_loaded,
            // Silence proves absence where either source shows every run.
            hooks_silence: match (self.hooks_fired, other.hooks_fired) {
                (true, true) => self.hooks_silence.and(other.hooks_silence),
                (true, false) => self.hooks_silence,
                (false, _) => other.hooks_silence,
            },
        }
    }
}
