//! The locks on the service: the bearer token, the per-session authorizer,
//! the `Host` and `Origin` checks, one-time login codes for the page, and
//! CORS only when configured.
//!
//! The MCP Inspector's CVE-2025-49596 is the failure this module exists to
//! prevent: a local web server that can start processes, reachable from any
//! page the user visits (DNS rebinding, cross-origin requests, no auth).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use tether_guard::{constant_time_eq, random_hex};

/// The host's one authorizer (shared with the diagnostics API): asked for
/// every session the service lists, streams or acts on, after the bearer
/// token was checked; the diagnostics API asks it again inside every action.
pub use tether_guard::{Action, Authorizer};

/// The service's bearer token: 256 bits from the OS RNG, from the guard
/// every listener shares. `Debug` never shows it.
pub type ApiToken = tether_guard::Token;

/// The principal every token holder is (the diagnostics authorizer sees it).
pub const TOKEN_PRINCIPAL: &str = "status-token";

/// Which `Host` and `Origin` values the service answers: the guard's policy,
/// with the service's own origin and any configured CORS origins admitted.
pub use tether_guard::HostPolicy;

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
