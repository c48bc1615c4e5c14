//! Large encodings kept in parts of bounded size: a snapshot of 100,000
//! objects or the plan of 100,000 changes is 40 to 50 MB of MessagePack. In
//! one vector that doubles as it grows, encoding it held up to twice that
//! at once, in one allocation the allocator hands back to the system only
//! whole; in parts it holds what it encodes.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// `value` as MessagePack with field names (`rmp_serde::to_vec_named`), in
/// parts of at most `part` bytes that put together are the same bytes.
pub fn encode_named<T: Serialize + ?Sized>(value: &T, part: usize) -> Vec<Vec<u8>> {
    let mut done = Vec::new();
    let mut w = Split::new(part, |p| {
        done.push(p);
        Ok(())
    });
    rmp_serde::encode::write_named(&mut w, value).expect("encoding into memory cannot fail");
    w.finish().expect("encoding into memory cannot fail");
    done
}

/// `value` as MessagePack with field names packed with LZ4, in one frame
/// with a checksum of its content: encoded straight into the packer, so
/// the unpacked encoding is never whole in memory. For what is stored
/// and can be large (state snapshots, a run's record with its plan).
pub fn pack_named<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let info = lz4_flex::frame::FrameInfo::new().content_checksum(true);
    let mut out = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
    rmp_serde::encode::write_named(&mut out, value).expect("encoding into memory cannot fail");
    out.finish().expect("packing into memory cannot fail")
}

/// Decodes what [`pack_named`] gave, or a plain MessagePack encoding (what
/// was stored before it was packed: an encoded map or list never starts
/// with the frame's magic number). A packed one is read to its end, so its
/// checksum is checked, and nothing may follow the value.
pub fn unpack_named<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, rmp_serde::decode::Error> {
    if !bytes.starts_with(&LZ4_FRAME_MAGIC) {
        return rmp_serde::from_slice(bytes);
    }
    let mut input = lz4_flex::frame::FrameDecoder::new(bytes);
    let value = T::deserialize(&mut rmp_serde::Deserializer::new(&mut input))?;
    let mut rest = Vec::new();
    std::io::Read::read_to_end(&mut input, &mut rest)
        .map_err(rmp_serde::decode::Error::InvalidDataRead)?;
    if !rest.is_empty() {
        return Err(rmp_serde::decode::Error::Syntax(format!(
            "{} bytes after the value",
            rest.len()
        )));
    }
    Ok(value)
}

/// An LZ4 frame's magic number, as a packed encoding starts.
const LZ4_FRAME_MAGIC: [u8; 4] = [0x04, 0x22, 0x4d, 0x18];

/// Decodes what [`encode_named`] gave, without putting the parts together.
pub fn decode<T: DeserializeOwned, P: AsRef<[u8]>>(
    parts: &[P],
) -> Result<T, rmp_serde::decode::Error> {
    rmp_serde::from_read(Reader {
        parts,
        at: 0,
        offset: 0,
    })
}

/// Cuts what is written to it into parts of at most `part` bytes and
/// hands each to `emit` as it fills (the last one at [`Split::finish`]),
/// so that an encoding is never whole in memory. The first part grows as
/// written (a small encoding takes little); the ones after it, of an
/// encoding known to be large, are allocated whole at once instead of
/// doubling.
pub struct Split<F: FnMut(Vec<u8>) -> std::io::Result<()>> {
    part: usize,
    current: Vec<u8>,
    emit: F,
    /// Bytes written so far.
    written: usize,
}

impl<F: FnMut(Vec<u8>) -> std::io::Result<()>> Split<F> {
    pub fn new(part: usize, emit: F) -> Split<F> {
        Split {
            part: part.max(1),
            current: Vec::new(),
            emit,
            written: 0,
        }
    }

    /// Hands over the last part (if anything is left); returns the bytes
    /// written in all.
    pub fn finish(mut self) -> std::io::Result<usize> {
        if !self.current.is_empty() {
            (self.emit)(std::mem::take(&mut self.current))?;
        }
        Ok(self.written)
    }
}

impl<F: FnMut(Vec<u8>) -> std::io::Result<()>> std::io::Write for Split<F> {
    fn write(&mut self, mut buf: &[u8]) -> std::io::Result<usize> {
        let n = buf.len();
        self.written += n;
        while !buf.is_empty() {
            if self.current.len() == self.part {
                (self.emit)(std::mem::take(&mut self.current))?;
                self.current.reserve_exact(self.part);
            }
            let take = buf.len().min(self.part - self.current.len());
            self.current.extend_from_slice(&buf[..take]);
            buf = &buf[take..];
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Reader<'a, P> {
    parts: &'a [P],
    at: usize,
    offset: usize,
}

impl<P: AsRef<[u8]>> std::io::Read for Reader<'_, P> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while let Some(part) = self.parts.get(self.at) {
            let rest = &part.as_ref()[self.offset..];
            if rest.is_empty() {
                self.at += 1;
                self.offset = 0;
                continue;
            }
            let n = rest.len().min(buf.len());
            buf[..n].copy_from_slice(&rest[..n]);
            self.offset += n;
            return Ok(n);
        }
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn parts_are_the_whole_encoding_and_decode_to_the_value() {
        let value: BTreeMap<String, Vec<u64>> = (0..200)
            .map(|i| (format!("key-{i}"), (0..i).collect()))
            .collect();
        let whole = rmp_serde::to_vec_named(&value).unwrap();
        for part in [1, 3, 100, 1 << 20] {
            let parts = encode_named(&value, part);
            assert!(parts.iter().all(|p| !p.is_empty() && p.len() <= part));
            assert_eq!(parts.concat(), whole, "parts of {part} bytes");
            let back: BTreeMap<String, Vec<u64>> = decode(&parts).unwrap();
            assert_eq!(back, value);
        }
    }
}
