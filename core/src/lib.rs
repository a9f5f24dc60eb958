//! tether-core: which MCP servers an agent really got, how far each got, and why it stopped.
//!
//! This crate holds the stable contract and nothing that talks to the world:
//! - [`model`]: the evidence schema (the public JSON contract);
//! - [`vocab`]: reason codes, evidence kinds, statuses, stages, provenance;
//! - [`reducer`]: the pure (history, event) → history function;
//! - [`sanitize`]: what every string passes before it is stored, printed or copied;
//! - [`observer`]: the [`TransportObserver`] contract plugins implement, and planning;
//! - [`registry`]: compiled-in and run-time plugins;
//! - [`hub`]: live per-session state with non-blocking evidence sinks;
//! - [`store`]: persistence (`Store`, rehydration, SQLite behind the `sqlite` feature);
//! - [`display`]: labels, checklists and copy-safe diagnostics for every renderer;
//! - [`probe`]: the probe report and the verdict read off evidence;
//! - [`capabilities`]: the configuration inventory (`tether inventory`) and its scanners;
//! - [`diagnostics`]: the endpoint-test report;
//! - [`schema`]: JSON Schema (draft 2020-12) of the public documents.

pub mod capabilities;
pub mod diagnostics;
pub mod display;
pub mod hub;
pub mod model;
pub mod observer;
pub mod passthrough;
pub mod probe;
pub mod reducer;
pub mod registry;
pub mod sanitize;
pub mod schema;
pub mod store;
pub mod vocab;

pub use hub::{
    AttemptHandle, AttemptRequest, EvidenceSink, Hub, HubConfig, HubError, PublishError,
};
pub use model::{
    AttachmentAttempt, AttachmentHistory, ClientInfo, EndpointTestResult, Evidence, SCHEMA_VERSION,
    ServerAttachment, Timestamp,
};
pub use observer::{
    AgentCapabilities, Decision, Delivery, Endpoint, Harness, KeyValue, Plan, PlanContext,
    PlannedServer, PluginDescriptor, ServerSpec, TransportObserver,
};
pub use registry::{PluginSource, Registry, RegistryError};
pub use vocab::{
    ConfigScope, CwdClass, DecisionKind, DisplayStatus, EnvClass, EvidenceKind, Provenance,
    ReasonCode, ServerSource, Stage, StageState, Transport, Trigger,
};

#[doc(hidden)]
pub use inventory;
