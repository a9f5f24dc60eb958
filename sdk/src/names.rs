//! Names as the harnesses write them, for the plugins that read or predict
//! them: a tool's name spelled for the model the way a Node harness spells
//! it ([`replace_outside`], [`word_or_dash`]), and a harness's version read
//! from a model request's user agent ([`product_version`]).

/// `name` with every character outside `allowed` replaced by `with`, once
/// per UTF-16 code unit (as a JavaScript `replace(/[^…]/g, …)` without the
/// `u` flag does, which is how the Node harnesses spell names).
pub fn replace_outside(name: &str, allowed: fn(char) -> bool, with: char) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if allowed(c) {
            out.push(c);
        } else {
            (0..c.len_utf16()).for_each(|_| out.push(with));
        }
    }
    out
}

/// ASCII letters, digits, `_` and `-`: what most model APIs take in a
/// function's name.
pub fn word_or_dash(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// The version after `product/` in a user agent (`claude-cli/2.1.332 (…)`
/// with `claude-cli` gives `2.1.332`); `None` when the agent is another's.
pub fn product_version<'a>(user_agent: &'a str, product: &str) -> Option<&'a str> {
    let rest = user_agent.strip_prefix(product)?.strip_prefix('/')?;
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+')))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_spelled_as_javascript_spells_them() {
        // One `_` per UTF-16 code unit: an emoji is two.
        assert_eq!(replace_outside("a.b😀c", word_or_dash, '_'), "a_b__c");
    }

    #[test]
    fn a_user_agent_gives_its_product_s_version() {
        assert_eq!(
            product_version("claude-cli/2.1.332 (external, sdk-cli)", "claude-cli"),
            Some("2.1.332")
        );
        assert_eq!(
            product_version("GeminiCLI-tui/0.61.0/gemini-2.5-pro", "GeminiCLI-tui"),
            Some("0.61.0")
        );
        assert_eq!(product_version("OpenAI/JS 5.20.1", "claude-cli"), None);
    }
}
