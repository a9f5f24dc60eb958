//! JSON Schema (draft 2020-12) for the public documents.

use schemars::{JsonSchema, generate::SchemaSettings};
use serde_json::Value;

use crate::model::{AttachmentAttempt, AttachmentHistory};

/// The schema of `T`, as draft 2020-12 JSON.
pub fn schema_of<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12().into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

/// The schema of [`AttachmentHistory`].
pub fn history_schema() -> Value {
    schema_of::<AttachmentHistory>()
}

/// The schema of [`AttachmentAttempt`].
pub fn attempt_schema() -> Value {
    schema_of::<AttachmentAttempt>()
}
