//! An example third-party plugin: a variant of the Gemini CLI plugin that
//! delivers through Gemini's *system* settings file instead of the project's,
//! for hosts that must leave the working directory untouched (agent kind
//! `gemini-system`). It is written against `tether-sdk`, reuses the
//! first-party plugin's settings shape (`tether_passthrough_gemini::
//! settings_document`) instead of copying it, passes the conformance kit, and
//! builds as a shared library that `tether plugins --load` (or
//! `tether probe --load … --passthrough gemini-system`) loads at run time.
//!
//! The file is named by `GEMINI_CLI_SYSTEM_SETTINGS_PATH`. Gemini refuses a
//! system settings file when any directory above it is writable by others
//! (such as `/tmp`), so the host's private directory must live somewhere
//! private (for example under `$XDG_RUNTIME_DIR`); that caveat is why the
//! first-party plugin uses the project file. Secret values are `$VAR`
//! references Gemini resolves from the environment the host sets.

use std::path::Path;

use tether_sdk::materialize::{EVERY_TRANSPORT, deliver_first_endpoint};
use tether_sdk::*;

/// The plugin's name.
pub const PLUGIN_NAME: &str = "gemini-system-settings";
/// The settings file it materializes.
pub const SETTINGS_FILE: &str = "gemini-settings.json";
/// The variable that points Gemini at it.
pub const SETTINGS_ENV: &str = "GEMINI_CLI_SYSTEM_SETTINGS_PATH";

/// The Gemini CLI, delivered through its system settings.
#[derive(Debug, Default, Clone, Copy)]
pub struct GeminiPlugin;

impl TransportObserver for GeminiPlugin {
    fn descriptor(&self) -> PluginDescriptor {
        PluginDescriptor::new(
            PLUGIN_NAME,
            ["gemini-system"],
            DriveMode::Passthrough,
            env!("CARGO_PKG_VERSION"),
        )
    }

    fn decide(&self, server: &ServerSpec, _: &PlanContext) -> Decision {
        deliver_first_endpoint(server)
    }

    fn passthrough(&self) -> Option<&dyn PassthroughStrategy> {
        Some(self)
    }

    fn roles(&self) -> Roles<'_> {
        Roles::none().records(self).telemetry(self).setup(self)
    }
}

impl PassthroughStrategy for GeminiPlugin {
    fn capabilities(&self) -> AgentCapabilities {
        EVERY_TRANSPORT
    }

    fn materialize(
        &self,
        plan: &Plan,
        _: &PlanContext,
        dir: &Path,
    ) -> Result<Materialized, String> {
        // The settings shape is the first-party Gemini plugin's, shared.
        let (contents, mut env) = tether_passthrough_gemini::settings_document(plan)?;
        env.push(KeyValue::new(
            SETTINGS_ENV,
            dir.join(SETTINGS_FILE).display().to_string(),
        ));
        Ok(Materialized::new(
            vec![],
            env,
            vec![MaterializedFile::private(SETTINGS_FILE, contents)],
        ))
    }
}

impl RecordReader for GeminiPlugin {
    /// The same Gemini CLI writes the same chats: the first-party reader's.
    fn record_sources(&self) -> Vec<RecordSource> {
        tether_passthrough_gemini::records::sources(
            tether_passthrough_gemini::telemetry::Flavor::Gemini,
        )
    }

    fn read_record(&self, file: &RecordFile<'_>, record: &str) -> RecordAnswer {
        tether_passthrough_gemini::records::read(
            tether_passthrough_gemini::telemetry::Flavor::Gemini,
            file,
            record,
        )
    }

    /// Verified where the first-party reader was.
    fn records_verified_on(&self) -> Option<tether_sdk::VerifiedRange> {
        first_party().records_verified_on()
    }
}

impl TelemetryReader for GeminiPlugin {
    /// The same Gemini CLI, so the same telemetry settings (shown for this
    /// kind) as the first-party plugin's.
    fn telemetry_setup(&self, target: &TelemetryTarget) -> Option<TelemetrySetup> {
        let mut setup = first_party().telemetry_setup(target)?;
        setup.agent_kind = "gemini-system".into();
        Some(setup)
    }

    /// The same Gemini CLI, so the first-party plugin's mapping reads it.
    fn read_telemetry(&self, record: &TelemetryRecord, configured: &[String]) -> TelemetryAnswer {
        tether_passthrough_gemini::telemetry::read(
            tether_passthrough_gemini::telemetry::Flavor::Gemini,
            record,
            configured,
        )
    }
}

impl SetupGuide for GeminiPlugin {
    /// The same Gemini CLI, so the same user settings file.
    fn server_setup(&self, name: &str, command: &str, args: &[String]) -> Option<ServerSetup> {
        first_party().server_setup(name, command, args)
    }
}

fn first_party() -> tether_passthrough_gemini::PassthroughGemini {
    tether_passthrough_gemini::PassthroughGemini(tether_passthrough_gemini::GEMINI)
}

tether_sdk::export_plugin!(GeminiPlugin);

#[cfg(test)]
mod tests {
    #[test]
    fn the_plugin_passes_the_conformance_kit() {
        tether_sdk::conformance::assert_conforms(&super::GeminiPlugin);
    }
}
