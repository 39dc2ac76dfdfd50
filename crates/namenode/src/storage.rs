//! The NameNode's metadata directories (`dfs.namenode.name.dir`, one or
//! more): a `VERSION` file naming the namespace, checkpoint images
//! `fsimage_<txid>`, finalized edit segments `edits_<first>-<last>` and the
//! segment being written, `edits_inprogress_<first>`.
//!
//! Start-up = the newest valid image + replay of every later record. A torn
//! record at the very end of the newest segment (a crash mid-write) is cut
//! off; any other damage — a bad checksum inside a segment, a gap in
//! transaction ids, an unreadable image — stops start-up with the file and
//! offset, because guessing would lose acknowledged changes.

use std::io;
use std::path::{Path, PathBuf};

use cairn_common::disk::{Disk, DiskFile};
use cairn_common::durable::{write_atomic_on, write_atomic_with};
use tracing::{info, warn};

use crate::journal::codec::{decode_record, encode_record, Decoded};
use crate::namespace::{Edit, Limits, Namespace};

const VERSION_MAGIC: &str = "cairn-namenode";
const VERSION_FORMAT: u32 = 1;
/// Checkpoint images kept in each metadata directory (older ones, and the
/// segments they cover, are purged).
pub const IMAGES_KEPT: usize = 2;

/// Why the metadata cannot be loaded or written.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error(
        "{0} is not formatted (no VERSION file); run `cairn namenode -format --dir {0}` first"
    )]
    NotFormatted(String),
    #[error("{path}: {reason}")]
    Corrupt { path: String, reason: String },
    #[error("{path}: {source}")]
    Io { path: String, source: io::Error },
    #[error("{0}")]
    Refused(String),
}

fn io_err(path: &Path, source: io::Error) -> StorageError {
    StorageError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// The identity of a namespace, stored in every metadata directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionInfo {
    pub cluster_id: String,
    pub block_pool_id: String,
    pub namespace_id: u32,
    pub created_ms: u64,
}

impl VersionInfo {
    fn render(&self) -> String {
        let body = format!(
            "magic={VERSION_MAGIC}\nformat={VERSION_FORMAT}\nclusterID={}\nblockpoolID={}\nnamespaceID={}\ncTime={}\n",
            self.cluster_id, self.block_pool_id, self.namespace_id, self.created_ms
        );
        let crc = crc32c::crc32c(body.as_bytes());
        format!("{body}checksum={crc:08x}\n")
    }

    /// Parses the text of a VERSION file read from `path` (named in errors).
    ///
    /// # Errors
    /// Corrupt when the checksum, magic, format or a field is wrong.
    pub fn parse(path: &Path, text: &str) -> Result<Self, StorageError> {
        let corrupt = |reason: &str| StorageError::Corrupt {
            path: path.display().to_string(),
            reason: reason.to_string(),
        };
        let (body, sum) = text
            .rsplit_once("checksum=")
            .ok_or_else(|| corrupt("no checksum line"))?;
        let stored =
            u32::from_str_radix(sum.trim(), 16).map_err(|_| corrupt("bad checksum line"))?;
        if crc32c::crc32c(body.as_bytes()) != stored {
            return Err(corrupt("checksum mismatch"));
        }
        let get = |key: &str| {
            body.lines()
                .find_map(|l| l.strip_prefix(&format!("{key}=")))
                .ok_or_else(|| corrupt(&format!("missing {key}")))
        };
        if get("magic")? != VERSION_MAGIC {
            return Err(corrupt("not a Cairn NameNode directory"));
        }
        let format: u32 = get("format")?.parse().map_err(|_| corrupt("bad format"))?;
        if format != VERSION_FORMAT {
            return Err(corrupt(&format!("unsupported format {format}")));
        }
        Ok(Self {
            cluster_id: get("clusterID")?.to_string(),
            block_pool_id: get("blockpoolID")?.to_string(),
            namespace_id: get("namespaceID")?
                .parse()
                .map_err(|_| corrupt("bad namespaceID"))?,
            created_ms: get("cTime")?.parse().map_err(|_| corrupt("bad cTime"))?,
        })
    }
}

/// Creates a new, empty namespace in `dirs`.
///
/// # Errors
/// Refused when a directory already holds a namespace (unless `force`), or
/// any I/O error.
pub fn format(
    disk: &dyn Disk,
    dirs: &[PathBuf],
    info: &VersionInfo,
    ns: &Namespace,
    force: bool,
) -> Result<(), StorageError> {
    for dir in dirs {
        disk.create_dir_all(dir).map_err(|e| io_err(dir, e))?;
        let version = dir.join("VERSION");
        if disk.exists(&version) && !force {
            return Err(StorageError::Refused(format!(
                "{} already holds a namespace; refusing to format it (remove it first)",
                dir.display()
            )));
        }
        for name in disk.list_dir(dir).map_err(|e| io_err(dir, e))? {
            if name.starts_with("edits_") || name.starts_with("fsimage_") {
                let path = dir.join(name);
                disk.remove_file(&path).map_err(|e| io_err(&path, e))?;
            }
        }
        write_image(disk, dir, 0, ns)?;
        write_atomic_on(disk, &version, info.render().as_bytes())
            .map_err(|e| io_err(&version, e))?;
    }
    Ok(())
}

/// Reads the VERSION of the first directory that has one.
///
/// # Errors
/// NotFormatted when none has, Corrupt when it does not verify.
pub fn read_version(disk: &dyn Disk, dirs: &[PathBuf]) -> Result<VersionInfo, StorageError> {
    for dir in dirs {
        let p = dir.join("VERSION");
        match disk.read(&p) {
            Ok(bytes) => {
                let text = String::from_utf8(bytes).map_err(|_| StorageError::Corrupt {
                    path: p.display().to_string(),
                    reason: "not UTF-8 text".into(),
                })?;
                return VersionInfo::parse(&p, &text);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io_err(&p, e)),
        }
    }
    Err(StorageError::NotFormatted(
        dirs.first()
            .map(|d| d.display().to_string())
            .unwrap_or_default(),
    ))
}

/// Writes `fsimage_<txid>` in the current image format
/// ([`crate::image`]).
///
/// # Errors
/// Any I/O error.
pub fn write_image(
    disk: &dyn Disk,
    dir: &Path,
    txid: u64,
    ns: &Namespace,
) -> Result<PathBuf, StorageError> {
    let started = std::time::Instant::now();
    let path = dir.join(format!("fsimage_{txid:019}"));
    let mut bytes = 0;
    write_atomic_with(disk, &path, |file| {
        bytes = write_sections(file, ns, txid)?;
        Ok(())
    })
    .map_err(|e| io_err(&path, e))?;
    // HDFS logs each image's size and time the same way.
    info!(
        image = %path.display(),
        bytes,
        ms = started.elapsed().as_millis() as u64,
        "image saved"
    );
    Ok(path)
}

/// Sections bigger than this are synced as soon as they are written.
const SYNC_SECTIONS_FROM: usize = 1 << 20;

/// Writes the image of `ns` into `file` as it is encoded: a second thread
/// writes each section and syncs the large ones, so the disk works while
/// the next section is encoded, and the final sync finds little left.
/// Returns the image's length.
fn write_sections(file: &dyn DiskFile, ns: &Namespace, txid: u64) -> io::Result<u64> {
    std::thread::scope(|scope| {
        // Two sections in flight at most: memory stays a few chunks.
        let (tx, rx) = std::sync::mpsc::sync_channel::<(u64, Vec<u8>)>(2);
        let writer = scope.spawn(move || -> io::Result<()> {
            for (at, bytes) in rx {
                file.write_all_at(&bytes, at)?;
                if bytes.len() >= SYNC_SECTIONS_FROM {
                    file.sync_data()?;
                }
            }
            Ok(())
        });
        let encoded = crate::image::encode_to(ns, txid, &mut |at, bytes| {
            tx.send((at, bytes))
                .map_err(|_| io::Error::other("image writer stopped"))
        });
        drop(tx);
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("image writer panicked")));
        // The writer's own error says more than the encoder's "stopped".
        written?;
        encoded
    })
}

/// Reads an image into a fresh namespace; returns it with its txid.
///
/// # Errors
/// Corrupt (with the offset) or I/O errors.
pub fn read_image(
    disk: &dyn Disk,
    path: &Path,
    superuser: &str,
    supergroup: &str,
    limits: Limits,
) -> Result<(Namespace, u64), StorageError> {
    // A missing or unreadable file is an I/O error, as before any byte of
    // it is judged.
    let len = disk.file_len(path).map_err(|e| io_err(path, e))?;
    crate::image::decode_file(disk, path, len, superuser, supergroup, limits).map_err(|reason| {
        StorageError::Corrupt {
            path: path.display().to_string(),
            reason,
        }
    })
}

/// Decodes the bytes of an image file (either format) into a fresh
/// namespace; returns it with the image's txid.
///
/// # Errors
/// Why the image is refused (naming the section and offset).
pub fn decode_image(
    data: &[u8],
    superuser: &str,
    supergroup: &str,
    limits: Limits,
) -> Result<(Namespace, u64), String> {
    crate::image::decode(data, superuser, supergroup, limits)
}

/// A checkpoint image found in a directory: its txid and path.
pub type ImageFile = (u64, PathBuf);

/// A segment file found in a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentFile {
    pub path: PathBuf,
    pub first: u64,
    /// `None` for the segment still being written.
    pub last: Option<u64>,
}

/// Images (newest first) and segments (oldest first) in `dir`.
///
/// # Errors
/// I/O errors listing the directory.
pub fn list(
    disk: &dyn Disk,
    dir: &Path,
) -> Result<(Vec<ImageFile>, Vec<SegmentFile>), StorageError> {
    let mut images = Vec::new();
    let mut segments = Vec::new();
    for name in disk.list_dir(dir).map_err(|e| io_err(dir, e))? {
        let path = dir.join(&name);
        if let Some(t) = name.strip_prefix("fsimage_") {
            if let Ok(t) = t.parse::<u64>() {
                images.push((t, path));
            }
        } else if let Some(first) = name.strip_prefix("edits_inprogress_") {
            if let Ok(first) = first.parse() {
                segments.push(SegmentFile {
                    path,
                    first,
                    last: None,
                });
            }
        } else if let Some(range) = name.strip_prefix("edits_") {
            if let Some((a, b)) = range.split_once('-') {
                if let (Ok(first), Ok(last)) = (a.parse(), b.parse()) {
                    segments.push(SegmentFile {
                        path,
                        first,
                        last: Some(last),
                    });
                }
            }
        }
    }
    images.sort_by_key(|i| std::cmp::Reverse(i.0));
    segments.sort_by_key(|s| (s.first, s.last.is_none()));
    Ok((images, segments))
}

/// Where recovery stopped in an in-progress segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replayed {
    pub last_txid: u64,
    pub records: u64,
    /// In-progress segments and the byte length of their valid records
    /// (the torn tail after it was cut).
    pub open_segments: Vec<(PathBuf, u64, u64)>,
}

/// What an operator chose for a damaged spot in the log (`--recover`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryChoice {
    /// Skip the damage: go on at the next whole record found after it.
    Skip,
    /// Keep everything before the damage and drop everything after it.
    Stop,
    /// Give up; change nothing.
    Quit,
}

/// Asked at each damaged spot in recovery mode; `None` outside it.
pub type Recovery<'a> = Option<&'a mut dyn FnMut(&str) -> RecoveryChoice>;

/// Replays every record with txid > `after` from `segments` into `ns`.
///
/// # Errors
/// Corrupt with file and offset for damage that is not a torn tail at the
/// very end of the newest segment, or a gap in transaction ids — unless
/// `recover` decides otherwise.
pub fn replay(
    disk: &dyn Disk,
    ns: &mut Namespace,
    segments: &[SegmentFile],
    after: u64,
) -> Result<Replayed, StorageError> {
    replay_with(disk, ns, segments, after, None)
}

/// [`replay`] with an operator deciding about damage (recovery mode).
///
/// # Errors
/// As [`replay`]; Refused when the operator quits.
pub fn replay_with(
    disk: &dyn Disk,
    ns: &mut Namespace,
    segments: &[SegmentFile],
    after: u64,
    mut recover: Recovery<'_>,
) -> Result<Replayed, StorageError> {
    let mut expected = after + 1;
    let mut out = Replayed {
        last_txid: after,
        records: 0,
        open_segments: Vec::new(),
    };
    'segments: for (i, seg) in segments.iter().enumerate() {
        if seg.last.is_some_and(|l| l < expected) {
            continue;
        }
        let data = disk.read(&seg.path).map_err(|e| io_err(&seg.path, e))?;
        let corrupt = |pos: usize, reason: String| StorageError::Corrupt {
            path: seg.path.display().to_string(),
            reason: format!("offset {pos}: {reason}"),
        };
        let mut pos = 0usize;
        loop {
            let problem = match decode_record(&data[pos..]) {
                Decoded::Record { txid, edit, size } => {
                    if txid > expected {
                        Some(format!(
                            "gap in transaction ids: expected {expected}, found {txid}"
                        ))
                    } else {
                        if txid >= expected {
                            ns.apply(&edit).map_err(|e| corrupt(pos, e.to_string()))?;
                            expected += 1;
                            out.records += 1;
                        }
                        pos += size;
                        None
                    }
                }
                Decoded::End => break,
                Decoded::Truncated | Decoded::Corrupt(_)
                    if seg.last.is_none()
                        && only_tail_left(&data, pos)
                        && nothing_after(disk, &segments[i + 1..]) =>
                {
                    warn!(segment = %seg.path.display(), offset = pos, "cutting a torn record at the end of the edit log");
                    break;
                }
                Decoded::Truncated => Some("truncated record".to_string()),
                Decoded::Corrupt(why) => Some(why),
            };
            let Some(problem) = problem else { continue };
            let err = corrupt(pos, problem);
            let Some(decide) = recover.as_mut() else {
                return Err(err);
            };
            match decide(&err.to_string()) {
                RecoveryChoice::Quit => {
                    return Err(StorageError::Refused(format!(
                        "recovery abandoned at {err}"
                    )))
                }
                RecoveryChoice::Stop => {
                    warn!(%err, "recovery: dropping everything from here on");
                    break 'segments;
                }
                RecoveryChoice::Skip => {
                    // Accept a gap at a whole record; else look for the next
                    // whole record after the damage.
                    if let Decoded::Record { txid, .. } = decode_record(&data[pos..]) {
                        warn!(%err, "recovery: continuing at txid {txid}");
                        expected = txid;
                        continue;
                    }
                    let next = (pos + 1..data.len()).find(|&p| {
                        matches!(decode_record(&data[p..]), Decoded::Record { txid, .. } if txid >= expected)
                    });
                    match next {
                        Some(p) => {
                            if let Decoded::Record { txid, .. } = decode_record(&data[p..]) {
                                warn!(%err, offset = p, "recovery: skipping to txid {txid}");
                                expected = txid;
                            }
                            pos = p;
                        }
                        None => {
                            warn!(%err, "recovery: nothing readable after the damage in this segment");
                            continue 'segments;
                        }
                    }
                }
            }
        }
        if seg.last.is_none() {
            out.open_segments
                .push((seg.path.clone(), seg.first, pos as u64));
        }
    }
    out.last_txid = expected - 1;
    Ok(out)
}

/// Recovery mode (`cairn namenode --recover`): loads the newest image and
/// replays the log, asking `decide` at every damaged spot, then saves the
/// result as a new image and moves the old segments into
/// `recovered-<time>/` so a normal start begins from the repaired state.
/// Returns the last transaction kept.
///
/// # Errors
/// As [`load`]; Refused when the operator quits.
pub fn recover(
    disk: &dyn Disk,
    dirs: &[PathBuf],
    superuser: &str,
    supergroup: &str,
    limits: Limits,
    decide: &mut dyn FnMut(&str) -> RecoveryChoice,
) -> Result<u64, StorageError> {
    read_version(disk, dirs)?;
    let dir = dirs
        .iter()
        .find(|d| disk.exists(&d.join("VERSION")))
        .ok_or_else(|| StorageError::NotFormatted(String::new()))?;
    let (images, segments) = list(disk, dir)?;
    let (_, image_path) = images
        .first()
        .cloned()
        .ok_or_else(|| StorageError::Corrupt {
            path: dir.display().to_string(),
            reason: "no fsimage found".into(),
        })?;
    let (mut ns, txid) = read_image(disk, &image_path, superuser, supergroup, limits)?;
    let replayed = replay_with(disk, &mut ns, &segments, txid, Some(decide))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    for d in dirs {
        let aside = d.join(format!("recovered-{stamp}"));
        disk.create_dir_all(&aside).map_err(|e| io_err(&aside, e))?;
        let (_, segs) = list(disk, d)?;
        for s in segs {
            if let Some(name) = s.path.file_name() {
                disk.rename(&s.path, &aside.join(name))
                    .map_err(|e| io_err(&s.path, e))?;
            }
        }
        write_image(disk, d, replayed.last_txid, &ns)?;
        disk.sync_dir(d).map_err(|e| io_err(d, e))?;
    }
    info!(
        last_txid = replayed.last_txid,
        records = replayed.records,
        "recovery finished"
    );
    Ok(replayed.last_txid)
}

/// Sectors are written whole or not at all (the atomic unit of a disk).
const SECTOR_BYTES: usize = 512;

/// The layout a log's torn-tail rule needs: its records' header length,
/// the largest length a header may claim, and the most one flush writes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TailLayout {
    pub header_len: usize,
    pub max_record_len: usize,
    pub max_flush_bytes: usize,
}

/// A damaged record is a torn tail when a power cut explains it: the
/// log writes one flush of at most `max_flush_bytes` (or a single larger
/// record) per fdatasync, only the flush in flight can be torn, and its
/// sectors reach the disk in any order, each either new or still the
/// preallocated zeros. So either nothing but zeros follows the record's
/// claimed end, or a whole sector within the record is zeros with written
/// data after it (a lost sector, unlike a flipped bit) and nothing but
/// zeros lies further than one flush from it. The edit log and the Raft
/// log share this rule.
pub(crate) fn is_torn_tail(data: &[u8], pos: usize, layout: TailLayout) -> bool {
    let claimed = data
        .get(pos..pos + 4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .unwrap_or(0);
    let record_end = pos
        .saturating_add(layout.header_len)
        .saturating_add(claimed.min(layout.max_record_len));
    let zeros_from = |at: usize| {
        data.get(at.min(data.len())..)
            .is_none_or(|rest| rest.iter().all(|b| *b == 0))
    };
    if zeros_from(record_end) {
        return true;
    }
    // A hole: zeros with written data after them (not the preallocated
    // tail, which a garbled length could reach).
    let last_written = data.iter().rposition(|b| *b != 0).unwrap_or(0);
    let sectors_end = record_end
        .div_ceil(SECTOR_BYTES)
        .min(last_written / SECTOR_BYTES);
    let lost_sector = (pos / SECTOR_BYTES..sectors_end)
        .filter_map(|s| data.get(s * SECTOR_BYTES..(s + 1) * SECTOR_BYTES))
        .any(|sector| sector.iter().all(|b| *b == 0));
    lost_sector && zeros_from(record_end.max(pos.saturating_add(layout.max_flush_bytes)))
}

/// The edit log's torn-tail rule ([`is_torn_tail`]).
fn only_tail_left(data: &[u8], pos: usize) -> bool {
    is_torn_tail(
        data,
        pos,
        TailLayout {
            header_len: crate::journal::codec::RECORD_HEADER_LEN,
            max_record_len: crate::journal::codec::MAX_RECORD_LEN,
            max_flush_bytes: crate::journal::file::MAX_BATCH_BYTES,
        },
    )
}

/// Whether the log holds nothing after a segment: every later segment is
/// in progress and blank. A roll makes the next segment before the old
/// one's last batch is synced, so a power cut can leave a torn tail in a
/// segment followed by an empty one.
fn nothing_after(disk: &dyn Disk, later: &[SegmentFile]) -> bool {
    later.iter().all(|s| {
        s.last.is_none()
            && disk
                .read(&s.path)
                .is_ok_and(|data| data.iter().all(|b| *b == 0))
    })
}

/// Loads the namespace: newest valid image, then the later segments.
/// Finalizes in-progress segments and returns the last txid.
///
/// # Errors
/// As [`replay`] and [`read_image`]; NotFormatted without a VERSION.
pub fn load(
    disk: &dyn Disk,
    dirs: &[PathBuf],
    superuser: &str,
    supergroup: &str,
    limits: Limits,
) -> Result<(VersionInfo, Namespace, u64), StorageError> {
    let version = read_version(disk, dirs)?;
    let dir = dirs
        .iter()
        .find(|d| disk.exists(&d.join("VERSION")))
        .ok_or_else(|| StorageError::NotFormatted(String::new()))?;
    let (images, segments) = list(disk, dir)?;
    let (image_txid, image_path) =
        images
            .first()
            .cloned()
            .ok_or_else(|| StorageError::Corrupt {
                path: dir.display().to_string(),
                reason: "no fsimage found".into(),
            })?;
    let (mut ns, txid) = read_image(disk, &image_path, superuser, supergroup, limits)?;
    if txid != image_txid {
        return Err(StorageError::Corrupt {
            path: image_path.display().to_string(),
            reason: format!("image says txid {txid}, name says {image_txid}"),
        });
    }
    let replayed = replay(disk, &mut ns, &segments, txid)?;
    info!(image = %image_path.display(), image_txid = txid, replayed = replayed.records, last_txid = replayed.last_txid, "namespace loaded");
    // Close the books on in-progress segments: keep their valid records
    // under a finalized name, drop empty ones.
    for d in dirs {
        let Ok((_, segs)) = list(disk, d) else {
            continue;
        };
        for seg in segs.iter().filter(|s| s.last.is_none()) {
            finalize_segment(disk, d, seg, replayed.last_txid)?;
        }
    }
    Ok((version, ns, replayed.last_txid))
}

fn finalize_segment(
    disk: &dyn Disk,
    dir: &Path,
    seg: &SegmentFile,
    last_txid: u64,
) -> Result<(), StorageError> {
    let data = disk.read(&seg.path).map_err(|e| io_err(&seg.path, e))?;
    let mut pos = 0;
    let mut last = None;
    while let Decoded::Record { txid, size, .. } = decode_record(&data[pos..]) {
        last = Some(txid);
        pos += size;
    }
    match last {
        None => disk
            .remove_file(&seg.path)
            .map_err(|e| io_err(&seg.path, e))?,
        Some(l) => {
            let l = l.min(last_txid);
            let f = disk
                .open_write(&seg.path)
                .map_err(|e| io_err(&seg.path, e))?;
            f.set_len(pos as u64).map_err(|e| io_err(&seg.path, e))?;
            f.sync_all().map_err(|e| io_err(&seg.path, e))?;
            let to = dir.join(format!("edits_{:019}-{:019}", seg.first, l));
            disk.rename(&seg.path, &to).map_err(|e| io_err(&to, e))?;
        }
    }
    disk.sync_dir(dir).map_err(|e| io_err(dir, e))
}

/// Deletes images beyond the newest `keep` and segments wholly covered by
/// the oldest image kept.
///
/// # Errors
/// I/O errors.
pub fn purge(disk: &dyn Disk, dir: &Path, keep: usize) -> Result<(), StorageError> {
    let (images, segments) = list(disk, dir)?;
    let Some((oldest_kept, _)) = images.get(keep.max(1) - 1).or(images.last()).cloned() else {
        return Ok(());
    };
    for (t, p) in images.iter().skip(keep.max(1)) {
        let _ = t;
        disk.remove_file(p).map_err(|e| io_err(p, e))?;
    }
    for s in segments {
        if s.last.is_some_and(|l| l <= oldest_kept) {
            disk.remove_file(&s.path).map_err(|e| io_err(&s.path, e))?;
        }
    }
    Ok(())
}

/// Builds a checkpoint in the background, the way HDFS's checkpointer
/// does: loads the newest image of `dir` into a namespace of its own,
/// replays the finalized segments up to `up_to`, writes `fsimage_<up_to>`
/// and purges what it makes redundant. Touches nothing the running
/// NameNode holds, so it needs no lock.
///
/// # Errors
/// As [`read_image`], [`replay`] and [`write_image`].
pub fn checkpoint_from_disk(
    disk: &dyn Disk,
    dir: &Path,
    up_to: u64,
    superuser: &str,
    supergroup: &str,
    limits: Limits,
    keep: usize,
) -> Result<PathBuf, StorageError> {
    let (images, segments) = list(disk, dir)?;
    let (_, image) = images
        .iter()
        .find(|(t, _)| *t <= up_to)
        .cloned()
        .ok_or_else(|| StorageError::Corrupt {
            path: dir.display().to_string(),
            reason: "no image to start a checkpoint from".into(),
        })?;
    let (mut ns, txid) = read_image(disk, &image, superuser, supergroup, limits)?;
    if txid == up_to {
        return Ok(image);
    }
    let finalized: Vec<SegmentFile> = segments
        .into_iter()
        .filter(|s| s.last.is_some_and(|l| l <= up_to))
        .collect();
    let replayed = replay(disk, &mut ns, &finalized, txid)?;
    if replayed.last_txid != up_to {
        return Err(StorageError::Corrupt {
            path: dir.display().to_string(),
            reason: format!(
                "segments end at txid {}, expected {up_to}",
                replayed.last_txid
            ),
        });
    }
    let path = write_image(disk, dir, up_to, &ns)?;
    purge(disk, dir, keep)?;
    Ok(path)
}

/// Name of the segment that starts at `first`.
pub fn inprogress_name(first: u64) -> String {
    format!("edits_inprogress_{first:019}")
}

/// Appends records to a vector (tests and images).
pub fn encode_edits(edits: &[(u64, Edit)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (t, e) in edits {
        encode_record(&mut out, *t, e);
    }
    out
}
