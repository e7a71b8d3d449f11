//! The cpuidle governors of Linux 6.12.117 (drivers/cpuidle/governors/): each one's
//! per-CPU data, its `->select()` and its `->reflect()`.
//!
//! - [`menu`]: menu.c, the default on tickless kernels (rating 20).
//! - [`teo`]: teo.c, the timer events oriented governor (rating 19).
//! - [`haltpoll`]: haltpoll.c, for the cpuidle-haltpoll driver of KVM guests (rating 9).

pub mod haltpoll;
pub mod menu;
pub mod teo;

pub use haltpoll::HaltpollParams;
pub use menu::MenuDevice;
pub use teo::{TeoBin, TeoCpu};

use crate::governor_api::{DevState, GovernorKind, IdleCtx, Selection};

/// The running governor and its per-CPU data (`cpuidle_curr_governor` and the per-CPU
/// variables of its file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Governor {
    /// menu.c's `struct menu_device`.
    Menu(MenuDevice),
    /// teo.c's `struct teo_cpu`.
    Teo(TeoCpu),
    /// haltpoll.c keeps its state in `struct cpuidle_device`; only its module parameters
    /// are its own.
    Haltpoll(HaltpollParams),
}

impl Governor {
    /// The governor's data as its `->enable()` callback leaves it.
    pub(crate) fn new(kind: GovernorKind) -> Governor {
        match kind {
            GovernorKind::Menu => Governor::Menu(MenuDevice::new()),
            GovernorKind::Teo => Governor::Teo(TeoCpu::new()),
            GovernorKind::Haltpoll => Governor::Haltpoll(HaltpollParams::default()),
        }
    }

    /// Which governor this is.
    pub(crate) fn kind(&self) -> GovernorKind {
        match self {
            Governor::Menu(_) => GovernorKind::Menu,
            Governor::Teo(_) => GovernorKind::Teo,
            Governor::Haltpoll(_) => GovernorKind::Haltpoll,
        }
    }

    /// `cpuidle_curr_governor->select(drv, dev, &stop_tick)` with `stop_tick` true on the
    /// way in, as `cpuidle_idle_call` sets it.
    pub(crate) fn select(&mut self, dev: &mut DevState, ctx: &IdleCtx) -> Selection {
        match self {
            Governor::Menu(m) => m.select(dev, ctx),
            Governor::Teo(t) => t.select(dev, ctx),
            Governor::Haltpoll(_) => haltpoll::haltpoll_select(dev, ctx),
        }
    }

    /// `cpuidle_curr_governor->reflect(dev, idx)` at `now_ns`, the tick handler having run
    /// in the idle period if `tick_wakeup`.
    pub(crate) fn reflect(
        &mut self,
        dev: &mut DevState,
        idx: usize,
        now_ns: u64,
        tick_wakeup: bool,
    ) {
        match self {
            Governor::Menu(m) => m.reflect(dev, idx, tick_wakeup),
            Governor::Teo(t) => t.reflect(dev, idx, now_ns, tick_wakeup),
            Governor::Haltpoll(p) => haltpoll::haltpoll_reflect(p, dev, idx),
        }
    }
}
