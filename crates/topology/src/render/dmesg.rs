//! The `sched_verbose` dump that `cpu_attach_domain` prints through `sched_domain_debug`.

use std::fmt::Write;

use crate::domain::SchedDomains;
use crate::flags::SdFlags;
use crate::machine::SCHED_CAPACITY_SCALE;

/// Renders every CPU's hierarchy as `sched_domain_debug` logs it, without timestamps and
/// with long group lists on one line (the ground truth's `dmesg-sched-joined.txt`).
///
/// Mirrors `sched_domain_debug_one`: a group shows `mask=` on overlapping levels when its
/// balance mask differs from its span, and `cap=` whenever its capacity is not exactly
/// `SCHED_CAPACITY_SCALE`.
pub fn render_dmesg(sds: &SchedDomains) -> String {
    let mut out = String::new();
    for cpu in 0..sds.nr_cpus {
        if sds.cpus[cpu].sd.is_none() {
            let _ = writeln!(out, "CPU{cpu} attaching NULL sched-domain.");
            continue;
        }
        let _ = writeln!(out, "CPU{cpu} attaching sched-domain(s):");
        for (level, id) in sds.domains_of(cpu).enumerate() {
            let sd = sds.domain(id);
            let _ = writeln!(
                out,
                "{:level$} domain-{level}: span={} level={}",
                "", sd.span, sd.name
            );
            let _ = write!(out, "{:w$} groups:", "", w = level + 1);
            for (i, &g) in sd.groups.iter().enumerate() {
                let group = sds.group(g);
                let sgc = sds.group_sgc(g);
                let _ = write!(out, " {}:{{ span={}", sgc.id, group.span);
                if sd.flags.contains(SdFlags::OVERLAP) && sgc.balance_mask != group.span {
                    let _ = write!(out, " mask={}", sgc.balance_mask);
                }
                let cap = sgc.capacity();
                if cap != u64::from(SCHED_CAPACITY_SCALE) {
                    let _ = write!(out, " cap={cap}");
                }
                out.push_str(" }");
                if i + 1 < sd.groups.len() {
                    out.push(',');
                }
            }
            out.push('\n');
        }
    }
    out
}
