//! Helpers for a passthrough plugin's session-record reader
//! ([`PassthroughStrategy::read_record`](tether_core::passthrough::PassthroughStrategy::read_record)):
//! the evidence a record shows, and the servers it names. Pure functions.
//! The host stamps every piece `harness_record`.

use tether_core::capability::CapabilityEvent;
use tether_core::model::{Evidence, Timestamp};
use tether_core::records::{RecordReading, name};
use tether_core::telemetry::NamedServer;
use tether_core::vocab::{EvidenceKind, ReasonCode, ReportedStatus};

mod quotes;
use quotes::Quotes;

/// A call of `server`'s `tool` (its id where the record gives one, so a
/// call written twice counts once), with its outcome where said.
pub fn call(
    server: &str,
    tool: &str,
    id: Option<&str>,
    ok: Option<bool>,
    at: Timestamp,
) -> Evidence {
    let mut call = Evidence::new(EvidenceKind::ToolCallObserved, at).server(server);
    call.tool = Some(tool.to_owned());
    call.connection_id = id.and_then(name);
    call.ok = ok;
    call
}

/// `mcp__SERVER__TOOL` (Claude, Qwen) as its server and tool, each a
/// name ([`split_mcp_double`](crate::telemetry::split_mcp_double), then
/// [`name`]).
pub fn mcp_double(full: &str) -> Option<(String, String)> {
    let (server, tool) = crate::telemetry::split_mcp_double(full)?;
    Some((name(server)?, name(tool)?))
}

/// The outcome of the call `id` (a record that names no tool: its call
/// named it).
pub fn outcome(id: &str, ok: bool, at: Timestamp) -> Option<Evidence> {
    let mut result = Evidence::new(EvidenceKind::ToolCallObserved, at);
    result.connection_id = Some(name(id)?);
    result.ok = Some(ok);
    Some(result)
}

/// A call of `server`'s `tool` that the harness refused before it reached
/// the server, for `reason` (`permission_denied`, `approval_required`,
/// `blocked_by_hook`, `denied_by_policy`): the model made it, and it is no
/// use. With the call's id where the record gives one, so a call whose
/// request and refusal are written apart counts once.
pub fn refused(
    server: &str,
    tool: &str,
    id: Option<&str>,
    reason: ReasonCode,
    at: Timestamp,
) -> Evidence {
    let mut refused = Evidence::new(EvidenceKind::ToolCallRefused, at).server(server);
    refused.tool = Some(tool.to_owned());
    refused.connection_id = id.and_then(name);
    refused.reason_code = Some(reason);
    refused
}

/// The refusal of the call `id`, for `reason` (a record that names no
/// tool: its call named it).
pub fn refusal(id: &str, reason: ReasonCode, at: Timestamp) -> Option<Evidence> {
    let mut refused = Evidence::new(EvidenceKind::ToolCallRefused, at);
    refused.connection_id = Some(name(id)?);
    refused.reason_code = Some(reason);
    Some(refused)
}

/// The failure of the call `id`, for `reason`: `tool_error` (the server
/// answered with `isError`) or `protocol_error` (a JSON-RPC error).
pub fn failed_with(id: &str, reason: ReasonCode, at: Timestamp) -> Option<Evidence> {
    let mut failed = outcome(id, false, at)?;
    failed.reason_code = Some(reason);
    Some(failed)
}

/// A skill as the harness names it: `PLUGIN:SKILL` (split at `sep`) for a
/// plugin's skill, the skill alone otherwise; `None` unless each part is a
/// name.
pub fn skill_named(full: &str, sep: char) -> Option<CapabilityEvent> {
    match full.split_once(sep) {
        Some((plugin, skill)) => {
            Some(CapabilityEvent::skill(&name(skill)?).in_plugin(&name(plugin)?))
        }
        None => Some(CapabilityEvent::skill(&name(full)?)),
    }
}

/// `skill` was offered to the model (a listing it was sent named it).
pub fn skill_listed(skill: CapabilityEvent, at: Timestamp) -> Evidence {
    Evidence::new(EvidenceKind::SkillListed, at).capability(skill)
}

/// The model invoked `skill` (by the call's id where the record gives
/// one: its outcome is that call's result).
pub fn skill_invoked(skill: CapabilityEvent, id: Option<&str>, at: Timestamp) -> Evidence {
    let mut ev = Evidence::new(EvidenceKind::SkillInvoked, at).capability(skill);
    ev.connection_id = id.and_then(name);
    ev
}

/// `hook` ran (once, identified by `id` where the record gives one), and
/// ended as its event says.
pub fn hook_fired(hook: CapabilityEvent, id: Option<&str>, at: Timestamp) -> Evidence {
    let mut ev = Evidence::new(EvidenceKind::HookFired, at).capability(hook);
    ev.connection_id = id.and_then(name);
    ev
}

/// The plugin `plugin` loaded.
pub fn plugin_loaded(plugin: &str, at: Timestamp) -> Option<Evidence> {
    Some(
        Evidence::new(EvidenceKind::PluginLoaded, at)
            .capability(CapabilityEvent::plugin(&name(plugin)?)),
    )
}

/// The plugin `plugin` failed to load; the harness's words give the
/// reason's shape (never their values: see [`load_failure_summary`]).
pub fn plugin_failed(plugin: &str, words: &str, at: Timestamp) -> Option<Evidence> {
    Some(
        Evidence::new(EvidenceKind::PluginFailed, at)
            .capability(CapabilityEvent::plugin(&name(plugin)?))
            .reason(
                ReasonCode::PluginLoadFailed,
                Some(load_failure_summary(words).to_owned()),
            ),
    )
}

/// What a plugin's load failure was, in Tether's words, from the
/// harness's (which hold paths and values, never kept).
pub fn load_failure_summary(words: &str) -> &'static str {
    let lower = words.to_ascii_lowercase();
    if lower.contains("manifest") && (lower.contains("corrupt") || lower.contains("parse")) {
        "its manifest is not valid JSON"
    } else if lower.contains("manifest") {
        "its manifest is missing or invalid"
    } else if lower.contains("not a function") || lower.contains("export") {
        "its export is not a plugin"
    } else if lower.contains("not found")
        || lower.contains("enoent")
        || lower.contains("cannot find")
    {
        "its files are not there"
    } else {
        "the harness could not load it"
    }
}

/// `server`'s `tool` was offered to the model.
pub fn visible(server: &str, tool: &str, at: Timestamp) -> Evidence {
    Evidence::new(EvidenceKind::ToolVisible, at)
        .server(server)
        .tool(tool)
}

/// `server`'s `tool` is held behind the harness's tool search: discoverable,
/// its definition not sent to the model.
pub fn deferred(server: &str, tool: &str, at: Timestamp) -> Evidence {
    Evidence::new(EvidenceKind::ToolDeferred, at)
        .server(server)
        .tool(tool)
}

/// The harness dropped `server`'s `tool` before the model saw it, for
/// `reason` (a schema it does not accept, say), as its own records say.
pub fn withheld(server: &str, tool: &str, reason: ReasonCode, at: Timestamp) -> Evidence {
    let mut withheld = Evidence::new(EvidenceKind::ToolWithheld, at)
        .server(server)
        .tool(tool);
    withheld.reason_code = Some(reason);
    withheld
}

/// The tools a harness offers in place of a server's own while that
/// server waits for a login (Claude Code 2.1.2xx and later, for claude.ai
/// connectors and OAuth servers): not the server's tools.
pub const LOGIN_PSEUDO_TOOLS: [&str; 2] = ["authenticate", "complete_authentication"];

/// Tools offered to the model, as `(server, tool)`: each is visible, except
/// that a server whose only offered tools are [`LOGIN_PSEUDO_TOOLS`] needs
/// auth (a wanted login, however the harness words it), and those are not
/// counted as its tools.
pub fn offered(
    reading: &mut RecordReading,
    tools: impl IntoIterator<Item = (String, String)>,
    at: Timestamp,
) {
    offered_as(reading, tools, at, visible);
}

/// [`offered`], for tools held behind the harness's tool search: each is
/// [`deferred`] (discoverable, not sent), with the same rule for a server
/// offered only [`LOGIN_PSEUDO_TOOLS`].
pub fn offered_deferred(
    reading: &mut RecordReading,
    tools: impl IntoIterator<Item = (String, String)>,
    at: Timestamp,
) {
    offered_as(reading, tools, at, deferred);
}

fn offered_as(
    reading: &mut RecordReading,
    tools: impl IntoIterator<Item = (String, String)>,
    at: Timestamp,
    each: fn(&str, &str, Timestamp) -> Evidence,
) {
    let mut by_server: Vec<(String, Vec<String>)> = Vec::new();
    for (server, tool) in tools {
        match by_server.iter_mut().find(|(s, _)| *s == server) {
            Some((_, list)) => list.push(tool),
            None => by_server.push((server, vec![tool])),
        }
    }
    for (server, list) in by_server {
        if list
            .iter()
            .all(|t| LOGIN_PSEUDO_TOOLS.contains(&t.as_str()))
        {
            push(
                reading,
                crate::telemetry::reported(&server, ReportedStatus::NeedsAuth, at),
            );
        } else {
            for tool in list {
                push(reading, each(&server, &tool, at));
            }
        }
    }
}

/// `server` listed `tool`.
pub fn listed(server: &str, tool: &str, at: Timestamp) -> Evidence {
    let mut listed = Evidence::new(EvidenceKind::ToolsListObserved, at).server(server);
    listed.tool = Some(tool.to_owned());
    listed
}

/// `server` failed to start or connect, as the harness's words `text`
/// say: wanting a login is needs-auth, a missing command is
/// `command_not_found`, anything else the harness's own "failed". The
/// words are read for a reason, never kept.
pub fn failure(server: &str, text: &str, at: Timestamp) -> Evidence {
    use crate::telemetry::{failed, reason_for, reported};
    use tether_core::vocab::ReasonCode;
    match reason_for(text) {
        Some(ReasonCode::AuthRequired) => reported(server, ReportedStatus::NeedsAuth, at),
        Some(reason) => failed(server, reason, None, at),
        None => failed(server, ReasonCode::AgentReportedFailed, None, at),
    }
}

/// The note a server gets where its harness warned it was slow to connect.
pub const SLOW_TO_CONNECT: &str = "the harness warned it was slow to connect";

/// The harness warned that `server` was slow to connect: a pending report
/// whose note says so (no stage is shown, and nothing is failed by it).
pub fn slow(server: &str, at: Timestamp) -> Evidence {
    let mut slow = crate::telemetry::reported(server, ReportedStatus::Pending, at);
    slow.summary = Some(SLOW_TO_CONNECT.to_owned());
    slow
}

/// Gives `server` a row (once).
pub fn name_server(reading: &mut RecordReading, server: &str) {
    if !reading.servers.iter().any(|s| s.name == server) {
        reading
            .servers
            .push(NamedServer::new(server.to_owned(), None));
    }
}

/// Adds `evidence` about its server, which gets a row.
pub fn push(reading: &mut RecordReading, evidence: Evidence) {
    if let Some(server) = evidence.server.clone() {
        name_server(reading, &server);
    }
    reading.evidence.push(evidence);
}

/// A reading with the record's time, or `Ignored` when it says nothing.
pub fn answer(reading: RecordReading) -> tether_core::records::RecordAnswer {
    use tether_core::records::RecordAnswer;
    if reading.evidence.is_empty() && reading.servers.is_empty() && reading.session.is_none() {
        match reading.at {
            Some(at) => RecordAnswer::Dated { at },
            None => RecordAnswer::Ignored,
        }
    } else {
        RecordAnswer::Read(reading)
    }
}

/// Which values [`blank_values`] replaces.
#[derive(Debug, Clone, Copy)]
pub enum Blank<'k> {
    /// Every value of this key.
    Value(&'k str),
    /// This key's values that are strings (an array or object stays).
    String(&'k str),
}

/// [`blank_values`] with its keys read once (a reader keeps one in a
/// `static`).
#[derive(Debug)]
pub struct Blanker {
    /// Each key as written between its quotes, and whether only its
    /// string values are blanked.
    keys: Vec<(Box<[u8]>, bool)>,
    /// The keys of up to 15 bytes, each packed in one number with its
    /// length ([`packed`]: compared without a call).
    packed: Vec<(u128, bool)>,
    /// Whether some key is this long (a string of another length is
    /// passed over without comparing).
    lengths: [bool; 64],
    /// The record's own keys (at its top level) whose string values
    /// [`Blanker::blank_taking`] hands back and drops, packed, by their
    /// place in [`Blanker::taking`]'s list.
    taken: Vec<u128>,
}

/// `key` (at most 15 bytes) as one number: its bytes, then its length in
/// the last byte.
#[inline]
fn packed(key: &[u8]) -> u128 {
    let mut bytes = [0u8; 16];
    bytes[..key.len()].copy_from_slice(key);
    bytes[15] = key.len() as u8;
    u128::from_le_bytes(bytes)
}

impl Blanker {
    /// A blanker for `keys`.
    pub fn new(keys: &[Blank<'_>]) -> Self {
        let mut lengths = [false; 64];
        let keys: Vec<(Box<[u8]>, bool)> = keys
            .iter()
            .map(|blank| {
                let (key, strings_only) = match blank {
                    Blank::Value(key) => (key, false),
                    Blank::String(key) => (key, true),
                };
                if let Some(seen) = lengths.get_mut(key.len()) {
                    *seen = true;
                }
                (key.as_bytes().into(), strings_only)
            })
            .collect();
        let packed = keys
            .iter()
            .filter(|(k, _)| k.len() < 16)
            .map(|(k, strings_only)| (packed(k), *strings_only))
            .collect();
        Blanker {
            keys,
            packed,
            lengths,
            taken: Vec::new(),
        }
    }

    /// The same, also taking the string values of these keys of the
    /// record's own (its top level, each at most 15 bytes; a longer one is
    /// never taken): [`Blanker::blank_taking`] hands each back as written
    /// between its quotes and drops it, with its key, from the record, so
    /// the reader's parse never reads it again. A key whose value is not a
    /// string, or a string with an escape in it, is left in the record
    /// (the reader's parse reads it there).
    pub fn taking(mut self, keys: &[&str]) -> Self {
        self.taken = keys
            .iter()
            .map(|key| {
                if key.len() < 16 {
                    packed(key.as_bytes())
                } else {
                    // No key packs to all ones: its last byte is a length.
                    u128::MAX
                }
            })
            .collect();
        self
    }

    /// Whether the string `key` (between its quotes) is one to blank, and
    /// whether only its string values are (`short`: `key` [`packed`],
    /// where the caller packed it already).
    #[inline]
    fn key(&self, key: &[u8], short: Option<u128>) -> Option<bool> {
        if !self.lengths.get(key.len()).copied().unwrap_or(true) {
            return None;
        }
        if key.len() < 16 {
            let key = short.unwrap_or_else(|| packed(key));
            return self
                .packed
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, strings_only)| *strings_only);
        }
        self.keys
            .iter()
            .find(|(k, _)| **k == *key)
            .map(|(_, strings_only)| *strings_only)
    }

    /// `record` with the values of its keys replaced by `null`: see
    /// [`blank_values`]. One pass from quote to quote (`Quotes`: found a
    /// block of 64 bytes at a time): outside a string every quote opens
    /// one, whose end is the next quote not escaped, and a key to blank is
    /// a string of the keys followed by `:`; its value is skipped whole.
    pub fn blank<'a>(&self, record: &'a str) -> std::borrow::Cow<'a, str> {
        self.blank_taking(record, &mut [])
    }

    /// [`Blanker::blank`], and the values of the keys [`Blanker::taking`]
    /// names, taken out of the record: `taken[i]` is the value of the
    /// `i`th key (the first, where the record gives it twice), or `None`
    /// where it was left in the record. The rest of the record is as
    /// [`Blanker::blank`] leaves it.
    pub fn blank_taking<'a>(
        &self,
        record: &'a str,
        taken: &mut [Option<&'a str>],
    ) -> std::borrow::Cow<'a, str> {
        let bytes = record.as_bytes();
        let taking = !self.taken.is_empty() && !taken.is_empty();
        let mut quotes = Quotes::new(bytes);
        let mut out: Option<String> = None;
        // Copied to `out` up to here.
        let mut from = 0;
        // How deep the next string is (1: the record's own keys), counted
        // over the structure between strings up to `seen`.
        let mut depth = 0usize;
        let mut seen = 0;
        while let Some(open) = quotes.next() {
            if taking {
                depth = deeper(depth, &bytes[seen..open]);
            }
            let Some(close) = quotes.next_unescaped() else {
                // An unterminated string: nothing more to find.
                break;
            };
            let close = close + 1;
            seen = close;
            if bytes.get(close) != Some(&b':') {
                continue;
            }
            let key = &bytes[open + 1..close - 1];
            // One of the record's own keys short enough to be taken: packed
            // once, for both looks.
            let short = (taking && depth == 1 && key.len() < 16).then(|| packed(key));
            if let Some(short) = short
                && let Some(dropped) = self.take(record, short, close + 1, &mut quotes, taken)
            {
                let out = out.get_or_insert_with(|| String::with_capacity(record.len().min(4096)));
                out.push_str(&record[from..open]);
                from = dropped;
                seen = dropped;
                if bytes.get(dropped - 1) != Some(&b',') {
                    // The last of its object: the comma before it goes.
                    let kept = out.trim_end().len();
                    out.truncate(kept);
                    if out.ends_with(',') {
                        out.pop();
                    }
                }
                continue;
            }
            let Some(strings_only) = self.key(key, short) else {
                continue;
            };
            let mut start = close + 1;
            while bytes.get(start).is_some_and(|b| b.is_ascii_whitespace()) {
                start += 1;
            }
            let first = bytes.get(start);
            if strings_only && first != Some(&b'"') {
                continue;
            }
            let end = if first == Some(&b'"') {
                // Its opening quote, then its end.
                quotes.next();
                quotes.next_unescaped().map(|end| end + 1)
            } else {
                value_end(bytes, start, &mut quotes)
            };
            let Some(end) = end else {
                return std::borrow::Cow::Borrowed(record);
            };
            let out = out.get_or_insert_with(|| String::with_capacity(record.len().min(4096)));
            out.push_str(&record[from..start]);
            out.push_str("null");
            from = end;
            seen = end;
        }
        match out {
            None => std::borrow::Cow::Borrowed(record),
            Some(mut out) => {
                out.push_str(&record[from..]);
                std::borrow::Cow::Owned(out)
            }
        }
    }
}

impl Blanker {
    /// Where `key` (of the record's own, [`packed`]; its value at `after`
    /// past `:`) is one [`Blanker::taking`] names with a plain string
    /// value not yet taken: its value put in `taken`, and where the pair
    /// ends (past its comma, where one follows), `quotes` left there.
    fn take<'a>(
        &self,
        record: &'a str,
        key: u128,
        after: usize,
        quotes: &mut Quotes<'_>,
        taken: &mut [Option<&'a str>],
    ) -> Option<usize> {
        let slot = self.taken.iter().position(|k| *k == key)?;
        let bytes = record.as_bytes();
        let mut start = after;
        while bytes.get(start).is_some_and(|b| b.is_ascii_whitespace()) {
            start += 1;
        }
        if bytes.get(start) != Some(&b'"') || taken.get(slot)?.is_some() {
            return None;
        }
        // Its end, looked for on a copy: `quotes` moves only when taken.
        let mut ahead = quotes.clone();
        ahead.next()?;
        let close = ahead.next_unescaped()?;
        let value = record.get(start + 1..close)?;
        if value.as_bytes().contains(&b'\\') {
            return None;
        }
        let mut end = close + 1;
        while bytes.get(end).is_some_and(|b| b.is_ascii_whitespace()) {
            end += 1;
        }
        if bytes.get(end) == Some(&b',') {
            end += 1;
        }
        *taken.get_mut(slot)? = Some(value);
        // Past the value's closing quote: no quote until `end`.
        *quotes = ahead;
        Some(end)
    }
}

/// `depth` after the structure `between` two strings (outside any).
#[inline]
fn deeper(mut depth: usize, between: &[u8]) -> usize {
    for b in between {
        match b {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    depth
}

/// `record` (one JSON object) with the values `keys` name replaced by
/// `null`, wherever they are, without parsing it: what a reader does
/// before it parses a record whose bulk is payload (a tool result's
/// content, a prompt), so the payload is skipped at memory speed and never
/// decoded. A key is found by its quoted name followed by `:`, which in
/// valid JSON only a key can be (a quote inside a string is escaped, and
/// a match whose opening quote is escaped is skipped).
/// Borrowed back unchanged when no key is there, or when the record is not
/// well-formed where a key's value should end (the reader's parse then
/// says what it is). A reader that blanks every record keeps a
/// [`Blanker`].
pub fn blank_values<'a>(record: &'a str, keys: &[Blank<'_>]) -> std::borrow::Cow<'a, str> {
    Blanker::new(keys).blank(record)
}

/// Where the JSON value starting at `start`, not a string, ends (one past
/// its last byte); `quotes` is left at its end.
fn value_end(bytes: &[u8], start: usize, quotes: &mut Quotes<'_>) -> Option<usize> {
    match bytes.get(start)? {
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut at = start;
            loop {
                // The structure up to the next string, then the string.
                let next = quotes.next();
                let stop = next.unwrap_or(bytes.len());
                for (i, b) in bytes[at..stop].iter().enumerate() {
                    match b {
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth = depth.checked_sub(1)?;
                            if depth == 0 {
                                let end = at + i + 1;
                                quotes.seek(end);
                                return Some(end);
                            }
                        }
                        _ => {}
                    }
                }
                next?;
                at = quotes.next_unescaped()? + 1;
            }
        }
        _ => {
            // A number, true, false or null: up to the next , } or ].
            let len = bytes[start..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']'))?;
            quotes.seek(start + len);
            Some(start + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Blank, blank_values};

    #[test]
    fn values_of_the_keys_are_blanked_wherever_they_are() {
        let line = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"a \"quoted\" \\ body","is_error":true}]},"toolUseResult":{"stdout":"x","n":[1,{"a":"}"}]},"uuid":"u"}"#;
        let blanked = blank_values(
            line,
            &[Blank::Value("toolUseResult"), Blank::Value("content")],
        );
        let value: serde_json::Value = serde_json::from_str(&blanked).expect("still JSON");
        assert_eq!(value["toolUseResult"], serde_json::Value::Null);
        assert_eq!(value["message"]["content"], serde_json::Value::Null);
        assert_eq!(value["uuid"], "u");
        // Strings only: the message's content (an array) stays, the
        // result's body (a string) goes.
        let strings = blank_values(line, &[Blank::String("content")]);
        let value: serde_json::Value = serde_json::from_str(&strings).expect("still JSON");
        assert_eq!(value["message"]["content"][0]["tool_use_id"], "t1");
        assert_eq!(
            value["message"]["content"][0]["content"],
            serde_json::Value::Null
        );
        let only_result = blank_values(line, &[Blank::Value("toolUseResult")]);
        let value: serde_json::Value = serde_json::from_str(&only_result).expect("still JSON");
        assert_eq!(value["message"]["content"][0]["tool_use_id"], "t1");
        assert_eq!(value["message"]["content"][0]["is_error"], true);
        assert_eq!(value["toolUseResult"], serde_json::Value::Null);
    }

    #[test]
    fn taken_values_leave_the_record_and_the_rest_is_read_as_before() {
        let blanker = super::Blanker::new(&[Blank::String("text")]).taking(&["sessionId", "cwd"]);
        let line = r#"{"type":"user","sessionId":"s-1","message":{"sessionId":"inner","text":"x"},"cwd":"/w"}"#;
        let mut taken = [None, None];
        let blanked = blanker.blank_taking(line, &mut taken);
        assert_eq!(taken, [Some("s-1"), Some("/w")]);
        assert_eq!(
            blanked,
            r#"{"type":"user","message":{"sessionId":"inner","text":null}}"#
        );
        // Escaped, not a string, or given twice: left in the record.
        let line = r#"{"sessionId":"a\"b","cwd":7,"x":[{"cwd":"no"}]}"#;
        let mut taken = [None, None];
        assert_eq!(blanker.blank_taking(line, &mut taken), line);
        assert_eq!(taken, [None, None]);
        let line = r#"{"cwd":"/a", "cwd":"/b" }"#;
        let mut taken = [None, None];
        assert_eq!(blanker.blank_taking(line, &mut taken), r#"{ "cwd":"/b" }"#);
        assert_eq!(taken, [None, Some("/a")]);
        // Without room to hand values back, nothing is taken.
        let line = r#"{"cwd":"/a"}"#;
        assert_eq!(blanker.blank_taking(line, &mut []), line);
    }

    #[test]
    fn a_key_named_inside_a_string_is_not_a_key() {
        let line = r#"{"text":"he said \"content\": no","content":"x"}"#;
        let blanked = blank_values(line, &[Blank::Value("content")]);
        let value: serde_json::Value = serde_json::from_str(&blanked).expect("JSON");
        assert_eq!(value["text"], r#"he said "content": no"#);
        assert_eq!(value["content"], serde_json::Value::Null);
    }

    #[test]
    fn a_broken_record_is_handed_back_unchanged() {
        for line in [
            r#"{"content":"unterminated"#,
            r#"{"content":{"a":[1,2}"#,
            r#"{"content":"#,
        ] {
            assert_eq!(blank_values(line, &[Blank::Value("content")]), line);
        }
    }
}

#[cfg(test)]
mod properties {
    use super::{Blank, blank_values};
    use proptest::prelude::*;
    use serde_json::Value;

    /// Keys drawn from a small set, so blanked keys occur often, at every depth.
    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("content".to_owned()),
            Just("text".to_owned()),
            Just("id".to_owned()),
            Just("type".to_owned()),
            Just("a\"content".to_owned()),
            Just("\\\"text".to_owned()),
            Just("b\\".to_owned()),
            // A key too long to be packed (16 bytes and more).
            Just("a_key_of_twenty_bytes".to_owned()),
            "[a-z\"\\\\:]{0,6}",
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i32>().prop_map(Value::from),
            // Strings with quotes, backslashes, braces and keys in them.
            "(\\PC|\"|\\\\|\\{|\\}|\\[|\\]|\"content\":){0,12}".prop_map(Value::from),
            // Long ones, across the blanker's 64-byte blocks.
            "([a-z \"\\\\:]|x{63}){40,120}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
                prop::collection::btree_map(key(), inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// The value with every `content` and `a_key_of_twenty_bytes` nulled
    /// and every string `text` nulled.
    fn expected(v: &Value) -> Value {
        match v {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let v = match (k.as_str(), v) {
                            ("content" | "a_key_of_twenty_bytes", _) => Value::Null,
                            ("text", Value::String(_)) => Value::Null,
                            _ => expected(v),
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(expected).collect()),
            other => other.clone(),
        }
    }

    proptest! {
        /// Taking `id` and `type` is handing back the record's own string
        /// values of those keys that need no escape, and dropping them:
        /// the rest is blanked as before, at every depth, and nested keys
        /// of those names stay.
        #[test]
        fn taking_is_dropping_the_record_s_own_plain_strings(
            map in prop::collection::btree_map(key(), value(), 0..6),
            spaced in any::<bool>(),
        ) {
            let record = Value::Object(map.into_iter().collect());
            let text = if spaced {
                serde_json::to_string_pretty(&record).expect("json")
            } else {
                record.to_string()
            };
            let blanker = super::Blanker::new(&[
                Blank::Value("content"),
                Blank::String("text"),
                Blank::Value("a_key_of_twenty_bytes"),
            ])
            .taking(&["id", "type", "a_key_of_twenty_bytes"]);
            let mut taken = [None, None, None];
            let blanked = blanker.blank_taking(&text, &mut taken);
            let back: Value = serde_json::from_str(&blanked).expect("still JSON");
            let mut expected = expected(&record);
            for (slot, key) in ["id", "type"].into_iter().enumerate() {
                let plain = record
                    .get(key)
                    .and_then(Value::as_str)
                    .filter(|v| !Value::from(*v).to_string().contains('\\'));
                prop_assert_eq!(taken[slot], plain);
                if plain.is_some() {
                    expected.as_object_mut().expect("object").remove(key);
                }
            }
            // A key too long to be packed is never taken (it is blanked).
            prop_assert_eq!(taken[2], None);
            prop_assert_eq!(back, expected);
        }

        /// Blanking a valid record is the same as nulling those values in
        /// its parsed form, whatever strings, escapes and nesting it has.
        #[test]
        fn blanking_is_nulling_the_values(map in prop::collection::btree_map(key(), value(), 0..6)) {
            let record = Value::Object(map.into_iter().collect());
            let text = record.to_string();
            let blanked = blank_values(
                &text,
                &[
                    Blank::Value("content"),
                    Blank::String("text"),
                    Blank::Value("a_key_of_twenty_bytes"),
                ],
            );
            let back: Value = serde_json::from_str(&blanked).expect("still JSON");
            prop_assert_eq!(back, expected(&record));
        }
    }
}
