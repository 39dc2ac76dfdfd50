//! READ_BLOCK without copying the data through the DataNode: each packet's
//! header and stored checksums are written to the socket, then its data
//! goes from the block file to the socket with `sendfile(2)`, page-cache
//! pages handed to TCP as they are (HDFS's `transferTo`). Profiles of
//! 4-thread reads put two thirds of the DataNode's CPU in the copy into
//! the packet buffer and the copy out of it; this path does neither.
//!
//! Used when the client asked for checksums, and so verifies every chunk
//! itself: the DataNode does not read the data, so it does not verify it
//! either (as HDFS's DataNode does not). A chunk that fails the client's
//! check is reported back (the Java client's `ERROR_CHECKSUM` status: the
//! replica is checked at once) and is found by the block scanner in any
//! case. A client that reads without checksums gets the verifying copy
//! path ([`super::read`]), so no chunk reaches a client unchecked.
//!
//! `sendfile` may wait for the disk, so batches are sent from a blocking
//! thread, on a duplicate of the connection's descriptor (non-blocking, as
//! tokio left it): a full socket buffer is waited for with `poll(2)`, up
//! to the socket write timeout.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::socket::MsgFlags;

use crate::storage::{ReadError, ReplicaReader};

use super::packet::{encode_prefix, header, prefix_len};

/// Why a zero-copy batch stopped.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The replica could not be read (a bad range, or its files failed or
    /// were cut short).
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The connection failed or the reader went away.
    #[error("sending a read packet: {0}")]
    Socket(std::io::Error),
    #[error("sending a read packet: timed out")]
    Timeout,
}

/// The packets of `from..to` (`per_packet` data bytes each, sequence
/// numbers from `seqno`) sent on `sock`. Returns how many packets went.
///
/// # Errors
/// [`SendError`]; what was sent before the error stays sent.
pub(crate) fn send_batch(
    reader: &ReplicaReader,
    sock: &OwnedFd,
    span: (u64, u64),
    per_packet: u64,
    seqno: i64,
    limit: Duration,
) -> Result<i64, SendError> {
    let (from, to) = span;
    let mut head = Vec::new();
    let mut pos = from;
    let mut packets = 0;
    while pos < to {
        let end = (pos + per_packet).min(to);
        let n = reader.range_len(pos, end)?;
        let sum_len = reader.checksum().checksum_len(n);
        let hdr = header(pos, seqno + packets, false, n, false);
        let prefix = prefix_len(&hdr);
        head.clear();
        head.resize(prefix + sum_len, 0);
        let (mut pre, sums) = head.split_at_mut(prefix);
        encode_prefix(&hdr, sum_len, n, &mut pre);
        reader.read_checksums(pos / u64::from(reader.checksum().bytes_per_checksum), sums)?;
        let deadline = Instant::now() + limit;
        send_all(sock, &head, deadline)?;
        send_file(sock, reader, pos, n, deadline)?;
        pos = end;
        packets += 1;
    }
    Ok(packets)
}

/// Writes all of `bytes`, telling TCP that more follows (the packet's
/// data), so header and data leave in the same segments.
fn send_all(sock: &OwnedFd, mut bytes: &[u8], deadline: Instant) -> Result<(), SendError> {
    while !bytes.is_empty() {
        match nix::sys::socket::send(
            sock.as_raw_fd(),
            bytes,
            MsgFlags::from_bits_retain(nix::libc::MSG_MORE),
        ) {
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::EAGAIN) => wait_writable(sock, deadline)?,
            Err(Errno::EINTR) => {}
            Err(e) => return Err(SendError::Socket(e.into())),
        }
    }
    Ok(())
}

/// Sends `len` bytes of the block file from `at` with `sendfile`.
fn send_file(
    sock: &OwnedFd,
    reader: &ReplicaReader,
    at: u64,
    len: usize,
    deadline: Instant,
) -> Result<(), SendError> {
    let cut_short = || {
        SendError::Read(reader.io_error(std::io::Error::from(std::io::ErrorKind::UnexpectedEof)))
    };
    let mut offset = i64::try_from(at).map_err(|_| cut_short())?;
    let mut left = len;
    while left > 0 {
        match nix::sys::sendfile::sendfile(sock, reader.data_file(), Some(&mut offset), left) {
            // The file ends before the visible length: cut short under us.
            Ok(0) => return Err(cut_short()),
            Ok(n) => left -= n,
            Err(Errno::EAGAIN) => wait_writable(sock, deadline)?,
            Err(Errno::EINTR) => {}
            // EPIPE / ECONNRESET: the reader went away; EIO and the like
            // come from the file, which the caller tells apart by
            // checking the replica.
            Err(e @ (Errno::EPIPE | Errno::ECONNRESET | Errno::ENOTCONN)) => {
                return Err(SendError::Socket(e.into()))
            }
            Err(e) => return Err(SendError::Read(reader.io_error(e.into()))),
        }
    }
    Ok(())
}

/// Waits until the socket takes more bytes, or fails, or the deadline.
fn wait_writable(sock: &OwnedFd, deadline: Instant) -> Result<(), SendError> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(SendError::Timeout);
        }
        let ms = u16::try_from(left.as_millis()).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(sock.as_fd(), PollFlags::POLLOUT)];
        match nix::poll::poll(&mut fds, PollTimeout::from(ms)) {
            Ok(0) | Err(Errno::EINTR) => continue,
            Ok(_) => {
                let got = fds[0].revents().unwrap_or(PollFlags::empty());
                if got.intersects(PollFlags::POLLERR | PollFlags::POLLHUP | PollFlags::POLLNVAL)
                    && !got.contains(PollFlags::POLLOUT)
                {
                    return Err(SendError::Socket(std::io::Error::from(
                        std::io::ErrorKind::ConnectionReset,
                    )));
                }
                return Ok(());
            }
            Err(e) => return Err(SendError::Socket(e.into())),
        }
    }
}
