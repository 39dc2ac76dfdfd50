//! Checkpoint images (`fsimage_<txid>`), format 3: the namespace in
//! sections, each with its own length and CRC32C, laid out so that the
//! bulk of it (the inodes, in chunks) decodes on every core at once and
//! loads without replaying an edit per inode.
//!
//! ```text
//! header   "CAIRNIMG", format u32 = 3, txid, last inode id, last block id,
//!          last generation stamp (u64 each), section count u32
//! table    per section: kind u32, CRC32C u32, offset u64, length u64
//!          then a CRC32C of the header and table (all big-endian)
//! NAMES    the owner and group names the inodes index
//! ROOT     the root's inode record
//! INODES   (one or more chunks) groups of (directory id, child count,
//!          the children's inode records in HDFS's name order, signed
//!          bytes: `crate::namespace::name_order`), breadth first
//!          from the root, so a directory's record precedes its group
//! EXTRAS   journal records (their own CRCs too) for what inode records
//!          do not carry: xattrs, ACLs, storage policies, snapshots
//! QUOTAS   every directory quota with its limits and usage, exactly
//! ```
//!
//! Format 2 (the same, names in unsigned byte order) and format 1 (the
//! namespace as journal records, one CRC for the file) are still read, so
//! a NameNode upgraded in place starts from its old image and writes
//! format 3 from its first checkpoint on.

mod records;
mod source;
mod v1;

use std::path::Path;
use std::time::Instant;

use cairn_common::disk::Disk;

use tracing::info;

use crate::journal::codec::{decode_record, encode_record, Decoded};
use crate::namespace::bulk_load::BulkPart;
use crate::namespace::{
    DirQuota, Edit, GenStamp, INodeId, Limits, NameOrder, Namespace, QuotaCounts, ROOT_INODE_ID,
};
use records::{put_inode, put_str, put_varint, Reader};
use source::{be_u32, be_u64, header_and_sections, Section, Source};

pub(crate) const MAGIC: &[u8; 8] = b"CAIRNIMG";
/// The format this NameNode writes.
pub const FORMAT: u32 = 3;
/// Format 3's layout with names in unsigned byte order: still read.
const FORMAT_2: u32 = 2;
/// Magic, format, txid, three counters, section count.
const FIXED_HEADER_LEN: usize = 8 + 4 + 8 * 4 + 4;
const TABLE_ENTRY_LEN: usize = 4 + 4 + 8 + 8;
/// More sections than any image of this format has chunks for: bounds
/// the table before it is read.
const MAX_SECTIONS: usize = 1 << 16;
/// Inode records per `INODES` chunk: enough chunks to keep every core
/// busy on a large namespace, few enough that each is worth a thread.
const CHUNK_RECORDS: usize = 1 << 15;

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

/// Encodes `ns` as a format-2 image of transaction `txid`, in memory.
pub fn encode(ns: &Namespace, txid: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let placed = encode_to(ns, txid, &mut |at, bytes| {
        let at = usize::try_from(at).map_err(std::io::Error::other)?;
        let end = at + bytes.len();
        if out.len() < end {
            out.resize(end, 0);
        }
        out[at..end].copy_from_slice(&bytes);
        Ok(())
    });
    // Only `put` can fail, and this one does not; an image that could
    // not be laid out is no image (and is refused on load).
    if placed.is_err() {
        out.clear();
    }
    out
}

/// Encodes `ns` as a format-2 image of transaction `txid`, handing each
/// section to `put(offset, bytes)` as soon as it is made (a writer can
/// have it on disk while the next is encoded), the header and section
/// table last, at offset 0. Returns the image's length.
///
/// The table's room is set aside first, before the number of `INODES`
/// chunks is known: room for one chunk per [`CHUNK_RECORDS`] inodes of
/// the whole table (more than the tree's, whose root has no record), so
/// a few zero bytes may lie between the table and the first section.
///
/// # Errors
/// `put`'s.
pub fn encode_to(
    ns: &Namespace,
    txid: u64,
    put: &mut dyn FnMut(u64, Vec<u8>) -> std::io::Result<()>,
) -> std::io::Result<u64> {
    let most_sections = 4 + ns.inode_count().div_ceil(CHUNK_RECORDS);
    let room = FIXED_HEADER_LEN + TABLE_ENTRY_LEN * most_sections + 4;
    let mut w = SectionWriter {
        put,
        next: room as u64,
        table: Vec::new(),
    };
    let names = ns.image_names();
    let mut buf = Vec::new();
    put_varint(&mut buf, names.len() as u64);
    for n in &names {
        put_str(&mut buf, n);
    }
    w.section(Kind::Names, buf)?;
    let mut buf = Vec::new();
    put_inode(&mut buf, &ns.image_root());
    w.section(Kind::Root, buf)?;
    let mut chunk = Vec::with_capacity(1 << 20);
    let mut in_chunk = 0usize;
    let mut failed = None;
    ns.for_each_image_group(|parent, children| {
        let mut rest = children;
        while !rest.is_empty() && failed.is_none() {
            if in_chunk >= CHUNK_RECORDS {
                let full = std::mem::replace(&mut chunk, Vec::with_capacity(1 << 20));
                failed = w.section(Kind::Inodes, full).err();
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
    if let Some(e) = failed {
        return Err(e);
    }
    if !chunk.is_empty() {
        w.section(Kind::Inodes, chunk)?;
    }
    let mut buf = Vec::new();
    for e in ns.image_extra_edits() {
        encode_record(&mut buf, 0, &e);
    }
    w.section(Kind::Extras, buf)?;
    w.section(Kind::Quotas, encode_quotas(ns))?;
    let head = header(ns, txid, &w.table);
    if head.len() > room {
        return Err(std::io::Error::other(format!(
            "image table of {} sections outgrew its room of {most_sections}",
            w.table.len()
        )));
    }
    (w.put)(0, head)?;
    Ok(w.next)
}

/// Sections handed out as they are made, and the table of them.
struct SectionWriter<'a> {
    put: &'a mut dyn FnMut(u64, Vec<u8>) -> std::io::Result<()>,
    /// Where the next section goes.
    next: u64,
    /// Kind, CRC32C, offset and length of each section so far.
    table: Vec<(Kind, u32, u64, u64)>,
}

impl SectionWriter<'_> {
    fn section(&mut self, kind: Kind, bytes: Vec<u8>) -> std::io::Result<()> {
        let (at, len) = (self.next, bytes.len() as u64);
        self.table.push((kind, crc32c::crc32c(&bytes), at, len));
        self.next += len;
        (self.put)(at, bytes)
    }
}

fn encode_quotas(ns: &Namespace) -> Vec<u8> {
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
    buf
}

/// `ns` in the previous format (1), which this NameNode still reads but
/// no longer writes: for benchmarks comparing the two, and upgrade tests.
pub fn encode_format_1(ns: &Namespace, txid: u64) -> Vec<u8> {
    v1::encode(ns, txid)
}

/// The header and section table (with their CRC32C) for `table`.
fn header(ns: &Namespace, txid: u64, table: &[(Kind, u32, u64, u64)]) -> Vec<u8> {
    let (last_inode, last_block, last_gs) = ns.counters();
    let mut out = Vec::with_capacity(FIXED_HEADER_LEN + TABLE_ENTRY_LEN * table.len() + 4);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_be_bytes());
    for v in [txid, last_inode, last_block, last_gs.0] {
        out.extend_from_slice(&v.to_be_bytes());
    }
    out.extend_from_slice(&(table.len() as u32).to_be_bytes());
    for (kind, crc, offset, len) in table {
        out.extend_from_slice(&(*kind as u32).to_be_bytes());
        out.extend_from_slice(&crc.to_be_bytes());
        out.extend_from_slice(&offset.to_be_bytes());
        out.extend_from_slice(&len.to_be_bytes());
    }
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// Decodes an image (format 1 or 2) held in memory into a fresh
/// namespace; returns it with the image's txid.
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
    match format_of(data)? {
        v1::FORMAT => v1::decode(data, superuser, supergroup, limits),
        f => decode_v2(
            Source::Memory(data),
            order_of(f),
            superuser,
            supergroup,
            limits,
        ),
    }
}

/// As [`decode`], for the image file at `path`, `len` bytes long (the
/// caller's stat, which tells a missing file from a damaged one): a
/// format-2 image is read section by section on the threads that decode it.
///
/// # Errors
/// As [`decode`], and I/O errors reading the file.
pub fn decode_file(
    disk: &dyn Disk,
    path: &Path,
    len: u64,
    superuser: &str,
    supergroup: &str,
    limits: Limits,
) -> Result<(Namespace, u64), String> {
    let src = Source::File { disk, path, len };
    let head = src.bytes(0, len.min(12) as usize)?.unwrap_or_default();
    match format_of(&head)? {
        v1::FORMAT => {
            let data = disk
                .read(path)
                .map_err(|e| format!("reading {}: {e}", path.display()))?;
            v1::decode(&data, superuser, supergroup, limits)
        }
        f => decode_v2(src, order_of(f), superuser, supergroup, limits),
    }
}

/// The order a sectioned image's directories list their names in.
fn order_of(format: u32) -> NameOrder {
    if format == FORMAT_2 {
        NameOrder::Bytes
    } else {
        NameOrder::Hdfs
    }
}

/// The format of an image that starts with `head` (its first 12 bytes
/// or more), if this NameNode reads it.
fn format_of(head: &[u8]) -> Result<u32, String> {
    if head.get(..8) != Some(MAGIC.as_slice()) {
        return Err("not a Cairn image (bad magic)".into());
    }
    match be_u32(head, 8).ok_or("image header truncated")? {
        f @ (v1::FORMAT | FORMAT_2 | FORMAT) => Ok(f),
        other => Err(format!(
            "unsupported image format {other} (this NameNode reads formats {}, {FORMAT_2} and {FORMAT})",
            v1::FORMAT
        )),
    }
}

fn decode_v2(
    src: Source<'_>,
    order: NameOrder,
    superuser: &str,
    supergroup: &str,
    limits: Limits,
) -> Result<(Namespace, u64), String> {
    let started = Instant::now();
    let (head, sections) = header_and_sections(&src)?;
    let header = |at| be_u64(&head, at).ok_or("image header truncated");
    let (txid, last_inode, last_block, last_gs) =
        (header(12)?, header(20)?, header(28)?, header(36)?);
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
    let names_bytes = names_s.load(&src)?;
    let names = decode_names(&names_s, &names_bytes)?;
    let name_ids = ns.intern_image_names(&names);
    let root_bytes = root_s.load(&src)?;
    let root = Reader::new(&root_bytes)
        .inode()
        .map_err(|e| root_s.fail(e))?;
    if root.id != ROOT_INODE_ID || root.file.is_some() {
        return Err(root_s.fail(format!("inode {} is not the root directory", root.id)));
    }
    let chunks: Vec<Section> = sections
        .iter()
        .filter(|s| s.kind == Kind::Inodes)
        .copied()
        .collect();
    // Decoding threads turn chunks into parts while this thread links
    // them in image order: the link overlaps the decoding of later chunks.
    let (extras, decode_ms) = std::thread::scope(|scope| -> Result<_, String> {
        let extras = scope.spawn(|| decode_extras(&extras_s, &extras_s.load(&src)?));
        let mut loader = ns.bulk_loader(&name_ids, root, src.len(), order)?;
        let mut decode_ms = 0;
        link_chunks_as_decoded(scope, &src, &chunks, (&name_ids, order), |part| {
            decode_ms = started.elapsed().as_millis() as u64;
            loader
                .add(part)
                .map_err(|e| format!("INODES sections: {e}"))
        })?;
        loader
            .finish()
            .map_err(|e| format!("INODES sections: {e}"))?;
        let extras = extras
            .join()
            .unwrap_or_else(|_| Err("extras decoder panicked".into()))?;
        Ok((extras, decode_ms))
    })?;
    let linked = started.elapsed();
    for (offset, e) in extras {
        ns.apply(&e)
            .map_err(|why| extras_s.fail(format!("record at byte {offset}: {why}")))?;
    }
    let quotas = decode_quotas(&quotas_s, &quotas_s.load(&src)?)?;
    ns.restore_image_quotas(quotas)
        .map_err(|e| quotas_s.fail(e))?;
    ns.restore_counters(last_inode, last_block, GenStamp(last_gs));
    info!(
        inodes = ns.inode_count(),
        chunks = chunks.len(),
        last_part_decoded_ms = decode_ms,
        linked_ms = linked.as_millis() as u64,
        total_ms = started.elapsed().as_millis() as u64,
        "image loaded"
    );
    Ok((ns, txid))
}

fn decode_names<'a>(s: &Section, bytes: &'a [u8]) -> Result<Vec<&'a str>, String> {
    let mut r = Reader::new(bytes);
    let n = r.count(1).map_err(|e| s.fail(e))?;
    (0..n).map(|_| r.str().map_err(|e| s.fail(e))).collect()
}

/// Decodes the `INODES` chunks on as many threads as there are cores
/// (chunk `i` on thread `i % threads`, so the first ones are ready first)
/// and hands the parts to `link` in chunk order, as they come.
fn link_chunks_as_decoded<'scope, 'env>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    src: &'env Source<'env>,
    chunks: &'env [Section],
    (names, order): (&'env [crate::namespace::NameId], NameOrder),
    mut link: impl FnMut(BulkPart) -> Result<(), String>,
) -> Result<(), String> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(chunks.len())
        .max(1);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Result<BulkPart, String>)>();
    let decoders: Vec<_> = (0..threads)
        .map(|t| {
            let tx = tx.clone();
            scope.spawn(move || {
                for (i, c) in chunks.iter().enumerate().skip(t).step_by(threads) {
                    let part = c.load(src).and_then(|b| decode_chunk(c, &b, names, order));
                    let failed = part.is_err();
                    // A closed channel: the loader has given up; so do we.
                    if tx.send((i, part)).is_err() || failed {
                        return;
                    }
                }
            })
        })
        .collect();
    drop(tx);
    let mut in_order = || -> Result<(), String> {
        let mut waiting = std::collections::BTreeMap::new();
        let mut next = 0;
        while next < chunks.len() {
            let Ok((i, part)) = rx.recv() else {
                return Err("an inode decoder stopped".into());
            };
            waiting.insert(i, part?);
            while let Some(part) = waiting.remove(&next) {
                link(part)?;
                next += 1;
            }
        }
        Ok(())
    };
    let linked = in_order();
    drop(rx);
    // Joined here, not by the scope, which would panic on a panicked one.
    let panicked = decoders.into_iter().any(|d| d.join().is_err());
    match linked {
        Ok(()) if panicked => Err("an inode decoder panicked".into()),
        other => other,
    }
}

fn decode_chunk(
    s: &Section,
    bytes: &[u8],
    names: &[crate::namespace::NameId],
    order: NameOrder,
) -> Result<BulkPart, String> {
    let mut r = Reader::new(bytes);
    // A record is at least 9 bytes: a fair guess of the records to come.
    let mut part = BulkPart::new(names.to_vec(), bytes.len() / 40, order);
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
fn decode_extras(s: &Section, bytes: &[u8]) -> Result<Vec<(usize, Edit)>, String> {
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

fn decode_quotas(s: &Section, bytes: &[u8]) -> Result<Vec<(INodeId, DirQuota)>, String> {
    let mut r = Reader::new(bytes);
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
