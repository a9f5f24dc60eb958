//! What the guard adds to each request before any handler runs: the `Host`
//! and `Origin` policy plus the bearer check (`tether_guard::check`), and the
//! body cap's wrapper. Figures go to docs/PERFORMANCE.md.

use std::hint::black_box;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::header::{AUTHORIZATION, HOST, ORIGIN};
use axum::http::{HeaderMap, HeaderValue};
use criterion::{Criterion, criterion_group, criterion_main};
use tether_guard::{BodyCap, HostPolicy, Token};

fn headers(host: &str, bearer: &str, origin: Option<&str>) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert(HOST, HeaderValue::from_str(host).expect("host"));
    h.insert(
        AUTHORIZATION,
        HeaderValue::from_str(bearer).expect("bearer"),
    );
    if let Some(origin) = origin {
        h.insert(ORIGIN, HeaderValue::from_str(origin).expect("origin"));
    }
    h
}

fn guard(c: &mut Criterion) {
    let policy = HostPolicy::for_addr("127.0.0.1:43117".parse().expect("addr"));
    let token = Token::generate();
    let admitted = headers("127.0.0.1:43117", &token.bearer(), None);
    let rebound = headers("rebound.example:80", &token.bearer(), None);
    let browser = headers(
        "127.0.0.1:43117",
        &token.bearer(),
        Some("http://evil.example"),
    );
    let mut group = c.benchmark_group("guard");
    group.bench_function("check_admitted", |b| {
        b.iter(|| black_box(tether_guard::check(&policy, &token, black_box(&admitted))))
    });
    group.bench_function("check_refused_host", |b| {
        b.iter(|| black_box(tether_guard::check(&policy, &token, black_box(&rebound))))
    });
    group.bench_function("check_refused_origin", |b| {
        b.iter(|| black_box(tether_guard::check(&policy, &token, black_box(&browser))))
    });
    group.bench_function("body_cap_wrap", |b| {
        b.iter(|| {
            let request = Request::new(Body::from("{}"));
            black_box(BodyCap(4 * 1024 * 1024).limit(request))
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3));
    targets = guard
}
criterion_main!(benches);
