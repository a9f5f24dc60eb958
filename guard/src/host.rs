//! `Host` and `Origin`: who a listener answers, and which pages may call it.

use std::net::SocketAddr;

use axum::http::HeaderMap;
use axum::http::header::{HOST, ORIGIN};

use crate::Refusal;

/// What an `Origin` header may say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum OriginRule {
    /// No browser has business here: any `Origin` but the listener's own
    /// is refused (the relay, the observed endpoint, the telemetry
    /// receiver). Its own is admitted, as the MCP conformance suite's
    /// DNS-rebinding check expects: such a page would have to come from
    /// this listener, which serves none without its token.
    #[default]
    None,
    /// The listener's own origin (`http://` + one of its hosts), and the
    /// listed origins cross-origin (CORS); the web service.
    SameOrListed(Vec<String>),
}

/// Which `Host` and `Origin` values a listener answers.
#[derive(Debug, Clone, Default)]
pub struct HostPolicy {
    /// Exact `Host` header values (authority, lowercase), e.g. `127.0.0.1:4810`.
    pub hosts: Vec<String>,
    /// What an `Origin` may say.
    pub origins: OriginRule,
}

impl HostPolicy {
    /// The hosts a socket bound at `addr` answers as: the address itself,
    /// and `localhost` when it is a loopback address. No `Origin` is admitted.
    pub fn for_addr(addr: SocketAddr) -> Self {
        let port = addr.port();
        let mut hosts = vec![match addr {
            SocketAddr::V4(v4) => format!("{}:{port}", v4.ip()),
            SocketAddr::V6(v6) => format!("[{}]:{port}", v6.ip()),
        }];
        if addr.ip().is_loopback() {
            hosts.push(format!("localhost:{port}"));
        }
        HostPolicy {
            hosts,
            origins: OriginRule::None,
        }
    }

    /// Also answers these exact authorities (lowercased).
    pub fn with_hosts(mut self, extra: impl IntoIterator<Item = String>) -> Self {
        self.hosts
            .extend(extra.into_iter().map(|h| h.trim().to_ascii_lowercase()));
        self
    }

    /// Admits the listener's own origin and these origins cross-origin.
    pub fn with_origins(mut self, cors: Vec<String>) -> Self {
        self.origins = OriginRule::SameOrListed(cors);
        self
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

    /// Whether `origin` is the listener's own (`http://` + one of its hosts).
    pub fn same_origin(&self, origin: &str) -> bool {
        let origin = origin.trim().to_ascii_lowercase();
        origin
            .strip_prefix("http://")
            .is_some_and(|authority| self.hosts.iter().any(|h| *h == authority))
    }

    /// Whether `origin` was listed for CORS.
    pub fn cors_allowed(&self, origin: &str) -> bool {
        match &self.origins {
            OriginRule::None => false,
            OriginRule::SameOrListed(listed) => listed.iter().any(|o| o == origin.trim()),
        }
    }

    /// `Host` first, then `Origin`. `Ok(true)` when the request came from a
    /// listed origin cross-origin (the listener adds CORS headers).
    pub fn check(&self, headers: &HeaderMap) -> Result<bool, Refusal> {
        if !self.host_ok(headers) {
            return Err(Refusal::BadHost);
        }
        let Some(origin) = HeaderMap::get(headers, ORIGIN) else {
            return Ok(false);
        };
        let Ok(origin) = origin.to_str() else {
            return Err(Refusal::BadOrigin);
        };
        if self.same_origin(origin) {
            return Ok(false);
        }
        match &self.origins {
            OriginRule::None => Err(Refusal::BadOrigin),
            OriginRule::SameOrListed(_) if self.cors_allowed(origin) => Ok(true),
            OriginRule::SameOrListed(_) => Err(Refusal::BadOrigin),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderName, HeaderValue};

    fn headers(pairs: &[(HeaderName, &str)]) -> HeaderMap {
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
        let v6 = HostPolicy::for_addr("[::1]:80".parse().expect("addr"));
        assert_eq!(v6.hosts, ["[::1]:80", "localhost:80"]);
    }

    #[test]
    fn without_a_rule_every_origin_but_its_own_is_refused() {
        let policy = HostPolicy::for_addr("127.0.0.1:4810".parse().expect("addr"));
        let host = (HOST, "127.0.0.1:4810");
        assert_eq!(
            policy.check(&headers(std::slice::from_ref(&host))),
            Ok(false)
        );
        for origin in [
            "http://127.0.0.1:4811",
            "https://127.0.0.1:4810",
            "http://localhost:4811",
            "https://evil.example",
            "null",
        ] {
            assert_eq!(
                policy.check(&headers(&[host.clone(), (ORIGIN, origin)])),
                Err(Refusal::BadOrigin),
                "{origin}"
            );
        }
        // Its own origin: a page only this listener could have served.
        for origin in ["http://127.0.0.1:4810", "http://LOCALHOST:4810"] {
            assert_eq!(
                policy.check(&headers(&[host.clone(), (ORIGIN, origin)])),
                Ok(false),
                "{origin}"
            );
        }
        assert_eq!(
            policy.check(&headers(&[(HOST, "evil.example"), (ORIGIN, "null")])),
            Err(Refusal::BadHost),
            "Host is checked first"
        );
    }

    #[test]
    fn same_origin_and_listed_origins_pass_when_asked_for() {
        let policy = HostPolicy::for_addr("127.0.0.1:4810".parse().expect("addr"))
            .with_hosts(["Tether.Local:4810".to_owned()])
            .with_origins(vec!["https://app.example".into()]);
        let host = (HOST, "tether.local:4810");
        assert_eq!(
            policy.check(&headers(std::slice::from_ref(&host))),
            Ok(false)
        );
        assert_eq!(
            policy.check(&headers(&[host.clone(), (ORIGIN, "http://127.0.0.1:4810")])),
            Ok(false)
        );
        assert_eq!(
            policy.check(&headers(&[host.clone(), (ORIGIN, "https://app.example")])),
            Ok(true)
        );
        assert_eq!(
            policy.check(&headers(&[host, (ORIGIN, "https://evil.example")])),
            Err(Refusal::BadOrigin)
        );
    }
}
