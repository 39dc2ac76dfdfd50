//! Starting the kernel's writeback of a file range, without waiting for it
//! and without dropping anything from the page cache: Linux's
//! `sync_file_range(SYNC_FILE_RANGE_WRITE)`, the call HDFS's DataNode makes
//! for `dfs.datanode.sync.behind.writes`.
//!
//! The DataNode first did this with `POSIX_FADV_DONTNEED`, which also starts
//! the range's writeback but then drops the pages of it already written
//! (and drains every CPU's LRU cache to try again), so a read right after an
//! hdfs-native write (which syncs every block, so is written back behind)
//! went to the disk for part of the data just written
//! (docs/datanode-write-path.md). No crate we
//! use wraps `sync_file_range` safely, so this is the DataNode's one
//! `unsafe` call; it is sound for any arguments (see below).

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Asks the kernel to start writing `len` bytes of `file` from `offset` to
/// disk; returns once the writes are queued.
#[allow(unsafe_code)]
pub(crate) fn start(file: &File, offset: u64, len: u64) -> io::Result<()> {
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    // SAFETY: sync_file_range reads and writes none of this process's
    // memory: its arguments are integers, and the descriptor is borrowed
    // from `file`, open for the whole call. Bad arguments are EINVAL/EBADF.
    let rc = unsafe {
        nix::libc::sync_file_range(
            file.as_raw_fd(),
            offset,
            len,
            nix::libc::SYNC_FILE_RANGE_WRITE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn starts_the_writeback_of_a_written_range() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut f = File::create(dir.path().join("blk")).expect("create");
        f.write_all(&[7u8; 1 << 16]).expect("write");
        start(&f, 0, 1 << 16).expect("sync_file_range");
        // Past the end is allowed, as for the syscall.
        start(&f, 1 << 20, 4096).expect("past the end");
    }

    #[test]
    fn a_range_beyond_i64_is_an_error_not_a_wrap() {
        let dir = tempfile::tempdir().expect("temp dir");
        let f = File::create(dir.path().join("blk")).expect("create");
        assert!(start(&f, u64::MAX, 1).is_err());
    }
}
