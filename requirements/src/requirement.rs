//! The stages a requirement can ask for, and how one is written:
//! `SERVER`, `SERVER:STAGE`, `SERVER/TOOL`, `SERVER/TOOL:STAGE`. A
//! misspelt stage is an error with the stage meant ("did you mean"),
//! never a server of that name that the session then never named.

/// What `--require` and `--require-tool` say after the flags.
pub const STAGES_HELP: &str = "\
Stages (`--require SERVER:STAGE`, `--require-tool SERVER/TOOL:STAGE`):
  reached          the default: its tools reached the session (offered in the
                   thread or sent to the model) and it did not fail
  configured, delivered, authenticated, initialized   (servers only)
  tools_listed     tools/list was served (a tool: it was listed)
  schema_accepted  the harness kept its tools after its own checks
  current_thread   its tools were offered in this session's model requests
                   (also: offered)
  model_visible    the model was sent a tool's definition (a model-side signal:
                   a request that left for the model, a model turn, the tap)
  callable         a call reached it and succeeded
  used             a call was made (also: called), whatever its outcome
A stage nothing showed is unknown, and unknown is never met.";

/// One stage a requirement asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Its tools reached the session, and it did not fail.
    Reached,
    /// It was configured.
    Configured,
    /// It was handed to the harness.
    Delivered,
    /// It accepted the harness's credentials.
    Authenticated,
    /// It completed initialize.
    Initialized,
    /// It served tools/list (a tool: it was listed).
    ToolsListed,
    /// The harness kept its tools.
    SchemaAccepted,
    /// It was offered in this session's model requests.
    CurrentThread,
    /// The model was sent its definition.
    ModelVisible,
    /// A call reached it and succeeded.
    Callable,
    /// A call was made.
    Used,
}

impl Need {
    /// Every stage, in the order `--help` gives them.
    pub const ALL: [Need; 11] = [
        Need::Reached,
        Need::Configured,
        Need::Delivered,
        Need::Authenticated,
        Need::Initialized,
        Need::ToolsListed,
        Need::SchemaAccepted,
        Need::CurrentThread,
        Need::ModelVisible,
        Need::Callable,
        Need::Used,
    ];

    /// Its one name.
    pub fn word(self) -> &'static str {
        match self {
            Need::Reached => "reached",
            Need::Configured => "configured",
            Need::Delivered => "delivered",
            Need::Authenticated => "authenticated",
            Need::Initialized => "initialized",
            Need::ToolsListed => "tools_listed",
            Need::SchemaAccepted => "schema_accepted",
            Need::CurrentThread => "current_thread",
            Need::ModelVisible => "model_visible",
            Need::Callable => "callable",
            Need::Used => "used",
        }
    }

    /// The stage `word` names (its name, or `offered`, `called`, `listed`).
    pub fn parse(word: &str) -> Option<Need> {
        match word {
            "offered" => Some(Need::CurrentThread),
            "called" => Some(Need::Used),
            "listed" => Some(Need::ToolsListed),
            _ => Need::ALL.into_iter().find(|n| n.word() == word),
        }
    }

    /// Whether a tool row can show it (the server-only stages cannot).
    pub fn for_tools(self) -> bool {
        !matches!(
            self,
            Need::Configured | Need::Delivered | Need::Authenticated | Need::Initialized
        )
    }

    /// What it means, as a clause (`time: …`).
    pub fn clause(self, tool: bool) -> &'static str {
        match (self, tool) {
            (Need::Reached, false) => "its tools reached the session and it did not fail",
            (Need::Reached, true) => "it reached the session and its server did not fail",
            (Need::Configured, _) => "it was configured",
            (Need::Delivered, _) => "it was handed to the harness",
            (Need::Authenticated, _) => "it accepted the harness's credentials",
            (Need::Initialized, _) => "it completed initialize",
            (Need::ToolsListed, false) => "it served tools/list",
            (Need::ToolsListed, true) => "its server listed it",
            (Need::SchemaAccepted, _) => "the harness kept its tools",
            (Need::CurrentThread, _) => "it was offered in this session's model requests",
            (Need::ModelVisible, _) => "the model was sent its definition",
            (Need::Callable, _) => "a call reached it and succeeded",
            (Need::Used, _) => "a call was made",
        }
    }

    /// What is missing when it is not met, as a noun phrase (`missing:
    /// …`): what would have shown it.
    pub fn missing(self, tool: bool) -> &'static str {
        match (self, tool) {
            (Need::Reached, false) => {
                "its tools in the session (offered in the thread or sent to the model)"
            }
            (Need::Reached, true) => "the tool in the session (offered or sent to the model)",
            (Need::Configured, _) => "its configuration",
            (Need::Delivered, _) => "its hand-over to the harness",
            (Need::Authenticated, _) => "an accepted credential",
            (Need::Initialized, _) => "a completed initialize",
            (Need::ToolsListed, false) => "a served tools/list",
            (Need::ToolsListed, true) => "the tool in its server's tools/list",
            (Need::SchemaAccepted, _) => "the harness keeping its tools",
            (Need::CurrentThread, _) => "an offer in this session's model requests",
            (Need::ModelVisible, _) => {
                "a model-side signal (a request that left for the model, a model turn, the tap)"
            }
            (Need::Callable, _) => "a call that reached it and succeeded",
            (Need::Used, _) => "a call",
        }
    }
}

/// One requirement: a server (or one of its tools) at a stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The server's name.
    pub server: String,
    /// The tool, for a `--require-tool`.
    pub tool: Option<String>,
    /// The stage it must have reached.
    pub need: Need,
}

impl Requirement {
    /// `server` at the default stage, `reached`.
    pub fn reached(server: &str) -> Requirement {
        Requirement {
            server: server.to_owned(),
            tool: None,
            need: Need::Reached,
        }
    }

    /// The row it is about (`SERVER` or `SERVER/TOOL`).
    pub fn subject(&self) -> String {
        match &self.tool {
            Some(tool) => format!("{}/{tool}", self.server),
            None => self.server.clone(),
        }
    }

    /// As written back (`time`, `time:callable`).
    pub fn spelled(&self) -> String {
        match self.need {
            Need::Reached => self.subject(),
            need => format!("{}:{}", self.subject(), need.word()),
        }
    }
}

/// Why a requirement could not be read (a usage error: `tether` exits 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A suffix that looks like a stage but names none.
    #[error("no stage {word:?}{}; one of: {} (or offered, called)", did_you_mean(.near), known())]
    UnknownStage {
        /// The suffix given.
        word: String,
        /// The stage it is nearest, if any is near.
        near: Option<&'static str>,
    },
    /// No server's name before the stage.
    #[error("give a server's name: SERVER or SERVER:STAGE")]
    NoServer,
    /// `SERVER/TOOL` given to `--require`.
    #[error("{server:?} names a tool; require it with --require-tool {given}")]
    ToolAsServer {
        /// The name before the stage.
        server: String,
        /// The whole requirement as given.
        given: String,
    },
    /// `--require-tool` without `SERVER/TOOL`.
    #[error("give SERVER/TOOL or SERVER/TOOL:STAGE")]
    NoTool,
    /// A server's stage asked of a tool.
    #[error("{stage} is a server's stage; require the server (--require {server}:{stage})")]
    ServerStage {
        /// The stage.
        stage: &'static str,
        /// The server.
        server: String,
    },
}

fn did_you_mean(near: &Option<&'static str>) -> String {
    near.map(|n| format!(" (did you mean {n:?}?)"))
        .unwrap_or_default()
}

fn known() -> String {
    let known: Vec<&str> = Need::ALL.iter().map(|n| n.word()).collect();
    known.join(", ")
}

/// Every word a stage is written as.
const SPELLINGS: [&str; 14] = [
    "reached",
    "configured",
    "delivered",
    "authenticated",
    "initialized",
    "tools_listed",
    "schema_accepted",
    "current_thread",
    "model_visible",
    "callable",
    "used",
    "offered",
    "called",
    "listed",
];

/// Splits `NAME[:STAGE]`: the suffix is a stage when it names one; one
/// that looks like a stage (snake_case, or a slip of a stage's name) is an
/// error; any other suffix is part of the server's name (a name may hold
/// a colon: `corp:search`).
fn split_stage(text: &str) -> Result<(&str, Need), ParseError> {
    let Some((name, word)) = text.rsplit_once(':') else {
        return Ok((text, Need::Reached));
    };
    if let Some(need) = Need::parse(word) {
        return Ok((name, need));
    }
    let snake = !word.is_empty() && word.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
    let near = tether_words::near::nearest(word, SPELLINGS.iter().copied());
    if snake && (word.contains('_') || near.is_some()) {
        return Err(ParseError::UnknownStage {
            word: word.to_owned(),
            near,
        });
    }
    Ok((text, Need::Reached))
}

/// `--require SERVER[:STAGE]`.
pub fn parse_server(text: &str) -> Result<Requirement, ParseError> {
    let (server, need) = split_stage(text)?;
    if server.trim().is_empty() {
        return Err(ParseError::NoServer);
    }
    // No harness names a server with a `/`: `SERVER/TOOL` is a tool.
    if server.contains('/') {
        return Err(ParseError::ToolAsServer {
            server: server.to_owned(),
            given: text.to_owned(),
        });
    }
    Ok(Requirement {
        server: server.to_owned(),
        tool: None,
        need,
    })
}

/// `--require-tool SERVER/TOOL[:STAGE]`.
pub fn parse_tool(text: &str) -> Result<Requirement, ParseError> {
    let (name, need) = split_stage(text)?;
    let Some((server, tool)) = name
        .split_once('/')
        .filter(|(s, t)| !s.is_empty() && !t.is_empty())
    else {
        return Err(ParseError::NoTool);
    };
    if !need.for_tools() {
        return Err(ParseError::ServerStage {
            stage: need.word(),
            server: server.to_owned(),
        });
    }
    Ok(Requirement {
        server: server.to_owned(),
        tool: Some(tool.to_owned()),
        need,
    })
}
