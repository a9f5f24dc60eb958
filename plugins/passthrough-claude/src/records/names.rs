//! A server as Claude Code's stream-json `system/init` names it, read as
//! the name its tools carry (`mcp__NAME__TOOL`), so one server is one row
//! whichever record names it: a claude.ai connector (`claude.ai Gmail`,
//! `source: "claudeai"`, real 2.1.276 init lines) is `claude_ai_Gmail`, a
//! plugin's server (`plugin:ctx7:ctx7`) is `plugin_ctx7_ctx7`. The rule is
//! Claude Code's own ([`super::tool_name_of_server`]: 2.1.197's
//! `function Gl(e){let t=e.replace(/[^a-zA-Z0-9_-]/g,"_");if(e.startsWith(
//! "claude.ai "))t=t.replace(/_+/g,"_").replace(/^_|_$/g,"");return t}`,
//! claude.exe offset 226673780, beside `oI`, which splits `mcp__` names).
//! The name as shown is kept for people as the row's note, where it is a
//! plain name.

use tether_core::model::Evidence;
use tether_core::records::name;

/// The note a server shown under another name carries: `shown` is kept
/// only where it is a plain name (letters, digits, spaces and a few
/// marks, at most 64 bytes, unchanged by sanitizing).
pub(super) fn shown_as(shown: &str) -> Option<String> {
    let plain = shown.len() <= 64
        && shown
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '.' | '-' | '_' | '(' | ')' | ':'))
        && tether_core::sanitize::name(shown) == shown;
    plain.then(|| format!("shown in Claude Code as \u{201c}{shown}\u{201d}"))
}

/// `evidence` of an init line, each server named as its tools are. A
/// name with no such form (garbage: too long, empty) is left as written,
/// so the host's name check refuses the reading, as it refuses garbage.
pub(super) fn as_tools_name_them(evidence: Vec<Evidence>) -> Vec<Evidence> {
    evidence
        .into_iter()
        .map(|mut e| {
            let Some(shown) = e.server.clone() else {
                return e;
            };
            let Some(named) = name(&super::tool_name_of_server(shown.trim())) else {
                return e;
            };
            if named != shown {
                e.server = Some(named);
                if e.summary.is_none() {
                    e.summary = shown_as(shown.trim());
                }
            }
            e
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_core::model::Timestamp;
    use tether_core::vocab::EvidenceKind;

    fn server(name: &str) -> Evidence {
        Evidence::new(EvidenceKind::AgentReported, Timestamp(0)).server(name)
    }

    #[test]
    fn a_server_is_named_as_its_tools_are_and_garbage_stays_garbage() {
        let long = format!("claude.ai {}", "x".repeat(400));
        let got = as_tools_name_them(vec![
            server("claude.ai Gmail"),
            server("plugin:ctx7:ctx7"),
            server("time"),
            server(&long),
        ]);
        let names: Vec<_> = got.iter().filter_map(|e| e.server.as_deref()).collect();
        assert_eq!(
            names,
            ["claude_ai_Gmail", "plugin_ctx7_ctx7", "time", long.as_str()]
        );
        assert_eq!(
            got[0].summary.as_deref(),
            Some("shown in Claude Code as \u{201c}claude.ai Gmail\u{201d}")
        );
        assert_eq!(got[2].summary, None);
    }
}
