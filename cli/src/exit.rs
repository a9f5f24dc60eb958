//! Every exit code `tether` documents, defined once: [`Exit`] is what
//! each command returns, and [`PAGE`] is what each command's codes mean.
//! The user guide's exit-code page (book/src/exit-codes.md) is generated
//! from them (`tether explain --exit-codes`), and a test keeps it so.

use std::process::ExitCode;

/// An exit code `tether` documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// 0: done (a verdict reached, every requirement met, the server passed).
    Success,
    /// 1: any other failure (said on stderr).
    Failure,
    /// 2: a usage error (an unknown name, kind, stage or harness; a flag
    /// that cannot be read).
    Usage,
    /// 3 (`probe`): the agent could not start or initialize, refused the
    /// session, or exited before any contact.
    AgentFailed,
    /// 4 (`run`, `check`): a requirement is not met.
    Unmet,
    /// `run`: the harness's own exit code (128+N for signal N, 127 when it
    /// could not be started).
    Harness(u8),
}

impl Exit {
    /// The number the process exits with.
    pub(crate) fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Failure => 1,
            Exit::Usage => 2,
            Exit::AgentFailed => 3,
            Exit::Unmet => tether_requirements::EXIT_UNMET,
            Exit::Harness(code) => code,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}

/// What the codes mean for every command, as the exit-code page says it:
/// the command, then each code it uses and when.
pub(crate) const PAGE: &[(&str, &[(Exit, &str)])] = &[
    (
        "every command",
        &[
            (Exit::Success, "success"),
            (Exit::Failure, "any other failure, said on stderr"),
            (
                Exit::Usage,
                "a usage error: an unknown command, flag, kind, harness or stage (with \"did you mean\"), or a value that cannot be read",
            ),
        ],
    ),
    (
        "probe",
        &[
            (Exit::Success, "a verdict was reached"),
            (
                Exit::AgentFailed,
                "the agent could not start or initialize, refused the session, or exited before any contact",
            ),
            (
                Exit::Usage,
                "a harness's own CLI given without `--passthrough` and with no ACP mode among its arguments: said at once, naming the passthrough kind to probe it with",
            ),
        ],
    ),
    (
        "endpoint-test",
        &[
            (Exit::Success, "the server passed"),
            (
                Exit::Failure,
                "the server failed; with `--fail-on-change`, a tool's definition differs from its pin, or the pins could not be checked",
            ),
        ],
    ),
    (
        "inventory",
        &[(
            Exit::Failure,
            "a configuration file could not be used, or a tested server failed",
        )],
    ),
    (
        "run",
        &[
            (
                Exit::Harness(0),
                "the harness's own code when it failed (128+N when signal N ended it, 127 when it could not be started); its exit status and, where its records say why, that reason are printed before the requirements",
            ),
            (
                Exit::Unmet,
                "the harness succeeded but a requirement is not met",
            ),
            (
                Exit::Success,
                "the harness succeeded and every requirement is met",
            ),
        ],
    ),
    (
        "check",
        &[
            (Exit::Success, "every requirement is met"),
            (Exit::Unmet, "a requirement is not met"),
            (
                Exit::Usage,
                "a path that is no session file, an unknown stage, an id that names several sessions",
            ),
            (
                Exit::Failure,
                "no such session, or the store could not be read",
            ),
        ],
    ),
    (
        "sessions",
        &[
            (Exit::Success, "done (`import --follow`: on Ctrl-C)"),
            (
                Exit::Failure,
                "the store could not be opened or written, or `show` finds no such session",
            ),
            (
                Exit::Usage,
                "an unknown harness, a `--since` it cannot read, or an id that names several sessions",
            ),
        ],
    ),
    (
        "serve",
        &[
            (
                Exit::Success,
                "stopped with Ctrl-C (with no store yet, it serves an empty view)",
            ),
            (
                Exit::Failure,
                "the store could not be opened or the address could not be bound",
            ),
        ],
    ),
    (
        "collect",
        &[
            (Exit::Success, "stopped with Ctrl-C"),
            (
                Exit::Failure,
                "the address could not be bound or the `--db` store could not be opened",
            ),
            (
                Exit::Usage,
                "a harness it has no setup for, or a `--forward` or `--otlp` that is not http(s) or loops back to the receiver",
            ),
        ],
    ),
    (
        "tap",
        &[
            (Exit::Success, "stopped with Ctrl-C"),
            (Exit::Failure, "the address could not be bound"),
            (Exit::Usage, "a harness it has no model setup for"),
        ],
    ),
    (
        "pins",
        &[(Exit::Failure, "the store failed, or no such server or tool")],
    ),
    (
        "explain",
        &[
            (Exit::Success, "the code was explained"),
            (
                Exit::Usage,
                "no status, verdict, reason code or stage has that name (a \"did you mean\" follows where one is near)",
            ),
        ],
    ),
    (
        "mcp",
        &[
            (Exit::Success, "its client hung up"),
            (Exit::Failure, "stdio failed"),
            (Exit::Usage, "an unknown `--print-config` harness"),
        ],
    ),
    (
        "service",
        &[
            (Exit::Success, "done"),
            (
                Exit::Failure,
                "a file could not be written or removed, or the service manager refused (it says what to run)",
            ),
            (Exit::Usage, "a platform with neither systemd nor launchd"),
        ],
    ),
];

/// The exit-code page of the user guide, from [`PAGE`].
pub(crate) fn markdown() -> String {
    let mut out = String::from(
        "# Exit codes, command by command\n\n<!-- Generated by `tether explain --exit-codes` from the one type that defines them \
         (cli/src/exit.rs). Do not edit: `TETHER_UPDATE_BOOK=1 cargo test -p tether-tests --test exit_codes` rewrites it. -->\n\n\
         A closed pipe (`tether explain | head -1`) ends quietly with 0, as it does for `ripgrep`.\n\
         Requirements and what 4 means for CI: [In CI](in-ci.md).\n",
    );
    for (command, codes) in PAGE {
        let title = if *command == "every command" {
            "Every command".to_owned()
        } else {
            format!("`tether {command}`")
        };
        out.push_str(&format!("\n## {title}\n\n| Code | When |\n|---|---|\n"));
        for (exit, when) in *codes {
            let code = match exit {
                Exit::Harness(_) => "the harness's".to_owned(),
                exit => exit.code().to_string(),
            };
            out.push_str(&format!("| {code} | {when} |\n"));
        }
    }
    out
}

/// Whether `err` is a closed pipe on the way out (a reader such as `head`
/// stopped reading): the command then ends quietly with 0.
pub(crate) fn is_closed_pipe(err: &anyhow::Error) -> bool {
    let pipe = std::io::ErrorKind::BrokenPipe;
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == pipe)
            // A document written straight to stdout fails as serde's error.
            || cause
                .downcast_ref::<serde_json::Error>()
                .is_some_and(|e| e.io_error_kind() == Some(pipe))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_the_page_names_is_an_exit_and_each_command_once() {
        let mut commands = std::collections::BTreeSet::new();
        for (command, codes) in PAGE {
            assert!(commands.insert(*command), "{command} twice");
            assert!(!codes.is_empty(), "{command}");
        }
        let page = markdown();
        for code in [0, 1, 2, 3, 4] {
            assert!(page.contains(&format!("| {code} |")), "{code}: {page}");
        }
        assert_eq!(ExitCode::from(Exit::Unmet), ExitCode::from(4));
        assert_eq!(Exit::Harness(127).code(), 127);
    }

    #[test]
    fn a_closed_pipe_is_told_apart_from_other_failures() {
        let pipe = anyhow::Error::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe))
            .context("writing the list");
        assert!(is_closed_pipe(&pipe));
        let other = anyhow::anyhow!("the store could not be read");
        assert!(!is_closed_pipe(&other));
    }
}
