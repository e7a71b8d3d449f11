//! The builder's span bookkeeping: `topology_span_sane` decided over the distinct masks
//! of a level, ids for the distinct domain spans, and the walk over the CPUs a group list
//! has not covered yet.
//!
//! The kernel does each of these with a fresh mask operation per CPU pair; the results
//! here are the same, computed so that a machine of thousands of CPUs builds in seconds.

use std::collections::BTreeMap;

use crate::builder::Builder;
use crate::cpumask::CpuMask;
use crate::error::TopologyError;

/// What `topology_span_sane` needs to name the first offending pair on a level whose
/// masks are not all equal or disjoint: the CPUs of each distinct mask, ascending.
pub(crate) type SpanClasses = Vec<Vec<usize>>;

impl Builder<'_> {
    /// The whole-level half of `topology_span_sane`: `None` when every two CPUs' masks
    /// of level `tl` are equal or disjoint (always so on NUMA levels, which the kernel
    /// does not check), so that no CPU can fail the check there; otherwise the CPUs of
    /// each distinct mask, for [`Self::topology_span_sane`] to find the offending pair.
    ///
    /// The kernel compares each CPU's mask with every later CPU's, which is quadratic in
    /// CPUs and, with masks as wide as the machine, cubic in time. The distinct masks are
    /// pairwise disjoint exactly when their weights add up to the weight of their union,
    /// which takes one ordered-map insertion per CPU and one pass over the distinct masks.
    ///
    /// Only the CPUs of `cpu_map` are compared, as the kernel's `for_each_cpu_from(i,
    /// cpu_map)` does, with their masks not ANDed with it.
    pub(crate) fn insane_span_classes(&self, tl: usize, cpu_map: &CpuMask) -> Option<SpanClasses> {
        if self.lt.levels[tl].overlap {
            return None;
        }
        let n = self.m.nr_cpus();
        let mut classes: BTreeMap<&CpuMask, Vec<usize>> = BTreeMap::new();
        for cpu in cpu_map.iter() {
            classes
                .entry(self.lt.mask(self.m, tl, cpu))
                .or_default()
                .push(cpu);
        }
        let mut union = CpuMask::new(n);
        let mut total = 0;
        for mask in classes.keys() {
            union.or_with(mask);
            total += mask.weight();
        }
        if total == union.weight() {
            return None;
        }
        Some(classes.into_values().collect())
    }

    /// Mirrors `topology_span_sane` for one CPU of a level that has overlapping masks:
    /// the first later CPU whose mask intersects `cpu`'s without being equal to it makes
    /// the build fail. The kernel refuses to build, or group lists would break; so do we.
    ///
    /// That first CPU is the lowest, over the distinct masks that conflict with `cpu`'s,
    /// of each mask's first CPU above `cpu`, so the message names the same pair as the
    /// kernel's CPU-by-CPU scan.
    pub(crate) fn topology_span_sane(
        &self,
        tl: usize,
        cpu: usize,
        classes: &SpanClasses,
    ) -> Result<(), TopologyError> {
        let mine = self.lt.mask(self.m, tl, cpu);
        let mut first: Option<usize> = None;
        for cpus in classes {
            let Some(&rep) = cpus.first() else {
                continue;
            };
            let theirs = self.lt.mask(self.m, tl, rep);
            if mine == theirs || !mine.intersects(theirs) {
                continue;
            }
            let later = cpus.partition_point(|&c| c <= cpu);
            if let Some(&i) = cpus.get(later) {
                first = Some(first.map_or(i, |f| f.min(i)));
            }
        }
        if let Some(i) = first {
            let theirs = self.lt.mask(self.m, tl, i);
            return Err(TopologyError::Inconsistent {
                field: format!("{} level", self.lt.levels[tl].name),
                detail: format!(
                    "cpu{cpu} spans {mine} and cpu{i} spans {theirs}; \
                     non-NUMA levels must be equal or disjoint (topology_span_sane)"
                ),
            });
        }
        Ok(())
    }

    /// Numbers the distinct domain spans (see `span_id`) and records each span's words.
    /// The kernel compares masks where this compares ids; the answers are the same.
    pub(crate) fn number_spans(&mut self) {
        let mut ids: BTreeMap<&CpuMask, u32> = BTreeMap::new();
        let mut span_id = Vec::with_capacity(self.doms.len());
        for d in &self.doms {
            let next = ids.len() as u32;
            span_id.push(*ids.entry(&d.span).or_insert(next));
        }
        let distinct = ids.len();
        drop(ids);
        self.child_span = self
            .sd_of
            .iter()
            .map(|row| {
                row.iter()
                    .map(|sd| {
                        sd.and_then(|s| self.doms[s].child)
                            .map_or(u32::MAX, |c| span_id[c])
                    })
                    .collect()
            })
            .collect();
        self.span_words = self.doms.iter().map(|d| d.span.word_range()).collect();
        self.span_first = self.doms.iter().map(|d| d.span.first()).collect();
        self.span_id = span_id;
        self.span_cores = vec![None; distinct];
        self.span_asym = vec![None; distinct];
    }
}

/// The group builders' walk: `for_each_cpu_wrap(i, span, cpu)` skipping the CPUs
/// already in `covered`. The kernel tests each CPU of the span; covered only grows and
/// only CPUs not yet visited matter, so skipping them a word at a time visits the same
/// CPUs in the same order while costing a NUMA domain its groups, not its CPUs.
pub(crate) struct UncoveredWrap {
    start: usize,
    pos: usize,
    wrapped: bool,
}

impl UncoveredWrap {
    pub(crate) fn new(start: usize) -> Self {
        UncoveredWrap {
            start,
            pos: start,
            wrapped: false,
        }
    }

    /// The next CPU of `span` not in `covered`, from `start` up and then from 0 up to
    /// `start`.
    pub(crate) fn next(&mut self, span: &CpuMask, covered: &CpuMask) -> Option<usize> {
        if self.start >= span.nbits() {
            // for_each_cpu_wrap starts at 0 when the start is past the mask.
            self.start = 0;
            self.pos = 0;
        }
        loop {
            match span.next_andnot_from(covered, self.pos) {
                Some(i) if !self.wrapped || i < self.start => {
                    self.pos = i + 1;
                    return Some(i);
                }
                Some(_) => return None,
                None if !self.wrapped => {
                    self.wrapped = true;
                    self.pos = 0;
                }
                None => return None,
            }
        }
    }
}
