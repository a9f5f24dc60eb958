//! tether-guard: the one lock every Tether listener goes through.
//!
//! Four things listen: the observed endpoint (`tether-kandev-endpoint`), the
//! relays (`tether-relay`, its HTTP proxy and its host-side socket), the live
//! status service (`tether-web`), and the telemetry receiver (`tether-collect`). Each
//! takes its secrets, its credential check, its `Host` and `Origin` rules
//! and its body cap from here, so the rules cannot drift apart:
//! - [`Token`] and [`random_hex`]: secrets from the OS RNG, never shown by `Debug`;
//! - [`constant_time_eq`]: comparison whose timing says nothing about the secret;
//! - [`bearer_token`]: the `Bearer` scheme, case-insensitive (RFC 9110);
//! - [`HostPolicy`]: exact `Host` authorities (the DNS-rebinding defence) and
//!   what an `Origin` header may say;
//! - [`BodyCap`]: a hard bound on what a request body may hold;
//! - [`serve`](mod@serve): the one accept loop every HTTP listener runs: header and
//!   body deadlines, and a cap on connections that idle sockets cannot
//!   fill;
//! - [`Authorizer`] and [`Action`]: the host's one say over who sees and acts
//!   on which session, past the token;
//! - [`kept::keep_token`]: a token kept in a private file across starts.
//!
//! A listener renders a [`Refusal`] in its own form (JSON for the web
//! service, a line of text for the relay), but the decision is made here.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`guard/`), each
//! with the test that checks it.

#![warn(missing_docs)]

mod authorize;
mod body;
mod host;
pub mod kept;
mod secret;
pub mod serve;

pub use authorize::{Action, Authorizer, allow_all};
pub use body::BodyCap;
pub use host::{HostPolicy, OriginRule};
pub use secret::{Token, authorization, bearer_token, constant_time_eq, random_hex};
pub use serve::{ConnectionLimits, ConnectionStats, accept, serve};

use axum::http::HeaderMap;
use axum::http::StatusCode;

/// Headers that belong to one hop, not to the message (RFC 9110 §7.6.1,
/// and `Host`): what a listener that passes requests on (the HTTP relay,
/// the model tap) never passes on.
pub const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
];

/// Why the guard refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The `Host` header names no authority the listener answers as.
    BadHost,
    /// An `Origin` header the policy does not admit.
    BadOrigin,
    /// No bearer token, or not the right one.
    Unauthorized,
    /// The body is larger than the listener's cap.
    TooLarge,
    /// The body did not arrive within the listener's deadline.
    TimedOut,
}

impl Refusal {
    /// The status every listener answers this refusal with.
    pub fn status(self) -> StatusCode {
        match self {
            Refusal::BadHost => StatusCode::MISDIRECTED_REQUEST,
            Refusal::BadOrigin => StatusCode::FORBIDDEN,
            Refusal::Unauthorized => StatusCode::UNAUTHORIZED,
            Refusal::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Refusal::TimedOut => StatusCode::REQUEST_TIMEOUT,
        }
    }

    /// A stable code for the refusal (the web service's `error` field).
    pub fn code(self) -> &'static str {
        match self {
            Refusal::BadHost => "bad_host",
            Refusal::BadOrigin => "bad_origin",
            Refusal::Unauthorized => "unauthorized",
            Refusal::TooLarge => "too_large",
            Refusal::TimedOut => "timed_out",
        }
    }
}

/// Checks `Host`, then `Origin`, then the bearer token, in that order: a
/// rebound name learns nothing about the token. `Ok` carries whether the
/// request came cross-origin from an origin the policy admits (CORS).
pub fn check(policy: &HostPolicy, token: &Token, headers: &HeaderMap) -> Result<bool, Refusal> {
    let cors = policy.check(headers)?;
    if token.admits(headers) {
        Ok(cors)
    } else {
        Err(Refusal::Unauthorized)
    }
}

/// Checks `Host`, then `Origin`, then a token carried as the path's first
/// segment (`/TOKEN/rest`), for a listener whose clients send credentials
/// of their own in `Authorization` (a harness sends its model API key, so
/// `tether tap`'s token rides in the base URL it is given). `Ok` gives the
/// rest of the path (`/rest`, or `/`).
pub fn check_path<'a>(
    policy: &HostPolicy,
    token: &Token,
    headers: &HeaderMap,
    path: &'a str,
) -> Result<&'a str, Refusal> {
    policy.check(headers)?;
    let rest = path.strip_prefix('/').unwrap_or(path);
    let (first, rest) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    if token.matches(first) {
        Ok(rest)
    } else {
        Err(Refusal::Unauthorized)
    }
}

#[cfg(test)]
mod path_tests {
    use super::*;

    #[test]
    fn a_path_token_is_the_first_segment_only() {
        let addr: std::net::SocketAddr = "127.0.0.1:4000".parse().expect("addr");
        let policy = HostPolicy::for_addr(addr);
        let token = Token::generate();
        let mut headers = HeaderMap::new();
        headers.insert(
            axum::http::header::HOST,
            "127.0.0.1:4000".parse().expect("host"),
        );
        let path = format!("/{}/v1/messages", token.secret());
        assert_eq!(
            check_path(&policy, &token, &headers, &path),
            Ok("/v1/messages")
        );
        assert_eq!(
            check_path(&policy, &token, &headers, &format!("/{}", token.secret())),
            Ok("/")
        );
        for wrong in ["/v1/messages", "/", "", &format!("/x{}/v1", token.secret())] {
            assert_eq!(
                check_path(&policy, &token, &headers, wrong),
                Err(Refusal::Unauthorized),
                "{wrong}"
            );
        }
        headers.insert(
            axum::http::header::HOST,
            "evil.example:4000".parse().expect("host"),
        );
        assert_eq!(
            check_path(&policy, &token, &headers, &path),
            Err(Refusal::BadHost)
        );
    }
}
