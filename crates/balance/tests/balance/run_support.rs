//! Driving one CPU of a `Sched` through time, as the engine would: the helper the fair
//! class's tests share.

use fairsim_balance::Sched;

/// Runs `cpu` from `from` to `to`: schedules when needed and ticks at every multiple of
/// the tick period, as a busy CPU does, checking the invariants at every tick.
pub(crate) fn run(s: &mut Sched, cpu: usize, from: u64, to: u64) {
    if s.rqs[cpu].curr.is_none() || s.rqs[cpu].need_resched {
        s.schedule(cpu, from);
    }
    let tick = s.tick_nsec;
    let mut t = (from / tick + 1) * tick;
    while t <= to {
        if s.tick(cpu, t) {
            s.schedule(cpu, t);
        }
        s.check_invariants().unwrap();
        t += tick;
    }
    s.update_rq_clock(cpu, to);
}
