//! Where a format-2 image's bytes come from, and its section table. An
//! image in memory is sliced; an image on disk is read section by
//! section, each `INODES` chunk by the thread that decodes it, so reading
//! the file overlaps decoding and linking instead of preceding them.

use std::borrow::Cow;
use std::path::Path;

use cairn_common::disk::Disk;

use super::{Kind, FIXED_HEADER_LEN, MAX_SECTIONS, TABLE_ENTRY_LEN};

/// The bytes of one image.
#[derive(Clone, Copy)]
pub(super) enum Source<'a> {
    Memory(&'a [u8]),
    File {
        disk: &'a dyn Disk,
        path: &'a Path,
        len: u64,
    },
}

impl<'a> Source<'a> {
    pub(super) fn len(&self) -> u64 {
        match self {
            Source::Memory(data) => data.len() as u64,
            Source::File { len, .. } => *len,
        }
    }

    /// `len` bytes from `offset`; `None` past the end.
    pub(super) fn bytes(&self, offset: usize, len: usize) -> Result<Option<Cow<'a, [u8]>>, String> {
        let end = offset.checked_add(len);
        match *self {
            Source::Memory(data) => Ok(end.and_then(|e| data.get(offset..e)).map(Cow::Borrowed)),
            Source::File {
                disk,
                path,
                len: file_len,
            } => {
                if end.is_none_or(|e| e as u64 > file_len) {
                    return Ok(None);
                }
                disk.read_at(path, offset as u64, len)
                    .map(|b| Some(Cow::Owned(b)))
                    .map_err(|e| format!("reading {}: {e}", path.display()))
            }
        }
    }
}

/// One section found in the table.
#[derive(Debug, Clone, Copy)]
pub(super) struct Section {
    pub(super) index: usize,
    pub(super) kind: Kind,
    pub(super) offset: usize,
    pub(super) len: usize,
    pub(super) crc: u32,
}

impl Section {
    pub(super) fn where_(&self) -> String {
        format!(
            "section {} ({}) at offset {}, {} bytes",
            self.index,
            self.kind.name(),
            self.offset,
            self.len
        )
    }

    /// Its bytes from `src`, once their checksum is right.
    pub(super) fn load<'a>(&self, src: &Source<'a>) -> Result<Cow<'a, [u8]>, String> {
        let bytes = src
            .bytes(self.offset, self.len)
            .map_err(|e| self.fail(e))?
            .ok_or_else(|| self.fail("runs past the end of the file".into()))?;
        if crc32c::crc32c(&bytes) != self.crc {
            return Err(format!("{}: checksum mismatch", self.where_()));
        }
        Ok(bytes)
    }

    pub(super) fn fail(&self, why: String) -> String {
        format!("{}: {why}", self.where_())
    }
}

pub(super) fn be_u32(data: &[u8], at: usize) -> Option<u32> {
    let b: [u8; 4] = data.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_be_bytes(b))
}

pub(super) fn be_u64(data: &[u8], at: usize) -> Option<u64> {
    let b: [u8; 8] = data.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_be_bytes(b))
}

/// The header and section table of a format-2 image (checksum verified),
/// and its sections, each checked to lie inside the file.
pub(super) fn header_and_sections<'a>(
    src: &Source<'a>,
) -> Result<(Cow<'a, [u8]>, Vec<Section>), String> {
    let truncated = || "image header truncated".to_string();
    let fixed = src.bytes(0, FIXED_HEADER_LEN)?.ok_or_else(truncated)?;
    let count = be_u32(&fixed, FIXED_HEADER_LEN - 4).ok_or_else(truncated)?;
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    if count > MAX_SECTIONS {
        return Err(format!("image header: {count} sections"));
    }
    let table_end = FIXED_HEADER_LEN + TABLE_ENTRY_LEN * count;
    let file_len = src.len();
    let head = src.bytes(0, table_end + 4)?.ok_or_else(|| {
        format!(
            "image header truncated: {file_len} bytes, the section table needs {}",
            table_end + 4
        )
    })?;
    let stored = be_u32(&head, table_end).ok_or_else(truncated)?;
    if crc32c::crc32c(head.get(..table_end).unwrap_or_default()) != stored {
        return Err("image header checksum mismatch".into());
    }
    let mut out = Vec::with_capacity(count);
    for index in 0..count {
        let at = FIXED_HEADER_LEN + TABLE_ENTRY_LEN * index;
        let (Some(kind), Some(crc), Some(offset), Some(len)) = (
            be_u32(&head, at),
            be_u32(&head, at + 4),
            be_u64(&head, at + 8),
            be_u64(&head, at + 16),
        ) else {
            return Err(format!("section table entry {index} truncated"));
        };
        let kind = Kind::from_u32(kind).ok_or_else(|| {
            format!("section {index} at offset {offset}: unknown section kind {kind}")
        })?;
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(len).ok())
            .filter(|(o, l)| o.checked_add(*l).is_some_and(|e| e as u64 <= file_len));
        let Some((offset, len)) = range else {
            return Err(format!(
                "section {index} ({}) at offset {offset}, {len} bytes: runs past the end of the file ({file_len} bytes)",
                kind.name(),
            ));
        };
        out.push(Section {
            index,
            kind,
            offset,
            len,
            crc,
        });
    }
    for k in [Kind::Names, Kind::Root, Kind::Extras, Kind::Quotas] {
        let n = out.iter().filter(|s| s.kind == k).count();
        if n != 1 {
            return Err(format!("image has {n} {} sections, wants 1", k.name()));
        }
    }
    Ok((head, out))
}
