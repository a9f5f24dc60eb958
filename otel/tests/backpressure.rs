//! The export queue is bounded and never blocks its callers: with a
//! collector that never answers, a flood of served requests returns at once,
//! and what does not fit is dropped and counted.

use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use tether_core::served::{RequestIdent, Served, ServedOutcome, ServedRequest, TraceContext};
use tether_core::vocab::Transport;
use tether_otel::{OtelConfig, TetherOtel};

fn hanging_collector() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    format!("http://{addr}")
}

fn request(n: i64) -> Served {
    Served::Request(ServedRequest {
        server: Arc::from("s"),
        method: "tools/call".into(),
        tool: Some("echo".into()),
        request_id: Some(RequestIdent::Number(n)),
        protocol_version: Some("2025-06-18".into()),
        session_id: None,
        transport: Transport::Stdio,
        client_address: None,
        client_port: None,
        start_unix_nanos: 1,
        duration_nanos: 1,
        outcome: ServedOutcome::Ok,
        trace: TraceContext::default(),
        owner: None,
    })
}

#[test]
fn a_flood_against_a_hanging_collector_is_dropped_and_counted_never_blocked() {
    let mut config = OtelConfig::new("backpressure").with_endpoint(hanging_collector());
    config.queue_capacity = 4;
    config.export_timeout = Duration::from_millis(500);
    let otel = TetherOtel::start(config)
        .expect("start")
        .expect("export on");
    let observer = otel.served_observer();
    for n in 0..20_000 {
        observer.served(request(n));
    }
    assert!(otel.dropped() > 0, "a full queue drops");
    assert!(otel.dropped() < 20_000, "the worker drained some");
    let problems = otel.shutdown();
    assert!(
        !problems.is_empty(),
        "a collector that never answers is reported at shutdown"
    );
}

#[test]
fn export_is_off_without_an_endpoint() {
    let config = OtelConfig::new("off");
    assert!(TetherOtel::start(config).expect("no error").is_none());
}
