//! Why a headless run ended in an error of its model API, from its
//! stream-json `result` line: a reason code and Tether's own words, never
//! the harness's (its `result` may hold the model's answer; it is compared
//! with Claude Code's constant wordings only, never kept).
//!
//! The wordings, from the shipped CLIs (`tests/peers`, the bundled
//! `claude` binary of `@anthropic-ai/claude-code-linux-x64`) and real runs
//! with the model API on a closed port and with no login:
//! - 2.1.197: `API Error: Unable to connect to API (ConnectionRefused)`
//!   (`Unable to connect to API (${code})`); `Request timed out. Check
//!   your internet connection and proxy settings`; `Unable to connect to
//!   API: SSL …`; `Not logged in · Please run /login`; `Invalid API key ·
//!   Fix external API key`.
//! - 2.1.332 adds `api_error: "connection_failed"` to the line and words
//!   each code: `Connection refused — a firewall or proxy may be blocking
//!   it (ECONNREFUSED)`, `Can't reach the API server — check your internet
//!   or DNS (ENOTFOUND)`, `Connection dropped (ECONNRESET)`; `Invalid auth
//!   token · Fix external auth token`.
//!
//! An error none of these words is left unsaid (the run's exit status is
//! still said); no guess is made.

use tether_core::vocab::ReasonCode;

/// What a `result` line says of its end.
pub(super) struct Ended<'a> {
    /// `is_error`.
    pub(super) is_error: Option<bool>,
    /// `result`: compared, never kept.
    pub(super) result: Option<&'a str>,
    /// `api_error` (2.1.3xx): the harness's own class of the error.
    pub(super) api_error: Option<&'a str>,
    /// `api_error_status`: the model API's HTTP status.
    pub(super) status: Option<i32>,
}

/// The reason and Tether's sentence for a run whose model API failed, where
/// the line says which way.
pub(super) fn failure(ended: &Ended<'_>) -> Option<(ReasonCode, &'static str)> {
    if ended.is_error != Some(true) {
        return None;
    }
    let said = ended.result.unwrap_or_default().trim_start();
    if said.starts_with("Not logged in") {
        return Some((
            ReasonCode::AuthRequired,
            "not logged in to its model provider (it asks for /login)",
        ));
    }
    if said.starts_with("Invalid API key")
        || said.starts_with("Invalid auth token")
        || matches!(ended.status, Some(401 | 403))
    {
        return Some((
            ReasonCode::AuthRejected,
            "its model provider refused the credentials it sent",
        ));
    }
    let error = said.strip_prefix("API Error: ").unwrap_or(said);
    let connection = ended.api_error == Some("connection_failed")
        || CONNECTION.iter().any(|w| error.starts_with(w));
    if !connection {
        return None;
    }
    connection_reason(error)
}

/// How Claude Code's connection errors begin (both releases).
const CONNECTION: [&str; 7] = [
    "Unable to connect to API",
    "Connection refused",
    "Can't reach the API server",
    "No internet route",
    "Connection dropped",
    "Couldn't connect through your proxy",
    "Request timed out",
];

/// The reason of a connection error, from the code Claude Code puts in
/// its words (Node's and Bun's error codes).
fn connection_reason(error: &str) -> Option<(ReasonCode, &'static str)> {
    let code = error
        .rsplit_once('(')
        .and_then(|(_, c)| c.split_once(')'))
        .map_or("", |(c, _)| c);
    Some(match code {
        "ECONNREFUSED" | "ConnectionRefused" => (
            ReasonCode::ConnectionRefused,
            "its model API could not be reached: nothing listened there (connection refused)",
        ),
        "ENOTFOUND" | "EAI_AGAIN" | "FailedToOpenSocket" => (
            ReasonCode::HostNotFound,
            "its model API could not be reached: its host name did not resolve",
        ),
        "ETIMEDOUT" => (
            ReasonCode::Timeout,
            "its model API could not be reached: the connection timed out",
        ),
        "ECONNRESET" | "EPIPE" | "ECONNABORTED" | "ConnectionClosed" | "ERR_SOCKET_CLOSED"
        | "UND_ERR_SOCKET" => (
            ReasonCode::ConnectionClosed,
            "its model API could not be reached: the connection dropped",
        ),
        _ if error.starts_with("Request timed out") => (
            ReasonCode::Timeout,
            "its model API could not be reached: the request timed out",
        ),
        _ if error.contains("SSL") || error.contains("certificate") => (
            ReasonCode::TlsFailed,
            "its model API could not be reached: the TLS handshake failed",
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(result: &str, api_error: Option<&str>) -> Option<ReasonCode> {
        failure(&Ended {
            is_error: Some(true),
            result: Some(result),
            api_error,
            status: None,
        })
        .map(|(code, _)| code)
    }

    /// Each release's own words, from real runs (closed port, no login).
    #[test]
    fn each_release_s_words_read_as_their_reason() {
        assert_eq!(
            of(
                "API Error: Unable to connect to API (ConnectionRefused)",
                None
            ),
            Some(ReasonCode::ConnectionRefused)
        );
        assert_eq!(
            of(
                "API Error: Connection refused \u{2014} a firewall or proxy may be blocking it (ECONNREFUSED)",
                Some("connection_failed")
            ),
            Some(ReasonCode::ConnectionRefused)
        );
        assert_eq!(
            of("Not logged in \u{b7} Please run /login", None),
            Some(ReasonCode::AuthRequired)
        );
        assert_eq!(
            of("Invalid API key \u{b7} Fix external API key", None),
            Some(ReasonCode::AuthRejected)
        );
        assert_eq!(
            of(
                "API Error: Can't reach the API server \u{2014} check your internet or DNS (ENOTFOUND)",
                Some("connection_failed")
            ),
            Some(ReasonCode::HostNotFound)
        );
    }

    /// An answer, an unknown error, or a run that did not fail: nothing said.
    #[test]
    fn other_words_say_nothing() {
        assert_eq!(of("The time is 10:00 (ECONNREFUSED)", None), None);
        assert_eq!(of("API Error: 529 Overloaded", None), None);
        let fine = Ended {
            is_error: Some(false),
            result: Some("Not logged in"),
            api_error: None,
            status: None,
        };
        assert!(failure(&fine).is_none());
    }
}
