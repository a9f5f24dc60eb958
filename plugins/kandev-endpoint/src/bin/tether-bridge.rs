//! `tether-bridge --connect 127.0.0.1:PORT`: a stdio MCP server that relays,
//! unchanged, to a Tether endpoint. The token comes from `TETHER_BRIDGE_TOKEN`.
//!
//! Exit codes: 0 when either side ended normally, 1 when the endpoint could not
//! be reached or relaying failed, 2 on a usage error.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = tether_kandev_endpoint::bridge::command_main(&args);
    // Exit now: a pending read on stdin would otherwise hold the runtime open.
    std::process::exit(code)
}
