//! `tether-bridge --connect 127.0.0.1:PORT`: a stdio MCP server that relays,
//! unchanged, to a Tether endpoint. The token comes from `TETHER_BRIDGE_TOKEN`.
//!
//! Exit codes: 0 when either side ended normally, 1 when the endpoint could not
//! be reached or relaying failed, 2 on a usage error.

use std::net::SocketAddr;
use std::process::ExitCode;

use tether_kandev_endpoint::bridge::{CONNECT_FLAG, TOKEN_ENV, relay};

fn usage(msg: &str) -> ExitCode {
    eprintln!(
        "tether-bridge: {msg}\nusage: {TOKEN_ENV}=<token> tether-bridge {CONNECT_FLAG} 127.0.0.1:PORT"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let addr = match args.as_slice() {
        [flag, addr] if flag == CONNECT_FLAG => addr,
        _ => return usage("expected exactly one --connect ADDR"),
    };
    let addr: SocketAddr = match addr.parse() {
        Ok(addr) => addr,
        Err(_) => return usage("--connect takes IP:PORT"),
    };
    if !addr.ip().is_loopback() {
        return usage("--connect must name a loopback address");
    }
    let Ok(token) = std::env::var(TOKEN_ENV) else {
        return usage(&format!("{TOKEN_ENV} is not set"));
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("tether-bridge: cannot start: {err}");
            return ExitCode::FAILURE;
        }
    };
    let code = match runtime.block_on(relay(addr, &token)) {
        Ok(()) => 0,
        Err(err) => {
            eprintln!("tether-bridge: {err}");
            1
        }
    };
    // Exit now: a pending read on stdin would otherwise hold the runtime open.
    std::process::exit(code)
}
