//! Helpers for [`PassthroughStrategy::materialize`](crate::PassthroughStrategy)
//! and `read_output`, shared by every passthrough plugin:
//!
//! - [`EnvRefs`] moves secret-bearing values (env values, header values, a
//!   stdio command and its arguments, URLs with userinfo or a query) out of
//!   files and arguments: each becomes a reference in the CLI's own syntax
//!   (`${VAR}`, `$VAR`, `{env:VAR}`), and its value goes into
//!   [`Materialized::env`](crate::Materialized).
//! - [`deliver_first_endpoint`] and [`EVERY_TRANSPORT`]: the decision and
//!   capabilities of a CLI that takes every transport from its config.
//! - [`stream_json_init_reports`] reads the `system/init` line that
//!   CLIs of the stream-json kind print with
//!   `--output-format stream-json`: each server's status and the count of
//!   its `mcp__<server>__<tool>` tools the harness holds (its own list, which
//!   shows `current_thread`, never what the model was sent).

use serde_json::{Map, Value};
use tether_core::model::{Evidence, Timestamp};
use tether_core::vocab::{EvidenceKind, ReasonCode, ReportedStatus};
use tether_core::{AgentCapabilities, Decision, Delivery, Endpoint, KeyValue, ServerSpec};

/// What a CLI that reads stdio, streamable HTTP and SSE servers alike from
/// its configuration can take (no `session/load`: a passthrough process).
pub const EVERY_TRANSPORT: AgentCapabilities =
    AgentCapabilities::new(Some(true), Some(true), Some(false));

/// The decision of such a CLI: the server's first endpoint, delivered
/// through a configuration file; a server with none is
/// `filtered/transport_unsupported`.
pub fn deliver_first_endpoint(server: &ServerSpec) -> Decision {
    match server.endpoints.first().map(Endpoint::transport) {
        Some(transport) => Decision::Deliver {
            transport,
            via: Delivery::ConfigFile,
        },
        None => Decision::filter(ReasonCode::TransportUnsupported),
    }
}

/// How a CLI spells a reference to an environment variable in its config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefStyle {
    /// `${VAR}`.
    Braces,
    /// `$VAR`.
    Dollar,
    /// `{env:VAR}`.
    EnvColon,
    /// `${env:VAR}`.
    DollarEnvColon,
    /// The bare variable name, for CLIs that take names (an `env_vars` list).
    Name,
}

/// A harness's dialect, declared once by its plugin: the shape its
/// configuration gives a server entry (what its scanner reads) and how Tether
/// spells a reference to a variable in the files it writes for it (which the
/// harness expands itself). One value serves the materializer
/// ([`Dialect::env_refs`]) and the scanner ([`Dialect::entry`]), so the two
/// cannot drift apart; [`Dialect::round_trips`] checks that they agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    /// The shape of a server entry.
    pub entry: tether_inventory::EntryDialect,
    /// How a reference to a variable is spelled.
    pub refs: RefStyle,
}

impl Dialect {
    /// A dialect of entries shaped `entry`, with references spelled `refs`.
    pub const fn new(entry: tether_inventory::EntryDialect, refs: RefStyle) -> Self {
        Dialect { entry, refs }
    }

    /// An empty set of variables whose references this dialect spells.
    pub fn env_refs(self) -> EnvRefs {
        EnvRefs::new(self.refs)
    }

    /// Whether what Tether writes in this dialect reads back as written: a
    /// value moved into a variable and referenced in the dialect's spelling
    /// is the value again once the entry's own expansion runs (for
    /// [`RefStyle::Name`], the entry shape must forward variables by name).
    pub fn round_trips(self) -> bool {
        let value = "tether-dialect-check/value 1";
        let mut refs = self.env_refs();
        let reference = refs.hide(value);
        let env = refs.into_env();
        let lookup = |name: &str| {
            env.iter()
                .find(|kv| kv.name == name)
                .map(|kv| kv.value.clone())
        };
        match self.refs {
            RefStyle::Name => {
                self.entry == tether_inventory::EntryDialect::TomlTable
                    && lookup(&reference).as_deref() == Some(value)
            }
            _ => tether_inventory::expand(&reference, self.entry, &lookup) == value,
        }
    }
}

/// Secret-bearing values moved into the environment, in order: the n-th
/// value is `TETHER_MCP_n`.
#[derive(Debug, Clone)]
pub struct EnvRefs {
    style: RefStyle,
    env: Vec<KeyValue>,
}

impl EnvRefs {
    /// An empty set whose references are spelled in `style`.
    pub fn new(style: RefStyle) -> Self {
        EnvRefs {
            style,
            env: Vec::new(),
        }
    }

    /// Moves `value` into a fresh variable; returns the reference.
    pub fn hide(&mut self, value: &str) -> String {
        let name = self.var(value);
        match self.style {
            RefStyle::Braces => format!("${{{name}}}"),
            RefStyle::Dollar => format!("${name}"),
            RefStyle::EnvColon => format!("{{env:{name}}}"),
            RefStyle::DollarEnvColon => format!("${{env:{name}}}"),
            RefStyle::Name => name,
        }
    }

    /// Moves `value` into a fresh variable; returns the variable's name.
    pub fn var(&mut self, value: &str) -> String {
        let name = format!("TETHER_MCP_{}", self.env.len() + 1);
        self.env.push(KeyValue::new(name.clone(), value));
        name
    }

    /// Names and hidden values, as a JSON object (`env`, `headers`).
    pub fn map(&mut self, pairs: &[KeyValue]) -> Map<String, Value> {
        pairs
            .iter()
            .map(|kv| (kv.name.clone(), Value::String(self.hide(&kv.value))))
            .collect()
    }

    /// A URL as it may appear in a file: unchanged unless it can carry a
    /// secret (userinfo, query, fragment, or it does not parse).
    pub fn url(&mut self, url: &str) -> String {
        if url_carries_secrets(url) {
            self.hide(url)
        } else {
            url.to_owned()
        }
    }

    /// The variables so far.
    pub fn env(&self) -> &[KeyValue] {
        &self.env
    }

    /// The variables, for [`Materialized::env`](crate::Materialized).
    pub fn into_env(self) -> Vec<KeyValue> {
        self.env
    }
}

/// Whether a URL can carry a secret: userinfo, a query, a fragment, or no
/// parse at all.
pub fn url_carries_secrets(url: &str) -> bool {
    url::Url::parse(url).map_or(true, |u| {
        !u.username().is_empty()
            || u.password().is_some()
            || u.query().is_some()
            || u.fragment().is_some()
    })
}

/// The `mcp__<server>__` prefix of a server's tools in stream-json tool
/// lists (characters other than ASCII alphanumerics, `_` and `-` become `_`).
pub fn mcp_tool_prefix(server: &str) -> String {
    let normalized: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("mcp__{normalized}__")
}

/// The tool a stream-json CLI lists when it holds MCP tools behind a search
/// (Claude Code's tool search): with it listed, the `mcp__…` tools of the
/// init line are not sent to the model until a search loads them. Verified
/// against the fake model's log of every request on Claude Code 2.1.197
/// (no search: every tool sent) and 2.1.332 (search on by default: none
/// sent until searched; `ENABLE_TOOL_SEARCH=false`: every tool sent).
pub const SEARCH_TOOL: &str = "ToolSearch";

/// `agent_reported` evidence from one stdout line, when it is a stream-json
/// `{"type":"system","subtype":"init","mcp_servers":[{name,status}],"tools":[…]}`
/// object: per server its status, and its tool count when tools named
/// `mcp__<server>__…` are listed (the harness's own list: the reducer reads
/// it as `current_thread`, never `model_visible`). When the line also lists
/// [`SEARCH_TOOL`], those tools are held behind the search: each is
/// `tool_deferred` instead, and no count claims they reached the model.
/// Anything else gives nothing.
pub fn stream_json_init_reports(line: &str, at: Timestamp) -> Vec<Evidence> {
    // Cheap rejection first: most lines are not the init line.
    if !line.contains("\"init\"") || !line.contains("mcp_servers") {
        return Vec::new();
    }
    let Ok(doc) = serde_json::from_str::<Value>(line) else {
        return Vec::new();
    };
    if doc.get("type").and_then(Value::as_str) != Some("system")
        || doc.get("subtype").and_then(Value::as_str) != Some("init")
    {
        return Vec::new();
    }
    let tools: Vec<&str> = doc
        .get("tools")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(servers) = doc.get("mcp_servers").and_then(Value::as_array) else {
        return Vec::new();
    };
    let searching = tools.contains(&SEARCH_TOOL);
    let mut out = init_plugins(&doc, at);
    for server in servers {
        let Some(name) = server.get("name").and_then(Value::as_str) else {
            continue;
        };
        let status = server.get("status").and_then(Value::as_str);
        let prefix = mcp_tool_prefix(name);
        let listed: Vec<&str> = tools
            .iter()
            .filter_map(|t| t.strip_prefix(prefix.as_str()))
            .filter(|t| !t.is_empty())
            .collect();
        let mut ev = Evidence::new(EvidenceKind::AgentReported, at).server(name);
        // No status: the server named, its tools counted, no state said.
        if let Some(word) = status {
            ev = ev.reported(init_state(word));
        }
        if !listed.is_empty() && !searching {
            ev = ev.tools(u32::try_from(listed.len()).unwrap_or(u32::MAX));
        }
        out.push(ev);
        if searching {
            out.extend(listed.into_iter().map(|tool| {
                crate::records::deferred(name, tool, at)
                    .provenance(tether_core::vocab::Provenance::AgentReport)
            }));
        }
    }
    out
}

/// A stream-json init line's server status, typed. Claude Code's words
/// (`McpServerStatus`: connected, failed, needs-auth, pending, disabled;
/// claude-agent-sdk 0.3.185's `sdk.d.ts`, Claude Code 2.1.197) are the
/// wire forms. Qwen Code's (`MCPServerStatus`: connected, connecting,
/// disconnected; 0.15.10 cli.js 253341, 0.24.4 chunk-2VS5EEXU.js 5489):
/// `connecting` is pending; `disconnected` is also what a server never
/// tried is (`getMCPServerStatus`'s default), so it says neither failed nor
/// pending and stays the harness's word: a reported `unknown`.
fn init_state(word: &str) -> ReportedStatus {
    match word {
        "connecting" => ReportedStatus::Pending,
        word => ReportedStatus::from(word),
    }
}

/// The plugins an init line says loaded (`plugins`: the harness's own
/// built-ins, at path `builtin`, are part of it and left out) and failed
/// to (`plugin_errors`: named by its directory's last component, where
/// the harness has no name for it; the message gives the reason's shape,
/// never its words).
fn init_plugins(doc: &Value, at: Timestamp) -> Vec<Evidence> {
    let provenance = tether_core::vocab::Provenance::AgentReport;
    let mut out = Vec::new();
    for plugin in doc
        .get("plugins")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if plugin.get("path").and_then(Value::as_str) == Some("builtin") {
            continue;
        }
        if let Some(ev) = plugin
            .get("name")
            .and_then(Value::as_str)
            .and_then(|n| crate::records::plugin_loaded(n, at))
        {
            out.push(ev.provenance(provenance.clone()));
        }
    }
    for error in doc
        .get("plugin_errors")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let named = error
            .get("path")
            .and_then(Value::as_str)
            .and_then(tether_core::records::project_of)
            .or_else(|| {
                // Older releases give no path; their message names the
                // plugin's directory (`Plugin NAME has a corrupt manifest`).
                let words = error.get("message").and_then(Value::as_str)?;
                let (_, rest) = words.split_once("Plugin ")?;
                tether_core::records::name(rest.split_whitespace().next()?)
            })
            .or_else(|| {
                let raw = error.get("plugin").and_then(Value::as_str)?;
                let cleaned: String = raw
                    .chars()
                    .map(|c| {
                        if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                            c
                        } else {
                            '_'
                        }
                    })
                    .collect();
                Some(cleaned.trim_matches('_').to_owned())
            });
        let words = error.get("message").and_then(Value::as_str).unwrap_or("");
        if let Some(ev) = named.and_then(|n| crate::records::plugin_failed(&n, words, at)) {
            out.push(ev.provenance(provenance.clone()));
        }
    }
    out
}

/// What a user merges into `file` to add the stdio server `name` (`entry`,
/// the harness's own entry shape) under `top` (`mcpServers`, or `mcp`): pretty JSON, for [`PassthroughStrategy::server_setup`].
///
/// [`PassthroughStrategy::server_setup`]: tether_core::passthrough::PassthroughStrategy::server_setup
pub fn server_block(
    file: &str,
    top: &str,
    name: &str,
    entry: serde_json::Value,
) -> tether_core::telemetry::SetupSnippet {
    let block = serde_json::json!({ top: { name: entry } });
    tether_core::telemetry::SetupSnippet::new(
        file.to_owned(),
        format!(
            "{}\n",
            serde_json::to_string_pretty(&block).unwrap_or_default()
        ),
    )
}

/// A command line from its words, each quoted for a POSIX shell as needed.
pub fn command_line<'a>(words: impl IntoIterator<Item = &'a str>) -> String {
    words
        .into_iter()
        .map(tether_core::passthrough::shell_word)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_follow_the_cli_syntax_and_values_move_to_the_environment() {
        for (style, want) in [
            (RefStyle::Braces, "${TETHER_MCP_1}"),
            (RefStyle::Dollar, "$TETHER_MCP_1"),
            (RefStyle::EnvColon, "{env:TETHER_MCP_1}"),
            (RefStyle::DollarEnvColon, "${env:TETHER_MCP_1}"),
            (RefStyle::Name, "TETHER_MCP_1"),
        ] {
            let mut refs = EnvRefs::new(style);
            assert_eq!(refs.hide("s3cret"), want);
            assert_eq!(refs.env(), &[KeyValue::new("TETHER_MCP_1", "s3cret")]);
        }
        let mut refs = EnvRefs::new(RefStyle::Braces);
        assert_eq!(refs.url("https://h.example/mcp"), "https://h.example/mcp");
        assert_eq!(refs.url("https://u:p@h.example/mcp"), "${TETHER_MCP_1}");
        assert_eq!(refs.url("https://h.example/mcp?key=k"), "${TETHER_MCP_2}");
        assert_eq!(refs.url("not a url"), "${TETHER_MCP_3}");
    }

    #[test]
    fn the_init_line_gives_status_and_visible_tools_per_server() {
        let line = r#"{"type":"system","subtype":"init","tools":["mcp__my_srv__a","mcp__my_srv__b","read_file"],"mcp_servers":[{"name":"my srv","status":"connected"},{"name":"other","status":"failed"}]}"#;
        let ev = stream_json_init_reports(line, Timestamp(5));
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].server.as_deref(), Some("my srv"));
        assert_eq!(ev[0].reported_status.as_deref(), Some("connected"));
        assert_eq!(ev[0].tool_count, Some(2));
        assert_eq!(ev[1].reported_status.as_deref(), Some("failed"));
        assert_eq!(ev[1].tool_count, None);
        // Qwen Code's words: connecting is pending, disconnected untyped;
        // a server with no status is named, with no state said.
        let qwen = r#"{"type":"system","subtype":"init","tools":[],"mcp_servers":[{"name":"a","status":"connecting"},{"name":"b","status":"disconnected"},{"name":"c"}]}"#;
        let states: Vec<_> = stream_json_init_reports(qwen, Timestamp(5))
            .iter()
            .map(Evidence::reported_state)
            .collect();
        assert_eq!(
            states,
            [
                Some(ReportedStatus::Pending),
                Some(ReportedStatus::Other("disconnected".into())),
                None
            ]
        );
        for other in [
            "",
            "{}",
            r#"{"type":"assistant","subtype":"init","mcp_servers":[]}"#,
            "not json \"init\" mcp_servers",
        ] {
            assert!(stream_json_init_reports(other, Timestamp(1)).is_empty());
        }
    }

    #[test]
    fn an_init_line_names_the_plugins_that_loaded_and_those_that_failed() {
        // As Claude Code 2.1.332 writes it (2.1.197 gives no `path`; its
        // message names the directory).
        let line = r#"{"type":"system","subtype":"init","mcp_servers":[],"tools":[],
            "plugins":[{"name":"goodplug","path":"/home/me/plug-good","source":"goodplug@inline"},
                       {"name":"cc-plugin-telemetry","path":"builtin","source":"cc-plugin-telemetry@builtin"}],
            "plugin_errors":[{"plugin":"inline[1]","type":"generic-error","path":"/home/me/plug-bad",
                "message":"Failed to load plugin: Plugin plug-bad has a corrupt manifest file at /home/me/plug-bad/.claude-plugin/plugin.json. sk-planted-Zq9"},
                {"plugin":"inline[2]","type":"generic-error",
                "message":"Failed to load plugin: Plugin other-bad has a corrupt manifest file"}]}"#
            .replace('\n', " ");
        let evidence = stream_json_init_reports(&line, Timestamp(5));
        let named: Vec<(String, String)> = evidence
            .iter()
            .filter_map(|e| {
                Some((
                    e.kind.as_str().to_owned(),
                    e.capability.as_ref()?.name.clone(),
                ))
            })
            .collect();
        assert_eq!(
            named,
            vec![
                ("plugin_loaded".to_owned(), "goodplug".to_owned()),
                ("plugin_failed".to_owned(), "plug-bad".to_owned()),
                ("plugin_failed".to_owned(), "other-bad".to_owned()),
            ]
        );
        let text = serde_json::to_string(&evidence).expect("json");
        assert!(
            !text.contains("sk-planted") && !text.contains("/home/me"),
            "{text}"
        );
        assert!(text.contains("its manifest is not valid JSON"), "{text}");
    }
}
