//! Parsing configuration files and reading one server entry in each
//! harness's dialect.
//!
//! JSON, JSONC and TOML parsing, and the one server-entry reader every dialect
//! shares (`entry_endpoint`: mcpServers JSON, Gemini, Codex, OpenCode), with
//! each harness's own reference expansion.

use serde_json::{Map, Value};
use tether_core::spec::{Endpoint, KeyValue};

/// Parses a JSON object; with `jsonc`, comments and trailing commas are allowed.
/// The error names the line and column only.
pub fn parse_json_object(text: &str, jsonc: bool) -> Result<Map<String, Value>, String> {
    let owned;
    let text = if jsonc {
        owned = strip_jsonc(text);
        owned.as_str()
    } else {
        text
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "the top level is {}, not an object",
            json_kind(&other)
        )),
        Err(e) => Err(format!(
            "not valid JSON{}: line {}, column {}",
            if jsonc { "C" } else { "" },
            e.line(),
            e.column()
        )),
    }
}

/// "Did you mean" for a name a configuration gives (the one rule every
/// suggestion in Tether follows), for scanners.
pub use tether_words::near::nearest;

/// The JSON type's name, for error messages.
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Parses a JSON object as `JSON.parse(stripJsonComments(text))` does,
/// which is how Gemini CLI and Qwen Code read their settings: comments are
/// allowed, trailing commas are not. The error names the line and column,
/// and says when a trailing comma is what `JSON.parse` stops at.
pub fn parse_json_commented(text: &str) -> Result<Map<String, Value>, String> {
    let stripped = strip_comments(text);
    match serde_json::from_str::<Value>(&stripped) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "the top level is {}, not an object",
            json_kind(&other)
        )),
        Err(e) => {
            let comma = serde_json::from_str::<Value>(&remove_trailing_commas(&stripped)).is_ok();
            Err(format!(
                "not valid JSON: line {}, column {}{}",
                e.line(),
                e.column(),
                if comma {
                    " (a trailing comma before } or ])"
                } else {
                    ""
                }
            ))
        }
    }
}

/// Removes `//` and `/* */` comments and trailing commas outside strings,
/// keeping line structure so error positions stay right.
fn strip_jsonc(text: &str) -> String {
    remove_trailing_commas(&strip_comments(text))
}

/// Removes `//` and `/* */` comments outside strings, keeping line
/// structure so error positions stay right.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = '\0';
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

fn remove_trailing_commas(text: &str) -> String {
    let bytes: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            out.push(c);
            if c == '\\' && i + 1 < bytes.len() {
                out.push(bytes[i + 1]);
                i += 2;
                continue;
            }
            if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if c == ',' {
            let next = bytes[i + 1..].iter().find(|c| !c.is_whitespace());
            if !matches!(next, Some('}') | Some(']')) {
                out.push(c);
            } else {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// How a dialect spells a server entry: shapes, named for what they hold.
/// Each plugin's scanner says which its harness writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryDialect {
    /// `{"command","args","env","cwd"}` or `{"type","url","headers"}`.
    McpJson,
    /// Like [`McpJson`](Self::McpJson), but a bare `url` is legacy SSE and `httpUrl` is streamable HTTP.
    McpJsonHttpUrl,
    /// A TOML table as JSON: `command`/`args`/`env`/`env_vars`/`cwd`, or
    /// `url` with `http_headers`, `env_http_headers`, `bearer_token_env_var`.
    TomlTable,
    /// `{"type":"local","command":[…],"environment","cwd"}` or `{"type":"remote","url","headers"}`.
    TypedLocalRemote,
}

/// A string-to-string map; non-string values are skipped.
pub fn string_map(value: Option<&Value>) -> Vec<KeyValue> {
    value
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| KeyValue::new(k.clone(), v)))
                .collect()
        })
        .unwrap_or_default()
}

/// A list of strings; non-string items are skipped.
pub fn string_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn expect_type(entry: &Map<String, Value>, key: &str, want: &str) -> Result<(), String> {
    let ok = match (entry.get(key), want) {
        (None, _) | (Some(Value::Null), _) => true,
        (Some(v), "string") => v.is_string(),
        (Some(v), "array") => v.is_array(),
        (Some(v), "object") => v.is_object(),
        (Some(v), "string or array") => v.is_string() || v.is_array(),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "\"{key}\" should be {want}, not {}",
            json_kind(entry.get(key).unwrap_or(&Value::Null))
        ))
    }
}

/// Expands the environment references a harness expands itself, so a
/// `--test` uses what the harness would: `${VAR}` and `${VAR:-default}`
/// (also `${env:VAR}`) for [`EntryDialect::McpJson`], `$VAR` and `${VAR}`
/// for [`EntryDialect::McpJsonHttpUrl`], `{env:VAR}` for
/// [`EntryDialect::TypedLocalRemote`]. An unset variable stays as written. Returns the
/// names referenced, and of those the ones not set, with no default (names
/// are shown; values never are).
pub(crate) fn expand_references(
    endpoint: &mut Endpoint,
    dialect: EntryDialect,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> (Vec<String>, Vec<String>) {
    if dialect == EntryDialect::TomlTable {
        return (Vec::new(), Vec::new());
    }
    let mut names = Vec::new();
    let mut unset = Vec::new();
    let mut expand = |text: &mut String| {
        if text.contains('$') || text.contains("{env:") {
            *text = expand_text(text, dialect, lookup, &mut names, &mut unset);
        }
    };
    match endpoint {
        Endpoint::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            expand(command);
            args.iter_mut().for_each(&mut expand);
            env.iter_mut().for_each(|kv| expand(&mut kv.value));
            if let Some(cwd) = cwd {
                expand(cwd);
            }
        }
        Endpoint::Http { url, headers } | Endpoint::Sse { url, headers } => {
            expand(url);
            headers.iter_mut().for_each(|kv| expand(&mut kv.value));
        }
    }
    for list in [&mut names, &mut unset] {
        list.sort();
        list.dedup();
    }
    (names, unset)
}

/// `text` with the environment references `dialect`'s harness expands
/// itself replaced by `lookup`'s values (an unset one stays as written).
pub fn expand(
    text: &str,
    dialect: EntryDialect,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> String {
    if dialect == EntryDialect::TomlTable {
        return text.to_owned();
    }
    expand_text(text, dialect, lookup, &mut Vec::new(), &mut Vec::new())
}

fn is_var_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

pub(crate) fn expand_text(
    text: &str,
    dialect: EntryDialect,
    lookup: &dyn Fn(&str) -> Option<String>,
    names: &mut Vec<String>,
    unset: &mut Vec<String>,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let (start, open) = match dialect {
            EntryDialect::TypedLocalRemote => match rest.find("{env:") {
                Some(i) => (i, "{env:"),
                None => break,
            },
            _ => match rest.find('$') {
                Some(i) if rest[i..].starts_with("${") => (i, "${"),
                Some(i) if dialect == EntryDialect::McpJsonHttpUrl => (i, "$"),
                Some(i) => {
                    out.push_str(&rest[..=i]);
                    rest = &rest[i + 1..];
                    continue;
                }
                None => break,
            },
        };
        out.push_str(&rest[..start]);
        let after = &rest[start + open.len()..];
        let (body, consumed) = if open == "$" {
            let len = after.find(|c: char| !is_var_char(c)).unwrap_or(after.len());
            (&after[..len], len)
        } else {
            match after.find('}') {
                Some(end) => (&after[..end], end + 1),
                None => ("", 0),
            }
        };
        let (name, default) = match body.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (body, None),
        };
        let name = name.strip_prefix("env:").unwrap_or(name);
        if name.is_empty() || !name.chars().all(is_var_char) || consumed == 0 {
            out.push_str(open);
            rest = after;
            continue;
        }
        names.push(name.to_owned());
        match lookup(name).or_else(|| default.map(str::to_owned)) {
            Some(value) => out.push_str(&value),
            None => {
                unset.push(name.to_owned());
                out.push_str(&rest[start..start + open.len() + consumed]);
            }
        }
        rest = &after[consumed..];
    }
    out.push_str(rest);
    out
}

/// Replaces `placeholder` (for example `${CLAUDE_PLUGIN_ROOT}` or
/// `${extensionPath}`) in every string of a JSON value, before the entry is
/// read, so a harness's own placeholders are not taken for environment
/// references.
pub fn substitute(value: &Value, placeholder: &str, with: &str) -> Value {
    match value {
        Value::String(s) if s.contains(placeholder) => Value::String(s.replace(placeholder, with)),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| substitute(v, placeholder, with))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substitute(v, placeholder, with)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Variables a [`EntryDialect::TomlTable`] entry needs that `lookup` does
/// not have: its `bearer_token_env_var` (the harness refuses the server
/// without it). Names only.
pub fn bearer_env_unset(
    entry: &Map<String, Value>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Vec<String> {
    entry
        .get("bearer_token_env_var")
        .and_then(Value::as_str)
        .filter(|var| lookup(var).is_none())
        .map(|var| vec![var.to_owned()])
        .unwrap_or_default()
}

/// Reads one server entry into an [`Endpoint`]. `lookup` resolves environment
/// variables a dialect forwards by name (`env_vars`), so the in-memory endpoint can
/// be tested; nothing from it is ever shown. The error says what is wrong, never
/// a value.
pub fn entry_endpoint(
    entry: &Value,
    dialect: EntryDialect,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Endpoint, String> {
    let Some(obj) = entry.as_object() else {
        return Err(format!("the entry is {}, not an object", json_kind(entry)));
    };
    let kind = obj.get("type").and_then(Value::as_str).unwrap_or("");
    if dialect == EntryDialect::TypedLocalRemote {
        return typed_endpoint(obj, kind);
    }
    expect_type(obj, "command", "string")?;
    expect_type(obj, "args", "array")?;
    expect_type(obj, "env", "object")?;
    expect_type(obj, "url", "string")?;
    expect_type(obj, "headers", "object")?;
    if let Some(command) = obj.get("command").and_then(Value::as_str) {
        let mut env = string_map(obj.get("env"));
        if dialect == EntryDialect::TomlTable {
            for name in string_list(obj.get("env_vars")) {
                if let Some(value) = lookup(&name) {
                    env.push(KeyValue::new(name, value));
                }
            }
        }
        return Ok(Endpoint::Stdio {
            command: command.to_owned(),
            args: string_list(obj.get("args")),
            env,
            cwd: obj.get("cwd").and_then(Value::as_str).map(str::to_owned),
        });
    }
    let mut headers = string_map(obj.get(if dialect == EntryDialect::TomlTable {
        "http_headers"
    } else {
        "headers"
    }));
    if dialect == EntryDialect::TomlTable {
        for kv in string_map(obj.get("env_http_headers")) {
            if let Some(value) = lookup(&kv.value) {
                headers.push(KeyValue::new(kv.name, value));
            }
        }
        if let Some(var) = obj.get("bearer_token_env_var").and_then(Value::as_str)
            && let Some(token) = lookup(var)
        {
            headers.push(KeyValue::new("Authorization", format!("Bearer {token}")));
        }
    }
    if let Some(url) = obj.get("httpUrl").and_then(Value::as_str) {
        return Ok(Endpoint::Http {
            url: url.to_owned(),
            headers,
        });
    }
    let url = obj
        .get("url")
        .or_else(|| obj.get("serverUrl"))
        .and_then(Value::as_str);
    if let Some(url) = url {
        let sse = match kind {
            "sse" => true,
            "http" | "streamable-http" | "streamableHttp" => false,
            _ => dialect == EntryDialect::McpJsonHttpUrl,
        };
        let url = url.to_owned();
        return Ok(if sse {
            Endpoint::Sse { url, headers }
        } else {
            Endpoint::Http { url, headers }
        });
    }
    Err("neither \"command\" nor \"url\" is set".into())
}

fn typed_endpoint(obj: &Map<String, Value>, kind: &str) -> Result<Endpoint, String> {
    match kind {
        "local" => {
            expect_type(obj, "command", "string or array")?;
            let mut parts = match obj.get("command") {
                Some(Value::String(s)) => vec![s.clone()],
                other => string_list(other),
            }
            .into_iter();
            let command = parts
                .next()
                .ok_or("a local server needs a non-empty \"command\"")?;
            // `cwd` (OpenCode 1.18.33's McpLocalConfig: "Working
            // directory for the MCP server process. Relative paths
            // resolve from the workspace directory.").
            Ok(Endpoint::Stdio {
                command,
                args: parts.collect(),
                env: string_map(obj.get("environment")),
                cwd: obj.get("cwd").and_then(Value::as_str).map(str::to_owned),
            })
        }
        "remote" => {
            expect_type(obj, "url", "string")?;
            let url = obj
                .get("url")
                .and_then(Value::as_str)
                .ok_or("a remote server needs a \"url\"")?;
            Ok(Endpoint::Http {
                url: url.to_owned(),
                headers: string_map(obj.get("headers")),
            })
        }
        "" => Err("\"type\" is missing (local or remote)".into()),
        _ => Err("\"type\" is neither local nor remote".into()),
    }
}

/// Parses a TOML configuration into JSON values; the error names the line only, never
/// content. Also used by `tether endpoint-test --config` for a `config.toml`.
pub fn parse_toml_object(text: &str) -> Result<Map<String, Value>, String> {
    let table = toml::from_str::<toml::Table>(text).map_err(|e| {
        let at = e.span().map(|s| {
            let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
            format!(" at line {line}")
        });
        format!("not valid TOML{}", at.unwrap_or_default())
    })?;
    match serde_json::to_value(table).map_err(|e| e.to_string())? {
        Value::Object(map) => Ok(map),
        _ => Err("the top level is not a table".into()),
    }
}
