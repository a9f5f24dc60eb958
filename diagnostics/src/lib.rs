//! tether-diagnostics: what a developer or a host runs on demand to find out
//! whether one MCP server answers.
//!
//! - [`endpoint_check`]: the bounded `initialize` + `tools/list` against one
//!   server ([`check_endpoint`]), behind `tether endpoint-test` and
//!   `tether inventory --test`; its outcome is an
//!   [`EndpointTestResult`](tether_core::EndpointTestResult);
//! - [`inventory`]: endpoint checks over a whole inventory, a few at a time;
//! - [`pins`]: a check's listing compared with the server's tool pins in a
//!   store, after the check (the first sighting pins);
//! - [`api`]: the host's diagnostics API ([`Diagnostics`]): the authorizer
//!   first, server *names* only, results stored as `endpoint_tested`
//!   evidence, and the live execution's recent output on demand.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`diagnostics/`), each
//! with the test that checks it.

#![warn(missing_docs)]

pub mod api;
pub mod endpoint_check;
pub mod inventory;
pub mod pins;

pub use api::{Action, Authorizer, Diagnostics, DiagnosticsError};
pub use endpoint_check::{CheckLimits, check_endpoint, endpoint_for_url};
