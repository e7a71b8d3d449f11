//! One CPU's ring-buffer pages as `trace-cmd record` copies them out of the kernel
//! (kernel/trace/ring_buffer.c of 6.12, and its `header_page`/`header_event` files).
//!
//! A page is [`PAGE_SIZE`] bytes: the page header (`struct buffer_data_page`: `u64
//! time_stamp`, the page's base time; `local_t commit`, 8 bytes on a 64-bit kernel, the
//! bytes of events on the page), then the events, then zeros. Each event starts with a
//! 32-bit header, `type_len` in its low 5 bits and `time_delta` (ns since the previous
//! event on the page, or since the page's time stamp for the first) in its high 27:
//!
//! - `type_len` 1 to 28: a data event of `type_len * 4` bytes following the header;
//! - `type_len` 0: a data event whose length follows in `array[0]` (the data's length,
//!   rounded up to 4, plus the 4 bytes of `array[0]` itself), for data longer than
//!   112 bytes;
//! - `type_len` 30 (`RINGBUF_TYPE_TIME_EXTEND`): a delta too large for 27 bits, its low
//!   27 bits in `time_delta` and the rest in `array[0]`; the event it belongs to follows
//!   with a delta of 0.
//!
//! Padding (29) and absolute time stamps (31) are never written: a page ends where its
//! `commit` says and a new page starts with the next event's time as its stamp.

/// The page size trace.dat declares (`getpagesize()` on the recording machine).
pub(crate) const PAGE_SIZE: usize = 4096;
/// The page header: `time_stamp` and `commit`.
pub(crate) const PAGE_HEADER: usize = 16;
/// Bytes of events one page holds (`BUF_PAGE_SIZE`, the `data` field's size).
pub(crate) const PAGE_DATA: usize = PAGE_SIZE - PAGE_HEADER;
/// The largest `type_len` of a data event whose length it encodes.
pub(crate) const MAX_TYPE_LEN_DATA: u32 = 28;
/// `RINGBUF_TYPE_PADDING`.
pub(crate) const TYPE_PADDING: u32 = 29;
/// `RINGBUF_TYPE_TIME_EXTEND`.
pub(crate) const TYPE_TIME_EXTEND: u32 = 30;
/// `RINGBUF_TYPE_TIME_STAMP`.
pub(crate) const TYPE_TIME_STAMP: u32 = 31;
/// Bits of `time_delta` in an event header.
pub(crate) const TS_SHIFT: u32 = 27;

/// One CPU's pages being filled in time order.
#[derive(Debug, Default)]
pub(crate) struct CpuPages {
    /// Whole pages, the last one open.
    bytes: Vec<u8>,
    /// Event bytes on the open page (its `commit`).
    used: usize,
    /// Time of the last event written, ns.
    last_ts: u64,
    /// Events written.
    events: u64,
}

impl CpuPages {
    /// The pages so far, the open one closed: a multiple of [`PAGE_SIZE`] bytes.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        self.close_page();
        self.bytes
    }

    /// The number of events written.
    pub(crate) fn events(&self) -> u64 {
        self.events
    }

    fn close_page(&mut self) {
        if self.bytes.is_empty() {
            return;
        }
        let start = self.bytes.len() - PAGE_SIZE;
        self.bytes[start + 8..start + 16].copy_from_slice(&(self.used as u64).to_le_bytes());
    }

    fn open_page(&mut self, ts: u64) {
        self.close_page();
        let start = self.bytes.len();
        self.bytes.resize(start + PAGE_SIZE, 0);
        self.bytes[start..start + 8].copy_from_slice(&ts.to_le_bytes());
        self.used = 0;
        self.last_ts = ts;
    }

    fn put_u32(&mut self, v: u32) {
        let at = self.bytes.len() - PAGE_SIZE + PAGE_HEADER + self.used;
        self.bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
        self.used += 4;
    }

    /// Appends one event at `ts` (not before the previous one) with `data` (the record:
    /// common header and fields).
    pub(crate) fn push(&mut self, ts: u64, data: &[u8]) {
        let len4 = data.len().div_ceil(4) * 4;
        let small = len4 <= (MAX_TYPE_LEN_DATA as usize) * 4 && len4 > 0;
        let event_len = if small { 4 + len4 } else { 8 + len4 };
        let ts = ts.max(self.last_ts);
        let delta = ts - self.last_ts;
        let extend = delta >> TS_SHIFT != 0;
        let need = event_len + if extend { 8 } else { 0 };
        if self.bytes.is_empty() || self.used + need > PAGE_DATA {
            self.open_page(ts);
        }
        let mut delta = ts - self.last_ts;
        if delta >> TS_SHIFT != 0 {
            // A time extend: its header holds the low bits, array[0] the high ones.
            let low = (delta & ((1 << TS_SHIFT) - 1)) as u32;
            self.put_u32(TYPE_TIME_EXTEND | (low << 5));
            self.put_u32((delta >> TS_SHIFT) as u32);
            delta = 0;
        }
        let delta = delta as u32;
        if small {
            self.put_u32((len4 / 4) as u32 | (delta << 5));
        } else {
            self.put_u32(delta << 5);
            self.put_u32((len4 + 4) as u32);
        }
        let at = self.bytes.len() - PAGE_SIZE + PAGE_HEADER + self.used;
        self.bytes[at..at + data.len()].copy_from_slice(data);
        self.used += len4;
        self.last_ts = ts;
        self.events += 1;
    }
}
