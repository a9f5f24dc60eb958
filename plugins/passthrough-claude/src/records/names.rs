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

/// `answer` with each server that today's configuration names otherwise
/// (`configured`) under that name: Claude Code's configuration (and
/// `claude mcp list`) calls a plugin's server `plugin:X:Y`, its tools'
/// names and the records `plugin_X_Y` (the rule above), and one server is
/// one row. Costs nothing where no configured name has another form.
pub(super) fn as_configured(
    answer: tether_core::records::RecordAnswer,
    configured: &[String],
) -> tether_core::records::RecordAnswer {
    use tether_core::records::RecordAnswer;
    let has_other_form = |c: &String| {
        !c.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    let RecordAnswer::Read(mut reading) = answer else {
        return answer;
    };
    // Most records name no server: nothing to compute for them.
    let names_none =
        reading.servers.is_empty() && reading.evidence.iter().all(|e| e.server.is_none());
    if names_none || !configured.iter().any(has_other_form) {
        return RecordAnswer::Read(reading);
    }
    let forms: Vec<(String, &String)> = configured
        .iter()
        .filter(|c| has_other_form(c))
        .map(|c| (super::tool_name_of_server(c), c))
        .collect();
    let configured_as = |name: &str| {
        forms
            .iter()
            .find(|(form, _)| form == name)
            .map(|(_, c)| (*c).clone())
    };
    for e in &mut reading.evidence {
        if let Some(c) = e.server.as_deref().and_then(configured_as) {
            e.server = Some(c);
        }
    }
    for s in &mut reading.servers {
        if let Some(c) = configured_as(&s.name) {
            s.name = c;
        }
    }
    RecordAnswer::Read(reading)
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

    /// GIVEN today's configuration naming a plugin's server `plugin:X:Y`
    /// WHEN a record names it as its tools do (`plugin_X_Y`) THEN it is
    /// the configured server's row; other names stay as they are, and
    /// with no configuration nothing changes.
    #[test]
    fn a_plugin_s_server_is_named_as_configured() {
        use tether_core::records::{RecordAnswer, RecordReading};
        use tether_core::telemetry::NamedServer;
        let reading = || {
            let mut r = RecordReading::of(None);
            r.evidence = vec![
                server("plugin_ctx7_ctx7"),
                server("time"),
                server("claude_ai_Gmail"),
            ];
            r.servers = vec![NamedServer::new("plugin_ctx7_ctx7", None)];
            RecordAnswer::Read(r)
        };
        let names = |answer: RecordAnswer| match answer {
            RecordAnswer::Read(r) => (
                r.evidence
                    .iter()
                    .filter_map(|e| e.server.clone())
                    .collect::<Vec<_>>(),
                r.servers.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
            ),
            other => panic!("{other:?}"),
        };
        let configured = ["plugin:ctx7:ctx7".to_owned(), "time".to_owned()];
        let (evidence, servers) = names(as_configured(reading(), &configured));
        assert_eq!(evidence, ["plugin:ctx7:ctx7", "time", "claude_ai_Gmail"]);
        assert_eq!(servers, ["plugin:ctx7:ctx7"]);
        let (evidence, _) = names(as_configured(reading(), &[]));
        assert_eq!(evidence, ["plugin_ctx7_ctx7", "time", "claude_ai_Gmail"]);
    }
}
