//! Gemini CLI's chats: the fast path (borrowed structs) takes each line's
//! fields into a [`ChatLine`], and [`chat_line`] and [`legacy`] give their
//! meaning. The plain path ([`super::plain`]) takes the same fields from a
//! `serde_json::Value` and hands them to the same two, so the paths can
//! differ only where they take fields out of a record.

use std::borrow::Cow;

use serde::Deserialize;
use tether_core::capability::{CapabilityEvent, outcome_of_ok};
use tether_core::model::{Evidence, Timestamp};
use tether_core::records::{RecordAnswer, RecordFile, RecordReading, name, project_of};
use tether_sdk::records::{answer, call, failure, push, refused, skill_invoked};
use tether_sdk::telemetry::status;

use super::time;
use crate::ended::{Ended, Words, gemini_cancelled, gemini_failed_call, gemini_no_such_tool};
use crate::shape::{Obj, known_type, unreadable};

/// The fields of one chat line the reader reads.
#[derive(Debug, Default)]
pub(crate) struct ChatLine<'r> {
    /// `sessionId`.
    pub session: Option<&'r str>,
    /// `type`.
    pub kind: Option<&'r str>,
    /// `timestamp`, else `startTime`.
    pub timestamp: Option<&'r str>,
    /// `startTime`.
    pub start: Option<&'r str>,
    /// `$set` (where present, not null): its `lastUpdated`.
    pub set: Option<Option<&'r str>>,
    /// `$rewindTo` is present (not null).
    pub rewind: bool,
    /// `content`, where it is words.
    pub words: Option<&'r str>,
    /// `toolCalls`.
    pub calls: Vec<ChatCall<'r>>,
}

/// The fields of one `toolCalls` item the reader reads (never its
/// arguments, result or output, but for the words scanned and dropped).
#[derive(Debug, Default)]
pub(crate) struct ChatCall<'r> {
    /// `id`.
    pub id: Option<&'r str>,
    /// `status`: `success`, `error`, `cancelled`.
    pub status: Option<&'r str>,
    /// `displayName`: `TOOL (SERVER MCP Server)` for an MCP tool.
    pub display: Option<&'r str>,
    /// `timestamp`.
    pub timestamp: Option<&'r str>,
    /// `name`: the name the model called.
    pub name: Option<&'r str>,
    /// `args.name`, for `activate_skill` only.
    pub skill: Option<&'r str>,
    /// `resultDisplay`, where it is words: scanned, never kept.
    pub display_words: Option<&'r str>,
    /// The first `result[].functionResponse.response.error` that is
    /// words: scanned, never kept.
    pub result_error: Option<&'r str>,
}

#[derive(Deserialize)]
struct GeminiLine<'a> {
    #[serde(rename = "sessionId", borrow, default)]
    session: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(rename = "$set", borrow, default)]
    set: Option<Obj<GeminiSet<'a>>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "startTime", borrow, default)]
    start: Option<Cow<'a, str>>,
    #[serde(rename = "toolCalls", borrow, default)]
    tool_calls: Option<Vec<Obj<GeminiCall<'a>>>>,
    /// An `error`, `warning` or `info` record's words (a `user` or
    /// `gemini` record's content is parts, never read): scanned for a
    /// server's name and a reason, never kept.
    #[serde(borrow, default)]
    content: Option<Words<'a>>,
    /// `/rewind` (0.39 on): the message it rewound to.
    #[serde(rename = "$rewindTo", default)]
    rewind: Option<serde::de::IgnoredAny>,
}

/// A `$set` line: an update of the chat's metadata, read for its time.
#[derive(Deserialize)]
struct GeminiSet<'a> {
    #[serde(rename = "lastUpdated", borrow, default)]
    last_updated: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct GeminiCall<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    status: Option<Cow<'a, str>>,
    #[serde(rename = "displayName", borrow, default)]
    display: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    /// Read for `activate_skill` only: the skill's name, nothing else.
    #[serde(borrow, default)]
    args: Option<SkillArgs<'a>>,
    /// What the UI showed of the call: scanned for the harness's own words
    /// of a refusal or a failure, never kept.
    #[serde(rename = "resultDisplay", borrow, default)]
    display_words: Option<Words<'a>>,
    /// The parts sent back to the model: read for their error words only
    /// (`response.error`), never kept.
    #[serde(borrow, default)]
    result: Option<ResultParts<'a>>,
}

/// A call's `result`: parts, of which a `functionResponse`'s
/// `response.error` is read; anything else in another shape.
#[derive(Deserialize)]
#[serde(untagged)]
enum ResultParts<'a> {
    Parts(#[serde(borrow)] Vec<Obj<ResultPart<'a>>>),
    Other(serde::de::IgnoredAny),
}

#[derive(Deserialize)]
struct ResultPart<'a> {
    #[serde(rename = "functionResponse", borrow, default)]
    response: Option<Obj<FunctionResponse<'a>>>,
}

#[derive(Deserialize)]
struct FunctionResponse<'a> {
    #[serde(borrow, default)]
    response: Option<Obj<ResponseError<'a>>>,
}

#[derive(Deserialize)]
struct ResponseError<'a> {
    #[serde(borrow, default)]
    error: Option<Words<'a>>,
}

/// A call's arguments as far as a skill's activation names its skill.
#[derive(Deserialize)]
#[serde(untagged)]
enum SkillArgs<'a> {
    Named(#[serde(borrow)] Obj<SkillName<'a>>),
    Other(serde::de::IgnoredAny),
}

#[derive(Deserialize)]
struct SkillName<'a> {
    #[serde(borrow, default)]
    name: Option<Words<'a>>,
}

impl<'a> GeminiCall<'a> {
    fn fields(&'a self) -> ChatCall<'a> {
        let result_error = match &self.result {
            Some(ResultParts::Parts(parts)) => parts.iter().find_map(|p| {
                p.response
                    .as_ref()?
                    .response
                    .as_ref()?
                    .error
                    .as_ref()?
                    .text()
            }),
            _ => None,
        };
        ChatCall {
            id: self.id.as_deref(),
            status: self.status.as_deref(),
            display: self.display.as_deref(),
            timestamp: self.timestamp.as_deref(),
            name: self.name.as_deref(),
            skill: match &self.args {
                Some(SkillArgs::Named(args)) => args.name.as_ref().and_then(Words::text),
                _ => None,
            },
            display_words: self.display_words.as_ref().and_then(Words::text),
            result_error,
        }
    }
}

impl<'a> GeminiLine<'a> {
    fn fields(&'a self) -> ChatLine<'a> {
        ChatLine {
            session: self.session.as_deref(),
            kind: self.kind.as_deref(),
            timestamp: self.timestamp.as_deref(),
            start: self.start.as_deref(),
            set: self.set.as_ref().map(|s| s.last_updated.as_deref()),
            rewind: self.rewind.is_some(),
            words: self.content.as_ref().and_then(Words::text),
            calls: self
                .tool_calls
                .iter()
                .flatten()
                .map(|c| c.fields())
                .collect(),
        }
    }
}

/// The tool Gemini CLI's model calls to activate a skill.
const ACTIVATE_SKILL: &str = "activate_skill";

/// The kinds of a chat line, by its `type` (a message), or its keys: the
/// session's first line (`sessionId`), `$set` and `$rewindTo`.
pub(crate) const CHAT_TYPES: &[&str] = &["user", "gemini", "info", "error", "warning"];

/// The kind of a chat line that did not parse, where it is one the reader
/// knows.
pub(crate) fn chat_kind(v: &serde_json::Value) -> Option<&'static str> {
    if let Some(kind) = known_type(v, CHAT_TYPES) {
        return Some(kind);
    }
    ["$set", "$rewindTo", "sessionId"]
        .into_iter()
        .find(|k| v.get(*k).is_some_and(|x| !x.is_null()))
        .map(|k| if k == "sessionId" { "session" } else { k })
}

/// One line of a chat (`session-*.jsonl`, 0.39 on), the fast way.
pub(crate) fn chat(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    match serde_json::from_str::<Obj<GeminiLine<'_>>>(record) {
        Ok(line) => chat_line(file, &line.fields()),
        Err(e) => unreadable(record, &e, chat_kind),
    }
}

/// What one chat line's fields mean.
pub(crate) fn chat_line(file: &RecordFile<'_>, line: &ChatLine<'_>) -> RecordAnswer {
    let mut reading = RecordReading::default();
    reading.session = line.session.and_then(name);
    reading.at = time(line.timestamp.or(line.start));
    // `tmp/<project>/chats/…`: Gemini's short name for the project.
    reading.project = file.from_end(2).and_then(project_of);
    if let Some(last_updated) = line.set {
        // When the chat was last updated: its session's last record time.
        return match time(last_updated) {
            Some(at) => RecordAnswer::Dated { at },
            None => RecordAnswer::Ignored,
        };
    }
    if line.rewind {
        // The user rewound the chat: the calls before it stay calls.
        return RecordAnswer::Ignored;
    }
    if reading.session.is_none() && line.kind.is_none() {
        return RecordAnswer::Unknown;
    }
    if let Some(kind) = message(&mut reading, line, file.configured) {
        return RecordAnswer::not_read(kind, reading.at);
    }
    answer(reading)
}

/// A chat file before 0.39 (`session-*.json`): the session's metadata and
/// every message in one document, read as the lines of a later chat are.
#[derive(Deserialize)]
struct GeminiDocument<'a> {
    #[serde(rename = "sessionId", borrow, default)]
    session: Option<Cow<'a, str>>,
    #[serde(rename = "startTime", borrow, default)]
    start: Option<Cow<'a, str>>,
    #[serde(rename = "lastUpdated", borrow, default)]
    last_updated: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    messages: Option<Vec<Obj<GeminiLine<'a>>>>,
}

/// A chat document before 0.39, the fast way.
pub(crate) fn legacy_chat(file: &RecordFile<'_>, record: &str) -> RecordAnswer {
    match serde_json::from_str::<Obj<GeminiDocument<'_>>>(record) {
        Ok(d) => {
            let messages: Vec<ChatLine<'_>> =
                d.messages.iter().flatten().map(|m| m.fields()).collect();
            let document = ChatLine {
                session: d.session.as_deref(),
                start: d.start.as_deref(),
                set: Some(d.last_updated.as_deref()),
                ..ChatLine::default()
            };
            legacy(file, &document, &messages)
        }
        Err(e) => unreadable(record, &e, document_kind),
    }
}

/// The kind of a chat document that did not parse: one that names its
/// session.
pub(crate) fn document_kind(v: &serde_json::Value) -> Option<&'static str> {
    v.get("sessionId")
        .is_some_and(|s| !s.is_null())
        .then_some("session")
}

/// What a chat document means: `document` holds its `sessionId`,
/// `startTime` and (as `set`) `lastUpdated`; `messages` each message.
pub(crate) fn legacy(
    file: &RecordFile<'_>,
    document: &ChatLine<'_>,
    messages: &[ChatLine<'_>],
) -> RecordAnswer {
    let Some(session) = document.session.and_then(name) else {
        return RecordAnswer::Unknown;
    };
    let mut reading = RecordReading::of(Some(session));
    reading.project = file.from_end(2).and_then(project_of);
    let start = time(document.start);
    reading.until = time(document.set.flatten());
    for line in messages {
        reading.at = time(line.timestamp).or(start);
        // A UI record about MCP that names no server is not counted apart:
        // the document is one record, read.
        let _ = message(&mut reading, line, file.configured);
    }
    reading.at = start;
    answer(reading)
}

/// What one chat message shows, into `reading`: a UI record's named server
/// (failed, or wanting a login), a skill activated, each MCP tool call. A
/// UI record about MCP that names no server gives its kind, not read.
fn message(
    reading: &mut RecordReading,
    line: &ChatLine<'_>,
    configured: &[String],
) -> Option<&'static str> {
    let at = reading.at.unwrap_or(Timestamp(0));
    if let (Some(kind @ ("error" | "warning" | "info")), Some(words)) = (line.kind, line.words) {
        match ui_message(words, at) {
            Some(evidence) => push(reading, evidence),
            None if words.contains("MCP") => {
                return Some(match kind {
                    "error" => "error:mcp",
                    "warning" => "warning:mcp",
                    _ => "info:mcp",
                });
            }
            None => {}
        }
        return None;
    }
    for c in &line.calls {
        let at = time(c.timestamp).unwrap_or(at);
        if c.name == Some(ACTIVATE_SKILL) {
            if let Some(skill) = c.skill.and_then(name) {
                let mut skill = CapabilityEvent::skill(&skill);
                if let Some(status) = c.status {
                    skill = skill.ended(outcome_of_ok(status == "success"), None);
                }
                push(reading, skill_invoked(skill, c.id, at));
            }
            continue;
        }
        if let Some((server, tool)) = mcp_tool(c, configured) {
            push(reading, mcp_call(c, &server, &tool, at));
        }
    }
    None
}

/// One MCP call, ended as its `status` and words say: `success`; `error` a
/// refusal or a failure, by its words; `cancelled` the user's no, or
/// unknown.
fn mcp_call(c: &ChatCall<'_>, server: &str, tool: &str, at: Timestamp) -> Evidence {
    let ended = match c.status {
        Some("success") => Ended::Succeeded,
        Some("error") => gemini_failed_call(c.display_words, c.result_error),
        Some("cancelled") => gemini_cancelled(c.result_error),
        _ => Ended::Unknown,
    };
    match ended {
        Ended::Succeeded => call(server, tool, c.id, Some(true), at),
        Ended::Refused(reason) => refused(server, tool, c.id, reason, at),
        Ended::Failed(reason) => {
            let mut failed = call(server, tool, c.id, Some(false), at);
            failed.reason_code = reason;
            failed
        }
        Ended::Unknown => call(server, tool, c.id, None, at),
    }
}

/// The server and tool of an MCP call: split from its `displayName`
/// (`TOOL (SERVER MCP Server)`), or, for a tool Gemini did not hold (whose
/// display name is the name the model called, `mcp_SERVER_TOOL`, and whose
/// words say "not found", seen in a real 0.61.0 run), from that name as
/// the stream-json's is split.
fn mcp_tool(c: &ChatCall<'_>, configured: &[String]) -> Option<(String, String)> {
    if let Some((tool, server)) = c
        .display
        .and_then(|d| d.strip_suffix(" MCP Server)"))
        .and_then(|d| d.rsplit_once(" ("))
    {
        return Some((name(server)?, name(tool)?));
    }
    if c.status != Some("error") || !c.display_words.is_some_and(gemini_no_such_tool) {
        return None;
    }
    crate::stream_json::gemini_split(c.name?, configured)
}

/// What one of Gemini CLI's own UI records (`error`, `warning`, `info`,
/// written in an interactive session) says of a named server: it failed
/// to start or connect (the reason read from the words after its name,
/// never kept), or it wants a login.
fn ui_message(words: &str, at: Timestamp) -> Option<Evidence> {
    // 0.31 and before always, later releases once the user asked for MCP.
    const FAILED: &[&str] = &[
        "Error during discovery for MCP server '",
        "Error initializing MCP server '",
        "Fatal error ensuring MCP server '",
        "Error connecting to MCP server '",
    ];
    const LOGIN: &[&str] = &["MCP server '", "Could not configure OAuth for '"];
    for prefix in FAILED {
        if let Some((server, why)) = words
            .split_once(prefix)
            .and_then(|(_, rest)| rest.split_once("'"))
            && let Some(server) = name(server)
        {
            return Some(failure(&server, why, at));
        }
    }
    for prefix in LOGIN {
        if let Some((server, why)) = words
            .strip_prefix(prefix)
            .and_then(|rest| rest.split_once("'"))
            && (why.starts_with(" requires authentication")
                || why.starts_with(" rejected stored OAuth token")
                || why.starts_with(" - please authenticate"))
            && let Some(server) = name(server)
        {
            return Some(status(&server, "needs-auth", at));
        }
    }
    None
}
