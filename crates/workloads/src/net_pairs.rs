//! The tasks of a client/server workload over loopback (netperf, tbench): a launcher
//! and a daemon, then one client and one server per connection, each pair on its own
//! connection of the world's sockets ([`fairsim_engine::world::sockets`]).

use fairsim_engine::world::sockets::{NetConn, NetProto, NetTask};
use fairsim_engine::world::{Blueprint, WorkloadRt};

use super::tasks::new_task;

/// One task of a client/server workload: its `comm` and its program.
pub(super) struct Role<'a> {
    /// `comm`.
    pub name: &'a str,
    /// Program index.
    pub prog: usize,
}

/// Adds the tasks of a client/server workload over loopback, in the order both netperf
/// and tbench lay them out: the launcher that forks the `n` clients, the daemon that forks
/// one server per connection, then the clients and the servers. Client `i` talks on
/// socket `2i` and its server on `2i + 1`; `rt.net` gets `n` connections of `proto` and
/// one socket state per task.
#[allow(clippy::too_many_arguments)]
pub(super) fn push_pair_tasks(
    bp: &mut Blueprint,
    rt: &mut WorkloadRt,
    w: usize,
    n: usize,
    proto: NetProto,
    launcher: Role<'_>,
    daemon: Role<'_>,
    client: Role<'_>,
    server: Role<'_>,
) {
    let first = bp.tasks.len();
    let (clients, servers) = (first + 2, first + 2 + n);
    bp.tasks.push(new_task(
        launcher.name.into(),
        launcher.prog,
        None,
        (clients, clients + n),
        w,
    ));
    bp.tasks.push(new_task(
        daemon.name.into(),
        daemon.prog,
        None,
        (servers, servers + n),
        w,
    ));
    for (role, parent, sock) in [(&client, first, 0), (&server, first + 1, 1)] {
        for i in 0..n {
            let me = bp.tasks.len();
            let mut t = new_task(role.name.into(), role.prog, Some(parent), (me, me), w);
            t.pipe_base = 2 * i + sock;
            bp.tasks.push(t);
        }
    }
    rt.net.conns = (0..n).map(|_| NetConn::new(proto)).collect();
    rt.net.tasks = vec![NetTask::default(); 2 + 2 * n];
}
