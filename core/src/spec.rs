//! What a host configured: the MCP servers of an attempt and the ways to
//! reach them. These types hold secrets (env values, header values, arguments,
//! URL userinfo, paths and queries); they are never stored, printed or copied,
//! and reach a history only through [`PlannedServer::row`](crate::plan::PlannedServer::row),
//! which sanitizes.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::sanitize::{self, Scrubber};
use crate::vocab::{ServerSource, Transport};

/// A `name: value` pair whose value is secret (an env var or an HTTP header).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct KeyValue {
    /// The key; stored only as a name.
    pub name: String,
    /// The value; never stored, printed or copied.
    pub value: String,
}

impl KeyValue {
    /// A pair.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        KeyValue {
            name: name.into(),
            value: value.into(),
        }
    }
}

impl fmt::Debug for KeyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}=[redacted]", self.name)
    }
}

/// One way to reach an MCP server. Holds secrets: it is never stored.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "transport", rename_all = "snake_case")]
pub enum Endpoint {
    /// A child process speaking MCP on stdio.
    Stdio {
        /// The command.
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Extra environment.
        #[serde(default)]
        env: Vec<KeyValue>,
        /// Working directory.
        #[serde(default)]
        cwd: Option<String>,
    },
    /// Streamable HTTP.
    Http {
        /// The URL.
        url: String,
        /// Headers to send.
        #[serde(default)]
        headers: Vec<KeyValue>,
    },
    /// Legacy HTTP+SSE.
    Sse {
        /// The SSE URL.
        url: String,
        /// Headers to send.
        #[serde(default)]
        headers: Vec<KeyValue>,
    },
}

impl Endpoint {
    /// Its transport.
    pub fn transport(&self) -> Transport {
        match self {
            Endpoint::Stdio { .. } => Transport::Stdio,
            Endpoint::Http { .. } => Transport::Http,
            Endpoint::Sse { .. } => Transport::Sse,
        }
    }

    /// Its sanitized target: `scheme://host[:port]` or the command's basename.
    pub fn target(&self) -> String {
        match self {
            Endpoint::Stdio { command, .. } => sanitize::command_target(command),
            Endpoint::Http { url, .. } | Endpoint::Sse { url, .. } => sanitize::network_target(url),
        }
    }

    /// Every value here that must never leave: args, env and header values, URL parts.
    pub fn secret_values(&self) -> Vec<String> {
        let mut out = Vec::new();
        match self {
            Endpoint::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                // Directories of the command and cwd can name users and projects.
                if let Some((dir, _)) = command.rsplit_once(['/', '\\']) {
                    out.push(dir.to_owned());
                }
                for arg in args {
                    out.push(arg.clone());
                    // "--token=VALUE": the value alone may be echoed too.
                    if let Some((_, value)) = arg.split_once('=') {
                        out.push(value.to_owned());
                    }
                }
                out.extend(env.iter().map(|kv| kv.value.clone()));
                out.extend(cwd.iter().cloned());
            }
            Endpoint::Http { url, headers } | Endpoint::Sse { url, headers } => {
                for kv in headers {
                    out.push(kv.value.clone());
                    // "Bearer <token>": the token alone may be echoed too.
                    out.extend(
                        kv.value
                            .split_whitespace()
                            .filter(|part| !is_auth_scheme(part))
                            .map(str::to_owned),
                    );
                }
                out.extend(url_secrets(url));
            }
        }
        out
    }
}

fn is_auth_scheme(word: &str) -> bool {
    ["bearer", "basic", "digest", "token"]
        .iter()
        .any(|scheme| word.eq_ignore_ascii_case(scheme))
}

fn url_secrets(raw: &str) -> Vec<String> {
    let Ok(url) = url::Url::parse(raw) else {
        // An unparseable URL is treated as secret whole.
        return vec![raw.to_owned()];
    };
    let mut out = Vec::new();
    if !url.username().is_empty() {
        out.push(url.username().to_owned());
    }
    out.extend(url.password().map(str::to_owned));
    if url.path() != "/" {
        out.push(url.path().to_owned());
    }
    out.extend(url.query().map(str::to_owned));
    out.extend(url.query_pairs().map(|(_, v)| v.into_owned()));
    out.extend(url.fragment().map(str::to_owned));
    out
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.transport(), self.target())
    }
}

/// One configured MCP server, as the host knows it. Holds secrets: never stored.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ServerSpec {
    /// The server's name.
    pub name: String,
    /// Who configured it.
    pub source: ServerSource,
    /// Ways to reach it, most preferred first; a plugin delivers at most one.
    pub endpoints: Vec<Endpoint>,
    /// When the server is observed through Tether's relay: the real endpoint
    /// the relay reaches (then `endpoints` holds the relay). Rows show its
    /// target; its secrets stay with the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relayed: Option<Endpoint>,
    /// A sentence for the row on how the host delivers the server (why it
    /// is not observed, say). Never a value: it is stored (scrubbed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// How Tether's own checks (an endpoint test) reach the server instead
    /// of `endpoints`, index for index, when the server tells them apart
    /// from the agent (the host's observed endpoint: they carry its check
    /// credential, not the attempt's). Empty for every other server. Never
    /// serialized: no plugin sees it.
    #[serde(skip)]
    pub check_endpoints: Vec<Endpoint>,
    /// Variables the server's configuration references that are not set
    /// where it was read (names only, never a value). Its row then says
    /// `unresolved_variable` until something shows the server working.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unset_vars: Vec<String>,
    /// The working directory a stdio server's entry gives (`cwd`) does not
    /// exist where it was read. Its row then says `cwd_not_found` until
    /// something shows the server working: whatever the harness says of
    /// its start (a spawn's "No such file or directory" reads the same for
    /// a missing command), that is why.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cwd_missing: bool,
    /// A stdio server's command does not resolve where it was read (a bare
    /// name on no folder of PATH, a path where no executable file is): the
    /// sentence that says which, naming the command by its basename only.
    /// Where the harness says only that the server failed, its row says
    /// `command_not_found` with this sentence; a harness's own reason (its
    /// log's spawn error) wins over it, since the harness may start its
    /// servers with another PATH.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_missing: Option<String>,
}

impl fmt::Debug for ServerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerSpec")
            .field("name", &self.name)
            .field("source", &self.source)
            .field("endpoints", &self.endpoints)
            .field("relayed", &self.relayed)
            .field("note", &self.note)
            .field("check_endpoints", &self.check_endpoints)
            .field("unset_vars", &self.unset_vars)
            .field("cwd_missing", &self.cwd_missing)
            .field("command_missing", &self.command_missing)
            .finish()
    }
}

impl ServerSpec {
    /// A server reachable one way.
    pub fn new(name: impl Into<String>, source: ServerSource, endpoint: Endpoint) -> Self {
        ServerSpec {
            name: name.into(),
            source,
            endpoints: vec![endpoint],
            relayed: None,
            note: None,
            check_endpoints: Vec::new(),
            unset_vars: Vec::new(),
            cwd_missing: false,
            command_missing: None,
        }
    }

    /// The same server, whose configuration references these variables
    /// that are not set here (names).
    pub fn with_unset_vars(mut self, names: Vec<String>) -> Self {
        self.unset_vars = names;
        self
    }

    /// The same server, whose entry's working directory does not exist
    /// here (`missing`).
    pub fn with_cwd_missing(mut self, missing: bool) -> Self {
        self.cwd_missing = missing;
        self
    }

    /// The same server, whose command does not resolve here: `why` says
    /// which way (see [`ServerSpec::command_missing`]).
    pub fn with_command_missing(mut self, why: Option<String>) -> Self {
        self.command_missing = why;
        self
    }

    /// The same server, reached by Tether's own checks through `endpoints`
    /// (index for index with the agent's), so the server can tell them apart.
    pub fn checked_through(mut self, endpoints: Vec<Endpoint>) -> Self {
        self.check_endpoints = endpoints;
        self
    }

    /// The way Tether's own check reaches endpoint `index`: its check
    /// endpoint where the server has one, else the agent's.
    pub fn endpoint_for_checks(&self, index: usize) -> Option<&Endpoint> {
        self.check_endpoints
            .get(index)
            .or_else(|| self.endpoints.get(index))
    }

    /// The same server, with a sentence for its row.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }

    /// The same server observed through a relay: the agent is given `relay`
    /// (only), and the row shows the real endpoint's target.
    pub fn relayed_through(mut self, real: Endpoint, relay: Endpoint) -> Self {
        self.endpoints = vec![relay];
        self.relayed = Some(real);
        self
    }

    /// Adds a less preferred way to reach the same server.
    pub fn or(mut self, endpoint: Endpoint) -> Self {
        self.endpoints.push(endpoint);
        self
    }

    /// The first endpoint of a transport, with its index.
    pub fn endpoint_for(&self, transport: &Transport) -> Option<(usize, &Endpoint)> {
        self.endpoints
            .iter()
            .enumerate()
            .find(|(_, e)| &e.transport() == transport)
    }

    /// A scrubber that knows this server's secret values.
    pub fn scrubber(&self) -> Scrubber {
        Scrubber::new().with_secrets(
            self.endpoints
                .iter()
                .chain(&self.relayed)
                .chain(&self.check_endpoints)
                .flat_map(Endpoint::secret_values),
        )
    }
}
