//! Secrets: drawn from the OS RNG, compared in constant time, hidden from `Debug`.

use std::fmt;

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;

/// `bytes` bytes from the OS's cryptographic random source, as lowercase hex.
///
/// # Panics
/// When the OS has no random source: no credential could be trusted then,
/// so nothing may listen.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).expect("the OS random source is unavailable");
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes * 2);
    for b in buf {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 0xf)] as char);
    }
    out
}

/// Compares without an early exit, so timing tells nothing about where two
/// secrets of one length differ. (A length mismatch returns at once: every
/// Tether secret has a fixed, public length.)
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The token of an `Authorization` header value in the `Bearer` scheme. The
/// scheme is matched case-insensitively (RFC 9110 §11.1) and the spaces
/// around the token are ignored; any other scheme, or a bare token, is `None`.
pub fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// A bearer secret: 256 bits from the OS RNG, as 64 hex digits. `Debug`
/// never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(String);

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Token([redacted])")
    }
}

impl Token {
    /// A fresh token.
    pub fn generate() -> Self {
        Token(random_hex(32))
    }

    /// A token kept from an earlier start: `None` unless `secret` has the
    /// form [`generate`](Self::generate) makes (64 lowercase hex digits),
    /// so a file someone else wrote is never taken for one.
    pub fn from_secret(secret: &str) -> Option<Self> {
        let secret = secret.trim();
        (secret.len() == 64
            && secret
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
        .then(|| Token(secret.to_owned()))
    }

    /// The secret itself, to print once, hand to an agent or put in a plan.
    pub fn secret(&self) -> &str {
        &self.0
    }

    /// The `Authorization` header value: `Bearer …`.
    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.0)
    }

    /// Whether `presented` is this token (constant time).
    pub fn matches(&self, presented: &str) -> bool {
        constant_time_eq(presented.as_bytes(), self.0.as_bytes())
    }

    /// Whether an `Authorization` header value carries this token.
    pub fn matches_header(&self, header: &str) -> bool {
        bearer_token(header).is_some_and(|t| self.matches(t))
    }

    /// Whether a request's `Authorization` header carries this token.
    pub fn admits(&self, headers: &HeaderMap) -> bool {
        authorization(headers).is_some_and(|h| self.matches_header(h))
    }
}

/// A request's `Authorization` header, when it is text.
pub fn authorization(headers: &HeaderMap) -> Option<&str> {
    headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn a_kept_token_is_taken_only_in_the_form_tether_writes() {
        let fresh = Token::generate();
        assert_eq!(
            Token::from_secret(&format!("{}\n", fresh.secret())),
            Some(fresh.clone())
        );
        for bad in [
            "",
            "short",
            &fresh.secret().to_uppercase(),
            &format!("{}0", fresh.secret()),
            &"g".repeat(64),
        ] {
            assert!(Token::from_secret(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn tokens_are_fresh_hex_and_hidden() {
        let a = Token::generate();
        let b = Token::generate();
        assert_ne!(a, b);
        assert_eq!(a.secret().len(), 64);
        assert!(
            a.secret()
                .bytes()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
        assert!(!format!("{a:?}").contains(a.secret()));
        assert_eq!(random_hex(16).len(), 32);
    }

    #[test]
    fn bearer_scheme_is_case_insensitive_and_exact_about_the_token() {
        let a = Token::generate();
        assert!(a.matches_header(&a.bearer()));
        assert!(a.matches_header(&format!("bearer  {}", a.secret())));
        assert!(a.matches_header(&format!("BEARER {} ", a.secret())));
        assert!(
            !a.matches_header(a.secret()),
            "a bare token is not a bearer header"
        );
        assert!(!a.matches_header(&format!("Basic {}", a.secret())));
        assert!(!a.matches_header(&format!("Bearer {}", &a.secret()[..63])));
        assert!(!a.matches_header(&Token::generate().bearer()));
        assert_eq!(bearer_token("Bearer "), None);
        assert_eq!(bearer_token(""), None);
    }

    #[test]
    fn admits_reads_the_authorization_header_only() {
        let a = Token::generate();
        let mut h = HeaderMap::new();
        assert!(!a.admits(&h));
        h.insert(
            AUTHORIZATION,
            HeaderValue::from_str(&a.bearer()).expect("header"),
        );
        assert!(a.admits(&h));
    }

    #[test]
    fn comparison_is_exact() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert!(constant_time_eq(b"", b""));
    }
}
