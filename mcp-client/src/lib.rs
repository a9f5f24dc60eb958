//! tether-mcp-client: the MCP client transports rmcp 3.x does not ship.
//!
//! - [`sse`]: a bounded legacy HTTP+SSE client transport (`GET` the SSE URL,
//!   wait for the `endpoint` event, `POST` each message there).
//!
//! It depends on no other Tether crate, so an agent (the reference agent, for
//! one) can use it without pulling in Tether's server or process machinery.

#![warn(missing_docs)]

pub mod sse;
