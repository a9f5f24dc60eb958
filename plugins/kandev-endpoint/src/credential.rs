//! The per-attempt credential of the observed endpoint: a fresh secret from
//! the OS RNG that only the agent the endpoint was delivered to holds. Every
//! request over streamable HTTP and legacy SSE carries it as
//! `Authorization: Bearer …`; the stdio bridge carries it as its token.
//! Binding a new attempt retires the old credential.
//!
//! Tether's own checks of the endpoint (an endpoint test from the host's
//! diagnostics) present a second secret, the gate's check credential, fixed
//! for the endpoint's life: they are served, but as [`Caller::TetherCheck`],
//! whose contact is never agent evidence.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`plugins/kandev-endpoint/`), each
//! with the test that checks it.
//!
//! `AttemptCredential` (one per attempt, redacted `Debug`) and the `Gate` that
//! admits it, names a retired one stale, and counts refusals (the first four
//! per attempt also become evidence).

use std::collections::VecDeque;
use std::fmt;
use std::sync::RwLock;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use tether_core::vocab::ReasonCode;
use tether_guard::{Token, bearer_token};

/// One attempt's credential: a [`Token`] (256 bits from the OS RNG,
/// through the one guard every listener shares). `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct AttemptCredential(Token);

impl fmt::Debug for AttemptCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AttemptCredential([redacted])")
    }
}

impl AttemptCredential {
    /// A fresh credential.
    pub fn generate() -> Self {
        AttemptCredential(Token::generate())
    }

    /// The secret itself, for the plan's endpoints and the bridge's token.
    pub fn secret(&self) -> &str {
        self.0.secret()
    }

    /// The `Authorization` header value: `Bearer …`.
    pub fn bearer(&self) -> String {
        self.0.bearer()
    }

    /// Whether `presented` is this secret (compared in constant time).
    pub fn matches(&self, presented: &str) -> bool {
        self.0.matches(presented)
    }

    /// Whether an `Authorization` header value carries this secret.
    pub fn matches_header(&self, header: &str) -> bool {
        self.0.matches_header(header)
    }
}

/// Refused contacts recorded as evidence per attempt; later ones are only counted.
const RECORDED_PER_ATTEMPT: u32 = 4;
/// Retired credentials remembered, to name a stale one as such.
const RETIRED_KEPT: usize = 4;

/// Who got past the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// The holder of the current attempt's credential (or anyone, when the
    /// host opted out): its contact is the agent's.
    Agent,
    /// Tether's own check of the endpoint: served, never agent evidence.
    TetherCheck,
}

#[derive(Debug, Default)]
struct GateState {
    current: Option<AttemptCredential>,
    /// The host opted out: every request is admitted, and said to be unauthenticated.
    open: bool,
    retired: VecDeque<AttemptCredential>,
}

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No credential, or one that was never issued.
    Missing,
    /// An earlier attempt's credential.
    Stale,
}

impl Refusal {
    /// The stable reason code.
    pub fn reason_code(self) -> ReasonCode {
        match self {
            Refusal::Missing => ReasonCode::CredentialMissing,
            Refusal::Stale => ReasonCode::CredentialStale,
        }
    }
}

/// Who may speak to the endpoint: the holder of the current attempt's
/// credential, checked before any handler runs, and Tether's own checks.
#[derive(Debug)]
pub struct Gate {
    state: RwLock<GateState>,
    /// What Tether's own checks present (never an agent's).
    check: AttemptCredential,
    refused: AtomicU64,
    recorded: AtomicU32,
}

impl Default for Gate {
    fn default() -> Self {
        Gate {
            state: RwLock::default(),
            check: AttemptCredential::generate(),
            refused: AtomicU64::new(0),
            recorded: AtomicU32::new(0),
        }
    }
}

impl Gate {
    /// The credential Tether's own checks present: admitted whatever the
    /// attempt, as [`Caller::TetherCheck`].
    pub fn check_credential(&self) -> &AttemptCredential {
        &self.check
    }

    fn state(&self) -> std::sync::RwLockReadGuard<'_, GateState> {
        self.state.read().unwrap_or_else(|p| p.into_inner())
    }

    fn rotate(&self, next: Option<AttemptCredential>, open: bool) {
        let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
        if let Some(old) = state.current.take() {
            state.retired.push_front(old);
            state.retired.truncate(RETIRED_KEPT);
        }
        state.current = next;
        state.open = open;
        self.recorded.store(0, Ordering::Relaxed);
    }

    /// Admits only `credential` from now on; the previous one is retired.
    pub fn admit(&self, credential: AttemptCredential) {
        self.rotate(Some(credential), false);
    }

    /// Admits everyone (the host's explicit opt-out, for debugging).
    pub fn open(&self) {
        self.rotate(None, true);
    }

    /// Whether the host opted out of the credential for the current attempt.
    pub fn is_open(&self) -> bool {
        self.state().open
    }

    /// Checks a presented secret (a bearer token or the bridge's token).
    pub fn check(&self, presented: Option<&str>) -> Result<Caller, Refusal> {
        if presented.is_some_and(|p| self.check.matches(p)) {
            return Ok(Caller::TetherCheck);
        }
        let state = self.state();
        if state.open {
            return Ok(Caller::Agent);
        }
        let Some(presented) = presented else {
            return Err(Refusal::Missing);
        };
        if state.current.as_ref().is_some_and(|c| c.matches(presented)) {
            Ok(Caller::Agent)
        } else if state.retired.iter().any(|c| c.matches(presented)) {
            Err(Refusal::Stale)
        } else {
            Err(Refusal::Missing)
        }
    }

    /// Checks an `Authorization` header value.
    pub fn check_header(&self, header: Option<&str>) -> Result<Caller, Refusal> {
        self.check(header.and_then(bearer_token))
    }

    /// Counts a refusal; true when it should also be recorded as evidence
    /// (the first few per attempt, so an intruder cannot flood the timeline).
    pub fn note_refusal(&self) -> bool {
        self.refused.fetch_add(1, Ordering::Relaxed);
        self.recorded.fetch_add(1, Ordering::Relaxed) < RECORDED_PER_ATTEMPT
    }

    /// Requests refused since the endpoint started.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_fresh_hidden_and_checked_exactly() {
        let a = AttemptCredential::generate();
        let b = AttemptCredential::generate();
        assert_ne!(a, b, "fresh per attempt");
        assert_eq!(a.secret().len(), 64);
        assert!(!format!("{a:?}").contains(a.secret()));
        assert!(a.matches_header(&a.bearer()));
        assert!(a.matches_header(&format!("bearer  {}", a.secret())));
        assert!(!a.matches_header(&b.bearer()));
        assert!(
            !a.matches_header(a.secret()),
            "a bare token is not a bearer header"
        );
        assert!(!a.matches_header(&format!("Basic {}", a.secret())));
        assert!(!a.matches(&a.secret()[..63]));
    }

    #[test]
    fn the_gate_admits_the_current_credential_and_names_a_stale_one() {
        let gate = Gate::default();
        let first = AttemptCredential::generate();
        assert_eq!(
            gate.check(Some(first.secret())),
            Err(Refusal::Missing),
            "nothing bound"
        );
        gate.admit(first.clone());
        assert_eq!(gate.check_header(Some(&first.bearer())), Ok(Caller::Agent));
        assert_eq!(
            gate.check_header(Some(&gate.check_credential().bearer())),
            Ok(Caller::TetherCheck)
        );
        assert_ne!(gate.check_credential(), &first);
        assert_eq!(gate.check_header(None), Err(Refusal::Missing));
        assert_eq!(
            gate.check_header(Some("Bearer guess")),
            Err(Refusal::Missing)
        );
        let second = AttemptCredential::generate();
        gate.admit(second.clone());
        assert_eq!(
            gate.check_header(Some(&first.bearer())),
            Err(Refusal::Stale)
        );
        assert_eq!(gate.check(Some(second.secret())), Ok(Caller::Agent));
        gate.open();
        assert_eq!(gate.check(None), Ok(Caller::Agent), "the host opted out");
        assert_eq!(
            gate.check(Some(gate.check_credential().secret())),
            Ok(Caller::TetherCheck),
            "a check stays a check when the gate is open"
        );
        assert!(gate.is_open());
        for n in 0..6 {
            assert_eq!(gate.note_refusal(), n < RECORDED_PER_ATTEMPT);
        }
        assert_eq!(gate.refused(), 6);
    }
}
