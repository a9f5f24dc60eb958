//! tether-kandev-endpoint: the host-owned MCP endpoint that Tether observes
//! from the server side, plus the sentinel toolset probes inject.
//!
//! Its modules:
//! - [`endpoint`]: [`ObservedEndpoint`], one rmcp server on 127.0.0.1 over
//!   streamable HTTP (`/mcp`), legacy HTTP+SSE (`/sse` + `/message`), and a
//!   loopback socket for the `tether-bridge` stdio relay;
//! - [`report`]: [`report::ReportingHandler`] wraps the host's handler per
//!   connection and publishes initialize (or `server/discover`), tools/list
//!   with its count, tools/call by name and outcome, protocol errors and one
//!   close per connection, through the bound
//!   [`EvidenceSink`](tether_hub::EvidenceSink);
//! - [`credential`]: [`AttemptCredential`], from the OS RNG, locks the
//!   endpoint to the agent it was delivered to: every transport refuses a
//!   request without the current attempt's credential, and records it as
//!   `unauthenticated_contact`;
//! - [`bridge`]: `tether-bridge`, the stdio relay to the endpoint's loopback socket;
//! - [`catalog`]: the tool catalog of the host's own server, with token estimates;
//! - [`sentinel`]: [`Sentinel`], the probe's one harmless tool.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`plugins/kandev-endpoint/`), each
//! with the test that checks it.

pub mod bridge;
pub mod catalog;
pub mod credential;
pub mod endpoint;
pub mod report;
pub mod sentinel;
mod sse;
mod wire;

pub use credential::AttemptCredential;
pub use endpoint::{ObservedEndpoint, bridge_next_to_current_exe};
pub use sentinel::{SENTINEL_SERVER, SENTINEL_TOOL, Sentinel};
