//! The plain path of the rollout reader: each record parsed whole into a
//! `serde_json::Value` and read for the same meanings as [`super::read`]'s
//! borrowed structs. Slow, and written apart so that a test can hold the
//! fast path to it (`tests/differential.rs`): on every record the two give
//! the same answer, or the fast path names the record's kind as one it
//! could not read (a field of the wrong type), never an unknown kind.
//!
//! It takes a string where a string is and passes over anything else; the
//! evidence it gives is built by the same helpers as the fast path's (a
//! call's end, Codex's words, a skill listing, a namespace), so the two
//! differ only where they take fields out of a record.

use serde_json::Value;
use tether_core::capability::CapabilityEvent;
use tether_core::model::Timestamp;
use tether_core::records::{RecordAnswer, RecordReading, Unparsed, name, project_of, version_of};
use tether_sdk::records::{
    answer, call, deferred, failed_with, outcome, push, refusal, skill_listed, visible,
};

use super::{
    End, KNOWN, LEGACY_ITEMS, Said, ended, is_resource_tool, item_end, listed_skills,
    namespace_server, not_read_event, qualified, said,
};

/// Reads one rollout record the plain way.
pub fn rollout(record: &str, configured: &[String]) -> RecordAnswer {
    let value: Value = match serde_json::from_str(record) {
        Ok(v) => v,
        Err(e) => {
            return RecordAnswer::Unparsed {
                why: Unparsed::of(&e),
                kind: None,
            };
        }
    };
    let kind = text(&value, "type");
    let Some(kind) = kind.filter(|k| KNOWN.contains(k)) else {
        return legacy(&value, configured);
    };
    let mut reading = RecordReading::default();
    reading.at = text(&value, "timestamp").and_then(Timestamp::parse_rfc3339);
    let at = reading.at.unwrap_or(Timestamp(0));
    let Some(payload) = value.get("payload").filter(|p| !p.is_null()) else {
        return RecordAnswer::Ignored;
    };
    let inner = text(payload, "type");
    match (kind, inner) {
        ("session_meta", _) => session_meta(&mut reading, payload),
        ("world_state", _) => {
            if let Some(body) = payload
                .get("state")
                .and_then(|s| s.get("host_skills"))
                .and_then(|h| text(h, "body"))
            {
                skills(&mut reading, body, at);
            }
        }
        ("response_item", Some("function_call")) => {
            function_call(&mut reading, payload, configured, at)
        }
        ("response_item", Some("function_call_output")) => output(&mut reading, payload, at),
        ("response_item", Some("tool_search_output")) => search(&mut reading, payload, at),
        ("response_item", Some("message")) if text(payload, "role") == Some("developer") => {
            for t in list(payload, "content").filter_map(|c| text(c, "text")) {
                if t.contains("### Available skills") {
                    skills(&mut reading, t, at);
                }
            }
        }
        ("event_msg", Some("mcp_tool_call_end")) => call_end(&mut reading, payload, at),
        ("event_msg", Some(k)) if let Some(k) = not_read_event(k) => {
            return RecordAnswer::not_read(k, reading.at);
        }
        ("event_msg", Some("item_completed")) => {
            if let Some(item) = payload.get("item") {
                item_completed(&mut reading, item, at);
            }
        }
        _ => {}
    }
    answer(reading)
}

/// A string field, where it is one.
fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

/// The items of an array field (none where it is no array).
fn list<'v>(v: &'v Value, key: &str) -> impl Iterator<Item = &'v Value> {
    v.get(key).and_then(Value::as_array).into_iter().flatten()
}

fn skills(reading: &mut RecordReading, body: &str, at: Timestamp) {
    for skill in listed_skills(body) {
        push(reading, skill_listed(CapabilityEvent::skill(&skill), at));
    }
}

fn session_meta(reading: &mut RecordReading, payload: &Value) {
    reading.session = text(payload, "id").and_then(name);
    reading.project = text(payload, "cwd").and_then(project_of);
    reading.version = text(payload, "cli_version").and_then(version_of);
}

fn function_call(
    reading: &mut RecordReading,
    payload: &Value,
    configured: &[String],
    at: Timestamp,
) {
    let tool = text(payload, "name").unwrap_or("");
    let named = match text(payload, "namespace") {
        Some(ns) => {
            namespace_server(ns, configured).and_then(|server| Some((name(server)?, name(tool)?)))
        }
        None => qualified(tool, configured),
    };
    if let Some((server, tool)) = named {
        push(
            reading,
            call(&server, &tool, text(payload, "call_id"), None, at),
        );
    }
}

fn output(reading: &mut RecordReading, payload: &Value, at: Timestamp) {
    let words = match payload.get("output") {
        Some(Value::String(s)) => Some(s.as_str()),
        Some(Value::Array(items)) => items.first().and_then(|i| text(i, "text")),
        _ => None,
    };
    let (Some(id), Some(words)) = (text(payload, "call_id"), words) else {
        return;
    };
    let evidence = match said(words) {
        Some(Said::NeverRan(reason)) => refusal(id, reason, at),
        Some(Said::Failed(Some(reason))) => failed_with(id, reason, at),
        Some(Said::Failed(None)) => outcome(id, false, at),
        None => None,
    };
    if let Some(evidence) = evidence {
        push(reading, evidence);
    }
}

fn search(reading: &mut RecordReading, payload: &Value, at: Timestamp) {
    for ns in list(payload, "tools").filter(|n| text(n, "type") == Some("namespace")) {
        let Some(server) = text(ns, "name")
            .and_then(|n| n.strip_prefix("mcp__"))
            .and_then(name)
        else {
            continue;
        };
        for tool in list(ns, "tools").filter_map(|t| text(t, "name").and_then(name)) {
            push(reading, deferred(&server, &tool, at));
            push(reading, visible(&server, &tool, at));
        }
    }
}

/// The servers Codex's resource listing in a result's text items names.
fn listing(result: &Value) -> Option<Vec<(String, u32)>> {
    list(result, "content")
        .filter_map(|i| text(i, "text"))
        .find_map(|t| {
            let v: Value = serde_json::from_str(t).ok()?;
            let has = |k| v.get(k).is_some_and(Value::is_array);
            (v.is_object() && (has("resources") || has("resourceTemplates"))).then(|| {
                let mut counts: Vec<(String, u32)> = Vec::new();
                for s in list(&v, "resources")
                    .chain(list(&v, "resourceTemplates"))
                    .filter_map(|r| text(r, "server"))
                {
                    match counts.iter().position(|(c, _)| c == s) {
                        Some(i) => counts[i].1 += 1,
                        None => counts.push((s.to_owned(), 1)),
                    }
                }
                counts
            })
        })
}

fn call_end(reading: &mut RecordReading, payload: &Value, at: Timestamp) {
    let Some(inv) = payload.get("invocation") else {
        return;
    };
    let (Some(server), Some(tool)) = (
        text(inv, "server").and_then(name),
        text(inv, "tool").and_then(name),
    ) else {
        return;
    };
    let result = payload.get("result");
    let ok = result.and_then(|r| r.get("Ok")).filter(|r| !r.is_null());
    let err = result.and_then(|r| text(r, "Err"));
    if is_resource_tool(&tool) {
        if let Some(r) = ok
            && r.get("Err").is_none_or(Value::is_null)
            && r.get("isError").and_then(Value::as_bool) != Some(true)
        {
            super::resources::answered(reading, (&server, &tool), listing(r).as_deref(), at);
        }
        return;
    }
    let end = match (ok, err) {
        (Some(r), _) if !r.get("Err").is_none_or(Value::is_null) => End::Failed,
        (Some(r), _) => End::Result {
            is_error: r.get("isError").and_then(Value::as_bool) == Some(true),
        },
        (None, Some(words)) => End::Error(words),
        _ => End::Unknown,
    };
    ended(reading, (&server, &tool, text(payload, "call_id")), end, at);
}

fn item_completed(reading: &mut RecordReading, item: &Value, at: Timestamp) {
    if text(item, "type") != Some("McpToolCall") {
        return;
    }
    let (Some(server), Some(tool)) = (
        text(item, "server").and_then(name),
        text(item, "tool").and_then(name),
    ) else {
        return;
    };
    let result = item.get("result").filter(|r| !r.is_null());
    let words = item
        .get("error")
        .filter(|e| !e.is_null())
        .and_then(|e| text(e, "message"));
    if is_resource_tool(&tool) {
        if let Some(r) = result
            && r.get("Err").is_none_or(Value::is_null)
            && r.get("isError").and_then(Value::as_bool) != Some(true)
            && item.get("error").is_none_or(Value::is_null)
        {
            super::resources::answered(reading, (&server, &tool), listing(r).as_deref(), at);
        }
        return;
    }
    let is_error = result.map(|r| {
        r.get("isError").and_then(Value::as_bool) == Some(true)
            || !r.get("Err").is_none_or(Value::is_null)
    });
    let end = item_end(text(item, "status"), is_error, words);
    ended(reading, (&server, &tool, text(item, "id")), end, at);
}

/// A legacy rollout's line, the plain way (see [`super::legacy`]).
fn legacy(value: &Value, configured: &[String]) -> RecordAnswer {
    if !value.is_object() {
        return RecordAnswer::Unknown;
    }
    let mut reading = RecordReading::default();
    match (text(value, "type"), text(value, "record_type")) {
        (None, Some("state")) => return RecordAnswer::Ignored,
        (None, None) if text(value, "id").is_some() && text(value, "timestamp").is_some() => {
            reading.at = text(value, "timestamp").and_then(Timestamp::parse_rfc3339);
            session_meta(&mut reading, value);
        }
        (Some("function_call"), None) => {
            function_call(&mut reading, value, configured, Timestamp(0))
        }
        (Some(kind), None) if LEGACY_ITEMS.contains(&kind) => {}
        _ => return RecordAnswer::Unknown,
    }
    answer(reading)
}
