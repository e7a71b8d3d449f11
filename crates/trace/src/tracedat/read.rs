//! A reader of the version-6 `trace.dat` files [`super::write_trace_dat`] writes: the
//! header's parts and each CPU's events with their times, for tests and checks that the
//! file says what the trace holds. It reads what trace-cmd's readers read, in the same
//! order, and refuses anything else with a one-line message naming the part.

/// One event read back from a CPU's pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatEvent {
    /// Its time, ns (the page stamp plus the deltas and time extends before it).
    pub ts: u64,
    /// Its data (common header and fields), as long as its ring-buffer length.
    pub data: Vec<u8>,
}

impl DatEvent {
    /// `common_type`, the id of its format.
    pub fn id(&self) -> u16 {
        u16::from_le_bytes([self.data[0], self.data[1]])
    }

    /// `common_pid`.
    pub fn pid(&self) -> i32 {
        i32::from_le_bytes(self.data[4..8].try_into().unwrap_or([0; 4]))
    }
}

/// A `trace.dat` read back.
#[derive(Debug, Clone, Default)]
pub struct DatFile {
    /// The page size.
    pub page_size: u32,
    /// `header_page`'s text.
    pub header_page: String,
    /// `header_event`'s text.
    pub header_event: String,
    /// Each system's name with its events' `format` texts.
    pub systems: Vec<(String, Vec<String>)>,
    /// `saved_cmdlines`.
    pub cmdlines: String,
    /// The CPU count.
    pub cpus: u32,
    /// The options, id and data.
    pub options: Vec<(u16, Vec<u8>)>,
    /// Each CPU's file offset and size.
    pub cpu_data: Vec<(u64, u64)>,
    /// Each CPU's events in order.
    pub events: Vec<Vec<DatEvent>>,
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len());
        let Some(end) = end else {
            return Err(format!(
                "trace.dat: {what}: the file ends at byte {}",
                self.b.len()
            ));
        };
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u16(&mut self, what: &str) -> Result<u16, String> {
        Ok(u16::from_le_bytes(
            self.take(2, what)?.try_into().unwrap_or([0; 2]),
        ))
    }
    fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().unwrap_or([0; 4]),
        ))
    }
    fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8, what)?.try_into().unwrap_or([0; 8]),
        ))
    }
    fn expect(&mut self, lit: &[u8], what: &str) -> Result<(), String> {
        if self.take(lit.len(), what)? != lit {
            return Err(format!(
                "trace.dat: {what}: expected {:?}",
                String::from_utf8_lossy(lit)
            ));
        }
        Ok(())
    }
    fn text(&mut self, n: usize, what: &str) -> Result<String, String> {
        String::from_utf8(self.take(n, what)?.to_vec())
            .map_err(|_| format!("trace.dat: {what}: not UTF-8"))
    }
    fn sized8(&mut self, what: &str) -> Result<String, String> {
        let n = self.u64(what)?;
        self.text(n as usize, what)
    }
    fn cstr(&mut self, what: &str) -> Result<String, String> {
        let rest = &self.b[self.at.min(self.b.len())..];
        let Some(n) = rest.iter().position(|&c| c == 0) else {
            return Err(format!("trace.dat: {what}: no NUL"));
        };
        let s = self.text(n, what)?;
        self.at += 1;
        Ok(s)
    }
}

/// Reads a version-6, little-endian, 64-bit `trace.dat`.
pub fn read_trace_dat(bytes: &[u8]) -> Result<DatFile, String> {
    let mut c = Cursor { b: bytes, at: 0 };
    let mut f = DatFile::default();
    c.expect(super::MAGIC, "magic and version")?;
    c.expect(&[0, 8], "endianness and long size")?;
    f.page_size = c.u32("page size")?;
    c.expect(b"header_page\0", "header_page")?;
    f.header_page = c.sized8("header_page")?;
    c.expect(b"header_event\0", "header_event")?;
    f.header_event = c.sized8("header_event")?;
    for _ in 0..c.u32("ftrace events")? {
        c.sized8("ftrace event format")?;
    }
    for _ in 0..c.u32("event systems")? {
        let name = c.cstr("system name")?;
        let mut formats = Vec::new();
        for _ in 0..c.u32("system's events")? {
            formats.push(c.sized8("event format")?);
        }
        f.systems.push((name, formats));
    }
    let n = c.u32("kallsyms")?;
    c.take(n as usize, "kallsyms")?;
    let n = c.u32("printk formats")?;
    c.take(n as usize, "printk formats")?;
    f.cmdlines = c.sized8("saved_cmdlines")?;
    f.cpus = c.u32("CPU count")?;
    c.expect(b"options  \0", "options")?;
    loop {
        let id = c.u16("option id")?;
        if id == 0 {
            break;
        }
        let n = c.u32("option size")?;
        f.options.push((id, c.take(n as usize, "option")?.to_vec()));
    }
    c.expect(b"flyrecord\0", "flyrecord")?;
    for _ in 0..f.cpus {
        f.cpu_data
            .push((c.u64("CPU data offset")?, c.u64("CPU data size")?));
    }
    for &(off, size) in &f.cpu_data {
        let (off, size) = (off as usize, size as usize);
        let Some(data) = bytes.get(off..off.saturating_add(size)) else {
            return Err(format!(
                "trace.dat: CPU data at {off}+{size}: past the file's end"
            ));
        };
        f.events.push(read_pages(data, f.page_size as usize)?);
    }
    Ok(f)
}

/// Decodes one CPU's pages.
fn read_pages(data: &[u8], page_size: usize) -> Result<Vec<DatEvent>, String> {
    use super::ring::{
        MAX_TYPE_LEN_DATA, PAGE_HEADER, TS_SHIFT, TYPE_PADDING, TYPE_TIME_EXTEND, TYPE_TIME_STAMP,
    };
    let mut out = Vec::new();
    if page_size <= PAGE_HEADER || data.len() % page_size != 0 {
        return Err(format!(
            "trace.dat: CPU data of {} bytes: not whole pages",
            data.len()
        ));
    }
    for page in data.chunks(page_size) {
        let mut c = Cursor { b: page, at: 0 };
        let mut ts = c.u64("page time stamp")?;
        let commit = c.u64("page commit")? as usize;
        if commit > page_size - PAGE_HEADER {
            return Err(format!(
                "trace.dat: page commit {commit}: more than the page holds"
            ));
        }
        let end = PAGE_HEADER + commit;
        while c.at < end {
            let h = c.u32("event header")?;
            let type_len = h & 31;
            let delta = u64::from(h >> 5);
            match type_len {
                TYPE_TIME_EXTEND => {
                    ts += delta + (u64::from(c.u32("time extend")?) << TS_SHIFT);
                }
                TYPE_PADDING | TYPE_TIME_STAMP => {
                    return Err(format!("trace.dat: event type {type_len}: never written"));
                }
                _ => {
                    ts += delta;
                    let len = if type_len == 0 {
                        (c.u32("event length")? as usize)
                            .checked_sub(4)
                            .ok_or("trace.dat: event length below 4")?
                    } else {
                        debug_assert!(type_len <= MAX_TYPE_LEN_DATA);
                        type_len as usize * 4
                    };
                    let data = c.take(len, "event data")?.to_vec();
                    if data.len() < 8 {
                        return Err("trace.dat: an event shorter than its common header".into());
                    }
                    out.push(DatEvent { ts, data });
                }
            }
        }
        if c.at != end {
            return Err("trace.dat: the last event runs past its page's commit".into());
        }
    }
    Ok(out)
}
