//! The one way Cairn writes a file that must survive a crash whole: write a
//! temporary file, fsync it, rename it over the target, fsync the directory.
//! A reader sees the old content or the new one, never a mix.

use std::fs::File;
use std::io;
use std::path::Path;

use crate::disk::{Disk, DiskFile, RealDisk};

/// fsyncs a directory, making renames and creations in it durable.
///
/// # Errors
/// The I/O error of opening or syncing the directory.
pub fn fsync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Replaces `path` with `contents` atomically and durably.
///
/// # Errors
/// Any I/O error; the target is then left as it was.
pub fn write_atomic(path: &Path, contents: &[u8]) -> io::Result<()> {
    write_atomic_on(&RealDisk, path, contents)
}

/// [`write_atomic`] on any [`Disk`].
///
/// # Errors
/// Any I/O error; the target is then left as it was.
pub fn write_atomic_on(disk: &dyn Disk, path: &Path, contents: &[u8]) -> io::Result<()> {
    write_atomic_with(disk, path, |f| f.write_all_at(contents, 0))
}

/// [`write_atomic_on`] of what `fill` writes into the temporary file (a
/// large file written in parts as they are made); `fill` may sync parts
/// early, the whole file is synced after it.
///
/// # Errors
/// Any I/O error, `fill`'s included; the target is then left as it was.
pub fn write_atomic_with(
    disk: &dyn Disk,
    path: &Path,
    fill: impl FnOnce(&dyn DiskFile) -> io::Result<()>,
) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::other(format!("{} has no parent directory", path.display())))?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other(format!("{} has no file name", path.display())))?;
    let tmp = dir.join(format!(".{}.tmp", name.to_string_lossy()));
    {
        let f = disk.create(&tmp)?;
        fill(f.as_ref())?;
        f.sync_all()?;
    }
    disk.rename(&tmp, path)?;
    disk.sync_dir(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_files() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = dir.path().join("VERSION");
        write_atomic(&p, b"one").expect("write");
        write_atomic(&p, b"two").expect("rewrite");
        assert_eq!(std::fs::read(&p).expect("read"), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("ls")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names.len(), 1, "no temp file left: {names:?}");
    }
}
