//! The bridge command, built inside this package so its tests can find it
//! (`CARGO_BIN_EXE_tether-test-bridge`); the same library code as `tether-bridge`.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(tether_kandev_endpoint::bridge::command_main(&args))
}
