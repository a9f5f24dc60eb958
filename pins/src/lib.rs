//! tether-pins: a tool's definition as hashes, for pinning
//! (`tether_core::pins`).
//!
//! Each part of a tool definition (`title`, `description`, `inputSchema`,
//! `outputSchema`, `annotations`) is hashed on its own: SHA-256, lower-case
//! hex, over the part's canonical JSON ([`canonical_json`]), the method
//! [`PIN_METHOD`] names. So a change names the parts that changed, and key
//! order and whitespace never count as one. Pure: no I/O; the definition's
//! text is read here and never kept.

#![warn(missing_docs)]

use std::fmt::Write as _;

use serde_json::Value;
use sha2::{Digest, Sha256};
pub use tether_core::pins::{DefinitionHashes, PIN_METHOD};

/// The canonical JSON of `value` (RFC 8785-style, the form [`PIN_METHOD`]
/// names): no insignificant whitespace; object members sorted by their
/// keys' UTF-16 code units; strings escaped as ECMAScript's
/// `JSON.stringify` does (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other
/// control characters as `\u00xx`, everything else as itself); numbers as
/// ECMAScript prints a double (`1.0` is `1`, `1e-7` is `1e-7`, `1e21` is
/// `1e+21`), except that integers JSON gave as integers are written
/// exactly.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push('{');
            for (i, (key, item)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, key);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_number(out: &mut String, n: &serde_json::Number) {
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else if let Some(f) = n.as_f64() {
        write_double(out, f);
    } else {
        // Arbitrary precision, were it ever on: its own text.
        let _ = write!(out, "{n}");
    }
}

/// ECMAScript's Number::toString of a finite double (JSON holds no other).
fn write_double(out: &mut String, f: f64) {
    if f == 0.0 || !f.is_finite() {
        out.push('0');
        return;
    }
    if f < 0.0 {
        out.push('-');
    }
    // The shortest digits that read back as `f`, and the exponent.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    let k = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    let n = exp + 1;
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = n - 1;
        let _ = write!(out, "e{}{}", if e < 0 { '-' } else { '+' }, e.abs());
    }
}

/// SHA-256 of `value`'s canonical JSON, lower-case hex.
pub fn hash_value(value: &Value) -> String {
    let digest = Sha256::digest(canonical_json(value).as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

/// Each part of one tool definition (as `tools/list` gives it), hashed; a
/// part that is absent or `null` has no hash.
pub fn definition_hashes(tool: &Value) -> DefinitionHashes {
    let part = |key: &str| tool.get(key).filter(|v| !v.is_null()).map(hash_value);
    DefinitionHashes {
        title: part("title"),
        description: part("description"),
        input_schema: part("inputSchema"),
        output_schema: part("outputSchema"),
        annotations: part("annotations"),
    }
}

/// Every tool of a listing that has a name, with its hashes, in listing
/// order. Definitions without a string `name` are skipped (no tool a
/// client could call).
pub fn hash_listing(tools: &[Value]) -> Vec<(String, DefinitionHashes)> {
    tools
        .iter()
        .filter_map(|tool| {
            let name = tool.get("name")?.as_str()?;
            Some((name.to_owned(), definition_hashes(tool)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_and_drops_whitespace() {
        let a: Value =
            serde_json::from_str(r#"{ "b" : [1, 2.0, {"y":1,"x":"q\n"}], "a": null }"#).unwrap();
        assert_eq!(
            canonical_json(&a),
            r#"{"a":null,"b":[1,2,{"x":"q\n","y":1}]}"#
        );
    }

    #[test]
    fn numbers_print_as_ecmascript_does() {
        // RFC 8785's appendix examples, where serde_json reads them as doubles.
        for (text, want) in [
            ("1e30", "1e+30"),
            ("4.5", "4.5"),
            ("0.002", "0.002"),
            ("1e-7", "1e-7"),
            ("0.000001", "0.000001"),
            ("1e21", "1e+21"),
            ("-0.0", "0"),
            ("-1.5e-9", "-1.5e-9"),
            ("333333333.3333333", "333333333.3333333"),
        ] {
            let v: Value = serde_json::from_str(text).unwrap();
            assert_eq!(canonical_json(&v), want, "{text}");
        }
        // serde_json's reader may be a unit off in the last place on long
        // numbers (its float_roundtrip is off); a double given exactly:
        let v = Value::from(123456789012345680000.0_f64);
        assert_eq!(canonical_json(&v), "123456789012345680000");
    }

    #[test]
    fn keys_sort_by_utf16_code_units() {
        // U+E000 sorts after U+1F600's surrogates (D83D) in UTF-16, before it in UTF-8.
        let v = json!({"\u{e000}": 1, "\u{1f600}": 2});
        assert_eq!(canonical_json(&v), "{\"\u{1f600}\":2,\"\u{e000}\":1}");
    }

    #[test]
    fn each_part_is_hashed_on_its_own() {
        let tool =
            json!({"name": "add", "description": "Adds.", "inputSchema": {"type": "object"}});
        let h = definition_hashes(&tool);
        assert_eq!(
            h.description.as_deref(),
            Some(hash_value(&json!("Adds.")).as_str())
        );
        assert_eq!(h.description.as_ref().map(String::len), Some(64));
        assert!(h.title.is_none() && h.output_schema.is_none() && h.annotations.is_none());
        // The known SHA-256 of `""` (the empty string's JSON, quotes included).
        assert_eq!(
            hash_value(&json!("")),
            "12ae32cb1ec02d01eda3581b127c1fee3b0dc53572ed6baf239721a03d82e126"
        );
    }
}
