//! `x86-2020s`: the cost table of a current x86 server (Sapphire Rapids class, Linux 6.x),
//! the default of every machine that names no other.
//!
//! The values are orders of magnitude from public measurements on recent x86 servers,
//! not numbers fitted to any seed's result; each constant says where it comes from.

use crate::cost::CostTable;

/// A whole context switch: lmbench `lat_ctx` and `perf bench sched pipe` put a process
/// switch with a small working set at 1-3 us on current x86; 1.5 us is the middle of that
/// range. It includes the switch's load tracking, which the table charges apart
/// ([`SWITCH_BOOKKEEPING`]).
pub const CONTEXT_SWITCH_TOTAL: u64 = 1_500;

/// `context_switch`: [`CONTEXT_SWITCH_TOTAL`] less its load tracking, 1,457 ns.
pub const CONTEXT_SWITCH: u64 = CONTEXT_SWITCH_TOTAL - SWITCH_BOOKKEEPING;

/// A whole wakeup path: a `perf bench sched pipe` round trip (two syscalls, two wakeups,
/// two switches) takes ~4-6 us on current x86, which leaves ~0.5 us for each wakeup
/// path, the enqueue's load tracking ([`ENQUEUE_BOOKKEEPING`]) included.
pub const WAKEUP_TOTAL: u64 = 500;

/// `wakeup`: [`WAKEUP_TOTAL`] less the enqueue's load tracking, 483 ns.
pub const WAKEUP: u64 = WAKEUP_TOTAL - ENQUEUE_BOOKKEEPING;

/// `idle_scan_per_cpu`: `available_idle_cpu` reads about one cache line of the remote
/// runqueue that is usually dirty in another core's cache. An L3 hit or cross-core
/// transfer is ~30-40 ns on Sapphire Rapids (Intel MLC loaded latency); 40 ns.
pub const IDLE_SCAN_PER_CPU: u64 = 40;

/// `lb_scan_per_cpu`, in two parts:
/// - the instructions and cached reads, measured: `fairsim race --threads 1` runs the
///   same `update_sd_lb_stats` with every runqueue in one core's caches and takes
///   ~1.2 us for spr-2s56c2t's 55-group, 110-CPU MC scan on the build host, ~10 ns per
///   CPU;
/// - the cache misses, estimated: the reads touch about five lines of the remote
///   `struct rq` (its head with `nr_running`, the cfs_rq head, the cacheline-aligned
///   `cfs.avg`, `curr`, `uclamp`) that the owner rewrites at every enqueue, dequeue and
///   switch, so on a busy machine each read finds them modified in the owner's cache. A
///   modified line moves between two cores of one Sapphire Rapids socket in roughly
///   60-100 ns (published core-to-core latency measurements of 4th-generation Xeon, e.g.
///   Chips and Cheese, "Core to Core Latency Data on Large Systems", 2023). How many of
///   them overlap is the open question: the loads of successive CPUs are independent, so
///   a Golden Cove core with 16 L1D fill buffers and a 512-entry reorder window can keep
///   10-16 in flight (5 x 80 ns / 16 = 25 ns per CPU), while data-dependent branches that
///   mispredict would limit it to 2-3 (160 ns per CPU).
///
/// The table takes the overlapped end, 40 ns in all, the same as `idle_scan_per_cpu`, so
/// that a default run is what it was before this constant existed; `--cost
/// lb_scan_per_cpu=170ns` is the other end, and the closing notes of issue #11 say what
/// each does to seed 000's figures.
pub const LB_SCAN_PER_CPU: u64 = 40;

/// `scan_remote_llc`: the lines come from another die's L3, ~100 ns instead of ~40 ns on
/// multi-die x86 (Intel MLC, AMD cross-CCX figures); +60 ns.
pub const SCAN_REMOTE_LLC: u64 = 60;

/// `scan_remote_node`: a remote-socket cache hit is ~130-200 ns on 2-socket x86 (Intel
/// MLC remote latencies) against ~40 ns locally; +120 ns.
pub const SCAN_REMOTE_NODE: u64 = 120;

/// `group_scan`: the group capacity object and the loop overhead, one or two shared cache
/// lines; 60 ns.
pub const GROUP_SCAN: u64 = 60;

/// `task_examine`: a few fields of a remote task, one or two cache misses; 50 ns.
pub const TASK_EXAMINE: u64 = 50;

/// `migration`: `detach_task`/`attach_task` plus the first cache misses of the task on
/// its new CPU: ~1 us.
pub const MIGRATION: u64 = 1_000;

/// `migration_cross_llc`: the task's hot lines come from a remote L3 or memory at
/// ~130-200 ns each on 2-socket x86 (Intel MLC remote latencies), a few dozen lines for a
/// small task: 3 us more.
pub const MIGRATION_CROSS_LLC: u64 = 3_000;

/// `ipi_latency`: 1-2 us from send to handler entry on current x86 (x2APIC,
/// `smp_call_function_single` microbenchmarks); 1.5 us.
pub const IPI_LATENCY: u64 = 1_500;

/// The whole wake-list IPI: irq entry/exit and `sched_ttwu_pending` for one task, ~0.3
/// us, the enqueue's load tracking ([`ENQUEUE_BOOKKEEPING`]) included.
pub const IPI_HANDLE_TOTAL: u64 = 300;

/// `ipi_handle`: [`IPI_HANDLE_TOTAL`] less the enqueue's load tracking, 283 ns.
pub const IPI_HANDLE: u64 = IPI_HANDLE_TOTAL - ENQUEUE_BOOKKEEPING;

/// `remote_rq_lock`: one contended cache-line transfer, ~100-200 ns; 200 ns.
pub const REMOTE_RQ_LOCK: u64 = 200;

/// `rq_enqueue`: `enqueue_task_fair` and `wakeup_preempt`, a few hundred ns of mostly
/// cached work; 250 ns.
pub const RQ_ENQUEUE: u64 = 250;

/// `timer_irq`: ~0.5 us on x86 with TSC deadline timers.
pub const TIMER_IRQ: u64 = 500;

/// `tick`: `tick_sched_timer` -> `update_process_times` -> `sched_tick` on a busy CPU:
/// ~0.5 us.
pub const TICK: u64 = 500;

/// `idle_exit`: with deep C-states disabled (as in seed 000), the shallowest state C1
/// has `exit_latency` 1 us in the intel_idle tables for Sapphire Rapids; 1 us.
pub const IDLE_EXIT: u64 = 1_000;

/// `tick_restart`: on bare metal a TSC-deadline MSR write and some bookkeeping, well
/// under a microsecond and counted in `idle_exit`; 0. In a virtual machine each
/// reprogramming exits to the hypervisor, and it dominates: the build host's model
/// (`validation/host/host.toml`) measures it.
pub const TICK_RESTART: u64 = 0;

/// `fork`: ~10 us for a thread, tens of us for a small process; 20 us.
pub const FORK: u64 = 20_000;

/// The build host's profile of a shell starting short processes, from which [`EXEC`] and
/// [`EXIT`] (and forkbench's default user start-up) are taken: `perf record -e cpu-clock
/// -F 20000` of `bash -c 'for i in $(seq 3000); do ./t0; done'`, `t0` being `int
/// main(void) { return 0; }` built with `gcc -O2` and linked dynamically against glibc,
/// on the project's build host (an AMD EPYC KVM guest, Linux 6.18, 2023-era glibc). Each
/// command takes 0.85 ms of CPU: `__x64_sys_execve` with its callees 22% (0.19 ms, the
/// forked shell's mm torn down in `begin_new_exec` included), page faults 28% (0.24 ms, of
/// which the forked shell's copy-on-write faults before the exec, `do_wp_page`, are 7%),
/// the dynamic loader's `mmap`/`mprotect` system calls 7% (0.06 ms), `kernel_clone` 7%,
/// the exiting image's `exit_mmap` and the rest of `do_exit` about 5% (0.04 ms), and user
/// time in `ld-linux-x86-64.so.2` and libc 31% (0.26 ms). A guest's page faults cost more
/// than bare metal's (two-dimensional page walks), so these are the upper end for x86.
pub const PROCESS_PROFILE_NS_PER_COMMAND: u64 = 850_000;

/// `exec`: from the build host's profile ([`PROCESS_PROFILE_NS_PER_COMMAND`]), the
/// execve system call (0.19 ms), the new image's page faults (0.24 - 0.06 = 0.18 ms) and
/// the loader's mapping calls (0.06 ms): 0.43 ms, rounded to 400 us.
pub const EXEC: u64 = 400_000;

/// `exit`: from the same profile, `exit_mmap` of the exiting image and the rest of
/// `do_exit`, about 5% of 0.85 ms: 40 us.
pub const EXIT: u64 = 40_000;
/// The loopback network stack, measured on the build host (Linux 6.18, AMD EPYC Zen 5
/// guest; `validation/host/src/netpingpong.c`, data in `validation/host/data/net-*.json`
/// and `netprofile-*.txt`, how they were taken in `validation/host/README.md`): a TCP and
/// a UDP ping-pong of 1-byte messages between two processes pinned to one CPU take
/// 11.48 us and 8.58 us per round trip, i.e. 5,740 ns and 4,289 ns per message, each
/// message one send, its receive softirq, one wakeup, one switch and one receive.
/// `perf record -e cpu-clock -g` of the same runs splits the time (`--children`, share of
/// all samples):
///
/// | | TCP | UDP |
/// |---|---|---|
/// | `__sys_sendto` less its `handle_softirqs` | 16.6% | 24.5% |
/// | `handle_softirqs` less `sock_def_readable` (the wakeup) | 58.5% | 7.95% |
/// | `__sys_recvfrom` less its wait (`sk_wait_data`, `__skb_wait_for_more_packets`) | 3.0% | 12.0% |
///
/// and each share of a message's time is a constant below. What is left (22% and 56%) is
/// the wakeup, the switch and the user code, which fairsim models as `wakeup` and
/// `context_switch`: the model's message is then 6.48 us (TCP) and 3.90 us (UDP) with
/// this table, within 15% of the host's. The split is the least certain part: this guest
/// has software events only, a sample taken with interrupts off lands where they are
/// re-enabled, and an earlier run put 40% of the TCP time in the send path and 29% in the
/// softirq (the two together moved by 8%). Both run on the sending CPU, one after the
/// other, so the split matters less than the sum. The host is a 2024 core, faster than
/// Sapphire Rapids by perhaps a quarter per thread; the values are not scaled, being
/// within the spread the other constants of this table carry.
///
/// `tcp_send`: 16.6% of 5,740 ns.
pub const TCP_SEND: u64 = 950;

/// `tcp_rx`: 58.5% of 5,740 ns.
pub const TCP_RX: u64 = 3_360;

/// `tcp_recv`: 3.0% of 5,740 ns.
pub const TCP_RECV: u64 = 170;

/// `udp_send`: 24.5% of 4,289 ns.
pub const UDP_SEND: u64 = 1_050;

/// `udp_rx`: 7.95% of 4,289 ns.
pub const UDP_RX: u64 = 340;

/// `udp_recv`: 12.0% of 4,289 ns.
pub const UDP_RECV: u64 = 510;

/// `net_copy_per_kib`: the same ping-pongs on one CPU with 60,000-byte messages take
/// 14.56 us (TCP) and 13.07 us (UDP) per round trip against 11.48 and 8.58 us: 3.08 and
/// 4.49 us for four copies of 58.6 KiB (each message copied in by its send and out by its
/// receive), 13 and 19 ns per KiB; the mean, 16 ns.
pub const NET_COPY_PER_KIB: u64 = 16;

/// The load-tracking steps are timed by `cargo bench -p fairsim --bench pelt --
/// bookkeeping` (criterion, `benches/pelt.rs`), which runs fairsim's ports of the kernel
/// functions: the same integer operations on the same fields, on cache lines the caller
/// has just touched, as `enqueue_task_fair` and `dequeue_task_fair` find them (the
/// entity's and the runqueue's `sched_avg` are read by the enqueue or dequeue itself a
/// few instructions earlier). Measured on the project's build host (AMD EPYC Zen 5 KVM
/// guest, 2024, with another build running on the second CPU) on 2026-11-25:
///
/// | bench | median |
/// |---|---|
/// | `__update_load_avg_se (mixed steps)` | 7.99 ns |
/// | `update_cfs_rq_load_avg (mixed steps)` | 8.31 ns |
/// | `util_est_enqueue + util_est_dequeue` | 1.62 ns |
/// | `util_est_update (6.12)` | 10.53 ns |
/// | `util_est_update (v4.17 form)` | 9.96 ns |
///
/// The steps between updates mix hackbench-like intervals, about one in four crossing a
/// 1024-us PELT period (the decay). The kernel's versions add `WRITE_ONCE`s and disabled
/// tracepoints, a few instructions each; what the ports leave out is a cache miss, which
/// a remote wakeup's enqueue may take on the entity's line and which the wakeup's own
/// constants already count. As with the network constants, the 2024 core's figures are
/// not scaled to Sapphire Rapids.
///
/// `pelt_update_se`: 8 ns.
pub const PELT_UPDATE_SE: u64 = 8;

/// `pelt_update_cfs_rq`: 8 ns.
pub const PELT_UPDATE_CFS_RQ: u64 = 8;

/// `util_est_enqueue`: half of the enqueue-plus-dequeue pair, rounded: 1 ns.
pub const UTIL_EST_ENQUEUE: u64 = 1;

/// `util_est_dequeue`: the other half, 1 ns.
pub const UTIL_EST_DEQUEUE: u64 = 1;

/// `util_est_update`: 10 ns (both forms).
pub const UTIL_EST_UPDATE: u64 = 10;

/// The load tracking of one enqueue, which `wakeup` and `ipi_handle` (the two places a
/// wakeup's enqueue runs) no longer include: one `update_load_avg` (entity and
/// runqueue) and `util_est_enqueue`, 17 ns.
pub const ENQUEUE_BOOKKEEPING: u64 = PELT_UPDATE_SE + PELT_UPDATE_CFS_RQ + UTIL_EST_ENQUEUE;

/// The load tracking of one context switch away from a task that blocks, which
/// `context_switch` no longer includes: the dequeue's `update_load_avg`,
/// `util_est_dequeue` and `util_est_update`, and the next task's `set_next_entity`
/// update, 43 ns.
pub const SWITCH_BOOKKEEPING: u64 =
    2 * (PELT_UPDATE_SE + PELT_UPDATE_CFS_RQ) + UTIL_EST_DEQUEUE + UTIL_EST_UPDATE;

/// The table.
pub const TABLE: CostTable = CostTable {
    context_switch: CONTEXT_SWITCH,
    wakeup: WAKEUP,
    idle_scan_per_cpu: IDLE_SCAN_PER_CPU,
    lb_scan_per_cpu: LB_SCAN_PER_CPU,
    scan_remote_llc: SCAN_REMOTE_LLC,
    scan_remote_node: SCAN_REMOTE_NODE,
    group_scan: GROUP_SCAN,
    task_examine: TASK_EXAMINE,
    migration: MIGRATION,
    migration_cross_llc: MIGRATION_CROSS_LLC,
    ipi_latency: IPI_LATENCY,
    ipi_handle: IPI_HANDLE,
    remote_rq_lock: REMOTE_RQ_LOCK,
    rq_enqueue: RQ_ENQUEUE,
    timer_irq: TIMER_IRQ,
    tick: TICK,
    idle_exit: IDLE_EXIT,
    tick_restart: TICK_RESTART,
    fork: FORK,
    exec: EXEC,
    exit: EXIT,
    tcp_send: TCP_SEND,
    tcp_rx: TCP_RX,
    tcp_recv: TCP_RECV,
    udp_send: UDP_SEND,
    udp_rx: UDP_RX,
    udp_recv: UDP_RECV,
    net_copy_per_kib: NET_COPY_PER_KIB,
    pelt_update_se: PELT_UPDATE_SE,
    pelt_update_cfs_rq: PELT_UPDATE_CFS_RQ,
    util_est_enqueue: UTIL_EST_ENQUEUE,
    util_est_dequeue: UTIL_EST_DEQUEUE,
    util_est_update: UTIL_EST_UPDATE,
};
