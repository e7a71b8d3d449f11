//! A minimal protocol buffers encoder: the few wire types the Perfetto writer needs.
//!
//! Written by hand from the encoding rules of the protobuf language guide ("Encoding":
//! base-128 varints, field keys `(field << 3) | wire_type`, length-delimited nested
//! messages) so that the crate takes no new dependency. Only what the trace writer uses is
//! here: varints (`int32`, `int64`, `uint32`, `uint64`, `bool`, `enum` fields),
//! length-delimited strings and nested messages, and packed repeated varint fields (one
//! length-delimited field whose payload is the values' varints back to back). `sint*`
//! (zigzag) and fixed-width fields are not needed and not provided.
//!
//! A nested message is written in place: its body goes to the end of the buffer and its
//! length prefix is inserted in front of it afterwards, so one buffer serves a whole
//! packet however deep the nesting.

/// Wire type of varint-encoded fields.
pub const WIRE_VARINT: u8 = 0;
/// Wire type of length-delimited fields (strings, bytes, nested messages).
pub const WIRE_LEN: u8 = 2;

/// Appends `v` as a base-128 varint, least significant group first.
pub fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        // The low seven bits with the continuation bit set; truncation is the point.
        buf.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// The number of bytes `put_varint` writes for `v`.
pub fn varint_len(v: u64) -> usize {
    let bits = 64 - (v | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// A growing encoded message.
#[derive(Debug, Default, Clone)]
pub struct ProtoBuf {
    buf: Vec<u8>,
}

impl ProtoBuf {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// The bytes written so far.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Number of bytes written so far.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Whether nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Forgets the contents, keeping the allocation for the next message.
    pub fn clear(&mut self) {
        self.buf.clear();
    }

    /// Writes a field key.
    pub fn tag(&mut self, field: u32, wire: u8) {
        put_varint(&mut self.buf, (u64::from(field) << 3) | u64::from(wire));
    }

    /// Writes an unsigned varint field (`uint32`, `uint64`, `enum`).
    pub fn uint(&mut self, field: u32, v: u64) {
        self.tag(field, WIRE_VARINT);
        put_varint(&mut self.buf, v);
    }

    /// Writes a signed `int32`/`int64` field: two's complement, so a negative value takes
    /// ten bytes, as protobuf specifies for these types.
    pub fn int(&mut self, field: u32, v: i64) {
        // The reinterpretation as u64 is the wire format of int32/int64.
        self.uint(field, v as u64);
    }

    /// Writes a `bool` field.
    pub fn boolean(&mut self, field: u32, v: bool) {
        self.uint(field, u64::from(v));
    }

    /// Writes a `string` or `bytes` field.
    pub fn bytes_field(&mut self, field: u32, v: &[u8]) {
        self.tag(field, WIRE_LEN);
        put_varint(&mut self.buf, v.len() as u64);
        self.buf.extend_from_slice(v);
    }

    /// Writes a `string` field.
    pub fn string(&mut self, field: u32, v: &str) {
        self.bytes_field(field, v.as_bytes());
    }

    /// Writes a packed repeated varint field (`[packed = true]` `uint64`, `int64`, `int32`,
    /// `uint32`; a negative `int32`/`int64` is passed as its two's complement `u64`, as
    /// [`ProtoBuf::int`] writes it). Nothing is written for no values: a packed field with
    /// an empty payload would decode the same, but costs two bytes.
    pub fn packed_varints(&mut self, field: u32, values: &[u64]) {
        if values.is_empty() {
            return;
        }
        self.tag(field, WIRE_LEN);
        let len: usize = values.iter().map(|&v| varint_len(v)).sum();
        put_varint(&mut self.buf, len as u64);
        for &v in values {
            put_varint(&mut self.buf, v);
        }
    }

    /// Writes a nested message whose body `body` encodes.
    pub fn message(&mut self, field: u32, body: impl FnOnce(&mut ProtoBuf)) {
        self.tag(field, WIRE_LEN);
        let start = self.buf.len();
        body(self);
        let len = (self.buf.len() - start) as u64;
        let mut prefix = Vec::with_capacity(varint_len(len));
        put_varint(&mut prefix, len);
        // Inserting the prefix shifts the body once per nesting level; packets are small
        // (a bundle is at most about a thousand events), so this stays linear in practice.
        self.buf.splice(start..start, prefix);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_varints_match_the_encoding_guide() {
        let mut b = Vec::new();
        put_varint(&mut b, 150);
        assert_eq!(b, [0x96, 0x01]);
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(b.len(), varint_len(v), "{v}");
        }
    }

    #[test]
    fn trace_nested_messages_are_length_prefixed() {
        let mut p = ProtoBuf::new();
        p.message(1, |m| {
            m.uint(2, 150);
            m.string(3, "ab");
        });
        assert_eq!(p.bytes(), [0x0a, 7, 0x10, 0x96, 0x01, 0x1a, 2, b'a', b'b']);
        let mut q = ProtoBuf::new();
        q.int(1, -1);
        assert_eq!(q.len(), 11);
    }

    #[test]
    fn trace_packed_fields_hold_their_varints_back_to_back() {
        let mut p = ProtoBuf::new();
        p.packed_varints(4, &[3, 270, 86942]);
        // The example of the encoding guide's "Packed Repeated Fields".
        assert_eq!(p.bytes(), [0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05]);
        let mut q = ProtoBuf::new();
        q.packed_varints(4, &[]);
        assert!(q.is_empty());
    }
}
