//! The opt-in observing relay, for third-party MCP servers that otherwise
//! talk to the agent directly (and so stay "Delivered · unverified").
//!
//! A host that opts a stdio server in calls [`RelayHost::relay`]: the agent
//! is given `tether-relay` with a one-time ticket instead of the real
//! command. The relay fetches the real launch spec from the host over a
//! loopback channel (so the command, its arguments and its env never sit
//! on a command line or in a file), starts the server as its own child,
//! copies every byte both ways unchanged, and reports what it sees, metadata
//! only, as evidence for that server's row (provenance `relay`).
//!
//! - [`frames`]: the pure frame reader (requests paired with answers).
//! - [`pump`]: the byte-exact copy with a side copy that never holds it back.
//! - [`run`]: the relay process.
//! - [`host`]: the host's channel and the evidence it publishes.
//! - [`http`]: the HTTP relay, a loopback reverse proxy run by the host for
//!   streamable-HTTP and legacy-SSE servers (the agent never holds their
//!   credentials).
//! - [`protocol`]: what the two say to each other.
//! - `report`: either relay's observations, as evidence (`Reporter`).

pub mod frames;
pub mod host;
pub mod http;
pub mod protocol;
pub mod pump;
mod report;
pub mod run;

pub use host::{Offered, RelayError, RelayHost, RelayTicket, relay_next_to_current_exe};
