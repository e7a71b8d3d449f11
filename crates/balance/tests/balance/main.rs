//! The scheduler crate's integration tests: the fair class, wakeup placement, load balancing and their older eras, task groups, schedstat.
//!
//! One binary per crate, its former test files as modules, so that `cargo test` links
//! once per crate; `cargo test -p fairsim-balance --test balance MODULE::` runs one of them.

mod lb_support;
mod run_support;
mod select_support;

mod cfs_arith;
mod cfs_class;
mod eevdf;
mod energy;
mod lb;
mod lb_legacy_v3_9;
mod lb_props;
mod lb_v4;
mod root_domains;
mod schedstat_files;
mod select_affine;
mod select_allowed;
mod select_asym;
mod select_fork;
mod select_legacy_find_idlest;
mod select_legacy_sis;
mod select_sis;
mod select_v3_9;
mod select_v4_15;
mod select_v4_5;
mod task_groups;
mod v6_5;
mod v6_5_energy;
