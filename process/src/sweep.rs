//! Finding and killing every descendant of a child, wherever it went.
//!
//! A process-group kill misses anything that calls `setsid` or double-forks
//! (daemons, browsers, language servers, an agent's hub daemon). So each
//! [`ChildGroup`](crate::ChildGroup) marks its child's environment with a
//! random id ([`GROUP_MARKER_ENV`]) that every descendant inherits, and the
//! sweep takes, on Linux, from `/proc`:
//! - every process still in the child's process group;
//! - every descendant of the child by parent links;
//! - every process whose environment carries the group's marker (a daemon that
//!   left both the group and the tree);
//!
//! freezes them all (`SIGSTOP`, so a fork loop cannot outrun it), kills them
//! (`SIGKILL`), and repeats until none is left, within a bound. Processes that
//! were handed to this process as a subreaper ([`become_subreaper`]) are
//! reaped here; the child itself is left to its owner's `wait`.
//!
//! Fallback, stated plainly: a descendant that both leaves the process group
//! and clears its environment, after its parent has exited, is found only if
//! this process is its subreaper and it is still a child of ours; elsewhere
//! (no `/proc`), only the process group is killed.

/// The environment variable that marks a child and all its descendants.
pub const GROUP_MARKER_ENV: &str = "TETHER_CHILD_GROUP";

/// Sweep rounds before giving up on a process that keeps coming back.
const MAX_ROUNDS: usize = 60;

/// A fresh marker value: 128 bits from the OS RNG, as hex.
pub(crate) fn new_marker() -> String {
    let mut bytes = [0u8; 16];
    // An unpredictable marker is not a security boundary, but a colliding one
    // would kill a stranger's processes: never fall back to a guess.
    getrandom::fill(&mut bytes).expect("the OS random source is unavailable");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Makes this process the subreaper of its descendants (Linux
/// `PR_SET_CHILD_SUBREAPER`): a daemonized grandchild whose parent exits is
/// handed to this process instead of to init, so a sweep can find and reap
/// it. Call it once at start-up, in a process that runs agents or servers;
/// it affects the whole process.
pub fn become_subreaper() -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes one integer argument
        // and touches no memory of ours.
        let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::{BTreeMap, BTreeSet};
    use std::io::Read;

    /// One line of the process table.
    #[derive(Debug, Clone, Copy)]
    pub(super) struct Proc {
        pub pid: i32,
        pub ppid: i32,
        pub pgid: i32,
        pub zombie: bool,
    }

    /// Reads `/proc/PID/stat`: the fields after the command name, which may
    /// itself hold spaces and parentheses.
    fn stat(pid: i32) -> Option<Proc> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let rest = &text[text.rfind(')')? + 1..];
        let mut fields = rest.split_whitespace();
        let state = fields.next()?;
        let ppid = fields.next()?.parse().ok()?;
        let pgid = fields.next()?.parse().ok()?;
        Some(Proc {
            pid,
            ppid,
            pgid,
            zombie: state == "Z" || state == "X",
        })
    }

    pub(super) fn table() -> Vec<Proc> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter_map(stat)
            .collect()
    }

    /// Whether the process's environment holds `needle` (`NAME=value\0`).
    /// Environments are read up to 1 MiB; unreadable ones (another user's)
    /// hold nothing of ours.
    fn carries(pid: i32, needle: &[u8]) -> bool {
        let Ok(file) = std::fs::File::open(format!("/proc/{pid}/environ")) else {
            return false;
        };
        let mut env = Vec::new();
        if file.take(1024 * 1024).read_to_end(&mut env).is_err() {
            return false;
        }
        env.split(|b| *b == 0).any(|var| var == needle)
    }

    /// The live processes that belong to the group led by `root` (when the
    /// leader is not yet reaped, so its pid cannot name a stranger) or carry
    /// `marker`.
    pub(super) fn members(root: Option<i32>, marker: &str) -> BTreeSet<i32> {
        let me = std::process::id() as i32;
        let needle = format!("{}={marker}", super::GROUP_MARKER_ENV).into_bytes();
        let procs: Vec<Proc> = table()
            .into_iter()
            .filter(|p| !p.zombie && p.pid != me)
            .collect();
        let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
        for p in &procs {
            children.entry(p.ppid).or_default().push(p.pid);
        }
        let mut found: BTreeSet<i32> = procs
            .iter()
            .filter(|p| root.is_some_and(|r| p.pid == r || p.pgid == r) || carries(p.pid, &needle))
            .map(|p| p.pid)
            .collect();
        // Everything below a member is a member.
        let mut stack: Vec<i32> = found.iter().copied().collect();
        while let Some(pid) = stack.pop() {
            for &child in children.get(&pid).into_iter().flatten() {
                if found.insert(child) {
                    stack.push(child);
                }
            }
        }
        found
    }

    pub(super) fn signal(pid: i32, signal: i32) {
        // SAFETY: kill takes two integers; a stale pid at worst yields ESRCH.
        unsafe {
            libc::kill(pid, signal);
        }
    }

    /// Reaps `pid` if it is a zombie child of ours (a subreaper's orphan).
    pub(super) fn reap_if_ours(pid: i32) {
        let me = std::process::id() as i32;
        if stat(pid).is_some_and(|p| p.zombie && p.ppid == me) {
            let mut status = 0;
            // SAFETY: waitpid on one specific pid with WNOHANG; `status` is ours.
            unsafe {
                libc::waitpid(pid, &mut status, libc::WNOHANG);
            }
        }
    }
}

/// Kills every process of the group led by `root` (see the module docs), and
/// reaps the orphans handed to this process. Pass `root` only while the
/// leader is not yet reaped: a reaped pid may already name a stranger, and
/// then the marker alone decides. Returns how many processes it killed.
/// Blocking, bounded: at most 60 short rounds.
pub fn sweep(root: Option<u32>, marker: &str) -> usize {
    #[cfg(target_os = "linux")]
    {
        let root = root.and_then(|r| i32::try_from(r).ok());
        let mut killed = std::collections::BTreeSet::new();
        for _ in 0..MAX_ROUNDS {
            let members = linux::members(root, marker);
            if members.is_empty() {
                break;
            }
            // Freeze first, so nothing forks between finding and killing.
            for &pid in &members {
                linux::signal(pid, libc::SIGSTOP);
            }
            let mut all = members;
            all.extend(linux::members(root, marker));
            for &pid in &all {
                linux::signal(pid, libc::SIGKILL);
            }
            killed.extend(all);
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // Members are never zombies, so once a round finds none, every killed
        // process is a zombie: reap those handed to us, once, here.
        for &pid in &killed {
            if Some(pid) != root {
                linux::reap_if_ours(pid);
            }
        }
        killed.len()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (root, marker);
        0
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Live processes whose command line holds `token`.
    fn living(token: &str) -> Vec<i32> {
        linux::table()
            .into_iter()
            .filter(|p| !p.zombie)
            .filter(|p| {
                std::fs::read(format!("/proc/{}/cmdline", p.pid))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(token))
            })
            .map(|p| p.pid)
            .collect()
    }

    #[test]
    fn given_a_daemon_that_left_the_group_and_the_tree_then_the_sweep_finds_it_by_its_marker() {
        let _ = become_subreaper();
        let marker = new_marker();
        let token = format!("{}", 700_000 + std::process::id() % 9_000);
        // sh starts a setsid'd, double-forked sleep, then exits: the sleep has
        // left the process group and its parent is gone.
        let status = std::process::Command::new("sh")
            .args(["-c", &format!("(setsid sleep {token} &) ; exit 0")])
            .env(GROUP_MARKER_ENV, &marker)
            .status()
            .expect("sh");
        assert!(status.success());
        // Wait for the sleep itself: the subshells that start it carry the
        // token on their command lines too, and come and go first.
        let is_sleep = |pid: &i32| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "sleep")
        };
        let mut before = Vec::new();
        for _ in 0..200 {
            before = living(&token).into_iter().filter(is_sleep).collect();
            if !before.is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(!before.is_empty(), "the daemon started");
        // The sh is gone and reaped: only the marker can find the sleep.
        let killed = sweep(None, &marker);
        assert!(killed >= 1);
        assert!(
            living(&token).is_empty(),
            "left behind: {:?}",
            living(&token)
        );
    }

    #[test]
    fn a_marker_never_matches_a_stranger() {
        let marker = new_marker();
        assert_eq!(sweep(None, &marker), 0);
    }
}
