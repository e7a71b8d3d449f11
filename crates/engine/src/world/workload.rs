//! What the world keeps per workload while it runs: the workload's random stream, its
//! latency histograms, its range of tasks, its sockets and its tool's own model.

use fairsim_des::rng::SimRng;

use crate::event::Tid;
use crate::hook::WorkloadModel;
use crate::plat::PlatStats;
use crate::world::sockets::NetRt;

/// Runtime state of one workload in a world.
#[derive(Debug)]
pub struct WorkloadRt {
    /// The workload's random stream.
    pub rng: SimRng,
    /// Latency histograms in microseconds (schbench's layout).
    pub hists: Vec<PlatStats>,
    /// Its tasks: a contiguous range of engine ids.
    pub tasks: (Tid, Tid),
    /// Its loopback sockets (empty for workloads that use none).
    pub net: NetRt,
    /// The tool's own state behind its tasks' hook operations ([`crate::hook`]); `None`
    /// for tools whose programs use only the generic operations.
    pub model: Option<Box<dyn WorkloadModel>>,
}

impl WorkloadRt {
    /// A workload with stream `rng` whose tasks start at engine id `first`, with no task,
    /// histogram, socket or model yet.
    pub fn new(rng: SimRng, first: Tid) -> WorkloadRt {
        WorkloadRt {
            rng,
            hists: Vec::new(),
            tasks: (first, first),
            net: NetRt::default(),
            model: None,
        }
    }

    /// Records `us` into histogram `hist`.
    pub fn record(&mut self, hist: usize, us: u64) {
        if let Some(h) = self.hists.get_mut(hist) {
            h.add(us.min(u64::from(u32::MAX)) as u32);
        }
    }

    /// The tool's model as its own type `T`, when the workload has one of that type.
    pub fn model<T: 'static>(&self) -> Option<&T> {
        self.model.as_deref()?.as_any().downcast_ref()
    }

    /// [`WorkloadRt::model`], mutable.
    pub fn model_mut<T: 'static>(&mut self) -> Option<&mut T> {
        self.model.as_deref_mut()?.as_any_mut().downcast_mut()
    }
}
