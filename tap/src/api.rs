//! Which model API a request speaks, from its path alone.

use serde::Serialize;

/// A model API the tap reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// Anthropic Messages (`…/v1/messages`).
    AnthropicMessages,
    /// OpenAI Chat Completions (`…/chat/completions`).
    OpenaiChat,
    /// OpenAI Responses (`…/responses`).
    OpenaiResponses,
    /// Google's `generateContent` and `streamGenerateContent`.
    GenerateContent,
}

impl Api {
    /// The API a request path speaks; `None` for anything else (a token
    /// count, a model list), which passes through unread.
    pub fn of(path: &str) -> Option<Api> {
        let path = path.split('?').next().unwrap_or(path);
        if path.ends_with("/messages") {
            Some(Api::AnthropicMessages)
        } else if path.ends_with("/chat/completions") {
            Some(Api::OpenaiChat)
        } else if path.ends_with("/responses") {
            Some(Api::OpenaiResponses)
        } else if path.ends_with(":generateContent") || path.ends_with(":streamGenerateContent") {
            Some(Api::GenerateContent)
        } else {
            None
        }
    }

    /// Its name (`tether tap`'s records, and [`ModelSetup::api`](tether_core::model_tap::ModelSetup)).
    pub fn word(self) -> &'static str {
        match self {
            Api::AnthropicMessages => "anthropic_messages",
            Api::OpenaiChat => "openai_chat",
            Api::OpenaiResponses => "openai_responses",
            Api::GenerateContent => "generate_content",
        }
    }

    /// Where its requests go when no upstream is given: the provider's own
    /// API.
    pub fn default_upstream(self) -> &'static str {
        match self {
            Api::AnthropicMessages => "https://api.anthropic.com",
            Api::OpenaiChat | Api::OpenaiResponses => "https://api.openai.com",
            Api::GenerateContent => "https://generativelanguage.googleapis.com",
        }
    }

    /// The provider a path's family goes to by default, for paths the tap
    /// does not read (a token count, a model list) of a known family.
    pub fn default_for_path(path: &str) -> Option<&'static str> {
        if let Some(api) = Api::of(path) {
            return Some(api.default_upstream());
        }
        if path.starts_with("/v1beta/") || path.contains("/models/") && path.contains(':') {
            Some(Api::GenerateContent.default_upstream())
        } else if path.starts_with("/v1/messages/") || path.starts_with("/v1/complete") {
            Some(Api::AnthropicMessages.default_upstream())
        } else if path.starts_with("/v1/") {
            Some(Api::OpenaiChat.default_upstream())
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_their_api() {
        assert_eq!(Api::of("/v1/messages"), Some(Api::AnthropicMessages));
        assert_eq!(
            Api::of("/v1/messages?beta=true"),
            Some(Api::AnthropicMessages)
        );
        assert_eq!(Api::of("/v1/messages/count_tokens"), None);
        assert_eq!(Api::of("/api/v1/chat/completions"), Some(Api::OpenaiChat));
        assert_eq!(Api::of("/v1/responses"), Some(Api::OpenaiResponses));
        assert_eq!(
            Api::of("/v1beta/models/model-x:streamGenerateContent"),
            Some(Api::GenerateContent)
        );
        assert_eq!(Api::of("/v1beta/models/model-x:countTokens"), None);
        assert_eq!(
            Api::default_for_path("/v1/messages/count_tokens"),
            Some("https://api.anthropic.com")
        );
        assert_eq!(
            Api::default_for_path("/v1/models"),
            Some("https://api.openai.com")
        );
        assert_eq!(Api::default_for_path("/other"), None);
    }
}
