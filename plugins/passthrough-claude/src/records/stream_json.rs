//! What `claude -p --output-format stream-json --verbose` printed, saved
//! to a file (read by path only).
//!
//! One line a headless run printed (`--output-format stream-json
//! --verbose`, 2.1.197 on): its `system/init` line as the probe reads it
//! ([`stream_json_init_reports`]: each server's status, its tools, its
//! plugins), with the session, the version and the project; a hook's end
//! (`system/hook_response`, 2.1.3xx: the only trace of a hook that
//! succeeded in silence); a call refused before it reached the server
//! (`system/permission_denied`, 2.1.3xx); and its `assistant` and `user` lines as a
//! transcript's (the tools called, their results). Lines carry no time.
//!
//! The fast path ([`stream_json`]: the line blanked, its head borrowed)
//! and the plain one (`plain::stream_json`, the line parsed whole as a
//! `serde_json::Value`) share the meanings ([`stream_line`]);
//! `tests/tests/claude_differential.rs` proves both read every line the
//! same.

use std::borrow::Cow;

use serde::Deserialize;
use tether_core::capability::{CapabilityEvent, outcome_of_exit};
use tether_core::model::Timestamp;
use tether_core::records::{RecordAnswer, RecordReading, name, project_of, version_of};
use tether_core::vocab::UseOutcome;
use tether_sdk::records::{answer, hook_fired, listed, mcp_double, push, refused};

use super::{BLANKER, Whole, denial_reason, lenient, model_api, names};

/// A line's head: every field a line of any kind is read by (each read
/// whatever its value: another type is that field unread).
#[derive(Deserialize)]
pub(super) struct Head<'a> {
    #[serde(rename = "type", borrow, default, deserialize_with = "lenient::text")]
    pub(super) kind: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    pub(super) subtype: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    pub(super) session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    pub(super) cwd: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    pub(super) claude_code_version: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    pub(super) hook_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    pub(super) hook_name: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    pub(super) hook_event: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "lenient::int")]
    pub(super) exit_code: Option<i32>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    pub(super) outcome: Option<Cow<'a, str>>,
    /// `permission_denied`: the refused call.
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    pub(super) tool_name: Option<Cow<'a, str>>,
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    pub(super) tool_use_id: Option<Cow<'a, str>>,
    /// `permission_denied`: what decided (`rule`, `mode`, `hook`,
    /// `asyncAgent`, …; absent where a headless run could not ask).
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    pub(super) decision_reason_type: Option<Cow<'a, str>>,
    /// `permission_denied`: compared with Claude Code's own constant
    /// words only, never kept.
    #[serde(borrow, default)]
    pub(super) message: Option<Said<'a>>,
    /// `notification`: which (`stop-hook-error`: a Stop hook erred).
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    pub(super) key: Option<Cow<'a, str>>,
    /// `result`: whether the run ended in an error.
    #[serde(default, deserialize_with = "lenient::flag")]
    pub(super) is_error: Option<bool>,
    /// `result`: compared with Claude Code's own constant words only
    /// ([`model_api`]), never kept.
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    pub(super) result: Option<Cow<'a, str>>,
    /// `result` (2.1.3xx): the harness's class of a model API error.
    #[serde(borrow, default, deserialize_with = "lenient::text")]
    pub(super) api_error: Option<Cow<'a, str>>,
    /// `result`: the model API's HTTP status.
    #[serde(default, deserialize_with = "lenient::int")]
    pub(super) api_error_status: Option<i32>,
    /// `system/api_retry`: the failed request's HTTP status (null: none
    /// came).
    #[serde(default, deserialize_with = "lenient::int")]
    pub(super) error_status: Option<i32>,
    /// `system/api_retry`: the harness's class of the error, compared with
    /// its closed list only ([`model_api::retrying`]); another line's
    /// `error` of any shape is skipped unread.
    #[serde(borrow, default)]
    pub(super) error: Option<Said<'a>>,
    /// `system/api_retry` (2.1.332): there where no response headers came
    /// in time; its fields are not read.
    #[serde(default)]
    pub(super) no_response: Option<serde::de::IgnoredAny>,
}
/// `message`: a `permission_denied`'s words, or (an `assistant` or
/// `user` line's) the message, skipped unread.
#[derive(Deserialize)]
#[serde(untagged)]
pub(super) enum Said<'a> {
    #[serde(borrow)]
    Words(Cow<'a, str>),
    Other(serde::de::IgnoredAny),
}

/// One line, the fast way: an object's (`read` sends any other line the
/// plain way, which says what it is).
pub(super) fn stream_json(record: &str) -> RecordAnswer {
    let written = record;
    let record = BLANKER.blank(record);
    lenient::take_odd();
    let head = match serde_json::from_str::<Head<'_>>(&record) {
        Ok(head) => head,
        // A lone surrogate escape: read with it as U+FFFD, as the plain
        // path reads it (`fields::lone_surrogates_replaced`).
        Err(_) if let Some(fixed) = super::fields::lone_surrogates_replaced(written) => {
            return stream_json(&fixed);
        }
        Err(error) => return RecordAnswer::unparsed(&error, None),
    };
    let odd = lenient::take_odd();
    stream_line(
        &head,
        odd,
        Whole::Written(&record),
        written,
        super::transcript,
    )
}

/// What one line says (`head`; `odd`: a field of it was of another type
/// than the one read; `whole`, the line as the head was read from it, or
/// parsed whole;
/// `written`, as printed; `as_transcript`, how an `assistant` or `user`
/// line is read): the meanings the fast path and the plain one share. A
/// line of a kind read here that gave nothing where a field was of
/// another type says so (issue 68: a known kind in a shape its reader
/// cannot read is never read as nothing); an `assistant` or `user`
/// line's reading notes its own.
pub(super) fn stream_line(
    head: &Head<'_>,
    odd: bool,
    whole: Whole<'_>,
    written: &str,
    as_transcript: fn(&str) -> RecordAnswer,
) -> RecordAnswer {
    let answer = meanings(head, whole, written, as_transcript);
    let Some(kind) = read_kind(head).filter(|_| odd) else {
        return answer;
    };
    match answer {
        RecordAnswer::Read(reading) if !reading.evidence.is_empty() => RecordAnswer::Read(reading),
        _ => RecordAnswer::Unparsed {
            why: tether_core::records::Unparsed::WrongType,
            kind: Some(kind.to_owned()),
        },
    }
}

/// The census's name of a line's kind, where [`meanings`] reads that kind
/// itself.
fn read_kind(head: &Head<'_>) -> Option<&'static str> {
    Some(match (head.kind.as_deref()?, head.subtype.as_deref()) {
        ("system", Some("init")) => "system/init",
        ("system", Some("hook_response")) => "system/hook_response",
        ("system", Some("permission_denied")) => "system/permission_denied",
        ("system", Some("notification")) => "system/notification",
        ("system", Some("api_retry")) => "system/api_retry",
        ("result", _) => "result",
        _ => return None,
    })
}

/// What one line says, whatever its odd fields ([`stream_line`]).
fn meanings(
    head: &Head<'_>,
    whole: Whole<'_>,
    written: &str,
    as_transcript: fn(&str) -> RecordAnswer,
) -> RecordAnswer {
    let mut reading = RecordReading::of(head.session_id.as_deref().and_then(name));
    match (head.kind.as_deref(), head.subtype.as_deref()) {
        (Some("system"), Some("init")) => {
            // The reports look for `"init"` and `mcp_servers` as written
            // before they parse (the whole line as a value): a line printed
            // with needless escapes, or parsed whole, is handed to them as
            // serde_json writes it (one line a run).
            let canonical = match whole {
                Whole::Written(record)
                    if record.contains("\"init\"") && record.contains("mcp_servers") =>
                {
                    None
                }
                Whole::Written(record) => serde_json::from_str::<serde_json::Value>(record)
                    .ok()
                    .map(|v| v.to_string()),
                Whole::Parsed(value) => Some(value.to_string()),
            };
            let record = match (&canonical, whole) {
                (Some(canonical), _) => canonical.as_str(),
                (None, Whole::Written(record)) => record,
                (None, Whole::Parsed(_)) => "",
            };
            reading.project = head.cwd.as_deref().and_then(project_of);
            reading.version = head.claude_code_version.as_deref().and_then(version_of);
            for evidence in names::as_tools_name_them(
                tether_sdk::materialize::stream_json_init_reports(record, Timestamp(0)),
            ) {
                for evidence in pending_is_delivered(evidence) {
                    push(&mut reading, evidence);
                }
            }
            let tools = match whole {
                Whole::Written(record) => init_tools(record),
                Whole::Parsed(value) => init_tools_of(value),
            };
            for (server, tool) in tools {
                if reading.servers.iter().any(|s| s.name == server) {
                    push(&mut reading, listed(&server, &tool, Timestamp(0)));
                }
            }
            answer(reading)
        }
        (Some("system"), Some("hook_response")) => {
            let Some(hook) = head.hook_name.as_deref().and_then(name) else {
                return answer(reading);
            };
            let event = head.hook_event.as_deref().and_then(name);
            let ended = match (head.outcome.as_deref(), head.exit_code) {
                (Some("cancelled"), _) => UseOutcome::Cancelled,
                (_, Some(code)) => outcome_of_exit(code, Some(2)),
                (Some("success"), None) => UseOutcome::Succeeded,
                _ => UseOutcome::Failed,
            };
            let run = CapabilityEvent::hook(&hook, event.as_deref()).ended(ended, head.exit_code);
            push(
                &mut reading,
                hook_fired(run, head.hook_id.as_deref(), Timestamp(0)),
            );
            answer(reading)
        }
        // A call the harness refused before it reached the server.
        (Some("system"), Some("permission_denied")) => {
            if let Some((server, tool)) = head.tool_name.as_deref().and_then(mcp_double) {
                let words = match &head.message {
                    Some(Said::Words(words)) => Some(words.as_ref()),
                    _ => None,
                };
                let reason = denial_reason(head.decision_reason_type.as_deref(), words);
                push(
                    &mut reading,
                    refused(
                        &server,
                        &tool,
                        head.tool_use_id.as_deref(),
                        reason,
                        Timestamp(0),
                    ),
                );
            }
            answer(reading)
        }
        // `{type:"notification",notification:{key:"stop-hook-error",…}}`
        // (2.1.197 and 2.1.332, seen in real runs): a Stop hook ended in an
        // error (exit 1, a failure to run, or a block); the only trace of
        // a Stop hook in stream-json, which names neither the hook nor how.
        (Some("system"), Some("notification"))
            if head.key.as_deref() == Some("stop-hook-error") =>
        {
            let run = CapabilityEvent::hook("Stop", Some("Stop")).ended(UseOutcome::Unknown, None);
            push(&mut reading, hook_fired(run, None, Timestamp(0)));
            answer(reading)
        }
        // A request to the model API failed and is being retried: why, as
        // the run's end would say it (report-level: no server's). A run
        // killed or timed out mid-retry has no `result` line; these are
        // its only word of why. Lines carry no time (each is read at 0):
        // this one is read at 1, after the run's `result` line, whose
        // words (the connection error's cause, where the retry's line has
        // none) are kept where both are there, as the earliest error is.
        (Some("system"), Some("api_retry")) => {
            let error = match &head.error {
                Some(Said::Words(words)) => Some(words.as_ref()),
                _ => None,
            };
            let (reason, words) = model_api::retrying(&model_api::Retrying {
                status: head.error_status,
                error,
                no_response: head.no_response.is_some(),
            });
            push(
                &mut reading,
                tether_core::model::Evidence::new(
                    tether_core::vocab::EvidenceKind::ExplicitError,
                    Timestamp(1),
                )
                .reason(reason, Some(words)),
            );
            answer(reading)
        }
        (Some(kind), subtype) if let Some(kind) = not_read(kind, subtype) => {
            RecordAnswer::not_read(kind, None)
        }
        (Some("system"), _) => answer(reading),
        // The run's end: where its model API failed, why (report-level:
        // no server's), in Tether's words.
        (Some("result"), _) => {
            let ended = model_api::Ended {
                is_error: head.is_error,
                result: head.result.as_deref(),
                api_error: head.api_error.as_deref(),
                status: head.api_error_status,
            };
            if let Some((reason, words)) = model_api::failure(&ended) {
                push(
                    &mut reading,
                    tether_core::model::Evidence::new(
                        tether_core::vocab::EvidenceKind::ExplicitError,
                        Timestamp(0),
                    )
                    .reason(reason, Some(words.to_owned())),
                );
            }
            answer(reading)
        }
        // `assistant`, `user`: as a transcript's (its `session_id` read as
        // the transcript's `sessionId`).
        // (It blanks the line itself: it is given the line as written.)
        _ => as_transcript(written),
    }
}

/// The note of a server Claude Code's init line reports `pending`: the
/// harness's own word, said beside the silence.
pub(super) const PENDING: &str =
    "Claude Code reported it pending: still connecting when the run began";

/// An init line's report of a server, and where it is `pending`, that the
/// server was delivered: Claude Code lists in `mcp_servers` the clients it
/// holds (2.1.197's and 2.1.332's `McpServerStatus`), so one it reports
/// `pending` is a server it was given and was still connecting to when it
/// printed the line (a `-p` run connects in the background unless
/// `MCP_CONNECTION_NONBLOCKING=false`). Delivered, no further: nothing
/// shows it connected. The report keeps the harness's word as its note
/// ([`PENDING`]).
fn pending_is_delivered(
    mut report: tether_core::model::Evidence,
) -> Vec<tether_core::model::Evidence> {
    use tether_core::vocab::{EvidenceKind, ReportedStatus};
    if report.kind != EvidenceKind::AgentReported
        || report.reported_state() != Some(ReportedStatus::Pending)
    {
        return vec![report];
    }
    let Some(server) = report.server.clone() else {
        return vec![report];
    };
    report.summary.get_or_insert_with(|| PENDING.to_owned());
    let delivered = tether_core::model::Evidence::new(EvidenceKind::Delivered, report.at)
        .server(&server)
        .provenance(report.provenance.clone());
    vec![report, delivered]
}

/// The kinds of line the census names and this reader does not read
/// (`census.rs`, source `stream_json`: a hook started or its output so
/// far, a permission check waiting, a remote tool host's result, a plugin
/// install, a tool's heartbeat, a summary, the CLI's own login): each
/// counted by name, never read as nothing.
const NOT_READ: [&str; 8] = [
    "system/hook_started",
    "system/hook_progress",
    "system/permission_check_status",
    "system/tool_host_result",
    "system/plugin_install",
    "tool_progress",
    "tool_use_summary",
    "auth_status",
];

/// The census's name of a line of a kind in [`NOT_READ`] (a constant,
/// never the line's own text).
fn not_read(kind: &str, subtype: Option<&str>) -> Option<&'static str> {
    NOT_READ
        .into_iter()
        .find(|k| match (k.split_once('/'), subtype) {
            (Some((k, sub)), Some(subtype)) => k == kind && sub == subtype,
            (Some(_), None) => false,
            (None, _) => *k == kind,
        })
}

/// The MCP tools an init line lists (`tools`: `mcp__SERVER__TOOL`), as
/// (server, tool), each a name.
fn init_tools(record: &str) -> Vec<(String, String)> {
    #[derive(Deserialize)]
    struct Init<'a> {
        #[serde(borrow, default, deserialize_with = "lenient::texts")]
        tools: Vec<Cow<'a, str>>,
    }
    let init = serde_json::from_str::<Init<'_>>(record);
    lenient::take_odd();
    match init {
        Ok(init) => init.tools.iter().filter_map(|t| mcp_double(t)).collect(),
        // (Not reached: the line parsed as its head before.)
        Err(_) => Vec::new(),
    }
}

/// The MCP tools an init line lists (`tools`: `mcp__SERVER__TOOL`), as
/// (server, tool), each a name: a tool of another type is that tool
/// unread.
pub(super) fn init_tools_of(v: &serde_json::Value) -> Vec<(String, String)> {
    super::fields::texts(v.get("tools"), &mut false)
        .iter()
        .filter_map(|t| tether_sdk::records::mcp_double(t))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GIVEN the kinds counted as not read WHEN looked for in the census
    /// THEN each is a stream-json entry marked not read: the count names
    /// what the census says, no more.
    #[test]
    fn every_kind_counted_as_not_read_is_the_census_s() {
        let census = crate::census::census();
        for kind in NOT_READ {
            assert!(
                census
                    .iter()
                    .any(|e| e.source == "stream_json" && e.kind == kind && !e.read),
                "{kind}"
            );
        }
        assert_eq!(
            not_read("system", Some("hook_started")),
            Some("system/hook_started")
        );
        assert_eq!(not_read("tool_progress", None), Some("tool_progress"));
        assert_eq!(not_read("system", Some("init")), None);
        assert_eq!(not_read("system", None), None);
    }
}
