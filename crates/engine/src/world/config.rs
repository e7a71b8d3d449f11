//! A run's settings for its world: `WorldConfig`, and the choices it holds that have a
//! name on the command line (the timer expiry in the slack, the cpuidle governor, the
//! launch CPU).

use fairsim_balance::SchedParams;

use crate::cost::{CostTable, CostTableName};
use crate::error::{ConfigError, EngineError};
use crate::noise::NoiseModel;
use fairsim_des::time::US;

/// Where in [d, d + slack] an hrtimer armed for d with a slack fires when no earlier
/// interrupt on its CPU runs it first.
///
/// `hrtimer_start_range_ns` gives a timer a soft expiry (d) and a hard one (d + slack);
/// the clock event device is programmed for the earliest hard expiry, and any timer
/// interrupt on that CPU runs every timer whose soft expiry has passed. On a CPU with no
/// other timer nearby, the timer therefore fires at its hard expiry: that is the default,
/// `Hard`. The world also models the coalescing: a tick or another timer's interrupt on the
/// same CPU between d and d + slack fires the timer early.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimerExpiry {
    /// At d + slack (the kernel's behaviour on an otherwise quiet CPU).
    Hard,
    /// At d + slack / 2.
    Mid,
    /// At d (as if the slack were 0).
    Soft,
}

/// The cpuidle governor of the idle CPUs (`/sys/devices/system/cpu/cpuidle/
/// current_governor`), or no cpuidle driver at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cpuidle {
    /// The menu governor (drivers/cpuidle/governors/menu.c), the default on bare metal
    /// with a tick: it predicts the idle time from the next timer, its correction factors
    /// and the recent intervals, picks the deepest state that fits, and keeps the tick
    /// when the prediction is shorter than a tick.
    Menu,
    /// The timer events oriented governor (drivers/cpuidle/governors/teo.c, the
    /// version 6.12.y carries): it bins recent idle durations by state and picks the state
    /// the sleep length and the recent hits and intercepts favour.
    Teo,
    /// The haltpoll governor of KVM guests with the cpuidle-haltpoll driver: poll for an
    /// adaptive time, then halt.
    Haltpoll,
    /// No cpuidle driver (a qemu guest, as in the ground truth): `do_idle` calls
    /// `default_idle_call` after `tick_nohz_idle_stop_tick` at every idle entry, and with
    /// high-resolution timers `tick_nohz_next_event` ignores hrtimers, so the tick stops
    /// whatever the next nanosleep timer; a wakeup pays the flat `idle_exit` cost.
    None,
}

impl Cpuidle {
    /// The names `--cpuidle` takes.
    pub const NAMES: &'static str = "menu, teo, haltpoll or none";

    /// Parses a governor name, or `none`.
    pub fn parse(s: &str) -> Option<Cpuidle> {
        match s {
            "menu" => Some(Cpuidle::Menu),
            "teo" => Some(Cpuidle::Teo),
            "haltpoll" => Some(Cpuidle::Haltpoll),
            "none" => Some(Cpuidle::None),
            _ => None,
        }
    }

    /// The name as `current_governor` prints it (`none` without a driver).
    pub fn name(self) -> &'static str {
        match self {
            Cpuidle::Menu => "menu",
            Cpuidle::Teo => "teo",
            Cpuidle::Haltpoll => "haltpoll",
            Cpuidle::None => "none",
        }
    }

    /// The governor the cpuidle crate runs, `None` without a driver.
    pub fn kind(self) -> Option<fairsim_cpuidle::GovernorKind> {
        match self {
            Cpuidle::Menu => Some(fairsim_cpuidle::GovernorKind::Menu),
            Cpuidle::Teo => Some(fairsim_cpuidle::GovernorKind::Teo),
            Cpuidle::Haltpoll => Some(fairsim_cpuidle::GovernorKind::Haltpoll),
            Cpuidle::None => None,
        }
    }
}

impl TimerExpiry {
    /// Parses `hard`, `mid` or `soft`.
    pub fn parse(s: &str) -> Option<TimerExpiry> {
        match s {
            "hard" => Some(TimerExpiry::Hard),
            "mid" => Some(TimerExpiry::Mid),
            "soft" => Some(TimerExpiry::Soft),
            _ => None,
        }
    }
}

/// The default `timer_slack_ns` of a task (`init_task.timer_slack_ns`): 50 us.
pub const DEFAULT_TIMER_SLACK: u64 = 50 * US;

/// Settings of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorldConfig {
    /// Scheduler tunables (features, HZ, util_est).
    pub params: SchedParams,
    /// Kernel-overhead costs.
    pub cost: CostTable,
    /// The named table `cost` started from, before any `--cost` override: what outputs
    /// say ran, and what the summary lists overrides against.
    pub cost_table: CostTableName,
    /// The run stops at this virtual time (ns), or earlier when every workload finished.
    pub duration: u64,
    /// The world seed.
    pub seed: u64,
    /// `timer_slack_ns` of every task.
    pub timer_slack: u64,
    /// Where in the slack window a quiet timer fires.
    pub timer_expiry: TimerExpiry,
    /// The cpuidle governor (or no driver): which idle state a CPU enters and whether
    /// its tick stops.
    pub cpuidle: Cpuidle,
    /// The idle states; `None` takes the machine's (`Machine::idle_states`), or the
    /// flat compatibility table (`POLL`, then `C1` with the `idle_exit` cost) when the
    /// machine names none.
    pub idle_states: Option<fairsim_cpuidle::IdleStates>,
    /// Check the scheduler's and the engine's invariants after every event (slow; tests).
    pub check_invariants: bool,
    /// Run-to-run noise ([`crate::noise`]); off in the library's default so that a
    /// `WorldConfig::default()` run is exact, on by default on the command line.
    pub noise: NoiseModel,
    /// Start of the measurement window (ns): every counter, latency and overhead share
    /// covers `[warmup, end)`, as a `schedstat.py -i` delta started after launch does.
    pub warmup: u64,
    /// What the run traces (`--trace`, `--plot`); `None` records nothing.
    pub trace: Option<fairsim_trace::TraceConfig>,
    /// The CPU the run's root tasks are forked from (the launching shell's).
    pub launch: Launch,
    /// The cpufreq governor (`--governor`); `None` takes schedutil on a machine with
    /// frequency domains and runs a machine without them at full frequency. A governor
    /// on a machine without domains is refused.
    pub governor: Option<fairsim_balance::cpufreq::Governor>,
    /// Keep every rt-app thread's activations for its log files (`--rtapp-log`, up to
    /// `fairsim_workloads::FILE_TOTAL` per workload) rather than the JSON's first ones.
    pub rtapp_log: bool,
    /// The task groups (`--cgroup`, a scenario's `[cgroup]` tables), created at boot in
    /// this order; the workload crate's `run::prepare` adds the ones rt-app files create. Empty: no
    /// groups, the fair class as it runs without them.
    pub cgroups: crate::cgroup::Cgroups,
}

/// Where the shell that launches a workload runs, so where its root task is forked from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Launch {
    /// Always this CPU (default 0: fairsim's launcher runs on CPU 0).
    Cpu(usize),
    /// A CPU drawn uniformly per root task from the run's seed, as a shell woken by the
    /// terminal or an ssh session runs wherever its last wakeup put it. With kernels
    /// whose fork placement depends on the parent's CPU (Linux 3.9 on TC2 puts a lone
    /// thread on the launching shell's cluster), this is what makes runs of one command
    /// differ.
    Random,
}

impl Launch {
    /// Parses `random` or a CPU number below `nr_cpus`.
    pub fn parse(text: &str, nr_cpus: usize) -> Result<Launch, EngineError> {
        if text == "random" {
            return Ok(Launch::Random);
        }
        match text.parse::<usize>() {
            Ok(c) if c < nr_cpus => Ok(Launch::Cpu(c)),
            _ => Err(ConfigError::LaunchCpu {
                got: text.to_string(),
                last: nr_cpus.saturating_sub(1),
            }
            .into()),
        }
    }

    /// The option's text.
    pub fn name(self) -> String {
        match self {
            Launch::Cpu(c) => c.to_string(),
            Launch::Random => "random".to_string(),
        }
    }
}

impl Default for WorldConfig {
    fn default() -> Self {
        WorldConfig {
            params: SchedParams::default(),
            cost: CostTable::default(),
            cost_table: CostTableName::default(),
            duration: fairsim_des::time::SEC,
            seed: fairsim_des::rng::DEFAULT_SEED,
            timer_slack: DEFAULT_TIMER_SLACK,
            timer_expiry: TimerExpiry::Hard,
            cpuidle: Cpuidle::Menu,
            idle_states: None,
            check_invariants: false,
            noise: NoiseModel::OFF,
            warmup: 0,
            trace: None,
            launch: Launch::Cpu(0),
            governor: None,
            rtapp_log: false,
            cgroups: crate::cgroup::Cgroups::default(),
        }
    }
}

#[cfg(test)]
mod launch_tests {
    use super::Launch;

    #[test]
    fn launch_cpu_takes_random_or_a_cpu_of_the_machine() {
        assert_eq!(Launch::parse("random", 5).unwrap(), Launch::Random);
        assert_eq!(Launch::parse("4", 5).unwrap(), Launch::Cpu(4));
        for bad in ["5", "-1", "any", ""] {
            let e = Launch::parse(bad, 5).unwrap_err().to_string();
            assert!(
                e.contains("--launch-cpu") && e.contains("0 to 4"),
                "{bad}: {e}"
            );
            assert!(!e.contains('\n'));
        }
    }
}
