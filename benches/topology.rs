//! Cost of building the sched domains (`build_sched_domains`) for machines of growing size.
//! Domain rebuilds happen at boot and on hotplug or cpuset changes; this bench keeps the
//! builder usable for thousand-CPU machines in sweeps.

// criterion_group! generates public functions that cannot carry doc comments.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use fairsim::topology::source::{parse_spec, preset, SpecOptions};
use fairsim::topology::{build_sched_domains, Arch, BuildOptions};

fn build(c: &mut Criterion) {
    let mut group = c.benchmark_group("build_sched_domains");
    group.sample_size(10);
    let mut machines = vec![
        ("numa-4n-far", preset("numa-4n-far").expect("preset")),
        ("spr-2s56c2t", preset("spr-2s56c2t").expect("preset")),
    ];
    let mut big = SpecOptions::new("sockets=8,cores=64,threads=2", Arch::X86);
    big.numa_distance = Some(
        (0..8)
            .map(|i| {
                (0..8)
                    .map(|j| {
                        if i == j {
                            "10".to_string()
                        } else if i / 4 == j / 4 {
                            "16".to_string()
                        } else {
                            "32".to_string()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect::<Vec<_>>()
            .join(";"),
    );
    machines.push(("8s64c2t-1024cpu", parse_spec(&big).expect("spec")));
    for (name, m) in &machines {
        group.bench_with_input(BenchmarkId::from_parameter(name), m, |b, m| {
            b.iter(|| build_sched_domains(m, BuildOptions::default()).expect("builds"))
        });
    }
    group.finish();
}

criterion_group!(benches, build);
criterion_main!(benches);
