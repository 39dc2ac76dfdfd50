//! Checkpoint images (`fsimage_<txid>`), format 2: the namespace in
//! sections, each with its own length and CRC32C, laid out so that the
//! bulk of it (the inodes, in chunks) decodes on every core at once and
//! loads without replaying an edit per inode.
//!
//! ```text
//! header   "CAIRNIMG", format u32 = 2, txid, last inode id, last block id,
//!          last generation stamp (u64 each), section count u32
//! table    per section: kind u32, CRC32C u32, offset u64, length u64
//!          then a CRC32C of the header and table (all big-endian)
//! NAMES    the owner and group names the inodes index
//! ROOT     the root's inode record
//! INODES   (one or more chunks) groups of (directory id, child count,
//!          the children's inode records in name order), breadth first
//!          from the root, so a directory's record precedes its group
//! EXTRAS   journal records (their own CRCs too) for what inode records
//!          do not carry: xattrs, ACLs, storage policies, snapshots
//! QUOTAS   every directory quota with its limits and usage, exactly
//! ```
//!
//! Format 1 (the namespace as journal records, one CRC for the file) is
//! still read, so a NameNode upgraded in place starts from its old image
//! and writes format 2 from its first checkpoint on.

mod records;
mod v1;

use std::time::Instant;

use tracing::debug;

use crate::journal::codec::{decode_record, encode_record, Decoded};
use crate::namespace::bulk_load::BulkPart;
use crate::namespace::{
    DirQuota, Edit, GenStamp, INodeId, Limits, Namespace, QuotaCounts, ROOT_INODE_ID,
};
use records::{put_inode, put_str, put_varint, Reader};

pub(crate) const MAGIC: &[u8; 8] = b"CAIRNIMG";
/// The format this NameNode writes.
pub const FORMAT: u32 = 2;
/// Magic, format, txid, three counters, section count.
const FIXED_HEADER_LEN: usize = 8 + 4 + 8 * 4 + 4;
const TABLE_ENTRY_LEN: usize = 4 + 4 + 8 + 8;
/// More sections than any image of this format has chunks for: bounds
/// the table before it is read.
const MAX_SECTIONS: usize = 1 << 16;
/// Inode records per `INODES` chunk: enough chunks to keep every core
/// busy on a large namespace, few enough that each is worth a thread.
const CHUNK_RECORDS: usize = 1 << 17;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Names = 1,
    Root = 2,
    Inodes = 3,
    Extras = 4,
    Quotas = 5,
}

impl Kind {
    fn from_u32(v: u32) -> Option<Self> {
        [
            Kind::Names,
            Kind::Root,
            Kind::Inodes,
            Kind::Extras,
            Kind::Quotas,
        ]
        .into_iter()
        .find(|k| *k as u32 == v)
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Names => "NAMES",
            Kind::Root => "ROOT",
            Kind::Inodes => "INODES",
            Kind::Extras => "EXTRAS",
            Kind::Quotas => "QUOTAS",
        }
    }
}

/// Encodes `ns` as a format-2 image of transaction `txid`.
pub fn encode(ns: &Namespace, txid: u64) -> Vec<u8> {
    let mut sections: Vec<(Kind, Vec<u8>)> = Vec::new();
    let names = ns.image_names();
    let mut buf = Vec::new();
    put_varint(&mut buf, names.len() as u64);
    for n in &names {
        put_str(&mut buf, n);
    }
    sections.push((Kind::Names, buf));
    let mut buf = Vec::new();
    put_inode(&mut buf, &ns.image_root());
    sections.push((Kind::Root, buf));
    let mut chunk = Vec::with_capacity(1 << 20);
    let mut in_chunk = 0usize;
    ns.for_each_image_group(|parent, children| {
        let mut rest = children;
        while !rest.is_empty() {
            if in_chunk >= CHUNK_RECORDS {
                sections.push((Kind::Inodes, std::mem::take(&mut chunk)));
                in_chunk = 0;
            }
            let (now, later) = rest.split_at(rest.len().min(CHUNK_RECORDS - in_chunk));
            put_varint(&mut chunk, parent.0);
            put_varint(&mut chunk, now.len() as u64);
            for v in now {
                put_inode(&mut chunk, v);
            }
            in_chunk += now.len();
            rest = later;
        }
    });
    if !chunk.is_empty() {
        sections.push((Kind::Inodes, chunk));
    }
    let mut buf = Vec::new();
    for e in ns.image_extra_edits() {
        encode_record(&mut buf, 0, &e);
    }
    sections.push((Kind::Extras, buf));
    let mut buf = Vec::new();
    let quotas = ns.image_quotas();
    put_varint(&mut buf, quotas.len() as u64);
    for (id, q) in &quotas {
        put_varint(&mut buf, id.0);
        for c in [&q.quota, &q.usage] {
            put_varint(&mut buf, c.type_space.len() as u64);
            for v in [c.namespace, c.storage_space]
                .iter()
                .chain(c.type_space.iter())
            {
                buf.extend_from_slice(&v.to_be_bytes());
            }
        }
    }
    sections.push((Kind::Quotas, buf));
    assemble(ns, txid, &sections)
}

/// `ns` in the previous format (1), which this NameNode still reads but
/// no longer writes: for benchmarks comparing the two, and upgrade tests.
pub fn encode_format_1(ns: &Namespace, txid: u64) -> Vec<u8> {
    v1::encode(ns, txid)
}

/// Header, table and sections as one file.
fn assemble(ns: &Namespace, txid: u64, sections: &[(Kind, Vec<u8>)]) -> Vec<u8> {
    let (last_inode, last_block, last_gs) = ns.counters();
    let table_end = FIXED_HEADER_LEN + TABLE_ENTRY_LEN * sections.len() + 4;
    let body: usize = sections.iter().map(|(_, b)| b.len()).sum();
    let mut out = Vec::with_capacity(table_end + body);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_be_bytes());
    for v in [txid, last_inode, last_block, last_gs.0] {
        out.extend_from_slice(&v.to_be_bytes());
    }
    out.extend_from_slice(&(sections.len() as u32).to_be_bytes());
    let mut offset = table_end as u64;
    for (kind, bytes) in sections {
        out.extend_from_slice(&(*kind as u32).to_be_bytes());
        out.extend_from_slice(&crc32c::crc32c(bytes).to_be_bytes());
        out.extend_from_slice(&offset.to_be_bytes());
        out.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
        offset += bytes.len() as u64;
    }
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    for (_, bytes) in sections {
        out.extend_from_slice(bytes);
    }
    out
}

/// One section found in the table.
#[derive(Debug, Clone, Copy)]
struct Section<'a> {
    index: usize,
    kind: Kind,
    offset: usize,
    crc: u32,
    bytes: &'a [u8],
}

impl Section<'_> {
    fn where_(&self) -> String {
        format!(
            "section {} ({}) at offset {}, {} bytes",
            self.index,
            self.kind.name(),
            self.offset,
            self.bytes.len()
        )
    }

    /// Its bytes, once their checksum is right.
    fn verified(&self) -> Result<Reader<'_>, String> {
        if crc32c::crc32c(self.bytes) != self.crc {
            return Err(format!("{}: checksum mismatch", self.where_()));
        }
        Ok(Reader::new(self.bytes))
    }

    fn fail(&self, why: String) -> String {
        format!("{}: {why}", self.where_())
    }
}

fn be_u32(data: &[u8], at: usize) -> Option<u32> {
    let b: [u8; 4] = data.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_be_bytes(b))
}

fn be_u64(data: &[u8], at: usize) -> Option<u64> {
    let b: [u8; 8] = data.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_be_bytes(b))
}

/// Decodes an image (format 1 or 2) into a fresh namespace; returns it
/// with the image's txid.
///
/// # Errors
/// Why the image is refused: unknown format, a damaged header or table,
/// or the section (index, kind, offset) that fails its checksum or does
/// not decode.
pub fn decode(
    data: &[u8],
    superuser: &str,
    supergroup: &str,
    limits: Limits,
) -> Result<(Namespace, u64), String> {
    if data.get(..8) != Some(MAGIC.as_slice()) {
        return Err("not a Cairn image (bad magic)".into());
    }
    let format = be_u32(data, 8).ok_or("image header truncated")?;
    match format {
        v1::FORMAT => v1::decode(data, superuser, supergroup, limits),
        FORMAT => decode_v2(data, superuser, supergroup, limits),
        other => Err(format!(
            "unsupported image format {other} (this NameNode reads formats {} and {FORMAT})",
            v1::FORMAT
        )),
    }
}

/// The sections of a format-2 image, with the header verified.
fn sections(data: &[u8]) -> Result<Vec<Section<'_>>, String> {
    let count = be_u32(data, FIXED_HEADER_LEN - 4).ok_or("image header truncated")?;
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    if count > MAX_SECTIONS {
        return Err(format!("image header: {count} sections"));
    }
    let table_end = FIXED_HEADER_LEN + TABLE_ENTRY_LEN * count;
    let stored = be_u32(data, table_end).ok_or_else(|| {
        format!(
            "image header truncated: {} bytes, the section table needs {}",
            data.len(),
            table_end + 4
        )
    })?;
    if crc32c::crc32c(data.get(..table_end).unwrap_or_default()) != stored {
        return Err("image header checksum mismatch".into());
    }
    let mut out = Vec::with_capacity(count);
    for index in 0..count {
        let at = FIXED_HEADER_LEN + TABLE_ENTRY_LEN * index;
        let (Some(kind), Some(crc), Some(offset), Some(len)) = (
            be_u32(data, at),
            be_u32(data, at + 4),
            be_u64(data, at + 8),
            be_u64(data, at + 16),
        ) else {
            return Err(format!("section table entry {index} truncated"));
        };
        let kind = Kind::from_u32(kind).ok_or_else(|| {
            format!("section {index} at offset {offset}: unknown section kind {kind}")
        })?;
        let range = usize::try_from(offset)
            .ok()
            .zip(usize::try_from(len).ok())
            .and_then(|(o, l)| Some((o, o.checked_add(l)?)));
        let bytes = range.and_then(|(o, e)| data.get(o..e)).ok_or_else(|| {
            format!(
                "section {index} ({}) at offset {offset}, {len} bytes: runs past the end of the file ({} bytes)",
                kind.name(),
                data.len()
            )
        })?;
        out.push(Section {
            index,
            kind,
            offset: range.map_or(0, |r| r.0),
            crc,
            bytes,
        });
    }
    for k in [Kind::Names, Kind::Root, Kind::Extras, Kind::Quotas] {
        let n = out.iter().filter(|s| s.kind == k).count();
        if n != 1 {
            return Err(format!("image has {n} {} sections, wants 1", k.name()));
        }
    }
    Ok(out)
}

fn decode_v2(
    data: &[u8],
    superuser: &str,
    supergroup: &str,
    limits: Limits,
) -> Result<(Namespace, u64), String> {
    let started = Instant::now();
    let header = |at| be_u64(data, at).ok_or("image header truncated");
    let (txid, last_inode, last_block, last_gs) =
        (header(12)?, header(20)?, header(28)?, header(36)?);
    let sections = sections(data)?;
    let one = |k: Kind| sections.iter().find(|s| s.kind == k).copied();
    let (Some(names_s), Some(root_s), Some(extras_s), Some(quotas_s)) = (
        one(Kind::Names),
        one(Kind::Root),
        one(Kind::Extras),
        one(Kind::Quotas),
    ) else {
        return Err("image lacks a section".into());
    };
    let mut ns = Namespace::new(superuser, supergroup, 0, limits);
    let names = decode_names(&names_s)?;
    let name_ids = ns.intern_image_names(&names);
    let mut r = root_s.verified()?;
    let root = r.inode().map_err(|e| root_s.fail(e))?;
    if root.id != ROOT_INODE_ID || root.file.is_some() {
        return Err(root_s.fail(format!("inode {} is not the root directory", root.id)));
    }
    let chunks: Vec<Section<'_>> = sections
        .iter()
        .filter(|s| s.kind == Kind::Inodes)
        .copied()
        .collect();
    let (parts, extras) = std::thread::scope(|scope| {
        let extras = scope.spawn(|| decode_extras(&extras_s));
        let parts = decode_chunks(&chunks, &name_ids);
        let extras = extras
            .join()
            .unwrap_or_else(|_| Err("extras decoder panicked".into()));
        (parts, extras)
    });
    let (parts, extras) = (parts?, extras?);
    let decoded = started.elapsed();
    ns.bulk_load(&name_ids, root, parts)
        .map_err(|e| format!("INODES sections: {e}"))?;
    let linked = started.elapsed();
    for (offset, e) in extras {
        ns.apply(&e)
            .map_err(|why| extras_s.fail(format!("record at byte {offset}: {why}")))?;
    }
    let quotas = decode_quotas(&quotas_s)?;
    ns.restore_image_quotas(quotas)
        .map_err(|e| quotas_s.fail(e))?;
    ns.restore_counters(last_inode, last_block, GenStamp(last_gs));
    debug!(
        inodes = ns.inode_count(),
        chunks = chunks.len(),
        decode_ms = decoded.as_millis() as u64,
        link_ms = (linked - decoded).as_millis() as u64,
        total_ms = started.elapsed().as_millis() as u64,
        "image loaded"
    );
    Ok((ns, txid))
}

fn decode_names<'a>(s: &Section<'a>) -> Result<Vec<&'a str>, String> {
    if crc32c::crc32c(s.bytes) != s.crc {
        return Err(format!("{}: checksum mismatch", s.where_()));
    }
    let mut r = Reader::new(s.bytes);
    let n = r.count(1).map_err(|e| s.fail(e))?;
    (0..n).map(|_| r.str().map_err(|e| s.fail(e))).collect()
}

/// The `INODES` chunks, decoded on as many threads as there are cores
/// (each takes a run of consecutive chunks, so the parts stay in order).
fn decode_chunks(
    chunks: &[Section<'_>],
    names: &[crate::namespace::NameId],
) -> Result<Vec<BulkPart>, String> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(chunks.len())
        .max(1);
    let per = chunks.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .chunks(per)
            .map(|run| {
                scope.spawn(move || {
                    run.iter()
                        .map(|c| decode_chunk(c, names))
                        .collect::<Result<Vec<_>, String>>()
                })
            })
            .collect();
        let mut out = Vec::with_capacity(chunks.len());
        for h in handles {
            out.extend(
                h.join()
                    .unwrap_or_else(|_| Err("inode decoder panicked".into()))?,
            );
        }
        Ok(out)
    })
}

fn decode_chunk(s: &Section<'_>, names: &[crate::namespace::NameId]) -> Result<BulkPart, String> {
    let mut r = s.verified()?;
    // A record is at least 9 bytes: a fair guess of the records to come.
    let mut part = BulkPart::new(names.to_vec(), s.bytes.len() / 40);
    while !r.is_empty() {
        let parent = INodeId(r.varint().map_err(|e| s.fail(e))?);
        let n = r.count(9).map_err(|e| s.fail(e))?;
        part.begin_group(parent).map_err(|e| s.fail(e))?;
        for _ in 0..n {
            let at = r.pos();
            let rec = r.inode().map_err(|e| s.fail(e))?;
            part.push(rec)
                .map_err(|e| s.fail(format!("record at byte {at}: {e}")))?;
        }
    }
    part.finish().map_err(|e| s.fail(e))
}

/// The `EXTRAS` records with their offsets in the section.
fn decode_extras(s: &Section<'_>) -> Result<Vec<(usize, Edit)>, String> {
    let r = s.verified()?;
    let bytes = r.remaining();
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < bytes.len() {
        match decode_record(bytes.get(pos..).unwrap_or_default()) {
            Decoded::Record { edit, size, .. } => {
                out.push((pos, edit));
                pos += size;
            }
            Decoded::End => break,
            Decoded::Truncated => return Err(s.fail(format!("byte {pos}: truncated record"))),
            Decoded::Corrupt(why) => return Err(s.fail(format!("byte {pos}: {why}"))),
        }
    }
    Ok(out)
}

fn decode_quotas(s: &Section<'_>) -> Result<Vec<(INodeId, DirQuota)>, String> {
    let mut r = s.verified()?;
    let counts = |r: &mut Reader<'_>| -> Result<QuotaCounts, String> {
        let mut c = QuotaCounts::default();
        let types = r.count(8)?;
        if types != c.type_space.len() {
            return Err(format!(
                "{types} storage types, this NameNode has {}",
                c.type_space.len()
            ));
        }
        c.namespace = r.i64_be()?;
        c.storage_space = r.i64_be()?;
        for t in c.type_space.iter_mut() {
            *t = r.i64_be()?;
        }
        Ok(c)
    };
    let n = r.count(1 + 2 * 8 * 3).map_err(|e| s.fail(e))?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let id = INodeId(r.varint().map_err(|e| s.fail(e))?);
        let quota = counts(&mut r).map_err(|e| s.fail(e))?;
        let usage = counts(&mut r).map_err(|e| s.fail(e))?;
        out.push((id, DirQuota { quota, usage }));
    }
    Ok(out)
}

#[cfg(test)]
pub(crate) mod tests;
