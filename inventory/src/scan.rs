//! Scanners: the trait a harness plugin implements, their registry, and the run.

use tether_core::inventory::{InventoryDocument, InventoryError};
use tether_core::vocab::ReasonCode;

use crate::context::ScanContext;
use crate::rows::ScanOutput;

/// Rows kept from one harness's scan (a bound against generated
/// configurations); past it, an error entry counts what was cut, and the
/// other harnesses are read in full.
pub const MAX_ROWS: usize = 4096;
/// Error entries kept from one harness's scan; past it, one more counts
/// what was cut.
pub const MAX_ERRORS: usize = 256;

/// Reads one harness's configuration.
///
/// An implementor is responsible for:
/// - reading files only through the [`ScanContext`]'s roots
///   ([`ConfigRoot`](crate::ConfigRoot), or [`ScanOutput::read_json`] /
///   [`ScanOutput::read_toml`]), never with `std::fs`;
/// - turning every server entry into a row through
///   [`ScanOutput::add_servers`] or [`ScanOutput::push`], with the precise
///   [`Enablement`](crate::Enablement) the configuration gives it (approvals,
///   policy, trust, toggles), and every unusable file into an error entry;
/// - never copying a configuration value into a summary.
///
/// The kit guarantees the rest: rows keep names and classes only, reads are
/// bounded and contained, and a panicking scanner becomes an error entry
/// without losing the other harnesses' rows. Register it with
/// [`register_scanner!`](crate::register_scanner); test it with
/// `tether_sdk::scan_fixture::ScanFixture`.
pub trait ConfigScanner: Send + Sync {
    /// The harness's name: claude, codex, opencode, cursor, gemini, …
    fn harness(&self) -> &'static str;
    /// Adds this harness's rows and errors.
    fn scan(&self, ctx: &ScanContext, out: &mut ScanOutput);
}

/// A compiled-in scanner (see [`register_scanner!`](crate::register_scanner)).
pub struct ScannerRegistration {
    /// The scanner.
    pub scanner: &'static dyn ConfigScanner,
}

inventory::collect!(ScannerRegistration);

/// Registers a `static` [`ConfigScanner`] so `tether inventory` finds it.
#[macro_export]
macro_rules! register_scanner {
    ($scanner:expr) => {
        $crate::__private::inventory::submit! {
            $crate::scan::ScannerRegistration { scanner: &$scanner }
        }
    };
}

/// Every compiled-in scanner, sorted by harness name.
pub fn scanners() -> Vec<&'static dyn ConfigScanner> {
    let mut all: Vec<&'static dyn ConfigScanner> = inventory::iter::<ScannerRegistration>
        .into_iter()
        .map(|r| r.scanner)
        .collect();
    all.sort_by_key(|s| s.harness());
    all.dedup_by_key(|s| s.harness());
    all
}

/// Runs `scanners` (all, or those whose harness is in `only`) and returns one document.
pub fn scan_all(
    ctx: &ScanContext,
    scanners: &[&dyn ConfigScanner],
    only: &[String],
) -> InventoryDocument {
    let mut out = ScanOutput::default();
    let at = out.at;
    for scanner in scanners {
        if !only.is_empty() && !only.iter().any(|h| h == scanner.harness()) {
            continue;
        }
        let harness = scanner.harness();
        // A scanner bug must not lose the other harnesses' rows.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut own = ScanOutput::at(at);
            scanner.scan(ctx, &mut own);
            own
        }));
        match result {
            Ok(mut own) => {
                // A cap on one harness never hides another: each is cut on
                // its own, and says so.
                let cut_rows = own.rows.len().saturating_sub(MAX_ROWS);
                own.rows.truncate(MAX_ROWS);
                let cut_errors = own.errors.len().saturating_sub(MAX_ERRORS);
                own.errors.truncate(MAX_ERRORS);
                out.rows.extend(own.rows);
                out.errors.extend(own.errors);
                for (cut, what, kept) in [
                    (cut_rows, "rows", MAX_ROWS),
                    (cut_errors, "error entries", MAX_ERRORS),
                ] {
                    if cut > 0 {
                        out.errors.push(InventoryError {
                            harness: harness.to_owned(),
                            source: "(all files)".to_owned(),
                            reason_code: ReasonCode::TooManyEntries,
                            summary: format!(
                                "{harness}'s configuration gives {} {what}; the first {kept} are kept and {cut} are not shown",
                                kept + cut
                            ),
                        });
                    }
                }
            }
            Err(_) => out.errors.push(InventoryError {
                harness: harness.to_owned(),
                source: "(scanner)".to_owned(),
                reason_code: ReasonCode::ScannerPanicked,
                summary: format!("the {harness} scanner panicked; its rows are missing"),
            }),
        }
    }
    out.into_document(Some(at))
}

/// Today's configured servers per harness, as every registered scanner
/// finds them in `ctx`: each enabled row with a usable endpoint, once per
/// name, as the [`ServerSpec`](tether_core::spec::ServerSpec) a harness
/// would start (its unset variables named). What `tether collect` and
/// `tether sessions` match a harness's sessions against.
pub fn configured_servers(
    ctx: &ScanContext,
) -> std::collections::HashMap<String, Vec<tether_core::spec::ServerSpec>> {
    let document = scan_all(ctx, &scanners(), &[]);
    let mut by_harness: std::collections::HashMap<String, Vec<tether_core::spec::ServerSpec>> =
        Default::default();
    for row in document.rows {
        if !row.is_enabled() {
            continue;
        }
        let Some(endpoint) = row.endpoint else {
            continue;
        };
        let specs = by_harness.entry(row.harness.clone()).or_default();
        if !specs.iter().any(|s| s.name == row.name) {
            specs.push(
                tether_core::spec::ServerSpec::new(
                    row.name,
                    tether_core::vocab::ServerSource::Profile,
                    endpoint,
                )
                .with_unset_vars(row.diagnostics.unresolved)
                .with_cwd_missing(
                    row.diagnostics.cwd == Some(tether_core::vocab::CwdClass::Missing),
                )
                .with_command_missing(
                    (row.diagnostics.command_resolves == Some(false)
                        && row.reason_code == Some(ReasonCode::CommandNotFound))
                    .then(|| row.summary.clone())
                    .flatten(),
                ),
            );
        }
    }
    by_harness
}
