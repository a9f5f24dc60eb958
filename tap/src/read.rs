//! What a model request offered and what its response called, read from a
//! copy of the bytes, pure. Names and hashes only: a tool's name, a hash of
//! its definition, the model's name. No message, description, schema,
//! argument or result is kept; what cannot be read is said, not guessed.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::api::Api;

/// The most bytes of one request, or of one unstreamed response, read;
/// past it the message passes through unread.
pub const MAX_READ_BYTES: usize = 16 * 1024 * 1024;
/// The most bytes of one server-sent event read; past it the event is
/// skipped, and reading resumes at the next.
pub const MAX_EVENT_BYTES: usize = 1024 * 1024;
/// The most tool names kept of one request or response.
pub const MAX_NAMES: usize = 4096;
/// The longest name kept (a tool's or a model's).
pub const MAX_NAME: usize = 128;

/// Whether `s` can be a tool's or a model's name as an API carries it:
/// 1 to [`MAX_NAME`] bytes of letters, digits and `_-.:/@`. Anything else
/// (text where a name belongs) is not kept.
pub fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_NAME
        && s.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':' | b'/' | b'@')
        })
}

/// One tool a request offered the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offered {
    /// Its name, as the model got it (`namespace/name` for a tool inside a
    /// Responses namespace).
    pub name: String,
    /// The first 16 hex digits of the SHA-256 of its definition as sent
    /// (so a definition that changes between requests shows).
    pub hash: String,
    /// Sent with `defer_loading`: its definition is held back until a
    /// search loads it.
    pub deferred: bool,
}

/// What one request says about tools, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestFacts {
    /// The model it asks (a name, where it is one).
    pub model: Option<String>,
    /// The tools it offers, in order.
    pub offered: Vec<Offered>,
    /// `mcp__…` names its messages and instructions mention that it does
    /// not offer: tools the harness named behind its tool search.
    pub named: Vec<String>,
}

/// Reads a request body of `api` to `path`; `None` when it is not JSON.
pub fn read_request(api: Api, path: &str, body: &[u8]) -> Option<RequestFacts> {
    let request: Value = serde_json::from_slice(body).ok()?;
    let mut facts = RequestFacts {
        model: model_of(api, path, &request),
        ..RequestFacts::default()
    };
    for (name, definition) in definitions(&request) {
        if facts.offered.len() >= MAX_NAMES || !is_name(&name) {
            continue;
        }
        facts.offered.push(Offered {
            hash: hash(definition),
            deferred: definition["defer_loading"].as_bool() == Some(true),
            name,
        });
    }
    let mut rest = request;
    if let Some(map) = rest.as_object_mut() {
        map.remove("tools");
    }
    let mut named = Vec::new();
    mentioned(&rest, &mut named);
    named.sort();
    named.dedup();
    named.retain(|n| !facts.offered.iter().any(|o| &o.name == n));
    named.truncate(MAX_NAMES);
    facts.named = named;
    Some(facts)
}

fn model_of(api: Api, path: &str, request: &Value) -> Option<String> {
    let model = match api {
        Api::GenerateContent => {
            let path = path.split('?').next().unwrap_or(path);
            let (_, rest) = path.rsplit_once("/models/")?;
            rest.split(':').next().map(str::to_owned)
        }
        _ => request["model"].as_str().map(str::to_owned),
    }?;
    is_name(&model).then_some(model)
}

fn hash(definition: &Value) -> String {
    let digest = Sha256::digest(definition.to_string().as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Every tool definition a request offers: Anthropic's and Responses'
/// `tools[].name`, a Responses namespace's tools as `namespace/name`, Chat's
/// `tools[].function.name`, Google's `tools[].functionDeclarations[].name`.
fn definitions(request: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for tool in request["tools"].as_array().into_iter().flatten() {
        if let Some(subs) = tool["tools"].as_array() {
            let ns = tool["name"].as_str().unwrap_or_default();
            for sub in subs {
                if let Some(name) = sub["name"].as_str() {
                    out.push((format!("{ns}/{name}"), sub));
                }
            }
        } else if let Some(name) = tool["name"].as_str() {
            out.push((name.to_owned(), tool));
        } else if let Some(name) = tool["function"]["name"].as_str() {
            out.push((name.to_owned(), &tool["function"]));
        } else if let Some(decls) = tool["functionDeclarations"].as_array() {
            out.extend(
                decls
                    .iter()
                    .filter_map(|d| d["name"].as_str().map(|n| (n.to_owned(), d))),
            );
        }
    }
    out
}

/// The `mcp__…` names in every string of `value` (only the names: the
/// text around them is never kept).
fn mentioned(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => {
            for (at, _) in s.match_indices("mcp__") {
                if out.len() >= MAX_NAMES {
                    return;
                }
                let name: String = s[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
                    .take(MAX_NAME + 1)
                    .collect();
                let name = name.trim_end_matches(['.', '/', '-']);
                if is_name(name) && name.len() > "mcp__".len() {
                    out.push(name.to_owned());
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| mentioned(v, out)),
        Value::Object(map) => map.values().for_each(|v| mentioned(v, out)),
        _ => {}
    }
}

/// The tools one response message (a whole body, or one streamed event)
/// calls, appended to `out`.
fn calls_in(api: Api, value: &Value, out: &mut Vec<String>) {
    let mut push = |name: Option<&str>| {
        if let Some(name) = name.filter(|n| is_name(n))
            && out.len() < MAX_NAMES
        {
            out.push(name.to_owned());
        }
    };
    match api {
        Api::AnthropicMessages => {
            // Streamed: a tool_use block starting; whole: the content.
            if value["type"] == "content_block_start"
                && value["content_block"]["type"] == "tool_use"
            {
                push(value["content_block"]["name"].as_str());
            }
            for block in value["content"].as_array().into_iter().flatten() {
                if block["type"] == "tool_use" {
                    push(block["name"].as_str());
                }
            }
        }
        Api::OpenaiChat => {
            for choice in value["choices"].as_array().into_iter().flatten() {
                for key in ["delta", "message"] {
                    for call in choice[key]["tool_calls"].as_array().into_iter().flatten() {
                        push(call["function"]["name"].as_str());
                    }
                }
            }
        }
        Api::OpenaiResponses => {
            let item_name = |item: &Value| -> Option<String> {
                (item["type"] == "function_call").then_some(())?;
                let name = item["name"].as_str()?;
                Some(match item["namespace"].as_str() {
                    Some(ns) => format!("{ns}/{name}"),
                    None => name.to_owned(),
                })
            };
            // Streamed: each item once, when done; whole: the output.
            if value["type"] == "response.output_item.done" {
                push(item_name(&value["item"]).as_deref());
            }
            if value.get("type").is_none() || value["object"] == "response" {
                for item in value["output"].as_array().into_iter().flatten() {
                    push(item_name(item).as_deref());
                }
            }
        }
        Api::GenerateContent => {
            let one = |v: &Value, push: &mut dyn FnMut(Option<&str>)| {
                for candidate in v["candidates"].as_array().into_iter().flatten() {
                    for part in candidate["content"]["parts"]
                        .as_array()
                        .into_iter()
                        .flatten()
                    {
                        push(part["functionCall"]["name"].as_str());
                    }
                }
            };
            match value {
                // streamGenerateContent without `alt=sse`: one JSON array.
                Value::Array(items) => items.iter().for_each(|v| one(v, &mut push)),
                v => one(v, &mut push),
            }
        }
    }
}

/// Why a response, or a request, was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    /// Larger than [`MAX_READ_BYTES`].
    TooLarge,
    /// In an encoding the tap does not read (brotli, zstd).
    Encoding,
    /// Not JSON, or not the shape of its API.
    NotJson,
    /// Its copy was dropped rather than delay the traffic (a full queue).
    Dropped,
}

impl Unread {
    /// Its name in a record.
    pub fn word(self) -> &'static str {
        match self {
            Unread::TooLarge => "too_large",
            Unread::Encoding => "encoding",
            Unread::NotJson => "not_json",
            Unread::Dropped => "dropped",
        }
    }
}

/// Reads a response's copy chunk by chunk: server-sent events as each one
/// completes, a whole body at its end. Bounded: an event past
/// [`MAX_EVENT_BYTES`] is skipped, a body past [`MAX_READ_BYTES`] is not
/// read; gzip and deflate are inflated on the copy.
pub struct CallReader {
    api: Api,
    events: bool,
    inflate: Option<Inflate>,
    buffer: Vec<u8>,
    skipping: bool,
    called: Vec<String>,
    unread: Option<Unread>,
}

enum Inflate {
    Gzip(flate2::write::GzDecoder<Vec<u8>>),
    Deflate(flate2::write::ZlibDecoder<Vec<u8>>),
}

impl CallReader {
    /// A reader of a response of `api` with the given `Content-Type` and
    /// `Content-Encoding`.
    pub fn new(api: Api, content_type: Option<&str>, encoding: Option<&str>) -> Self {
        let events = content_type.is_some_and(|t| t.starts_with("text/event-stream"));
        let (inflate, unread) = match encoding.map(str::trim) {
            None | Some("" | "identity") => (None, None),
            Some("gzip" | "x-gzip") => (
                Some(Inflate::Gzip(flate2::write::GzDecoder::new(Vec::new()))),
                None,
            ),
            Some("deflate") => (
                Some(Inflate::Deflate(
                    flate2::write::ZlibDecoder::new(Vec::new()),
                )),
                None,
            ),
            Some(_) => (None, Some(Unread::Encoding)),
        };
        CallReader {
            api,
            events,
            inflate,
            buffer: Vec::new(),
            skipping: false,
            called: Vec::new(),
            unread,
        }
    }

    /// Takes the next chunk of the copy.
    pub fn feed(&mut self, chunk: &[u8]) {
        if self.unread.is_some() {
            return;
        }
        match &mut self.inflate {
            None => self.take(chunk),
            Some(inflate) => {
                use std::io::Write;
                let out = match inflate {
                    Inflate::Gzip(d) => d.write_all(chunk).map(|_| std::mem::take(d.get_mut())),
                    Inflate::Deflate(d) => d.write_all(chunk).map(|_| std::mem::take(d.get_mut())),
                };
                match out {
                    Ok(bytes) => self.take(&bytes),
                    Err(_) => self.unread = Some(Unread::NotJson),
                }
            }
        }
    }

    fn take(&mut self, bytes: &[u8]) {
        if !self.events {
            if self.buffer.len() + bytes.len() > MAX_READ_BYTES {
                self.buffer = Vec::new();
                self.unread = Some(Unread::TooLarge);
            } else {
                self.buffer.extend_from_slice(bytes);
            }
            return;
        }
        let mut rest = bytes;
        if self.skipping {
            match boundary(rest) {
                Some((at, len)) => {
                    self.skipping = false;
                    rest = &rest[at + len..];
                }
                None => return,
            }
        }
        self.buffer.extend_from_slice(rest);
        let mut start = 0;
        while let Some((at, len)) = boundary(&self.buffer[start..]) {
            let event = &self.buffer[start..start + at];
            event_calls(self.api, event, &mut self.called);
            start += at + len;
        }
        self.buffer.drain(..start);
        if self.buffer.len() > MAX_EVENT_BYTES {
            self.buffer = Vec::new();
            self.skipping = true;
        }
    }

    /// The tools the response called, in order, or why it was not read.
    pub fn finish(mut self) -> Result<Vec<String>, Unread> {
        if let Some(why) = self.unread {
            return Err(why);
        }
        if self.events {
            if !self.buffer.is_empty() && !self.skipping {
                let rest = std::mem::take(&mut self.buffer);
                event_calls(self.api, &rest, &mut self.called);
            }
            return Ok(self.called);
        }
        if self.buffer.is_empty() {
            return Ok(Vec::new());
        }
        let value: Value = serde_json::from_slice(&self.buffer).map_err(|_| Unread::NotJson)?;
        let mut called = Vec::new();
        calls_in(self.api, &value, &mut called);
        Ok(called)
    }
}

/// Where an event ends: a blank line (`\n\n` or `\r\n\r\n`).
fn boundary(bytes: &[u8]) -> Option<(usize, usize)> {
    let lf = memchr::memmem::find(bytes, b"\n\n").map(|i| (i, 2));
    let crlf = memchr::memmem::find(bytes, b"\r\n\r\n").map(|i| (i, 4));
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(if a.0 <= b.0 { a } else { b }),
        (a, b) => a.or(b),
    }
}

/// The calls one event's `data` names. Events that cannot name a call are
/// not parsed at all.
fn event_calls(api: Api, event: &[u8], out: &mut Vec<String>) {
    const MARKS: [&[u8]; 4] = [
        b"tool_use",
        b"tool_calls",
        b"function_call",
        b"functionCall",
    ];
    if !MARKS
        .iter()
        .any(|m| memchr::memmem::find(event, m).is_some())
    {
        return;
    }
    let Ok(text) = std::str::from_utf8(event) else {
        return;
    };
    let data: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d))
        .collect();
    if let Ok(value) = serde_json::from_str::<Value>(&data.join("\n")) {
        calls_in(api, &value, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_api_s_offered_tools_are_read_by_name() {
        let anthropic = json!({"model": "claude-x", "tools": [
            {"name": "mcp__time__now", "description": "secret prose", "input_schema": {}},
            {"name": "mcp__time__later", "defer_loading": true, "input_schema": {}},
            {"name": "a sentence is no name"}],
            "messages": [{"role": "user", "content": "use mcp__brk__echo. or mcp__time__now"}]});
        let facts = read_request(
            Api::AnthropicMessages,
            "/v1/messages",
            anthropic.to_string().as_bytes(),
        )
        .expect("json");
        assert_eq!(facts.model.as_deref(), Some("claude-x"));
        let names: Vec<_> = facts
            .offered
            .iter()
            .map(|o| (o.name.as_str(), o.deferred))
            .collect();
        assert_eq!(
            names,
            [("mcp__time__now", false), ("mcp__time__later", true)]
        );
        assert_eq!(facts.named, ["mcp__brk__echo"]);
        assert_eq!(facts.offered[0].hash.len(), 16);

        let responses = json!({"model": "gpt-5.1", "tools": [
            {"type": "namespace", "name": "mcp__brk", "tools": [{"name": "echo"}]},
            {"type": "function", "name": "shell"}]});
        let facts = read_request(
            Api::OpenaiResponses,
            "/v1/responses",
            responses.to_string().as_bytes(),
        )
        .expect("json");
        let names: Vec<_> = facts.offered.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["mcp__brk/echo", "shell"]);

        let chat = json!({"model": "gpt-4o", "tools": [{"type": "function", "function": {"name": "brk_echo"}}]});
        let facts = read_request(
            Api::OpenaiChat,
            "/v1/chat/completions",
            chat.to_string().as_bytes(),
        )
        .expect("json");
        assert_eq!(facts.offered[0].name, "brk_echo");

        let google = json!({"tools": [{"functionDeclarations": [{"name": "mcp_brk_echo"}]}]});
        let facts = read_request(
            Api::GenerateContent,
            "/v1beta/models/model-x:streamGenerateContent?alt=sse",
            google.to_string().as_bytes(),
        )
        .expect("json");
        assert_eq!(facts.model.as_deref(), Some("model-x"));
        assert_eq!(facts.offered[0].name, "mcp_brk_echo");
        assert!(read_request(Api::GenerateContent, "/x", b"not json").is_none());
    }

    #[test]
    fn a_changed_definition_changes_its_hash_and_nothing_else_does() {
        let one = json!({"tools": [{"name": "t", "description": "a"}]});
        let two = json!({"tools": [{"name": "t", "description": "b"}]});
        let read = |v: &Value| {
            read_request(
                Api::AnthropicMessages,
                "/v1/messages",
                v.to_string().as_bytes(),
            )
            .expect("json")
            .offered[0]
                .hash
                .clone()
        };
        assert_ne!(read(&one), read(&two));
        assert_eq!(read(&one), read(&one));
    }

    fn calls(api: Api, content_type: &str, chunks: &[&[u8]]) -> Result<Vec<String>, Unread> {
        let mut reader = CallReader::new(api, Some(content_type), None);
        for c in chunks {
            reader.feed(c);
        }
        reader.finish()
    }

    #[test]
    fn streamed_calls_are_read_across_chunk_boundaries() {
        let event = b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"x\",\"name\":\"mcp__brk__echo\",\"input\":{}}}\n\n";
        for split in 1..event.len() {
            let (a, b) = event.split_at(split);
            assert_eq!(
                calls(Api::AnthropicMessages, "text/event-stream", &[a, b]),
                Ok(vec!["mcp__brk__echo".to_owned()]),
                "split at {split}"
            );
        }
        let chat = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"brk_echo\",\"arguments\":\"\"}}]}}]}\r\n\r\ndata: [DONE]\r\n\r\n";
        assert_eq!(
            calls(Api::OpenaiChat, "text/event-stream", &[chat]),
            Ok(vec!["brk_echo".to_owned()])
        );
        let responses = b"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"item\":{\"type\":\"function_call\",\"namespace\":\"mcp__brk\",\"name\":\"echo\"}}\n\nevent: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"item\":{\"type\":\"function_call\",\"namespace\":\"mcp__brk\",\"name\":\"echo\"}}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"object\":\"response\",\"output\":[{\"type\":\"function_call\",\"name\":\"echo\"}]}}\n\n";
        assert_eq!(
            calls(Api::OpenaiResponses, "text/event-stream", &[responses]),
            Ok(vec!["mcp__brk/echo".to_owned()])
        );
        let google = json!([{"candidates": [{"content": {"parts": [{"functionCall": {"name": "mcp_brk_echo", "args": {"secret": "x"}}}]}}]}]);
        assert_eq!(
            calls(
                Api::GenerateContent,
                "application/json",
                &[google.to_string().as_bytes()]
            ),
            Ok(vec!["mcp_brk_echo".to_owned()])
        );
    }

    #[test]
    fn bounds_hold_on_huge_events_and_bodies() {
        let mut reader = CallReader::new(Api::OpenaiChat, Some("text/event-stream"), None);
        let junk = vec![b'x'; 256 * 1024];
        for _ in 0..40 {
            reader.feed(&junk);
        }
        assert!(reader.buffer.len() <= MAX_EVENT_BYTES);
        // Reading resumes at the next event.
        reader.feed(b"\n\ndata: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"t\"}}]}}]}\n\n");
        assert_eq!(reader.finish(), Ok(vec!["t".to_owned()]));

        let mut reader = CallReader::new(Api::OpenaiChat, Some("application/json"), None);
        let chunk = vec![b' '; 1024 * 1024];
        for _ in 0..20 {
            reader.feed(&chunk);
        }
        assert!(reader.buffer.capacity() <= MAX_READ_BYTES);
        assert_eq!(reader.finish(), Err(Unread::TooLarge));
        let reader = CallReader::new(Api::OpenaiChat, Some("application/json"), Some("br"));
        assert_eq!(reader.finish(), Err(Unread::Encoding));
    }

    #[test]
    fn a_gzipped_body_is_inflated_on_the_copy() {
        use std::io::Write;
        let body = json!({"content": [{"type": "tool_use", "name": "mcp__a__b", "input": {}}]});
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(body.to_string().as_bytes()).expect("gzip");
        let bytes = gz.finish().expect("gzip");
        let mut reader = CallReader::new(
            Api::AnthropicMessages,
            Some("application/json"),
            Some("gzip"),
        );
        for c in bytes.chunks(7) {
            reader.feed(c);
        }
        assert_eq!(reader.finish(), Ok(vec!["mcp__a__b".to_owned()]));
    }
}
