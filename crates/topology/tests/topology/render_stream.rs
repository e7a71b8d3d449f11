//! The streamed renderers write, byte for byte, what the whole-document ones return: the
//! JSON as `serde_json::to_string_pretty` prints `render_json`'s value (keys sorted, as its
//! maps keep them) plus a newline, and the dmesg and debugfs listings as `render_dmesg` and
//! `render_debugfs` build them, for every preset, with and without cpuset partitions.

use std::io::{self, Write};

use fairsim_topology::render::{
    render_debugfs, render_dmesg, render_json, write_debugfs, write_dmesg, write_json,
};
use fairsim_topology::source::presets::{preset, PRESETS};
use fairsim_topology::{parse_cpusets, partition_sched_domains, BuildOptions, SchedDomains};

/// Every preset whole, a few of them partitioned, and one built for ILB_SNAPSHOT with a
/// relaxed domain level.
fn hierarchies() -> Vec<(String, SchedDomains)> {
    let mut v = Vec::new();
    for (name, _) in PRESETS {
        let m = preset(name).unwrap();
        v.push((
            name.to_string(),
            partition_sched_domains(&m, BuildOptions::default(), &[]).unwrap(),
        ));
    }
    for (name, sets) in [
        ("spr-2s56c2t", vec!["0-9,20-29"]),
        ("numa-4n-far", vec!["0-3,9", "12-15", "5-6"]),
        ("rk3399", vec!["4-5"]),
    ] {
        let m = preset(name).unwrap();
        let lists: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let cpusets = parse_cpusets(m.nr_cpus(), &lists, "--cpuset").unwrap();
        let sds = partition_sched_domains(&m, BuildOptions::default(), &cpusets).unwrap();
        v.push((format!("{name} --cpuset {}", sets.join(" --cpuset ")), sds));
    }
    let m = preset("numa-4n-ring").unwrap();
    let opts = BuildOptions {
        shared_all_non_numa: true,
        relax_domain_level: Some(1),
    };
    v.push((
        "numa-4n-ring ilb".into(),
        partition_sched_domains(&m, opts, &[]).unwrap(),
    ));
    v
}

#[test]
fn streamed_outputs_are_the_whole_documents_bytes() {
    for (name, sds) in hierarchies() {
        let mut want = serde_json::to_string_pretty(&render_json(&sds)).unwrap();
        want.push('\n');
        let mut got = Vec::new();
        write_json(&sds, &mut got).unwrap();
        assert!(got == want.as_bytes(), "{name}: JSON differs");
        let mut got = Vec::new();
        write_dmesg(&sds, &mut got).unwrap();
        assert!(
            got == render_dmesg(&sds).as_bytes(),
            "{name}: dmesg differs"
        );
        let mut got = Vec::new();
        write_debugfs(&sds, &mut got).unwrap();
        assert!(
            got == render_debugfs(&sds).as_bytes(),
            "{name}: debugfs differs"
        );
    }
}

/// A writer that fails with `kind` once `room` bytes are taken.
struct Full {
    room: usize,
    kind: io::ErrorKind,
}

impl Write for Full {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.room == 0 {
            return Err(io::Error::from(self.kind));
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_writers_error_comes_back_as_it_was() {
    let sds = partition_sched_domains(
        &preset("spr-2s56c2t").unwrap(),
        BuildOptions::default(),
        &[],
    )
    .unwrap();
    // A closed pipe must stay a closed pipe, which the CLI does not report.
    for kind in [io::ErrorKind::BrokenPipe, io::ErrorKind::StorageFull] {
        let full = || Full { room: 4096, kind };
        assert_eq!(write_json(&sds, full()).unwrap_err().kind(), kind);
        assert_eq!(write_dmesg(&sds, full()).unwrap_err().kind(), kind);
        assert_eq!(write_debugfs(&sds, full()).unwrap_err().kind(), kind);
    }
}
