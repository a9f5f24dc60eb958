//! tether-words: the words people read.
//!
//! Every renderer (the CLI, the status view, `tether mcp`, the copied
//! diagnostics) takes its labels, sentences and colors from here, so a
//! status reads the same wherever it shows; `view.js` takes its
//! vocabulary from [`display::vocabulary`].
//! - [`display`]: the projection of the contract's documents into what a
//!   person reads: row labels and "where it stopped" sentences, tool and
//!   capability rows, checklists, the session matrix, verdict hints,
//!   copy-safe diagnostics;
//! - [`explain`]: what every status, verdict, reason code, stage and
//!   provenance means and what to check (`tether explain`, the book's
//!   codes page); the reason texts are data (`explain/reasons.rs`);
//! - [`near`]: "did you mean", the one known name a mistyped one is a slip of.
//!
//! Pure, like `tether-core`: no files, no environment, no clock. Core keeps
//! the types, the reducer and the traits; the prose that changes far more
//! often than the contract lives here.

pub mod display;
pub mod explain;
pub mod near;
