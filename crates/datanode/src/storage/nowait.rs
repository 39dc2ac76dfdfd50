//! File I/O that never waits for the disk: a replica opened only when
//! every component of its path is in the kernel's lookup cache
//! (`openat2` with `RESOLVE_CACHED`) and read only from the page cache
//! (`preadv2` with `RWF_NOWAIT`). Where the kernel would have to go to the
//! disk (or cannot tell, or lacks either call) the answer is an error of
//! kind [`io::ErrorKind::WouldBlock`] and the caller does the same work the
//! ordinary way on a blocking thread. This lets a small read of cached data
//! be served on the connection's own task, without the two thread
//! hand-offs that cost a lone reader more than the read itself
//! (`transfer::read`).

use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{Mode, OFlags, ResolveFlags, CWD};
use rustix::io::{Errno, ReadWriteFlags};

/// Whether `e` means "not without waiting" (see the module doc), rather
/// than a failure of the file.
pub fn would_block(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::WouldBlock
}

/// Set once either call is found missing or forbidden here: from then on
/// every attempt answers "would block" without a system call, so a kernel
/// or sandbox without them costs one failed call, not one a read.
static UNAVAILABLE: AtomicBool = AtomicBool::new(false);

fn unavailable() -> io::Error {
    io::Error::new(io::ErrorKind::WouldBlock, "no non-waiting file calls here")
}

/// The calls' refusals that only say they cannot do it without waiting:
/// EAGAIN; and a kernel, file system or sandbox without them (ENOSYS for
/// `openat2` before Linux 5.6, EINVAL for `RESOLVE_CACHED` before 5.12,
/// EOPNOTSUPP for `RWF_NOWAIT` where a file system does not take it,
/// EPERM where a seccomp filter forbids the call), which also turn the
/// calls off for the rest of the process.
fn not_now(e: Errno) -> io::Error {
    if e == Errno::AGAIN {
        return io::Error::new(io::ErrorKind::WouldBlock, io::Error::from(e));
    }
    if e == Errno::NOSYS || e == Errno::INVAL || e == Errno::OPNOTSUPP || e == Errno::PERM {
        UNAVAILABLE.store(true, Ordering::Relaxed);
        return io::Error::new(io::ErrorKind::WouldBlock, io::Error::from(e));
    }
    io::Error::from(e)
}

/// Opens `path` for reading if that needs no disk access.
pub fn open_cached(path: &Path) -> io::Result<File> {
    if UNAVAILABLE.load(Ordering::Relaxed) {
        return Err(unavailable());
    }
    rustix::fs::openat2(
        CWD,
        path,
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::CACHED,
    )
    .map(File::from)
    .map_err(not_now)
}

/// Fills `buf` from `file` at `offset` if the bytes are all in the page
/// cache; a file that ends first is `UnexpectedEof`, as `read_exact_at`.
pub fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        let slices = &mut [io::IoSliceMut::new(buf)];
        match rustix::io::preadv2(file, slices, offset, ReadWriteFlags::NOWAIT) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "failed to fill whole buffer",
                ))
            }
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(Errno::INTR) => {}
            Err(e) => return Err(not_now(e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::fs::FileExt;

    /// Goal: a file just written is opened and read from the caches, a
    /// missing one is not opened, and a read past the
    /// end is UnexpectedEof, as the waiting calls answer.
    #[test]
    fn cached_files_open_and_read_like_the_waiting_calls() {
        let d = tempfile::tempdir().expect("tempdir");
        let path = d.path().join("blk");
        let data: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        File::create(&path)
            .and_then(|mut f| f.write_all(&data))
            .expect("write");
        let f = match open_cached(&path) {
            Ok(f) => f,
            // A kernel without openat2's cached lookups: nothing to test.
            Err(e) if would_block(&e) => return,
            Err(e) => panic!("open: {e}"),
        };
        let mut got = vec![0; 4096];
        match read_exact_at(&f, &mut got, 1000) {
            Ok(()) => assert_eq!(got, data[1000..5096]),
            Err(e) => assert!(would_block(&e), "read: {e}"),
        }
        let mut past = vec![0; 100];
        let e = read_exact_at(&f, &mut past, 9950).expect_err("past the end");
        assert!(
            e.kind() == io::ErrorKind::UnexpectedEof || would_block(&e),
            "{e}"
        );
        // A name the lookup cache does not know either way needs the file
        // system: "would block", and the waiting open then says NotFound.
        let missing = open_cached(&d.path().join("none")).expect_err("missing");
        assert!(
            missing.kind() == io::ErrorKind::NotFound || would_block(&missing),
            "{missing}"
        );
        // The same bytes as the waiting read.
        let mut waited = vec![0; 4096];
        f.read_exact_at(&mut waited, 1000).expect("read");
        assert_eq!(waited, data[1000..5096]);
    }
}
