//! tether-probe: does a real agent attach to an injected MCP server, and how
//! far does it get? (`tether probe`)
//!
//! Both probes run the agent in its own process group with an explicit
//! environment and private directories, offer it the sentinel (a harmless
//! one-tool MCP server, observed by `tether-kandev-endpoint`), wait on
//! evidence, and kill the group on every path:
//! - [`acp`]: agents spoken to over ACP (`initialize`, `session/new` with the
//!   sentinel in `mcpServers`, an optional prompt);
//! - [`passthrough`]: CLIs run as plain processes, through their plugin's
//!   passthrough strategy (files, arguments, environment);
//! - [`support`]: what both share (the sentinel's plan entry, directories,
//!   environment, progress steps, scrubbed leftovers).
//!
//! Its invariants are written once, in ARCHITECTURE.md (`probe/`), each
//! with the test that checks it.

pub mod acp;
pub mod passthrough;
pub mod support;

pub use acp::{ProbeOptions, run_probe};
pub use passthrough::{PassthroughOptions, run_passthrough_probe};
pub use support::{ProbeExport, ProbeOutcome, ProbeStep, ProbeTarget, SentinelTransport};
