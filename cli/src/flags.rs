//! Flags several commands share, each defined once (as ripgrep's
//! `flags/defs.rs`): `--harness` as a filter ([`HarnessFilter`]) or as the
//! one harness a file or command is ([`HarnessName`]), and `--kind`
//! ([`capability_kind`]), and `--json` ([`Output`]). The harnesses a help lists come from
//! the plugins this binary holds, never written down here; a misspelt one
//! is a usage error (exit 2) with "did you mean", as a misspelt kind is
//! ([`unknown_name`]).

use std::ffi::OsStr;

use clap::Args;
use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;

/// `--harness KIND` (repeatable): only these harnesses.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct HarnessFilter {
    /// Only this harness (repeatable).
    #[arg(long = "harness", value_name = "KIND", value_parser = HarnessKind)]
    pub(crate) harnesses: Vec<String>,
}

/// `--harness KIND`: whose a file or command is, where its content does
/// not say.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct HarnessName {
    /// The harness, where the file or command does not say it (content
    /// several harnesses' files share, or a wrapper script).
    #[arg(long = "harness", value_name = "KIND", value_parser = HarnessKind)]
    pub(crate) harness: Option<String>,
}

/// `--json`: one JSON document instead of the text, declared once for
/// every command. Each command names its document in its own help
/// (`#[command(mut_arg("json", …))]`); what the flag is stays here.
#[derive(Debug, Clone, Copy, Default, Args)]
pub(crate) struct Output {
    /// Print one JSON document instead of the text.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `--kind KIND`: one of the vocabulary's capability kinds
/// (`mcp_server`, `mcp_tool`, `plugin`, `skill`, `hook`, …); any other word
/// is a usage error with "did you mean", never an empty list.
pub(crate) fn capability_kind(text: &str) -> Result<String, String> {
    let known = tether_core::vocab::CapabilityKind::KNOWN;
    if known.contains(&text) {
        return Ok(text.to_owned());
    }
    let known: Vec<String> = known.iter().map(|k| (*k).to_owned()).collect();
    let near = tether_words::near::nearest(text, &known)
        .map(|n| format!(" (did you mean {n:?}?)"))
        .unwrap_or_default();
    Err(format!(
        "no kind {text:?}{near}; one of: {}",
        known.join(", ")
    ))
}

/// The harnesses the plugins compiled into this binary know, sorted.
pub(crate) fn compiled_in() -> Vec<String> {
    let mut kinds: Vec<String> = tether_core::registry::Registry::with_static()
        .map(|r| {
            r.harnesses()
                .into_iter()
                .map(|h| String::from(h.id))
                .collect()
        })
        .unwrap_or_default();
    kinds.sort();
    kinds.dedup();
    kinds
}

/// What a command says of a name it does not know (`who: unknown WHAT
/// "x"; did you mean "y"? known: …`), on stderr; then exit 2.
pub(crate) fn unknown_name(
    who: &str,
    what: &str,
    given: &str,
    known: &[String],
) -> std::process::ExitCode {
    let near = tether_words::near::nearest(given, known)
        .map(|n| format!(" (did you mean {n:?}?)"))
        .unwrap_or_default();
    errln!(
        "{who}: unknown {what} {given:?}{near}; one of: {}",
        known.join(", ")
    );
    std::process::ExitCode::from(crate::exit::Exit::Usage)
}

/// The value parser of `--harness`: its possible values (help, completions)
/// are the compiled-in harnesses; a slip of one is refused with "did you
/// mean"; any other name passes, for a plugin loaded with `--load` (the
/// command then says whether any plugin knows it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct HarnessKind;

impl TypedValueParser for HarnessKind {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<String, clap::Error> {
        let Some(text) = value.to_str() else {
            return Err(clap::Error::new(ErrorKind::InvalidUtf8).with_cmd(cmd));
        };
        let known = compiled_in();
        if known.iter().any(|k| k == text) {
            return Ok(text.to_owned());
        }
        let Some(near) = tether_words::near::nearest(text, &known) else {
            return Ok(text.to_owned());
        };
        let name = arg.map_or_else(|| "--harness <KIND>".to_owned(), |a| a.to_string());
        let message = format!(
            "unknown harness {text:?} for '{name}' (did you mean {near:?}?); one of: {}\n",
            known.join(", ")
        );
        Err(clap::Error::raw(ErrorKind::InvalidValue, message).with_cmd(cmd))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        // A PossibleValue holds a `&'static str`: the few names, leaked once
        // per process (the parser is built once).
        let names: Vec<&'static str> = compiled_in()
            .into_iter()
            .map(|k| &*Box::leak(k.into_boxed_str()))
            .collect();
        Some(Box::new(names.into_iter().map(PossibleValue::new)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_kind_is_refused_with_the_kind_meant() {
        assert_eq!(capability_kind("mcp_server").as_deref(), Ok("mcp_server"));
        let err = capability_kind("mcp_servr").expect_err("a slip");
        assert!(err.contains("did you mean \"mcp_server\""), "{err}");
        assert!(capability_kind("servers").is_err());
    }
}
