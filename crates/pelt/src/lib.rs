//! PELT (per-entity load tracking) and util_est, ported bit-exact from Linux 6.12.117's
//! `kernel/sched/pelt.c`, `pelt.h`, `sched-pelt.h` and the util_est parts of `fair.c`.
