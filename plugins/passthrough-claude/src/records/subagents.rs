//! Where a sub-agent's transcript is (a Task or Explore agent, a
//! compaction, a workflow's agent): beside its parent's,
//! `projects/<cwd slug>/<session>/subagents/[<subdir>/…]agent-<id>.jsonl`.
//! Its records carry the parent's `sessionId` (with `agentId` and
//! `isSidechain: true`), so the MCP calls a sub-agent made count for the
//! session that started it.
//!
//! The path in Claude Code's own code: 2.1.197
//! `function Tk(e){…r=Kco.get(e),o=r?sDe.join(t,n,"subagents",r):sDe.join(t,n,"subagents");return sDe.join(o,`agent-${e}.jsonl`)}`
//! (claude.exe offset 230830839; a workflow's agents under
//! `subagents/workflows/<run>`: `function voe(e){…join(t,Lt(),"subagents","workflows",e)}`,
//! offset 232872197); 2.1.332 `function Hg(t){let e=…agentTranscriptSubdirs.get(t),n=e?s(Q6t(),e):Q6t();return s(n,`agent-${t}.jsonl`)}`
//! (offset 334300724; a path's `agentRelPath`, any depth, offset
//! 340409287). Real transcripts of 2.1.38, 2.1.39 and 2.1.220 are at
//! `subagents/agent-<id>.jsonl`.

use tether_core::records::RecordSource;

use super::TRANSCRIPT;

/// A sub-agent directly under `subagents/`.
pub(super) const AGENT: &str = "projects/*/*/subagents/agent-*.jsonl";
/// A sub-agent one directory down (a subdirectory Claude Code was given).
pub(super) const AGENT_IN_DIR: &str = "projects/*/*/subagents/*/agent-*.jsonl";
/// A workflow's agent (`subagents/workflows/<run>/`).
pub(super) const AGENT_IN_RUN: &str = "projects/*/*/subagents/*/*/agent-*.jsonl";

/// The source of the sub-agent transcripts at `pattern`, read as
/// transcripts.
pub(super) fn source(pattern: &str) -> RecordSource {
    RecordSource::lines(TRANSCRIPT, ".claude", pattern).moved_by("CLAUDE_CONFIG_DIR", "")
}
