//! `tether completions SHELL` and `tether man` (both hidden): the shell
//! completions and the man page the release archive ships, generated from
//! the parser itself by the binary they describe (`cargo xtask dist` runs
//! them), so they cannot fall behind it.

use std::process::ExitCode;

use clap::Args;

/// `tether completions SHELL`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// Which shell's completion script.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Prints `shell`'s completion script for `command` on stdout.
pub fn completions(args: CompletionsArgs, mut command: clap::Command) -> anyhow::Result<ExitCode> {
    use clap_complete::Generator;
    // What `clap_complete::generate` does, but a closed pipe is an error,
    // not a panic.
    command.set_bin_name("tether");
    command.build();
    let mut out = crate::term::stdout();
    args.shell.try_generate(&command, &mut out)?;
    Ok(ExitCode::SUCCESS)
}

/// Prints `command`'s man page (roff, section 1) on stdout.
pub fn man(command: clap::Command) -> anyhow::Result<ExitCode> {
    let mut out = crate::term::stdout();
    clap_mangen::Man::new(command).render(&mut out)?;
    Ok(ExitCode::SUCCESS)
}
