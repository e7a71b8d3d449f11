//! `arm-2013`: the cost table of an ARMv7 big.LITTLE board of 2013, ARM's Versatile
//! Express TC2 (two Cortex-A15 at 1 GHz, three Cortex-A7 at 800 MHz, Linux 3.x), the
//! default of the `tc2` presets.
//!
//! The values are for the A15, the core the sources measured. An A7 runs the same kernel
//! paths more slowly, which one table per machine cannot say: kernel work is charged in
//! nanoseconds, whatever the CPU that does it.
//!
//! # Sources
//!
//! No lmbench run on TC2 itself was found in public material. The measurements used are
//! Texas Instruments' LMBench runs on two Cortex-A15 boards, published in the Processor
//! SDK Linux Kernel Performance Guide (the 2017.06 run, on Linux 4.9; Processor SDK Linux
//! 04.03, March 2018): the table in `source/linux/Release_Specific/Performance_Guide/
//! Kernel_Performance_Guide.rst.inc` of github.com/TexasInstruments/processor-sdk-doc at
//! commit d64349ef (2018-04-20), published at software-dl.ti.com/processor-sdk-linux/
//! esd/docs/. Its columns used here:
//!
//! - `k2g-evm` (66AK2G12): one Cortex-A15. Its clock is not in the guide's board list,
//!   but its own results give it: `lat_ops-int-add` is 1.0 ns (one cycle), and
//!   Dhrystone's 6,451,613/s at 3.6 DMIPS/MHz is 6,451,613 / 1757 / 3.6 = 1.02 GHz. So
//!   the board is an A15 at TC2's A15 clock, 1 GHz, and its times need no scaling. With
//!   one CPU, every lmbench hop between two processes is a wakeup and a context switch
//!   on the same CPU, which is what this table's first two constants are.
//! - `am57xx-evm` (AM5728): two Cortex-A15 at 1.5 GHz (the guide's board list, and
//!   `lat_ops-int-add` 0.67 ns), used as a cross-check, its times scaled by 1.5 to 1 GHz.
//!
//! The figures taken from the `k2g-evm` column, all at 1 GHz:
//!
//! - [`HOP`]: `lat_sem` 5.1 us. lmbench's `lat_sem` reports one hop of a semaphore
//!   ping-pong between two processes (`micro("Semaphore latency", get_n() * 2)`): a
//!   `semop` that wakes the partner and blocks, the switch, and the partner's return.
//! - [`SYSCALL`]: `lat_syscall-null` 0.47 us, a system call's entry and exit.
//! - [`L2_HIT`]: `lat_mem_rd-stride128-sz125k` 20.06 ns (sz250k 20.18 ns): an L2 hit.
//! - [`MEMORY`]: `lat_mem_rd-stride128-sz1000k` 124.31 ns: a load from memory.
//! - `lat_proc-fork` 837.29 us, for [`FORK`].
//!
//! Cross-checks that the table does not use directly: `am57xx-evm` `lat_sem` is 2.09 us
//! (3.1 us at 1 GHz, lower because its two CPUs work on a hop in parallel);
//! `lat_ctx-2-128k` is 9.5 us there and 9.0 us on `k2g-evm` (both include refilling the
//! L1 the other process evicted); `lat_pipe` is 25.04 and 32.71 us per round trip, most
//! of it the pipe's own read and write, which fairsim counts as the workload's work.
//!
//! Two quantities are derived from them:
//!
//! - wakeup plus switch, [`HOP`] - [`SYSCALL`] = 4.63 us, split 3:1 between
//!   `context_switch` and `wakeup` as the x86-2020s table splits its 2.0 us, since lmbench
//!   does not separate them;
//! - [`K`], 4.63 / 2.0 = 2.315, rounded to 2.3, the ratio of that to the x86-2020s
//!   table's wakeup plus switch: how much longer the A15 at 1 GHz takes for kernel work that is mostly cached
//!   instructions, applied to the x86-2020s values of such work.

use crate::cost::CostTable;
use crate::cost_tables::x86_2020s as x86;

/// `k2g-evm` `lat_sem`: one semaphore hop on one A15 at 1 GHz, 5.1 us (see the module's
/// sources).
pub const HOP: u64 = 5_100;

/// `k2g-evm` `lat_syscall-null`: a system call's entry and exit, 0.47 us.
pub const SYSCALL: u64 = 470;

/// `k2g-evm` `lat_mem_rd-stride128-sz125k`: an L2 hit, 20.06 ns, rounded to 20 ns.
pub const L2_HIT: u64 = 20;

/// `k2g-evm` `lat_mem_rd-stride128-sz1000k`: a load from memory, 124.31 ns, rounded to
/// 124 ns.
pub const MEMORY: u64 = 124;

/// A wakeup plus a context switch on the same CPU: [`HOP`] - [`SYSCALL`] = 4.63 us.
pub const WAKE_AND_SWITCH: u64 = HOP - SYSCALL;

/// The ratio, in percent, of [`WAKE_AND_SWITCH`] to the x86-2020s table's wakeup plus
/// context switch (2.0 us): 4.63 / 2.0 = 2.315, rounded to 2.3, the slowdown of cached
/// kernel work.
pub const K: u64 = 230;

/// Scales an x86-2020s value of cached kernel work by [`K`].
const fn scaled(x86_ns: u64) -> u64 {
    x86_ns * K / 100
}

/// A whole context switch: three quarters of [`WAKE_AND_SWITCH`] (the x86-2020s split of
/// 1.5 us switch to 0.5 us wakeup), 3.47 us, its load tracking included.
pub const CONTEXT_SWITCH_TOTAL: u64 = WAKE_AND_SWITCH * 3 / 4 / 10 * 10;

/// `context_switch`: [`CONTEXT_SWITCH_TOTAL`] less its load tracking
/// ([`SWITCH_BOOKKEEPING`], charged apart), 3,373 ns.
pub const CONTEXT_SWITCH: u64 = CONTEXT_SWITCH_TOTAL - SWITCH_BOOKKEEPING;

/// A whole wakeup: the other quarter of [`WAKE_AND_SWITCH`], 1.16 us.
pub const WAKEUP_TOTAL: u64 = WAKE_AND_SWITCH - CONTEXT_SWITCH_TOTAL;

/// `wakeup`: [`WAKEUP_TOTAL`] less the enqueue's load tracking ([`ENQUEUE_BOOKKEEPING`]),
/// 1,122 ns.
pub const WAKEUP: u64 = WAKEUP_TOTAL - ENQUEUE_BOOKKEEPING;

/// `idle_scan_per_cpu`: one line of the remote runqueue, which on TC2 sits in the same
/// cluster's L2 or another core's L1 behind it: an [`L2_HIT`], 20 ns.
pub const IDLE_SCAN_PER_CPU: u64 = L2_HIT;

/// `lb_scan_per_cpu`: the instructions the x86-2020s table measured at ~10 ns per CPU,
/// scaled by [`K`] (23 ns), plus the five lines of the remote `struct rq` at [`L2_HIT`]
/// with about two in flight on the A15's out-of-order core (50 ns): 70 ns.
pub const LB_SCAN_PER_CPU: u64 = (scaled(10) + 5 * L2_HIT / 2) / 10 * 10;

/// `scan_remote_llc`: a runqueue of the other cluster (TC2's LLCs are the clusters' L2s)
/// comes through the CCI-400. No public cross-cluster snoop latency of TC2 was found; a
/// load from [`MEMORY`] bounds it, so the extra is 124 - 20 ns, rounded to 100 ns.
pub const SCAN_REMOTE_LLC: u64 = (MEMORY - L2_HIT) / 10 * 10;

/// `scan_remote_node`: TC2 has one node; an ARM machine of this generation described
/// with several gets the same memory-latency extra as another cluster, 100 ns.
pub const SCAN_REMOTE_NODE: u64 = SCAN_REMOTE_LLC;

/// `group_scan`: the group capacity object and the loop, two lines at [`L2_HIT`] and
/// about 10 ns of instructions: 50 ns.
pub const GROUP_SCAN: u64 = 2 * L2_HIT + 10;

/// `task_examine`: a few fields of a remote task, two lines at [`L2_HIT`]: 40 ns.
pub const TASK_EXAMINE: u64 = 2 * L2_HIT;

/// `migration`: detaching and attaching a task and its first misses, the x86-2020s 1 us
/// scaled by [`K`]: 2.3 us.
pub const MIGRATION: u64 = scaled(x86::MIGRATION);

/// `migration_cross_llc`: the few dozen hot lines of a small task (24, as in the
/// x86-2020s estimate: 3 us at ~125 ns) fetched from [`MEMORY`] across the clusters:
/// 24 x 124 ns, rounded to 3.0 us.
pub const MIGRATION_CROSS_LLC: u64 = (24 * MEMORY).div_ceil(100) * 100;

/// `ipi_latency`: from `smp_send_reschedule` to the handler on the target. No public
/// measurement of a GICv2 IPI on an A15 was found; the path is two device accesses (the
/// sender's write of `GICD_SGIR`, the target's read of `GICC_IAR`), each at least a load
/// from [`MEMORY`], and an exception entry like a system call's ([`SYSCALL`]):
/// 2 x 124 + 470 ns, rounded to 700 ns.
pub const IPI_LATENCY: u64 = (2 * MEMORY + SYSCALL) / 100 * 100;

/// `ipi_handle`: irq entry and exit ([`SYSCALL`]), the `GICC_IAR` read and `GICC_EOIR`
/// write (2 x [`MEMORY`], rounded to 250 ns) and `sched_ttwu_pending`'s enqueue
/// ([`RQ_ENQUEUE`]): 1.3 us, the enqueue's load tracking included.
pub const IPI_HANDLE_TOTAL: u64 = SYSCALL + 250 + RQ_ENQUEUE;

/// `ipi_handle`: [`IPI_HANDLE_TOTAL`] less the enqueue's load tracking
/// ([`ENQUEUE_BOOKKEEPING`], charged apart), 1,262 ns.
pub const IPI_HANDLE: u64 = IPI_HANDLE_TOTAL - ENQUEUE_BOOKKEEPING;

/// `remote_rq_lock`: the lock's line comes from the other cluster at [`MEMORY`] latency,
/// and under contention twice (the exclusive load, then again after the holder's
/// release): 2 x 124 ns, rounded to 250 ns.
pub const REMOTE_RQ_LOCK: u64 = (2 * MEMORY).div_ceil(10) * 10;

/// `rq_enqueue`: `enqueue_task_fair` and `wakeup_preempt`, cached work: the x86-2020s
/// 250 ns scaled by [`K`], rounded to 580 ns.
pub const RQ_ENQUEUE: u64 = scaled(x86::RQ_ENQUEUE).div_ceil(10) * 10;

/// `timer_irq`: the x86-2020s 0.5 us of interrupt and hrtimer work scaled by [`K`]
/// (1.15 us), plus the GIC's `GICC_IAR` read and `GICC_EOIR` write that x86's APIC does
/// with cheap register writes (2 x [`MEMORY`], 250 ns): 1.4 us. Reprogramming the
/// Cortex-A15's generic timer is a coprocessor register write (`arch_timer_set_next_event`
/// in drivers/clocksource/arm_arch_timer.c) and adds nothing measurable.
pub const TIMER_IRQ: u64 = scaled(x86::TIMER_IRQ) + 250;

/// `tick`: the same composition as [`TIMER_IRQ`] for `tick_sched_timer` ->
/// `update_process_times` -> `sched_tick`: 1.4 us.
pub const TICK: u64 = scaled(x86::TICK) + 250;

/// `idle_exit`: TC2's shallowest idle state is `ARM_CPUIDLE_WFI_STATE`
/// (arch/arm/include/asm/cpuidle.h), `exit_latency` 1 us, the WFI state of the
/// cpuidle-big_little driver's both tables; 1 us.
pub const IDLE_EXIT: u64 = 1_000;

/// `tick_restart`: restarting the tick programs the generic timer with coprocessor
/// register writes (drivers/clocksource/arm_arch_timer.c), counted in `idle_exit` on bare
/// metal as on x86; 0.
pub const TICK_RESTART: u64 = 0;

/// `fork`: `k2g-evm` `lat_proc-fork` is 837.29 us for a fork, the child's exit and the
/// parent's wait; the parent's `copy_process` with the page-table copy is about half of
/// it: 420 us.
pub const FORK: u64 = 420_000;

/// `exec`: TI's performance guides for their Cortex-A72 boards (Processor SDK Linux 10.00,
/// `Kernel_Performance_Guide.rst.inc`, the J7 family's LMBench table) put `lat_proc-exec`
/// (fork, execve, exit, wait) at 1.26-1.31 times `lat_proc-fork` (fork, exit, wait), e.g.
/// 471.92 against 375.71 us on the AM68 SK. No A15 figure of `lat_proc-exec` was found;
/// taking the middle ratio, 1.28, for `k2g-evm`'s 837.29 us fork gives 1072 us, so the
/// execve and the new image's start-up take about 235 us more than the fork: 230 us.
pub const EXEC: u64 = 230_000;

/// `exit`: [`FORK`] takes about half of `k2g-evm`'s `lat_proc-fork` (837.29 us); the other
/// half, less the wakeup and the two switches it contains (about 8 us, [`HOP`] plus a
/// switch), is the child's `do_exit` and the parent's reaping, almost all of it the exit's
/// teardown of the copied mm: 837 - 420 - 8 = 409 us, rounded to 410 us.
pub const EXIT: u64 = 410_000;
/// The loopback network stack: no public loopback TCP or UDP latency of a Cortex-A15 was
/// found that separates the stack from the switch (TI's guide lists `lat_tcp`, but at
/// 1.1 us, less than its own `lat_syscall-null` plus a switch, it cannot be a round
/// trip). The stack's work is mostly cached instructions, so the x86-2020s values
/// (measured on the build host) are scaled by [`K`] like the other such work:
/// `tcp_send` 2.19 us.
pub const TCP_SEND: u64 = scaled(x86::TCP_SEND);

/// `tcp_rx`: the x86-2020s value scaled by [`K`], 7.73 us.
pub const TCP_RX: u64 = scaled(x86::TCP_RX);

/// `tcp_recv`: the x86-2020s value scaled by [`K`], 0.39 us.
pub const TCP_RECV: u64 = scaled(x86::TCP_RECV);

/// `udp_send`: the x86-2020s value scaled by [`K`], 2.42 us.
pub const UDP_SEND: u64 = scaled(x86::UDP_SEND);

/// `udp_rx`: the x86-2020s value scaled by [`K`], 0.78 us.
pub const UDP_RX: u64 = scaled(x86::UDP_RX);

/// `udp_recv`: the x86-2020s value scaled by [`K`], 1.17 us.
pub const UDP_RECV: u64 = scaled(x86::UDP_RECV);

/// `net_copy_per_kib`: the x86-2020s 16 ns per KiB scaled by [`K`], 36 ns: an A15's
/// copy loop of cached data is no better placed than its other cached work.
pub const NET_COPY_PER_KIB: u64 = scaled(x86::NET_COPY_PER_KIB);

/// `pelt_update_se`: the x86-2020s 8 ns of cached arithmetic scaled by [`K`], 18 ns.
pub const PELT_UPDATE_SE: u64 = scaled(x86::PELT_UPDATE_SE);

/// `pelt_update_cfs_rq`: the x86-2020s 8 ns scaled by [`K`], 18 ns.
pub const PELT_UPDATE_CFS_RQ: u64 = scaled(x86::PELT_UPDATE_CFS_RQ);

/// `util_est_enqueue`: the x86-2020s 1 ns scaled by [`K`], 2 ns.
pub const UTIL_EST_ENQUEUE: u64 = scaled(x86::UTIL_EST_ENQUEUE);

/// `util_est_dequeue`: the x86-2020s 1 ns scaled by [`K`], 2 ns.
pub const UTIL_EST_DEQUEUE: u64 = scaled(x86::UTIL_EST_DEQUEUE);

/// `util_est_update`: the x86-2020s 10 ns scaled by [`K`], 23 ns.
pub const UTIL_EST_UPDATE: u64 = scaled(x86::UTIL_EST_UPDATE);

/// The load tracking of one enqueue, as in the x86-2020s table.
pub const ENQUEUE_BOOKKEEPING: u64 = PELT_UPDATE_SE + PELT_UPDATE_CFS_RQ + UTIL_EST_ENQUEUE;

/// The load tracking of one switch away from a blocking task, as in the x86-2020s table.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The values the doc comments state, so that a change to a derivation shows up as
    /// a disagreement with the text.
    #[test]
    fn values_are_what_the_docs_say() {
        let t = TABLE;
        let expect: [(&str, u64); 33] = [
            ("context_switch", 3_373),
            ("wakeup", 1_122),
            ("idle_scan_per_cpu", 20),
            ("lb_scan_per_cpu", 70),
            ("scan_remote_llc", 100),
            ("scan_remote_node", 100),
            ("group_scan", 50),
            ("task_examine", 40),
            ("migration", 2_300),
            ("migration_cross_llc", 3_000),
            ("ipi_latency", 700),
            ("ipi_handle", 1_262),
            ("remote_rq_lock", 250),
            ("rq_enqueue", 580),
            ("timer_irq", 1_400),
            ("tick", 1_400),
            ("idle_exit", 1_000),
            ("tick_restart", 0),
            ("fork", 420_000),
            ("exec", 230_000),
            ("exit", 410_000),
            ("tcp_send", 2_185),
            ("tcp_rx", 7_728),
            ("tcp_recv", 391),
            ("udp_send", 2_415),
            ("udp_rx", 782),
            ("udp_recv", 1_173),
            ("net_copy_per_kib", 36),
            ("pelt_update_se", 18),
            ("pelt_update_cfs_rq", 18),
            ("util_est_enqueue", 2),
            ("util_est_dequeue", 2),
            ("util_est_update", 23),
        ];
        for (name, v) in expect {
            assert_eq!(t.get(name), Some(v), "{name}");
        }
        assert_eq!(expect.len(), CostTable::NAMES.len());
        // The measured hop is the sum of the pieces it was split into, and K is its
        // ratio to the x86-2020s wakeup plus switch, rounded down to a tenth.
        assert_eq!(CONTEXT_SWITCH_TOTAL + WAKEUP_TOTAL + SYSCALL, HOP);
        let ratio = WAKE_AND_SWITCH * 100 / (x86::CONTEXT_SWITCH_TOTAL + x86::WAKEUP_TOTAL);
        assert_eq!(ratio / 10 * 10, K);
    }
}
