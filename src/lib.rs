//! fairsim: a high-fidelity emulator of the Linux fair-class scheduler's SMP machinery.
//!
//! This facade re-exports the workspace's library crates so that benches and scripts can
//! reach every layer through one dependency. See `ARCHITECTURE.md` for the map.

pub use fairsim_balance as balance;
pub use fairsim_des as des;
pub use fairsim_engine as engine;
pub use fairsim_output as output;
pub use fairsim_pelt as pelt;
pub use fairsim_race as race;
pub use fairsim_topology as topology;
pub use fairsim_trace as trace;
pub use fairsim_workloads as workloads;
