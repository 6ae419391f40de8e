//! The canonical encoding's primitives (all little-endian): fixed-width
//! integers, `f64` as its bits, length-prefixed bytes and strings, options
//! and lists ([`Encoder`]), and their bounds-checked reader ([`Decoder`]).

use crate::label::{Label, LabelList, LabelSet};

/// Appends canonical primitives to a buffer.
#[derive(Debug, Default)]
pub(crate) struct Encoder {
    /// The bytes written so far.
    pub buf: Vec<u8>,
}

impl Encoder {
    /// A fresh encoder with some capacity.
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self { buf: Vec::with_capacity(n) }
    }
    /// Appends one byte.
    pub(crate) fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    /// Appends a little-endian `u32`.
    pub(crate) fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// Appends a little-endian `u64`.
    pub(crate) fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    /// Appends an `f64` as its IEEE-754 bits (little-endian `u64`).
    pub(crate) fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    /// Appends a `u32` length, then the bytes.
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.buf.extend_from_slice(b);
    }
    /// Appends a string as length-prefixed UTF-8 bytes.
    pub(crate) fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    /// Appends `0`, or `1` and the string.
    pub(crate) fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.u8(1);
                self.str(s);
            }
            None => self.u8(0),
        }
    }
    /// Appends a `u32` count, then each string.
    pub(crate) fn str_list<S: AsRef<str>>(&mut self, items: &[S]) {
        self.u32(items.len() as u32);
        for s in items {
            self.str(s.as_ref());
        }
    }
}

/// Reads canonical primitives; every read is bounds-checked.
#[derive(Debug)]
pub(crate) struct Decoder<'a> {
    data: &'a [u8],
    /// Offset of the next byte to read.
    pub(crate) pos: usize,
}

/// Why a canonical body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed record at byte {offset}: {what}")]
pub struct DecodeError {
    /// Offset inside the body.
    pub offset: usize,
    /// What was wrong.
    pub what: String,
}

impl<'a> Decoder<'a> {
    /// A decoder at the start of `data`.
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }
    pub(super) fn err(&self, what: impl Into<String>) -> DecodeError {
        DecodeError { offset: self.pos, what: what.into() }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.data.len() - self.pos < n {
            return Err(self.err(format!("needs {n} more bytes")));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    /// Reads one byte.
    pub(crate) fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    /// Reads a little-endian `u32`.
    pub(crate) fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    /// Reads a little-endian `u64`.
    pub(crate) fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    /// Reads an `f64` from its IEEE-754 bits.
    pub(crate) fn f64(&mut self) -> Result<f64, DecodeError> {
        Ok(f64::from_bits(self.u64()?))
    }
    /// Reads a `u32` length, then that many bytes (borrowed).
    pub(crate) fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    /// Reads a length-prefixed UTF-8 string.
    pub(crate) fn str(&mut self) -> Result<String, DecodeError> {
        self.str_ref().map(str::to_owned)
    }
    /// A string borrowed from the input (no allocation).
    pub(crate) fn str_ref(&mut self) -> Result<&'a str, DecodeError> {
        let b = self.bytes()?;
        std::str::from_utf8(b).map_err(|_| self.err("string is not UTF-8"))
    }
    pub(super) fn present(&mut self) -> Result<bool, DecodeError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            t => Err(self.err(format!("bad option tag {t}"))),
        }
    }
    /// Reads `0`, or `1` and length-prefixed bytes.
    pub(crate) fn opt_bytes(&mut self) -> Result<Option<Vec<u8>>, DecodeError> {
        Ok(if self.present()? { Some(self.bytes()?.to_vec()) } else { None })
    }
    /// Reads a string naming a value of a wire enum, spelled exactly as it
    /// is written (callers may use looser spellings; stored bytes may not,
    /// so a body always means what it re-encodes to).
    pub(crate) fn named<T: std::str::FromStr<Err = crate::thought::UnknownName> + crate::named_enum::WireName>(&mut self) -> Result<T, DecodeError> {
        let s = self.str_ref()?;
        let value: T = s.parse().map_err(|e: crate::thought::UnknownName| self.err(e.to_string()))?;
        if value.wire_name() != s {
            return Err(self.err(format!("'{}' is not spelled as stored values are ('{}')", crate::text::truncate_chars(s, 64), value.wire_name())));
        }
        Ok(value)
    }
    /// Reads `0`, or `1` and a string.
    pub(crate) fn opt_str(&mut self) -> Result<Option<String>, DecodeError> {
        Ok(if self.present()? { Some(self.str()?) } else { None })
    }
    pub(super) fn count(&mut self, min_item_bytes: usize) -> Result<usize, DecodeError> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_item_bytes) > self.data.len() - self.pos {
            return Err(self.err(format!("list of {n} items does not fit")));
        }
        Ok(n)
    }
    /// A string as a [`Label`], shared through `labels` when given.
    pub(crate) fn label(&mut self, labels: Option<&mut LabelSet>) -> Result<Label, DecodeError> {
        self.str_ref().map(|s| match labels {
            Some(set) => set.intern(s),
            None => Label::from(s),
        })
    }
    /// A list of strings as a [`LabelList`], it and its labels shared
    /// through `labels` when given.
    pub(crate) fn label_list(&mut self, mut labels: Option<&mut LabelSet>) -> Result<LabelList, DecodeError> {
        let n = self.count(4)?;
        let list = (0..n).map(|_| self.label(labels.as_deref_mut())).collect::<Result<Vec<_>, _>>()?;
        Ok(match labels {
            Some(set) => set.intern_list(list),
            None => LabelList::from(list),
        })
    }
    /// Bytes not read yet.
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }
}
