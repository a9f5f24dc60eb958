//! The live status service and the reference status view.
//!
//! A host mounts [`StatusService::router`] over its [`Hub`](tether_hub::Hub)
//! (with its [`Diagnostics`](tether_diagnostics::api::Diagnostics), for the
//! actions), or follows a [`Store`](tether_core::store::Store) read-only; or it
//! calls [`StatusService::serve`] and gets a loopback socket.
//!
//! What it serves (every `/api/` route needs the bearer token):
//! - `GET /api/v1/sessions`: the sessions, with row counts per status;
//! - `GET /api/v1/events`: the same list as Server-Sent Events, on change;
//! - `GET /api/v1/sessions/{id}`: one session's history and projected rows;
//! - `GET /api/v1/sessions/{id}/events`: its live stream (current state
//!   first, then one `status` event per change, latest-wins; `removed` at the end);
//! - `GET /api/v1/sessions/{id}/diagnostics`: copy-safe text;
//! - `GET /api/v1/sessions/{id}/check?require=…&require_tool=…`: its
//!   requirements evaluated by `tether-requirements` (as `tether check`),
//!   one CheckDocument;
//! - `GET /api/v1/fleet/sessions?…`: one page of the sessions that match the
//!   fleet page's filters, with counts over every match; `GET
//!   /api/v1/fleet/servers?…`: one row per server name across them;
//!   `GET /api/v1/fleet/events`: a small `fleet` event on every change;
//! - `POST /api/v1/endpoint-test` `{session_id, server_name}`: a bounded
//!   endpoint test through the diagnostics API; its result lands in the history;
//! - `POST /api/v1/recent-output` `{session_id}`: the live tail, never stored;
//! - `POST /api/v1/login` `{code}` (no token; the page only) and
//!   `POST /api/v1/login-links`: one-time login codes;
//! - `/`, `/view.js`, `/view.css`: the reference view.
//!
//! Its modules: [`service`] (the router: the API, its two event streams, the
//! actions and the view's files), [`security`] (the bearer token, the
//! per-session authorizer, the `Host` and `Origin` checks, login codes),
//! [`source`] (a live hub or a store followed read-only), [`documents`] (the
//! API's versioned documents and their schemas) and [`fleet`] (the fleet
//! page's filters and counts).
//!
//! Why Server-Sent Events and not WebSocket: the stream is one-way (actions
//! are plain POSTs), SSE is plain HTTP through the same guard, and every
//! event is the whole state, so resuming needs no protocol of its own.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`web/`), each
//! with the test that checks it.

pub mod documents;
pub mod fleet;
mod parts;
pub mod security;
pub mod service;
pub mod source;

pub use documents::{STATUS_API_SCHEMA_VERSION, SessionList, SessionStatus};
pub use security::{Action, ApiToken, Authorizer, HostPolicy};
pub use service::{RunningService, StatusService};
pub use source::{ChangeHint, HubSource, StatusSource, StoreSource};
