//! Writes a corpus of Claude Code transcripts under a home
//! (`HOME/.claude/projects/…`), for `tests/scripts/records-vs-jq.sh` and
//! the `records_import` bench, in one of three shapes:
//! - `sessions` (the default): 0.25 to 8 MiB sessions of one release in
//!   eight projects;
//! - `home`: a heavy user's home: mostly small sessions, sub-agent
//!   transcripts, twelve projects, a few long sessions, and copies of the
//!   real transcripts of older releases in `tests/fixtures` (found from the
//!   working directory, when there);
//! - `--from DIR`: the real transcripts below `DIR` (a user's own
//!   `~/.claude/projects`, say) copied under fresh session ids until the
//!   size is reached.
//!
//! Usage: `tether-records-corpus HOME [MB] [sessions|home|--from DIR]`
//! (default 250 MB).

#[path = "../../benches/corpus/claude.rs"]
mod corpus;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

const USAGE: &str = "usage: tether-records-corpus HOME [MB] [sessions|home|--from DIR]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(home) = args.first().map(PathBuf::from) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let mb: u64 = match args.get(1).map(|a| a.parse()) {
        None => 250,
        Some(Ok(mb)) => mb,
        Some(Err(_)) => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let total = mb * 1_000_000;
    let written = match args.get(2).map(String::as_str) {
        None | Some("sessions") => corpus::home(&home, total),
        Some("home") => corpus::home_shaped(&home, total, &real_transcripts()),
        Some("--from") => match args.get(3) {
            Some(dir) => corpus::replicate(Path::new(dir), &home, total),
            None => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        },
        Some(_) => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match written {
        Ok((files, bytes)) => {
            println!("{files} files, {bytes} bytes");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("tether-records-corpus: {err}");
            ExitCode::FAILURE
        }
    }
}

/// The real Claude Code transcripts this repository keeps (2.1.14, 2.1.38's
/// sub-agent, 2.1.39, 2.1.259 and the test home's), where the working
/// directory is the repository or `tests/`.
fn real_transcripts() -> Vec<PathBuf> {
    for root in ["tests/fixtures", "fixtures"] {
        let root = Path::new(root);
        if !root.is_dir() {
            continue;
        }
        let mut out: Vec<PathBuf> = corpus::transcripts_in(&root.join("records-real"))
            .into_iter()
            .filter(|p| {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                name.is_some_and(|n| n.starts_with("claude-") && !n.contains(".stream."))
            })
            .collect();
        out.extend(corpus::transcripts_in(
            &root.join("records-releases/claude-2.1.259-connectors"),
        ));
        out.extend(corpus::transcripts_in(
            &root.join("records/claude/.claude/projects"),
        ));
        return out;
    }
    Vec::new()
}
