//! tether-core: which MCP servers an agent really got, how far each got, and why it stopped.
//!
//! This crate holds the stable contract and nothing that talks to the world
//! or runs (no files, no environment, no processes, no sockets, no threads,
//! no clock); the runtime around it is `tether-hub`:
//! - [`vocab`]: reason codes, evidence kinds, statuses, stages, provenance;
//! - [`sanitize`]: what every string passes before it is stored, printed or copied, and what a name may be;
//! - [`model`]: the evidence model every public document is built from;
//! - [`history`]: the attachment history document (one session, its attempts, its rows);
//! - [`inventory`]: the configuration inventory document and snapshot changes;
//! - [`probe`]: the probe report and the verdict read off evidence;
//! - [`diagnostics`]: the endpoint-test document;
//! - [`owner`]: whose an attempt is (task, session, execution and attempt ids, one type each);
//! - [`spec`]: what a host configured (secret-bearing, never stored);
//! - [`plan`]: decisions, the plan of an attempt, and what the agent advertised;
//! - [`observer`]: the [`TransportObserver`] contract plugins implement, and planning;
//! - [`passthrough`]: the passthrough half of that contract;
//! - [`pins`]: tool definition pins: the server's identity, what counts as a change;
//! - [`registry`]: compiled-in and run-time plugins, and the plugin listing;
//! - [`reducer`]: the pure (history, event) → history function;
//! - [`served`]: what an observed MCP server served, request by request (for exporters);
//! - [`telemetry`]: the telemetry role: how a harness's own telemetry reaches a receiver, and what one record of it shows;
//! - [`traffic`]: what observed MCP traffic proves, mapped to evidence once;
//! - [`store`]: the persistence contract (`Store`) and rehydration;
//! - [`schema`]: JSON Schema (draft 2020-12) of the public documents;
//! - [`harness`]: a harness's one name ([`HarnessId`]) and the roles its plugin has ([`harness::Roles`]);
//! - [`records`]: what a harness writes to disk about its sessions, and the readings a plugin takes from it;
//! - [`capability`]: every capability in a session beyond its servers (skills, hooks, plugins);
//! - [`capability_event`]: which skill, hook or plugin a piece of evidence is about;
//! - [`last_mile`]: the rules a plugin declares for what a harness does to tools before the model, and their predictions;
//! - [`model_tap`]: how to point a harness at the model tap, and who sent a model request.
//!
//! The words people read (labels, sentences, explain texts) live in
//! `tether-words`, above this crate.
//!
//! Its modules import each other without a circle, and its invariants are
//! written once, in ARCHITECTURE.md (`core/`), each with the test that
//! checks it.

pub mod capability;
pub mod capability_event;
pub mod diagnostics;
pub mod harness;
pub mod history;
pub mod inventory;
pub mod last_mile;
pub mod model;
pub mod model_tap;
pub mod observer;
pub mod owner;
pub mod passthrough;
pub mod pins;
pub mod plan;
pub mod probe;
pub mod records;
pub mod reducer;
pub mod registry;
pub mod sanitize;
pub mod schema;
pub mod served;
pub mod spec;
pub mod store;
pub mod telemetry;
pub mod traffic;
pub mod vocab;

pub use harness::HarnessId;
pub use history::{AttachmentAttempt, AttachmentHistory, SCHEMA_VERSION, ServerAttachment};
pub use model::{ClientInfo, EndpointTestResult, Evidence, Timestamp};
pub use observer::TransportObserver;
pub use owner::{AttemptId, ExecutionId, Owner, SessionId, TaskId};
pub use plan::{
    AgentCapabilities, Decision, Delivery, DriveMode, Plan, PlanContext, PlannedServer,
    PluginDescriptor,
};
pub use registry::{PluginSource, Registry, RegistryError};
pub use spec::{Endpoint, KeyValue, ServerSpec};
pub use vocab::{
    ConfigScope, CwdClass, DecisionKind, DisplayStatus, EvidenceKind, Provenance, ReasonCode,
    ServerSource, Stage, StageState, Transport, Trigger,
};

/// What `register_plugin!` expands to needs; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use inventory;
}
