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
//!
//! While it retries, a run prints a `system/api_retry` line per failed
//! attempt ([`retrying`]); a run killed or timed out mid-retry ends on
//! those, with no `result` line.

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

/// What a `system/api_retry` line says of one failed request to the model
/// API, read while the run retries it. Its shape, from the shipped CLIs
/// (`tests/peers`, the bundled `claude` binary of
/// `@anthropic-ai/claude-code-linux-x64`: 2.1.197's `OOm` schema and its
/// `yield W({type:"system",subtype:"api_retry",…})`, 2.1.332's `dW`):
/// `{type:"system", subtype:"api_retry", attempt, max_retries,
/// retry_delay_ms, error_status, error, session_id, uuid}`, and in 2.1.332
/// `no_response: {waited_ms, retry_wait_ms}` where the API sent no response
/// headers within its first-byte window. `error_status` is the HTTP status,
/// null "for connection errors (e.g. timeouts) that had no HTTP response"
/// (the schema's own words); `error` is a class from a closed list
/// ([`ERROR_CLASSES`]), never the error's text. Real runs on a closed port
/// (both releases): `"error_status":null,"error":"unknown"`.
pub(super) struct Retrying<'a> {
    /// `error_status`.
    pub(super) status: Option<i32>,
    /// `error`: compared with [`ERROR_CLASSES`], kept only as one of them.
    pub(super) error: Option<&'a str>,
    /// Whether `no_response` is there (2.1.332).
    pub(super) no_response: bool,
}

/// The classes an `api_retry` line's `error` may hold: 2.1.197's `LQo`
/// enum and 2.1.332's `Yr` (which adds `account_on_hold`,
/// `verification_required`, `cloud_credential_error`).
const ERROR_CLASSES: [&str; 13] = [
    "authentication_failed",
    "oauth_org_not_allowed",
    "account_on_hold",
    "verification_required",
    "billing_error",
    "rate_limit",
    "overloaded",
    "invalid_request",
    "model_not_found",
    "server_error",
    "unknown",
    "max_output_tokens",
    "cloud_credential_error",
];

/// The reason and Tether's sentence for a request to the model API that
/// failed and was being retried: in the words of the run's end where the
/// line says as much (the credentials refused; no HTTP answer: "could not
/// be reached"), else the HTTP status and the harness's class of it. A
/// connection error's cause (refused, no such host) is not on the line, so
/// none is claimed.
pub(super) fn retrying(line: &Retrying<'_>) -> (ReasonCode, String) {
    const RETRIED: &str = " (it retried)";
    let class = line.error.filter(|e| ERROR_CLASSES.contains(e));
    if matches!(line.status, Some(401 | 403)) || class == Some("authentication_failed") {
        return (
            ReasonCode::AuthRejected,
            format!("its model provider refused the credentials it sent{RETRIED}"),
        );
    }
    if line.no_response {
        return (
            ReasonCode::Timeout,
            format!("its model API could not be reached: it sent no answer in time{RETRIED}"),
        );
    }
    match (line.status, class) {
        (None, None | Some("unknown")) => (
            ReasonCode::SessionRequestFailed,
            format!("its model API could not be reached: its request got no HTTP answer{RETRIED}"),
        ),
        (None, Some(class)) => (
            ReasonCode::SessionRequestFailed,
            format!("a request to its model API failed ({class}){RETRIED}"),
        ),
        (Some(status), None | Some("unknown")) => (
            ReasonCode::ServerError,
            format!("its model API answered HTTP {status}{RETRIED}"),
        ),
        (Some(status), Some(class)) => (
            ReasonCode::ServerError,
            format!("its model API answered HTTP {status} ({class}){RETRIED}"),
        ),
    }
}

/// A transcript's `system/api_error` record (2.1.332: one per failed
/// request that is retried, `{type:"system", subtype:"api_error",
/// level:"error", error, retryInMs, retryAttempt, maxRetries, source,
/// timestamp, …}`, its `error` 2.1.332's `Y1r`: `{message, status,
/// requestId, formatted, connection:{code, message, isSSLError},
/// isNetworkDown, rateLimits, noResponse}`; a real run on a closed port:
/// `connection.code` `ECONNREFUSED`, no `status`; 2.1.197 writes none, as
/// a real run shows): the session's error, as [`retrying`] says it, with
/// the connection error's cause where its code names one, in the words
/// the run's end uses for it. Only `status`, `connection.code`,
/// `connection.isSSLError` and whether `noResponse` is there are read;
/// the error's words (`message`, `formatted`) never are.
pub(super) fn api_error_record(whole: super::Whole<'_>) -> Option<(ReasonCode, String)> {
    let parsed;
    let value = match whole {
        super::Whole::Written(record) => {
            parsed = super::fields::parse(record).ok()?;
            &parsed
        }
        super::Whole::Parsed(value) => value,
    };
    let error = value.get("error").filter(|e| e.is_object())?;
    let status = error
        .get("status")
        .and_then(serde_json::Value::as_i64)
        .and_then(|s| i32::try_from(s).ok());
    let connection = error.get("connection").filter(|c| c.is_object());
    let code = connection
        .and_then(|c| c.get("code"))
        .and_then(serde_json::Value::as_str);
    let tls = connection
        .and_then(|c| c.get("isSSLError"))
        .and_then(serde_json::Value::as_bool)
        == Some(true);
    let no_response = error.get("noResponse").is_some_and(|n| !n.is_null());
    let cause = match (status, code) {
        (None, Some(code)) => connection_reason(&format!("({code})")),
        _ => None,
    }
    .or_else(|| {
        (status.is_none() && tls).then_some((
            ReasonCode::TlsFailed,
            "its model API could not be reached: the TLS handshake failed",
        ))
    });
    if let Some((reason, words)) = cause
        && !no_response
        && !matches!(status, Some(401 | 403))
    {
        return Some((reason, format!("{words} (it retried)")));
    }
    Some(retrying(&Retrying {
        status,
        error: None,
        no_response,
    }))
}

/// A transcript's record of a run's end in an error of its model API: the
/// `assistant` record Claude Code writes in the model's place
/// (`isApiErrorMessage: true`, `model: "<synthetic>"`, its one text item
/// the words the stream-json `result` line repeats, `apiError` in 2.1.332;
/// real 2.1.197 and 2.1.332 runs on a closed port), read as [`failure`]
/// reads that line. Cheaply rejected where the record cannot hold the
/// flag; the words are compared, never kept.
pub(super) fn api_error_message(whole: super::Whole<'_>) -> Option<(ReasonCode, &'static str)> {
    let parsed;
    let value = match whole {
        super::Whole::Written(record) => {
            if !super::may_hold(record, "isApiErrorMessage") {
                return None;
            }
            parsed = super::fields::parse(record).ok()?;
            &parsed
        }
        super::Whole::Parsed(value) => value,
    };
    if value.get("isApiErrorMessage") != Some(&serde_json::Value::Bool(true)) {
        return None;
    }
    let said = value
        .pointer("/message/content")
        .and_then(serde_json::Value::as_array)?
        .iter()
        .find(|item| item.get("type").and_then(serde_json::Value::as_str) == Some("text"))?
        .get("text")
        .and_then(serde_json::Value::as_str)?;
    failure(&Ended {
        is_error: Some(true),
        result: Some(said),
        api_error: value.get("apiError").and_then(serde_json::Value::as_str),
        status: None,
    })
}

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

    fn retry(status: Option<i32>, error: Option<&str>, no_response: bool) -> (ReasonCode, String) {
        retrying(&Retrying {
            status,
            error,
            no_response,
        })
    }

    /// GIVEN `api_retry` lines as each release prints them (a closed port:
    /// no status, `unknown`; the statuses and classes of the shipped code)
    /// WHEN read THEN no HTTP answer is "could not be reached" with no cause
    /// claimed, 401/403 the credentials refused (the run's end's words), a
    /// first-byte timeout a timeout, any other status said with its class,
    /// and a class outside the shipped list never shown.
    #[test]
    fn a_retry_says_what_its_line_says() {
        let (code, words) = retry(None, Some("unknown"), false);
        assert_eq!(code, ReasonCode::SessionRequestFailed);
        assert!(
            words.starts_with("its model API could not be reached: "),
            "{words}"
        );
        assert_eq!(
            retry(Some(401), Some("authentication_failed"), false).0,
            ReasonCode::AuthRejected
        );
        assert_eq!(retry(None, Some("unknown"), true).0, ReasonCode::Timeout);
        let (code, words) = retry(Some(529), Some("overloaded"), false);
        assert_eq!(code, ReasonCode::ServerError);
        assert_eq!(
            words,
            "its model API answered HTTP 529 (overloaded) (it retried)"
        );
        let (_, words) = retry(Some(500), Some("sk-ant-PLANTED"), false);
        assert_eq!(words, "its model API answered HTTP 500 (it retried)");
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
