//! Transcript records of releases before 2.1.197 that say a hook ran or an
//! MCP call started and ended: `progress` records (written by 2.1.14 to
//! 2.1.39 in real transcripts; 2.1.197 and 2.1.332 drop every progress
//! record before the transcript is written) and 2.1.14's blocking Stop
//! hook's `Stop hook feedback` message. Only names, ids, times and a
//! command's shape are taken: a hook's output is never read.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use tether_core::capability::CapabilityEvent;
use tether_core::model::Timestamp;
use tether_core::records::{RecordReading, name};
use tether_core::vocab::UseOutcome;
use tether_sdk::records::{call, hook_fired, push};

use super::items::skip_scalars;
use super::lenient::Scalar;
use super::{hook_run_id, tool_name_of_server, words::with_command};

/// `data` of a progress record: `{type:"hook_progress", hookEvent,
/// hookName, command}` (real 2.1.38/2.1.39 transcripts: one per hook run,
/// `PreToolUse`, `PostToolUse`, `PostToolUseFailure`, `SessionStart`, a
/// plugin's hooks included) or `{type:"mcp_progress", status
/// ("started", "completed", "failed"), serverName, toolName}` (2.1.15).
/// Any other (`bash_progress`, `agent_progress`, …: a tool's output so
/// far) is skipped unread. Read by the transcript's one parse of the
/// record: a `data` that is not an object is no data, a field of it of
/// another type is that field unread (each noted, [`super::lenient`]).
#[derive(Default)]
pub(super) struct Data<'a> {
    pub(super) kind: Option<Cow<'a, str>>,
    pub(super) hook_event: Option<Cow<'a, str>>,
    pub(super) hook_name: Option<Cow<'a, str>>,
    pub(super) command: Option<Cow<'a, str>>,
    pub(super) status: Option<Cow<'a, str>>,
    pub(super) server_name: Option<Cow<'a, str>>,
    pub(super) tool_name: Option<Cow<'a, str>>,
}

/// A record's `data`, where it is one [`Data`] can be.
pub(super) struct MaybeData<'a>(pub Option<Data<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for MaybeData<'a> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DataVisitor)
    }
}

struct DataVisitor;

impl<'de> Visitor<'de> for DataVisitor {
    type Value = MaybeData<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a progress record's data")
    }

    skip_scalars!(MaybeData(None));

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(MaybeData(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut data = Data::default();
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            let field = match key.as_ref() {
                "type" => &mut data.kind,
                "hookEvent" => &mut data.hook_event,
                "hookName" => &mut data.hook_name,
                "command" => &mut data.command,
                "status" => &mut data.status,
                "serverName" => &mut data.server_name,
                "toolName" => &mut data.tool_name,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            // A field of another type is that field unread (noted); one
            // given twice is its last, as a parsed value has it.
            *field = match map.next_value::<Scalar<'de>>()? {
                Scalar::Text(text) => Some(text),
                Scalar::Null => None,
                _ => {
                    super::lenient::mark();
                    None
                }
            };
        }
        Ok(MaybeData(Some(data)))
    }
}

/// A `progress` record's `data` (its record blanked as the transcript
/// reader blanks it; `tool_use`: its `toolUseID`, the run of the event's
/// hooks or the call; `uuid`: its own id): a hook that started (how it
/// ended is not written: unknown, never taken as success), or an MCP
/// call's start and end.
pub(super) fn progress(
    reading: &mut RecordReading,
    data: &Data<'_>,
    tool_use: Option<&str>,
    uuid: Option<&str>,
    at: Timestamp,
) {
    match data.kind.as_deref() {
        Some("hook_progress") => {
            let Some(hook) = data.hook_name.as_deref().and_then(name) else {
                return;
            };
            let event = data.hook_event.as_deref().and_then(name);
            // A Stop hook's run is its `stop_hook_summary`'s, which says
            // how it ended (the same releases write both).
            if matches!(event.as_deref(), Some("Stop" | "SubagentStop")) {
                return;
            }
            let command = data.command.as_deref().unwrap_or_default();
            let mut run = CapabilityEvent::hook(&hook, event.as_deref());
            if !command.trim().is_empty() {
                run = with_command(run, command);
            }
            // The same run as its attachment's, where one was written.
            let id = tool_use
                .and_then(|t| hook_run_id(t, &hook, command))
                .or_else(|| uuid.and_then(name));
            push(
                reading,
                hook_fired(run.ended(UseOutcome::Unknown, None), id.as_deref(), at),
            );
        }
        Some("mcp_progress") => {
            let (Some(server), Some(tool)) = (
                data.server_name
                    .as_deref()
                    .and_then(|s| name(&tool_name_of_server(s))),
                data.tool_name.as_deref().and_then(name),
            ) else {
                return;
            };
            let ok = match data.status.as_deref() {
                Some("completed") => Some(true),
                Some("failed") => Some(false),
                _ => None,
            };
            push(reading, call(&server, &tool, tool_use, ok, at));
        }
        _ => {}
    }
}

/// 2.1.14's blocking Stop hook: a user record, `isMeta: true`, whose
/// content is `Stop hook feedback:\n[COMMAND]: OUTPUT` (real transcripts,
/// 2.1.14). The hook fired and stopped the turn from ending; its command's
/// shape is taken from the brackets, its output is never read. `whole`:
/// the record as written (its content is blanked for the transcript
/// reader: read here by a parse of its own, cheaply rejected first) or
/// parsed whole (the plain path: [`stop_feedback_of`]).
pub(super) fn stop_feedback(reading: &mut RecordReading, whole: super::Whole<'_>, at: Timestamp) {
    let said = match whole {
        super::Whole::Written(record) => match feedback_as_written(record) {
            Ok(said) => said,
            // A lone surrogate escape (its blanked form parsed): read the
            // plain way, with it as U+FFFD.
            Err(()) => {
                if let Ok(value) = super::fields::parse(record) {
                    stop_feedback(reading, super::Whole::Parsed(&value), at);
                }
                return;
            }
        },
        super::Whole::Parsed(value) => stop_feedback_of(value),
    };
    if let Some(said) = said {
        feedback(reading, &said, at);
    }
}

/// What a user record says that [`feedback`] reads: whether it is meta,
/// its id, and its content where that is text (each `None` where absent,
/// null or of another type).
pub(super) struct Feedback<'a> {
    pub(super) meta: Option<bool>,
    pub(super) uuid: Option<Cow<'a, str>>,
    pub(super) words: Option<Cow<'a, str>>,
}

/// [`Feedback`] of a record as written, the fast way (`Err`: it does not
/// parse as written).
fn feedback_as_written(record: &str) -> Result<Option<Feedback<'_>>, ()> {
    #[derive(Deserialize)]
    struct Raw<'a> {
        // Each read whatever its value: one of another type is that field
        // unread, never the hook lost.
        #[serde(rename = "isMeta", default, deserialize_with = "super::lenient::flag")]
        meta: Option<bool>,
        #[serde(borrow, default, deserialize_with = "super::lenient::text")]
        uuid: Option<Cow<'a, str>>,
        #[serde(borrow, default, deserialize_with = "super::lenient::object")]
        message: Option<Msg<'a>>,
    }
    #[derive(Deserialize)]
    struct Msg<'a> {
        #[serde(borrow, default)]
        content: Option<Text<'a>>,
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Text<'a> {
        #[serde(borrow)]
        Words(Cow<'a, str>),
        Other(serde::de::IgnoredAny),
    }
    // Cheap rejection first (as written, the newline is `\n` escaped).
    if !super::may_hold(record, "Stop hook feedback:") {
        return Ok(None);
    }
    let raw = serde_json::from_str::<Raw<'_>>(record);
    // (The record's own parse noted its odd fields.)
    super::lenient::take_odd();
    let raw = raw.map_err(drop)?;
    let words = match raw.message.and_then(|m| m.content) {
        Some(Text::Words(words)) => Some(words),
        _ => None,
    };
    Ok(Some(Feedback {
        meta: raw.meta,
        uuid: raw.uuid,
        words,
    }))
}

/// The Stop hook a [`Feedback`] names, where it is one.
fn feedback(reading: &mut RecordReading, said: &Feedback<'_>, at: Timestamp) {
    const HEAD: &str = "Stop hook feedback:\n[";
    let Some(words) = said.words.as_deref() else {
        return;
    };
    if said.meta != Some(true) {
        return;
    }
    let Some(command) = words
        .strip_prefix(HEAD)
        .and_then(|rest| rest.split_once("]: ").or_else(|| rest.split_once("]:")))
        .map(|(command, _)| command)
        .filter(|c| !c.contains('\n') && c.len() <= 4096)
    else {
        return;
    };
    let mut run = CapabilityEvent::hook("Stop", Some("Stop"));
    if !command.trim().is_empty() {
        run = with_command(run, command);
    }
    push(
        reading,
        hook_fired(
            run.ended(UseOutcome::Blocked, None),
            said.uuid.as_deref(),
            at,
        ),
    );
}

/// 2.1.14's Stop hook feedback ([`stop_feedback`]) of a
/// record parsed whole: whether it is meta, its id, its content where
/// that is text (each field by the rules above).
pub(super) fn stop_feedback_of(v: &serde_json::Value) -> Option<Feedback<'_>> {
    let odd = &mut false;
    let words = super::fields::object(v.get("message"), odd, |m, _| match m.get("content") {
        Some(serde_json::Value::String(words)) => Some(Cow::Borrowed(words.as_str())),
        _ => None,
    })
    .flatten();
    Some(Feedback {
        meta: super::fields::flag(v.get("isMeta"), odd),
        uuid: super::fields::text(v.get("uuid"), odd),
        words,
    })
}
