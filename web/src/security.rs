//! The locks on the service: the bearer token, the per-session authorizer,
//! the `Host` and `Origin` checks, one-time login codes for the page, and
//! CORS only when configured.
//!
//! The MCP Inspector's CVE-2025-49596 is the failure this module exists to
//! prevent: a local web server that can start processes, reachable from any
//! page the user visits (DNS rebinding, cross-origin requests, no auth).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::HeaderMap;
use axum::http::header::{AUTHORIZATION, HOST, ORIGIN};
use tether_kandev_endpoint::credential::{bearer_token, constant_time_eq, random_hex};

/// What a caller asks to do with a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Read its status, live or not, and its copy-safe diagnostics.
    View,
    /// Run an endpoint test on one of its servers.
    EndpointTest,
    /// Read its live execution's recent output.
    RecentOutput,
}

/// The host's say over who sees and acts on which session. The service
/// asks it for every session it lists, streams or acts on, after the bearer
/// token was checked; the diagnostics API's own authorizer runs again
/// inside every action.
pub trait SessionAuthorizer: Send + Sync {
    /// `Ok(())` to allow; `Err(reason)` to refuse (403, with the reason).
    fn authorize(&self, principal: &str, session_id: &str, action: Action) -> Result<(), String>;
}

impl<F> SessionAuthorizer for F
where
    F: Fn(&str, &str, Action) -> Result<(), String> + Send + Sync,
{
    fn authorize(&self, principal: &str, session_id: &str, action: Action) -> Result<(), String> {
        self(principal, session_id, action)
    }
}

/// The service's bearer token: 256 bits from the OS RNG, as hex. `Debug`
/// never shows it.
#[derive(Clone)]
pub struct ApiToken(String);

impl std::fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiToken(…)")
    }
}

impl ApiToken {
    /// A fresh token.
    pub fn generate() -> Self {
        ApiToken(random_hex(32))
    }

    /// The token itself, to print once or hand to a page.
    pub fn secret(&self) -> &str {
        &self.0
    }

    /// Whether a request's `Authorization` header carries this token.
    pub fn admits(&self, headers: &HeaderMap) -> bool {
        headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(bearer_token)
            .is_some_and(|t| constant_time_eq(t.as_bytes(), self.0.as_bytes()))
    }
}

/// The principal every token holder is (the diagnostics authorizer sees it).
pub const TOKEN_PRINCIPAL: &str = "status-token";

/// Which `Host` and `Origin` values the service answers.
#[derive(Debug, Clone, Default)]
pub struct HostPolicy {
    /// Exact `Host` header values (authority, lowercase), e.g. `127.0.0.1:4810`.
    pub hosts: Vec<String>,
    /// Origins allowed cross-origin (CORS); empty: none.
    pub cors_origins: Vec<String>,
}

impl HostPolicy {
    /// The hosts a socket bound at `addr` answers as: the address itself,
    /// and `localhost` when it is a loopback address.
    pub fn for_addr(addr: std::net::SocketAddr) -> Self {
        let port = addr.port();
        let mut hosts = vec![match addr {
            std::net::SocketAddr::V4(v4) => format!("{}:{port}", v4.ip()),
            std::net::SocketAddr::V6(v6) => format!("[{}]:{port}", v6.ip()),
        }];
        if addr.ip().is_loopback() {
            hosts.push(format!("localhost:{port}"));
        }
        HostPolicy {
            hosts,
            cors_origins: Vec::new(),
        }
    }

    /// Whether the request's `Host` is one of ours (DNS rebinding defence:
    /// a rebound name arrives with its own `Host`).
    pub fn host_ok(&self, headers: &HeaderMap) -> bool {
        headers
            .get(HOST)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|h| {
                let h = h.trim().to_ascii_lowercase();
                self.hosts.contains(&h)
            })
    }

    /// The request's `Origin`, when it has one.
    pub fn origin(headers: &HeaderMap) -> Option<&str> {
        headers.get(ORIGIN).and_then(|v| v.to_str().ok())
    }

    /// Whether `origin` is the service's own (`http://` + one of its hosts).
    pub fn same_origin(&self, origin: &str) -> bool {
        let origin = origin.trim().to_ascii_lowercase();
        origin
            .strip_prefix("http://")
            .is_some_and(|authority| self.hosts.iter().any(|h| *h == authority))
    }

    /// Whether `origin` was configured for CORS.
    pub fn cors_allowed(&self, origin: &str) -> bool {
        self.cors_origins.iter().any(|o| o == origin.trim())
    }
}

/// How long a login code works.
pub const LOGIN_CODE_TTL: Duration = Duration::from_secs(600);
/// Login codes outstanding at once; minting more retires the oldest.
const LOGIN_CODES_KEPT: usize = 16;

/// One-time codes that buy the token from the page itself, so the token
/// never sits in a URL (history, logs, a screen share). A code works once,
/// for [`LOGIN_CODE_TTL`].
#[derive(Default)]
pub struct LoginCodes {
    codes: Mutex<Vec<(String, Instant)>>,
}

impl std::fmt::Debug for LoginCodes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LoginCodes(…)")
    }
}

impl LoginCodes {
    /// A fresh code (128 bits from the OS RNG).
    pub fn mint(&self) -> String {
        let code = random_hex(16);
        let mut codes = self.codes.lock().unwrap_or_else(|p| p.into_inner());
        codes.retain(|(_, at)| at.elapsed() < LOGIN_CODE_TTL);
        if codes.len() >= LOGIN_CODES_KEPT {
            codes.remove(0);
        }
        codes.push((code.clone(), Instant::now()));
        code
    }

    /// Spends `presented` if it is a live code.
    pub fn redeem(&self, presented: &str) -> bool {
        let mut codes = self.codes.lock().unwrap_or_else(|p| p.into_inner());
        codes.retain(|(_, at)| at.elapsed() < LOGIN_CODE_TTL);
        let found = codes
            .iter()
            .position(|(c, _)| constant_time_eq(c.as_bytes(), presented.as_bytes()));
        match found {
            Some(i) => {
                codes.remove(i);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(axum::http::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(k.clone(), HeaderValue::from_str(v).expect("header"));
        }
        h
    }

    #[test]
    fn hosts_are_exact_and_rebinding_names_are_refused() {
        let policy = HostPolicy::for_addr("127.0.0.1:4810".parse().expect("addr"));
        assert!(policy.host_ok(&headers(&[(HOST, "127.0.0.1:4810")])));
        assert!(policy.host_ok(&headers(&[(HOST, "LOCALHOST:4810")])));
        assert!(!policy.host_ok(&headers(&[(HOST, "attacker.example:4810")])));
        assert!(!policy.host_ok(&headers(&[(HOST, "127.0.0.1:9999")])));
        assert!(!policy.host_ok(&HeaderMap::new()));
        assert!(policy.same_origin("http://127.0.0.1:4810"));
        assert!(!policy.same_origin("http://127.0.0.1:4811"));
        assert!(!policy.same_origin("https://127.0.0.1:4810"));
        assert!(!policy.same_origin("null"));
    }

    #[test]
    fn tokens_are_fresh_hidden_and_checked_exactly() {
        let a = ApiToken::generate();
        let b = ApiToken::generate();
        assert_eq!(a.secret().len(), 64);
        assert_ne!(a.secret(), b.secret());
        assert!(!format!("{a:?}").contains(a.secret()));
        let bearer = format!("Bearer {}", a.secret());
        assert!(a.admits(&headers(&[(AUTHORIZATION, &bearer)])));
        assert!(!b.admits(&headers(&[(AUTHORIZATION, &bearer)])));
        let truncated = format!("Bearer {}", &a.secret()[..63]);
        assert!(!a.admits(&headers(&[(AUTHORIZATION, &truncated)])));
        assert!(!a.admits(&HeaderMap::new()));
    }

    #[test]
    fn login_codes_work_once() {
        let codes = LoginCodes::default();
        let code = codes.mint();
        assert!(!codes.redeem("nope"));
        assert!(codes.redeem(&code));
        assert!(!codes.redeem(&code));
        let many: Vec<String> = (0..20).map(|_| codes.mint()).collect();
        assert!(!codes.redeem(&many[0]), "the oldest codes are retired");
        assert!(codes.redeem(&many[19]));
    }
}
