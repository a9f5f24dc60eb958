//! `tether serve`: the live status view over what a host stored. Changes to
//! the store (SQLite file or PostgreSQL database) appear in open pages
//! without a reload. Read-only: the diagnostic actions need the host that
//! runs the session (see `tether-example-host --serve`).

use crate::exit::Exit;
use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;

use clap::Args;
use tether_web::{StatusService, StoreSource};

use crate::host::Opened;

/// Serve the live status view over a host's store.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help("Print one JSON document ({url, login_url, token}) instead of the text, then serve")))]
pub struct ServeArgs {
    #[command(flatten)]
    store: crate::host::StoreArgs,
    /// Where to listen. Loopback unless you say otherwise; port 0 picks a free one.
    #[arg(long, default_value = "127.0.0.1:0", value_name = "IP:PORT")]
    addr: SocketAddr,
    /// Also answer this exact Host header value (a name you reach the service by), repeatable.
    #[arg(long = "allow-host", value_name = "HOST:PORT")]
    allow_hosts: Vec<String>,
    /// Allow this origin cross-origin (CORS), repeatable; none by default.
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    cors_origins: Vec<String>,
    #[command(flatten)]
    output: crate::flags::Output,
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let at = match args.store.at() {
        Ok(at) => at,
        Err(err) => {
            errln!("tether serve: {err}");
            return Ok(ExitCode::from(Exit::Usage));
        }
    };
    at.announce("tether serve");
    if !at.is_postgres() && !at.exists() {
        // A fresh machine: an empty view that fills as sessions are
        // stored, never an error (the store is made, as on first use).
        errln!(
            "tether serve: no store at {} yet; serving an empty view that fills as `tether collect` or `tether sessions import` writes it",
            at.shown()
        );
        if let Err(err) = at.open_writable() {
            errln!(
                "tether serve: cannot make the store {}: {err:#}",
                at.shown()
            );
            return Ok(ExitCode::FAILURE);
        }
    }
    let opened = match at.open_read_only("tether serve") {
        Ok(Some(opened)) => opened,
        Ok(None) => return Ok(ExitCode::FAILURE),
        Err(err) => {
            errln!("tether serve: {err}");
            return Ok(ExitCode::FAILURE);
        }
    };
    // PostgreSQL announces changes (NOTIFY); SQLite is polled.
    let what = match &opened {
        Opened::Postgres(store) => format!(
            "{} (PostgreSQL, {}; live by NOTIFY)",
            store.target(),
            store.security()
        ),
        Opened::Sqlite(_) => format!("{} (SQLite, checked every 250 ms)", at.shown()),
    };
    let (store, hint) = opened.into_followed()?;
    let source = crate::term::with_progress("reading the stored sessions…", || {
        StoreSource::follow(store, hint)
    })?;
    let runtime = crate::host::runtime()?;
    runtime.block_on(async move {
        let running = match StatusService::for_store(source)
            .serve_with(args.addr, args.allow_hosts, args.cors_origins)
            .await
        {
            Ok(running) => running,
            Err(err) => {
                errln!("tether serve: cannot listen on {}: {err}", args.addr);
                return Ok(ExitCode::FAILURE);
            }
        };
        // Ctrl-C is caught before the address is printed (see cancel_on_ctrl_c).
        let cancel = crate::host::cancel_on_ctrl_c();
        let mut out = crate::term::stdout();
        if args.output.json {
            serde_json::to_writer(
                &mut out,
                &serde_json::json!({
                    "url": running.url(),
                    "login_url": running.login_url(),
                    "token": running.token().secret(),
                }),
            )?;
            writeln!(out)?;
        } else {
            print_banner(&mut out, &running, &what)?;
        }
        out.flush()?;
        drop(out);
        if !running.addr().ip().is_loopback() {
            errln!(
                "tether serve: listening on {}, which is not loopback: anyone who can reach it and holds the token sees these sessions",
                running.addr()
            );
        }
        cancel.cancelled().await;
        running.shutdown().await;
        Ok(ExitCode::SUCCESS)
    })
}

fn print_banner(
    out: &mut impl Write,
    running: &tether_web::RunningService,
    what: &str,
) -> std::io::Result<()> {
    writeln!(out, "tether serve: the live status view of {what}")?;
    writeln!(out, "{}", running.banner())?;
    writeln!(out, "  Ctrl-C stops.")
}
