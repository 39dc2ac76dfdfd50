//! Recovery mode for a Raft member's log (`cairn namenode -recover` on a
//! NameNode of a Raft nameservice), as the file journal's
//! [`crate::storage::recover`]: the log is read record by record and the
//! operator decides at damage that a normal start refuses. Raft entries
//! must follow each other, so nothing after the damage can be kept: the
//! log is cut there and the member gets the rest again from the group when
//! it rejoins (it then holds fewer entries than it acknowledged, the risk
//! any `-recover` takes). The damaged file is kept in
//! `recovered-<unix time>/` first; the committed hint is lowered to what
//! is left, a snapshot past the cut stands for what is gone, and a vote
//! this member won is kept uncommitted so it cannot resume leading.

use std::io;
use std::path::Path;

use cairn_common::disk::Disk;
use cairn_common::durable::write_atomic_on;

use super::log_store::{read_meta_file, scan, write_meta_file, Stop, LOG_FILE, META_FILE};
use crate::storage::RecoveryChoice;

/// What recovery did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// The last entry kept in the log file.
    pub last_kept: Option<u64>,
    /// Where the damaged log was copied, when it was cut.
    pub saved_in: Option<std::path::PathBuf>,
}

/// Recovers the Raft log in `dir`, asking `decide` at damage.
///
/// # Errors
/// I/O errors, a damaged meta or snapshot file, or the operator quitting.
pub fn recover(
    disk: &dyn Disk,
    dir: &Path,
    decide: &mut dyn FnMut(&str) -> RecoveryChoice,
) -> io::Result<Recovered> {
    let path = dir.join(LOG_FILE);
    if !disk.exists(&path) {
        return Ok(Recovered {
            last_kept: None,
            saved_in: None,
        });
    }
    let mut meta = read_meta_file(disk, dir)?;
    let snapshot = super::snapshot::read_file(disk, dir)?.and_then(|(m, _)| m.last_log_id);
    let data = disk.read(&path)?;
    // Read as a start reads it; a torn tail a start cuts by itself.
    let scanned = scan(&path, &data, meta.purged, snapshot);
    let last = scanned.last;
    let Some(Stop::Damage(problem)) = scanned.stop else {
        return Ok(Recovered {
            last_kept: last.map(|l| l.index),
            saved_in: None,
        });
    };
    let question = format!(
        "{}: {problem}. A Raft log cannot skip an entry: everything from here on is \
         dropped (the group sends it again)",
        path.display()
    );
    if decide(&question) == RecoveryChoice::Quit {
        return Err(io::Error::other(format!(
            "recovery of {} given up; nothing changed",
            path.display()
        )));
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let saved = dir.join(format!("recovered-{secs}"));
    disk.create_dir_all(&saved)?;
    write_atomic_on(disk, &saved.join(LOG_FILE), &data)?;
    if disk.exists(&dir.join(META_FILE)) {
        write_atomic_on(
            disk,
            &saved.join(META_FILE),
            &disk.read(&dir.join(META_FILE))?,
        )?;
    }
    let f = disk.open_write(&path)?;
    f.set_len(scanned.end as u64)?;
    f.sync_all()?;
    drop(f);
    // What is left: the kept entries, or the snapshot when it reaches
    // further (the entries it covers count as purged).
    meta.purged = scanned.purged;
    if let Some(s) = snapshot {
        if last.is_none_or(|l| l.index <= s.index) && meta.purged.is_none_or(|p| p < s) {
            meta.purged = Some(s);
        }
    }
    let floor = match (last, meta.purged) {
        (Some(l), Some(p)) => Some(l.max(p)),
        (l, p) => l.or(p),
    };
    if meta.committed > floor {
        meta.committed = floor;
    }
    // A leader's vote would make it lead its term again at start (openraft
    // resumes a committed vote for itself) with entries of that term the
    // others have and it no longer does: it keeps the term, as a plain
    // vote, and follows whoever the group elects next.
    if let Some(v) = meta.vote.as_mut() {
        v.committed = false;
    }
    write_meta_file(disk, dir, &meta)?;
    Ok(Recovered {
        last_kept: last.map(|l| l.index),
        saved_in: Some(saved),
    })
}
