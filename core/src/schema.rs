//! JSON Schema (draft 2020-12) for the public documents.

use schemars::{JsonSchema, generate::SchemaSettings};
use serde_json::Value;

use crate::diagnostics::EndpointTestDocument;
use crate::history::{AttachmentAttempt, AttachmentHistory};
use crate::probe::ProbeReport;

/// Where the published schemas are identified (an identifier, not a download).
pub const SCHEMA_ID_BASE: &str = "https://tether.dev/schema/";

/// The schema of `T`, as draft 2020-12 JSON, identified as `SCHEMA_ID_BASE` + `name`.
pub fn schema_of<T: JsonSchema>(name: &str) -> Value {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(map) = &mut schema {
        map.insert(
            "$id".into(),
            Value::String(format!("{SCHEMA_ID_BASE}{name}")),
        );
    }
    schema
}

/// The schema of [`AttachmentHistory`].
pub fn history_schema() -> Value {
    schema_of::<AttachmentHistory>("history.json")
}

/// The schema of [`AttachmentAttempt`].
pub fn attempt_schema() -> Value {
    schema_of::<AttachmentAttempt>("attempt.json")
}

/// The schema of [`ProbeReport`] (`tether probe --json`).
pub fn probe_report_schema() -> Value {
    schema_of::<ProbeReport>("probe-report.json")
}

/// The schema of [`EndpointTestDocument`] (`tether endpoint-test --json`).
pub fn endpoint_test_schema() -> Value {
    schema_of::<EndpointTestDocument>("endpoint-test.json")
}

/// The schema of [`InventoryDocument`](crate::inventory::InventoryDocument) (`tether inventory --json`).
pub fn inventory_schema() -> Value {
    schema_of::<crate::inventory::InventoryDocument>("inventory.json")
}

/// The schema of [`InventoryChanges`](crate::inventory::InventoryChanges) (`tether inventory --changes --json`).
pub fn inventory_changes_schema() -> Value {
    schema_of::<crate::inventory::InventoryChanges>("inventory-changes.json")
}

/// The schema of [`CollectDocument`](crate::telemetry::CollectDocument) (`tether collect --json`).
pub fn collect_schema() -> Value {
    schema_of::<crate::telemetry::CollectDocument>("collect.json")
}

/// The schema of [`SessionsDocument`](crate::records::SessionsDocument) (`tether sessions list --json`).
pub fn sessions_schema() -> Value {
    schema_of::<crate::records::SessionsDocument>("sessions.json")
}

/// The schema of [`SessionDocument`](crate::records::SessionDocument) (`tether sessions show --json`).
pub fn session_schema() -> Value {
    schema_of::<crate::records::SessionDocument>("session.json")
}

/// The schema of [`PluginListing`](crate::registry::PluginListing) (`tether plugins --json`).
pub fn plugins_schema() -> Value {
    schema_of::<crate::registry::PluginListing>("plugins.json")
}
