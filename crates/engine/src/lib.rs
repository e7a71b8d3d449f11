//! The world in virtual time: events, CPUs executing task programs, workloads, costs,
//! metrics and traces.
//!
//! Not yet written: this crate is the home of the engine issue (#4).

pub use fairsim_balance as balance;
