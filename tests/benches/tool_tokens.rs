//! What estimating a tool list's token cost takes: `tether_catalog::build_catalog`
//! (o200k_base over each tool's compact JSON, plus the bounded catalog) on
//! server-everything 2026.8.31's real 13 tools (its tools/list output, kept in
//! `tests/fixtures/server-everything-tools.json`) and on a 128-tool catalog
//! made of ten renamed copies of them (the catalog's bound). The encoder is
//! loaded once before measuring; its first load is measured apart.

use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::Value;
use tether_core::model::Timestamp;

fn everything() -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/server-everything-tools.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("json")
}

fn many(n: usize) -> Vec<Value> {
    let base = everything();
    (0..n)
        .map(|i| {
            let mut tool = base[i % base.len()].clone();
            tool["name"] = Value::String(format!("{}-{i}", tool["name"].as_str().unwrap_or("t")));
            tool
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let started = Instant::now();
    let method = tether_catalog::method();
    eprintln!(
        "encoder ({method}) first load: {:.1} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );
    let thirteen = everything();
    assert_eq!(thirteen.len(), 13);
    let catalog = tether_catalog::build_catalog(&thirteen, Timestamp(1));
    eprintln!(
        "server-everything: {} tokens over 13 tools",
        catalog.total_tokens
    );
    let big = many(128);
    let catalog = tether_catalog::build_catalog(&big, Timestamp(1));
    eprintln!("128 tools: {} tokens", catalog.total_tokens);

    let mut group = c.benchmark_group("tool_tokens");
    group.bench_function("server_everything_13_tools", |b| {
        b.iter(|| tether_catalog::build_catalog(std::hint::black_box(&thirteen), Timestamp(1)))
    });
    group.bench_function("catalog_128_tools", |b| {
        b.iter(|| tether_catalog::build_catalog(std::hint::black_box(&big), Timestamp(1)))
    });
    group.bench_function("estimate_only_128_tools", |b| {
        b.iter(|| {
            std::hint::black_box(&big)
                .iter()
                .map(|t| u64::from(tether_catalog::token_estimate(t)))
                .sum::<u64>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
