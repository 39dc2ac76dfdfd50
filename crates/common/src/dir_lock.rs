//! The lock a server takes on each storage directory it uses
//! (`<dir>/in_use.lock`, as HDFS's NameNode and DataNode take): two
//! NameNodes sharing one edit log, or two DataNodes one block directory,
//! would each overwrite what the other wrote, so the second one to start
//! refuses with HDFS's words, "Cannot lock storage <dir>. The directory is
//! already locked".
//!
//! The lock is an exclusive `flock` on the file, held as long as the
//! [`DirLock`] lives; the kernel drops it when the process ends, however it
//! ends, so a crash never leaves a directory locked. The file holds
//! `pid@host` of the holder (HDFS's JVM name) for the operator, and is left
//! in place on release: deleting it would let a process that opened the old
//! file and one that creates a new one both hold "the" lock.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{Flock, FlockArg};

/// The lock file's name in a storage directory (HDFS's).
pub const LOCK_FILE: &str = "in_use.lock";

/// A held lock on one storage directory; released when dropped.
#[derive(Debug)]
pub struct DirLock {
    dir: PathBuf,
    _file: Flock<File>,
}

impl DirLock {
    /// The directory this lock holds.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Why a directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum DirLockError {
    #[error("Cannot lock storage {dir}. The directory is already locked{holder}")]
    Locked { dir: String, holder: String },
    #[error("Cannot lock storage {dir}: {source}")]
    Io { dir: String, source: io::Error },
}

/// Takes the lock of `dir`, which must exist; fails at once, without
/// waiting, when another process (or another lock in this one) holds it.
///
/// # Errors
/// [`DirLockError::Locked`] naming the holder when it is held, or the I/O
/// error that kept the lock file from being opened.
pub fn lock(dir: &Path) -> Result<DirLock, DirLockError> {
    let path = dir.join(LOCK_FILE);
    let io_err = |source: io::Error| DirLockError::Io {
        dir: dir.display().to_string(),
        source,
    };
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(io_err)?;
    let mut locked = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(locked) => locked,
        Err((_, Errno::EWOULDBLOCK)) => {
            let holder = std::fs::read_to_string(&path)
                .ok()
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
                .map(|h| format!(" (by {h})"))
                .unwrap_or_default();
            return Err(DirLockError::Locked {
                dir: dir.display().to_string(),
                holder,
            });
        }
        Err((_, errno)) => return Err(io_err(io::Error::from(errno))),
    };
    let holder = format!("{}@{}\n", std::process::id(), crate::web::hostname());
    locked.set_len(0).map_err(io_err)?;
    locked.write_all(holder.as_bytes()).map_err(io_err)?;
    Ok(DirLock {
        dir: dir.to_path_buf(),
        _file: locked,
    })
}

/// Locks every directory of `dirs` that exists (one that does not is left
/// to whoever reads it to report), in order; on failure the locks taken so
/// far are released.
///
/// # Errors
/// As [`lock`], for the first directory that cannot be locked.
pub fn lock_existing(dirs: &[PathBuf]) -> Result<Vec<DirLock>, DirLockError> {
    dirs.iter()
        .filter(|d| d.is_dir())
        .map(|d| lock(d))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = lock(dir.path()).expect("first lock");
        assert_eq!(first.dir(), dir.path());
        let holder = std::fs::read_to_string(dir.path().join(LOCK_FILE)).expect("lock file");
        assert!(
            holder.starts_with(&format!("{}@", std::process::id())),
            "{holder}"
        );
        let err = lock(dir.path()).expect_err("second lock while the first is held");
        let text = err.to_string();
        assert!(
            text.starts_with(&format!(
                "Cannot lock storage {}. The directory is already locked (by {}@",
                dir.path().display(),
                std::process::id()
            )),
            "{text}"
        );
        drop(first);
        let again = lock(dir.path()).expect("lock after release");
        drop(again);
        assert!(dir.path().join(LOCK_FILE).exists(), "the file stays");
    }

    #[test]
    fn missing_directories_are_skipped_and_a_failure_releases_the_rest() {
        let a = tempfile::tempdir().expect("tempdir");
        let b = tempfile::tempdir().expect("tempdir");
        let missing = a.path().join("not-there");
        let dirs = vec![a.path().to_path_buf(), missing, b.path().to_path_buf()];
        let held = lock_existing(&dirs).expect("locks");
        assert_eq!(held.len(), 2);
        let err = lock_existing(&dirs).expect_err("held already");
        assert!(matches!(err, DirLockError::Locked { .. }), "{err}");
        let only_b = lock(b.path());
        assert!(only_b.is_err(), "b is still held by the first set");
        drop(held);
        let b_again = lock(b.path()).expect("b after release");
        let err = lock_existing(&dirs).expect_err("b held");
        assert!(err.to_string().contains(&b.path().display().to_string()));
        drop(b_again);
        assert_eq!(lock_existing(&dirs).expect("all free").len(), 2);
    }
}
