//! Machine descriptions and the sched-domain hierarchy Linux 6.12.117's
//! `kernel/sched/topology.c` builds from them.
