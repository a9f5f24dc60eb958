//! Terminal output shared by every subcommand: colors (only when the caller
//! says the stream is a terminal), the one-line progress display on stderr,
//! numbers grouped for reading, a live session's lines, a value quoted
//! for a shell, and the one function every byte the CLI
//! prints goes through, [`visible_field`]: a file name, a path or a message that
//! holds an escape sequence never drives the user's terminal.

use std::borrow::Cow;
use std::io::Write;
use std::time::Instant;

use tether_words::display::ColorClass;

/// The escape sequences the CLI itself writes (its colors and bold); every
/// other control character is made visible.
const OWN_SEQUENCES: [&str; 6] = [
    "\x1b[0m", "\x1b[1m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[90m",
];

/// Whether a terminal acts on `c` rather than showing it: C0 and C1
/// controls, DEL, and the invisible marks that reorder or hide text (bidi
/// overrides and isolates, line and paragraph separators).
fn acts_on_terminal(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}' | '\u{2029}'
                | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` as it may reach a terminal: every control character, and every
/// mark that reorders text, becomes its `\\uXXXX` escape (visible, and the
/// same escape JSON uses, so a JSON document stays the same document). For
/// a field (a path, a name) before it is padded or painted: a line break in
/// a file name cannot forge a line of the table either. The writers
/// ([`err_line`], [`Visible`]) pass every whole line through the same
/// function, keeping line breaks and tabs, and the CLI's own colors only
/// where it writes them.
pub fn visible_field(text: &str) -> Cow<'_, str> {
    shown(text, Keep::Nothing)
}

/// What [`shown`] lets through of what a terminal acts on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// Nothing: a field.
    Nothing,
    /// Line breaks and tabs: a whole line, written where no colors are.
    Layout,
    /// Line breaks, tabs and the CLI's own colors: a whole line, on a
    /// terminal.
    LayoutAndColors,
}

impl Keep {
    fn for_lines(colors: bool) -> Keep {
        if colors {
            Keep::LayoutAndColors
        } else {
            Keep::Layout
        }
    }
}

/// The one function behind [`visible_field`] and the writers.
fn shown(text: &str, keep: Keep) -> Cow<'_, str> {
    let acts = |c: char| acts_on_terminal(c) && (keep == Keep::Nothing || (c != '\n' && c != '\t'));
    let keep_own = keep == Keep::LayoutAndColors;
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if keep_own
            && c == '\x1b'
            && let Some(own) = OWN_SEQUENCES.iter().find(|s| rest.starts_with(**s))
        {
            out.push_str(own);
            rest = &rest[own.len()..];
            continue;
        }
        if acts(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    Cow::Owned(out)
}

/// Prints one line on stderr through [`visible_field`].
pub fn err_line(line: &str) {
    use std::io::IsTerminal;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", shown(line, Keep::for_lines(err.is_terminal())));
}

/// `eprintln!` through [`visible_field`].
macro_rules! errln {
    () => { $crate::term::err_line("") };
    ($($arg:tt)*) => { $crate::term::err_line(&format!($($arg)*)) };
}

/// A writer that passes whole lines through [`visible_field`] (a sequence split
/// across two writes is still seen whole); the rest is written on flush
/// and on drop.
pub struct Visible<W: Write> {
    inner: W,
    pending: Vec<u8>,
    keep: Keep,
}

impl<W: Write> Visible<W> {
    /// Wraps `inner`; `colors` says whether the CLI's own colors may pass
    /// (only where it writes them: a terminal).
    pub fn new(inner: W, colors: bool) -> Self {
        Visible {
            inner,
            pending: Vec::new(),
            keep: Keep::for_lines(colors),
        }
    }

    fn write_pending(&mut self, upto: usize) -> std::io::Result<()> {
        let chunk: Vec<u8> = self.pending.drain(..upto).collect();
        let text = String::from_utf8_lossy(&chunk);
        self.inner.write_all(shown(&text, self.keep).as_bytes())
    }
}

/// Bytes of one line held back at most before they are written.
const LONG_LINE: usize = 64 * 1024;

impl<W: Write> Write for Visible<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let before = self.pending.len();
        self.pending.extend_from_slice(buf);
        // Only the new bytes are searched: a long line (a compact JSON
        // document) written in many small pieces stays linear.
        if let Some(last) = buf.iter().rposition(|b| *b == b'\n') {
            self.write_pending(before + last + 1)?;
        } else if self.pending.len() > LONG_LINE {
            // A line this long goes out in pieces; the tail kept back is
            // longer than any of the CLI's own sequences, cut on a
            // character's boundary.
            let mut cut = self.pending.len() - 16;
            while cut > 0 && (self.pending[cut] & 0xc0) == 0x80 {
                cut -= 1;
            }
            self.write_pending(cut)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            let all = self.pending.len();
            // Never cut a UTF-8 character in two: keep an unfinished one.
            let cut = match std::str::from_utf8(&self.pending) {
                Ok(_) => all,
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                Err(_) => all,
            };
            self.write_pending(cut)?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for Visible<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// Locked stdout through [`visible_field`].
pub fn stdout() -> Visible<std::io::StdoutLock<'static>> {
    use std::io::IsTerminal;
    let out = std::io::stdout();
    let colors = out.is_terminal();
    Visible::new(out.lock(), colors)
}

/// Locked stdout through [`visible_field`], buffered: for a document
/// written whole at the end of a command (a listing, a session), never for
/// lines that show progress. Stdout alone is line-buffered: a pretty JSON
/// listing of a home was one `write` a line (19,391 on the home shape).
/// The caller flushes it, so a failed write is an error, not lost on drop.
pub fn stdout_buffered() -> Visible<std::io::BufWriter<std::io::StdoutLock<'static>>> {
    use std::io::IsTerminal;
    let out = std::io::stdout();
    let colors = out.is_terminal();
    Visible::new(
        std::io::BufWriter::with_capacity(64 * 1024, out.lock()),
        colors,
    )
}

fn sgr(code: &str, text: &str, on: bool) -> String {
    let text = visible_field(text);
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.into_owned()
    }
}

/// `text` in a status color.
pub fn paint(color: ColorClass, text: &str, on: bool) -> String {
    let code = match color {
        ColorClass::Green => "32",
        ColorClass::Amber => "33",
        ColorClass::Red => "31",
        ColorClass::Gray => "90",
        // A class a later core adds: shown plain.
        _ => return sgr("0", text, false),
    };
    sgr(code, text, on)
}

/// `text` in bold.
pub fn bold(text: &str, on: bool) -> String {
    sgr("1", text, on)
}

/// Replaces the progress line on stderr: `⏳ <elapsed>s  <text>`.
pub fn show_progress(started: Instant, text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = write!(
        err,
        "\r\x1b[2K⏳ {:>5.1}s  {}",
        started.elapsed().as_secs_f64(),
        visible_field(text)
    );
    let _ = err.flush();
}

/// Clears the progress line.
pub fn clear_progress() {
    let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
}

/// Runs `work` on a thread of its own and, when it takes longer than a
/// moment and stderr is a terminal, shows `text` with the elapsed time until
/// it is done (reading a fleet's database can take seconds).
pub fn with_progress<T: Send>(text: &str, work: impl FnOnce() -> T + Send) -> T {
    with_progress_of(text, || None, work)
}

/// [`with_progress`], the line also saying how far the work has gone
/// (`so_far`, asked each time the line is drawn: `312 of 905 files, …`).
pub fn with_progress_of<T: Send>(
    text: &str,
    so_far: impl Fn() -> Option<String>,
    work: impl FnOnce() -> T + Send,
) -> T {
    use std::io::IsTerminal;
    let show = std::io::stderr().is_terminal();
    let started = Instant::now();
    std::thread::scope(|scope| {
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let handle = scope.spawn(move || {
            let value = work();
            drop(done_tx);
            value
        });
        let mut shown = false;
        // Woken the moment the work ends (the sender drops), so no wait is added.
        while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
            done_rx.recv_timeout(std::time::Duration::from_millis(100))
        {
            if show && started.elapsed() >= std::time::Duration::from_millis(300) {
                match so_far() {
                    Some(so_far) => show_progress(started, &format!("{text} {so_far}")),
                    None => show_progress(started, text),
                }
                shown = true;
            }
        }
        if shown {
            clear_progress();
        }
        match handle.join() {
            Ok(value) => value,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// How much of a read is done, for a progress line: `312 of 905 files,
/// 86.4 of 250.0 MB (35 %)` (the share by bytes; by files where there are
/// none). `None` before the files to read are known.
pub fn read_so_far(
    files_done: u64,
    files_total: u64,
    bytes_done: u64,
    bytes_total: u64,
) -> Option<String> {
    if files_total == 0 {
        return None;
    }
    let (done, total) = if bytes_total > 0 {
        (bytes_done.min(bytes_total), bytes_total)
    } else {
        (files_done.min(files_total), files_total)
    };
    let percent = done * 100 / total;
    let mb = |b: u64| b as f64 / 1e6;
    Some(format!(
        "{} of {} files, {:.1} of {:.1} MB ({percent} %)",
        thousands(files_done.min(files_total)),
        thousands(files_total),
        mb(bytes_done.min(bytes_total)),
        mb(bytes_total),
    ))
}

/// `12345` as `12,345`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Single-quoted for a POSIX shell.
pub fn shell_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

/// One line per row of a live session (`tether collect`, `tether tap`):
/// `session ID (KIND)`, then `  name  status  (reason)` per server, and its
/// skills, hooks and plugins as `tether sessions show` words them.
pub fn session_lines(history: &tether_core::history::AttachmentHistory) -> Vec<String> {
    let Some(attempt) = history.current() else {
        return Vec::new();
    };
    let mut lines = vec![format!(
        "session {} ({})",
        history.session_id, attempt.agent_kind
    )];
    for row in &attempt.servers {
        let reason = row
            .reason_code
            .as_ref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        let tool = row
            .last_tool_call
            .as_ref()
            .map(|c| {
                format!(
                    ", used {} ({})",
                    c.tool,
                    tether_words::display::call_outcome_word(&c.outcome())
                )
            })
            .unwrap_or_default();
        lines.push(format!("  {:<24} {}{reason}{tool}", row.name, row.status));
    }
    for row in attempt
        .capabilities
        .iter()
        .map(tether_words::display::capability_row)
    {
        lines.push(format!(
            "  {:<6} {:<24} {} ({})",
            row.kind,
            row.label(),
            row.status,
            row.stopped
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reads_progress_says_how_far_of_how_much() {
        assert_eq!(read_so_far(0, 0, 0, 0), None, "nothing found yet");
        assert_eq!(
            read_so_far(312, 905, 86_400_000, 250_000_000).as_deref(),
            Some("312 of 905 files, 86.4 of 250.0 MB (34 %)")
        );
        assert_eq!(
            read_so_far(905, 905, 250_000_000, 250_000_000).as_deref(),
            Some("905 of 905 files, 250.0 of 250.0 MB (100 %)")
        );
        // Files of no bytes to read: the share by files.
        assert_eq!(
            read_so_far(1, 4, 0, 0).as_deref(),
            Some("1 of 4 files, 0.0 of 0.0 MB (25 %)")
        );
        assert_eq!(
            read_so_far(1_200, 12_000, 5, 10).as_deref(),
            Some("1,200 of 12,000 files, 0.0 of 0.0 MB (50 %)")
        );
    }

    #[test]
    fn control_characters_become_visible_and_the_clis_own_colors_stay() {
        let planted = "a\x1b[2J\x1b]0;pwned\x07b\rc\u{202e}d\u{7f}e\u{9b}f";
        let planted_shown = shown(planted, Keep::LayoutAndColors);
        assert!(
            !planted_shown.chars().any(acts_on_terminal),
            "{planted_shown:?}"
        );
        assert_eq!(
            planted_shown,
            "a\\u001b[2J\\u001b]0;pwned\\u0007b\\u000dc\\u202ed\\u007fe\\u009bf"
        );
        assert_eq!(shown("line\n\tnext", Keep::Layout), "line\n\tnext");
        let painted = paint(ColorClass::Red, "x\x1b[2Jy", true);
        assert_eq!(
            shown(&painted, Keep::LayoutAndColors),
            "\x1b[31mx\\u001b[2Jy\x1b[0m"
        );
        // Where no colors are written, none is kept: a planted one is shown;
        // and a field keeps no line break to forge a line with.
        assert_eq!(visible_field("a\x1b[31mb"), "a\\u001b[31mb");
        assert_eq!(visible_field("a\nb\tc"), "a\\u000ab\\u0009c");
        // A JSON document stays the same document: the escape is JSON's own.
        let json = serde_json::to_string("p\u{202e}q\u{85}").expect("json");
        let json_shown = shown(&json, Keep::LayoutAndColors);
        let back: String = serde_json::from_str(&json_shown).expect("still JSON");
        assert_eq!(back, "p\u{202e}q\u{85}");
    }

    #[test]
    fn a_long_line_in_small_writes_is_written_in_linear_time_and_whole() {
        let mut buf = Vec::new();
        {
            let mut w = Visible::new(&mut buf, false);
            for _ in 0..2_000_000 {
                w.write_all(b"ab").expect("write");
            }
            w.write_all("é\x1b".as_bytes()).expect("write");
        }
        assert_eq!(buf.len(), 4_000_000 + "é\\u001b".len());
        assert!(buf.ends_with("é\\u001b".as_bytes()));
    }

    #[test]
    fn the_writer_sees_a_sequence_split_across_writes_whole() {
        let mut buf = Vec::new();
        {
            let mut w = Visible::new(&mut buf, true);
            w.write_all(b"a\x1b").expect("write");
            w.write_all(b"[2Jb\n\xe2\x80").expect("write");
            w.write_all(b"\xaec").expect("write");
        }
        assert_eq!(
            String::from_utf8(buf).expect("utf-8"),
            "a\\u001b[2Jb\n\\u202ec"
        );
    }

    proptest::proptest! {
        /// Whatever a field holds, nothing a terminal acts on comes out,
        /// a plain character is kept as it is, and a JSON document through
        /// the writer decodes to the same value.
        #[test]
        fn nothing_a_terminal_acts_on_passes(text in "(\\PC|\\p{Cc}|\\x1b\\[[0-9;]{0,4}[A-Za-z]|[\u{202a}-\u{202e}\u{2066}-\u{2069}\u{85}\u{9b}])*") {
            let acts = |c: char| acts_on_terminal(c) && c != '\n' && c != '\t';
            let field = visible_field(&text);
            proptest::prop_assert!(!field.chars().any(acts_on_terminal), "{:?}", field);
            let json = serde_json::to_string(&text).expect("json");
            let mut buf = Vec::new();
            {
                let mut w = Visible::new(&mut buf, true);
                w.write_all(json.as_bytes()).expect("write");
            }
            let shown = String::from_utf8(buf).expect("utf-8");
            proptest::prop_assert!(!shown.chars().any(acts));
            let back: String = serde_json::from_str(&shown).expect("still JSON");
            proptest::prop_assert_eq!(back, text);
        }
    }

    #[test]
    fn a_live_session_prints_its_hooks_as_sessions_show_words_them() {
        use tether_core::capability::{CapabilityEvent, apply};
        use tether_core::history::AttachmentHistory;
        use tether_core::model::{Evidence, Timestamp};
        use tether_core::vocab::{EvidenceKind, UseOutcome};
        let mut history: AttachmentHistory = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "task_id": "t", "session_id": "gemini:s1",
            "current_attempt_id": "a",
            "attempts": [{"attempt_id": "a", "task_id": "t", "session_id": "gemini:s1",
                "execution_id": "e", "agent_kind": "gemini", "trigger": "harness_session",
                "started_at": 1, "updated_at": 1}]
        }))
        .expect("a history");
        let hook = CapabilityEvent::hook("check.sh", Some("SessionStart"))
            .ended(UseOutcome::CommandNotFound, Some(127));
        apply(
            &mut history.attempts[0].capabilities,
            &Evidence::new(EvidenceKind::HookFired, Timestamp(2)).capability(hook),
        )
        .expect("room");
        let lines = session_lines(&history);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[1].contains("hook"), "{lines:?}");
        assert!(lines[1].contains("failed"), "{lines:?}");
        assert!(
            lines[1].contains("1 command not found (exit 127)"),
            "{lines:?}"
        );
    }
}
