//! Whether Claude Code lets a call to an MCP tool run: its permission
//! rules and mode, read from every settings file it merges, and what they
//! predict per server and per tool (`call_policy` on the inventory row).
//!
//! Read from the shipped 2.1.197 and 2.1.332 bundles:
//! - rules are `permissions.allow`, `.deny` and `.ask` strings in managed
//!   settings (`managed-settings.json`, then `managed-settings.d/*.json`, in
//!   `/etc/claude-code` or the folder `CLAUDE_CODE_MANAGED_SETTINGS_PATH`
//!   names), `~/.claude/settings.json`, `.claude/settings.json` and
//!   `.claude/settings.local.json`; `allowManagedPermissionRulesOnly: true`
//!   in managed settings drops every other file's rules;
//! - a rule names an MCP tool as `mcp__SERVER__TOOL` (the server's name
//!   with every character outside `[A-Za-z0-9_-]` made `_`; a plugin's
//!   server is `plugin_PLUGIN_SERVER`); `mcp__SERVER` and `mcp__SERVER__*`
//!   cover every tool of the server; `*` in the tool part is a wildcard; a
//!   rule with `(content)` never matches an MCP tool; deny and ask rules
//!   also match the whole name as a wildcard (`mcp__*`);
//! - the order: a deny rule refuses; an ask rule asks; `bypassPermissions`
//!   mode allows (unless managed settings disable it); an allow rule allows;
//!   otherwise the call asks, which `dontAsk` mode turns into a refusal and
//!   a headless run (`claude -p` without a permission prompt tool) refuses
//!   too ("permission prompts are not available in this context").

use serde_json::{Map, Value};
use tether_core::inventory::{CallPolicy, CallVerdict, ToolCallPolicy};
use tether_core::model::ProvenanceCode;
use tether_core::vocab::ReasonCode;
use tether_inventory::string_list;

/// allow, ask or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Behavior {
    Deny,
    Ask,
    Allow,
}

impl Behavior {
    fn key(self) -> &'static str {
        match self {
            Behavior::Deny => "deny",
            Behavior::Ask => "ask",
            Behavior::Allow => "allow",
        }
    }
}

/// One `mcp__…` permission rule, and the file it is in.
#[derive(Debug, Clone)]
struct Rule {
    behavior: Behavior,
    text: String,
    source: String,
    managed: bool,
}

/// The permission settings merged from every file Claude reads them from.
#[derive(Debug, Default)]
pub(crate) struct Permissions {
    rules: Vec<Rule>,
    /// `permissions.defaultMode` from the strongest file that sets it.
    mode: Option<(String, String)>,
    /// Managed settings disable bypassPermissions mode (the file).
    bypass_disabled: Option<String>,
    /// Managed settings keep only their own rules (the file).
    managed_only: Option<String>,
}

/// The name Claude gives a server in tool names (`mcp__NAME__tool`).
pub(crate) fn tool_prefix_name(server: &str) -> String {
    server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `mcp__SERVER[__TOOL]` split as Claude splits it: the server, and the
/// rest joined back (absent for a bare `mcp__SERVER`).
fn split_mcp(name: &str) -> Option<(&str, Option<&str>)> {
    let rest = name.strip_prefix("mcp__")?;
    let (server, tool) = match rest.split_once("__") {
        Some((server, tool)) => (server, Some(tool)),
        None => (rest, None),
    };
    (!server.is_empty()).then_some((server, tool))
}

/// A rule's tool name, or `None` when it has `(content)` (which never
/// matches an MCP tool).
fn rule_tool_name(rule: &str) -> Option<&str> {
    let rule = rule.trim();
    match rule.find('(') {
        Some(open) if rule.ends_with(')') && open > 0 => None,
        _ => Some(rule),
    }
}

impl Rule {
    /// Whether the rule covers the tool `tool` of the server Claude names
    /// `server` in tool names.
    fn matches(&self, server: &str, tool: &str) -> bool {
        let Some(name) = rule_tool_name(&self.text) else {
            return false;
        };
        let full = format!("mcp__{server}__{tool}");
        if name == full {
            return true;
        }
        // Deny and ask rules match the whole name as a wildcard too.
        if self.behavior != Behavior::Allow
            && name.contains('*')
            && tether_core::inventory::wildcard_match(name, &full)
        {
            return true;
        }
        match split_mcp(name) {
            Some((s, t)) if s == server => match t {
                None | Some("*") => true,
                Some(pattern) if pattern.contains('*') => {
                    tether_core::inventory::wildcard_match(pattern, tool)
                }
                Some(_) => false,
            },
            _ => false,
        }
    }

    /// The tool (name or pattern) of `server` the rule names alone, when it
    /// does not cover the whole server.
    fn single_tool<'a>(&'a self, server: &str) -> Option<&'a str> {
        let name = rule_tool_name(&self.text)?;
        match split_mcp(name)? {
            (s, Some(tool)) if s == server && tool != "*" && !tool.is_empty() => Some(tool),
            _ => None,
        }
    }
}

/// Two tool names no rule written for a real tool names: a rule matching
/// both covers the whole server (Claude probes the same way).
const PROBES: [&str; 2] = ["\u{1}probe_tool_one", "\u{1}probe_tool_two"];

impl Permissions {
    /// Adds one settings file's permission settings (`managed` for the
    /// administrator's files). Files come weakest first: user, project,
    /// local, then managed.
    pub(crate) fn absorb(&mut self, doc: &Map<String, Value>, source: &str, managed: bool) {
        let permissions = doc.get("permissions").and_then(Value::as_object);
        for behavior in [Behavior::Deny, Behavior::Ask, Behavior::Allow] {
            let list = permissions.and_then(|p| p.get(behavior.key()));
            for text in string_list(list) {
                if text.trim_start().starts_with("mcp__") {
                    self.rules.push(Rule {
                        behavior,
                        text: text.trim().to_owned(),
                        source: source.to_owned(),
                        managed,
                    });
                }
            }
        }
        if let Some(mode) = permissions
            .and_then(|p| p.get("defaultMode"))
            .and_then(Value::as_str)
        {
            // Later files win; managed settings come last.
            self.mode = Some((mode.to_owned(), source.to_owned()));
        }
        if managed {
            if permissions
                .and_then(|p| p.get("disableBypassPermissionsMode"))
                .and_then(Value::as_str)
                == Some("disable")
            {
                self.bypass_disabled = Some(source.to_owned());
            }
            if doc
                .get("allowManagedPermissionRulesOnly")
                .and_then(Value::as_bool)
                == Some(true)
            {
                self.managed_only = Some(source.to_owned());
            }
        }
    }

    /// The rules Claude keeps: only managed ones under
    /// `allowManagedPermissionRulesOnly`.
    fn effective(&self) -> impl Iterator<Item = &Rule> {
        let managed_only = self.managed_only.is_some();
        self.rules
            .iter()
            .filter(move |r| r.managed || !managed_only)
    }

    /// The prediction for every tool of the server configured as `name`,
    /// with the tools single rules name.
    pub(crate) fn predict(&self, name: &str) -> CallPolicy {
        let server = tool_prefix_name(name);
        let mut policy = self.decide(&server, None);
        let mut named: Vec<&str> = Vec::new();
        // Deny, then ask, then allow: the order Claude weighs them.
        for behavior in [Behavior::Deny, Behavior::Ask, Behavior::Allow] {
            for rule in self.effective().filter(|r| r.behavior == behavior) {
                if let Some(tool) = rule.single_tool(&server)
                    && !named.contains(&tool)
                {
                    named.push(tool);
                }
            }
        }
        for tool in named {
            let own = self.decide(&server, Some(tool));
            if own.verdict != policy.verdict || own.rule != policy.rule {
                policy.tools.push(ToolCallPolicy {
                    tool: tool.to_owned(),
                    policy: own,
                });
            }
        }
        policy
    }

    /// What Claude decides for `tool` of `server` (every tool when `None`).
    fn decide(&self, server: &str, tool: Option<&str>) -> CallPolicy {
        let covers = |rule: &Rule| match tool {
            Some(tool) => rule.matches(server, tool),
            None => PROBES.iter().all(|probe| rule.matches(server, probe)),
        };
        let what = match tool {
            Some(tool) => format!("a call to {tool}"),
            None => "every call to its tools".to_owned(),
        };
        let find = |behavior| {
            self.effective()
                .find(|r| r.behavior == behavior && covers(r))
        };
        if let Some(rule) = find(Behavior::Deny) {
            let (reason, summary) = if rule.managed {
                (
                    ReasonCode::DeniedByPolicy,
                    format!(
                        "denied by managed policy ({}): permissions.deny has {} there, so Claude refuses {what}",
                        rule.source, rule.text
                    ),
                )
            } else {
                (
                    ReasonCode::PermissionDenied,
                    format!(
                        "permissions.deny has {} in {}, so Claude refuses {what}",
                        rule.text, rule.source
                    ),
                )
            };
            return from_rule(CallVerdict::Denied, None, reason, rule, summary);
        }
        if let Some(rule) = find(Behavior::Ask) {
            let summary = format!(
                "permissions.ask has {} in {}, so Claude asks before {what}; a headless run (claude -p) refuses it",
                rule.text, rule.source
            );
            return from_rule(
                CallVerdict::NeedsApproval,
                Some(true),
                ReasonCode::ApprovalRequired,
                rule,
                summary,
            );
        }
        let mode = self.mode.as_ref();
        if let Some((m, source)) = mode
            && m == "bypassPermissions"
            && self.bypass_disabled.is_none()
        {
            return CallPolicy {
                verdict: CallVerdict::Allowed,
                headless_refuses: Some(false),
                provenance: ProvenanceCode::CurrentConfig,
                reason_code: None,
                rule: Some("permissions.defaultMode: bypassPermissions".into()),
                source: Some(source.clone()),
                summary: format!(
                    "permissions.defaultMode is bypassPermissions in {source}: Claude runs {what} without asking"
                ),
                tools: Vec::new(),
            };
        }
        if let Some(rule) = find(Behavior::Allow) {
            let summary = format!(
                "permissions.allow has {} in {}: Claude runs {what} without asking",
                rule.text, rule.source
            );
            let mut policy = from_rule(
                CallVerdict::Allowed,
                Some(false),
                ReasonCode::ApprovalRequired,
                rule,
                summary,
            );
            policy.reason_code = None;
            return policy;
        }
        match mode.map(|(m, s)| (m.as_str(), s)) {
            Some(("dontAsk", source)) => CallPolicy {
                verdict: CallVerdict::Denied,
                headless_refuses: Some(true),
                provenance: ProvenanceCode::CurrentConfig,
                reason_code: Some(ReasonCode::PermissionDenied),
                rule: Some("permissions.defaultMode: dontAsk".into()),
                source: Some(source.clone()),
                summary: format!(
                    "permissions.defaultMode is dontAsk in {source} and no permission rule allows it: Claude refuses {what} instead of asking"
                ),
                tools: Vec::new(),
            },
            Some(("auto", source)) => CallPolicy {
                verdict: CallVerdict::NeedsApproval,
                headless_refuses: None,
                provenance: ProvenanceCode::DocumentedRule,
                reason_code: Some(ReasonCode::ApprovalRequired),
                rule: Some("permissions.defaultMode: auto".into()),
                source: Some(source.clone()),
                summary: format!(
                    "permissions.defaultMode is auto in {source} and no permission rule allows it: Claude's classifier decides each call"
                ),
                tools: Vec::new(),
            },
            _ => CallPolicy {
                verdict: CallVerdict::NeedsApproval,
                headless_refuses: Some(true),
                provenance: ProvenanceCode::DocumentedRule,
                reason_code: Some(ReasonCode::ApprovalRequired),
                rule: None,
                source: None,
                summary: format!(
                    "no permission rule allows it, so Claude asks before {what}; a headless run (claude -p) refuses it"
                ),
                tools: Vec::new(),
            },
        }
    }
}

fn from_rule(
    verdict: CallVerdict,
    headless: Option<bool>,
    reason: ReasonCode,
    rule: &Rule,
    summary: String,
) -> CallPolicy {
    CallPolicy {
        verdict,
        headless_refuses: headless,
        provenance: ProvenanceCode::CurrentConfig,
        reason_code: Some(reason),
        rule: Some(format!(
            "permissions.{}: {}",
            rule.behavior.key(),
            rule.text
        )),
        source: Some(rule.source.clone()),
        summary,
        tools: Vec::new(),
    }
}

/// Whether a hook matcher for a tool event names a server alone
/// (`mcp__SERVER`), which Claude compares as an exact tool name and so
/// never matches: a matcher of only `[A-Za-z0-9_|, -]` is a list of exact
/// names split on `|` and `,` (2.1.197 warns "matches no tool (it is
/// compared as an exact string)"; 2.1.332 keeps the rule). Returns the
/// bare name.
pub(crate) fn bare_server_matcher(matcher: &str) -> Option<&str> {
    let plain = !matcher.is_empty()
        && matcher
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '|' | ',' | ' ' | '-'));
    if !plain {
        return None;
    }
    matcher.split(['|', ',']).map(str::trim).find(|name| {
        name.strip_prefix("mcp__")
            .is_some_and(|rest| !rest.contains("__"))
    })
}

/// The events whose matcher is a tool name.
pub(crate) const TOOL_EVENTS: [&str; 5] = [
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "PermissionDenied",
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn permissions(docs: &[(serde_json::Value, &str, bool)]) -> Permissions {
        let mut p = Permissions::default();
        for (doc, source, managed) in docs {
            p.absorb(doc.as_object().expect("an object"), source, *managed);
        }
        p
    }

    #[test]
    fn rules_match_as_claude_matches_them() {
        let rule = |behavior, text: &str| Rule {
            behavior,
            text: text.into(),
            source: "~/.claude/settings.json".into(),
            managed: false,
        };
        assert!(rule(Behavior::Allow, "mcp__gh").matches("gh", "list"));
        assert!(rule(Behavior::Allow, "mcp__gh__*").matches("gh", "list"));
        assert!(rule(Behavior::Allow, "mcp__gh__list").matches("gh", "list"));
        assert!(!rule(Behavior::Allow, "mcp__gh__list").matches("gh", "push"));
        assert!(rule(Behavior::Allow, "mcp__gh__li*").matches("gh", "list"));
        assert!(!rule(Behavior::Allow, "mcp__gh").matches("ghx", "list"));
        // A whole-name wildcard counts for deny and ask only.
        assert!(rule(Behavior::Deny, "mcp__*").matches("gh", "list"));
        assert!(!rule(Behavior::Allow, "mcp__*").matches("gh", "list"));
        // Content never matches an MCP tool.
        assert!(!rule(Behavior::Deny, "mcp__gh__list(x)").matches("gh", "list"));
        assert_eq!(tool_prefix_name("plugin:p:my srv"), "plugin_p_my_srv");
    }

    #[test]
    fn deny_beats_ask_beats_mode_beats_allow_and_the_default_asks() {
        let p = permissions(&[(
            json!({"permissions": {"allow": ["mcp__gh"], "ask": ["mcp__gh__push"], "deny": ["mcp__gh__delete"]}}),
            "~/.claude/settings.json",
            false,
        )]);
        let policy = p.predict("gh");
        assert_eq!(policy.verdict, CallVerdict::Allowed);
        assert_eq!(policy.for_tool("delete").verdict, CallVerdict::Denied);
        assert_eq!(
            policy.for_tool("delete").reason_code,
            Some(ReasonCode::PermissionDenied)
        );
        assert_eq!(policy.for_tool("push").verdict, CallVerdict::NeedsApproval);
        assert_eq!(policy.for_tool("list").verdict, CallVerdict::Allowed);
        let other = p.predict("other");
        assert_eq!(other.verdict, CallVerdict::NeedsApproval);
        assert_eq!(other.headless_refuses, Some(true));
        assert_eq!(other.provenance, ProvenanceCode::DocumentedRule);
    }

    #[test]
    fn managed_rules_and_modes() {
        let p = permissions(&[
            (
                json!({"permissions": {"allow": ["mcp__gh"], "defaultMode": "bypassPermissions"}}),
                "$PROJECT/.claude/settings.json",
                false,
            ),
            (
                json!({"allowManagedPermissionRulesOnly": true,
                       "permissions": {"deny": ["mcp__db__*"], "disableBypassPermissionsMode": "disable"}}),
                "/etc/claude-code/managed-settings.json",
                true,
            ),
        ]);
        let db = p.predict("db");
        assert_eq!(db.verdict, CallVerdict::Denied);
        assert_eq!(db.reason_code, Some(ReasonCode::DeniedByPolicy));
        assert!(
            db.summary
                .contains("denied by managed policy (/etc/claude-code/managed-settings.json)")
        );
        // The project's allow rule is dropped, and bypass is disabled.
        assert_eq!(p.predict("gh").verdict, CallVerdict::NeedsApproval);
        let dont = permissions(&[(
            json!({"permissions": {"defaultMode": "dontAsk"}}),
            "~/.claude/settings.json",
            false,
        )]);
        assert_eq!(dont.predict("gh").verdict, CallVerdict::Denied);
    }

    #[test]
    fn bare_server_matchers_are_found() {
        assert_eq!(bare_server_matcher("mcp__github"), Some("mcp__github"));
        assert_eq!(bare_server_matcher("Bash|mcp__github"), Some("mcp__github"));
        assert_eq!(bare_server_matcher("mcp__github__.*"), None);
        assert_eq!(bare_server_matcher("mcp__github__list"), None);
        assert_eq!(bare_server_matcher("mcp__.*"), None);
        assert_eq!(bare_server_matcher("Bash"), None);
    }
}
