//! `tether service install|uninstall|status`: `tether collect` (and, with
//! `--serve`, `tether serve`) as a per-user service on the default store,
//! restarted on failure, logging to the platform's place: systemd user units
//! on Linux (the journal), launchd agents on macOS (`~/Library/Logs/tether`).
//! The unit files are Tether's own, named for it; it prints what it wrote,
//! and `uninstall` removes exactly those.
//!
//! Exit codes: 0 done; 1 a file could not be written or removed, or the
//! service manager refused to start or stop it (the files stay, and it says
//! what to run); 2 usage error (a platform with neither).

use crate::exit::Exit;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand, ValueEnum};

/// Run `tether collect` (and optionally `tether serve`) as a per-user service.
#[derive(Debug, Args)]
pub struct ServiceArgs {
    #[command(subcommand)]
    command: ServiceCommand,
}

#[derive(Debug, Subcommand)]
enum ServiceCommand {
    /// Write the unit files and start them (systemd user units, or launchd agents).
    Install {
        /// Also run `tether serve` (the live status view, on 127.0.0.1:4320).
        #[arg(long)]
        serve: bool,
        /// Write the files only; start nothing.
        #[arg(long)]
        no_start: bool,
        /// Print the files instead of writing them.
        #[arg(long)]
        print: bool,
        /// The service manager (default: this platform's); other than this
        /// platform's, only with --print.
        #[arg(long, value_enum)]
        manager: Option<Manager>,
    },
    /// Stop the services and remove their unit files.
    Uninstall {
        /// Remove the files only; stop nothing.
        #[arg(long)]
        no_stop: bool,
    },
    /// Which unit files are installed, whether they are current, and whether they run.
    Status,
}

/// A per-user service manager.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Manager {
    /// systemd user units (Linux).
    Systemd,
    /// launchd agents (macOS).
    Launchd,
}

impl Manager {
    fn here() -> Option<Manager> {
        if cfg!(target_os = "macos") {
            Some(Manager::Launchd)
        } else if cfg!(target_os = "linux") {
            Some(Manager::Systemd)
        } else {
            None
        }
    }
}

/// One Tether service: the command it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    Collect,
    Serve,
}

impl Which {
    const ALL: [Which; 2] = [Which::Collect, Which::Serve];

    fn name(self) -> &'static str {
        match self {
            Which::Collect => "collect",
            Which::Serve => "serve",
        }
    }

    fn args(self) -> &'static [&'static str] {
        match self {
            Which::Collect => &["collect", "--addr", "127.0.0.1:4318"],
            Which::Serve => &["serve", "--addr", "127.0.0.1:4320"],
        }
    }

    fn description(self) -> &'static str {
        match self {
            Which::Collect => "Tether: receive your coding agents' own telemetry (tether collect)",
            Which::Serve => "Tether: the live status view (tether serve)",
        }
    }
}

/// Where `manager` keeps `which`'s unit file under `home`.
fn unit_path(manager: Manager, which: Which, home: &Path) -> PathBuf {
    match manager {
        Manager::Systemd => {
            let config = std::env::var_os("XDG_CONFIG_HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .unwrap_or_else(|| home.join(".config"));
            config
                .join("systemd/user")
                .join(format!("tether-{}.service", which.name()))
        }
        Manager::Launchd => home
            .join("Library/LaunchAgents")
            .join(format!("dev.tether.{}.plist", which.name())),
    }
}

/// The unit's name as its manager knows it.
fn unit_name(manager: Manager, which: Which) -> String {
    match manager {
        Manager::Systemd => format!("tether-{}.service", which.name()),
        Manager::Launchd => format!("dev.tether.{}", which.name()),
    }
}

/// A systemd user unit running `exe` with `which`'s arguments: restarted
/// on failure, its output in the journal.
fn systemd_unit(exe: &Path, which: Which) -> String {
    let command: Vec<String> = std::iter::once(systemd_quote(&exe.display().to_string()))
        .chain(which.args().iter().map(|a| (*a).to_owned()))
        .collect();
    format!(
        "# Written by `tether service install`; `tether service uninstall` removes it.\n\
         [Unit]\n\
         Description={}\n\
         \n\
         [Service]\n\
         Type=exec\n\
         ExecStart={}\n\
         Restart=on-failure\n\
         RestartSec=2s\n\
         # Output goes to the journal: journalctl --user -u {}\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n",
        which.description(),
        command.join(" "),
        unit_name(Manager::Systemd, which)
    )
}

/// A word for systemd's command line: quoted when it holds a space, a
/// quote, a backslash or `%` (which systemd would expand).
fn systemd_quote(word: &str) -> String {
    let word = word.replace('%', "%%");
    if word.contains([' ', '"', '\'', '\\', '\t']) {
        format!("\"{}\"", word.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        word
    }
}

/// A launchd agent running `exe` with `which`'s arguments: kept alive
/// when it fails, its output in `~/Library/Logs/tether/`.
fn launchd_plist(exe: &Path, which: Which, home: &Path) -> String {
    let xml = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let args: String = std::iter::once(exe.display().to_string())
        .chain(which.args().iter().map(|a| (*a).to_owned()))
        .map(|a| format!("    <string>{}</string>\n", xml(&a)))
        .collect();
    let log = home
        .join("Library/Logs/tether")
        .join(format!("{}.log", which.name()));
    let log = xml(&log.display().to_string());
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <!-- Written by `tether service install`; `tether service uninstall` removes it. -->\n\
         <plist version=\"1.0\">\n\
         <dict>\n\
         \x20 <key>Label</key>\n\
         \x20 <string>{}</string>\n\
         \x20 <key>ProgramArguments</key>\n\
         \x20 <array>\n\
         {args}\
         \x20 </array>\n\
         \x20 <key>RunAtLoad</key>\n\
         \x20 <true/>\n\
         \x20 <key>KeepAlive</key>\n\
         \x20 <dict>\n\
         \x20   <key>SuccessfulExit</key>\n\
         \x20   <false/>\n\
         \x20 </dict>\n\
         \x20 <key>StandardOutPath</key>\n\
         \x20 <string>{log}</string>\n\
         \x20 <key>StandardErrorPath</key>\n\
         \x20 <string>{log}</string>\n\
         </dict>\n\
         </plist>\n",
        unit_name(Manager::Launchd, which)
    )
}

fn unit_text(manager: Manager, which: Which, exe: &Path, home: &Path) -> String {
    match manager {
        Manager::Systemd => systemd_unit(exe, which),
        Manager::Launchd => launchd_plist(exe, which, home),
    }
}

fn home() -> anyhow::Result<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .ok_or_else(|| anyhow::anyhow!("HOME is not set to an absolute path"))
}

/// Runs the service manager's command, bounded: its success, and its first
/// line of complaint.
fn manage(program: &str, args: &[&str]) -> Result<(), String> {
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("{program} cannot run here: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                let mut said = String::new();
                if let Some(mut err) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut err, &mut said);
                }
                return if status.success() {
                    Ok(())
                } else {
                    Err(said.lines().next().unwrap_or("it failed").trim().to_owned())
                };
            }
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(50));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{program} did not finish within 30 s"));
            }
        }
    }
}

/// Starts (or, with `start` false, stops) `units`; what to run by hand when
/// the manager refuses.
fn start_or_stop(manager: Manager, units: &[(Which, PathBuf)], start: bool) -> Result<(), String> {
    for (which, path) in units {
        let name = unit_name(manager, *which);
        let path = path.display().to_string();
        // What the manager is asked, in order; printed as is when it refuses.
        let commands: Vec<Vec<&str>> = match (manager, start) {
            (Manager::Systemd, true) => vec![
                vec!["systemctl", "--user", "daemon-reload"],
                vec!["systemctl", "--user", "enable", "--now", &name],
            ],
            (Manager::Systemd, false) => {
                vec![vec!["systemctl", "--user", "disable", "--now", &name]]
            }
            (Manager::Launchd, true) => vec![vec!["launchctl", "load", "-w", &path]],
            (Manager::Launchd, false) => vec![vec!["launchctl", "unload", "-w", &path]],
        };
        let result = commands
            .iter()
            .try_for_each(|words| manage(words[0], &words[1..]));
        if let Err(why) = result {
            let by_hand: Vec<String> = commands
                .iter()
                .map(|words| tether_sdk::materialize::command_line(words.iter().copied()))
                .collect();
            return Err(format!("{why}; run: {}", by_hand.join(" && ")));
        }
    }
    Ok(())
}

pub fn run(args: ServiceArgs) -> anyhow::Result<ExitCode> {
    let here = Manager::here();
    match args.command {
        ServiceCommand::Install {
            serve,
            no_start,
            print,
            manager,
        } => {
            let Some(manager) = manager.or(here) else {
                return Ok(no_manager());
            };
            if !print && Some(manager) != here {
                errln!(
                    "tether service: --manager other than this platform's works only with --print"
                );
                return Ok(ExitCode::from(Exit::Usage));
            }
            install(manager, serve, no_start, print)
        }
        ServiceCommand::Uninstall { no_stop } => match here {
            Some(manager) => uninstall(manager, no_stop),
            None => Ok(no_manager()),
        },
        ServiceCommand::Status => match here {
            Some(manager) => status(manager),
            None => Ok(no_manager()),
        },
    }
}

fn no_manager() -> ExitCode {
    errln!("tether service: this platform has neither systemd nor launchd");
    ExitCode::from(Exit::Usage)
}

/// Writes (or with `print`, prints) the units, then starts them unless
/// `no_start`.
fn install(manager: Manager, serve: bool, no_start: bool, print: bool) -> anyhow::Result<ExitCode> {
    let mut out = crate::term::stdout();
    let exe = std::env::current_exe()?;
    let home = home()?;
    let wanted: Vec<Which> = Which::ALL
        .into_iter()
        .filter(|w| *w == Which::Collect || serve)
        .collect();
    if print {
        for which in wanted {
            writeln!(out, "# {}", unit_path(manager, which, &home).display())?;
            write!(out, "{}", unit_text(manager, which, &exe, &home))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let mut written = Vec::new();
    for which in wanted {
        let path = unit_path(manager, which, &home);
        let text = unit_text(manager, which, &exe, &home);
        if let Err(err) = write_unit(&path, &text) {
            errln!("tether service: cannot write {}: {err}", path.display());
            return Ok(ExitCode::FAILURE);
        }
        if manager == Manager::Launchd {
            let _ = std::fs::create_dir_all(home.join("Library/Logs/tether"));
        }
        writeln!(out, "wrote {}", path.display())?;
        written.push((which, path));
    }
    if no_start {
        writeln!(out, "not started (--no-start)")?;
        return Ok(ExitCode::SUCCESS);
    }
    match start_or_stop(manager, &written, true) {
        Ok(()) => {
            for (which, _) in &written {
                writeln!(out, "started {}", unit_name(manager, *which))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(why) => {
            errln!("tether service: written, but not started: {why}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Stops (unless `no_stop`) and removes the installed units, and systemd's
/// per-user directories when they are left empty.
fn uninstall(manager: Manager, no_stop: bool) -> anyhow::Result<ExitCode> {
    let mut out = crate::term::stdout();
    let home = home()?;
    let installed: Vec<(Which, PathBuf)> = Which::ALL
        .into_iter()
        .map(|w| (w, unit_path(manager, w, &home)))
        .filter(|(_, p)| p.exists())
        .collect();
    if installed.is_empty() {
        writeln!(out, "nothing installed")?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut code = ExitCode::SUCCESS;
    if !no_stop && let Err(why) = start_or_stop(manager, &installed, false) {
        errln!("tether service: not stopped: {why}");
        code = ExitCode::FAILURE;
    }
    for (_, path) in &installed {
        match std::fs::remove_file(path) {
            Ok(()) => writeln!(out, "removed {}", path.display())?,
            Err(err) => {
                errln!("tether service: cannot remove {}: {err}", path.display());
                code = ExitCode::FAILURE;
            }
        }
    }
    if manager == Manager::Systemd
        && let Some(user) = installed.first().and_then(|(_, p)| p.parent())
    {
        let _ = std::fs::remove_dir(user);
        if let Some(systemd) = user.parent() {
            let _ = std::fs::remove_dir(systemd);
        }
        if !no_stop {
            let _ = manage("systemctl", &["--user", "daemon-reload"]);
        }
    }
    Ok(code)
}

/// Each unit: installed or not, current or not, running or not.
fn status(manager: Manager) -> anyhow::Result<ExitCode> {
    let mut out = crate::term::stdout();
    let home = home()?;
    let exe = std::env::current_exe()?;
    for which in Which::ALL {
        let path = unit_path(manager, which, &home);
        let name = unit_name(manager, which);
        let Ok(text) = std::fs::read_to_string(&path) else {
            writeln!(out, "{name}: not installed")?;
            continue;
        };
        let current = text == unit_text(manager, which, &exe, &home);
        let running = match manager {
            Manager::Systemd => {
                match manage("systemctl", &["--user", "is-active", "--quiet", &name]) {
                    Ok(()) => "running",
                    Err(_) => "not running (or systemctl --user is not reachable here)",
                }
            }
            Manager::Launchd => match manage("launchctl", &["list", &name]) {
                Ok(()) => "loaded",
                Err(_) => "not loaded",
            },
        };
        writeln!(
            out,
            "{name}: installed at {}{}; {running}",
            path.display(),
            if current {
                ""
            } else {
                " (written by another tether or version: install again to update it)"
            }
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes a unit file whole (a temporary file renamed over it), mode 0644,
/// its directory created 0755 as the manager expects.
fn write_unit(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("no parent directory"))?;
    std::fs::create_dir_all(dir)?;
    let temporary = dir.join(format!(".tether-unit.{}", std::process::id()));
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_systemd_would_split_or_expand_is_quoted() {
        assert_eq!(systemd_quote("/usr/bin/tether"), "/usr/bin/tether");
        assert_eq!(
            systemd_quote("/home/a b/100%/tether"),
            "\"/home/a b/100%%/tether\""
        );
        assert_eq!(systemd_quote("/x/\"q\""), "\"/x/\\\"q\\\"\"");
    }

    #[test]
    fn a_path_xml_would_read_as_markup_is_escaped() {
        let plist = launchd_plist(Path::new("/a&b/<t>"), Which::Collect, Path::new("/h"));
        assert!(
            plist.contains("<string>/a&amp;b/&lt;t&gt;</string>"),
            "{plist}"
        );
    }
}
