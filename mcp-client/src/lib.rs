//! tether-mcp-client: the MCP client transports rmcp 3.x does not ship.
//!
//! - [`sse`]: a bounded legacy HTTP+SSE client transport (`GET` the SSE URL,
//!   wait for the `endpoint` event, `POST` each message there).
//! - [`resume`]: streamable HTTP resumption that waits the server's SSE
//!   `retry` on every reconnection and sends `Last-Event-ID` (around rmcp's
//!   own client).
//!
//! It depends on no other Tether crate, so an agent (the reference agent, for
//! one) can use it without pulling in Tether's server or process machinery.

#![warn(missing_docs)]

pub mod resume;
pub mod sse;
