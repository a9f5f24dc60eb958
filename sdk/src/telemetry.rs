//! Helpers for a passthrough plugin's telemetry mapping
//! ([`PassthroughStrategy::read_telemetry`](tether_core::passthrough::PassthroughStrategy::read_telemetry)):
//! evidence with provenance `harness_telemetry`, and the name splits harnesses
//! use for MCP tools. Pure functions: no I/O.

use tether_core::model::{Evidence, Timestamp};
use tether_core::telemetry::{NamedServer, TelemetryReading, TelemetryRecord};
use tether_core::vocab::{EvidenceKind, Provenance, ReasonCode, ReportedStatus, Transport};

/// Evidence of `kind` from the harness's own telemetry.
pub fn said(kind: EvidenceKind, at: Timestamp) -> Evidence {
    Evidence::new(kind, at).provenance(Provenance::HarnessTelemetry)
}

/// The harness reported `server`'s state, typed by its plugin.
pub fn reported(server: &str, state: ReportedStatus, at: Timestamp) -> Evidence {
    // `reported` marks the evidence as the agent's own report; the harness's
    // telemetry is a provenance of its own.
    Evidence::new(EvidenceKind::AgentReported, at)
        .server(server)
        .reported(state)
        .provenance(Provenance::HarnessTelemetry)
}

/// The harness reported `server`'s state in a word its plugin passes on
/// untyped, read by [`state_of`] (a plugin that knows the state passes it
/// typed, to [`reported`]).
pub fn status(server: &str, word: &str, at: Timestamp) -> Evidence {
    reported(server, state_of(word), at)
}

/// A state word a plugin passes untyped: a [`ReportedStatus`] wire form
/// (`connected`, `failed`, `needs-auth`, `disabled`, `pending`), or a
/// harness's own word a plugin passes for one of them:
/// `needs_client_registration` (OpenCode 1.18.33, `MCP.create`'s "server
/// unavailable" status: an OAuth server that wants a client id first) is
/// `needs-auth`. Core reads no harness's words; this keeps what that
/// plugin passes read as it was until the plugin types it. Any other
/// word is the harness's, untyped: a reported `unknown` in the row.
pub fn state_of(word: &str) -> ReportedStatus {
    match word {
        "needs_client_registration" => ReportedStatus::NeedsAuth,
        word => ReportedStatus::from(word),
    }
}

/// The harness reported `server` as failed, with a stable reason.
pub fn failed(
    server: &str,
    reason: ReasonCode,
    summary: Option<String>,
    at: Timestamp,
) -> Evidence {
    reported(server, ReportedStatus::Failed, at).reason(reason, summary)
}

/// The harness listed `count` tools from `server`.
pub fn tools_listed(server: &str, count: u32, at: Timestamp) -> Evidence {
    said(EvidenceKind::ToolsListObserved, at)
        .server(server)
        .tools(count)
}

/// The harness offered `count` of `server`'s tools to the model.
pub fn tools_visible(server: &str, count: u32, at: Timestamp) -> Evidence {
    Evidence::new(EvidenceKind::AgentReported, at)
        .server(server)
        .tools(count)
        .provenance(Provenance::HarnessTelemetry)
}

/// The harness called `tool` of `server`; `ok` where it said how it went.
pub fn tool_called(server: &str, tool: &str, ok: Option<bool>, at: Timestamp) -> Evidence {
    let mut evidence = said(EvidenceKind::ToolCallObserved, at)
        .server(server)
        .tool_call(tool, ok.unwrap_or(false));
    evidence.ok = ok;
    evidence
}

/// The harness took `server` from its configuration into the session.
pub fn taken(server: &str, at: Timestamp) -> Evidence {
    said(EvidenceKind::Delivered, at).server(server)
}

/// A reading for `session` (when the record carries one).
pub fn reading(session: Option<String>) -> TelemetryReading {
    let mut reading = TelemetryReading::default();
    reading.session = session;
    reading
}

/// Adds a server the record named (deduplicated) to `reading`.
pub fn name_server(reading: &mut TelemetryReading, name: &str, transport: Option<Transport>) {
    if name.is_empty() || reading.servers.iter().any(|s| s.name == name) {
        return;
    }
    reading
        .servers
        .push(NamedServer::new(name.to_owned(), transport));
}

/// A harness's word for a transport (`stdio`, `http`, `streamable-http`,
/// `sse`, `local`, `remote`…), where it is one Tether knows.
pub fn transport_word(word: &str) -> Option<Transport> {
    match word.to_ascii_lowercase().as_str() {
        "stdio" | "local" => Some(Transport::Stdio),
        "http" | "streamable-http" | "streamable_http" | "streamablehttp" | "remote" => {
            Some(Transport::Http)
        }
        "sse" => Some(Transport::Sse),
        _ => None,
    }
}

/// `mcp__SERVER__TOOL` (Claude, Qwen, Codex hooks) as `(SERVER, TOOL)`. A
/// server name may itself hold `__`? No harness allows it to be told apart,
/// so the first `__` after the prefix splits.
pub fn split_mcp_double(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("mcp__")?;
    let (server, tool) = rest.split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}

/// A tool name `PREFIX SERVER SEP TOOL` read against the configured server
/// names: the one configured name that fits. `None` when none fits, or
/// when two do (`mcp_my_srv_tool` with servers `my` and `my_srv`): the split
/// is ambiguous, and Tether does not guess.
pub fn split_against<'a>(
    name: &'a str,
    prefix: &str,
    sep: &str,
    configured: &[String],
) -> Option<(String, &'a str)> {
    let rest = name.strip_prefix(prefix)?;
    let mut fits = configured.iter().filter_map(|server| {
        let tool = rest.strip_prefix(server.as_str())?.strip_prefix(sep)?;
        (!tool.is_empty()).then(|| (server.clone(), tool))
    });
    let first = fits.next()?;
    fits.next().is_none().then_some(first)
}

/// The harness listed `server`'s tools (how many, where it said).
pub fn listed(server: &str, count: Option<u32>, at: Timestamp) -> Evidence {
    let mut evidence = said(EvidenceKind::ToolsListObserved, at).server(server);
    evidence.tool_count = count;
    evidence
}

/// The record's text attribute `key`, trimmed, when it is not empty.
pub fn text(record: &TelemetryRecord, key: &str) -> Option<String> {
    let value = record.text(key)?;
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_owned())
}

/// The record's boolean attribute `key`.
pub fn flag(record: &TelemetryRecord, key: &str) -> Option<bool> {
    record.attr(key).and_then(|v| v.boolean())
}

/// Whether `s` looks like an error code (`ENOENT`, `ECONNREFUSED`, `-32000`):
/// 1 to 24 upper-case letters, digits, `_` and `-`. Only such a code is ever
/// repeated in a summary; anything else a harness puts there is not.
pub fn is_error_code(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 24
        && s.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || matches!(c, '_' | '-'))
}

/// The reason an error code or message from a harness stands for, when it
/// is one Tether knows: a missing command, a refused connection, a wanted
/// login, a timeout, a connection closed at start, a policy's refusal.
/// `None`: keep the harness's own "failed".
pub fn reason_for(code_or_message: &str) -> Option<ReasonCode> {
    let lower = code_or_message.to_ascii_lowercase();
    if lower.contains("enoent") || lower.contains("not found") || lower.contains("no such file") {
        Some(ReasonCode::CommandNotFound)
    } else if lower.contains("econnrefused") || lower.contains("connection refused") {
        Some(ReasonCode::ConnectionRefused)
    } else if lower.contains("unauthorized")
        || lower.contains("401")
        || lower.contains("auth")
        || lower.contains("invalid_token")
    {
        Some(ReasonCode::AuthRequired)
    } else if lower.contains("timeout") || lower.contains("timed out") {
        Some(ReasonCode::Timeout)
    } else if lower.contains("connection closed") {
        Some(ReasonCode::ConnectionClosed)
    } else if lower.contains("policy") {
        Some(ReasonCode::DeniedByPolicy)
    } else {
        None
    }
}

/// The SHA-256 of `name`, in lower-case hex: how Copilot names servers and
/// tools in its telemetry.
pub fn sha256_hex(name: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(name.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GIVEN each word the plugins pass untyped (their literals and
    /// harnesses' words: Claude Code 2.1.197's `McpServerStatus`, OpenCode
    /// 1.18.33's "server unavailable" statuses as its plugin passes them)
    /// WHEN read THEN each is the state core read it as before states were
    /// typed, and a word no plugin types is the harness's, untyped.
    #[test]
    fn the_words_plugins_pass_keep_their_states() {
        for (word, state) in [
            ("connected", ReportedStatus::Connected),
            ("failed", ReportedStatus::Failed),
            ("needs-auth", ReportedStatus::NeedsAuth),
            ("needs_client_registration", ReportedStatus::NeedsAuth),
            ("disabled", ReportedStatus::Disabled),
            ("pending", ReportedStatus::Pending),
            ("stopped", ReportedStatus::Other("stopped".into())),
        ] {
            assert_eq!(state_of(word), state, "{word}");
            let ev = status("srv", word, Timestamp(1));
            assert_eq!(ev.reported_state(), Some(state), "{word}");
            assert_eq!(ev.provenance, Provenance::HarnessTelemetry);
        }
        let failed = failed("srv", ReasonCode::CommandNotFound, None, Timestamp(1));
        assert_eq!(failed.reported_status.as_deref(), Some("failed"));
        assert_eq!(failed.reason_code, Some(ReasonCode::CommandNotFound));
    }

    #[test]
    fn sha256_matches_the_standard_vectors() {
        assert_eq!(
            sha256_hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
    }

    #[test]
    fn only_error_codes_are_error_codes() {
        for code in ["ENOENT", "ECONNREFUSED", "-32000", "HTTP_401"] {
            assert!(is_error_code(code), "{code}");
        }
        for text in [
            "",
            "enoent",
            "telemetry-SECRET-9f8e7d6c",
            "no such file",
            "A".repeat(25).as_str(),
        ] {
            assert!(!is_error_code(text), "{text}");
        }
    }

    #[test]
    fn names_split_only_where_a_configured_server_fits() {
        assert_eq!(
            split_mcp_double("mcp__time__get_current_time"),
            Some(("time", "get_current_time"))
        );
        assert_eq!(split_mcp_double("Read"), None);
        let configured = vec!["my".to_owned(), "my_srv".to_owned(), "time".to_owned()];
        assert_eq!(
            split_against("mcp_time_get_current_time", "mcp_", "_", &configured),
            Some(("time".to_owned(), "get_current_time"))
        );
        // Both `my` and `my_srv` fit: ambiguous, so no answer.
        assert_eq!(
            split_against("mcp_my_srv_tool", "mcp_", "_", &configured),
            None
        );
        assert_eq!(
            split_against("mcp_other_tool", "mcp_", "_", &configured),
            None
        );
    }
}
