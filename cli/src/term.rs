//! Terminal output shared by every subcommand: colors (only when the caller
//! says the stream is a terminal), the one-line progress display on stderr,
//! and numbers grouped for reading.

use std::io::Write;
use std::time::Instant;

use tether_core::display::ColorClass;

fn sgr(code: &str, text: &str, on: bool) -> String {
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// `text` in a status color.
pub fn paint(color: ColorClass, text: &str, on: bool) -> String {
    let code = match color {
        ColorClass::Green => "32",
        ColorClass::Amber => "33",
        ColorClass::Red => "31",
        ColorClass::Gray => "90",
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
        "\r\x1b[2K⏳ {:>5.1}s  {text}",
        started.elapsed().as_secs_f64()
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
                show_progress(started, text);
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
