//! The file-system calls that metadata durability depends on, behind a
//! trait, so a test can replace the disk with one that loses what was not
//! synced when the power goes ([`sim::SimDisk`], feature `sim-disk`).
//!
//! [`RealDisk`] is `std::fs` plus fallocate. Files are opened once per
//! segment or image, so the dynamic call costs nothing next to the I/O.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

#[cfg(any(test, feature = "sim-disk"))]
pub mod sim;

/// An open file that can be written at offsets and synced.
pub trait DiskFile: Send + Sync {
    /// Writes all of `buf` at `offset` (pwrite).
    ///
    /// # Errors
    /// The I/O error of the write.
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;

    /// Allocates `len` bytes from `from`, extending the file with zeros
    /// (fallocate mode 0).
    ///
    /// # Errors
    /// `Unsupported` where the file system cannot; any other I/O error
    /// (a full disk).
    fn allocate(&self, from: u64, len: u64) -> io::Result<()>;

    /// Cuts or extends the file to `len` bytes.
    ///
    /// # Errors
    /// The I/O error of ftruncate.
    fn set_len(&self, len: u64) -> io::Result<()>;

    /// fdatasync: the data and the size are durable when it returns.
    ///
    /// # Errors
    /// The I/O error of the sync.
    fn sync_data(&self) -> io::Result<()>;

    /// fsync: data and all metadata of the file (not its directory entry).
    ///
    /// # Errors
    /// The I/O error of the sync.
    fn sync_all(&self) -> io::Result<()>;
}

/// The directory and file calls of the metadata writers and loaders.
/// Names become durable only when their directory is synced.
pub trait Disk: Send + Sync {
    /// Creates `path` (truncating it if it exists) for reading and writing.
    ///
    /// # Errors
    /// The I/O error of open.
    fn create(&self, path: &Path) -> io::Result<Box<dyn DiskFile>>;

    /// Opens an existing file for writing.
    ///
    /// # Errors
    /// The I/O error of open (NotFound when it does not exist).
    fn open_write(&self, path: &Path) -> io::Result<Box<dyn DiskFile>>;

    /// Opens an existing file for writes that bypass the page cache and
    /// are durable when they return (`O_DIRECT | O_DSYNC`): one system
    /// call and one device flush (or a FUA write) a batch, where a
    /// buffered write and fdatasync dirty, write back and flush pages.
    /// Every write through it must start at a multiple of
    /// [`DIRECT_ALIGN`], be a multiple of it long, and come from a buffer
    /// at such an address ([`aligned_window`]); `sync_data` on it is not
    /// needed. `None` where the file system (or this disk) cannot.
    ///
    /// # Errors
    /// The I/O error of open.
    fn open_direct(&self, _path: &Path) -> io::Result<Option<Box<dyn DiskFile>>> {
        Ok(None)
    }

    /// The whole content of a file.
    ///
    /// # Errors
    /// The I/O error of open or read.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;

    /// `len` bytes of a file from `offset` (a large file read in parts,
    /// each by the thread that needs it). The default reads the whole file.
    ///
    /// # Errors
    /// The I/O error of open or read; `UnexpectedEof` when the file ends
    /// before `offset + len`.
    fn read_at(&self, path: &Path, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let data = self.read(path)?;
        usize::try_from(offset)
            .ok()
            .and_then(|o| data.get(o..o.checked_add(len)?))
            .map(<[u8]>::to_vec)
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))
    }

    /// A file's length in bytes.
    ///
    /// # Errors
    /// The I/O error of stat (the default: of reading the file).
    fn file_len(&self, path: &Path) -> io::Result<u64> {
        Ok(self.read(path)?.len() as u64)
    }

    /// Renames `from` to `to`, replacing `to` atomically.
    ///
    /// # Errors
    /// The I/O error of rename.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;

    /// Unlinks a file.
    ///
    /// # Errors
    /// The I/O error of unlink.
    fn remove_file(&self, path: &Path) -> io::Result<()>;

    /// Creates a directory and its missing parents.
    ///
    /// # Errors
    /// The I/O error of mkdir.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;

    /// fsyncs a directory: the creations, renames and unlinks in it are
    /// durable when it returns.
    ///
    /// # Errors
    /// The I/O error of opening or syncing the directory.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;

    /// The names in a directory (files and directories, unsorted).
    ///
    /// # Errors
    /// The I/O error of listing it.
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>>;

    /// Whether `path` names a file or directory.
    fn exists(&self, path: &Path) -> bool;
}

/// The alignment of direct writes ([`Disk::open_direct`]): offsets,
/// lengths and buffer addresses. 4 KiB covers disks of 512-byte and of
/// 4 KiB logical blocks.
pub const DIRECT_ALIGN: usize = 4096;

/// The part of `buf` that starts at a [`DIRECT_ALIGN`]ed address, `len`
/// bytes long; `None` when `buf` is too short to hold it (give it
/// `len + DIRECT_ALIGN` bytes).
pub fn aligned_window(buf: &mut [u8], len: usize) -> Option<&mut [u8]> {
    let skip = buf.as_ptr().align_offset(DIRECT_ALIGN);
    buf.get_mut(skip..skip.checked_add(len)?)
}

/// The machine's own file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealDisk;

struct RealFile(File);

impl DiskFile for RealFile {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.0.write_all_at(buf, offset)
    }

    fn allocate(&self, from: u64, len: u64) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let off = i64::try_from(from).map_err(|_| io::Error::other("offset overflow"))?;
        let n = i64::try_from(len).map_err(|_| io::Error::other("length overflow"))?;
        match nix::fcntl::fallocate(
            self.0.as_raw_fd(),
            nix::fcntl::FallocateFlags::empty(),
            off,
            n,
        ) {
            Ok(()) => Ok(()),
            Err(nix::errno::Errno::EOPNOTSUPP) => Err(io::ErrorKind::Unsupported.into()),
            Err(e) => Err(io::Error::from(e)),
        }
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }

    fn sync_all(&self) -> io::Result<()> {
        self.0.sync_all()
    }
}

impl Disk for RealDisk {
    fn create(&self, path: &Path) -> io::Result<Box<dyn DiskFile>> {
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        Ok(Box::new(RealFile(file)))
    }

    fn open_write(&self, path: &Path) -> io::Result<Box<dyn DiskFile>> {
        let file = File::options().write(true).open(path)?;
        Ok(Box::new(RealFile(file)))
    }

    fn open_direct(&self, path: &Path) -> io::Result<Option<Box<dyn DiskFile>>> {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = nix::fcntl::OFlag::O_DIRECT | nix::fcntl::OFlag::O_DSYNC;
        match File::options()
            .write(true)
            .custom_flags(flags.bits())
            .open(path)
        {
            Ok(file) => Ok(Some(Box::new(RealFile(file)))),
            // tmpfs and some others refuse O_DIRECT at open.
            Err(e) if e.raw_os_error() == Some(nix::libc::EINVAL) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }

    fn read_at(&self, path: &Path, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let mut buf = vec![0; len];
        File::open(path)?.read_exact_at(&mut buf, offset)?;
        Ok(buf)
    }

    fn file_len(&self, path: &Path) -> io::Result<u64> {
        Ok(std::fs::metadata(path)?.len())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        std::fs::create_dir_all(path)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            names.push(entry?.file_name().to_string_lossy().into_owned());
        }
        Ok(names)
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
}
