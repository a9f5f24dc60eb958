//! A reader's fast path held to its plain one: a JSON writer that writes
//! one `serde_json::Value` in many ways (every escape a JSON string may
//! use, `\u` escapes and surrogate pairs, keys in any order, compact or
//! pretty separators), so a property test can hand both paths the same
//! record written as any harness might, and the session files in the
//! repository, line by line.
//!
//! Used by each reader's differential (`tests/tests/differential_codex.rs`,
//! `differential_copilot.rs`, `claude_differential.rs`): the writer, the
//! text and wrong-type strategies, the planted secret and its check, and
//! the walk over the repository's session files.

use serde_json::Value;

/// A small deterministic generator of choices (xorshift), so one seed
/// writes one record one way, and a failure shrinks with its seed.
struct Choices(u64);

impl Choices {
    fn next(&mut self) -> u64 {
        let mut x = self.0 | 1;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// How a record is written.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    /// Drives every choice: escapes and key order.
    pub seed: u64,
    /// `", "` and `": "` between items (else none).
    pub pretty: bool,
    /// Escape characters that need none, some of the time.
    pub escape_more: bool,
}

/// `value` written in `style`: valid JSON that parses back to `value`.
pub fn write(value: &Value, style: Style) -> String {
    let mut out = String::new();
    let mut choices = Choices(style.seed ^ 0x9e37_79b9_7f4a_7c15);
    write_value(&mut out, value, style, &mut choices);
    out
}

fn write_value(out: &mut String, value: &Value, style: Style, c: &mut Choices) {
    let (comma, colon) = if style.pretty {
        (", ", ": ")
    } else {
        (",", ":")
    };
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => out.push_str(&value.to_string()),
        Value::String(s) => write_string(out, s, style, c),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(comma);
                }
                write_value(out, item, style, c);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            // Any order: a shuffle driven by the seed.
            for i in (1..keys.len()).rev() {
                let j = c.below(i as u64 + 1) as usize;
                keys.swap(i, j);
            }
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(comma);
                }
                write_string(out, key, style, c);
                out.push_str(colon);
                write_value(out, &map[key], style, c);
            }
            out.push('}');
        }
    }
}

fn write_string(out: &mut String, s: &str, style: Style, c: &mut Choices) {
    out.push('"');
    for ch in s.chars() {
        let must = matches!(ch, '"' | '\\') || (ch as u32) < 0x20;
        let by_choice = style.escape_more && c.below(4) == 0;
        if !must && !by_choice {
            out.push(ch);
            continue;
        }
        let short = match ch {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '/' => Some("\\/"),
            _ => None,
        };
        match short {
            Some(esc) if c.below(2) == 0 => out.push_str(esc),
            _ => {
                let mut units = [0u16; 2];
                for unit in ch.encode_utf16(&mut units) {
                    // Upper or lower case hex, both JSON.
                    if c.below(2) == 0 {
                        out.push_str(&format!("\\u{unit:04x}"));
                    } else {
                        out.push_str(&format!("\\u{unit:04X}"));
                    }
                }
            }
        }
    }
    out.push('"');
}

/// Every `.jsonl` file below `dir` whose path `keep` accepts, sorted.
pub fn files_below(dir: &std::path::Path, keep: &dyn Fn(&str) -> bool) -> Vec<std::path::PathBuf> {
    files_ending(dir, ".jsonl", keep)
}

/// Every file below `dir` whose name ends in `end` and whose path `keep`
/// accepts, sorted.
pub fn files_ending(
    dir: &std::path::Path,
    end: &str,
    keep: &dyn Fn(&str) -> bool,
) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            let shown = path.to_string_lossy();
            if path.is_dir() {
                stack.push(path);
            } else if shown.ends_with(end) && keep(&shown) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A secret planted in generated records: no reading may hold it.
pub const SECRET: &str = "sk-live-PLANTED0123456789abcdefABCDEF";

/// Arbitrary text: every escape, control characters, non-ASCII, astral
/// characters (surrogate pairs when escaped), U+2028, long runs across
/// 64-byte boundaries, and the planted [`SECRET`].
pub fn any_text() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    prop_oneof![
        "[a-z_]{1,12}",
        "\\PC{0,40}",
        "[\"\\\\/\n\r\t\u{0}-\u{1f}é😀\u{2028}]{0,20}",
        (0usize..4, "[a-zA-Z0-9\"\\\\]{60,70}").prop_map(|(n, s)| s.repeat(n + 1)),
        Just(SECRET.to_owned()),
        Just(format!("{SECRET}\"\\\n{SECRET}")),
    ]
}

/// Every non-blank line of `files` read by both paths, which must agree;
/// how many lines were read.
pub fn every_line_reads_the_same<A: PartialEq + std::fmt::Debug>(
    files: &[std::path::PathBuf],
    fast: impl Fn(&str) -> A,
    slow: impl Fn(&str) -> A,
) -> usize {
    let mut lines = 0;
    for path in files {
        let text = std::fs::read_to_string(path).expect("fixture");
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            lines += 1;
            assert_eq!(
                fast(line),
                slow(line),
                "{}:{} reads differently",
                path.display(),
                i + 1
            );
        }
    }
    lines
}

/// How a generated record is written: any seed, compact or pretty, with
/// or without needless escapes.
pub fn any_style() -> impl proptest::strategy::Strategy<Value = Style> {
    use proptest::prelude::*;
    (any::<u64>(), any::<bool>(), any::<bool>()).prop_map(|(seed, pretty, escape_more)| Style {
        seed,
        pretty,
        escape_more,
    })
}

/// Every path to a field of `v` (through objects; a list's objects are
/// reached by a path whose step is the element's index).
pub fn field_paths(v: &Value) -> Vec<Vec<String>> {
    fn walk(v: &Value, here: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        if let Value::Object(map) = v {
            for (k, child) in map {
                here.push(k.clone());
                out.push(here.clone());
                walk(child, here, out);
                here.pop();
            }
        }
    }
    let mut out = Vec::new();
    walk(v, &mut Vec::new(), &mut out);
    out
}

/// `v` with `to` at `path` (a path [`field_paths`] gave).
pub fn set_field(v: &mut Value, path: &[String], to: Value) {
    let Some((last, up)) = path.split_last() else {
        return;
    };
    let mut at = v;
    for k in up {
        at = &mut at[k.as_str()];
    }
    if let Value::Object(map) = at {
        map.insert(last.clone(), to);
    }
}

/// A value of another type than most fields hold: `null`, numbers, a
/// list and an object holding the planted [`SECRET`], a boolean, a string.
pub fn any_wrong_value() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    prop_oneof![
        Just(Value::Null),
        Just(serde_json::json!(7)),
        Just(serde_json::json!(-1.5)),
        Just(serde_json::json!([SECRET])),
        Just(serde_json::json!({"k": SECRET})),
        Just(serde_json::json!(true)),
        Just(serde_json::json!("x")),
    ]
}

/// A record of `records` with one field (any, at any depth, but those
/// whose key is in `spare`: a `type` that decides the record's kind, say)
/// given a value of [`any_wrong_value`]; the record and that value.
pub fn wrong_types(
    records: impl proptest::strategy::Strategy<Value = Value>,
    spare: &'static [&'static str],
) -> impl proptest::strategy::Strategy<Value = (Value, Value)> {
    use proptest::prelude::*;
    (records, any::<prop::sample::Index>(), any_wrong_value()).prop_map(
        move |(mut record, pick, wrong)| {
            let mut all = field_paths(&record);
            all.retain(|p| !p.last().is_some_and(|k| spare.contains(&k.as_str())));
            if !all.is_empty() {
                let path = pick.get(&all).clone();
                set_field(&mut record, &path, wrong.clone());
            }
            (record, wrong)
        },
    )
}

/// No planted [`SECRET`] in what a reader gives, as the host keeps it: a
/// reading whose names are not names (a credential's form) is refused
/// whole by the host; every name and summary passes the sanitizer
/// (`reducer::sanitize_evidence`); a call's id pairs a call and its end
/// and is dropped before anything is kept (`records/src/facts.rs`); the
/// harness's session id is kept as an id (`records::session_id`), so a
/// secret planted there is not looked for here (issue 68's report).
pub fn no_secret(answer: &tether_core::records::RecordAnswer, record: &str, configured: &[String]) {
    use tether_core::records::RecordAnswer;
    use tether_core::sanitize;
    let mut answer = answer.clone();
    if let RecordAnswer::Read(reading) = &mut answer {
        if !reading.names_are_names(configured) {
            return;
        }
        for e in &mut reading.evidence {
            e.connection_id = None;
            e.server = e.server.as_deref().map(sanitize::name);
            e.tool = e.tool.as_deref().map(sanitize::name);
            e.summary = e.summary.as_deref().map(sanitize::summary);
            if let Some(c) = e.capability.as_deref_mut() {
                c.name = sanitize::name(&c.name);
                c.command = c.command.as_deref().map(sanitize::name);
                c.event = c.event.as_deref().map(sanitize::name);
                c.plugin = c.plugin.as_deref().map(sanitize::name);
            }
        }
        for s in &mut reading.servers {
            s.name = sanitize::name(&s.name);
        }
        reading.session = None;
    }
    let shown = format!("{answer:?}");
    assert!(
        !shown.contains("PLANTED"),
        "a planted secret reached {shown} from {record}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_of_writing_parses_back_to_the_value() {
        let v =
            serde_json::json!({"a": "x\"y\\z\n\u{1}é😀/", "b": [1, null, {"c": "d"}], "e": true});
        for seed in 0..200 {
            for pretty in [false, true] {
                let text = write(
                    &v,
                    Style {
                        seed,
                        pretty,
                        escape_more: true,
                    },
                );
                let back: Value = serde_json::from_str(&text).expect(&text);
                assert_eq!(back, v, "{text}");
            }
        }
    }
}
