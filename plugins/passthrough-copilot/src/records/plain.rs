//! The plain path of Copilot CLI's record reader: each record parsed whole
//! into a `serde_json::Value` and its fields taken out of it, a string
//! where a string is and a boolean where a boolean is, anything else
//! passed over. Slow, and written apart so that a test can hold the fast
//! path (borrowed, loose structs) to it
//! (`tests/tests/differential_copilot.rs`): on every record the two give
//! the same answer.
//!
//! What an event says is read by the same code for both
//! ([`super::placed`], [`super::logged`]): the two differ only where they
//! take fields out of a record.

use std::borrow::Cow;

use serde_json::Value;
use tether_core::records::{RecordAnswer, RecordFile, Unparsed};

use super::{
    Context, Data, EVENTS, ErrorData, Event, Fields, OUTPUT, PROCESS_LOG, PermissionResult,
    ToolProperties, ToolTelemetry, logged, placed,
};

/// Reads one record the plain way.
pub fn read(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    match file.role {
        EVENTS | OUTPUT | crate::output::CUT => event(file, record),
        PROCESS_LOG => logged(record, |tail| {
            let value: Value = serde_json::from_str(tail).map_err(|e| Unparsed::of(&e))?;
            // Owned: the value is this closure's.
            let owned = |key| text(&value, key).map(|t| Cow::Owned(t.into_owned()));
            // (The tail starts with `{`: a value that parsed is an object.)
            Ok(Fields {
                server_name: owned("server_name"),
                server: owned("server"),
                raw_error: owned("raw_error"),
            })
        }),
        _ => RecordAnswer::Unknown,
    }
}

fn event(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    let value: Value = match serde_json::from_str(record) {
        Ok(value) => value,
        Err(error) => return crate::output::unparsed(&error),
    };
    // An event is an object whose `type` is a string; anything else is no
    // event (the fast path's parse fails on it: not known).
    let Some(kind) = value.get("type").and_then(Value::as_str) else {
        return RecordAnswer::Unknown;
    };
    if !value.is_object() {
        return RecordAnswer::Unknown;
    }
    let event = Event {
        kind: Cow::Borrowed(kind),
        id: text(&value, "id"),
        timestamp: text(&value, "timestamp"),
        data: object(&value, "data").map(data),
        ephemeral: value.get("ephemeral").and_then(Value::as_bool),
        session_id: text(&value, "sessionId"),
    };
    placed(file, record, event)
}

fn data(v: &Value) -> Data<'_> {
    Data {
        session_id: text(v, "sessionId"),
        transport: text(v, "mcpTransport"),
        version: text(v, "copilotVersion"),
        context: object(v, "context").map(|c| Context {
            cwd: text(c, "cwd"),
        }),
        call: text(v, "toolCallId"),
        server: text(v, "mcpServerName"),
        config_server: text(v, "mcpConfigServerName"),
        warning_type: text(v, "warningType"),
        error_type: text(v, "errorType"),
        info_type: text(v, "infoType"),
        message: text(v, "message"),
        transformed: text(v, "transformedContent"),
        tool: text(v, "mcpToolName"),
        success: v.get("success").and_then(Value::as_bool),
        hook_run: text(v, "hookInvocationId"),
        hook_type: text(v, "hookType"),
        error: object(v, "error").map(|e| ErrorData {
            message: text(e, "message"),
            code: text(e, "code"),
        }),
        name: text(v, "name"),
        plugin: text(v, "pluginName"),
        result: object(v, "result").map(|r| PermissionResult {
            kind: text(r, "kind"),
        }),
        telemetry: object(v, "toolTelemetry").map(|t| ToolTelemetry {
            properties: object(t, "properties").map(|p| ToolProperties {
                failure_category: text(p, "failure_category"),
                failure_stage: text(p, "failure_stage"),
            }),
        }),
    }
}

/// The string at `key`, where it is one.
fn text<'a>(v: &'a Value, key: &str) -> Option<Cow<'a, str>> {
    v.get(key).and_then(Value::as_str).map(Cow::Borrowed)
}

/// The object at `key`, where it is one.
fn object<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|o| o.is_object())
}
