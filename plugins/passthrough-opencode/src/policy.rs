//! Whether OpenCode lets a call to an MCP tool run, as its `permission`
//! settings predict it (`call_policy` on the inventory row).
//!
//! Read from the pinned 1.18.33 binary: a tool from server `S` is named
//! `S_TOOL` (each part with characters outside `[A-Za-z0-9_-]` made `_`);
//! `permission` is an action (`ask`, `allow`, `deny`) for every tool, or an
//! object of tool-name patterns (`*` any run, `?` one character) to an
//! action or to `{pattern: action}`; the build agent starts from `"*":
//! "allow"` and the configuration's rules follow it, and the last rule that
//! matches decides (no match asks). A rule whose pattern is `*` and whose
//! action is `deny` also takes the tool out of the model's list.

use serde_json::{Map, Value};
use tether_core::inventory::{CallPolicy, CallVerdict, ToolCallPolicy};
use tether_core::model::ProvenanceCode;
use tether_core::vocab::ReasonCode;

/// One `permission` rule for calls (its pattern covers every call).
#[derive(Debug, Clone)]
struct Rule {
    tools: String,
    action: String,
    source: String,
}

/// The `permission` rules of every file, in load order.
#[derive(Debug, Default)]
pub(crate) struct Permissions {
    rules: Vec<Rule>,
}

/// `[A-Za-z0-9_-]` kept, anything else `_`, as OpenCode names tools.
fn tool_part(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// OpenCode's wildcard: `*` any run, `?` one character, whole text.
fn matches(pattern: &str, text: &str) -> bool {
    fn go(p: &[char], t: &[char]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some(('*', rest)) => (0..=t.len()).any(|i| go(rest, &t[i..])),
            Some(('?', rest)) => !t.is_empty() && go(rest, &t[1..]),
            Some((c, rest)) => t.first() == Some(c) && go(rest, &t[1..]),
        }
    }
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    go(&p, &t)
}

impl Permissions {
    /// Adds one file's `permission` (files in load order).
    pub(crate) fn absorb(&mut self, doc: &Map<String, Value>, source: &str) {
        let mut push = |tools: &str, action: &str| {
            self.rules.push(Rule {
                tools: tools.to_owned(),
                action: action.to_owned(),
                source: source.to_owned(),
            });
        };
        match doc.get("permission") {
            Some(Value::String(action)) => push("*", action),
            Some(Value::Object(rules)) => {
                for (tools, rule) in rules {
                    match rule {
                        Value::String(action) => push(tools, action),
                        // Only a `*` pattern covers a call whatever it is given.
                        Value::Object(by_pattern) => {
                            if let Some(action) = by_pattern.get("*").and_then(Value::as_str) {
                                push(tools, action);
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }

    /// The prediction for the tools of server `name`, with the tools rules
    /// name alone.
    pub(crate) fn predict(&self, name: &str) -> CallPolicy {
        let prefix = format!("{}_", tool_part(name));
        let mut policy = self.decide(&prefix, None);
        let mut named: Vec<&str> = Vec::new();
        for rule in &self.rules {
            if let Some(tool) = rule.tools.strip_prefix(&prefix)
                && !tool.is_empty()
                && tool != "*"
                && !named.contains(&tool)
            {
                named.push(tool);
            }
        }
        for tool in named {
            let own = self.decide(&prefix, Some(tool));
            if own.verdict != policy.verdict || own.rule != policy.rule {
                policy.tools.push(ToolCallPolicy {
                    tool: tool.to_owned(),
                    policy: own,
                });
            }
        }
        policy
    }

    fn decide(&self, prefix: &str, tool: Option<&str>) -> CallPolicy {
        let what = match tool {
            Some(tool) => format!("a call to {tool}"),
            None => "every call to its tools".to_owned(),
        };
        // Two names no real tool has stand for "every tool".
        let names: Vec<String> = match tool {
            Some(tool) => vec![format!("{prefix}{tool}")],
            None => vec![format!("{prefix}\u{1}one"), format!("{prefix}\u{1}two")],
        };
        let last = |name: &String| self.rules.iter().rposition(|r| matches(&r.tools, name));
        let found: Vec<Option<usize>> = names.iter().map(last).collect();
        let rule = match found.as_slice() {
            [Some(i), rest @ ..] if rest.iter().all(|j| *j == Some(*i)) => &self.rules[*i],
            [None, rest @ ..] if rest.iter().all(Option::is_none) => {
                return CallPolicy {
                    verdict: CallVerdict::Allowed,
                    headless_refuses: Some(false),
                    provenance: ProvenanceCode::DocumentedRule,
                    reason_code: None,
                    rule: Some("permission: \"*\": \"allow\" (the build agent's default)".into()),
                    source: None,
                    summary: format!(
                        "no permission rule names it, and OpenCode's build agent allows every tool by default: it runs {what} without asking"
                    ),
                    tools: Vec::new(),
                };
            }
            // Rules that cover only some of its tools: said per tool.
            _ => {
                return CallPolicy {
                    verdict: CallVerdict::NeedsApproval,
                    headless_refuses: None,
                    provenance: ProvenanceCode::CurrentConfig,
                    reason_code: None,
                    rule: None,
                    source: None,
                    summary: "permission rules cover some of its tools only; see each tool".into(),
                    tools: Vec::new(),
                };
            }
        };
        let written = format!("permission: {}: {}", rule.tools, rule.action);
        let (verdict, reason, does) = match rule.action.as_str() {
            "deny" => (
                CallVerdict::Denied,
                Some(ReasonCode::PermissionDenied),
                format!("OpenCode refuses {what} and leaves the tools out of the model's list"),
            ),
            "allow" => (
                CallVerdict::Allowed,
                None,
                format!("OpenCode runs {what} without asking"),
            ),
            _ => (
                CallVerdict::NeedsApproval,
                Some(ReasonCode::ApprovalRequired),
                format!("OpenCode asks before {what}"),
            ),
        };
        CallPolicy {
            verdict,
            headless_refuses: match verdict {
                CallVerdict::Allowed => Some(false),
                CallVerdict::Denied => Some(true),
                CallVerdict::NeedsApproval => None,
            },
            provenance: ProvenanceCode::CurrentConfig,
            reason_code: reason,
            rule: Some(written.clone()),
            source: Some(rule.source.clone()),
            summary: format!("{written} in {}: {does}", rule.source),
            tools: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_last_matching_rule_decides_and_the_default_allows() {
        let mut p = Permissions::default();
        let doc = json!({"permission": {"gh_*": "ask", "gh_delete_repo": "deny"}});
        p.absorb(
            doc.as_object().expect("an object"),
            "~/.config/opencode/opencode.json",
        );
        let gh = p.predict("gh");
        assert_eq!(gh.verdict, CallVerdict::NeedsApproval);
        assert_eq!(gh.for_tool("delete_repo").verdict, CallVerdict::Denied);
        let other = p.predict("my server");
        assert_eq!(
            (other.verdict, other.provenance),
            (CallVerdict::Allowed, ProvenanceCode::DocumentedRule)
        );
        let mut all = Permissions::default();
        all.absorb(
            json!({"permission": "deny"})
                .as_object()
                .expect("an object"),
            "x",
        );
        assert_eq!(all.predict("gh").verdict, CallVerdict::Denied);
        assert!(matches(
            "my_server_*",
            &format!("{}_x", tool_part("my server"))
        ));
    }

    /// The last match wins in the file's own order, not in key order:
    /// `gh_*` written after `gh_delete_repo` decides for it.
    #[test]
    fn rules_keep_the_order_of_their_file() {
        let doc: Value =
            serde_json::from_str(r#"{"permission": {"gh_delete_repo": "deny", "gh_*": "ask"}}"#)
                .expect("json");
        let mut p = Permissions::default();
        p.absorb(doc.as_object().expect("an object"), "x");
        assert_eq!(
            p.predict("gh").for_tool("delete_repo").verdict,
            CallVerdict::NeedsApproval
        );
    }
}
