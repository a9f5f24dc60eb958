//! Issue 67 §2: a server Claude Code's init line reports `pending` was
//! delivered to it (the harness lists the clients it holds), so the
//! furthest stage shown is `delivered`, with the harness's word kept as
//! the row's note; never `enabled` as if nothing showed the harness had it.

use tether_core::records::RecordAnswer;
use tether_core::vocab::{EvidenceKind, ReportedStatus};
use tether_passthrough_claude::records::{STREAM_JSON, plain, read_as};

/// The init line of a real 2.1.197 run (`claude -p hi --mcp-config F
/// --strict-mcp-config --output-format stream-json --verbose`, `slow` a
/// stdio server that never answers, the model API on a closed port, a
/// private HOME), as printed.
const PINNED_INIT: &str = r#"{"type":"system","subtype":"init","cwd":"/tmp/tmp.oSKT3mg2lB","session_id":"28ba48af-a896-4bff-8453-2ddaaf01c8e0","tools":["Task","Bash","CronCreate","CronDelete","CronList","DesignSync","Edit","EnterWorktree","ExitWorktree","NotebookEdit","Read","ReportFindings","ScheduleWakeup","SendMessage","Skill","TaskCreate","TaskGet","TaskList","TaskOutput","TaskStop","TaskUpdate","WaitForMcpServers","WebFetch","WebSearch","Workflow","Write"],"mcp_servers":[{"name":"slow","status":"pending"}],"model":"claude-opus-4-8[1m]","permissionMode":"default","slash_commands":["deep-research","design-sync","update-config","verify","debug","code-review","simplify","batch","fewer-permission-prompts","loop","claude-api","run","run-skill-generator","clear","compact","config","context","heapdump","init","reload-skills","review","security-review","usage","insights","goal","team-onboarding"],"apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.197","output_style":"default","agents":["claude","Explore","general-purpose","Plan","statusline-setup"],"skills":["deep-research","design-sync","update-config","verify","debug","code-review","simplify","batch","fewer-permission-prompts","loop","claude-api","run","run-skill-generator"],"plugins":[],"analytics_disabled":false,"product_feedback_disabled":false,"uuid":"fa5875cd-2138-4ad0-9d52-c4273d530e6f","memory_paths":{"auto":"/tmp/tmp.jbuQwLRNWC/.claude/projects/-tmp-tmp-oSKT3mg2lB/memory/"},"fast_mode_state":"off"}"#;

/// GIVEN a real init line whose one server is `pending` WHEN read (the
/// fast way and the plain way, the same) THEN it reports `slow` pending,
/// with the harness's word as its note, and says it was delivered (by the
/// harness's own report), and nothing further.
#[test]
fn a_pending_server_was_delivered_and_says_the_harness_s_word() {
    let fast = read_as(STREAM_JSON, &["run.jsonl"], PINNED_INIT);
    assert_eq!(fast, plain::stream_json(PINNED_INIT));
    let RecordAnswer::Read(reading) = fast else {
        panic!("{fast:?}");
    };
    let about_slow: Vec<_> = reading
        .evidence
        .iter()
        .filter(|e| e.server.as_deref() == Some("slow"))
        .collect();
    let [report, delivered] = about_slow.as_slice() else {
        panic!("{about_slow:?}");
    };
    assert_eq!(report.kind, EvidenceKind::AgentReported);
    assert_eq!(report.reported_state(), Some(ReportedStatus::Pending));
    let note = report.summary.as_deref().unwrap_or_default();
    assert!(note.contains("pending"), "the harness's word: {note}");
    assert_eq!(delivered.kind, EvidenceKind::Delivered);
    assert_eq!(delivered.provenance, report.provenance);
}

/// GIVEN the same line with `slow` connected or failed WHEN read THEN no
/// separate delivery is said (their reports show the stage themselves) and
/// no pending note is given.
#[test]
fn only_a_pending_report_says_delivered_on_its_own() {
    for status in ["connected", "failed", "needs-auth"] {
        let line = PINNED_INIT.replace(r#""status":"pending""#, &format!(r#""status":"{status}""#));
        let RecordAnswer::Read(reading) = read_as(STREAM_JSON, &["run.jsonl"], &line) else {
            panic!("{line}");
        };
        assert!(
            reading
                .evidence
                .iter()
                .all(|e| e.kind != EvidenceKind::Delivered
                    && e.summary.as_deref().is_none_or(|s| !s.contains("pending"))),
            "{status}: {:?}",
            reading.evidence
        );
    }
}
