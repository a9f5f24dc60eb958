//! The glue every passthrough plugin would otherwise write again: the
//! [`TransportObserver`](crate::TransportObserver) of a CLI that takes every
//! transport from its configuration, with the roles its plugin has
//! ([`passthrough_observer!`]), and the role methods that only hand a call
//! on to the plugin's own modules ([`forward_reader!`]).
//!
//! ```
//! use tether_sdk::*;
//!
//! mod records {
//!     use tether_sdk::*;
//!     pub fn sources() -> Vec<RecordSource> {
//!         Vec::new()
//!     }
//!     pub fn read(_: &RecordFile<'_>, _: &str) -> RecordAnswer {
//!         RecordAnswer::Unknown
//!     }
//! }
//!
//! struct MyCli;
//!
//! tether_sdk::passthrough_observer!(MyCli, "my-cli", ["my-cli"], roles: [records]);
//!
//! impl PassthroughStrategy for MyCli {
//!     fn capabilities(&self) -> AgentCapabilities {
//!         tether_sdk::materialize::EVERY_TRANSPORT
//!     }
//!     fn materialize(&self, _: &Plan, _: &PlanContext, _: &std::path::Path) -> Result<Materialized, String> {
//!         Ok(Materialized::new(vec![], vec![], vec![]))
//!     }
//! }
//!
//! impl RecordReader for MyCli {
//!     tether_sdk::forward_reader! {
//!         record_sources: records::sources,
//!         read_record: records::read,
//!         verified_on: "1.0.0"..="1.2.0",
//!     }
//! }
//! # assert!(MyCli.records_verified_on().is_some());
//! ```

/// Implements [`TransportObserver`](crate::TransportObserver) for a
/// passthrough CLI that takes every transport from its configuration: its
/// descriptor (`NAME`, `KINDS`, [`DriveMode::Passthrough`](crate::DriveMode),
/// the crate's version), the decision
/// [`deliver_first_endpoint`](crate::materialize::deliver_first_endpoint),
/// the type itself as its [`PassthroughStrategy`](crate::PassthroughStrategy)
/// (which it implements), and the [`Roles`](crate::Roles) named, each a
/// role trait the type implements (`records`, `telemetry`, `census`,
/// `last_mile`, `setup`, `model_tap`).
///
/// `passthrough_observer!(MyCli, PLUGIN_NAME, AGENT_KINDS, roles: [records, setup]);`
#[macro_export]
macro_rules! passthrough_observer {
    ($plugin:ty, $name:expr, $kinds:expr $(,)?) => {
        $crate::passthrough_observer!($plugin, $name, $kinds, roles: []);
    };
    ($plugin:ty, $name:expr, $kinds:expr, roles: [$($role:ident),* $(,)?] $(,)?) => {
        impl $crate::TransportObserver for $plugin {
            fn descriptor(&self) -> $crate::PluginDescriptor {
                $crate::PluginDescriptor::new(
                    $name,
                    $kinds,
                    $crate::DriveMode::Passthrough,
                    env!("CARGO_PKG_VERSION"),
                )
            }

            fn decide(
                &self,
                server: &$crate::ServerSpec,
                _: &$crate::PlanContext,
            ) -> $crate::Decision {
                $crate::materialize::deliver_first_endpoint(server)
            }

            fn passthrough(&self) -> Option<&dyn $crate::PassthroughStrategy> {
                Some(self)
            }

            fn roles(&self) -> $crate::Roles<'_> {
                $crate::Roles::none()$(.$role(self))*
            }
        }
    };
}

/// Writes, inside a role's `impl` block, the methods that only hand the call
/// on to the plugin's own functions. Name the ones the plugin has, in any
/// order, separated by commas:
///
/// - in `impl HarnessCensus`: `census: census::census,`
///   ([`HarnessCensus::census`](crate::HarnessCensus::census));
/// - in `impl TelemetryReader`: `read_telemetry: telemetry::read,` (a
///   `fn(&TelemetryRecord, &[String]) -> TelemetryAnswer`);
/// - in `impl RecordReader`: `record_sources: records::sources,`,
///   `read_record: records::read,` (a `fn(&RecordFile, &str) ->
///   RecordAnswer`) and `verified_on: "OLDEST"..="NEWEST",`
///   ([`RecordReader::records_verified_on`](crate::RecordReader::records_verified_on)).
///
/// The others (a telemetry setup, a server's setup, the last mile) say
/// something of the harness itself, so the plugin writes them.
#[macro_export]
macro_rules! forward_reader {
    () => {};
    (census: $f:path $(, $($rest:tt)*)?) => {
        fn census(&self) -> ::std::vec::Vec<$crate::CensusEntry> {
            $f()
        }
        $($crate::forward_reader!($($rest)*);)?
    };
    (read_telemetry: $f:path $(, $($rest:tt)*)?) => {
        fn read_telemetry(
            &self,
            record: &$crate::TelemetryRecord,
            configured: &[::std::string::String],
        ) -> $crate::TelemetryAnswer {
            $f(record, configured)
        }
        $($crate::forward_reader!($($rest)*);)?
    };
    (record_sources: $f:path $(, $($rest:tt)*)?) => {
        fn record_sources(&self) -> ::std::vec::Vec<$crate::RecordSource> {
            $f()
        }
        $($crate::forward_reader!($($rest)*);)?
    };
    (read_record: $f:path $(, $($rest:tt)*)?) => {
        fn read_record(
            &self,
            file: &$crate::RecordFile<'_>,
            record: &str,
        ) -> $crate::RecordAnswer {
            $f(file, record)
        }
        $($crate::forward_reader!($($rest)*);)?
    };
    (verified_on: $oldest:literal ..= $newest:literal $(, $($rest:tt)*)?) => {
        fn records_verified_on(&self) -> Option<$crate::VerifiedRange> {
            Some($crate::VerifiedRange::new($oldest, $newest))
        }
        $($crate::forward_reader!($($rest)*);)?
    };
}
