//! Pipes and loopback sockets: writes and reads that block on a full or empty buffer,
//! and netperf's and tbench's socket operations.

use super::Step;
use crate::event::Tid;
use crate::program::NetSize;
use crate::world::net::NetRecvStep;
use crate::world::World;

impl World {
    /// The end of a call that may block: the task goes on to its next operation when the
    /// call completed (`done`), else it sleeps until the buffer changes and retries the
    /// same operation when woken.
    #[inline(always)]
    fn next_or_block(&mut self, cpu: usize, now: u64, t: Tid, done: bool) -> Step {
        if !done {
            self.block_and_schedule(cpu, now, t);
            return Step::Stop;
        }
        self.tasks[t].pc += 1;
        Step::Next
    }

    /// `PipeWrite`: writes `bytes` to the task's pipe `pipe`, blocking while it is full.
    #[inline]
    pub(super) fn op_pipe_write(
        &mut self,
        cpu: usize,
        now: u64,
        t: Tid,
        pipe: usize,
        bytes: u32,
    ) -> Step {
        let p = self.tasks[t].pipe_base + pipe;
        let done = self.pipe_write(cpu, now, t, p, bytes);
        self.next_or_block(cpu, now, t, done)
    }

    /// `PipeRead`: reads `bytes` from the task's pipe `pipe`, blocking while it is empty.
    #[inline]
    pub(super) fn op_pipe_read(
        &mut self,
        cpu: usize,
        now: u64,
        t: Tid,
        pipe: usize,
        bytes: u32,
    ) -> Step {
        let p = self.tasks[t].pipe_base + pipe;
        let done = self.pipe_read(cpu, now, t, p, bytes);
        self.next_or_block(cpu, now, t, done)
    }

    /// `NetSend`: sends a message on socket `sock`, blocking while its buffer is full.
    #[inline(never)]
    pub(super) fn op_net_send(
        &mut self,
        cpu: usize,
        now: u64,
        t: Tid,
        sock: usize,
        size: NetSize,
    ) -> Step {
        let done = self.net_send(cpu, now, t, sock, size);
        self.next_or_block(cpu, now, t, done)
    }

    /// `NetRecv`: receives on socket `sock`; blocks while nothing came, and exits at the
    /// peer's close.
    #[inline(never)]
    pub(super) fn op_net_recv(
        &mut self,
        cpu: usize,
        now: u64,
        t: Tid,
        sock: usize,
        calls: u32,
        trunc: bool,
    ) -> Step {
        match self.net_recv(cpu, now, t, sock, calls, trunc) {
            NetRecvStep::Got => {
                self.tasks[t].pc += 1;
                Step::Next
            }
            NetRecvStep::Wait => {
                self.block_and_schedule(cpu, now, t);
                Step::Stop
            }
            NetRecvStep::Eof => {
                self.exit_current(cpu, now, t);
                Step::Stop
            }
        }
    }

    /// `NetClose`: closes socket `sock`, waking a peer that waits on it.
    #[inline(never)]
    pub(super) fn op_net_close(&mut self, cpu: usize, now: u64, t: Tid, sock: usize) -> Step {
        self.tasks[t].pc += 1;
        self.net_close(cpu, now, t, sock);
        Step::Next
    }
}
