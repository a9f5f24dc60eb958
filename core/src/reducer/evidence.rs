//! Sanitizing: evidence is scrubbed and matched to its row's name before
//! the fold sees it; nothing else makes a [`SanitizedEvidence`].

use super::*;

/// Evidence that passed [`sanitize_evidence`]; nothing else can make one.
#[derive(Debug, Clone, PartialEq)]
pub struct SanitizedEvidence {
    pub(super) evidence: Evidence,
    /// It named a server that belongs to no row of its attempt: it is then
    /// counted in `unattributed_evidence` (or, for an explicit error, kept as
    /// a report-level error), never applied to a row.
    pub(super) unattributed: bool,
}

impl SanitizedEvidence {
    /// The sanitized evidence.
    pub fn evidence(&self) -> &Evidence {
        &self.evidence
    }

    /// The sanitized evidence, owned.
    pub fn into_inner(self) -> Evidence {
        self.evidence
    }
}

/// Bounds and scrubs every string evidence carries, and attributes it to its
/// row. Pure. The hub passes a scrubber that knows the attempt's secret
/// values and the attempt's [`RowNames`], and hands the result to the reducer
/// as [`HistoryEvent::ObserveSanitized`]; raw evidence
/// ([`HistoryEvent::Observe`]) is scrubbed here with the patterns, so no path
/// into a history skips the sanitizer.
///
/// The server name is matched against the rows *before* scrubbing: a
/// reported name that belongs to a row becomes that row's shown name, so no
/// configured value the scrubber knows can cut evidence off its row. Any
/// other name is scrubbed and the evidence marked unattributed.
pub fn sanitize_evidence(
    evidence: &Evidence,
    scrubber: &Scrubber,
    rows: &RowNames,
) -> SanitizedEvidence {
    let name = |s: &Option<String>| s.as_deref().map(|v| scrubber.name(v));
    let (server, unattributed) = match evidence.server.as_deref() {
        None => (None, false),
        Some(reported) => match rows.resolve(reported) {
            Some(row) => (Some(row.to_owned()), false),
            None => (Some(scrubber.name(reported)), true),
        },
    };
    // Built field by field: every string is made once, by its sanitizer
    // (a clone first would allocate each string twice).
    let mut ev = Evidence {
        kind: evidence.kind.clone(),
        at: evidence.at,
        server,
        connection_id: evidence
            .connection_id
            .as_deref()
            .map(|c| sanitize::truncate_utf8(&sanitize::identifier(c), 64).to_owned()),
        reason_code: evidence.reason_code.clone(),
        summary: evidence.summary.as_deref().map(|s| scrubber.summary(s)),
        tool_count: evidence.tool_count,
        client: evidence.client.as_ref().map(|c| ClientInfo {
            name: scrubber.name(&c.name),
            version: name(&c.version),
            protocol_version: name(&c.protocol_version),
        }),
        provenance: evidence.provenance.clone(),
        tool: name(&evidence.tool),
        ok: evidence.ok,
        acp_session_id: evidence.acp_session_id.as_deref().map(sanitize::identifier),
        reported_status: evidence
            .reported_status
            .as_deref()
            .map(|s| reported_word(s, scrubber)),
        endpoint_test: evidence.endpoint_test.clone(),
        calls: evidence.calls,
        failed_calls: evidence.failed_calls,
        unknown_calls: evidence.unknown_calls,
        capability: evidence
            .capability
            .as_deref()
            .map(|c| Box::new(sanitize_capability(c, scrubber))),
    };
    if let Some(test) = ev.endpoint_test.as_mut() {
        test.summary = test.summary.as_deref().map(|s| scrubber.summary(s));
        test.target = scrubber.name(&test.target);
        test.server_name = name(&test.server_name);
        test.server_version = name(&test.server_version);
        test.protocol_version = name(&test.protocol_version);
    }
    SanitizedEvidence {
        evidence: ev,
        unattributed,
    }
}

/// A reported state as the attempt keeps it: a typed state's wire form;
/// a word no plugin typed only where it is a name that holds none of the
/// host's known secrets, else `unknown` (evidence may come off the wire,
/// never through [`Evidence::reported`]).
fn reported_word(word: &str, scrubber: &Scrubber) -> String {
    match ReportedStatus::parse(word).kept() {
        ReportedStatus::Other(w) if scrubber.name(&w) != w => ReportedStatus::Unknown,
        state => state,
    }
    .as_str()
    .to_owned()
}

/// A capability's names through the scrubber: a command keeps its
/// basename (nothing before a `/`), variables their names.
fn sanitize_capability(
    c: &crate::capability_event::CapabilityEvent,
    scrubber: &Scrubber,
) -> crate::capability_event::CapabilityEvent {
    let mut out = c.clone();
    out.name = scrubber.name(&c.name);
    out.plugin = c.plugin.as_deref().map(|p| scrubber.name(p));
    out.event = c.event.as_deref().map(|e| scrubber.name(e));
    out.command = c
        .command
        .as_deref()
        .map(|cmd| scrubber.name(cmd.rsplit('/').next().unwrap_or("?")));
    out.variables = c
        .variables
        .iter()
        .filter(|v| crate::capability_event::is_variable(v))
        .take(crate::capability_event::MAX_VARIABLES)
        .cloned()
        .collect();
    out
}
