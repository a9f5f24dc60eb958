//! What the relay process and the host say to each other on the loopback
//! channel: JSON lines. The relay presents its one-time ticket, the host
//! answers with the real server's launch spec (never on a command line or in
//! a file), then the relay sends observations until it ends.

use serde::{Deserialize, Serialize};

/// The environment variable that tells `tether-relay` where its host is and
/// which ticket to present: `127.0.0.1:PORT/TICKET`. The ticket works once.
pub const RELAY_ENV: &str = "TETHER_RELAY";

/// The longest line either side accepts on the channel.
pub const MAX_CHANNEL_LINE: usize = 1024 * 1024;

/// The relay's first line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hello {
    /// The one-time ticket from [`RELAY_ENV`].
    pub ticket: String,
}

/// The host's answer.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HostAnswer {
    /// Start this server and relay it.
    Launch {
        /// The server's name (for messages only).
        server: String,
        /// The command.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra environment, over the relay's own.
        env: Vec<(String, String)>,
        /// Working directory.
        cwd: Option<String>,
    },
    /// No such ticket (used already, expired, never issued).
    Refused {
        /// Why, in words.
        reason: String,
    },
}

impl std::fmt::Debug for HostAnswer {
    /// Never shows arguments or environment values.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostAnswer::Launch { server, .. } => write!(f, "Launch({server})"),
            HostAnswer::Refused { reason } => write!(f, "Refused({reason})"),
        }
    }
}
