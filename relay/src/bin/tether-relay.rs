//! `tether-relay`: started by an agent in place of a third-party stdio MCP
//! server, when the host opted that server into observation (see
//! tether_relay::run). Exit status: the server's own; 1 when the host
//! refused or the server could not start.

fn main() {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("tether-relay: {err}");
            std::process::exit(1);
        }
    };
    let code = runtime.block_on(tether_relay::run::run());
    // Exit at once: a blocking read of our stdin may still be parked, and a
    // runtime waits for those when dropped.
    std::process::exit(code)
}
