//! tether-sdk: what a third-party plugin author depends on, and nothing else.
//!
//! A plugin implements [`TransportObserver`]: one [`Decision`] per configured
//! server (deliver, filter or unavailable, with a stable [`ReasonCode`]), then
//! reports what it observes through the [`EvidenceSink`] the host hands it.
//! Register a compiled-in plugin with [`register_plugin!`].
//!
//! ```
//! use tether_sdk::*;
//!
//! struct MyAgent;
//!
//! impl TransportObserver for MyAgent {
//!     fn descriptor(&self) -> PluginDescriptor {
//!         PluginDescriptor {
//!             name: "my-agent".into(),
//!             agent_kinds: vec!["my-agent".into()],
//!             harness: Harness::Passthrough,
//!             version: "0.1.0".into(),
//!         }
//!     }
//!
//!     fn decide(&self, server: &ServerSpec, _ctx: &PlanContext) -> Decision {
//!         match server.endpoints.iter().map(Endpoint::transport).find(|t| *t == Transport::Stdio) {
//!             Some(transport) => Decision::Deliver { transport, via: Delivery::ConfigFile },
//!             None => Decision::filter(ReasonCode::TransportUnsupported),
//!         }
//!     }
//! }
//!
//! register_plugin!("my-agent", || Box::new(MyAgent));
//! ```

pub mod conformance;
pub mod dynamic;

pub use tether_core::hub::{EvidenceSink, PublishError};
pub use tether_core::model::{ClientInfo, EndpointTestResult, Evidence, Timestamp};
pub use tether_core::observer::{
    AgentCapabilities, Decision, Delivery, Endpoint, Harness, KeyValue, Plan, PlanContext,
    PlannedServer, PluginDescriptor, ServerSpec, TransportObserver,
};
pub use tether_core::passthrough::{Materialized, MaterializedFile, PassthroughStrategy};
pub use tether_core::register_plugin;
pub use tether_core::registry::ANY_KIND;
pub use tether_core::sanitize::Scrubber;
pub use tether_core::vocab::{EvidenceKind, Provenance, ReasonCode, ServerSource, Transport};
