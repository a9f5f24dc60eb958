//! Writes a corpus of Claude Code transcripts of real shape under a home
//! (`HOME/.claude/projects/…`), for `tests/scripts/records-vs-jq.sh`.
//!
//! Usage: `tether-records-corpus HOME [MB]` (default 250 MB).

#[path = "../../benches/corpus/claude.rs"]
mod corpus;

fn main() -> std::process::ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(home) = args.next() else {
        eprintln!("usage: tether-records-corpus HOME [MB]");
        return std::process::ExitCode::from(2);
    };
    let mb: u64 = match args.next().map(|a| a.to_string_lossy().parse()) {
        None => 250,
        Some(Ok(mb)) => mb,
        Some(Err(_)) => {
            eprintln!("usage: tether-records-corpus HOME [MB]");
            return std::process::ExitCode::from(2);
        }
    };
    match corpus::home(std::path::Path::new(&home), mb * 1_000_000) {
        Ok((sessions, bytes)) => {
            println!("{sessions} sessions, {bytes} bytes");
            std::process::ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("tether-records-corpus: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}
