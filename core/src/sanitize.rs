//! The sanitizer: everything is reduced here before it is stored, printed or copied.
//!
//! - Network targets become `scheme://host[:port]`: no userinfo, path, query or fragment.
//! - Stdio targets become the command's basename.
//! - Free text (error summaries, client names, tool names) is scrubbed of known
//!   secret values, bearer and vendor tokens, `key=value` secrets, long
//!   base64 runs, URL parts beyond the origin, home-directory user names and
//!   absolute paths, then capped on a UTF-8 boundary.
//!
//! Its invariants are written once, in ARCHITECTURE.md (`core/`), each
//! with the test that checks it.

use std::sync::OnceLock;

use regex::{Captures, Regex};

/// Summaries are capped at this many bytes.
pub const SUMMARY_MAX_BYTES: usize = 256;
/// Identifiers (server, tool and client names) are capped at this many bytes.
pub const NAME_MAX_BYTES: usize = 128;
/// Targets are capped at this many bytes.
pub const TARGET_MAX_BYTES: usize = 200;
/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";
/// Known secret values shorter than this are not matched literally (they would
/// shred ordinary words); patterns still catch them.
pub const MIN_KNOWN_SECRET_LEN: usize = 5;

const ELLIPSIS: &str = "…";

/// The longest prefix of `s` that is at most `max` bytes and ends on a char boundary.
pub fn truncate_utf8(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Caps `s` at `max` bytes, marking a cut with an ellipsis inside the cap.
pub fn cap_with_ellipsis(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let keep = truncate_utf8(s, max.saturating_sub(ELLIPSIS.len()));
    format!("{keep}{ELLIPSIS}")
}

/// Reduces a URL to `scheme://host[:port]`; anything unparseable becomes `invalid-url`.
pub fn network_target(raw: &str) -> String {
    match url::Url::parse(raw.trim()) {
        Ok(url) => origin_of(&url),
        Err(_) => "invalid-url".to_owned(),
    }
}

fn origin_of(url: &url::Url) -> String {
    let scheme = url.scheme();
    // A host name can carry anything; scrub it like text.
    let host = url.host_str().map(scrub_patterns);
    let origin = match (host, url.port()) {
        (Some(host), Some(port)) => format!("{scheme}://{host}:{port}"),
        (Some(host), None) => format!("{scheme}://{host}"),
        (None, _) => format!("{scheme}://"),
    };
    cap_with_ellipsis(&origin, TARGET_MAX_BYTES)
}

/// Reduces a command to its basename, scrubbed and bounded.
pub fn command_target(command: &str) -> String {
    let base = command
        .trim()
        .rsplit(['/', '\\'])
        .find(|part| !part.is_empty())
        .unwrap_or("");
    if base.is_empty() {
        return "unknown-command".to_owned();
    }
    let scrubbed = scrub_patterns(&single_line(base));
    cap_with_ellipsis(&scrubbed, 64)
}

/// A scrubber that also knows literal secret values (env values, header values,
/// arguments, URL parts) taken from one server configuration.
#[derive(Clone, Default)]
pub struct Scrubber {
    /// Longest first, so a secret that contains another is replaced whole.
    known: Vec<String>,
}

impl std::fmt::Debug for Scrubber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scrubber")
            .field("known_secrets", &self.known.len())
            .finish()
    }
}

impl Scrubber {
    /// A scrubber with patterns only.
    pub fn new() -> Self {
        Scrubber::default()
    }

    /// Adds literal secret values; short or blank ones are ignored.
    pub fn with_secrets<I, S>(mut self, secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for s in secrets {
            let s = s.as_ref().trim();
            if s.len() >= MIN_KNOWN_SECRET_LEN && !self.known.iter().any(|k| k == s) {
                self.known.push(s.to_owned());
            }
        }
        self.known.sort_by_key(|k| std::cmp::Reverse(k.len()));
        self
    }

    /// Merges another scrubber's known secrets into this one.
    pub fn merge(self, other: &Scrubber) -> Self {
        self.with_secrets(other.known.iter())
    }

    /// Replaces the known secrets only, leaving the text otherwise exactly
    /// as it was (for raw frames, which must stay valid JSON).
    pub fn redact_known(&self, text: &str) -> String {
        self.redact_owned(text.to_owned())
    }

    fn redact_owned(&self, mut out: String) -> String {
        for secret in &self.known {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
        }
        out
    }

    /// Scrubs free text without capping it.
    pub fn scrub(&self, text: &str) -> String {
        scrub_patterns(&self.redact_owned(single_line(text)))
    }

    /// Scrubs an error summary and caps it at 256 bytes.
    pub fn summary(&self, text: &str) -> String {
        self.capped(text, SUMMARY_MAX_BYTES)
    }

    /// Scrubs an identifier (server, tool or client name) and caps it at 128 bytes.
    pub fn name(&self, text: &str) -> String {
        self.capped(text, NAME_MAX_BYTES)
    }

    fn capped(&self, text: &str, max: usize) -> String {
        if self.is_clean(text, max) {
            // Exactly what the full pass would return, with one allocation.
            return text.to_owned();
        }
        cap_with_ellipsis(self.scrub(text).trim(), max)
    }

    /// True when the full pass would return `text` unchanged: within the
    /// cap, one line with no whitespace or control characters (so nothing to
    /// collapse or trim), no known secret in it, and no pattern matching.
    /// Names repeat on every event; this keeps them to one regex scan and
    /// no intermediate strings.
    fn is_clean(&self, text: &str, max: usize) -> bool {
        text.len() <= max
            && !text.chars().any(|c| c.is_control() || c.is_whitespace())
            && !self.known.iter().any(|k| text.contains(k.as_str()))
            && !patterns().is_match(text)
    }
}

/// An opaque identifier someone else minted (an ACP session id, a connection
/// id): kept readable, but only `[A-Za-z0-9._:-]`, at most 128 bytes; anything
/// else becomes `_`. Identifiers are not scrubbed as secrets, so they stay
/// useful for correlation.
pub fn identifier(text: &str) -> String {
    let cleaned: String = text
        .chars()
        .take(NAME_MAX_BYTES)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    cleaned
}

/// Whether `text` holds a credential of a known form: a vendor token
/// (`sk-…`, `sk_live_…`, `ghp_…`, `github_pat_…`, `xox?-…`, `AKIA…`,
/// `glpat-…`), a JWT, a bearer or basic value, or a `token=…`-style pair.
/// Not the long-random-run rule: a harness's own ids (UUIDs) are such runs.
pub fn has_credential_form(text: &str) -> bool {
    patterns().captures_iter(text).any(|c| {
        c.name("token").is_some() || c.name("bearer_val").is_some() || c.name("kv_val").is_some()
    })
}

/// The longest name taken from a harness's telemetry.
pub const MAX_TELEMETRY_NAME: usize = 128;

/// Whether `s` can be a server's, tool's or code's name as a harness's
/// telemetry gives it: 1 to [`MAX_TELEMETRY_NAME`] bytes of letters, digits
/// and `-_.:@+`. Anything else (a sentence, a path, a payload) is not taken
/// as a name, so telemetry that carries text where a name belongs puts none
/// of it in a row.
pub fn is_name_like(s: &str) -> bool {
    // By bytes: a character outside ASCII is never one of these.
    let allowed =
        |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':' | b'@' | b'+');
    !s.is_empty() && s.len() <= MAX_TELEMETRY_NAME && s.bytes().all(allowed)
}

/// Scrubs and caps an error summary with patterns only.
pub fn summary(text: &str) -> String {
    Scrubber::new().summary(text)
}

/// Scrubs and caps an identifier with patterns only.
pub fn name(text: &str) -> String {
    Scrubber::new().name(text)
}

/// Replaces control characters (ANSI escapes included) and whitespace runs with one space.
fn single_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(4096));
    let mut last_space = false;
    for c in text.chars() {
        if c.is_control() || c.is_whitespace() {
            if !last_space {
                out.push(' ');
                last_space = true;
            }
        } else {
            out.push(c);
            last_space = false;
        }
    }
    out
}

fn patterns() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        // One pass, leftmost-first: earlier alternatives win at the same start,
        // so a URL is reduced before its path could be mistaken for a file path.
        let pattern = concat!(
            r#"(?P<url>\b[A-Za-z][A-Za-z0-9+.\-]{1,15}://[^\s"'<>`]*)"#,
            // A credential glued to a name by `_` has no word boundary
            // before it (`srv__ghp_…`, `x_Bearer …`): the character before
            // it is matched (and kept) instead.
            r#"|(?P<bpre>^|[^A-Za-z0-9])(?P<bearer>(?i:bearer|basic)\s+)(?P<bearer_val>[A-Za-z0-9._~+/=\-]{6,})"#,
            r#"|(?P<tpre>^|[^A-Za-z0-9])(?P<token>(?:sk-[A-Za-z0-9_\-]{6,}|sk_(?:live|test)_[A-Za-z0-9]{6,}|gh[pousr]_[A-Za-z0-9]{8,}|github_pat_[A-Za-z0-9_]{8,}|xox[abpors]-[A-Za-z0-9\-]{6,}|AKIA[0-9A-Z]{12,}|glpat-[A-Za-z0-9_\-]{8,}|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*))"#,
            r#"|(?P<kv_key>\b[A-Za-z0-9_.\-]*(?i:password|passwd|pwd|secret|token|api[_\-]?key|access[_\-]?key|private[_\-]?key|authorization|auth|credentials?|cookie)[A-Za-z0-9_.\-]*["']?\s*[:=]\s*)(?P<kv_val>(?:(?i:bearer|basic|digest|token)\s+)?(?:"[^"]*"?|'[^']*'?|[^\s"',;&)}\]]+))"#,
            r#"|(?P<winpath>\b[A-Za-z]:\\[^\s"'<>|,;]*)"#,
            r#"|(?P<pre>^|[\s"'=(\[,:@])(?P<path>(?:~|/)[^\s"'<>,;)]*)"#,
            r#"|(?P<b64>[A-Za-z0-9+/_=\-]{24,})"#,
        );
        Regex::new(pattern).expect("the scrubber's patterns are valid")
    })
}

/// Applies the pattern scrubbing in one pass.
fn scrub_patterns(text: &str) -> String {
    let re = patterns();
    if !re.is_match(text) {
        return text.to_owned();
    }
    re.replace_all(text, replace_match).into_owned()
}

fn replace_match(caps: &Captures<'_>) -> String {
    if let Some(m) = caps.name("url") {
        return match url::Url::parse(m.as_str()) {
            Ok(url) => origin_of(&url),
            Err(_) => "[url]".to_owned(),
        };
    }
    if let (Some(prefix), Some(_)) = (caps.name("bearer"), caps.name("bearer_val")) {
        let pre = caps.name("bpre").map_or("", |p| p.as_str());
        return format!("{pre}{}{REDACTED}", prefix.as_str());
    }
    if caps.name("token").is_some() {
        let pre = caps.name("tpre").map_or("", |p| p.as_str());
        return format!("{pre}{REDACTED}");
    }
    if let (Some(key), Some(val)) = (caps.name("kv_key"), caps.name("kv_val")) {
        // Already redacted (a second pass over scrubbed text): leave it, so
        // scrubbing is idempotent instead of growing a stray `]`.
        if val.as_str().starts_with("[redacted") {
            return caps
                .get(0)
                .map(|m| m.as_str().to_owned())
                .unwrap_or_default();
        }
        let quote = match val.as_str().chars().last() {
            Some(q @ ('"' | '\'')) => q.to_string(),
            _ => String::new(),
        };
        return format!("{}{quote}{REDACTED}{quote}", key.as_str());
    }
    if let Some(m) = caps.name("winpath") {
        return reduce_path(m.as_str(), '\\');
    }
    if let Some(m) = caps.name("path") {
        let pre = caps.name("pre").map(|p| p.as_str()).unwrap_or("");
        return format!("{pre}{}", reduce_path(m.as_str(), '/'));
    }
    if let Some(m) = caps.name("b64") {
        return scrub_word(m.as_str());
    }
    caps.get(0)
        .map(|m| m.as_str().to_owned())
        .unwrap_or_default()
}

/// Redacts a long run that has the form of a credential; a long honest
/// name (`fetch_the_current_weather_forecast_v2`, `tether-no-such-plugin-4e2`)
/// stays as it is.
fn scrub_word(word: &str) -> String {
    if looks_like_credential(word) {
        REDACTED.to_owned()
    } else {
        word.to_owned()
    }
}

/// Whether a run of 24 or more base64 characters has a credential's form.
/// Never by length and character mix alone: a name is words joined by
/// `_`, `-` or case, and keeps its form. A credential is
/// - a hex run of 32 or more digits (a UUID's included);
/// - 24 or more letters and digits with no separator, in which digits
///   break the letters at least twice before its last four characters
///   (`sk3Jd9…`; a version at the end is a name's);
/// - a stretch between separators with digits inside it three times;
/// - or letters and digits that do not read as words: under 88 % of the
///   letter pairs within its words are pairs English uses, or more than a
///   quarter of its words are single letters not followed by digits
///   (`…aBxK9pQ…` breaks into `a`, `Bx`, `K`, `p`, `Q`…). Measured on
///   random runs of 24 to 48 characters, this misses about one in ten
///   thousand of letters and digits and one in two thousand of base64url;
///   on 50,000 generated honest names it flagged one.
fn looks_like_credential(word: &str) -> bool {
    if word.len() < 24 {
        return false;
    }
    let hex_run = |run: &str| {
        run.bytes().filter(u8::is_ascii_hexdigit).count() >= 32
            && run.bytes().any(|b| b.is_ascii_digit())
    };
    if word
        .split(|c: char| !c.is_ascii_hexdigit() && c != '-')
        .any(hex_run)
    {
        return true;
    }
    let alnum = || word.bytes().filter(u8::is_ascii_alphanumeric);
    let has_digit = alnum().any(|b| b.is_ascii_digit());
    if !has_digit || !alnum().any(|b| b.is_ascii_alphabetic()) {
        return false;
    }
    let segments = || {
        word.split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|s| !s.is_empty())
    };
    let digit_runs = |s: &str| {
        s.split(|c: char| c.is_ascii_alphabetic())
            .filter(|run| !run.is_empty())
            .count()
    };
    // A version's digits at the end (`…V2`, `…4e2`, `…2099`) are a name's.
    if segments().any(|s| {
        (s.len() >= 24 && digit_runs(&s[..s.len() - 4]) >= 2)
            || digit_runs(s.trim_matches(|c: char| c.is_ascii_digit())) >= 3
    }) {
        return true;
    }
    let (mut pieces, mut singles, mut pairs, mut english) = (0usize, 0usize, 0usize, 0usize);
    for segment in segments() {
        for (piece, version) in words_of(segment) {
            pieces += 1;
            // `v2`, `s3`: a letter before digits is a version's or a name's.
            singles += usize::from(piece.len() == 1 && !version);
            for pair in piece.windows(2) {
                pairs += 1;
                english += usize::from(is_english_pair(pair[0], pair[1]));
            }
        }
    }
    english * 100 < pairs * 88 || singles * 4 > pieces
}

/// A segment's words: runs of letters split at digits and at a lower-to-
/// upper case change (`HTTPServer` is `HTTP`, `Server`), each with whether
/// digits follow it.
fn words_of(segment: &str) -> impl Iterator<Item = (&[u8], bool)> {
    let bytes = segment.as_bytes();
    let mut start = 0usize;
    let mut i = 0usize;
    std::iter::from_fn(move || {
        while i <= bytes.len() {
            let at = i;
            i += 1;
            let here = bytes.get(at);
            let before = at.checked_sub(1).and_then(|p| bytes.get(p));
            let boundary = match (before, here) {
                (_, None) => true,
                (_, Some(b)) if b.is_ascii_digit() => true,
                (Some(p), Some(b)) if p.is_ascii_lowercase() && b.is_ascii_uppercase() => true,
                // `HTTPServer`: the last capital of a run starts the next word.
                (Some(p), Some(b)) => {
                    p.is_ascii_uppercase()
                        && b.is_ascii_uppercase()
                        && bytes.get(at + 1).is_some_and(u8::is_ascii_lowercase)
                }
                (None, _) => false,
            };
            if boundary {
                let word = &bytes[start..at];
                start = if here.is_some_and(u8::is_ascii_digit) {
                    at + 1
                } else {
                    at
                };
                if !word.is_empty() {
                    return Some((word, here.is_some_and(u8::is_ascii_digit)));
                }
            }
        }
        None
    })
}

/// Whether English uses the letter pair (either case): 344 pairs, those
/// that occur at least 20 times in this project's own prose or in at least
/// 0.04 % of the letter pairs of Webster's Second's word list, and those of
/// common tool-name words (`update`, `length`, `workflow`, `analyze`).
fn is_english_pair(a: u8, b: u8) -> bool {
    static TABLE: OnceLock<[[bool; 26]; 26]> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table = [[false; 26]; 26];
        for pair in ENGLISH_PAIRS.split_ascii_whitespace() {
            if let [x @ b'a'..=b'z', y @ b'a'..=b'z'] = pair.as_bytes() {
                table[usize::from(x - b'a')][usize::from(y - b'a')] = true;
            }
        }
        table
    });
    let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
    a.is_ascii_lowercase()
        && b.is_ascii_lowercase()
        && table[usize::from(a - b'a')][usize::from(b - b'a')]
}

const ENGLISH_PAIRS: &str = concat!(
    "ab ac ad ae af ag ah ai ak al am an ap ar as at au av aw ax ay az ba bb be bi bl bo ",
    "br bs bu by ca cc ce ch ci ck cl co cp cr cs ct cu cy da db dd de dg di dk dl dm dn ",
    "do dp dr ds du dy ea eb ec ed ee ef eg eh ei el em en eo ep eq er es et eu ev ew ex ",
    "ey fa fe ff fi fl fo fr ft fu ga ge gg gh gi gl gm gn go gr gs gt gu gy ha he hi hl ",
    "hm ho hr ht hu hy ia ib ic id ie if ig ik il im in io ip ir is it iu iv ix iz je ji ",
    "js ju ka ke kf ki kn ks ku la lc ld le lf li ll lm lo lp ls lt lu lv ly ma mb mc md ",
    "me mi ml mm mo mp ms mu my na nb nc nd ne nf ng nh ni nk nl nm nn no np nr ns nt nu ",
    "nv ny oa ob oc od oe of og oi oj ok ol om on oo op or os ot ou ov ow ox oy pa pd pe ",
    "pg ph pi pl po pp pr ps pt pu py ql qu qw ra rb rc rd re rf rg rh ri rk rl rm rn ro ",
    "rp rr rs rt ru rv rw ry sa sc sd se sh si sk sl sm sn so sp sq sr ss st su sw sy ta ",
    "tc td te tg th ti tl to tp tr ts tt tu tw ty ua ub uc ud ue ug ui ul um un up ur us ",
    "ut va ve vi vo wa we wh wi wn wo wr ws xa xc xe xi xp xt ya yc yd ye yl ym yn yo yp ",
    "yr ys yt yw yz za ze zo ",
);

/// `/home/alice/src/app/main.rs` becomes `~/…/main.rs`; `/usr/bin/node` becomes `…/node`.
fn reduce_path(path: &str, sep: char) -> String {
    let trimmed = path.trim_end_matches(sep);
    let parts: Vec<&str> = trimmed.split(sep).filter(|p| !p.is_empty()).collect();
    let (home, rest): (bool, &[&str]) = match parts.as_slice() {
        ["~", rest @ ..] => (true, rest),
        ["home" | "Users", _user, rest @ ..] => (true, rest),
        ["root", rest @ ..] => (true, rest),
        [drive, "Users", _user, rest @ ..] if drive.ends_with(':') => (true, rest),
        [drive, rest @ ..] if drive.ends_with(':') => (false, rest),
        all => (false, all),
    };
    let base = rest.last().map(|b| scrub_word(b)).unwrap_or_default();
    let base = if base.len() > 64 {
        cap_with_ellipsis(&base, 64)
    } else {
        base
    };
    match (home, rest.len()) {
        (true, 0) => "~".to_owned(),
        (true, 1) => format!("~{sep}{base}"),
        (true, _) => format!("~{sep}…{sep}{base}"),
        (false, 0) => sep.to_string(),
        (false, 1) => format!("{sep}{base}"),
        (false, _) => format!("…{sep}{base}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_honest_name_is_a_name() {
        for name in [
            "fetch_the_current_weather_forecast_for_a_given_city_and_country_code_v2",
            "tether-no-such-plugin-4e2",
            "GetCurrentWeatherForecastForCityV2",
            "list_pull_requests_for_repository_2024",
            "S3BucketListObjectsPaginated",
        ] {
            assert_eq!(super::name(name), name);
            assert_eq!(summary(&format!("{name} failed")), format!("{name} failed"));
        }
    }

    #[test]
    fn credential_forms_are_redacted_whatever_name_they_sit_in() {
        for token in [
            "Q7XM4u8dtR_9ftzrGyG2_7s3DahJtsSB",
            "aB3xK9pQz2LmN7vRtY5wHj8s",
            "3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
            "550e8400-e29b-41d4-a716-446655440000",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.c2lnbmF0dXJlX2hlcmU",
            "dGhpcyBpcyBhIHNlY3JldCB0b2tlbg==",
        ] {
            let out = super::name(&format!("tool_{token}"));
            assert!(out.contains(REDACTED), "{token}: {out}");
        }
    }

    #[test]
    fn network_target_keeps_only_the_origin() {
        assert_eq!(
            network_target("https://user:hunter22@example.com:8443/p/a?token=x#f"),
            "https://example.com:8443"
        );
        assert_eq!(
            network_target("http://127.0.0.1:3000/mcp"),
            "http://127.0.0.1:3000"
        );
        assert_eq!(network_target("not a url"), "invalid-url");
        assert_eq!(network_target("HTTP://[::1]:80/x"), "http://[::1]");
    }

    #[test]
    fn command_target_is_the_basename() {
        assert_eq!(
            command_target("/usr/local/bin/mcp-server-time"),
            "mcp-server-time"
        );
        assert_eq!(command_target("C:\\tools\\server.exe"), "server.exe");
        assert_eq!(command_target("npx"), "npx");
        assert_eq!(command_target("   "), "unknown-command");
    }

    #[test]
    fn summaries_lose_tokens_pairs_paths_and_urls() {
        let s = summary(
            "spawn /home/alice/bin/srv failed: Authorization: Bearer abcdef123456 \
             api_key=\"qwerty 123\" ghp_abcdefghijklmnop1234 https://bob:pw@h.example/x?y=z \
             C:\\Users\\carol\\x\\y.txt",
        );
        for leak in [
            "alice",
            "abcdef123456",
            "qwerty",
            "ghp_",
            "bob",
            "pw@",
            "y=z",
            "carol",
        ] {
            assert!(!s.contains(leak), "{leak} leaked in {s}");
        }
        assert!(s.contains("~/…/srv"), "{s}");
        assert!(s.contains("https://h.example"), "{s}");
    }

    #[test]
    fn known_secrets_are_replaced_literally() {
        let scrubber = Scrubber::new().with_secrets(["s3cr3t-value", "ab"]);
        let s = scrubber.summary("server said s3cr3t-value and ab");
        assert_eq!(s, "server said [redacted] and ab");
    }

    #[test]
    fn summary_is_capped_on_a_char_boundary() {
        let s = summary(&"é".repeat(400));
        assert!(s.len() <= SUMMARY_MAX_BYTES);
        assert!(s.ends_with('…'));
    }

    #[test]
    fn control_characters_are_flattened() {
        assert_eq!(summary("a\n\n\x1b[31mb\tc"), "a [31mb c");
    }

    #[test]
    fn identifiers_stay_readable_but_plain() {
        assert_eq!(
            identifier("ses_3a8dFf91aBc0012xYzQ7"),
            "ses_3a8dFf91aBc0012xYzQ7"
        );
        assert_eq!(identifier("a b/c\n\u{1b}[1m"), "a_b_c___1m");
        assert_eq!(identifier(&"x".repeat(500)).len(), NAME_MAX_BYTES);
    }

    #[test]
    fn ordinary_words_survive() {
        let text = "initialize_observed_timeout: connection refused at port 8080";
        assert_eq!(summary(text), text);
    }

    #[test]
    fn scrubbing_twice_is_scrubbing_once() {
        for text in [
            "failed (token=abc123def)",
            "password: hunter2 and api_key=\"k-1\"",
            "auth=[redacted] then more",
        ] {
            let once = Scrubber::new().scrub(text);
            assert_eq!(Scrubber::new().scrub(&once), once, "{text}");
            assert!(!once.contains("]]"), "{once}");
        }
    }
}

#[cfg(test)]
mod glued_secret_tests {
    use super::*;

    /// Secrets glued to a name by `_` (no word boundary) or inside a path
    /// that starts with a variable are still secrets.
    #[test]
    fn secrets_glued_to_names_or_paths_are_redacted() {
        for text in [
            "srv__ghp_abcdefghijklmnop1234",
            "mcp__Bearer_abcdef123456",
            "x_Bearer abcdef123456",
            "$HOME/ghp_abcdefghijklmnop1234/file",
            "$NAME/ghp_abcdefghijklmnop1234/file",
            "key_sk-abcdefghijkl",
            "tool_xoxb-123456-abcdef",
        ] {
            let out = summary(text);
            for secret in [
                "ghp_abcdefghijklmnop1234",
                "abcdef123456",
                "sk-abcdefghijkl",
                "xoxb-123456",
            ] {
                assert!(!out.contains(secret), "{text} → {out}");
            }
        }
    }
}
