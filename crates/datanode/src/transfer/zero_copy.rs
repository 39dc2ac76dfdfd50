//! READ_BLOCK without copying the data through the DataNode: each packet's
//! header and stored checksums are written to the socket, then its data
//! goes from the block file to the socket with `sendfile(2)`, page-cache
//! pages handed to TCP as they are (HDFS's `transferTo`). Profiles of
//! 4-thread reads put two thirds of the DataNode's CPU in the copy into
//! the packet buffer and the copy out of it; this path does neither.
//!
//! Used when the client asked for checksums, and so verifies every chunk
//! itself: the DataNode does not read the data, so it does not verify it
//! either (as HDFS's DataNode does not). A client that finds a bad chunk
//! reports it to the NameNode (the Java client's reportBadBlocks), which
//! has the replica replaced; a client status of ERROR_CHECKSUM has it
//! checked here at once; the block scanner finds it in any case. A client
//! that reads without checksums gets the verifying copy path
//! (`transfer::read`), so no chunk reaches a client unchecked.
//!
//! `sendfile` may wait for the disk, so a [`Batch`] is pushed from a
//! blocking thread, on a duplicate of the connection's descriptor
//! (non-blocking, as tokio left it), until it is sent or the socket is
//! full; the caller waits for room on the async side (a slow reader holds
//! no thread) and pushes again.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::socket::MsgFlags;

use crate::storage::{ReadError, ReplicaReader};

use super::packet::{encode_prefix, header, prefix_len};

/// Set once `sendfile` is refused for the block files' file system (no
/// splice support): reads copy from then on, as Java's `transferTo`
/// falls back to copying.
static UNSUPPORTED: AtomicBool = AtomicBool::new(false);

/// Whether `sendfile` may be used (not refused before by the file system).
pub(crate) fn supported() -> bool {
    !UNSUPPORTED.load(Ordering::Relaxed)
}

/// Why a batch stopped.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The replica could not be read (a bad range, or its files failed or
    /// were cut short).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The connection failed or the reader went away.
    #[error("sending a read packet: {0}")]
    Socket(std::io::Error),
}

/// How far a push got.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// Every packet of the batch is sent.
    Done,
    /// The socket is full: wait until it takes more, then push again.
    Full,
}

/// The packets of `from..to` (`per_packet` data bytes each, sequence
/// numbers from `seqno`), sent over as many pushes as the reader needs.
#[derive(Debug)]
pub(crate) struct Batch {
    to: u64,
    per_packet: u64,
    seqno: i64,
    /// The current packet's data start, and its data bytes not yet sent.
    pos: u64,
    data_left: usize,
    /// Its header and checksums, and how much of them is sent.
    head: Vec<u8>,
    head_sent: usize,
    /// Packets fully sent.
    pub packets: i64,
}

impl Batch {
    pub(crate) fn new(from: u64, to: u64, per_packet: u64, seqno: i64) -> Self {
        Batch {
            to,
            per_packet,
            seqno,
            pos: from,
            data_left: 0,
            head: Vec::new(),
            head_sent: 0,
            packets: 0,
        }
    }

    /// Sends on until the batch is done or the socket is full. Blocking
    /// (file reads).
    ///
    /// # Errors
    /// [`SendError`]; what was sent before it stays sent.
    pub(crate) fn push(
        &mut self,
        reader: &ReplicaReader,
        sock: &OwnedFd,
    ) -> Result<Pushed, SendError> {
        loop {
            if self.head_sent == self.head.len() && self.data_left == 0 {
                if !self.head.is_empty() {
                    // The packet in hand is out.
                    self.pos += self.per_packet.min(self.to - self.pos);
                    self.packets += 1;
                    self.head.clear();
                    self.head_sent = 0;
                }
                if self.pos >= self.to {
                    return Ok(Pushed::Done);
                }
                self.next_packet(reader)?;
            }
            while self.head_sent < self.head.len() {
                // MSG_MORE: the packet's data follows, in the same segments.
                let flags =
                    MsgFlags::from_bits_retain(nix::libc::MSG_MORE) | MsgFlags::MSG_NOSIGNAL;
                match nix::sys::socket::send(sock.as_raw_fd(), &self.head[self.head_sent..], flags)
                {
                    Ok(n) => self.head_sent += n,
                    Err(Errno::EAGAIN) => return Ok(Pushed::Full),
                    Err(Errno::EINTR) => {}
                    Err(e) => return Err(SendError::Socket(e.into())),
                }
            }
            while self.data_left > 0 {
                let at = self.pos + (self.data_len() - self.data_left) as u64;
                let mut offset = i64::try_from(at).map_err(|_| cut_short(reader))?;
                match nix::sys::sendfile::sendfile(
                    sock,
                    reader.data_file(),
                    Some(&mut offset),
                    self.data_left,
                ) {
                    // The file ends before the visible length: cut short
                    // under us.
                    Ok(0) => return Err(cut_short(reader)),
                    Ok(n) => self.data_left -= n.min(self.data_left),
                    Err(Errno::EAGAIN) => return Ok(Pushed::Full),
                    Err(Errno::EINTR) => {}
                    Err(e) => return Err(sendfile_error(reader, e)),
                }
            }
        }
    }

    /// Data bytes of the packet in hand.
    fn data_len(&self) -> usize {
        usize::try_from(self.per_packet.min(self.to - self.pos)).unwrap_or(usize::MAX)
    }

    /// Builds the next packet's header and checksums.
    fn next_packet(&mut self, reader: &ReplicaReader) -> Result<(), SendError> {
        let end = (self.pos + self.per_packet).min(self.to);
        let n = reader.range_len(self.pos, end)?;
        let sum_len = reader.checksum().checksum_len(n);
        let hdr = header(self.pos, self.seqno + self.packets, false, n, false);
        let prefix = prefix_len(&hdr);
        self.head.resize(prefix + sum_len, 0);
        let (mut pre, sums) = self.head.split_at_mut(prefix);
        encode_prefix(&hdr, sum_len, n, &mut pre);
        let bpc = u64::from(reader.checksum().bytes_per_checksum).max(1);
        reader.read_checksums(self.pos / bpc, sums)?;
        self.data_left = n;
        Ok(())
    }
}

fn cut_short(reader: &ReplicaReader) -> SendError {
    SendError::Read(reader.io_error(std::io::Error::from(std::io::ErrorKind::UnexpectedEof)))
}

/// `sendfile` failed: the file's errors are the replica's (it gets
/// checked); a file system that cannot splice turns zero-copy off; any
/// other error is the connection's.
fn sendfile_error(reader: &ReplicaReader, e: Errno) -> SendError {
    match e {
        Errno::EIO | Errno::EOVERFLOW | Errno::ENXIO | Errno::ESTALE | Errno::EBADF => {
            SendError::Read(reader.io_error(e.into()))
        }
        Errno::EINVAL | Errno::ENOSYS | Errno::EOPNOTSUPP => {
            if !UNSUPPORTED.swap(true, Ordering::Relaxed) {
                tracing::warn!(error = %e, "sendfile refused for block files: reads copy from now on");
            }
            SendError::Socket(e.into())
        }
        other => SendError::Socket(other.into()),
    }
}

/// Whether the socket takes more bytes now (or has failed, which the next
/// push finds out): `WouldBlock` otherwise, for tokio's `try_io`.
pub(crate) fn writable_now(sock: &OwnedFd) -> std::io::Result<()> {
    let mut fds = [PollFd::new(sock.as_fd(), PollFlags::POLLOUT)];
    match nix::poll::poll(&mut fds, PollTimeout::ZERO) {
        Ok(0) => Err(std::io::ErrorKind::WouldBlock.into()),
        Ok(_) => Ok(()),
        Err(e) => Err(e.into()),
    }
}
