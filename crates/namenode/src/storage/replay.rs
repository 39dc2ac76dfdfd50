//! Replaying the edit log's segments onto a namespace: the torn-tail rule
//! that tells a crash mid-write from damage, and recovery mode
//! (`cairn namenode --recover`) that lets an operator decide about damage.

use std::path::PathBuf;

use cairn_common::disk::Disk;
use tracing::{info, warn};

use super::{io_err, list, newest_image, read_image, write_image, SegmentFile, StorageError};
use crate::journal::codec::{decode_record, Decoded};
use crate::namespace::{Limits, Namespace};

/// Where recovery stopped in an in-progress segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replayed {
    pub last_txid: u64,
    pub records: u64,
    /// In-progress segments and the byte length of their valid records
    /// (the torn tail after it was cut).
    pub open_segments: Vec<(PathBuf, u64, u64)>,
    /// Each segment read through, for the startup progress.
    pub segments: Vec<SegmentReplayed>,
}

/// One segment replayed: its file and size, the records it applied of
/// those it should (all, or up to its torn tail), and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentReplayed {
    pub path: PathBuf,
    pub bytes: u64,
    pub applied: u64,
    pub expected: u64,
    pub began: std::time::Instant,
    pub ended: std::time::Instant,
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
        segments: Vec::new(),
    };
    'segments: for (i, seg) in segments.iter().enumerate() {
        if seg.last.is_some_and(|l| l < expected) {
            continue;
        }
        let began = (std::time::Instant::now(), out.records, expected);
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
        let applied = out.records - began.1;
        out.segments.push(SegmentReplayed {
            path: seg.path.clone(),
            bytes: data.len() as u64,
            applied,
            // HDFS's total: the txids the segment should hold from the one
            // expected (an in-progress segment: what it held).
            expected: seg
                .last
                .map_or(applied, |l| (l + 1).saturating_sub(began.2)),
            began: began.0,
            ended: std::time::Instant::now(),
        });
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
    let (_, (_, image_path), segments) = newest_image(disk, dirs)?;
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
