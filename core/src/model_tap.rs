//! What a harness says about its model traffic, for `tether tap` (its
//! plugin's [`ModelTap`] role): how to point it at the tap ([`ModelSetup`]),
//! and who sent one request ([`ModelCaller`], read from the request's
//! headers). Pure data, like every role of a harness's plugin.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::telemetry::{SetupSnippet, SetupVar};

/// The model-tap role of a harness's plugin (`tether tap`): how to point
/// the harness at the tap, and whether a request is the harness's.
pub trait ModelTap: Send + Sync {
    /// What the harness needs to send its model requests through the tap
    /// at `base_url` (`http://127.0.0.1:PORT/TOKEN`): the variable or the
    /// block that moves its model endpoint, and which sign-ins that covers.
    fn model_setup(&self, base_url: &str) -> Option<ModelSetup>;

    /// Whether one model request is this harness's, read from its headers
    /// (names and values; never kept): its version and its own session id
    /// where it sends one.
    fn model_caller(&self, headers: &[(&str, &str)]) -> Option<ModelCaller>;
}

/// What a harness needs to send its model requests through the tap at a
/// base URL (which holds the tap's token as its first path segment).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct ModelSetup {
    /// The agent kind (`claude`, `codex`, …).
    pub agent_kind: String,
    /// The model API it speaks to the tap (`anthropic_messages`,
    /// `openai_chat`, `openai_responses`, `generate_content`).
    pub api: String,
    /// Variables to set where it starts (they hold the token).
    pub env: Vec<SetupVar>,
    /// A block for one of its own files, for a harness that reads its model
    /// endpoint there (it holds the token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet: Option<SetupSnippet>,
    /// What else to know (which sign-in this covers, say).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl ModelSetup {
    /// A setup for `agent_kind` speaking `api`, with nothing to set yet.
    pub fn new(agent_kind: impl Into<String>, api: impl Into<String>) -> Self {
        ModelSetup {
            agent_kind: agent_kind.into(),
            api: api.into(),
            env: Vec::new(),
            snippet: None,
            notes: Vec::new(),
        }
    }

    /// With the variable `name` set to `value`.
    pub fn var(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push(SetupVar {
            name: name.into(),
            value: value.into(),
        });
        self
    }

    /// With `text` to add to `file`.
    pub fn snippet(mut self, file: impl Into<String>, text: impl Into<String>) -> Self {
        self.snippet = Some(SetupSnippet::new(file, text));
        self
    }

    /// With a note.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
}

/// Who sent one model request, as the harness's plugin reads its headers:
/// the harness's version, and its own session id where it sends one. The
/// headers themselves are never kept.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[non_exhaustive]
pub struct ModelCaller {
    /// The harness's version, from its user agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The harness's own session (or conversation) id, where the request
    /// carries one: the Tether session it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

impl ModelCaller {
    /// A caller at `version`, in `session`, where known. A session that
    /// does not look like an id ([`is_name_like`](crate::telemetry::is_name_like))
    /// is dropped, and a version that does not look like one too.
    pub fn new(version: Option<&str>, session: Option<&str>) -> Self {
        let version = version
            .filter(|v| {
                !v.is_empty()
                    && v.len() <= 32
                    && v.chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
            })
            .map(str::to_owned);
        let session = session
            .filter(|s| crate::telemetry::is_name_like(s))
            .map(str::to_owned);
        ModelCaller { version, session }
    }
}

/// The value of the header `name` (ASCII case-insensitive) among `headers`.
pub fn header<'a>(headers: &[(&str, &'a str)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| *v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_keeps_ids_and_versions_only() {
        let c = ModelCaller::new(
            Some("2.1.332"),
            Some("0f2ace92-9aec-4c38-8293-fa43595f3223"),
        );
        assert_eq!(c.version.as_deref(), Some("2.1.332"));
        assert!(c.session.is_some());
        let c = ModelCaller::new(Some("2.1 (rm -rf)"), Some("a sentence, not an id"));
        assert_eq!(c, ModelCaller::default());
    }

    #[test]
    fn a_header_is_found_by_its_name_in_any_case() {
        let h = [("User-Agent", "x/1"), ("x-session-id", "ses_1")];
        assert_eq!(header(&h, "user-agent"), Some("x/1"));
        assert_eq!(header(&h, "X-Session-Id"), Some("ses_1"));
    }
}
