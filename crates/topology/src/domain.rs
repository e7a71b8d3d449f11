//! The built hierarchy: `SchedDomain`, `SchedGroup`, `SchedGroupCapacity`,
//! `SchedDomainShared`, and the per-CPU pointers `update_top_cache_domain` sets.
//!
//! The kernel links these with pointers; here they live in arenas indexed by small ids, so
//! the balance crate can keep per-domain runtime state in parallel vectors. Groups of
//! non-overlapping levels are shared by every CPU of a domain, as in the kernel (one object
//! per level and first CPU), and a group's capacity object is shared wherever the kernel
//! shares it. Fields that other CPUs update without the rq lock are atomics, read and written
//! with relaxed ordering like the kernel's `READ_ONCE`/`WRITE_ONCE`.

use crate::sync::{AtomicBool, AtomicI32, AtomicU64, Ordering};

use crate::cpumask::CpuMask;
use crate::flags::SdFlags;
use crate::levels::LevelTable;
use crate::ring::GroupRing;

pub use crate::ids::{GroupId, SdId, SgcId, SharedId};

/// One `struct sched_domain` of one CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedDomain {
    /// The CPU whose hierarchy this domain belongs to.
    pub cpu: usize,
    /// Index of its topology level in [`LevelTable::levels`].
    pub tl: usize,
    /// `sd->name`.
    pub name: &'static str,
    /// `sd->level`: depth when built, counting levels later removed as degenerate.
    pub level: u32,
    /// `sched_domain_span(sd)`.
    pub span: CpuMask,
    /// `sd->span_weight`.
    pub span_weight: u32,
    /// `sd->flags`.
    pub flags: SdFlags,
    /// `sd->parent`.
    pub parent: Option<SdId>,
    /// `sd->child`.
    pub child: Option<SdId>,
    /// The circular group list, starting at `sd->groups` (the group holding `cpu`),
    /// shared with the other CPUs whose domains walk the same ring.
    pub groups: GroupRing,
    /// `sd->min_interval`, in milliseconds.
    pub min_interval: u64,
    /// `sd->max_interval`, in milliseconds.
    pub max_interval: u64,
    /// `sd->busy_factor`.
    pub busy_factor: u32,
    /// `sd->imbalance_pct`.
    pub imbalance_pct: u32,
    /// `sd->cache_nice_tries`.
    pub cache_nice_tries: u32,
    /// Initial `sd->balance_interval`, in milliseconds.
    pub balance_interval: u64,
    /// `sd->imb_numa_nr`.
    pub imb_numa_nr: u32,
    /// `sd->shared`.
    pub shared: Option<SharedId>,
}

impl SchedDomain {
    /// `sd->nr_groups` (seed 000, patch 2/7): the number of groups in the domain.
    pub fn nr_groups(&self) -> usize {
        self.groups.len()
    }
}

/// One `struct sched_group`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedGroup {
    /// `sched_group_span(sg)`.
    pub span: CpuMask,
    /// `sg->flags`: the flags of the child domain the group stands for.
    pub flags: SdFlags,
    /// `sg->sgc`.
    pub sgc: SgcId,
    /// `sg->group_weight`.
    pub group_weight: u32,
    /// `sg->cores`: CPUs once SMT siblings are folded together.
    pub cores: u32,
    /// `sg->asym_prefer_cpu` (only with `SD_ASYM_PACKING`).
    pub asym_prefer_cpu: Option<usize>,
    /// The words of `span` that hold its CPUs, first and one past the last: the
    /// balancer's walk over a group's CPUs ([`CpuMask::iter_and_in`]) touches only these,
    /// not every word of a machine-wide mask.
    pub span_words: (u32, u32),
}

/// One `struct sched_group_capacity`, shared by identical groups.
#[derive(Debug)]
pub struct SchedGroupCapacity {
    /// `sgc->id`: the CPU that allocated it, printed as the group's id by `sched_verbose`.
    pub id: usize,
    /// `group_balance_mask(sg)`: the CPUs that may balance on behalf of the group.
    pub balance_mask: CpuMask,
    /// `sgc->capacity`.
    pub capacity: AtomicU64,
    /// `sgc->min_capacity`.
    pub min_capacity: AtomicU64,
    /// `sgc->max_capacity`.
    pub max_capacity: AtomicU64,
    /// `sgc->next_update`, in jiffies; 0 until the balance crate first updates it.
    pub next_update: AtomicU64,
    /// `sgc->imbalance`: set when affinity kept a group from being balanced.
    pub imbalance: AtomicI32,
}

impl SchedGroupCapacity {
    /// `group_balance_cpu(sg)`: the first CPU of the balance mask.
    pub fn balance_cpu(&self) -> usize {
        self.balance_mask.first().unwrap_or(self.id)
    }

    /// Relaxed read of `sgc->capacity`.
    pub fn capacity(&self) -> u64 {
        self.capacity.load(Ordering::Relaxed)
    }

    /// Relaxed reads of (capacity, min_capacity, max_capacity).
    pub fn capacities(&self) -> (u64, u64, u64) {
        (
            self.capacity.load(Ordering::Relaxed),
            self.min_capacity.load(Ordering::Relaxed),
            self.max_capacity.load(Ordering::Relaxed),
        )
    }

    pub(crate) fn set_capacities(&self, cap: u64, min: u64, max: u64) {
        self.capacity.store(cap, Ordering::Relaxed);
        self.min_capacity.store(min, Ordering::Relaxed);
        self.max_capacity.store(max, Ordering::Relaxed);
    }
}

impl Clone for SchedGroupCapacity {
    fn clone(&self) -> Self {
        SchedGroupCapacity {
            id: self.id,
            balance_mask: self.balance_mask.clone(),
            capacity: AtomicU64::new(self.capacity.load(Ordering::Relaxed)),
            min_capacity: AtomicU64::new(self.min_capacity.load(Ordering::Relaxed)),
            max_capacity: AtomicU64::new(self.max_capacity.load(Ordering::Relaxed)),
            next_update: AtomicU64::new(self.next_update.load(Ordering::Relaxed)),
            imbalance: AtomicI32::new(self.imbalance.load(Ordering::Relaxed)),
        }
    }
}

/// One `struct sched_domain_shared`: state every CPU of an LLC (or, in the seed-000
/// variant, of any non-NUMA domain) reads and writes without locks.
#[derive(Debug)]
pub struct SchedDomainShared {
    /// First CPU of the span of the domain that allocated it.
    pub id: usize,
    /// Topology level it belongs to.
    pub tl: usize,
    /// `nr_busy_cpus`: CPUs not in nohz idle (starts at the span weight).
    pub nr_busy_cpus: AtomicI32,
    /// `has_idle_cores`.
    pub has_idle_cores: AtomicBool,
    /// `nr_idle_scan` (SIS_UTIL's scan depth).
    pub nr_idle_scan: AtomicI32,
    /// Seed 000 `ILB_SNAPSHOT`: the domain's total load at the last periodic balance.
    pub total_load: AtomicU64,
    /// Seed 000 `ILB_SNAPSHOT`: the domain's total capacity at the last periodic balance.
    pub total_capacity: AtomicU64,
    /// Seed 000 `ILB_UTIL`: how many groups a newidle balance should scan.
    pub nr_sg_scan: AtomicI32,
}

impl SchedDomainShared {
    pub(crate) fn new(id: usize, tl: usize, weight: i32) -> Self {
        SchedDomainShared {
            id,
            tl,
            nr_busy_cpus: AtomicI32::new(weight),
            has_idle_cores: AtomicBool::new(false),
            nr_idle_scan: AtomicI32::new(0),
            total_load: AtomicU64::new(0),
            total_capacity: AtomicU64::new(0),
            nr_sg_scan: AtomicI32::new(0),
        }
    }
}

impl Clone for SchedDomainShared {
    fn clone(&self) -> Self {
        SchedDomainShared {
            id: self.id,
            tl: self.tl,
            nr_busy_cpus: AtomicI32::new(self.nr_busy_cpus.load(Ordering::Relaxed)),
            has_idle_cores: AtomicBool::new(self.has_idle_cores.load(Ordering::Relaxed)),
            nr_idle_scan: AtomicI32::new(self.nr_idle_scan.load(Ordering::Relaxed)),
            total_load: AtomicU64::new(self.total_load.load(Ordering::Relaxed)),
            total_capacity: AtomicU64::new(self.total_capacity.load(Ordering::Relaxed)),
            nr_sg_scan: AtomicI32::new(self.nr_sg_scan.load(Ordering::Relaxed)),
        }
    }
}

/// The per-CPU pointers of `update_top_cache_domain` plus `rq->sd` and `rq->cpu_capacity`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuDomains {
    /// `rq->sd`: the lowest surviving domain, `None` on a one-CPU machine.
    pub sd: Option<SdId>,
    /// `sd_llc`: the highest domain sharing the LLC.
    pub sd_llc: Option<SdId>,
    /// `sd_llc_size`.
    pub sd_llc_size: usize,
    /// `sd_llc_id`: first CPU of the LLC domain.
    pub sd_llc_id: usize,
    /// `sd_share_id`: first CPU of the cluster domain, else the LLC id.
    pub sd_share_id: usize,
    /// `sd_llc_shared`.
    pub sd_llc_shared: Option<SharedId>,
    /// `sd_numa`: the lowest NUMA domain.
    pub sd_numa: Option<SdId>,
    /// `sd_asym_packing`: the highest domain with `SD_ASYM_PACKING`.
    pub sd_asym_packing: Option<SdId>,
    /// `sd_asym_cpucapacity`: the lowest domain with `SD_ASYM_CPUCAPACITY_FULL`.
    pub sd_asym_cpucapacity: Option<SdId>,
    /// `rq->cpu_capacity` after the build (`capacity_of`).
    pub cpu_capacity: u64,
    /// `arch_scale_cpu_capacity`: the CPU's original capacity.
    pub capacity_orig: u64,
    /// `rq->rd`: the index in [`SchedDomains::root_domains`] of the root domain the CPU
    /// was attached to; CPUs with equal indices balance among themselves only.
    pub root_domain: usize,
}

/// Options of the builder that select kernel variants.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BuildOptions {
    /// Seed 000 patch 1/7: give every non-NUMA domain a `sched_domain_shared`, not only
    /// the LLC levels.
    pub shared_all_non_numa: bool,
    /// The `relax_domain_level=` boot parameter: levels at or above it lose
    /// `SD_BALANCE_WAKE` and `SD_BALANCE_NEWIDLE`.
    pub relax_domain_level: Option<u32>,
}

/// Everything `build_sched_domains` produces: for the whole machine as one root domain, or
/// for each root domain of an exclusive cpuset partition ([`crate::partition_sched_domains`]).
#[derive(Debug, Clone)]
pub struct SchedDomains {
    /// Number of CPUs.
    pub nr_cpus: usize,
    /// The level table used, with the NUMA distances and masks.
    pub levels: LevelTable,
    /// Surviving domains; each CPU's chain starts at `cpus[cpu].sd`.
    pub domains: Vec<SchedDomain>,
    /// Groups referenced by surviving domains.
    pub groups: Vec<SchedGroup>,
    /// Group capacities referenced by surviving groups.
    pub sgcs: Vec<SchedGroupCapacity>,
    /// Shared-state objects referenced by surviving domains.
    pub shared: Vec<SchedDomainShared>,
    /// Per-CPU pointers.
    pub cpus: Vec<CpuDomains>,
    /// The `sched_asym_cpucapacity` static key.
    pub asym_cpucapacity: bool,
    /// The `sched_cluster_active` static key.
    pub cluster_active: bool,
    /// Warnings the kernel would have printed (`BUG: arch topology borken`, ...).
    pub warnings: Vec<String>,
    /// The options it was built with.
    pub options: BuildOptions,
    /// `rd->span` of each root domain, in the order they were built: one spanning every
    /// CPU without cpusets; otherwise the top cpuset's leftover CPUs (when any are left)
    /// and then each exclusive partition in the order given.
    pub root_domains: Vec<CpuMask>,
}

impl SchedDomains {
    /// The domains of `cpu`, bottom-up (`for_each_domain`).
    pub fn domains_of(&self, cpu: usize) -> impl Iterator<Item = SdId> + '_ {
        let mut next = self.cpus.get(cpu).and_then(|c| c.sd);
        std::iter::from_fn(move || {
            let cur = next?;
            next = self.domains[cur].parent;
            Some(cur)
        })
    }

    /// The index of `cpu`'s root domain in [`Self::root_domains`] (`cpu_rq(cpu)->rd`).
    pub fn root_domain_of(&self, cpu: usize) -> usize {
        self.cpus.get(cpu).map_or(0, |c| c.root_domain)
    }

    /// `rd->max_cpu_capacity` of root domain `rd`: the largest original capacity of its
    /// CPUs, as `build_sched_domains` records it while attaching them.
    pub fn rd_max_cpu_capacity(&self, rd: usize) -> u64 {
        self.root_domains.get(rd).map_or(0, |span| {
            span.iter()
                .map(|c| self.cpus[c].capacity_orig)
                .max()
                .unwrap_or(0)
        })
    }

    /// The domain `id`.
    pub fn domain(&self, id: SdId) -> &SchedDomain {
        &self.domains[id]
    }

    /// The group `id`.
    pub fn group(&self, id: GroupId) -> &SchedGroup {
        &self.groups[id]
    }

    /// The capacity object of group `id`.
    pub fn group_sgc(&self, id: GroupId) -> &SchedGroupCapacity {
        &self.sgcs[self.groups[id].sgc]
    }
}
