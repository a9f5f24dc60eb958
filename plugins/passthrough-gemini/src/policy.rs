//! Whether Gemini CLI or Qwen Code lets a call to an MCP tool run, as their
//! settings predict it (`call_policy` on the inventory row).
//!
//! Gemini CLI 0.61 (its policy engine's rules from settings, strongest
//! first): `tools.exclude` denies a tool (`mcp_SERVER_TOOL`);
//! `tools.confirmationRequired` asks; `tools.allowed` allows; an entry's
//! `trust: true` allows every tool of the server (and, in a trusted folder,
//! skips the confirmation); `mcp.allowed` allows every tool of the servers
//! it names (`*` for all); `mcp.autoAllowInHeadless` allows them in a
//! headless run only; otherwise the call asks, and a headless run
//! (`gemini -p`) denies it (`defaultDecision: nonInteractive ? deny :
//! ask_user`). Policy TOML files and remote admin settings are not read.
//!
//! Qwen Code 0.24: `permissions.deny`, `.ask` and `.allow` (deny > ask >
//! allow) on `mcp__SERVER` (every tool), `mcp__SERVER__*` or
//! `mcp__SERVER__TOOL`; the older `tools.exclude` and `tools.allowed` the
//! same way; then `trust: true` in a trusted folder allows; otherwise the
//! call asks (what a headless run does is not read here).

use serde_json::{Map, Value};
use tether_core::inventory::{CallPolicy, CallVerdict, ToolCallPolicy, wildcard_match};
use tether_core::model::ProvenanceCode;
use tether_core::vocab::ReasonCode;
use tether_inventory::string_list;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Behavior {
    Deny,
    Ask,
    Allow,
}

/// A rule naming tools, as written, with its key and file.
#[derive(Debug, Clone)]
struct ToolRule {
    behavior: Behavior,
    text: String,
    key: &'static str,
    source: String,
}

/// The call rules merged from the settings files a session uses.
#[derive(Debug, Default)]
pub(crate) struct CallRules {
    /// Qwen Code's `mcp__SERVER__TOOL` names (else Gemini's `mcp_SERVER_TOOL`).
    qwen: bool,
    rules: Vec<ToolRule>,
    mcp_allowed: Option<(Vec<String>, String)>,
    headless_auto: Option<String>,
}

fn nested<'a>(doc: &'a Map<String, Value>, path: &[&str]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter().try_fold(doc.get(*first)?, |v, key| v.get(*key))
}

impl CallRules {
    /// Reads `files` (the settings in use, weakest first, with their shown
    /// sources).
    pub(crate) fn read(qwen: bool, files: &[(&Map<String, Value>, &str)]) -> Self {
        let keys: &[(&[&str], Behavior, &'static str)] = if qwen {
            &[
                (&["permissions", "deny"], Behavior::Deny, "permissions.deny"),
                (&["tools", "exclude"], Behavior::Deny, "tools.exclude"),
                (&["permissions", "ask"], Behavior::Ask, "permissions.ask"),
                (
                    &["permissions", "allow"],
                    Behavior::Allow,
                    "permissions.allow",
                ),
                (&["tools", "allowed"], Behavior::Allow, "tools.allowed"),
            ]
        } else {
            &[
                (&["tools", "exclude"], Behavior::Deny, "tools.exclude"),
                (
                    &["tools", "confirmationRequired"],
                    Behavior::Ask,
                    "tools.confirmationRequired",
                ),
                (&["tools", "allowed"], Behavior::Allow, "tools.allowed"),
            ]
        };
        let mut rules = CallRules {
            qwen,
            ..CallRules::default()
        };
        for (path, behavior, key) in keys {
            for (doc, source) in files {
                for text in string_list(nested(doc, path)) {
                    rules.rules.push(ToolRule {
                        behavior: *behavior,
                        text: text.trim().to_owned(),
                        key,
                        source: (*source).to_owned(),
                    });
                }
            }
        }
        for (doc, source) in files {
            if let Some(list) = nested(doc, &["mcp", "allowed"]) {
                rules.mcp_allowed = Some((string_list(Some(list)), (*source).to_owned()));
            }
            if let Some(on) = nested(doc, &["mcp", "autoAllowInHeadless"]).and_then(Value::as_bool)
            {
                rules.headless_auto = on.then(|| (*source).to_owned());
            }
        }
        rules
    }

    /// The tool name prefix of `server`'s tools.
    fn prefix(&self, server: &str) -> String {
        if self.qwen {
            format!("mcp__{server}__")
        } else {
            format!("mcp_{server}_")
        }
    }

    /// Whether `rule` covers `tool` of `server` (every tool when `None`).
    fn covers(&self, rule: &ToolRule, server: &str, tool: Option<&str>) -> bool {
        let prefix = self.prefix(server);
        let text = rule.text.as_str();
        let whole = text == format!("{prefix}*")
            || (self.qwen && text == format!("mcp__{server}"))
            || (text.contains('*') && wildcard_match(text, &format!("{prefix}\u{1}probe")));
        match tool {
            None => whole,
            Some(tool) => whole || wildcard_match(text, &format!("{prefix}{tool}")),
        }
    }

    /// The tool (name or pattern) of `server` a rule names alone.
    fn single_tool<'a>(&self, rule: &'a ToolRule, server: &str) -> Option<&'a str> {
        let tool = rule.text.strip_prefix(&self.prefix(server))?;
        (!tool.is_empty() && tool != "*").then_some(tool)
    }

    /// The prediction for every tool of `server` (its entry's `trust`, and
    /// whether the folder is trusted), with the tools single rules name.
    pub(crate) fn predict(
        &self,
        server: &str,
        trust: bool,
        folder_trusted: bool,
        source: &str,
    ) -> CallPolicy {
        let mut policy = self.decide(server, None, trust, folder_trusted, source);
        let mut named: Vec<&str> = Vec::new();
        for rule in &self.rules {
            if let Some(tool) = self.single_tool(rule, server)
                && !named.contains(&tool)
            {
                named.push(tool);
            }
        }
        for tool in named {
            let own = self.decide(server, Some(tool), trust, folder_trusted, source);
            if own.verdict != policy.verdict || own.rule != policy.rule {
                policy.tools.push(ToolCallPolicy {
                    tool: tool.to_owned(),
                    policy: own,
                });
            }
        }
        policy
    }

    fn decide(
        &self,
        server: &str,
        tool: Option<&str>,
        trust: bool,
        folder_trusted: bool,
        entry_source: &str,
    ) -> CallPolicy {
        let harness = if self.qwen { "Qwen Code" } else { "Gemini CLI" };
        let what = match tool {
            Some(tool) => format!("a call to {tool}"),
            None => "every call to its tools".to_owned(),
        };
        for behavior in [Behavior::Deny, Behavior::Ask, Behavior::Allow] {
            let Some(rule) = self
                .rules
                .iter()
                .find(|r| r.behavior == behavior && self.covers(r, server, tool))
            else {
                continue;
            };
            let (verdict, reason, headless, does) = match behavior {
                Behavior::Deny => (
                    CallVerdict::Denied,
                    Some(ReasonCode::PermissionDenied),
                    Some(true),
                    format!("{harness} refuses {what}"),
                ),
                Behavior::Ask => (
                    CallVerdict::NeedsApproval,
                    Some(ReasonCode::ApprovalRequired),
                    (!self.qwen).then_some(true),
                    format!("{harness} asks before {what}"),
                ),
                Behavior::Allow => (
                    CallVerdict::Allowed,
                    None,
                    Some(false),
                    format!("{harness} runs {what} without asking"),
                ),
            };
            return CallPolicy {
                verdict,
                headless_refuses: headless,
                provenance: ProvenanceCode::CurrentConfig,
                reason_code: reason,
                rule: Some(format!("{}: {}", rule.key, rule.text)),
                source: Some(rule.source.clone()),
                summary: format!("{} has {} in {}: {does}", rule.key, rule.text, rule.source),
                tools: Vec::new(),
            };
        }
        let allowed = |rule: String, source: &str, summary: String| CallPolicy {
            verdict: CallVerdict::Allowed,
            headless_refuses: Some(false),
            provenance: ProvenanceCode::CurrentConfig,
            reason_code: None,
            rule: Some(rule),
            source: Some(source.to_owned()),
            summary,
            tools: Vec::new(),
        };
        if trust && (folder_trusted || !self.qwen) {
            return allowed(
                "trust: true".into(),
                entry_source,
                format!(
                    "the entry has trust: true in {entry_source}: {harness} runs {what} without asking"
                ),
            );
        }
        if !self.qwen
            && let Some((list, source)) = &self.mcp_allowed
            && list.iter().any(|s| s == server || s == "*")
        {
            return allowed(
                format!("mcp.allowed: {server}"),
                source,
                format!("mcp.allowed names it in {source}: {harness} runs {what} without asking"),
            );
        }
        let headless = match (&self.headless_auto, self.qwen) {
            (_, true) => None,
            (Some(_), false) => Some(false),
            (None, false) => Some(true),
        };
        let tail = match headless {
            Some(true) => "; a headless run (gemini -p) refuses it",
            Some(false) => "; mcp.autoAllowInHeadless lets a headless run call it",
            None => "",
        };
        CallPolicy {
            verdict: CallVerdict::NeedsApproval,
            headless_refuses: headless,
            provenance: ProvenanceCode::DocumentedRule,
            reason_code: Some(ReasonCode::ApprovalRequired),
            rule: None,
            source: None,
            summary: format!("no setting allows it, so {harness} asks before {what}{tail}"),
            tools: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gemini_rules_trust_and_the_headless_default() {
        let user = json!({"tools": {"exclude": ["mcp_gh_delete_repo"], "allowed": ["mcp_db_*"]},
                          "mcp": {"allowed": ["gh", "db", "web"]}});
        let user = user.as_object().expect("an object");
        let rules = CallRules::read(false, &[(user, "~/.gemini/settings.json")]);
        let gh = rules.predict("gh", false, true, "~/.gemini/settings.json");
        assert_eq!(gh.verdict, CallVerdict::Allowed);
        assert_eq!(gh.for_tool("delete_repo").verdict, CallVerdict::Denied);
        assert_eq!(
            rules.predict("db", false, true, "x").rule.as_deref(),
            Some("tools.allowed: mcp_db_*")
        );
        let other = CallRules::read(false, &[]).predict("x", false, true, "x");
        assert_eq!(
            (other.verdict, other.headless_refuses),
            (CallVerdict::NeedsApproval, Some(true))
        );
        let trusted =
            CallRules::read(false, &[]).predict("x", true, true, "~/.gemini/settings.json");
        assert_eq!(trusted.verdict, CallVerdict::Allowed);
    }

    #[test]
    fn qwen_permissions_put_deny_before_ask_before_allow() {
        let doc = json!({"permissions": {"allow": ["mcp__gh"], "ask": ["mcp__gh__push"], "deny": ["mcp__gh__delete"]}});
        let doc = doc.as_object().expect("an object");
        let rules = CallRules::read(true, &[(doc, "~/.qwen/settings.json")]);
        let gh = rules.predict("gh", false, true, "x");
        assert_eq!(gh.verdict, CallVerdict::Allowed);
        assert_eq!(gh.for_tool("delete").verdict, CallVerdict::Denied);
        assert_eq!(gh.for_tool("push").verdict, CallVerdict::NeedsApproval);
        // trust counts only in a trusted folder.
        let none = CallRules::read(true, &[]);
        assert_eq!(
            none.predict("x", true, false, "x").verdict,
            CallVerdict::NeedsApproval
        );
        assert_eq!(
            none.predict("x", true, true, "x").verdict,
            CallVerdict::Allowed
        );
    }
}
