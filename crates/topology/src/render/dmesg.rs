//! The `sched_verbose` dump that `cpu_attach_domain` prints through `sched_domain_debug`.

use std::fmt::Write;
use std::io;

use crate::domain::SchedDomains;
use crate::flags::SdFlags;
use crate::limits::SCHED_CAPACITY_SCALE;

/// Renders every CPU's hierarchy as `sched_domain_debug` logs it, without timestamps and
/// with long group lists on one line (the ground truth's `dmesg-sched-joined.txt`).
///
/// Mirrors `sched_domain_debug_one`: a group shows `mask=` on overlapping levels when its
/// balance mask differs from its span, and `cap=` whenever its capacity is not exactly
/// `SCHED_CAPACITY_SCALE`.
///
/// With exclusive cpuset partitions the CPUs are printed root domain by root domain, each
/// followed by the line `build_sched_domains` prints after attaching one under
/// `sched_verbose` (`root domain span: 0-9,20-29 (max cpu_capacity = 1024)`); a build of
/// the whole machine prints the CPUs alone, as the ground truth's dumps hold them.
pub fn render_dmesg(sds: &SchedDomains) -> String {
    let mut out = String::new();
    // Appending to a String cannot fail.
    let _ = each_block(sds, |block| {
        out.push_str(block);
        Ok(())
    });
    out
}

/// Writes [`render_dmesg`]'s text to `out` as it goes, one CPU at a time: the listing grows
/// with the square of the CPU count (570 MB at 8192 CPUs), and what this holds
/// beyond the hierarchy is one CPU's lines.
pub fn write_dmesg<W: io::Write>(sds: &SchedDomains, mut out: W) -> io::Result<()> {
    each_block(sds, |block| out.write_all(block.as_bytes()))
}

/// Hands the listing to `emit` in order, one CPU's lines (or one `root domain span:`
/// line) at a time.
fn each_block(sds: &SchedDomains, mut emit: impl FnMut(&str) -> io::Result<()>) -> io::Result<()> {
    let mut block = String::new();
    if sds.root_domains.len() <= 1 {
        for cpu in 0..sds.nr_cpus {
            block.clear();
            render_cpu(&mut block, sds, cpu);
            emit(&block)?;
        }
        return Ok(());
    }
    for (rd, span) in sds.root_domains.iter().enumerate() {
        for cpu in span.iter() {
            block.clear();
            render_cpu(&mut block, sds, cpu);
            emit(&block)?;
        }
        block.clear();
        let _ = writeln!(
            block,
            "root domain span: {span} (max cpu_capacity = {})",
            sds.rd_max_cpu_capacity(rd)
        );
        emit(&block)?;
    }
    Ok(())
}

/// Mirrors `sched_domain_debug` for one CPU: its chain bottom-up with each domain's groups.
fn render_cpu(out: &mut String, sds: &SchedDomains, cpu: usize) {
    if sds.cpus[cpu].sd.is_none() {
        let _ = writeln!(out, "CPU{cpu} attaching NULL sched-domain.");
        return;
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
