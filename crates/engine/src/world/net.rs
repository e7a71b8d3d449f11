//! Loopback sockets in virtual time: the system calls of the network workloads (netperf,
//! tbench) with the kernel work each one does, on the CPU that does it.
//!
//! A `send` charges its own path (`tcp_send`/`udp_send` per segment and the copy from
//! user memory) and then the receive softirq that the loopback device makes it run on
//! its own CPU (`tcp_rx`/`udp_rx` per segment: `netif_rx` queues the skb on this CPU's
//! backlog and `local_bh_enable` processes it, see `sockets.rs`). That softirq
//! queues the message at the peer and wakes a peer blocked in `recv` from this CPU with
//! a sync wakeup, as `sock_def_readable` does. The work is charged as kernel time of
//! kind `net` in the task's system call, so it is not preempted: a wakeup preemption
//! that arrives meanwhile switches the task once the call's work is done, as a kernel
//! without full preemption does at the return to user space. The wakeup is issued when
//! the call starts and its enqueue lands after the charged work and the wakeup's own
//! cost, so `select_task_rq` sees the machine as it was a few microseconds before the
//! softirq runs.

use fairsim_balance::wf;

use crate::event::Tid;
use crate::profile::{Ctx, Site};
use crate::program::NetSize;
use crate::world::sockets::{NetProto, RecvOutcome, SendOutcome, LOOPBACK_TCP_MSS};

use super::World;

/// What a `recv` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum NetRecvStep {
    /// A message was read.
    Got,
    /// Nothing was queued: the task blocks.
    Wait,
    /// The peer has closed: the task's loop ends.
    Eof,
}

impl World {
    /// The workload of task `t`, its index within it, and its socket `sock` as
    /// (connection, side).
    fn net_sock(&self, t: Tid, sock: usize) -> (usize, usize, usize, usize) {
        let w = self.tasks[t].workload;
        let me = t - self.workloads[w].tasks.0;
        let s = self.tasks[t].pipe_base + sock;
        (w, me, s / 2, s % 2)
    }

    /// The copy of `len` bytes between user memory and an skb.
    fn net_copy(&self, len: u32) -> u64 {
        u64::from(len) * self.config.cost.net_copy_per_kib / 1024
    }

    /// `send` of one message by `t` on `cpu`: false when a TCP sender must wait for
    /// window (the send is retried when a `recv` reopens it).
    pub(super) fn net_send(
        &mut self,
        cpu: usize,
        now: u64,
        t: Tid,
        sock: usize,
        size: NetSize,
    ) -> bool {
        let (w, me, conn, side) = self.net_sock(t, sock);
        let Some(nt) = self.workloads[w].net.tasks.get(me).copied() else {
            return true;
        };
        let (len, reply) = match size {
            NetSize::Fixed(n) => (n, 0),
            NetSize::Request => (nt.request, nt.response),
            NetSize::Reply => (nt.last_reply, 0),
        };
        let Some(c) = self.workloads[w].net.conns.get_mut(conn) else {
            return true;
        };
        let proto = c.proto;
        let outcome = c.send(side, t, len, reply);
        if outcome == SendOutcome::Blocked {
            return false;
        }
        let cost = self.config.cost;
        let (segs, send, rx, send_ctx, rx_ctx) = match proto {
            NetProto::Tcp => (
                u64::from(len).div_ceil(LOOPBACK_TCP_MSS).max(1),
                cost.tcp_send,
                cost.tcp_rx,
                Ctx::NetTcpSend,
                Ctx::NetTcpRx,
            ),
            NetProto::Udp => (
                1,
                cost.udp_send,
                cost.udp_rx,
                Ctx::NetUdpSend,
                Ctx::NetUdpRx,
            ),
        };
        // A dropped datagram has been through the whole softirq up to the drop.
        self.charge_parts(
            cpu,
            now,
            &[
                (segs * send + self.net_copy(len), Site::fixed(send_ctx)),
                (segs * rx, Site::fixed(rx_ctx)),
            ],
        );
        if let SendOutcome::Queued(Some(r)) = outcome {
            self.wake_task(r, cpu, wf::SYNC, now);
        }
        true
    }

    /// `recv` of one message by `t` on `cpu`, in `calls` system calls.
    pub(super) fn net_recv(
        &mut self,
        cpu: usize,
        now: u64,
        t: Tid,
        sock: usize,
        calls: u32,
        trunc: bool,
    ) -> NetRecvStep {
        let (w, me, conn, side) = self.net_sock(t, sock);
        let Some(c) = self.workloads[w].net.conns.get_mut(conn) else {
            return NetRecvStep::Eof;
        };
        let proto = c.proto;
        let (msg, wake) = match c.recv(side, t) {
            RecvOutcome::Got { msg, wake } => (msg, wake),
            RecvOutcome::Empty => return NetRecvStep::Wait,
            RecvOutcome::Eof => return NetRecvStep::Eof,
        };
        if let Some(nt) = self.workloads[w].net.tasks.get_mut(me) {
            nt.last_reply = msg.reply;
        }
        let cost = self.config.cost;
        let (recv, ctx) = match proto {
            NetProto::Tcp => (cost.tcp_recv, Ctx::NetTcpRecv),
            NetProto::Udp => (cost.udp_recv, Ctx::NetUdpRecv),
        };
        let copy = if trunc { 0 } else { self.net_copy(msg.len) };
        self.charge(
            cpu,
            now,
            u64::from(calls.max(1)) * recv + copy,
            Site::fixed(ctx),
        );
        if let Some(writer) = wake {
            // The window update is a segment sent and processed on this CPU.
            self.charge(
                cpu,
                now,
                cost.tcp_send + cost.tcp_rx,
                Site::fixed(Ctx::NetTcpAck),
            );
            self.wake_task(writer, cpu, 0, now);
        }
        NetRecvStep::Got
    }

    /// `close` of `t`'s socket `sock`: a TCP close sends a FIN through the same path as
    /// a segment; a peer blocked in `recv` wakes to find the end.
    pub(super) fn net_close(&mut self, cpu: usize, now: u64, t: Tid, sock: usize) {
        let (w, _, conn, side) = self.net_sock(t, sock);
        let Some(c) = self.workloads[w].net.conns.get_mut(conn) else {
            return;
        };
        let proto = c.proto;
        let reader = c.close(side);
        if proto == NetProto::Tcp {
            let cost = self.config.cost;
            self.charge_parts(
                cpu,
                now,
                &[
                    (cost.tcp_send, Site::fixed(Ctx::NetTcpSend)),
                    (cost.tcp_rx, Site::fixed(Ctx::NetTcpRx)),
                ],
            );
        }
        if let Some(r) = reader {
            self.wake_task(r, cpu, wf::SYNC, now);
        }
    }

    /// Task `t`'s next exchange sends `request` bytes and asks for `response` back, as
    /// its workload's model drew them ([`crate::hook::HookAct::Exchange`]).
    pub(super) fn set_exchange(&mut self, t: Tid, request: u32, response: u32) {
        let w = self.tasks[t].workload;
        let me = t - self.workloads[w].tasks.0;
        if let Some(nt) = self.workloads[w].net.tasks.get_mut(me) {
            nt.request = request;
            nt.response = response;
        }
    }
}
