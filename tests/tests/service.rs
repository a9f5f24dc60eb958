//! `tether service`, on a private `HOME`: the unit files it writes are what
//! systemd's own `systemd-analyze verify` accepts (and launchd's plist is
//! what a property-list parser reads back), `status` sees them, and
//! `uninstall` leaves nothing behind.

use std::path::Path;
use std::process::Command;

use tether_tests::workspace_bin;

fn tether(home: &Path) -> Command {
    tether_tests::tether_at_home(home)
}

/// Every path under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            out.push(
                path.strip_prefix(dir)
                    .unwrap_or(&path)
                    .display()
                    .to_string(),
            );
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

/// systemd's own verifier, or a loud skip (a failure under
/// `TETHER_REQUIRE_PEERS`, since `.ci/run` installs Debian's systemd).
fn systemd_analyze() -> Option<&'static str> {
    let path = "/usr/bin/systemd-analyze";
    if Path::new(path).exists() {
        return Some(path);
    }
    let message = "SKIP: systemd-analyze is not installed (Debian's systemd package)";
    assert!(
        std::env::var_os("TETHER_REQUIRE_PEERS").is_none(),
        "{message} and TETHER_REQUIRE_PEERS is set"
    );
    eprintln!("{message}");
    None
}

/// GIVEN a private home WHEN `tether service install --serve --no-start`
/// THEN two user units are written where systemd looks, each running this
/// tether on a loopback address and restarting on failure, and
/// `systemd-analyze --user verify` finds nothing to say; `status` says they
/// are installed and current; `uninstall --no-stop` removes them and the
/// home is as it was.
#[cfg(target_os = "linux")]
#[test]
fn systemd_units_are_verified_and_uninstall_leaves_nothing_behind() {
    let home = tempfile::tempdir().expect("home");
    std::fs::create_dir(home.path().join(".config")).expect("a .config of the user's");
    let before = tree(home.path());

    let out = tether(home.path())
        .args(["service", "install", "--serve", "--no-start"])
        .output()
        .expect("install");
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = home.path().join(".config/systemd/user");
    for (name, command) in [
        ("tether-collect.service", "collect --addr 127.0.0.1:4318"),
        ("tether-serve.service", "serve --addr 127.0.0.1:4320"),
    ] {
        let path = dir.join(name);
        assert!(
            said.contains(&format!("wrote {}", path.display())),
            "{said}"
        );
        let unit = std::fs::read_to_string(&path).expect("unit");
        assert!(
            unit.contains(&format!(
                "ExecStart={} {command}\n",
                workspace_bin("tether").display()
            )),
            "{unit}"
        );
        assert!(unit.contains("Restart=on-failure"), "{unit}");
        if let Some(analyze) = systemd_analyze() {
            let runtime = tempfile::tempdir().expect("runtime dir");
            let verified = Command::new(analyze)
                .args(["--user", "verify", "--man=no"])
                .arg(&path)
                .env("HOME", home.path())
                .env("XDG_RUNTIME_DIR", runtime.path())
                .output()
                .expect("systemd-analyze");
            let complaints = format!(
                "{}{}",
                String::from_utf8_lossy(&verified.stdout),
                String::from_utf8_lossy(&verified.stderr)
            );
            assert!(
                verified.status.success() && complaints.trim().is_empty(),
                "{name}: {complaints}"
            );
        }
    }
    assert!(said.contains("not started (--no-start)"), "{said}");

    let out = tether(home.path())
        .args(["service", "status"])
        .output()
        .expect("status");
    let status = String::from_utf8_lossy(&out.stdout);
    assert!(
        status.contains("tether-collect.service: installed at")
            && status.contains("tether-serve.service: installed at")
            && !status.contains("another tether"),
        "{status}"
    );

    // Started with no user session bus to reach (a cleared environment):
    // the files stay, and it says what to run.
    let out = tether(home.path())
        .args(["service", "install"])
        .output()
        .expect("install");
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("written, but not started")
            && said.contains(
                "run: systemctl --user daemon-reload && systemctl --user enable --now tether-collect.service"
            ),
        "{said}"
    );
    assert!(dir.join("tether-collect.service").exists());

    let out = tether(home.path())
        .args(["service", "uninstall", "--no-stop"])
        .output()
        .expect("uninstall");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(tree(home.path()), before, "nothing left behind");
    let out = tether(home.path())
        .args(["service", "status"])
        .output()
        .expect("status");
    assert!(String::from_utf8_lossy(&out.stdout).contains("tether-collect.service: not installed"));
}

/// GIVEN `--print --manager launchd` WHEN a property-list parser (Python's
/// plistlib) reads the agent THEN it runs this tether's `collect` on
/// loopback, kept alive on failure, logging under `~/Library/Logs/tether`;
/// and printing writes nothing.
#[test]
fn the_launchd_agent_is_a_property_list_that_says_what_to_run() {
    let home = tempfile::tempdir().expect("home");
    let out = tether(home.path())
        .args(["service", "install", "--print", "--manager", "launchd"])
        .output()
        .expect("print");
    assert_eq!(out.status.code(), Some(0));
    assert!(tree(home.path()).is_empty(), "--print writes nothing");
    let text = String::from_utf8(out.stdout).expect("utf8");
    let (first, plist) = text.split_once('\n').expect("a path line");
    assert!(
        first.ends_with("Library/LaunchAgents/dev.tether.collect.plist"),
        "{first}"
    );
    let mut python = Command::new("python3")
        .args([
            "-c",
            "import json,plistlib,sys; print(json.dumps(plistlib.loads(sys.stdin.buffer.read())))",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    std::io::Write::write_all(&mut python.stdin.take().expect("stdin"), plist.as_bytes())
        .expect("write");
    let parsed = python.wait_with_output().expect("parsed");
    assert!(parsed.status.success());
    let agent: serde_json::Value = serde_json::from_slice(&parsed.stdout).expect("json");
    assert_eq!(agent["Label"], "dev.tether.collect");
    assert_eq!(
        agent["ProgramArguments"],
        serde_json::json!([
            workspace_bin("tether").display().to_string(),
            "collect",
            "--addr",
            "127.0.0.1:4318"
        ])
    );
    assert_eq!(agent["KeepAlive"]["SuccessfulExit"], false);
    assert_eq!(
        agent["StandardOutPath"],
        home.path()
            .join("Library/Logs/tether/collect.log")
            .display()
            .to_string()
    );
    // Installing for another platform's manager is refused.
    let out = tether(home.path())
        .args(["service", "install", "--manager", "launchd", "--no-start"])
        .output()
        .expect("refused");
    if cfg!(target_os = "linux") {
        assert_eq!(out.status.code(), Some(2));
    }
}
