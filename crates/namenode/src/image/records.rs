//! The bytes inside image sections: a bounds-checked reader (image bytes
//! come from disk and are treated as hostile: no indexing, no unchecked
//! length, no allocation bigger than what is left to read), varint and
//! string writers, and the inode record every `INODES` chunk is made of.
//!
//! An inode record: kind (0 directory, 1 file, 2 file open for writing),
//! id, name, permission, owner and group (indexes into the name table),
//! mtime, atime as varints; a file adds replication, block size, the
//! block count and each block's id, generation stamp and length; an open
//! file adds its writer's client name and machine and, when a truncate
//! waits for its block recovery, that recovery's block.

use prost::encoding::{decode_varint, encode_varint};

use crate::namespace::bulk_load::{FileRecord, InodeRecord, InodeView, OpenRecord};
use crate::namespace::{BlockId, BlockRecord, GenStamp, INodeId};

const KIND_DIR: u8 = 0;
const KIND_FILE: u8 = 1;
const KIND_OPEN_FILE: u8 = 2;

/// Smallest encoding of a block (three one-byte varints): bounds a block
/// count against the bytes left before allocating.
const MIN_BLOCK_BYTES: usize = 3;

/// Reads one section's bytes; errors carry the offset within the section.
pub(super) struct Reader<'a> {
    rest: &'a [u8],
    len: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn new(data: &'a [u8]) -> Self {
        Self {
            rest: data,
            len: data.len(),
        }
    }

    /// Bytes read so far.
    pub(super) fn pos(&self) -> usize {
        self.len - self.rest.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    fn err(&self, what: &str) -> String {
        format!("byte {} of the section: {what}", self.pos())
    }

    pub(super) fn u8(&mut self) -> Result<u8, String> {
        let (first, rest) = self
            .rest
            .split_first()
            .ok_or_else(|| self.err("truncated"))?;
        self.rest = rest;
        Ok(*first)
    }

    pub(super) fn varint(&mut self) -> Result<u64, String> {
        decode_varint(&mut self.rest).map_err(|_| self.err("bad varint"))
    }

    pub(super) fn u32(&mut self) -> Result<u32, String> {
        let v = self.varint()?;
        u32::try_from(v).map_err(|_| self.err(&format!("{v} too large")))
    }

    pub(super) fn u16(&mut self) -> Result<u16, String> {
        let v = self.varint()?;
        u16::try_from(v).map_err(|_| self.err(&format!("{v} too large")))
    }

    /// A count of items of at least `min_bytes` each: never more than
    /// the bytes left could hold.
    pub(super) fn count(&mut self, min_bytes: usize) -> Result<usize, String> {
        let v = self.varint()?;
        let n = usize::try_from(v).map_err(|_| self.err("count too large"))?;
        if n > self.rest.len() / min_bytes.max(1) {
            return Err(self.err(&format!("count {n} exceeds the bytes left")));
        }
        Ok(n)
    }

    pub(super) fn i64_be(&mut self) -> Result<i64, String> {
        let b = self.bytes(8)?;
        let arr: [u8; 8] = b.try_into().map_err(|_| self.err("truncated"))?;
        Ok(i64::from_be_bytes(arr))
    }

    pub(super) fn bytes(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.rest.len() {
            return Err(self.err(&format!("{n} bytes wanted, {} left", self.rest.len())));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    pub(super) fn str(&mut self) -> Result<&'a str, String> {
        let n = self.count(1)?;
        let b = self.bytes(n)?;
        std::str::from_utf8(b).map_err(|_| self.err("name not UTF-8"))
    }

    fn block(&mut self) -> Result<BlockRecord, String> {
        Ok(BlockRecord {
            id: BlockId(self.varint()?),
            gs: GenStamp(self.varint()?),
            num_bytes: self.varint()?,
        })
    }

    /// One inode record.
    pub(super) fn inode(&mut self) -> Result<InodeRecord<'a>, String> {
        let kind = self.u8()?;
        let id = INodeId(self.varint()?);
        let name = self.str()?;
        let permission = self.u16()?;
        let (owner, group) = (self.u32()?, self.u32()?);
        let (mtime_ms, atime_ms) = (self.varint()?, self.varint()?);
        let file = match kind {
            KIND_DIR => None,
            KIND_FILE | KIND_OPEN_FILE => {
                let replication = self.u16()?;
                let block_size = self.varint()?;
                let n = self.count(MIN_BLOCK_BYTES)?;
                let mut blocks = Vec::with_capacity(n);
                for _ in 0..n {
                    blocks.push(self.block()?);
                }
                let under_construction = if kind == KIND_OPEN_FILE {
                    let client_name = self.str()?;
                    let client_machine = self.str()?;
                    let truncate_block = match self.u8()? {
                        0 => None,
                        1 => Some(self.block()?),
                        other => return Err(self.err(&format!("bad truncate flag {other}"))),
                    };
                    Some(OpenRecord {
                        client_name,
                        client_machine,
                        truncate_block,
                    })
                } else {
                    None
                };
                Some(FileRecord {
                    replication,
                    block_size,
                    blocks,
                    under_construction,
                })
            }
            other => return Err(self.err(&format!("inode {id}: unknown kind {other}"))),
        };
        Ok(InodeRecord {
            id,
            name,
            permission,
            owner,
            group,
            mtime_ms,
            atime_ms,
            file,
        })
    }
}

pub(super) fn put_varint(out: &mut Vec<u8>, v: u64) {
    encode_varint(v, out);
}

pub(super) fn put_str(out: &mut Vec<u8>, s: &str) {
    put_varint(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn put_block(out: &mut Vec<u8>, b: &BlockRecord) {
    put_varint(out, b.id.0);
    put_varint(out, b.gs.0);
    put_varint(out, b.num_bytes);
}

/// Appends one inode record.
pub(super) fn put_inode(out: &mut Vec<u8>, v: &InodeView<'_>) {
    let kind = match v.file {
        None => KIND_DIR,
        Some(f) if f.under_construction.is_some() => KIND_OPEN_FILE,
        Some(_) => KIND_FILE,
    };
    out.push(kind);
    put_varint(out, v.id.0);
    put_str(out, v.name);
    put_varint(out, u64::from(v.permission));
    put_varint(out, u64::from(v.owner));
    put_varint(out, u64::from(v.group));
    put_varint(out, v.mtime_ms);
    put_varint(out, v.atime_ms);
    let Some(f) = v.file else { return };
    put_varint(out, u64::from(f.replication));
    put_varint(out, f.block_size);
    put_varint(out, f.blocks.len() as u64);
    for b in f.blocks {
        put_block(out, b);
    }
    if let Some(uc) = f.under_construction {
        put_str(out, uc.client_name());
        put_str(out, uc.client_machine());
        match &uc.truncate_block() {
            None => out.push(0),
            Some(b) => {
                out.push(1);
                put_block(out, b);
            }
        }
    }
}
