//! The passthrough half of the plugin contract: how a plugin for a CLI that
//! the host runs as a plain process carries the delivered servers to it
//! (files, arguments, environment), and what the CLI reports back.
//!
//! Both methods are pure: the plugin returns contents, and the host writes the
//! files (mode 0600, in a private directory it removes when the process ends),
//! sets the arguments and environment, and feeds the plugin the CLI's output.
//!
//! `PassthroughStrategy`, only what starting a CLI needs (`materialize` returns
//! files, arguments and environment as data; `read_output` turns a CLI's stdout
//! into `agent_reported` evidence). Both pure, so they cross a plugin boundary
//! as JSON.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::model::{Evidence, Timestamp};
use crate::plan::{AgentCapabilities, Plan, PlanContext};
use crate::spec::KeyValue;

/// One file the host writes for the CLI.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MaterializedFile {
    /// Where the file goes: with [`FilePlace::Private`] (the default) a plain
    /// file name inside the host's private directory; with
    /// [`FilePlace::Project`] a relative path inside the CLI's working
    /// directory, such as `.gemini/settings.json`.
    pub name: String,
    /// Its contents (holds secrets: never logged or stored).
    pub contents: String,
    /// Which directory `name` is in.
    #[serde(default, skip_serializing_if = "FilePlace::is_private")]
    pub place: FilePlace,
}

impl MaterializedFile {
    /// A file in the host's private directory.
    pub fn private(name: impl Into<String>, contents: impl Into<String>) -> Self {
        MaterializedFile {
            name: name.into(),
            contents: contents.into(),
            place: FilePlace::Private,
        }
    }

    /// A file at a relative path in the CLI's working directory (for CLIs
    /// that read MCP servers only from a project file).
    pub fn project(path: impl Into<String>, contents: impl Into<String>) -> Self {
        MaterializedFile {
            name: path.into(),
            contents: contents.into(),
            place: FilePlace::Project,
        }
    }

    /// Why `name` is not acceptable for its place, if it is not: a private
    /// name is one plain component; a project path is relative, made of
    /// plain components (no `..`, no `.`, nothing empty), at most four deep.
    pub fn name_problem(&self) -> Option<String> {
        let plain = |c: &str| {
            !c.is_empty() && c != "." && c != ".." && !c.contains('\\') && !c.contains('\0')
        };
        match self.place {
            FilePlace::Private if self.name.contains('/') || !plain(&self.name) => Some(format!(
                "materialized file name {:?} is not a plain name",
                self.name
            )),
            FilePlace::Project
                if self.name.starts_with('/')
                    || self.name.split('/').count() > 4
                    || !self.name.split('/').all(plain) =>
            {
                Some(format!(
                    "materialized project path {:?} is not a plain relative path",
                    self.name
                ))
            }
            _ => None,
        }
    }
}

/// Which directory a [`MaterializedFile`] is written to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FilePlace {
    /// The host's private directory (0700), removed when the process ends.
    #[default]
    Private,
    /// The CLI's working directory. The host never overwrites a file that is
    /// there: an existing one fails the materialization. It removes the file,
    /// and the directories it created for it, when the process ends.
    Project,
}

impl FilePlace {
    /// Whether this is the default place.
    pub fn is_private(&self) -> bool {
        *self == FilePlace::Private
    }
}

impl std::fmt::Debug for MaterializedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "MaterializedFile({:?} {}, {} bytes)",
            self.place,
            self.name,
            self.contents.len()
        )
    }
}

/// What carries the delivered servers to the CLI. Built with
/// [`Materialized::new`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct Materialized {
    /// Arguments placed right after the program (before the user's own).
    pub args: Vec<String>,
    /// Environment variables to set.
    pub env: Vec<KeyValue>,
    /// Files to write.
    pub files: Vec<MaterializedFile>,
}

impl Materialized {
    /// Arguments, environment and files for the CLI.
    pub fn new(args: Vec<String>, env: Vec<KeyValue>, files: Vec<MaterializedFile>) -> Self {
        Materialized { args, env, files }
    }
}

pub use crate::harness::ServerSetup;

/// One word for a POSIX shell: as it is when it needs no quoting, else
/// single-quoted.
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:=@%,".contains(&b));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// How a passthrough plugin materializes servers and reads the CLI's reports.
///
/// An implementor is responsible for:
/// - materializing exactly the plan's delivered servers, in the CLI's own
///   configuration shape, and nothing else;
/// - putting every secret (env values, header values) only in
///   [`Materialized::env`], referenced by variable name from files and
///   arguments, so nothing another user can read holds it;
/// - naming files by plain names: the host decides where they live (a CLI
///   that reads servers only from its project directory gets a
///   [`FilePlace::Project`] path, which the host never lets overwrite a
///   file that is there);
/// - being pure: no files written, no processes started, nothing logged.
///
/// The host does the rest: it writes the files 0600 in a private 0700
/// directory and removes them, starts the CLI in its own process group with
/// an explicit environment, and feeds [`read_output`](Self::read_output)
/// each stdout line. Two methods have defaults: a CLI that reports nothing
/// needs neither `read_output` nor `reports_servers`.
///
/// Only what starting the CLI needs is here. What the harness says about
/// its own sessions (its telemetry, its session files, how a user adds a
/// server to it) are its plugin's other [`Roles`](crate::harness::Roles),
/// which `tether collect` and `tether sessions` use for sessions Tether
/// never started.
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
    fn read_output(&self, line: &str, at: Timestamp) -> Vec<Evidence> {
        let _ = (line, at);
        Vec::new()
    }

    /// Whether the CLI reports every delivered server on its stdout (through
    /// [`read_output`](Self::read_output)), as Claude's `system/init`
    /// does. The host's probe then waits for that complete report (or the
    /// CLI's exit, or its timeout) before it settles; for a CLI that reports
    /// nothing it ends on contact.
    fn reports_servers(&self) -> bool {
        false
    }
}
