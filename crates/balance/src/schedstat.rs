//! The `/proc/schedstat` writer: `show_schedstat` of kernel/sched/stats.c.
//!
//! Version 16 is what Linux 6.12.117 writes: a `cpu<N>` line of 9 fields per CPU, then
//! one `domain<K> <span-hex>` line per domain of that CPU (bottom-up, K from 0) with 36
//! fields: eight load-balance counters for each idle type in `enum cpu_idle_type` order
//! (busy, idle, newly idle), then `alb_*`, `sbe_*`, `sbf_*` and `ttwu_*` (3 each).
//! Version 15 (up to 6.1) is the same with the idle types in the older enum order (idle,
//! busy, newly idle). Version 17 (6.14+) adds the domain name before the span and splits
//! `lb_imbalance` into load/util/task/misfit: 11 counters per idle type, 45 fields.

use std::fmt::Write;

use fairsim_topology::SchedDomains;

use crate::sched::Sched;
use crate::stats::{CpuIdleType, RqSchedstat, SdSchedstat};

/// A `/proc/schedstat` layout version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SchedstatVersion {
    /// Linux 5.x-6.5 (`enum cpu_idle_type` = idle, busy, newly idle).
    V15,
    /// Linux 6.6-6.13, including the reference 6.12.117 (busy, idle, newly idle).
    V16,
    /// Linux 6.14+: domain names and the split `lb_imbalance`.
    V17,
}

impl SchedstatVersion {
    /// Parses `15`, `16` or `17`.
    pub fn parse(s: &str) -> Option<SchedstatVersion> {
        match s.trim() {
            "15" => Some(SchedstatVersion::V15),
            "16" => Some(SchedstatVersion::V16),
            "17" => Some(SchedstatVersion::V17),
            _ => None,
        }
    }

    /// The number on the `version` line.
    pub fn number(self) -> u32 {
        match self {
            SchedstatVersion::V15 => 15,
            SchedstatVersion::V16 => 16,
            SchedstatVersion::V17 => 17,
        }
    }

    /// Fields after the span (and name) on a `domain` line.
    pub fn domain_fields(self) -> usize {
        match self {
            SchedstatVersion::V15 | SchedstatVersion::V16 => 36,
            SchedstatVersion::V17 => 45,
        }
    }

    /// The idle types in the order this version prints their blocks.
    fn itype_order(self) -> [CpuIdleType; 3] {
        match self {
            SchedstatVersion::V15 => [
                CpuIdleType::Idle,
                CpuIdleType::NotIdle,
                CpuIdleType::NewlyIdle,
            ],
            _ => CpuIdleType::ALL,
        }
    }
}

/// `INITIAL_JIFFIES` on a 64-bit kernel: `(unsigned long)(unsigned int)(-300 * HZ)`.
pub fn initial_jiffies(hz: u32) -> u64 {
    u64::from(0u32.wrapping_sub(300u32.wrapping_mul(hz)))
}

fn domain_counters(out: &mut String, s: &SdSchedstat, version: SchedstatVersion, sg_scan: bool) {
    for itype in version.itype_order() {
        let i = itype as usize;
        let _ = write!(
            out,
            " {} {} {}",
            s.lb_count[i], s.lb_balanced[i], s.lb_failed[i]
        );
        match version {
            SchedstatVersion::V17 => {
                let _ = write!(
                    out,
                    " {} {} {} {}",
                    s.lb_imbalance_load[i],
                    s.lb_imbalance_util[i],
                    s.lb_imbalance_task[i],
                    s.lb_imbalance_misfit[i]
                );
            }
            _ => {
                let _ = write!(out, " {}", s.lb_imbalance(itype));
            }
        }
        let _ = write!(
            out,
            " {} {} {} {}",
            s.lb_gained[i], s.lb_hot_gained[i], s.lb_nobusyq[i], s.lb_nobusyg[i]
        );
        if sg_scan {
            // Seed 000 patch 7/7 appends lb_sg_scan to each idle type's block.
            let _ = write!(out, " {}", s.lb_sg_scan[i]);
        }
    }
    let _ = writeln!(
        out,
        " {} {} {} {} {} {} {} {} {} {} {} {}",
        s.alb_count,
        s.alb_failed,
        s.alb_pushed,
        s.sbe_count,
        s.sbe_balanced,
        s.sbe_pushed,
        s.sbf_count,
        s.sbf_balanced,
        s.sbf_pushed,
        s.ttwu_wake_remote,
        s.ttwu_move_affine,
        s.ttwu_move_balance
    );
}

/// `show_schedstat`: the whole `/proc/schedstat` text at engine time `now`.
pub fn show_schedstat(sched: &Sched, now: u64, version: SchedstatVersion) -> String {
    show_schedstat_with(sched, now, version, false)
}

/// `show_schedstat` with seed 000's patch 7/7 applied when `sg_scan` is set: each idle
/// type's block ends with `lb_sg_scan` (9 fields per block in v15/v16, 12 in v17).
pub fn show_schedstat_with(
    sched: &Sched,
    now: u64,
    version: SchedstatVersion,
    sg_scan: bool,
) -> String {
    let rq_stats: Vec<&RqSchedstat> = sched.rqs.iter().map(|rq| &rq.stats).collect();
    let timestamp = initial_jiffies(sched.params.hz).wrapping_add(sched.jiffies(now));
    render_schedstat(
        &sched.topo,
        &rq_stats,
        &sched.sd_stats,
        timestamp,
        version,
        sg_scan,
    )
}

/// The `/proc/schedstat` text for any source of counters: `rq_stats` by CPU,
/// `sd_stats` indexed like `topo.domains`, and the `timestamp` line's jiffies.
pub fn render_schedstat(
    topo: &SchedDomains,
    rq_stats: &[&RqSchedstat],
    sd_stats: &[SdSchedstat],
    timestamp: u64,
    version: SchedstatVersion,
    sg_scan: bool,
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "version {}", version.number());
    let _ = writeln!(out, "timestamp {timestamp}");
    for (cpu, st) in rq_stats.iter().enumerate() {
        let _ = writeln!(
            out,
            "cpu{cpu} {} 0 {} {} {} {} {} {} {}",
            st.yld_count,
            st.sched_count,
            st.sched_goidle,
            st.ttwu_count,
            st.ttwu_local,
            st.rq_cpu_time,
            st.run_delay,
            st.pcount
        );
        for (k, sd) in topo.domains_of(cpu).enumerate() {
            let d = topo.domain(sd);
            match version {
                SchedstatVersion::V17 => {
                    let _ = write!(out, "domain{k} {} {}", d.name, d.span.to_hex());
                }
                _ => {
                    let _ = write!(out, "domain{k} {}", d.span.to_hex());
                }
            }
            if let Some(s) = sd_stats.get(sd) {
                domain_counters(&mut out, s, version, sg_scan);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::SchedParams;
    use fairsim_topology::{build_sched_domains, source::preset, BuildOptions};

    fn sched() -> Sched {
        let m = preset("numa-2s4c2t").unwrap();
        let topo = build_sched_domains(&m, BuildOptions::default()).unwrap();
        Sched::new(m, topo, SchedParams::default())
    }

    #[test]
    fn field_counts_follow_the_documented_layouts() {
        let mut s = sched();
        s.sd_stats[0].lb_count[CpuIdleType::Idle as usize] = 7;
        s.sd_stats[0].lb_imbalance_util[CpuIdleType::Idle as usize] = 3;
        s.sd_stats[0].ttwu_wake_remote = 9;
        for v in [
            SchedstatVersion::V15,
            SchedstatVersion::V16,
            SchedstatVersion::V17,
        ] {
            let text = show_schedstat(&s, 0, v);
            let mut lines = text.lines();
            assert_eq!(lines.next().unwrap(), format!("version {}", v.number()));
            assert!(lines.next().unwrap().starts_with("timestamp "));
            let mut cpus = 0;
            for l in lines {
                let f: Vec<&str> = l.split(' ').collect();
                if f[0].starts_with("cpu") {
                    cpus += 1;
                    assert_eq!(f.len(), 10, "{l}");
                } else {
                    assert!(f[0].starts_with("domain"), "{l}");
                    let skip = if v == SchedstatVersion::V17 { 3 } else { 2 };
                    assert_eq!(f.len() - skip, v.domain_fields(), "{l}");
                    assert!(f.iter().skip(skip).all(|x| x.parse::<u64>().is_ok()));
                }
            }
            assert_eq!(cpus, 16);
        }
        // The first domain of cpu0 is domain 0 (SMT on this machine).
        let v16 = show_schedstat(&s, 0, SchedstatVersion::V16);
        let d0: Vec<u64> = v16
            .lines()
            .nth(3)
            .unwrap()
            .split(' ')
            .skip(2)
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(d0[8], 7, "v16: idle block second");
        assert_eq!(d0[8 + 3], 3, "v16: lb_imbalance sums the four kinds");
        assert_eq!(d0[33], 9, "ttwu_wake_remote is field 34");
        let v15 = show_schedstat(&s, 0, SchedstatVersion::V15);
        let d0: Vec<u64> = v15
            .lines()
            .nth(3)
            .unwrap()
            .split(' ')
            .skip(2)
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(d0[0], 7, "v15: idle block first");
        let v17 = show_schedstat(&s, 0, SchedstatVersion::V17);
        let l = v17.lines().nth(3).unwrap();
        assert!(l.starts_with("domain0 SMT 0003 "), "{l}");
        let d0: Vec<u64> = l.split(' ').skip(3).map(|x| x.parse().unwrap()).collect();
        assert_eq!(d0[11], 7);
        assert_eq!(d0[11 + 4], 3, "v17: lb_imbalance_util is the 5th counter");
    }

    #[test]
    fn timestamp_starts_from_initial_jiffies() {
        assert_eq!(initial_jiffies(250), 4_294_892_296);
        let s = sched();
        let text = show_schedstat(&s, 4_000_000, SchedstatVersion::V16);
        let ts: u64 = text.lines().nth(1).unwrap()[10..].parse().unwrap();
        assert_eq!(ts, initial_jiffies(250) + s.jiffies(4_000_000));
    }
}
