//! The ground truth of the last mile: what the model was really sent. The
//! fake model logs the tool names of every request it is sent
//! ([`ModelLog`]); Tether's claims about each tool of a session must agree
//! with that log, whatever the harness did between the server's tools/list
//! and the model's request (renamed, deferred behind a search, filtered,
//! dropped).

use std::collections::BTreeSet;

use tether_core::history::AttachmentAttempt;
use tether_core::vocab::StageState;

use crate::fake_model::ModelLog;

/// Every tool name any request offered the model, as the harness spelled it.
pub fn sent(log: &ModelLog) -> BTreeSet<String> {
    log.turns().into_iter().flat_map(|t| t.tools).collect()
}

/// Tether's claims about the tools of some servers, against what the model
/// was sent.
#[derive(Debug, Default)]
pub struct LastMile {
    /// Claims the model's log contradicts: a tool called model-visible that
    /// no request held, or called deferred that a request held. Never
    /// acceptable.
    pub wrong: Vec<String>,
    /// Tools a request held of which Tether says nothing (no claim, not a
    /// wrong one): what a harness that records nothing of its requests
    /// leaves unknown.
    pub unseen: Vec<String>,
}

/// Where Tether's claims about the tools of `servers` in `attempt`
/// disagree with what the model was sent (`model_name` spells a server's
/// tool as the harness sends it, `mcp__time__get_current_time` say):
/// - a tool Tether calls model-visible must be in some request, unless it
///   was called (a call proves the model knew it);
/// - a tool Tether calls deferred (behind the harness's search) must be in
///   none;
/// - a tool of those servers in some request should have a row Tether
///   calls model-visible (else it is unseen).
pub fn compare(
    attempt: &AttachmentAttempt,
    log: &ModelLog,
    servers: &[&str],
    model_name: impl Fn(&str, &str) -> String,
) -> LastMile {
    let sent = sent(log);
    let mut problems = Vec::new();
    let mut unseen = Vec::new();
    let mut claimed = BTreeSet::new();
    for row in attempt
        .servers
        .iter()
        .filter(|r| servers.contains(&r.name.as_str()))
    {
        for tool in &row.tools {
            // A name the harness only hashed (Copilot's telemetry, for a
            // tool no configuration names) cannot be spelled: not checked.
            if tool.name.starts_with("sha256:") {
                continue;
            }
            let name = model_name(&row.name, &tool.name);
            let visible = tool.model_visible.state == StageState::Yes;
            // A tool the model called it knew, whatever carried its
            // definition (a search's result, a harness's proxy tool such as
            // Qwen Code's `tool_call`): a call is its own proof.
            let called = tool.called.state == StageState::Yes;
            if visible {
                claimed.insert(name.clone());
                if !sent.contains(&name) && !called {
                    problems.push(format!(
                        "{}/{}: Tether says it reached the model, but no request held {name}",
                        row.name, tool.name
                    ));
                }
            }
            if tool.is_deferred() && sent.contains(&name) {
                problems.push(format!(
                    "{}/{}: Tether says it was deferred, but a request held {name}",
                    row.name, tool.name
                ));
            }
        }
    }
    for server in servers {
        // What the harness puts before a tool's name for this server.
        let probe = model_name(server, "last_mile_probe");
        let prefix = probe
            .strip_suffix("last_mile_probe")
            .unwrap_or(&probe)
            .to_owned();
        for name in sent.iter().filter(|n| n.starts_with(&prefix)) {
            if !claimed.contains(name) {
                unseen.push(format!(
                    "{name} was sent to the model, but Tether has no row saying so"
                ));
            }
        }
    }
    LastMile {
        wrong: problems,
        unseen,
    }
}

/// A folder Gemini CLI reads a system settings file from, where this run
/// has one: Gemini 0.61 ignores a system settings file unless it and
/// every folder above it is owned by root and writable by no group or
/// other (`isFileAndDirectorySecureSync` and `checkPosixStatsSecurity`,
/// bundle/chunk-JDPZ4CE3.js:365641 and :365843). So a checkout under
/// `/tmp` (mode 1777), or a run as another user, has none. Tried in turn:
/// `scratch` (the test's `CARGO_TARGET_TMPDIR`), then the home folder; the
/// error says why neither.
pub fn gemini_trusted_dir(scratch: &std::path::Path) -> Result<std::path::PathBuf, String> {
    use std::os::unix::fs::MetadataExt;
    let trusted = |dir: &std::path::Path| -> Result<(), String> {
        for folder in dir.ancestors() {
            let meta =
                std::fs::metadata(folder).map_err(|e| format!("{}: {e}", folder.display()))?;
            if meta.uid() != 0 || meta.mode() & 0o022 != 0 {
                return Err(format!(
                    "{} is owned by uid {} with mode {:o}",
                    folder.display(),
                    meta.uid(),
                    meta.mode() & 0o7777
                ));
            }
        }
        Ok(())
    };
    let mut why = Vec::new();
    let candidates = [
        Some(scratch.to_path_buf()),
        std::env::var_os("HOME").map(std::path::PathBuf::from),
    ];
    for dir in candidates.into_iter().flatten() {
        match trusted(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) => why.push(e),
        }
    }
    Err(why.join("; "))
}
