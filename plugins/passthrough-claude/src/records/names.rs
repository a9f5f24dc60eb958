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

/// `evidence` of an init line, each server named as its tools are; a
/// server whose name has no such form is left out.
pub(super) fn as_tools_name_them(evidence: Vec<Evidence>) -> Vec<Evidence> {
    evidence
        .into_iter()
        .filter_map(|mut e| {
            let Some(shown) = e.server.clone() else {
                return Some(e);
            };
            let named = super::tool_name_of_server(shown.trim());
            if named == shown {
                return Some(e);
            }
            e.server = Some(name(&named)?);
            if e.summary.is_none() {
                e.summary = shown_as(shown.trim());
            }
            Some(e)
        })
        .collect()
}
