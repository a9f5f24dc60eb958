//! "Did you mean": the one known name a mistyped one is a slip of, shared
//! by every place Tether suggests a name (flags, stages, `explain`, the
//! names a configuration file gives).

/// The name in `known` that `given` is a slip of: at most two edits
/// (Damerau–Levenshtein, so a swapped pair is one), and fewer edits than
/// half the letters of the shorter of the two, so short words are not
/// matched to anything. An exact name is no slip; of several, the nearest
/// (the first of equals).
pub fn nearest<'a, I, S>(given: &str, known: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a S>,
    S: AsRef<str> + ?Sized + 'a,
{
    let letters = given.chars().count();
    known
        .into_iter()
        .map(AsRef::as_ref)
        .map(|k| (strsim::damerau_levenshtein(given, k), k))
        .filter(|(d, k)| {
            let shorter = letters.min(k.chars().count()).max(2);
            *d > 0 && *d <= 2 && *d * 2 < shorter
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Why a bare command does not start, in the one sentence every place
/// says it (`tether inventory`, an endpoint test, `tether run`, `tether
/// sessions show`): `shown` is on no folder of PATH here, and, where a
/// near name is on PATH (`meant`, found by the caller), that one is
/// asked about. Both are basenames, never a path.
pub fn not_on_path(shown: &str, meant: Option<&str>) -> String {
    match meant {
        Some(meant) => format!(
            "`{shown}` is on no folder of PATH here; `{meant}` is: did you mean it? (else install `{shown}`, or give its absolute path)"
        ),
        None => {
            format!("`{shown}` is on no folder of PATH here: install it, or give its absolute path")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::nearest;

    #[test]
    fn a_slip_finds_the_name_meant_and_nothing_else_does() {
        let known = ["claude", "codex", "gemini", "mcp_server", "used"];
        assert_eq!(nearest("claud", &known), Some("claude"));
        assert_eq!(nearest("gemni", &known), Some("gemini"));
        assert_eq!(nearest("mcp_servr", &known), Some("mcp_server"));
        assert_eq!(nearest("usedd", &known), Some("used"));
        assert_eq!(
            nearest("cdoex", &known),
            Some("codex"),
            "a swap is one edit"
        );
        assert_eq!(nearest("claude", &known), None, "an exact name is no slip");
        assert_eq!(nearest("make", &known), None);
        assert_eq!(nearest("x", &known), None);
        let owned = vec!["everything".to_owned()];
        assert_eq!(nearest("everythin", &owned), Some("everything"));
    }
}
