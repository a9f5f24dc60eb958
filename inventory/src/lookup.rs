//! Reading one MCP server's configuration from the files people have: the
//! `{"mcpServers": {…}}` JSON, and a TOML `config.toml`'s
//! `[mcp_servers.NAME]` tables.
//!
//! Bounded and explicit: files over 1 MiB are refused, and every error says
//! which file and which server, never a value from it.

use std::path::Path;

use serde_json::Value;
use tether_core::spec::{Endpoint, ServerSpec};
use tether_core::vocab::{ReasonCode, ServerSource};

use crate::dialect::{
    EntryDialect, bearer_env_unset, entry_endpoint, expand_references, parse_json_object,
    parse_toml_object,
};
use crate::root::read_capped;

/// Why a server could not be read from a configuration file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// Why (no content).
        reason: String,
    },
    /// The file is too large.
    #[error("{path} is larger than 1 MiB")]
    TooLarge {
        /// The file.
        path: String,
    },
    /// The file does not parse.
    #[error("{path}: {reason}")]
    Parse {
        /// The file.
        path: String,
        /// The parser's complaint (format, line and column; no content).
        reason: String,
    },
    /// No server of that name.
    #[error("{path} has no MCP server named {name:?}; it has: {known}")]
    NoSuchServer {
        /// The file.
        path: String,
        /// The name asked for.
        name: String,
        /// The names it has.
        known: String,
    },
    /// The entry is malformed.
    #[error("server {name:?} in {path}: {reason}")]
    Invalid {
        /// The file.
        path: String,
        /// The server.
        name: String,
        /// What is wrong.
        reason: String,
    },
}

/// Reads the server `name` from a JSON or TOML (by extension) configuration
/// file, its `${VAR}` references expanded from this process's environment.
pub fn load_server(path: &Path, name: &str) -> Result<Endpoint, ConfigError> {
    load(path, name).map(|(endpoint, _)| endpoint)
}

/// [`load_server`] as a profile server, with the variables its entry
/// references that are not set here ([`ServerSpec::unset_vars`]): its row
/// then names them as the cause.
pub fn load_server_spec(path: &Path, name: &str) -> Result<ServerSpec, ConfigError> {
    let (endpoint, unset) = load(path, name)?;
    Ok(ServerSpec::new(name, ServerSource::Profile, endpoint).with_unset_vars(unset))
}

/// The endpoint, expanded, and the names of the variables it references
/// that are unset.
fn load(path: &Path, name: &str) -> Result<(Endpoint, Vec<String>), ConfigError> {
    let shown = path.display().to_string();
    // The same bounded read as the inventory: 1 MiB, regular files only.
    let text = read_capped(path).map_err(|failure| match failure.reason {
        ReasonCode::FileTooLarge => ConfigError::TooLarge {
            path: shown.clone(),
        },
        _ => ConfigError::Read {
            path: shown.clone(),
            reason: failure.summary,
        },
    })?;
    let is_toml = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"));
    if is_toml {
        toml_server(&text, &shown, name)
    } else {
        json_server(&text, &shown, name)
    }
}

fn invalid(path: &str, name: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        path: path.to_owned(),
        name: name.to_owned(),
        reason: reason.into(),
    }
}

/// The entry called `name`, or an error listing the names there are.
fn pick<'a>(
    servers: &'a serde_json::Map<String, Value>,
    path: &str,
    name: &str,
) -> Result<&'a Value, ConfigError> {
    servers.get(name).ok_or_else(|| {
        let mut known: Vec<&str> = servers.keys().map(String::as_str).collect();
        known.sort_unstable();
        ConfigError::NoSuchServer {
            path: path.to_owned(),
            name: name.to_owned(),
            known: known.join(", "),
        }
    })
}

/// `{"mcpServers": {"name": {command, args, env} | {url|httpUrl, headers, type}}}`,
/// expanded, with the names of the variables it references that are unset.
pub fn json_server(
    text: &str,
    path: &str,
    name: &str,
) -> Result<(Endpoint, Vec<String>), ConfigError> {
    let doc = parse_json_object(text, false).map_err(|reason| ConfigError::Parse {
        path: path.to_owned(),
        reason,
    })?;
    let servers = doc
        .get("mcpServers")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid(path, name, "the file has no \"mcpServers\" object"))?;
    let entry = pick(servers, path, name)?;
    let lookup = |var: &str| std::env::var(var).ok();
    let mut endpoint = entry_endpoint(entry, EntryDialect::McpJson, &lookup)
        .map_err(|reason| invalid(path, name, reason))?;
    let (_, unset) = expand_references(&mut endpoint, EntryDialect::McpJson, &lookup);
    Ok((endpoint, unset))
}

/// A TOML `[mcp_servers.NAME]`: command/args/env, or url with `http_headers`,
/// `env_http_headers` and `bearer_token_env_var` (read from this
/// environment), with the bearer token's variable when it is unset.
pub fn toml_server(
    text: &str,
    path: &str,
    name: &str,
) -> Result<(Endpoint, Vec<String>), ConfigError> {
    let doc = parse_toml_object(text).map_err(|reason| ConfigError::Parse {
        path: path.to_owned(),
        reason,
    })?;
    let servers = doc
        .get("mcp_servers")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid(path, name, "the file has no [mcp_servers] table"))?;
    let entry = pick(servers, path, name)?;
    let lookup = |var: &str| std::env::var(var).ok();
    let endpoint = entry_endpoint(entry, EntryDialect::TomlTable, &lookup)
        .map_err(|reason| invalid(path, name, reason))?;
    let unset = entry
        .as_object()
        .map(|obj| bearer_env_unset(obj, &lookup))
        .unwrap_or_default();
    Ok((endpoint, unset))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::vocab::Transport;

    #[test]
    fn json_shapes_of_claude_cursor_and_gemini() {
        let text = r#"{"mcpServers": {
            "local": {"command": "npx", "args": ["-y", "srv"], "env": {"TOKEN": "s3cret-value"}},
            "remote": {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer x"}},
            "legacy": {"type": "sse", "url": "https://h/sse"},
            "gemini": {"httpUrl": "https://h/mcp"},
            "broken": {"args": []}
        }}"#;
        let get = |n| json_server(text, "f.json", n).map(|(endpoint, _)| endpoint);
        assert_eq!(get("local").expect("local").transport(), Transport::Stdio);
        assert_eq!(get("remote").expect("remote").transport(), Transport::Http);
        assert_eq!(get("legacy").expect("legacy").transport(), Transport::Sse);
        assert_eq!(get("gemini").expect("gemini").transport(), Transport::Http);
        let err = get("broken").expect_err("broken").to_string();
        assert!(err.contains("broken"), "{err}");
        let err = get("nope").expect_err("missing").to_string();
        assert!(
            err.contains("local, remote") || err.contains("broken, gemini"),
            "{err}"
        );
        let err = json_server("{not json", "f.json", "x")
            .expect_err("parse")
            .to_string();
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn codex_toml_shapes() {
        let text = r#"
[mcp_servers.time]
command = "mcp-server-time"
args = ["--local-timezone", "UTC"]
env = { TZ = "UTC" }

[mcp_servers.remote]
url = "http://127.0.0.1:1/mcp"
http_headers = { "X-Key" = "k" }
"#;
        let time = toml_server(text, "config.toml", "time").expect("time").0;
        assert!(matches!(time, Endpoint::Stdio { ref args, .. } if args.len() == 2));
        let remote = toml_server(text, "config.toml", "remote")
            .expect("remote")
            .0;
        assert!(matches!(remote, Endpoint::Http { ref headers, .. } if headers.len() == 1));
        assert!(toml_server("[[", "c.toml", "x").is_err());
    }

    #[test]
    fn unset_variables_are_named_and_set_ones_expanded() {
        // SAFETY-free: read-only lookups of names no test sets.
        let home = std::env::var("HOME").expect("HOME is set in tests");
        let text = r#"{"mcpServers": {
            "gh": {"type": "http", "url": "https://h/mcp",
                   "headers": {"Authorization": "Bearer ${TETHER_TEST_NEVER_SET_TOKEN}"}},
            "local": {"command": "srv", "args": ["${HOME}/x"],
                      "env": {"K": "${TETHER_TEST_NEVER_SET_KEY:-fallback}"}}
        }}"#;
        let (gh, unset) = json_server(text, "f.json", "gh").expect("gh");
        assert_eq!(unset, ["TETHER_TEST_NEVER_SET_TOKEN"]);
        assert!(matches!(gh, Endpoint::Http { .. }));
        let (local, unset) = json_server(text, "f.json", "local").expect("local");
        assert!(
            unset.is_empty(),
            "a default covers an unset variable: {unset:?}"
        );
        let Endpoint::Stdio { args, env, .. } = local else {
            panic!("stdio")
        };
        assert_eq!(args, [format!("{home}/x")]);
        assert_eq!(env[0].value, "fallback");
        let toml = "[mcp_servers.r]\nurl = \"http://127.0.0.1:1/mcp\"\nbearer_token_env_var = \"TETHER_TEST_NEVER_SET_BEARER\"\n";
        let (_, unset) = toml_server(toml, "c.toml", "r").expect("r");
        assert_eq!(unset, ["TETHER_TEST_NEVER_SET_BEARER"]);
    }
}
