//! Claude Code's words for a call that never reached its server, beyond
//! those [`super::error_said`] knows, and the SDK's own stamp of why a
//! result is no execution's (`tool_result_meta`). Compared with Claude
//! Code's constant words only; the words are never kept.

use std::borrow::Cow;

use serde::Deserialize;
use tether_core::capability::CapabilityEvent;
use tether_core::vocab::ReasonCode;

use super::ErrorWords;

/// A person said no at the prompt: the rejection's result words, in
/// 2.1.197 (`ize="The user doesn't want to proceed with this tool use. The
/// tool use was rejected (eg. …`, claude.exe offset 239517146) and 2.1.332
/// (`tpa=`, offset 330623224); real transcripts of 2.1.38/2.1.39 carry the
/// same words beside `"toolUseResult":"User rejected tool use"`.
const REJECTED: &str = "The user doesn't want to proceed with this tool use.";

/// A prompt that could not be shown (a sub-agent's, 2.1.29 in a real
/// transcript: `Permission to use Write has been auto-denied (prompts
/// unavailable).`): it needed a person's approval and no one could give it.
const AUTO_DENIED: (&str, &str) = ("Permission to use ", " has been auto-denied");

/// What these words say of a failed call, where they are one of the
/// refusals above.
pub(super) fn said(words: &str) -> Option<ErrorWords> {
    let words = words.trim_start();
    if words.starts_with(REJECTED) {
        return Some(ErrorWords::Refused(ReasonCode::PermissionDenied));
    }
    let (head, tail) = AUTO_DENIED;
    if words
        .strip_prefix(head)
        .is_some_and(|rest| rest.contains(tail))
    {
        return Some(ErrorWords::Refused(ReasonCode::ApprovalRequired));
    }
    None
}

/// What `tool_result_meta[].non_execution_kind` (the SDK user message,
/// 2.1.332: `tool_result_meta:O(u({id:r(),non_execution_kind:U(cTn)…`,
/// claude.exe offset 331103120; its values `cTn=["user-rejected",
/// "permission-rule","automode-blocked","automode-unavailable",
/// "automode-parsing-error","interrupted","cancelled"]`, offset 330616826)
/// says of the call `id`: refused where a person, a rule or the auto mode
/// said no, or the auto mode could not decide (no one to ask).
/// `interrupted` (nobody knows whether it ran) and `cancelled` say
/// nothing here: the result's own words decide.
pub(super) fn meta_said(whole: super::Whole<'_>, id: &str) -> Option<ErrorWords> {
    let kind = match whole {
        super::Whole::Written(record) => match meta_kind_as_written(record, id) {
            Ok(kind) => kind?,
            // A lone surrogate escape (its blanked form parsed): read the
            // plain way, with it as U+FFFD.
            Err(()) => {
                let value = super::fields::parse(record).ok()?;
                return meta_said(super::Whole::Parsed(&value), id);
            }
        },
        super::Whole::Parsed(value) => meta_kind_of(value, id)?,
    };
    let reason = match kind.as_ref() {
        "user-rejected" | "permission-rule" | "automode-blocked" => ReasonCode::PermissionDenied,
        "automode-unavailable" | "automode-parsing-error" => ReasonCode::ApprovalRequired,
        _ => return None,
    };
    Some(ErrorWords::Refused(reason))
}

/// The `non_execution_kind` of the first stamp for the call `id` in a
/// record as written, the fast way (`Err`: it does not parse as written).
fn meta_kind_as_written<'a>(record: &'a str, id: &str) -> Result<Option<Cow<'a, str>>, ()> {
    #[derive(Deserialize)]
    struct Raw<'a> {
        // Each read whatever its value: one stamp of another shape is that
        // stamp unread, never the others lost.
        #[serde(borrow, default, deserialize_with = "super::lenient::objects")]
        tool_result_meta: Vec<Meta<'a>>,
    }
    #[derive(Deserialize)]
    struct Meta<'a> {
        #[serde(borrow, default, deserialize_with = "super::lenient::text")]
        id: Option<Cow<'a, str>>,
        #[serde(borrow, default, deserialize_with = "super::lenient::text")]
        non_execution_kind: Option<Cow<'a, str>>,
    }
    // Cheap rejection first: nearly every record has no such stamp.
    if !super::may_hold(record, "\"non_execution_kind\"") {
        return Ok(None);
    }
    let raw = serde_json::from_str::<Raw<'_>>(record);
    // (The record's own parse noted its odd fields.)
    super::lenient::take_odd();
    let raw = raw.map_err(drop)?;
    Ok(raw
        .tool_result_meta
        .into_iter()
        .find(|m| m.id.as_deref() == Some(id))
        .and_then(|m| m.non_execution_kind))
}

/// The part of a hook's command line that names what it runs: a leading
/// `cd DIR &&` (or `;`) is only where it runs, so the program after it
/// names it (`cd ${CLAUDE_PLUGIN_ROOT}/hooks && bun run x.ts` is `bun`).
/// Only the shape of what is returned is ever kept.
pub(super) fn meaningful_command(line: &str) -> &str {
    let mut rest = line.trim_start();
    // A few `cd`s and guards at most; each is skipped with its directory
    // or its test (`[ -n "$X" ] && notify-send done || true` runs
    // `notify-send`: the test only says whether).
    for _ in 0..4 {
        let Some(after) = ["cd ", "[ ", "[[ ", "test "]
            .into_iter()
            .find_map(|guard| rest.strip_prefix(guard))
        else {
            break;
        };
        let next = [
            after.find("&&").map(|i| i + 2),
            after.find(';').map(|i| i + 1),
        ]
        .into_iter()
        .flatten()
        .min();
        match next {
            Some(i) if !after[i..].trim().is_empty() => rest = after[i..].trim_start(),
            _ => break,
        }
    }
    rest
}

/// `hook`, running what `line` runs (`cd … && bun x.ts` runs `bun`): a
/// program that is not a name (a bracket, a backslash, a letter outside
/// ASCII) leaves the hook with its command unknown
/// ([`CapabilityEvent::command`], the rule for every reader).
pub(super) fn with_command(hook: CapabilityEvent, line: &str) -> CapabilityEvent {
    hook.command(meaningful_command(line))
}

/// The `non_execution_kind` of the first `tool_result_meta` stamp for the
/// call `id` ([`meta_said`]) of a record parsed whole: a
/// stamp that is no object, or a field of another type, is that stamp or
/// field unread.
pub(super) fn meta_kind_of<'v>(v: &'v serde_json::Value, id: &str) -> Option<Cow<'v, str>> {
    let odd = &mut false;
    let stamps = super::fields::objects(v.get("tool_result_meta"), odd, |m, odd| {
        (
            super::fields::text(m.get("id"), odd),
            super::fields::text(m.get("non_execution_kind"), odd),
        )
    });
    stamps
        .into_iter()
        .find(|(stamp, _)| stamp.as_deref() == Some(id))?
        .1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rejection_and_an_auto_denial_are_refusals() {
        assert_eq!(
            said(
                "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. x)."
            ),
            Some(ErrorWords::Refused(ReasonCode::PermissionDenied))
        );
        assert_eq!(
            said("Permission to use Write has been auto-denied (prompts unavailable)."),
            Some(ErrorWords::Refused(ReasonCode::ApprovalRequired))
        );
        assert_eq!(said("The user wants x"), None);
        assert_eq!(said("Permission to use Write has been denied."), None);
    }

    #[test]
    fn the_sdk_stamp_says_why_a_result_is_no_execution_s() {
        let line = r#"{"type":"user","tool_result_meta":[{"id":"t1","non_execution_kind":"user-rejected"},{"id":"t2","non_execution_kind":"interrupted"},{"id":"t3","non_execution_kind":"automode-unavailable"}]}"#;
        assert_eq!(
            meta_said(super::super::Whole::Written(line), "t1"),
            Some(ErrorWords::Refused(ReasonCode::PermissionDenied))
        );
        assert_eq!(meta_said(super::super::Whole::Written(line), "t2"), None);
        assert_eq!(
            meta_said(super::super::Whole::Written(line), "t3"),
            Some(ErrorWords::Refused(ReasonCode::ApprovalRequired))
        );
        assert_eq!(meta_said(super::super::Whole::Written(line), "t4"), None);
    }

    /// GIVEN the stamp with a needless `\u` escape in its key, or beside a
    /// stamp of another shape and fields of other types WHEN read THEN the
    /// call's stamp still says why (issue 68: no loss hidden by a parse).
    #[test]
    fn an_escape_or_an_odd_stamp_hides_no_other_stamp() {
        let escaped = r#"{"type":"user","tool_result_meta":[{"id":"t1","non_execution_kin\u0064":"user-rejected"}]}"#;
        assert_eq!(
            meta_said(super::super::Whole::Written(escaped), "t1"),
            Some(ErrorWords::Refused(ReasonCode::PermissionDenied))
        );
        let odd = r#"{"type":"user","tool_result_meta":[7,{"id":9,"non_execution_kind":["x"]},{"id":"t1","non_execution_kind":"user-rejected"}]}"#;
        assert_eq!(
            meta_said(super::super::Whole::Written(odd), "t1"),
            Some(ErrorWords::Refused(ReasonCode::PermissionDenied))
        );
    }

    #[test]
    fn a_hook_is_named_by_what_it_runs_not_by_cd() {
        assert_eq!(
            meaningful_command("cd ${CLAUDE_PLUGIN_ROOT}/hooks && bun run x.ts"),
            "bun run x.ts"
        );
        assert_eq!(meaningful_command("cd /a; cd b && ./run.sh"), "./run.sh");
        assert_eq!(meaningful_command("cd /only"), "cd /only");
        assert_eq!(meaningful_command("bd prime"), "bd prime");
        assert_eq!(meaningful_command("cdx run"), "cdx run");
        assert_eq!(
            meaningful_command(r#"[ -n "$X" ] && notify-send done || true"#),
            "notify-send done || true"
        );
        assert_eq!(meaningful_command("test -f a && ./b.sh"), "./b.sh");
    }
}
