//! The one way Cairn writes a file that must survive a crash whole: write a
//! temporary file, fsync it, rename it over the target, fsync the directory.
//! A reader sees the old content or the new one, never a mix.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

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
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::other(format!("{} has no parent directory", path.display())))?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other(format!("{} has no file name", path.display())))?;
    let tmp = dir.join(format!(".{}.tmp", name.to_string_lossy()));
    {
        let mut f = File::create(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    fsync_dir(dir)
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
