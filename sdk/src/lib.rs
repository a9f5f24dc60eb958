//! tether-sdk: what a third-party plugin author depends on, and nothing else.
//!
//! # Writing a plugin from zero
//!
//! A plugin teaches Tether one agent kind. For every server a host configures,
//! it must answer one [`Decision`]: deliver (over which transport, by which
//! means), filter, or unavailable, each with a stable [`ReasonCode`]. It can
//! never answer "nothing": the core records `unavailable/observer_omitted` for
//! any server it skips, and a panic is contained.
//!
//! 1. **Create a crate** with `crate-type = ["cdylib", "rlib"]` (a shared
//!    library for hosts, an rlib for your tests) and depend on `tether-sdk`.
//! 2. **Describe it** ([`PluginDescriptor`]): a unique name, the agent kinds
//!    it handles, and its [`DriveMode`] (ACP, or a passthrough CLI).
//! 3. **Decide** ([`TransportObserver::decide`]): deliver only over a
//!    transport the server offers (`server.endpoints`), deterministically, and
//!    never put a secret in a summary.
//! 4. **For a passthrough CLI, materialize** ([`PassthroughStrategy`]): return
//!    the files (plain names; the host writes them 0600 in a private directory
//!    and removes them), arguments and environment that carry the delivered
//!    servers. Secrets go only in [`Materialized::env`], referenced from files
//!    or arguments by variable name, so nothing readable by other users holds
//!    them. Carry every header of an http or sse endpoint (the host's own
//!    endpoint needs its per-attempt `Authorization` credential); if the CLI
//!    cannot send headers over a transport, decide
//!    `unavailable/headers_unsupported` rather than deliver it. If the CLI
//!    reports its own MCP status on stdout, turn it into `agent_reported`
//!    evidence in `read_output`.
//! 5. **Test it with one call**: `tether_sdk::conformance::assert_conforms(&MyPlugin)`.
//! 6. **Ship it**: `tether_sdk::export_plugin!(MyPlugin);` exports the one
//!    `extern "C"` entry point (ABI [`dynamic::ABI_VERSION`]); hosts load it
//!    with `tether plugins --load lib….so` or [`dynamic::load`]. To compile it
//!    into a host instead, register it with [`register_plugin!`].
//!
//! The contract's vocabularies, answers and the structs a plugin builds are
//! `#[non_exhaustive]`: a later Tether may add a variant or a field without
//! breaking a plugin, so match them with a `_` arm and build them with their
//! constructors ([`PluginDescriptor::new`], [`Materialized::new`], …).
//!
//! Evidence reaches a host only through the sink the host hands out
//! (`tether_hub::EvidenceSink`, host machinery this kit does not carry);
//! [`Evidence`] has no ownership fields, so a plugin cannot forge them.
//!
//! ```
//! use tether_sdk::*;
//!
//! struct MyAgent;
//!
//! impl TransportObserver for MyAgent {
//!     fn descriptor(&self) -> PluginDescriptor {
//!         PluginDescriptor::new("my-agent", ["my-agent"], DriveMode::Passthrough, "0.1.0")
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
//! # tether_sdk::conformance::assert_conforms(&MyAgent);
//! ```
//!
//! See `examples/third-party-plugin` for a complete passthrough plugin (the
//! Gemini CLI through its system settings, kind `gemini-system`) that ships
//! as a shared library. [`materialize`] has the helpers every passthrough
//! plugin shares: references to environment variables in each CLI's syntax,
//! and the Claude-style `system/init` reader; [`glue`] writes the
//! [`TransportObserver`] of a CLI that takes every transport
//! ([`passthrough_observer!`]) and the role methods that only forward to
//! the plugin's own modules ([`forward_reader!`]).
//!
//! Beyond deciding: [`records`] and [`telemetry`] hold the helpers a session-record
//! reader and a telemetry mapping share, [`names`] spells names as the
//! harnesses write them, [`census`] checks a plugin's census
//! against its reader, and [`conformance`] is the one-call kit every plugin runs.
//!
//! # Teaching `tether inventory` a harness's configuration
//!
//! Implement [`ConfigScanner`]: read files only through the [`ScanContext`]'s
//! roots ([`ScanOutput::read_json`], [`ConfigRoot::read`]: 1 MiB cap, no
//! symlink out of the root, special files refused), hand each server entry to
//! [`ScanOutput::add_servers`] (or build a [`FoundServer`] and
//! [`ScanOutput::push`] it) with its [`Enablement`] and precise reason, and
//! register it with [`register_scanner!`]. The row builder keeps names and
//! classes only: values never reach a row. Test it in process against a
//! private home, project and system root with [`scan_fixture::ScanFixture`].
//! Scanners are compiled in (the dynamic ABI carries no scanner).

pub mod census;
pub mod conformance;
pub mod dynamic;
pub mod glue;
pub mod materialize;
pub mod names;
pub mod records;
pub mod scan_fixture;
pub mod telemetry;

pub use tether_core::harness::{
    HarnessCensus, HarnessId, Roles, RunTimeShown, ServerSetup, SetupGuide,
};
pub use tether_core::inventory::{InventoryDocument, InventoryRow};
pub use tether_core::last_mile::LastMile;
pub use tether_core::model::{ClientInfo, EndpointTestResult, Evidence, Timestamp};
pub use tether_core::model_tap::{ModelCaller, ModelSetup, ModelTap};
pub use tether_core::passthrough::{
    FilePlace, Materialized, MaterializedFile, PassthroughStrategy,
};
pub use tether_core::records::{
    CensusEntry, RecordAnswer, RecordFile, RecordFormat, RecordReader, RecordReading, RecordSource,
    VerifiedRange,
};
pub use tether_core::register_plugin;
pub use tether_core::registry::ANY_KIND;
pub use tether_core::sanitize::Scrubber;
pub use tether_core::telemetry::{
    HeadersSent, NamedServer, TelemetryAnswer, TelemetryReader, TelemetryReading, TelemetryRecord,
    TelemetrySetup, TelemetrySignal, TelemetryTarget, TelemetryValue,
};
pub use tether_core::vocab::{
    ConfigScope, EvidenceKind, Provenance, ReasonCode, ServerSource, StageState, Transport,
};
pub use tether_core::{
    AgentCapabilities, Decision, Delivery, DriveMode, Endpoint, KeyValue, Plan, PlanContext,
    PlannedServer, PluginDescriptor, ServerSpec, TransportObserver,
};
pub use tether_inventory::register_scanner;
pub use tether_inventory::{
    ConfigRoot, ConfigScanner, Enablement, EntryDialect, FoundServer, ScanContext, ScanOutput,
};
