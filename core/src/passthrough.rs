//! The passthrough half of the plugin contract: how a plugin for a CLI that
//! the host runs as a plain process carries the delivered servers to it
//! (files, arguments, environment), and what the CLI reports back.
//!
//! Both methods are pure: the plugin returns contents, and the host writes the
//! files (mode 0600, in a private directory it removes when the process ends),
//! sets the arguments and environment, and feeds the plugin the CLI's output.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{Evidence, Timestamp};
use crate::plan::{AgentCapabilities, Plan, PlanContext};
use crate::spec::KeyValue;

/// One file the host writes for the CLI.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MaterializedFile {
    /// A plain file name inside the host's private directory.
    pub name: String,
    /// Its contents (holds secrets: never logged or stored).
    pub contents: String,
}

impl std::fmt::Debug for MaterializedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "MaterializedFile({}, {} bytes)",
            self.name,
            self.contents.len()
        )
    }
}

/// What carries the delivered servers to the CLI.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Materialized {
    /// Arguments placed right after the program (before the user's own).
    pub args: Vec<String>,
    /// Environment variables to set.
    pub env: Vec<KeyValue>,
    /// Files to write.
    pub files: Vec<MaterializedFile>,
}

/// How a passthrough plugin materializes servers and reads the CLI's reports.
///
/// An implementor is responsible for:
/// - materializing exactly the plan's delivered servers, in the CLI's own
///   configuration shape, and nothing else;
/// - putting every secret (env values, header values) only in
///   [`Materialized::env`], referenced by variable name from files and
///   arguments, so nothing another user can read holds it;
/// - naming files by plain names: the host decides where they live;
/// - being pure: no files written, no processes started, nothing logged.
///
/// The host does the rest: it writes the files 0600 in a private 0700
/// directory and removes them, starts the CLI in its own process group with
/// an explicit environment, and feeds [`observe_output`](Self::observe_output)
/// each stdout line. One method has a default: a CLI that reports nothing
/// needs no `observe_output`.
pub trait PassthroughStrategy: Send + Sync {
    /// The transports (and features) this CLI can take.
    fn capabilities(&self) -> AgentCapabilities;

    /// Materializes the plan's delivered servers; `dir` is where the host will
    /// write `files` (so arguments can name them). Errors say what failed,
    /// never a value.
    fn materialize(
        &self,
        plan: &Plan,
        ctx: &PlanContext,
        dir: &Path,
    ) -> Result<Materialized, String>;

    /// Reads one line of the CLI's standard output; returns what it reports
    /// about servers (`agent_reported` evidence). Most CLIs report nothing.
    fn observe_output(&self, line: &str, at: Timestamp) -> Vec<Evidence> {
        let _ = (line, at);
        Vec::new()
    }
}
