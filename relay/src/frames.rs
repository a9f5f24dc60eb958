//! Reading MCP frames on the side, without touching them: newline-delimited
//! JSON-RPC (stdio), each direction split into lines, bounded, and turned
//! into metadata-only observations. Pure: no I/O, no clock of its own.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`relay/`), each
//! with the test that checks it.

use std::collections::HashMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The longest line (frame) parsed for observation; longer ones pass through
/// untouched and are only counted.
pub const MAX_OBSERVED_FRAME: usize = 8 * 1024 * 1024;
/// Requests awaiting their response, at most; older ones are forgotten.
const MAX_PENDING: usize = 1024;
/// Answers kept while their request's copy is still on its way.
const MAX_EARLY: usize = 64;

/// Which way a frame travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From the agent (the MCP client) to the server.
    ToServer,
    /// From the server to the agent.
    ToAgent,
}

/// Splits one direction's bytes into lines, bounded: a line longer than
/// [`MAX_OBSERVED_FRAME`] is skipped to its end and counted.
#[derive(Debug, Default)]
pub struct LineSplitter {
    buf: Vec<u8>,
    skipping: bool,
    /// Lines too long to observe.
    pub oversized: u64,
    max: usize,
}

impl LineSplitter {
    /// A splitter with the default bound.
    pub fn new() -> Self {
        Self::with_max(MAX_OBSERVED_FRAME)
    }

    /// A splitter with another bound (tests).
    pub fn with_max(max: usize) -> Self {
        LineSplitter {
            buf: Vec::new(),
            skipping: false,
            oversized: 0,
            max,
        }
    }

    /// Feeds bytes; calls `line` for each complete line (without its `\n`).
    pub fn feed(&mut self, mut bytes: &[u8], mut line: impl FnMut(&[u8])) {
        while let Some(end) = bytes.iter().position(|b| *b == b'\n') {
            let (head, rest) = bytes.split_at(end);
            if self.skipping {
                self.skipping = false;
            } else if self.buf.len() + head.len() > self.max {
                self.oversized += 1;
            } else if self.buf.is_empty() {
                line(head);
            } else {
                self.buf.extend_from_slice(head);
                line(&self.buf);
            }
            self.buf.clear();
            bytes = &rest[1..];
        }
        if self.skipping {
            return;
        }
        if self.buf.len() + bytes.len() > self.max {
            self.oversized += 1;
            self.skipping = true;
            self.buf = Vec::new();
        } else {
            self.buf.extend_from_slice(bytes);
        }
    }
}

/// What the relay saw, metadata only; sent to the host, which turns it into
/// evidence (and request metrics).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Observation {
    /// `initialize` (or 2026-07-28 `server/discover`) answered.
    Initialized {
        /// `initialize` or `server/discover`.
        method: String,
        /// The agent's clientInfo.name.
        client_name: Option<String>,
        /// The agent's clientInfo.version.
        client_version: Option<String>,
        /// The protocol version agreed (the answer's, else the request's).
        protocol_version: Option<String>,
        /// The server's serverInfo.name (its identity for pins, with its
        /// target).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        server_name: Option<String>,
    },
    /// `tools/list` answered, with this many tools on the page.
    ToolsListed {
        /// Tools on this page.
        count: u32,
        /// Whether a next page was announced.
        more: bool,
        /// The page's tool definitions as the server sent them (names,
        /// descriptions, schemas: what the model is shown, never a call's
        /// arguments or results), for the catalog and its token estimate;
        /// empty when the page is over [`MAX_TOOLS_PAGE_BYTES`].
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tools: Vec<Value>,
    },
    /// A `tools/call` finished.
    ToolCall {
        /// The tool's name.
        tool: String,
        /// No JSON-RPC error and no `isError`.
        ok: bool,
    },
    /// The server refused a lifecycle request (`initialize`,
    /// `server/discover`, `tools/list`) with a JSON-RPC error.
    ProtocolError {
        /// The method refused.
        method: String,
        /// The JSON-RPC error code.
        code: i64,
        /// Its message (the host scrubs and caps it).
        message: String,
    },
    /// The relay could not start the server at all.
    SpawnFailed {
        /// `command_not_found` or `process_start_failed`.
        reason_code: String,
        /// What the system said (the host scrubs and caps it).
        summary: String,
    },
    /// Any answered request: what request metrics need.
    Served {
        /// The method.
        method: String,
        /// For `tools/call`, the tool.
        tool: Option<String>,
        /// The JSON-RPC id, as text.
        request_id: Option<String>,
        /// Time from the request passing to its answer passing.
        duration_nanos: u64,
        /// The JSON-RPC error code, if the answer was an error.
        error_code: Option<i64>,
        /// A tools/call result with `isError: true`.
        tool_error: bool,
    },
}

struct Pending {
    method: String,
    tool: Option<String>,
    client_name: Option<String>,
    client_version: Option<String>,
    protocol_version: Option<String>,
    at: Instant,
}

/// Pairs requests with their answers and reports what they show.
#[derive(Default)]
pub struct FrameReader {
    pending: HashMap<String, Pending>,
    /// Answers whose request has not been seen yet (its copy can come
    /// second): id, message, its time and frame length. At most
    /// [`MAX_EARLY`], oldest forgotten first.
    early: std::collections::VecDeque<(String, Value, Instant, usize)>,
    /// Frames that were not JSON (passed through all the same).
    pub not_json: u64,
    /// Frames holding more JSON values than [`MAX_FRAME_VALUES`]: not
    /// observed (passed through all the same), so a small frame cannot
    /// decode into a large tree.
    pub too_dense: u64,
    /// The length of the frame being read.
    frame_len: usize,
}

/// JSON values a frame may hold to be observed (each is tens of bytes
/// decoded: `[0,0,…]` is 2 bytes a value on the wire and 32 in memory).
pub const MAX_FRAME_VALUES: usize = 262_144;

/// Answers held early (their request not seen yet) take at most this many
/// bytes of frames in all.
const MAX_EARLY_BYTES: usize = 4 * 1024 * 1024;

/// How many JSON values `frame` holds, at most (its structural characters
/// outside strings), counted without decoding; stops past `max`.
fn json_values(frame: &[u8], max: usize) -> usize {
    let mut count = 1usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in frame {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' | b',' | b':' => {
                count += 1;
                if count > max {
                    return count;
                }
            }
            _ => {}
        }
    }
    count
}

/// A tools/list page larger than this is counted but its tool definitions
/// are not sent to the host (the channel's lines are bounded).
pub const MAX_TOOLS_PAGE_BYTES: usize = 512 * 1024;

fn id_key(id: &Value) -> Option<String> {
    match id {
        Value::String(s) => Some(format!("s:{s}")),
        Value::Number(n) => Some(format!("n:{n}")),
        _ => None,
    }
}

fn id_text(id: &Value) -> Option<String> {
    match id {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn text(v: &Value, path: &[&str]) -> Option<String> {
    let mut v = v;
    for key in path {
        v = v.get(key)?;
    }
    v.as_str().map(str::to_owned)
}

impl FrameReader {
    /// A fresh observer.
    pub fn new() -> Self {
        Self::default()
    }

    /// One frame (a line) travelling `direction` at `now`.
    pub fn frame(&mut self, direction: Direction, line: &[u8], now: Instant) -> Vec<Observation> {
        let trimmed = line.trim_ascii();
        if trimmed.is_empty() {
            return Vec::new();
        }
        if json_values(trimmed, MAX_FRAME_VALUES) > MAX_FRAME_VALUES {
            self.too_dense += 1;
            return Vec::new();
        }
        let Ok(value) = serde_json::from_slice::<Value>(trimmed) else {
            self.not_json += 1;
            return Vec::new();
        };
        self.frame_len = trimmed.len();
        let mut out = Vec::new();
        match value {
            Value::Array(batch) => {
                for message in &batch {
                    self.message(direction, message, now, &mut out);
                }
            }
            message => self.message(direction, &message, now, &mut out),
        }
        out
    }

    /// Requests never answered (the connection closed first).
    pub fn unanswered(&self) -> usize {
        self.pending.len()
    }

    fn message(
        &mut self,
        direction: Direction,
        m: &Value,
        now: Instant,
        out: &mut Vec<Observation>,
    ) {
        let method = m.get("method").and_then(Value::as_str);
        let id = m.get("id").and_then(id_key);
        match (direction, method, id) {
            // A request from the agent: remember it until its answer.
            (Direction::ToServer, Some(method), Some(id)) => {
                self.request(method, id, m, now, out);
            }
            // An answer from the server to one of the agent's requests.
            (Direction::ToAgent, None, Some(id)) => match self.pending.remove(&id) {
                Some(request) => self.answer(request, m, now, out),
                None => self.keep_early(id, m, now),
            },
            _ => {}
        }
    }

    /// A request from the agent, remembered until its answer; paired now
    /// with an answer whose copy came first.
    fn request(
        &mut self,
        method: &str,
        id: String,
        m: &Value,
        now: Instant,
        out: &mut Vec<Observation>,
    ) {
        if self.pending.len() >= MAX_PENDING {
            // Forget the oldest: a server that never answers cannot grow us.
            if let Some(oldest) = self
                .pending
                .iter()
                .min_by_key(|(_, p)| p.at)
                .map(|(k, _)| k.clone())
            {
                self.pending.remove(&oldest);
            }
        }
        let params = m.get("params");
        let tool = (method == "tools/call")
            .then(|| params.and_then(|p| text(p, &["name"])))
            .flatten();
        let client = |key: &str| {
            params.and_then(|p| {
                text(p, &["clientInfo", key])
                    .or_else(|| text(p, &["_meta", "io.modelcontextprotocol/clientInfo", key]))
            })
        };
        let protocol_version = params.and_then(|p| {
            text(p, &["protocolVersion"])
                .or_else(|| text(p, &["_meta", "io.modelcontextprotocol/protocolVersion"]))
        });
        let early = self.early.iter().position(|(key, ..)| *key == id);
        self.pending.insert(
            id,
            Pending {
                method: method.to_owned(),
                tool,
                client_name: client("name"),
                client_version: client("version"),
                protocol_version,
                at: now,
            },
        );
        // Its answer's copy came first: pair them now.
        if let Some((_, answer, at, len)) = early.and_then(|i| self.early.remove(i)) {
            let frame_len = std::mem::replace(&mut self.frame_len, len);
            self.message(Direction::ToAgent, &answer, at, out);
            self.frame_len = frame_len;
        }
    }

    /// An answer whose request has not been seen (its copy can come
    /// second), kept for it. Bounded by count and by bytes: answers nobody
    /// asked for cannot grow the relay.
    fn keep_early(&mut self, id: String, m: &Value, now: Instant) {
        if self.frame_len > MAX_EARLY_BYTES {
            return;
        }
        while self.early.len() >= MAX_EARLY
            || self.early.iter().map(|(.., len)| *len).sum::<usize>() + self.frame_len
                > MAX_EARLY_BYTES
        {
            if self.early.pop_front().is_none() {
                break;
            }
        }
        self.early.push_back((id, m.clone(), now, self.frame_len));
    }

    /// The server's answer `m` to the agent's `request`: the request
    /// served, and what it says of the session (initialized, tools listed,
    /// a tool's call, a lifecycle request refused).
    fn answer(&self, request: Pending, m: &Value, now: Instant, out: &mut Vec<Observation>) {
        let result = m.get("result");
        let error = m.get("error");
        let error_code = error.and_then(|e| e.get("code")).and_then(Value::as_i64);
        let tool_error = result
            .and_then(|r| r.get("isError"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        out.push(Observation::Served {
            method: request.method.clone(),
            tool: request.tool.clone(),
            request_id: m.get("id").and_then(id_text),
            duration_nanos: u64::try_from(now.saturating_duration_since(request.at).as_nanos())
                .unwrap_or(u64::MAX),
            error_code: error.map(|_| error_code.unwrap_or(0)),
            tool_error,
        });
        let lifecycle = matches!(
            request.method.as_str(),
            "initialize" | "server/discover" | "tools/list"
        );
        if let Some(error) = error {
            if lifecycle {
                out.push(Observation::ProtocolError {
                    method: request.method,
                    code: error_code.unwrap_or(0),
                    message: error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .chars()
                        .take(512)
                        .collect(),
                });
            } else if let Some(tool) = request.tool {
                out.push(Observation::ToolCall { tool, ok: false });
            }
            return;
        }
        let Some(result) = result else {
            return;
        };
        match request.method.as_str() {
            "initialize" | "server/discover" => out.push(Observation::Initialized {
                method: request.method,
                client_name: request.client_name,
                client_version: request.client_version,
                protocol_version: text(result, &["protocolVersion"]).or(request.protocol_version),
                server_name: text(result, &["serverInfo", "name"]),
            }),
            "tools/list" => {
                let page = result.get("tools").and_then(Value::as_array);
                let count = page.map_or(0, |t| u32::try_from(t.len()).unwrap_or(u32::MAX));
                let more = result.get("nextCursor").is_some_and(|c| !c.is_null());
                let tools = page
                    .filter(|_| self.frame_len <= MAX_TOOLS_PAGE_BYTES)
                    .cloned()
                    .unwrap_or_default();
                out.push(Observation::ToolsListed { count, more, tools });
            }
            "tools/call" => {
                if let Some(tool) = request.tool {
                    out.push(Observation::ToolCall {
                        tool,
                        ok: !tool_error,
                    });
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn run(frames: &[(Direction, &str)]) -> Vec<Observation> {
        let mut o = FrameReader::new();
        let t = Instant::now();
        frames
            .iter()
            .enumerate()
            .flat_map(|(i, (d, f))| o.frame(*d, f.as_bytes(), t + Duration::from_millis(i as u64)))
            .collect()
    }

    /// GIVEN a hostile server WHEN it answers with a frame of a million tiny
    /// values (2 bytes each on the wire, tens decoded) or floods answers
    /// nobody asked for THEN the dense frame is counted and not decoded,
    /// the early answers stay within their byte budget, and an ordinary
    /// tools/list is still observed; strings full of commas are not dense.
    #[test]
    fn dense_frames_and_unasked_answers_cannot_grow_the_reader() {
        let mut o = FrameReader::new();
        let t = Instant::now();
        let dense = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{}]}}}}"#,
            vec!["0"; 1_000_000].join(",")
        );
        o.frame(
            Direction::ToServer,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
            t,
        );
        assert!(o.frame(Direction::ToAgent, dense.as_bytes(), t).is_empty());
        assert_eq!(o.too_dense, 1);
        let commas = format!(
            r#"{{"jsonrpc":"2.0","id":2,"result":{{"text":"{}"}}}}"#,
            ",".repeat(1_000_000)
        );
        assert!(json_values(commas.as_bytes(), MAX_FRAME_VALUES) < 16);
        let big_answer = format!(
            r#"{{"jsonrpc":"2.0","id":"x{{}}","result":{{"text":"{}"}}}}"#,
            "a".repeat(1024 * 1024)
        );
        for i in 0..32 {
            let answer = big_answer.replace("x{}", &format!("x{i}"));
            o.frame(Direction::ToAgent, answer.as_bytes(), t);
        }
        let held: usize = o.early.iter().map(|(.., len)| *len).sum();
        assert!(held <= MAX_EARLY_BYTES, "{held}");
        let out = run(&[
            (
                Direction::ToServer,
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
            ),
            (
                Direction::ToAgent,
                r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"a"},{"name":"b"}]}}"#,
            ),
        ]);
        assert!(
            out.iter()
                .any(|o| matches!(o, Observation::ToolsListed { count: 2, .. })),
            "{out:?}"
        );
    }

    /// The two copying threads hand their copies over independently, so an
    /// answer's copy can reach the observer before its request's (a thread
    /// preempted between writing a request on and copying it aside): the
    /// pair is still made, and its duration comes from the times the bytes
    /// were read, not the order the copies arrived in.
    #[test]
    fn an_answer_copied_before_its_request_is_still_paired() {
        let mut o = FrameReader::new();
        let read_at = Instant::now();
        let mut out = o.frame(
            Direction::ToAgent,
            br#"{"jsonrpc":"2.0","id":7,"result":{"tools":[{"name":"t1"}]}}"#,
            read_at + Duration::from_millis(5),
        );
        assert!(out.is_empty(), "nothing to pair with yet");
        out.extend(o.frame(
            Direction::ToServer,
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#,
            read_at,
        ));
        assert!(
            out.contains(&Observation::ToolsListed {
                count: 1,
                more: false,
                tools: vec![serde_json::json!({"name": "t1"})],
            }),
            "{out:?}"
        );
        assert!(out.iter().any(|o| matches!(
            o,
            Observation::Served { method, duration_nanos: 5_000_000, .. } if method == "tools/list"
        )));
        assert_eq!(o.unanswered(), 0);
    }

    #[test]
    fn a_session_is_read_as_metadata() {
        let out = run(&[
            (
                Direction::ToServer,
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"claude-code","version":"2.1"}}}"#,
            ),
            (
                Direction::ToAgent,
                r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"x"}}}"#,
            ),
            (
                Direction::ToServer,
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            ),
            (
                Direction::ToServer,
                r#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#,
            ),
            (
                Direction::ToAgent,
                r#"{"jsonrpc":"2.0","id":"a","result":{"tools":[{"name":"t1"},{"name":"t2"}]}}"#,
            ),
            (
                Direction::ToServer,
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"secret":"sk-123"}}}"#,
            ),
            (
                Direction::ToAgent,
                r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"sk-123"}],"isError":true}}"#,
            ),
        ]);
        assert!(out.contains(&Observation::Initialized {
            method: "initialize".into(),
            client_name: Some("claude-code".into()),
            client_version: Some("2.1".into()),
            protocol_version: Some("2025-06-18".into()),
            server_name: Some("x".into()),
        }));
        assert!(out.contains(&Observation::ToolsListed {
            count: 2,
            more: false,
            tools: vec![
                serde_json::json!({"name": "t1"}),
                serde_json::json!({"name": "t2"})
            ],
        }));
        assert!(out.contains(&Observation::ToolCall {
            tool: "echo".into(),
            ok: false
        }));
        let served: Vec<_> = out
            .iter()
            .filter(|o| matches!(o, Observation::Served { .. }))
            .collect();
        assert_eq!(served.len(), 3);
        // Metadata only: no argument or result ever comes out.
        assert!(!format!("{out:?}").contains("sk-123"));
    }

    #[test]
    fn lifecycle_errors_are_protocol_errors_and_tool_errors_are_not() {
        let out = run(&[
            (
                Direction::ToServer,
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            ),
            (
                Direction::ToAgent,
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unsupported version"}}"#,
            ),
            (
                Direction::ToServer,
                r#"[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}]"#,
            ),
            (
                Direction::ToAgent,
                r#"[{"jsonrpc":"2.0","id":2,"error":{"code":-32000,"message":"boom"}}]"#,
            ),
            (Direction::ToAgent, "not json at all"),
        ]);
        assert!(out.contains(&Observation::ProtocolError {
            method: "initialize".into(),
            code: -32602,
            message: "unsupported version".into()
        }));
        assert!(out.contains(&Observation::ToolCall {
            tool: "x".into(),
            ok: false
        }));
        assert!(!out.iter().any(
            |o| matches!(o, Observation::ProtocolError { method, .. } if method == "tools/call")
        ));
    }

    #[test]
    fn the_splitter_is_bounded_and_exact() {
        let mut s = LineSplitter::with_max(8);
        let mut lines = Vec::new();
        s.feed(b"abc\nde", |l| lines.push(l.to_vec()));
        s.feed(b"f\n0123456789abc\nxy", |l| lines.push(l.to_vec()));
        s.feed(b"z\n", |l| lines.push(l.to_vec()));
        assert_eq!(lines, [b"abc".to_vec(), b"def".to_vec(), b"xyz".to_vec()]);
        assert_eq!(s.oversized, 1);
        // A long line split over many feeds is skipped whole.
        let mut s = LineSplitter::with_max(4);
        let mut lines = Vec::new();
        for chunk in [&b"12"[..], b"345", b"678\nok\n"] {
            s.feed(chunk, |l| lines.push(l.to_vec()));
        }
        assert_eq!(lines, [b"ok".to_vec()]);
        assert_eq!(s.oversized, 1);
    }
}
