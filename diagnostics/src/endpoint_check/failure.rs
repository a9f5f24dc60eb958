//! Why an endpoint check failed, in words a user can act on: a stable
//! reason and a sentence for each way a server can be wrong. What rmcp,
//! reqwest or rustls say is only searched here, never shown: no sentence
//! holds a library's type names or its error chain.

use std::path::Path;

use tether_core::spec::Endpoint;
use tether_core::vocab::ReasonCode;

/// One failed check: its reason and sentence.
pub(super) struct Failure {
    pub(super) reason: ReasonCode,
    pub(super) summary: String,
    /// `server/discover` got a result that is not a discovery result (a
    /// legacy server answering a method it does not know with `{}` instead
    /// of -32601): the legacy handshake is worth a try.
    pub(super) discover_misanswered: bool,
}

impl Failure {
    pub(super) fn new(reason: ReasonCode, summary: impl Into<String>) -> Self {
        Failure {
            reason,
            summary: summary.into(),
            discover_misanswered: false,
        }
    }
}

/// What credentials a check sends: what tells a refused token from a
/// login the server wants, and both from a token variable left unset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Credentials {
    /// None: no credential header, no password in the URL.
    None,
    /// A credential header whose value is only its scheme (`Bearer`) or
    /// nothing, as an unset variable leaves `Bearer ${TOKEN}`.
    Empty,
    /// A token, key or password went with the request.
    Sent,
}

/// Header names that carry a credential (compared lowercase): the
/// standard ones, and the words API-key headers are named with.
fn is_credential_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    matches!(
        name.as_str(),
        "authorization" | "proxy-authorization" | "cookie"
    ) || ["token", "key", "secret", "auth", "password"]
        .iter()
        .any(|word| name.contains(word))
}

/// Whether a header value is empty once a scheme word is taken off.
fn holds_no_credential(value: &str) -> bool {
    let value = value.trim();
    let rest = match value.split_once(char::is_whitespace) {
        Some((_, rest)) => rest.trim(),
        None if ["bearer", "basic", "token"].contains(&value.to_ascii_lowercase().as_str()) => "",
        None => value,
    };
    rest.is_empty()
}

/// The credentials `endpoint` sends.
pub(super) fn credentials(endpoint: &Endpoint) -> Credentials {
    let (url, headers) = match endpoint {
        Endpoint::Http { url, headers } | Endpoint::Sse { url, headers } => (url, headers),
        Endpoint::Stdio { .. } => return Credentials::None,
    };
    let in_url = url::Url::parse(url).is_ok_and(|u| {
        !u.username().is_empty()
            || u.password().is_some()
            || u.query_pairs()
                .any(|(k, v)| is_credential_header(&k) && !v.is_empty())
    });
    let credential_headers: Vec<&str> = headers
        .iter()
        .filter(|kv| is_credential_header(&kv.name))
        .map(|kv| kv.value.as_str())
        .collect();
    if in_url || credential_headers.iter().any(|v| !holds_no_credential(v)) {
        Credentials::Sent
    } else if credential_headers.is_empty() {
        Credentials::None
    } else {
        Credentials::Empty
    }
}

/// The reason for an HTTP 401 or 403: a token refused, a login wanted, a
/// token variable left empty, or credentials wanted and none sent.
/// `challenge` is the `WWW-Authenticate` header, when the server sent one
/// (read for its parameter names only; never shown).
pub(super) fn for_auth(code: u16, challenge: Option<&str>, sent: Credentials) -> Failure {
    let challenge = challenge.unwrap_or("").to_ascii_lowercase();
    match sent {
        Credentials::Sent => {
            let scope = if code == 403 && challenge.contains("insufficient_scope") {
                " (insufficient_scope: the token lacks a scope the server wants)"
            } else {
                ""
            };
            Failure::new(
                ReasonCode::AuthRejected,
                format!(
                    "the server refused the credentials sent (HTTP {code}){scope}: the token is wrong, expired or revoked, or lacks the access the server wants; make a new one and put it where the configuration reads it"
                ),
            )
        }
        Credentials::Empty => Failure::new(
            ReasonCode::UnresolvedVariable,
            format!(
                "the server answered HTTP {code}, and the credential header went with its scheme and no token, as an unset token variable leaves it: set the variable where this runs"
            ),
        ),
        Credentials::None if code == 401 && challenge.contains("resource_metadata") => {
            Failure::new(
                ReasonCode::OauthRequired,
                "the server wants an OAuth login (HTTP 401, and it names its OAuth resource metadata), and no credentials were sent: log in through the harness (its /mcp or mcp login command), or test with the token it got, in an Authorization header (--header)",
            )
        }
        Credentials::None => Failure::new(
            ReasonCode::AuthRequired,
            format!(
                "the server wants credentials (HTTP {code}) and none were sent: configure the header or token it wants"
            ),
        ),
    }
}

/// An `auth_required` failure of a check that sent no credentials, told
/// apart as `oauth_required` when the server publishes OAuth
/// protected-resource metadata where the MCP authorization spec says a
/// client looks when the 401's challenge names none
/// (`/.well-known/oauth-protected-resource`, with the endpoint's path,
/// then without). One GET each, no headers, no redirects, by `deadline`.
pub(super) async fn with_oauth_discovery(
    failure: Failure,
    endpoint: &Endpoint,
    deadline: tokio::time::Instant,
) -> Failure {
    let (Endpoint::Http { url, .. } | Endpoint::Sse { url, .. }) = endpoint else {
        return failure;
    };
    if failure.reason != ReasonCode::AuthRequired || credentials(endpoint) != Credentials::None {
        return failure;
    }
    let Ok(base) = url::Url::parse(url) else {
        return failure;
    };
    let Ok(client) = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
    else {
        return failure;
    };
    let path = base.path().trim_end_matches('/').to_owned();
    for suffix in [path.as_str(), ""] {
        let Ok(probe) = base.join(&format!("/.well-known/oauth-protected-resource{suffix}")) else {
            continue;
        };
        let answer = tokio::time::timeout_at(deadline, async {
            let response = client.get(probe).send().await.ok()?;
            if !response.status().is_success() {
                return None;
            }
            // Metadata is a small document: a larger body is not it.
            let mut body = Vec::new();
            let mut response = response;
            while let Some(chunk) = response.chunk().await.ok()? {
                body.extend_from_slice(&chunk);
                if body.len() > 64 * 1024 {
                    return None;
                }
            }
            let body: serde_json::Value = serde_json::from_slice(&body).ok()?;
            Some(body.get("authorization_servers").is_some())
        })
        .await;
        if let Ok(Some(true)) = answer {
            return for_auth(401, Some("resource_metadata"), Credentials::None);
        }
    }
    failure
}

/// The reason for an HTTP status that ends a check, with what to check.
pub(super) fn for_status(code: u16, sent: Credentials) -> Failure {
    let reason = match code {
        401 | 403 => return for_auth(code, None, sent),
        404 => ReasonCode::EndpointNotFound,
        405 => ReasonCode::MethodNotAllowed,
        300..=399 => ReasonCode::Redirected,
        500..=599 => ReasonCode::ServerError,
        _ => ReasonCode::ProtocolError,
    };
    with_hint(reason, format!("the server answered HTTP {code}"))
}

/// A failure whose summary ends with what to check (`display::reason_hint`).
pub(super) fn with_hint(reason: ReasonCode, what: String) -> Failure {
    let summary = match tether_words::display::reason_hint(&reason) {
        Some(hint) => format!("{what}: {hint}"),
        None => what,
    };
    Failure::new(reason, summary)
}

/// The first 3xx–5xx status an error chain names (`HTTP NNN`, `status: NNN`
/// or `status code NNN`), when there is one.
fn status_in(text: &str) -> Option<u16> {
    ["HTTP ", "status: ", "status code "]
        .iter()
        .flat_map(|prefix| {
            text.match_indices(prefix)
                .filter_map(|(i, m)| text.get(i + m.len()..i + m.len() + 3))
        })
        .filter(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|digits| digits.parse::<u16>().ok())
        .find(|code| (300..600).contains(code))
}

/// Classifies a failed handshake in either era: a 401/403 with its
/// challenge, an HTTP status anywhere in the error chain, a server that
/// refused both `server/discover` and `initialize` (it speaks neither
/// era), or the network-side cause.
pub(super) fn classify_handshake(
    error: &rmcp::service::ClientInitializeError,
    sent: Credentials,
) -> Failure {
    // The chain (Debug) holds what Display leaves out; it is only searched,
    // never shown.
    let chain = format!("{error:?}");
    if let Some(challenge) = error.auth_challenge() {
        let code = if chain.contains("InsufficientScope") {
            403
        } else {
            401
        };
        return for_auth(code, Some(challenge), sent);
    }
    if let Some(code) = status_in(&chain) {
        return for_status(code, sent);
    }
    if is_tls_failure(&chain) {
        return with_hint(ReasonCode::TlsFailed, "the TLS handshake failed".into());
    }
    if let rmcp::service::ClientInitializeError::LegacyFallbackFailed { .. } = error
        && (chain.contains("JsonRpcError") || chain.contains("ErrorData"))
    {
        return with_hint(ReasonCode::NoCommonProtocol, "no common protocol".into());
    }
    let mut failure = classify_network("the handshake", &chain, sent);
    failure.discover_misanswered = matches!(
        error,
        rmcp::service::ClientInitializeError::ExpectedInitResult(Some(_))
    );
    failure
}

/// Whether an error chain is a failed TLS handshake (rustls' words for a bad
/// certificate, or for a peer that does not speak TLS at all).
pub(super) fn is_tls_failure(chain: &str) -> bool {
    [
        "InvalidCertificate",
        "UnknownIssuer",
        "NotValidForName",
        "Expired",
        "InvalidContentType",
        "CorruptMessage",
        "AlertReceived",
        "HandshakeFailure",
        "PeerIncompatible",
        "certificate",
    ]
    .iter()
    .any(|word| chain.contains(word))
}

/// Maps a network-side error (`chain`, only searched) during `step` to a
/// reason and a sentence of Tether's own.
pub(super) fn classify_network(step: &str, chain: &str, sent: Credentials) -> Failure {
    let lower = chain.to_ascii_lowercase();
    if lower.contains("auth required") || lower.contains("unauthorized") {
        return for_auth(401, None, sent);
    }
    if lower.contains("connection refused")
        || lower.contains("connect error")
        || lower.contains("tcp connect")
    {
        return Failure::new(
            ReasonCode::ConnectionRefused,
            format!("{step} could not connect: nothing accepts connections there any more"),
        );
    }
    if lower.contains("timed out") || lower.contains("timeout") {
        return Failure::new(ReasonCode::Timeout, format!("{step} timed out"));
    }
    if lower.contains("closed") || lower.contains("eof") || lower.contains("reset") {
        return Failure::new(
            ReasonCode::ProtocolError,
            format!("{step} failed: the server closed the connection before it answered"),
        );
    }
    Failure::new(
        ReasonCode::ProtocolError,
        format!("{step} failed: the server's answer is not one MCP allows there"),
    )
}

/// Why a stdio server's command did not start, said without its path
/// (the command by its basename): a `cwd` that does not exist, a path
/// where no file is, a bare name on no folder of PATH, a file whose `#!`
/// interpreter is missing, or one that is not executable.
pub(super) fn for_spawn(
    error: &tether_process::SpawnError,
    command: &str,
    cwd: Option<&Path>,
    path: Option<&std::ffi::OsStr>,
) -> Failure {
    let shown = tether_core::sanitize::command_target(command);
    if let Some(dir) = cwd
        && !dir.is_dir()
    {
        return Failure::new(
            ReasonCode::CwdNotFound,
            format!(
                "`{shown}` was not started: its working directory (cwd in its entry) does not exist here; create it, or fix or remove cwd"
            ),
        );
    }
    match error {
        tether_process::SpawnError::NotFound { .. } if !command.contains('/') => {
            // A near name on the PATH it ran with is asked about, as
            // `tether inventory` asks.
            let meant = path
                .and_then(|p| tether_inventory::context::near_on_path(command, p))
                .map(|n| tether_core::sanitize::name(&n));
            Failure::new(
                ReasonCode::CommandNotFound,
                tether_words::near::not_on_path(&shown, meant.as_deref()),
            )
        }
        tether_process::SpawnError::NotFound { .. } if Path::new(command).is_file() => {
            Failure::new(
                ReasonCode::ProcessStartFailed,
                format!(
                    "`{shown}` exists, but the interpreter its #! line names was not found: install it, or fix the #! line"
                ),
            )
        }
        tether_process::SpawnError::NotFound { .. } => Failure::new(
            ReasonCode::CommandNotFound,
            format!(
                "the path given for `{shown}` does not exist (a path is not looked up on PATH): fix the path in the configuration"
            ),
        ),
        tether_process::SpawnError::Other { source, .. }
            if source.kind() == std::io::ErrorKind::PermissionDenied =>
        {
            Failure::new(
                ReasonCode::ProcessStartFailed,
                format!(
                    "`{shown}` could not be started: permission denied (is it executable, and its folder readable?)"
                ),
            )
        }
        tether_process::SpawnError::Other { .. } => Failure::new(
            ReasonCode::ProcessStartFailed,
            format!("`{shown}` could not be started: {error}"),
        ),
    }
}

/// A stdio server that exited before it answered: its exit status (or
/// signal) and what it last wrote on stderr.
pub(super) fn for_exit(status: std::process::ExitStatus, last_stderr: &str) -> Failure {
    use std::os::unix::process::ExitStatusExt;
    let how = match (status.code(), status.signal()) {
        (Some(0), _) => {
            "exited with status 0 before it answered (a program that is not an MCP server, or one that needs an argument it did not get)".to_owned()
        }
        (Some(code), _) => format!("exited with status {code} before it answered"),
        (None, Some(signal)) => format!("was killed by signal {signal} before it answered"),
        (None, None) => "exited before it answered".to_owned(),
    };
    let last = if last_stderr.trim().is_empty() {
        "it wrote nothing on stderr".to_owned()
    } else {
        format!("its last stderr line: {}", last_stderr.trim())
    };
    Failure::new(
        ReasonCode::ServerExited,
        format!("the server started, then {how}; {last}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::spec::KeyValue;

    fn http(url: &str, headers: &[(&str, &str)]) -> Endpoint {
        Endpoint::Http {
            url: url.into(),
            headers: headers.iter().map(|(k, v)| KeyValue::new(*k, *v)).collect(),
        }
    }

    #[test]
    fn credentials_sent_empty_or_none_are_told_apart() {
        let url = "http://127.0.0.1:1/mcp";
        for (what, endpoint, expected) in [
            (
                "bearer",
                http(url, &[("Authorization", "Bearer t0k")]),
                Credentials::Sent,
            ),
            (
                "api key",
                http(url, &[("X-API-Key", "k")]),
                Credentials::Sent,
            ),
            (
                "unset var",
                http(url, &[("Authorization", "Bearer ")]),
                Credentials::Empty,
            ),
            (
                "scheme only",
                http(url, &[("Authorization", "Bearer")]),
                Credentials::Empty,
            ),
            (
                "empty key",
                http(url, &[("x-api-key", "")]),
                Credentials::Empty,
            ),
            (
                "no header",
                http(url, &[("Accept", "x")]),
                Credentials::None,
            ),
            (
                "userinfo",
                http("http://u:p@127.0.0.1:1/mcp", &[]),
                Credentials::Sent,
            ),
            (
                "query",
                http("http://127.0.0.1:1/mcp?token=abc", &[]),
                Credentials::Sent,
            ),
        ] {
            assert_eq!(credentials(&endpoint), expected, "{what}");
        }
    }

    #[test]
    fn each_auth_failure_gets_its_own_reason_and_no_challenge_text() {
        let challenge = "Bearer resource_metadata=\"http://x/.well-known/oauth-protected-resource\", secret-ish";
        for (code, challenge, sent, reason) in [
            (
                401,
                Some(challenge),
                Credentials::Sent,
                ReasonCode::AuthRejected,
            ),
            (403, None, Credentials::Sent, ReasonCode::AuthRejected),
            (
                401,
                Some(challenge),
                Credentials::None,
                ReasonCode::OauthRequired,
            ),
            (
                401,
                Some("Bearer realm=\"mcp\""),
                Credentials::None,
                ReasonCode::AuthRequired,
            ),
            (401, None, Credentials::None, ReasonCode::AuthRequired),
            (
                401,
                Some(challenge),
                Credentials::Empty,
                ReasonCode::UnresolvedVariable,
            ),
        ] {
            let failure = for_auth(code, challenge, sent);
            assert_eq!(failure.reason, reason, "{code} {sent:?}");
            assert!(
                !failure.summary.contains("secret-ish"),
                "{}",
                failure.summary
            );
            assert!(!failure.summary.contains("rmcp"), "{}", failure.summary);
        }
    }
}
