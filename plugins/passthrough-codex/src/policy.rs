//! Whether Codex lets a call to an MCP tool run, as its configuration
//! predicts it (`call_policy` on the inventory row).
//!
//! Key names read from the pinned 0.171 binary's strings:
//! `mcp_servers.NAME.default_tools_approval_mode`, a tool's own
//! `mcp_servers.NAME.tools.TOOL.approval_mode`, and `approval_policy`
//! (`untrusted`, `on-request`, `never`, or a granular table; a `profile`'s
//! `[profiles.P] approval_policy` over the top-level one). The modes are
//! `approve` (run without asking), `prompt` (always ask) and `auto` (the
//! default: Codex decides per call), as Codex's own config type spells
//! them. The binary's own messages give the outcomes a prediction can
//! name: "MCP tool call requires approval, but approval policy is never"
//! and "MCP tool call cancelled: interactive approval is unavailable in
//! exec mode".

use serde_json::{Map, Value};
use tether_core::inventory::{CallPolicy, CallVerdict, ToolCallPolicy};
use tether_core::model::ProvenanceCode;
use tether_core::vocab::ReasonCode;

/// The effective `approval_policy`, and the file that sets it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ApprovalPolicy(Option<(String, String)>);

impl ApprovalPolicy {
    /// Adds one config file (weakest first): its profile's
    /// `approval_policy`, else its own.
    pub(crate) fn absorb(&mut self, doc: &Map<String, Value>, source: &str) {
        let profile = doc
            .get("profile")
            .and_then(Value::as_str)
            .and_then(|p| doc.get("profiles")?.get(p)?.get("approval_policy"));
        let value = profile.or_else(|| doc.get("approval_policy"));
        let word = match value {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Object(_)) => Some("granular".to_owned()),
            _ => None,
        };
        if let Some(word) = word {
            self.0 = Some((word, source.to_owned()));
        }
    }

    fn never(&self) -> Option<&str> {
        match &self.0 {
            Some((word, source)) if word == "never" => Some(source),
            _ => None,
        }
    }
}

/// The prediction for every tool of a server whose entry is `entry` (in
/// `source`), with the tools whose own `approval_mode` differs.
pub(crate) fn predict(
    entry: &Map<String, Value>,
    source: &str,
    policy: &ApprovalPolicy,
) -> CallPolicy {
    let mode = entry
        .get("default_tools_approval_mode")
        .and_then(Value::as_str);
    let mut server = decide(mode, "default_tools_approval_mode", None, source, policy);
    let tools = entry.get("tools").and_then(Value::as_object);
    for (tool, settings) in tools.into_iter().flatten() {
        let Some(own) = settings.get("approval_mode").and_then(Value::as_str) else {
            continue;
        };
        let key = format!("tools.{tool}.approval_mode");
        let policy = decide(Some(own), &key, Some(tool), source, policy);
        if policy.verdict != server.verdict || policy.rule != server.rule {
            server.tools.push(ToolCallPolicy {
                tool: tool.clone(),
                policy,
            });
        }
    }
    server
}

fn decide(
    mode: Option<&str>,
    key: &str,
    tool: Option<&str>,
    source: &str,
    policy: &ApprovalPolicy,
) -> CallPolicy {
    let what = match tool {
        Some(tool) => format!("a call to {tool}"),
        None => "every call to its tools".to_owned(),
    };
    let rule = mode.map(|m| format!("{key} = \"{m}\""));
    let from_config = |verdict, headless, reason, summary: String| CallPolicy {
        verdict,
        headless_refuses: headless,
        provenance: ProvenanceCode::CurrentConfig,
        reason_code: reason,
        rule: rule.clone(),
        source: Some(source.to_owned()),
        summary,
        tools: Vec::new(),
    };
    match mode {
        Some("approve") => from_config(
            CallVerdict::Allowed,
            Some(false),
            None,
            format!("{key} is approve in {source}: Codex runs {what} without asking"),
        ),
        Some("prompt") => match policy.never() {
            Some(never_source) => from_config(
                CallVerdict::Denied,
                Some(true),
                Some(ReasonCode::ApprovalRequired),
                format!(
                    "{key} is prompt in {source} but approval_policy is never in {never_source}: Codex refuses {what} (\"requires approval, but approval policy is never\")"
                ),
            ),
            None => from_config(
                CallVerdict::NeedsApproval,
                Some(true),
                Some(ReasonCode::ApprovalRequired),
                format!(
                    "{key} is prompt in {source}: Codex asks before {what}; a headless run (codex exec) cancels it"
                ),
            ),
        },
        _ => CallPolicy {
            verdict: CallVerdict::NeedsApproval,
            headless_refuses: None,
            provenance: ProvenanceCode::DocumentedRule,
            reason_code: Some(ReasonCode::ApprovalRequired),
            rule,
            source: mode.map(|_| source.to_owned()),
            summary: format!(
                "{key} is auto (or unset): Codex decides per call whether to ask before {what}; a call that asks is cancelled in a headless run (codex exec){}",
                if policy.never().is_some() {
                    " and refused under approval_policy = never"
                } else {
                    ""
                }
            ),
            tools: Vec::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: serde_json::Value) -> Map<String, Value> {
        v.as_object().cloned().expect("an object")
    }

    #[test]
    fn modes_per_server_and_per_tool() {
        let entry = obj(json!({"default_tools_approval_mode": "approve",
                               "tools": {"push": {"approval_mode": "prompt"}, "list": {"approval_mode": "approve"}}}));
        let p = predict(&entry, "~/.codex/config.toml", &ApprovalPolicy::default());
        assert_eq!(p.verdict, CallVerdict::Allowed);
        assert_eq!(p.tools.len(), 2);
        assert_eq!(p.for_tool("list").verdict, CallVerdict::Allowed);
        assert_eq!(p.for_tool("other").rule, p.rule);
        assert_eq!(p.for_tool("push").verdict, CallVerdict::NeedsApproval);
        assert_eq!(p.for_tool("push").headless_refuses, Some(true));
        let mut never = ApprovalPolicy::default();
        never.absorb(
            &obj(json!({"profile": "ci", "approval_policy": "on-request",
                                 "profiles": {"ci": {"approval_policy": "never"}}})),
            "~/.codex/config.toml",
        );
        assert_eq!(
            predict(&entry, "x", &never).for_tool("push").verdict,
            CallVerdict::Denied
        );
        let auto = predict(&obj(json!({})), "x", &ApprovalPolicy::default());
        assert_eq!(
            (auto.verdict, auto.provenance),
            (CallVerdict::NeedsApproval, ProvenanceCode::DocumentedRule)
        );
    }
}
