//! Codex's own words for how a call of a server's tool ended, where a
//! record gives the outcome only as Codex's text: an `mcp_tool_call_end`'s
//! `Err`, an item's `error.message`, and a `function_call_output`'s text
//! (Codex Desktop 0.104.0-alpha.1 to 0.118.0-alpha rollouts write no
//! `mcp_tool_call_*` event: the output is all there is).
//!
//! Every phrase is Codex's shipped code's, compared and never kept:
//! - `tool call error: {e:?}`: `codex-rs/core/src/mcp_tool_call.rs`
//!   (`format!("tool call error: {e:?}")`, the `anyhow` chain printed as
//!   `MSG\n\nCaused by:\n    CAUSE`), whose message is `tool call failed
//!   for \`S/T\`` (the connection manager's context); both in the 0.171.0
//!   binary's strings (`tool call error: `, `tool call failed for \``);
//! - the causes: `timed out awaiting {label} after {duration:.0?}`
//!   (`codex-rs/rmcp-client/src/rmcp_client.rs`, `ClientOperationError::
//!   Timeout`: `timed out awaiting tools/call after 120s`), rmcp's
//!   `Transport closed` and `Transport send error: …` (both in the 0.171.0
//!   binary), and rmcp's `Mcp error: CODE: MESSAGE` (a JSON-RPC error);
//! - "no such tool": `unsupported call: NAME` (the tool router's
//!   `unsupported_tool_call_message`, a name Codex holds no handler for;
//!   in the 0.171.0 binary) and `unknown MCP server 'S'` (the connection
//!   manager's `client_by_name`; in the 0.171.0 binary): the call reached
//!   no server, and the tool was not available to Codex then;
//! - a call that never ran: [`NEVER_RAN`].

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use tether_core::vocab::ReasonCode;

/// What Codex answers for a call that never reached its server, and why
/// (the 0.171.0 binary's own words, `strings`): it needed a person's
/// approval and no one could give it (`codex exec`: measured, "…but
/// approval policy is never"; openai/codex#29857: "user cancelled…"), a
/// person said no, or its app's configuration blocks it.
pub(super) const NEVER_RAN: &[(&str, ReasonCode)] = &[
    ("user rejected MCP tool call", ReasonCode::PermissionDenied),
    ("user cancelled MCP tool call", ReasonCode::ApprovalRequired),
    (
        "MCP tool call cancelled before approval",
        ReasonCode::ApprovalRequired,
    ),
    (
        "MCP tool call cancelled: interactive approval is unavailable in exec mode",
        ReasonCode::ApprovalRequired,
    ),
    (
        "MCP tool call requires approval, but approval policy is never",
        ReasonCode::ApprovalRequired,
    ),
    (
        "MCP tool call blocked by app configuration",
        ReasonCode::DeniedByPolicy,
    ),
];

/// Codex's words for a call that reached its server and failed.
const TOOL_CALL_ERROR: &str = "tool call error: ";

/// A JSON-RPC error, as rmcp words it (`Mcp error: -32602: …`).
const RPC_ERROR: &str = "Mcp error: -";

/// Codex's "no such tool": a name it holds no handler for.
const UNSUPPORTED_CALL: &str = "unsupported call: ";

/// Codex's "no such server": no client of that name.
const UNKNOWN_SERVER: &str = "unknown MCP server '";

/// The causes Codex's words name, and the reason each is.
const CAUSES: &[(&str, ReasonCode)] = &[
    ("timed out awaiting tools/call after ", ReasonCode::Timeout),
    ("Transport closed", ReasonCode::ConnectionClosed),
    ("Transport send error", ReasonCode::ConnectionClosed),
    (RPC_ERROR, ReasonCode::ProtocolError),
];

/// How Codex's words say a call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// It never reached its server, for this reason (refused, or
    /// `tool_not_available` for Codex's "no such tool").
    NeverRan(ReasonCode),
    /// It reached its server and failed, for the reason the words name,
    /// where they name one.
    Failed(Option<ReasonCode>),
}

/// Why Codex's words say the call never reached its server, if they do
/// (compared with Codex's own words only, never kept).
pub fn never_ran(words: &str) -> Option<ReasonCode> {
    NEVER_RAN
        .iter()
        .find(|(w, _)| words.starts_with(w))
        .map(|(_, reason)| reason.clone())
}

/// Whether Codex's words say the server answered with a JSON-RPC error.
pub fn protocol_error(words: &str) -> bool {
    words.starts_with(TOOL_CALL_ERROR) && words.contains(RPC_ERROR)
}

/// What Codex's words say of a call's end, if they are Codex's words for
/// one: `None` for any other text (a tool's own output, say).
pub fn said(words: &str) -> Option<Said> {
    if let Some(reason) = never_ran(words) {
        return Some(Said::NeverRan(reason));
    }
    if words.starts_with(UNSUPPORTED_CALL) {
        return Some(Said::NeverRan(ReasonCode::ToolNotAvailable));
    }
    let cause = words.strip_prefix(TOOL_CALL_ERROR)?;
    if cause.contains(UNKNOWN_SERVER) {
        return Some(Said::NeverRan(ReasonCode::ToolNotAvailable));
    }
    Some(Said::Failed(
        CAUSES
            .iter()
            .find(|(w, _)| cause.contains(w))
            .map(|(_, reason)| reason.clone()),
    ))
}

/// Whether `text` may be Codex's words for a call's end (its start is
/// one of theirs): only such text is kept long enough to be compared.
pub(super) fn may_be_said(text: &str) -> bool {
    text.starts_with(TOOL_CALL_ERROR)
        || text.starts_with(UNSUPPORTED_CALL)
        || NEVER_RAN.iter().any(|(w, _)| text.starts_with(w))
}

/// A `function_call_output`'s `output`, kept only where it may be
/// Codex's words for a call's end: a string (`FunctionCallOutputPayload`
/// as most releases write it) or a list of content items, each `{type,
/// text}` (its newer form), the first text read. Anything else, and any
/// other text, is passed over unkept (a tool's output is never kept).
#[derive(Debug, Default)]
pub(super) struct OutputWords<'a>(pub Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for OutputWords<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(OutputVisitor(std::marker::PhantomData))
    }
}

struct OutputVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> Visitor<'de> for OutputVisitor<'a> {
    type Value = OutputWords<'a>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a function call's output")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(OutputWords(may_be_said(v).then_some(Cow::Borrowed(v))))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(OutputWords(
            may_be_said(v).then(|| Cow::Owned(v.to_owned())),
        ))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut first = None;
        while let Some(item) = seq.next_element::<OutputItem<'a>>()? {
            if first.is_none() {
                first = item.text.and_then(|t| t.0);
            }
        }
        Ok(OutputWords(first))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(OutputWords(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(OutputWords(None))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(OutputWords(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(OutputWords(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(OutputWords(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(OutputWords(None))
    }
}

/// One content item of a list `output`: its text only.
#[derive(Deserialize)]
struct OutputItem<'a> {
    #[serde(borrow, default)]
    text: Option<OutputWords<'a>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GIVEN Codex's own failure text, as its code formats it WHEN read
    /// THEN each names the failure it is.
    #[test]
    fn codex_s_words_read_as_the_failure_they_name() {
        let timed_out = "tool call error: tool call failed for `monad/project_read`\n\nCaused by:\n    timed out awaiting tools/call after 120s";
        assert_eq!(
            said(timed_out),
            Some(Said::Failed(Some(ReasonCode::Timeout)))
        );
        let closed =
            "tool call error: tool call failed for `s/t`\n\nCaused by:\n    Transport closed";
        assert_eq!(
            said(closed),
            Some(Said::Failed(Some(ReasonCode::ConnectionClosed)))
        );
        let rpc =
            "tool call error: tool call failed for `s/t`\n\nCaused by:\n    Mcp error: -32602: bad";
        assert_eq!(
            said(rpc),
            Some(Said::Failed(Some(ReasonCode::ProtocolError)))
        );
        let other = "tool call error: tool call failed for `s/t`\n\nCaused by:\n    something new";
        assert_eq!(said(other), Some(Said::Failed(None)));
        assert_eq!(
            said("unsupported call: mcp__gone__tool"),
            Some(Said::NeverRan(ReasonCode::ToolNotAvailable))
        );
        assert_eq!(
            said("tool call error: unknown MCP server 'gone'"),
            Some(Said::NeverRan(ReasonCode::ToolNotAvailable))
        );
        assert_eq!(
            said("user rejected MCP tool call"),
            Some(Said::NeverRan(ReasonCode::PermissionDenied))
        );
        // A tool's own output is no word of Codex's.
        assert_eq!(said("timed out awaiting tools/call after 120s"), None);
        assert_eq!(said("{\"ok\":true}"), None);
    }
}
