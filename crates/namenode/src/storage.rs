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
use tracing::info;

use crate::journal::codec::{decode_record, encode_record, Decoded};
use crate::namespace::{Edit, Limits, Namespace};
use crate::startup_progress::{Phase, StartupProgress, Step, StepType};

mod replay;
pub(crate) use replay::{is_torn_tail, TailLayout};
pub use replay::{
    recover, replay, replay_with, Recovery, RecoveryChoice, Replayed, SegmentReplayed,
};

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
    let progress = StartupProgress::default();
    load_recording(disk, dirs, superuser, supergroup, limits, &progress)
}

/// [`load`], recording HDFS's loading phases in `progress`.
///
/// # Errors
/// As [`load`].
pub fn load_recording(
    disk: &dyn Disk,
    dirs: &[PathBuf],
    superuser: &str,
    supergroup: &str,
    limits: Limits,
    progress: &StartupProgress,
) -> Result<(VersionInfo, Namespace, u64), StorageError> {
    let (version, (image_txid, image_path), segments) = newest_image(disk, dirs)?;
    progress.begin_phase(Phase::LoadingFsImage);
    let began = std::time::Instant::now();
    let (mut ns, txid) = read_image(disk, &image_path, superuser, supergroup, limits)?;
    record_image_load(progress, disk, &image_path, &ns, began);
    if txid != image_txid {
        return Err(StorageError::Corrupt {
            path: image_path.display().to_string(),
            reason: format!("image says txid {txid}, name says {image_txid}"),
        });
    }
    progress.begin_phase(Phase::LoadingEdits);
    let replayed = replay(disk, &mut ns, &segments, txid)?;
    for s in replayed.segments.iter().filter(|s| s.expected > 0) {
        progress.add_step(
            Phase::LoadingEdits,
            Step::untyped(s.applied, s.expected, s.began, s.ended).on_file(&s.path, Some(s.bytes)),
        );
    }
    progress.end_phase(Phase::LoadingEdits);
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

/// The identity, the newest image and the segments of the first formatted
/// directory of `dirs`.
fn newest_image(
    disk: &dyn Disk,
    dirs: &[PathBuf],
) -> Result<(VersionInfo, ImageFile, Vec<SegmentFile>), StorageError> {
    let version = read_version(disk, dirs)?;
    let dir = dirs
        .iter()
        .find(|d| disk.exists(&d.join("VERSION")))
        .ok_or_else(|| StorageError::NotFormatted(String::new()))?;
    let (images, segments) = list(disk, dir)?;
    let image = images
        .first()
        .cloned()
        .ok_or_else(|| StorageError::Corrupt {
            path: dir.display().to_string(),
            reason: "no fsimage found".into(),
        })?;
    Ok((version, image, segments))
}

/// HDFS's steps of loading an image: its erasure-coding policies (none
/// here), its inodes, delegation tokens (none kept in images here) and
/// cache pools; the inodes take the whole load's time.
fn record_image_load(
    progress: &StartupProgress,
    disk: &dyn Disk,
    path: &Path,
    ns: &Namespace,
    began: std::time::Instant,
) {
    let ended = std::time::Instant::now();
    let inodes = ns.inode_count() as u64;
    let pools = ns.cache().pools().len() as u64;
    progress.set_phase_file(
        Phase::LoadingFsImage,
        path,
        disk.file_len(path).unwrap_or(0),
    );
    for step in [
        Step::typed(StepType::ErasureCodingPolicies, 0, 0, began, began),
        Step::typed(StepType::Inodes, inodes, inodes, began, ended),
        Step::typed(StepType::DelegationTokens, 0, 0, ended, ended),
        Step::typed(StepType::CachePools, pools, pools, ended, ended),
    ] {
        progress.add_step(Phase::LoadingFsImage, step);
    }
    progress.end_phase(Phase::LoadingFsImage);
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
