//! Copilot CLI's own words for how a call ended, where its completion
//! (`tool.execution_complete`, `error.message`) gives them: compared, never
//! kept. Every phrase is from the shipped 1.0.102 CLI: its native runtime
//! (`prebuilds/linux-x64/runtime.node` in the package Copilot unpacks under
//! `COPILOT_PKG_CACHE_HOME`, read with `strings`; its Rust format strings
//! are stored cut at each `{}`), or a real run's events
//! (`tests/fixtures/refusals/copilot-1.0.102-*.jsonl`).
//!
//! - Refusals (a person, a rule, a hook, a policy): [`REFUSED`].
//! - "No such tool": `Tool '{name}' does not exist. Available tools that
//!   can be called are {list}.` (the runtime's tool dispatch: a name the
//!   session holds no tool for, the model-facing `SERVER-TOOL`) and `MCP
//!   tool not found on {server}: {tool}` (a server's tool that is gone):
//!   the call reached no server, and the tool was not available to Copilot
//!   then ([`not_available`]).
//! - Failures after the call left for its server, worded `MCP server
//!   '{server}': {cause}` (the tool-error form of the real runs'
//!   `MCP server 'count': …`): `MCP transport closed before the tool
//!   responded` (the transport ended under the call) and `Request timed
//!   out` (the MCP client's deadline), each in runtime.node ([`cause`]).

use tether_core::model::{Evidence, Timestamp};
use tether_core::vocab::{EvidenceKind, ReasonCode};

/// A turn that ended with its model provider not reached, from a
/// `session.error` of type `query`: 1.0.102's runtime.node words it
/// `Could not connect to local model provider at {url}.\n  Check that the
/// service is running and the port is correct.` (a real run: the provider
/// on a closed port). The words name no cause (a closed port and an
/// unresolved host read the same), so none is claimed. Other errors are
/// left unsaid.
pub(super) fn model_api(message: &str, at: Timestamp) -> Option<Evidence> {
    message
        .starts_with("Could not connect to local model provider at ")
        .then(|| {
            Evidence::new(EvidenceKind::ExplicitError, at).reason(
                ReasonCode::SessionRequestFailed,
                Some("its model provider could not be reached (no connection to it)".into()),
            )
        })
}

/// A run that ended before its session began because Copilot had no
/// login, from its process log's `[ERROR]` line (1.0.102 `cli-main.js`:
/// `A.error(vn ? "Classic PAT detected in environment." : cn.length > 0 ?
/// `Authentication token validation failed: …` : "No authentication
/// information found.")`, then exit 1; the first and last seen in real
/// runs): none is `auth_required`, a classic token (which Copilot does not
/// take) `auth_rejected`, in Tether's words. A token that could not be
/// validated names no cause (Copilot says it may be the network), so it
/// is left unsaid, as other lines are.
pub(super) fn login(message: &str, at: Timestamp) -> Option<Evidence> {
    let (reason, words) = match message.trim_end() {
        "No authentication information found." => (
            ReasonCode::AuthRequired,
            "not logged in to GitHub Copilot: run `copilot login` (or /login), or set COPILOT_GITHUB_TOKEN, GH_TOKEN or GITHUB_TOKEN",
        ),
        "Classic PAT detected in environment." => (
            ReasonCode::AuthRejected,
            "a classic personal access token (ghp_) is in its environment, which Copilot does not take: use a fine-grained token or `copilot login`",
        ),
        _ => return None,
    };
    Some(Evidence::new(EvidenceKind::ExplicitError, at).reason(reason, Some(words.into())))
}

/// What the `WWW-Authenticate` challenge of a server's HTTP 401 or 403
/// says, as Copilot's process log writes it (1.0.102 runtime.node,
/// `mcp_engine::agent_host`: `HTTP {status} challenge (WWW-Authenticate:
/// {header})`, the header's parameter names masked `******`, its quoted
/// values kept; real runs: `******"invalid_token"`,
/// `******"http://…/.well-known/oauth-protected-resource/mcp"`, and empty
/// for a 401 with none). `message` is the text after the log level, up to
/// its JSON fields; the values are read, never kept. `None` for another
/// line.
///
/// A scope refused (`insufficient_scope`) is `auth_rejected`; OAuth
/// resource metadata named is `oauth_required` (the server points to its
/// login; with `invalid_token` beside it, as the MCP TypeScript SDK says
/// it for a request with no token too, the login is still what to do); a
/// bare `invalid_token` is `auth_rejected` (RFC 6750: the token sent is
/// not valid). No challenge, or another, is `auth_required`: Copilot's
/// words do not say whether it sent credentials (it reads every one of
/// these as "needs auth"), so a token refused and credentials wanted read
/// the same, and Tether claims neither.
pub(super) fn challenge(message: &str) -> Option<(ReasonCode, String)> {
    let (_, after) = message.split_once("] HTTP ")?;
    let (status, header) = after.split_once(" challenge (WWW-Authenticate: ")?;
    let status: u16 = status.parse().ok()?;
    let header = header.trim_end().trim_end_matches(')').to_ascii_lowercase();
    let (reason, words) = if header.contains("\"insufficient_scope\"") {
        (
            ReasonCode::AuthRejected,
            format!(
                "the server refused the token Copilot sent (HTTP {status}, insufficient_scope): it lacks a scope the server wants; make one with that scope"
            ),
        )
    } else if header.contains("oauth-protected-resource") {
        (
            ReasonCode::OauthRequired,
            format!(
                "the server wants an OAuth login (HTTP {status} naming its OAuth resource metadata, as Copilot's log shows), which `copilot -p` cannot do: log in once in an interactive copilot (/mcp), or configure a token it takes"
            ),
        )
    } else if header.contains("\"invalid_token\"") {
        (
            ReasonCode::AuthRejected,
            format!(
                "the server refused the token Copilot sent (HTTP {status}, invalid_token): it is wrong, expired or revoked; make a new one and put it where the entry reads it"
            ),
        )
    } else {
        (
            ReasonCode::AuthRequired,
            format!(
                "the server wants credentials (HTTP {status}, no challenge Copilot's log names): configure the header or token it wants, or check the one configured; Copilot's log does not say whether it sent one"
            ),
        )
    };
    Some((reason, words))
}

/// How Copilot CLI's runtime (1.0.102, `prebuilds/linux-x64/runtime.node`)
/// words a tool call it refused, and the reason each is: a person's no and
/// a `--deny-tool` rule are the harness's rules (`permission_denied`); no
/// one to ask in a `-p` run `approval_required`; a preToolUse hook's deny
/// `blocked_by_hook`; the enterprise's MCP policy `denied_by_policy`.
const REFUSED: &[(&str, ReasonCode)] = &[
    (
        "The user rejected this tool call",
        ReasonCode::PermissionDenied,
    ),
    (
        "Permission to run this tool was denied",
        ReasonCode::PermissionDenied,
    ),
    (
        "Permission denied because no interactive user response was available",
        ReasonCode::ApprovalRequired,
    ),
    (
        "Permission denied and could not request permission from user",
        ReasonCode::ApprovalRequired,
    ),
    ("Denied by preToolUse hook", ReasonCode::BlockedByHook),
    (
        "Blocked by enterprise MCP policy",
        ReasonCode::DeniedByPolicy,
    ),
];

/// Why Copilot refused a call, from its completion's words (scanned, never
/// kept) and its `error.code` (`denied`, 1.0.102: a refusal whose words
/// are not among the known ones is still one, of its rules). `None` where
/// the call was not refused.
pub(super) fn refused_by(message: Option<&str>, code: Option<&str>) -> Option<ReasonCode> {
    let message = message.unwrap_or_default();
    if message.starts_with("The pending permission request was cancelled") {
        // Cancelled before it was answered: whether it would have run is
        // unknown (the caller leaves its outcome unknown).
        return None;
    }
    REFUSED
        .iter()
        .find(|(words, _)| message.starts_with(words))
        .map(|(_, reason)| reason.clone())
        .or_else(|| (code == Some("denied")).then_some(ReasonCode::PermissionDenied))
}

/// A `permission.completed` `result.kind` that refused the call (1.0.102
/// schema `PermissionResult`); an approval or a cancellation is `None`.
pub(super) fn refused_kind(kind: &str) -> Option<ReasonCode> {
    match kind {
        "denied-by-rules" | "denied-interactively-by-user" => Some(ReasonCode::PermissionDenied),
        "denied-no-approval-rule-and-could-not-request-from-user" => {
            Some(ReasonCode::ApprovalRequired)
        }
        "denied-by-permission-request-hook" => Some(ReasonCode::BlockedByHook),
        "denied-by-content-exclusion-policy" => Some(ReasonCode::DeniedByPolicy),
        _ => None,
    }
}

/// Copilot's "no such tool" for a name: `Tool '` NAME `' does not exist.`
const NO_SUCH_TOOL: (&str, &str) = ("Tool '", "' does not exist. Available tools");
/// Copilot's "no such tool" for a server's tool: `MCP tool not found on
/// SERVER: TOOL`.
const NOT_FOUND_ON: &str = "MCP tool not found on ";

/// What a "no such tool" names, where the words are Copilot's.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Missing<'a> {
    /// A model-facing name (`SERVER-TOOL` for a server's tool).
    Named(&'a str),
    /// A server and its tool.
    OnServer(&'a str, &'a str),
}

/// Whether Copilot's words say it had no such tool, and what they name.
pub(super) fn not_available(message: &str) -> Option<Missing<'_>> {
    if let Some(rest) = message.strip_prefix(NO_SUCH_TOOL.0)
        && let Some((name, _)) = rest.split_once(NO_SUCH_TOOL.1)
    {
        return Some(Missing::Named(name));
    }
    let (_, rest) = message.split_once(NOT_FOUND_ON)?;
    let (server, tool) = rest.split_once(": ")?;
    Some(Missing::OnServer(server, tool.trim_end()))
}

/// The failures Copilot's words name after `MCP server 'S': `, and the
/// reason each is.
const CAUSES: &[(&str, ReasonCode)] = &[
    (
        "MCP transport closed before the tool responded",
        ReasonCode::ConnectionClosed,
    ),
    ("Request timed out", ReasonCode::Timeout),
];

/// The failure Copilot's words name, where they are its words for one
/// (`MCP server 'S': ` then one of [`CAUSES`], or the cause alone); a
/// tool's own error text after the prefix names none.
pub(super) fn cause(message: &str) -> Option<ReasonCode> {
    let after = match message.strip_prefix("MCP server '") {
        Some(rest) => rest.split_once("': ")?.1,
        None => message,
    };
    CAUSES
        .iter()
        .find(|(words, _)| after.starts_with(words))
        .map(|(_, reason)| reason.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GIVEN a real 1.0.102 run's `session.error` (type `query`) with its
    /// model provider on a closed port, and other words WHEN read THEN the
    /// first is a report-level `session_request_failed` in Tether's words
    /// (no cause claimed), the others nothing.
    #[test]
    fn a_model_provider_not_reached_is_said() {
        let said = "Could not connect to local model provider at http://127.0.0.1:9/v1.\n  Check that the service is running and the port is correct.";
        let e = model_api(said, Timestamp(1)).expect("an error");
        assert_eq!(e.kind, EvidenceKind::ExplicitError);
        assert_eq!(e.server, None);
        assert_eq!(e.reason_code, Some(ReasonCode::SessionRequestFailed));
        assert!(!format!("{e:?}").contains("127.0.0.1"), "{e:?}");
        assert!(model_api("Execution failed: something else", Timestamp(1)).is_none());
    }

    /// GIVEN the challenge lines of real 1.0.102 runs (a token refused
    /// with `invalid_token`, an OAuth login naming its resource metadata,
    /// a 401 with no challenge) and a scope refused WHEN read THEN each is
    /// its reason, and no value of the header is kept.
    #[test]
    fn each_challenge_says_which_auth_failure() {
        let line = |header: &str| {
            format!(
                "[WARNING] [rust:mcp_engine::agent_host] HTTP 401 challenge (WWW-Authenticate: {header})"
            )
        };
        for (header, want) in [
            ("******\"invalid_token\"", ReasonCode::AuthRejected),
            (
                "******\"http://127.0.0.1:4/.well-known/oauth-protected-resource/mcp\"",
                ReasonCode::OauthRequired,
            ),
            (
                "******\"invalid_token\", ******\"Missing Authorization header\", ******\"http://127.0.0.1:4/.well-known/oauth-protected-resource\"",
                ReasonCode::OauthRequired,
            ),
            (
                "******\"insufficient_scope\", ******\"repo\"",
                ReasonCode::AuthRejected,
            ),
            ("", ReasonCode::AuthRequired),
        ] {
            let (reason, words) = challenge(&line(header)).expect(header);
            assert_eq!(reason, want, "{header}");
            assert!(!words.contains("127.0.0.1"), "{words}");
            assert!(words.contains("HTTP 401"), "{words}");
        }
        assert!(challenge("[WARNING] [rust:x] MCP OAuth authorization failed").is_none());
        let e = login("No authentication information found.", Timestamp(1)).expect("an error");
        assert_eq!(e.reason_code, Some(ReasonCode::AuthRequired));
        assert_eq!(e.server, None);
        assert!(login("Authentication token validation failed: x", Timestamp(1)).is_none());
    }

    /// GIVEN Copilot 1.0.102's words for a call's end WHEN read THEN "no
    /// such tool" names what it names, a cause names its failure, and a
    /// tool's own text after the server's name names nothing.
    #[test]
    fn copilot_s_words_read_as_what_they_name() {
        assert_eq!(
            not_available(
                "Tool 'count-gone' does not exist. Available tools that can be called are bash, view."
            ),
            Some(Missing::Named("count-gone"))
        );
        assert_eq!(
            not_available("MCP server 'count': MCP tool not found on count: gone"),
            Some(Missing::OnServer("count", "gone"))
        );
        assert_eq!(not_available("Tool 'x' failed"), None);
        assert_eq!(
            cause("MCP server 'count': MCP transport closed before the tool responded"),
            Some(ReasonCode::ConnectionClosed)
        );
        assert_eq!(
            cause("MCP server 'count': Request timed out"),
            Some(ReasonCode::Timeout)
        );
        assert_eq!(cause("MCP server 'count': planted Request timed out"), None);
        assert_eq!(
            cause("MCP server 'count': McpError: MCP error -32602: x"),
            None
        );
    }
}
