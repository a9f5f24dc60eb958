//! What the credential check costs each MCP request: `Gate::check_header` on
//! the current credential (admitted), a stale one and none (refused).

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use tether_kandev_endpoint::AttemptCredential;
use tether_kandev_endpoint::credential::Gate;

fn gate(c: &mut Criterion) {
    let gate = Gate::default();
    let old = AttemptCredential::generate();
    gate.admit(old.clone());
    let current = AttemptCredential::generate();
    gate.admit(current.clone());
    let (good, stale) = (current.bearer(), old.bearer());
    let mut group = c.benchmark_group("gate");
    group.bench_function("admitted", |b| {
        b.iter(|| gate.check_header(black_box(Some(good.as_str()))))
    });
    group.bench_function("stale", |b| {
        b.iter(|| gate.check_header(black_box(Some(stale.as_str()))))
    });
    group.bench_function("missing", |b| b.iter(|| gate.check_header(black_box(None))));
    group.finish();
}

criterion_group!(benches, gate);
criterion_main!(benches);
