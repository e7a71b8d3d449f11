//! The world's loopback TCP and UDP sockets, as netperf and tbench use them: one
//! connection per client and server pair, each direction a queue of whole messages at
//! the receiving end.
//!
//! What the kernel does on loopback, as read in the indexed copies of 6.x's
//! `drivers/net/loopback.c` (`loopback_xmit`: `skb_orphan`, `__netif_rx`),
//! `net/core/dev.c` (`netif_rx_internal` with the three-argument `enqueue_to_backlog`
//! of 6.12) and `net/ipv4/udp.c` (`__udp_enqueue_schedule_skb`); TCP's flow control is
//! described from `net/ipv4/tcp.c` and `include/net/sock.h` as generally known, not
//! re-read line by line for this model:
//!
//! - `loopback_xmit` hands each skb to `__netif_rx`, which with RPS off queues it on the
//!   *sending* CPU's backlog (`enqueue_to_backlog(skb, smp_processor_id())`) and raises
//!   `NET_RX_SOFTIRQ`; the softirq runs when the sender re-enables bottom halves in its
//!   own send path, so the protocol's receive (`tcp_v4_rcv`, `__udp4_lib_rcv`) and the
//!   receiver's wakeup (`sock_def_readable` -> `wake_up_interruptible_sync_poll`, a
//!   sync wakeup) happen on the sending CPU, inside the sender's system call. The world
//!   charges that work and wakes the reader from there (`world/net.rs`).
//! - UDP: `loopback_xmit` orphans the skb, so the sender's buffer never fills and a
//!   sender never blocks; `__udp_enqueue_schedule_skb` drops a datagram when the
//!   receiver's `sk_rmem_alloc` already exceeds `sk_rcvbuf`, counting each datagram's
//!   truesize ([`udp_truesize`]).
//! - TCP: a sender waits (`sk_stream_wait_memory`) while the data it has in flight fills
//!   the peer's window; the reader's `recv` reopens it (`tcp_cleanup_rbuf` sends a window
//!   update whose processing, `tcp_ack` -> `sk_stream_write_space`, wakes the sender).
//!   fairsim keeps one bound per direction, the receiver's initial buffer
//!   (`tcp_rmem[1]`, [`TCP_RMEM_DEFAULT`]), on payload bytes, and wakes a waiting sender
//!   once half of it is free; segments are at most [`LOOPBACK_TCP_MSS`] bytes.
//!
//! Simplifications, each small next to a message's cost: a message is delivered whole at
//! the end of its send (the kernel delivers a message of several segments one segment at
//! a time, waking the reader at the first); pure ACKs of request/response traffic are
//! not sent (they ride on the responses); receive-buffer autotuning is not modelled; a
//! UDP close is seen by the peer's `recv` as the end (netserver's own test timer ends it
//! in netperf); and TCP does not coalesce small sends: the kernel only appends them to
//! the unsent tail of its write queue while the peer's window is closed (autocorking and
//! a full window), so fairsim's TCP_STREAM with messages far below a segment is slower
//! than the kernel's (the build host sends 64-byte messages on one CPU at 1.3 us each,
//! fairsim's model at 6 us).

use std::collections::VecDeque;

use crate::event::Tid;

/// `net.ipv4.tcp_rmem[1]`, a TCP socket's initial receive buffer (6.12 default, and what
/// netperf prints as the receive socket size).
pub const TCP_RMEM_DEFAULT: u64 = 131_072;
/// `net.ipv4.tcp_wmem[1]`, a TCP socket's initial send buffer.
pub const TCP_WMEM_DEFAULT: u64 = 16_384;
/// `net.core.rmem_default` = `wmem_default`, a UDP socket's buffers.
pub const UDP_MEM_DEFAULT: u64 = 212_992;
/// The MSS of a TCP connection over loopback (MTU 65536): `ss -ti` on the build host
/// shows `mss:65483` for netpingpong's connections.
pub const LOOPBACK_TCP_MSS: u64 = 65_483;

/// `SKB_TRUESIZE` of a UDP datagram of `len` payload bytes built by `__ip_append_data`
/// on loopback: the linear data (payload, UDP and IP headers, `LL_RESERVED_SPACE` of 16
/// bytes and `NET_SKB_PAD` of 64, cache-aligned) with `struct skb_shared_info` (320
/// bytes) rounded up to its kmalloc bucket (a power of two), plus `struct sk_buff` (232
/// bytes, aligned to 256). Datagrams above a page are built from page fragments; they are
/// charged their size rounded up to pages, plus the same heads.
pub fn udp_truesize(len: u64) -> u64 {
    let linear = (len + 8 + 20 + 16 + 64).next_multiple_of(64) + 320;
    let data = if linear <= 4096 {
        linear.next_power_of_two()
    } else {
        512 + len.next_multiple_of(4096)
    };
    data + 256
}

/// The transport of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetProto {
    /// TCP, a byte stream with flow control.
    Tcp,
    /// UDP, datagrams that may be dropped.
    Udp,
}

/// One message queued at a receiving socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetMsg {
    /// Payload bytes.
    pub len: u32,
    /// The response size the receiver is asked to send back (request/response tools).
    pub reply: u32,
    /// What the message counts against the receiver's buffer.
    pub charge: u64,
}

/// One direction of a connection: what one side sent and the other has not yet read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetDir {
    /// Messages queued at the receiver, oldest first.
    pub queue: VecDeque<NetMsg>,
    /// Their charge against `capacity`.
    pub queued: u64,
    /// The receiver's bound: TCP window bytes, UDP `sk_rcvbuf` in truesize.
    pub capacity: u64,
    /// The reader blocked on an empty queue.
    pub reader: Option<Tid>,
    /// The TCP writer blocked on a full window.
    pub writer: Option<Tid>,
    /// The sender has closed its end.
    pub closed: bool,
    /// Messages and bytes the sender's `send` calls returned for.
    pub sent: (u64, u64),
    /// Datagrams dropped at the receiver.
    pub dropped: u64,
    /// Messages and bytes the receiver has read.
    pub received: (u64, u64),
}

/// A connection between two sockets: side 0 (the client) and side 1 (the server).
/// Socket `2 * conn + side` sends on direction `side` and receives on `1 - side`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetConn {
    /// The transport.
    pub proto: NetProto,
    /// Direction 0 carries client-to-server messages, direction 1 the replies.
    pub dirs: [NetDir; 2],
}

impl NetConn {
    /// A connection with the default buffers of `proto`.
    pub fn new(proto: NetProto) -> NetConn {
        let capacity = match proto {
            NetProto::Tcp => TCP_RMEM_DEFAULT,
            NetProto::Udp => UDP_MEM_DEFAULT,
        };
        let dir = NetDir {
            capacity,
            ..NetDir::default()
        };
        NetConn {
            proto,
            dirs: [dir.clone(), dir],
        }
    }
}

/// What a send found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendOutcome {
    /// The message was queued at the receiver; wake this reader if one waits.
    Queued(Option<Tid>),
    /// A UDP datagram that did not fit the receiver's buffer.
    Dropped,
    /// A TCP sender must wait for window.
    Blocked,
}

/// What a receive found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecvOutcome {
    /// A message was taken; `wake` is a TCP writer whose window this read reopened.
    Got {
        /// The message.
        msg: NetMsg,
        /// A writer to wake.
        wake: Option<Tid>,
    },
    /// Nothing queued: the reader waits.
    Empty,
    /// Nothing queued and the peer has closed.
    Eof,
}

impl NetConn {
    /// `send` of `len` bytes (asking for a `reply`) by `t` on side `side`.
    pub fn send(&mut self, side: usize, t: Tid, len: u32, reply: u32) -> SendOutcome {
        let proto = self.proto;
        let d = &mut self.dirs[side & 1];
        let charge = match proto {
            NetProto::Tcp => u64::from(len),
            NetProto::Udp => udp_truesize(u64::from(len)),
        };
        match proto {
            NetProto::Tcp => {
                // A message larger than the whole window is let through an empty queue, as
                // the kernel's segments make progress whatever their size.
                if d.queued > 0 && d.queued + charge > d.capacity {
                    d.writer = Some(t);
                    return SendOutcome::Blocked;
                }
            }
            NetProto::Udp => {
                d.sent.0 += 1;
                d.sent.1 += u64::from(len);
                if d.queued > d.capacity {
                    d.dropped += 1;
                    return SendOutcome::Dropped;
                }
            }
        }
        if proto == NetProto::Tcp {
            d.sent.0 += 1;
            d.sent.1 += u64::from(len);
            if d.writer == Some(t) {
                d.writer = None;
            }
        }
        d.queue.push_back(NetMsg { len, reply, charge });
        d.queued += charge;
        SendOutcome::Queued(d.reader.take())
    }

    /// `recv` of one message by `t` on side `side`.
    pub fn recv(&mut self, side: usize, t: Tid) -> RecvOutcome {
        let d = &mut self.dirs[(side & 1) ^ 1];
        let Some(msg) = d.queue.pop_front() else {
            if d.closed {
                return RecvOutcome::Eof;
            }
            d.reader = Some(t);
            return RecvOutcome::Empty;
        };
        d.queued -= msg.charge;
        d.received.0 += 1;
        d.received.1 += u64::from(msg.len);
        if d.reader == Some(t) {
            d.reader = None;
        }
        // sk_stream_write_space: the writer is woken once the space it may use is at least
        // half of what is in flight, here once half the window is free.
        let wake = if d.queued * 2 <= d.capacity {
            d.writer.take()
        } else {
            None
        };
        RecvOutcome::Got { msg, wake }
    }

    /// `close` by side `side`: returns the peer's reader to wake, if it waits.
    pub fn close(&mut self, side: usize) -> Option<Tid> {
        let d = &mut self.dirs[side & 1];
        d.closed = true;
        d.reader.take()
    }
}

/// Per-task state of a network workload: the task's current exchange.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetTask {
    /// Request size of the current exchange.
    pub request: u32,
    /// Response size the current request asks for.
    pub response: u32,
    /// The response size the last message this task received asked for.
    pub last_reply: u32,
}

/// A network workload's sockets: its connections and its tasks' exchanges (empty for
/// workloads that use no socket).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetRt {
    /// Connections; socket `s` is side `s % 2` of connection `s / 2`.
    pub conns: Vec<NetConn>,
    /// Per task of the workload (index: task id less the workload's first task).
    pub tasks: Vec<NetTask>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_drops_only_past_the_receive_buffer() {
        let mut c = NetConn::new(NetProto::Udp);
        let per = udp_truesize(1024);
        let fit = UDP_MEM_DEFAULT / per + 1;
        for _ in 0..fit {
            assert_eq!(c.send(0, 1, 1024, 0), SendOutcome::Queued(None));
        }
        assert_eq!(c.send(0, 1, 1024, 0), SendOutcome::Dropped);
        assert_eq!(c.dirs[0].sent.0, fit + 1);
        assert_eq!(c.dirs[0].dropped, 1);
        assert!(matches!(c.recv(1, 2), RecvOutcome::Got { .. }));
        assert_eq!(c.dirs[0].received, (1, 1024));
    }

    #[test]
    fn tcp_blocks_on_a_full_window_and_the_reader_reopens_it() {
        let mut c = NetConn::new(NetProto::Tcp);
        let m = 16_384;
        for _ in 0..TCP_RMEM_DEFAULT / m {
            assert_eq!(c.send(0, 1, m as u32, 0), SendOutcome::Queued(None));
        }
        assert_eq!(c.send(0, 1, m as u32, 0), SendOutcome::Blocked);
        // Reads that leave the window more than half full wake nobody; the one that
        // frees half of it wakes the writer.
        for _ in 0..3 {
            assert!(matches!(c.recv(1, 2), RecvOutcome::Got { wake: None, .. }));
        }
        assert!(matches!(
            c.recv(1, 2),
            RecvOutcome::Got { wake: Some(1), .. }
        ));
        assert_eq!(c.dirs[0].queued, 4 * m);
        assert_eq!(c.dirs[0].writer, None);
    }

    #[test]
    fn a_reader_waits_then_sees_the_close() {
        let mut c = NetConn::new(NetProto::Tcp);
        assert_eq!(c.recv(1, 7), RecvOutcome::Empty);
        assert_eq!(c.send(0, 3, 10, 20), SendOutcome::Queued(Some(7)));
        assert!(matches!(c.recv(1, 7), RecvOutcome::Got { msg, .. } if msg.reply == 20));
        assert_eq!(c.recv(1, 7), RecvOutcome::Empty);
        assert_eq!(c.close(0), Some(7));
        assert_eq!(c.recv(1, 7), RecvOutcome::Eof);
    }

    #[test]
    fn truesize_grows_with_the_datagram() {
        assert_eq!(udp_truesize(64), 512 + 256);
        assert!(udp_truesize(16_384) > 16_384);
        assert!(udp_truesize(1) <= udp_truesize(1024));
    }
}
