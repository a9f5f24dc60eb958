//! `tether-fake-agent --mode MODE… [--record FILE] [--fail-session-new MESSAGE]
//! [--say LINE]`: the reference agent with a deliberate misbehaviour, one per
//! probe verdict the tests must prove. Modes compose (`--mode connect-only
//! --mode no-http-sse`).

use std::time::Duration;

use tether_reference_agent::{Behaviour, Crash, run};

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut behaviour = Behaviour {
        name: "tether-fake-agent".into(),
        ..Behaviour::default()
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--record" => behaviour.record_to = it.next().map(Into::into),
            // Refuse session/new (after connecting) with this message; a
            // server named in it is the one the refusal is about.
            "--fail-session-new" => behaviour.fail_session_new = it.next().cloned(),
            // Print this line on stderr at start (the host's "recent output").
            "--say" => {
                if let Some(line) = it.next() {
                    eprintln!("{line}");
                }
            }
            "--mode" => match it.next().map(String::as_str) {
                Some("lists") => {}
                Some("connect-only") => behaviour.list_tools = false,
                Some("ignore") => behaviour.connect = false,
                Some("late") => behaviour.connect_after = Some(Duration::from_secs(1)),
                Some("session-new-error") => {
                    behaviour.connect = false;
                    behaviour.fail_session_new =
                        Some("Internal error: model quota exhausted".into());
                }
                Some("connect-then-error") => {
                    behaviour.fail_session_new = Some("Internal error: after connecting".into());
                }
                Some("crash-at-start") => behaviour.crash = Some(Crash::AtStart),
                Some("crash-at-session-new") => behaviour.crash = Some(Crash::AtSessionNew),
                Some("exit-after-session-new") => behaviour.crash = Some(Crash::AfterSessionNew),
                Some("killed-after-session-new") => {
                    behaviour.crash = Some(Crash::KilledAfterSessionNew)
                }
                Some("ask-client") => behaviour.ask_client = true,
                Some("intrude") => behaviour.drop_credentials = true,
                Some("auth-required") => behaviour.require_auth = true,
                Some("auth-hangs") => behaviour.hang_authenticate = true,
                Some("no-http-sse") => {
                    behaviour.advertise_http = false;
                    behaviour.advertise_sse = false;
                }
                other => {
                    eprintln!("tether-fake-agent: unknown mode {other:?}");
                    return std::process::ExitCode::from(2);
                }
            },
            other => {
                eprintln!("tether-fake-agent: unknown argument {other}");
                return std::process::ExitCode::from(2);
            }
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(_) => return std::process::ExitCode::FAILURE,
    };
    match runtime.block_on(run(behaviour)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(_) => std::process::ExitCode::FAILURE,
    }
}
