//! Checks for a plugin's census ([`HarnessCensus::census`](tether_core::harness::HarnessCensus::census)):
//! a kind it says is read is one its reader's code names. (That each
//! source and kind is listed once, and the book's table, are checked for
//! every harness at once by the workspace's census test.)

use tether_core::records::CensusEntry;

/// The word of a kind a reader's code names: its last segment
/// (`system/stop_hook_summary` → `stop_hook_summary`, `codex.tool_result`
/// → `tool_result`), without quotes, a leading `--` or `.`, or what
/// follows a space.
pub fn last_word(kind: &str) -> &str {
    let last = kind.rsplit(['/', '.', ':', '*']).next().unwrap_or(kind);
    let last = last.split(' ').next().unwrap_or(last);
    last.trim_matches('"').trim_start_matches("--")
}

/// The kinds `census` says are read whose [`last_word`] `code` (the
/// reader's own sources, concatenated) never names: each a census entry
/// that claims more than the reader does.
pub fn read_but_not_in(census: &[CensusEntry], code: &str) -> Vec<String> {
    census
        .iter()
        .filter(|e| e.read && !code.contains(last_word(&e.kind)))
        .map(|e| format!("{} / {}", e.source, e.kind))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_s_last_word_is_what_code_names() {
        assert_eq!(last_word("system/stop_hook_summary"), "stop_hook_summary");
        assert_eq!(last_word("codex.tool_result"), "tool_result");
        assert_eq!(last_word("--allow-tool"), "allow-tool");
        assert_eq!(last_word("\"hook_success\" (x)"), "hook_success");
        let census = [
            CensusEntry::read("t", "a/named", "1", "x"),
            CensusEntry::read("t", "a/missing", "1", "x"),
            CensusEntry::not_read("t", "a/absent", "1", "why"),
        ];
        assert_eq!(read_but_not_in(&census, "fn named() {}"), ["t / a/missing"]);
    }
}
