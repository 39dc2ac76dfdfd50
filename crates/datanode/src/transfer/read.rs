//! READ_BLOCK: sends exactly the checksum chunks that cover the requested
//! range (PROTOCOL.md §3.7; seeds 003 and 004).
//!
//! The range `[offset, offset + len)` is widened to chunk boundaries —
//! `chunkOffset` is the chunk-aligned start, the end is rounded up to a chunk
//! and capped at the replica's length — and nothing beyond it is read or
//! sent. Data goes out in packets of about 64 KiB (`read.packet-bytes`,
//! whole chunks) with the checksums from the meta file, then the empty last
//! packet. Clients that verify checksums mostly get the data with
//! `sendfile` (`transfer::zero_copy`; see `cache_helps` for when it is
//! copied instead); copied data is verified before it goes out, and the
//! disk read of the next batch overlaps the send of the current one.
//!
//! While the DataNode waits to send, the connection is also watched for the
//! reader going away: a closed connection stops the read at once, instead
//! of filling socket buffers nobody reads. Bytes from the reader before the
//! read is over are left for the status read (copied reads) or read as the
//! status at once (zero-copy: a mid-read ERROR_CHECKSUM has the replica
//! checked and stops the read). Bytes requested and bytes sent are counted per DataNode
//! ([`crate::metrics`]).

use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use cairn_proto::hadoop::hdfs::{ClientReadStatusProto, OpReadBlockProto, Status};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tracing::{debug, info, warn};

use crate::checksum::{ChecksumKind, DataChecksum};
use crate::ids::{GenStamp, ReplicaKey};
use crate::metrics::{GaugeGuard, Metrics};
use crate::storage::{ReadError, ReplicaReader, ReplicaState, StorageError};
use crate::Shared;

use super::ack::{error_response, read_ok};
use super::packet::{
    encode_packet, encode_prefix, header, prefix_len, read_delimited, PacketError,
};
use super::{timed, After, Conn, XferError};

/// How long a read of a replica being written waits for the bytes it asks
/// for to reach the disk (Hadoop's BlockSender waits up to 3 s too).
const RBW_WAIT: Duration = Duration::from_secs(3);

/// The aligned range to send for a request: `(start, end)`.
pub fn aligned_range(offset: u64, len: u64, bpc: u64, replica_len: u64) -> (u64, u64) {
    let bpc = bpc.max(1);
    let start = offset - offset % bpc;
    if len == 0 {
        return (start, start);
    }
    let end = (offset + len)
        .div_ceil(bpc)
        .saturating_mul(bpc)
        .min(replica_len);
    (start, end)
}

/// Serves one READ_BLOCK; keeps the connection when the client confirms.
pub(crate) async fn read_block(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    req: OpReadBlockProto,
) -> Result<After, XferError> {
    let cfg = &shared.config;
    let m = &shared.metrics;
    let wt = cfg.socket_write_timeout;
    let block = &req.header.base_header.block;
    let key = match ReplicaKey::of_block(block) {
        Ok(k) => k,
        Err(msg) => {
            conn.send(&error_response(Status::Error, msg), wt).await?;
            return Ok(After::Close);
        }
    };
    let min_gs = GenStamp(block.generation_stamp);
    let (offset, len) = (req.offset, req.len);
    let want_end = offset.saturating_add(len);

    // A replica being written may not have the requested bytes on disk yet
    // (an early-acked packet still in the disk queue): wait a little.
    if let Some(replica) = shared.storage.get(&key) {
        if let ReplicaState::Rbw(rbw) = &replica.state {
            if rbw.progress().on_disk < want_end {
                let mut rx = rbw.subscribe();
                let _ =
                    tokio::time::timeout(RBW_WAIT, rx.wait_for(|p| p.on_disk >= want_end)).await;
            }
        }
    }
    let storage = shared.storage.clone();
    let k2 = key.clone();
    let opened = tokio::task::spawn_blocking(move || storage.open_reader(&k2, min_gs))
        .await
        .map_err(|e| XferError::Protocol(format!("open task failed: {e}")))?;
    let reader = match opened {
        Ok(r) => r,
        Err(e) => {
            debug!(replica = %key, error = %e, "READ_BLOCK refused");
            if let StorageError::Io { .. } = e {
                // In the map but its files cannot be opened.
                crate::scanner::check_replica(shared, key.clone(), format!("read: {e}"));
            }
            conn.send(&error_response(Status::Error, e.to_string()), wt)
                .await?;
            return Ok(After::Close);
        }
    };
    let replica_len = reader.len();
    if offset > replica_len || want_end > replica_len || offset.checked_add(len).is_none() {
        let msg = format!(
            "Offset {offset} and length {len} don't match block {key} ( blockLen {replica_len} )"
        );
        conn.send(&error_response(Status::Error, msg), wt).await?;
        return Ok(After::Close);
    }
    let stored = reader.checksum();
    let bpc = u64::from(stored.bytes_per_checksum);
    let (start, end) = aligned_range(offset, len, bpc, replica_len);
    let send_sums = req.send_checksums.unwrap_or(true);
    let wire = if send_sums {
        stored
    } else {
        DataChecksum {
            kind: ChecksumKind::Null,
            bytes_per_checksum: stored.bytes_per_checksum,
        }
    };
    conn.send(&read_ok(wire, start), wt).await?;
    Metrics::inc(&m.read_ops);
    Metrics::add(&m.read_bytes_requested, len);

    let outcome = {
        let _sending = GaugeGuard::new(&m.reads_active);
        send_packets(shared, conn, &key, Arc::new(reader), start, end, send_sums).await
    };
    match outcome {
        Ok(()) => {}
        Err(e) => {
            Metrics::inc(&m.read_ops_aborted);
            debug!(replica = %key, error = %e, "read ended early");
            return Ok(After::Close);
        }
    }
    // The client's verdict: CHECKSUM_OK (verified) or SUCCESS (did not).
    let status = timed(
        cfg.socket_read_timeout,
        "waiting for the client's read status",
        read_delimited::<ClientReadStatusProto, _>(&mut conn.rd, 64),
    )
    .await;
    match status {
        Ok(s) if s.status == Status::ChecksumOk as i32 || s.status == Status::Success as i32 => {
            Ok(After::KeepAlive)
        }
        Ok(s) => {
            if s.status == Status::ErrorChecksum as i32 {
                client_found_bad_chunk(shared, conn, &key);
            }
            Ok(After::Close)
        }
        Err(XferError::Packet(PacketError::Eof)) => Ok(After::Close),
        Err(e) => {
            debug!(error = %e, "no read status from the client");
            Ok(After::Close)
        }
    }
}

/// Packets built per hand-off to a blocking thread: one at first, doubling
/// up to this many. A reader that leaves after a few KiB (the Java client's
/// seek+read asks for the rest of the block, reads 4 KiB and hangs up) costs
/// about one packet; a streaming read pays one hand-off per ~1 MiB instead
/// of one per packet.
const MAX_PACKETS_PER_BATCH: u64 = 16;

/// The socket send buffer while a read starts (the kernel doubles it), and
/// once the reader has taken [`STREAMING_AFTER`] bytes. Left to autotuning,
/// the buffer of a long read grows to megabytes that a reader who hangs up
/// after a few KiB makes us read, checksum and copy for nothing.
const START_SEND_BUFFER: usize = 64 * 1024;
const STREAMING_SEND_BUFFER: usize = 1024 * 1024;
const STREAMING_AFTER: u64 = 1024 * 1024;

fn set_send_buffer(conn: &Conn, bytes: usize) {
    let stream: &tokio::net::TcpStream = conn.wr.as_ref();
    // Best effort: only the amount of wasted work depends on it.
    let _ = nix::sys::socket::setsockopt(stream, nix::sys::socket::sockopt::SndBuf, &bytes);
}

/// Consecutive packets built in one buffer, ready to send.
struct Batch {
    buf: Vec<u8>,
    /// Bytes of `buf` holding packets (the rest is spare room from before).
    used: usize,
    from: u64,
    to: u64,
    packets: i64,
}

/// Builds the packets for `from..to` (`per_packet` bytes of data each,
/// sequence numbers from `seqno`) into `buf`, reading data and checksums
/// straight into place: no copy between the disk read and the socket write.
#[allow(clippy::too_many_arguments)] // one batch's complete description
fn build_batch(
    reader: &ReplicaReader,
    from: u64,
    to: u64,
    per_packet: u64,
    seqno: i64,
    send_sums: bool,
    verify: Option<crate::checksum::Crc32cImpl>,
    mut buf: Vec<u8>,
) -> Result<Batch, ReadError> {
    let mut used = 0;
    let mut pos = from;
    let mut packets = 0;
    let mut scratch = Vec::new();
    while pos < to {
        let end = (pos + per_packet).min(to);
        let n = reader.range_len(pos, end)?;
        let sum_len = reader.checksum().checksum_len(n);
        let wire_sums = if send_sums { sum_len } else { 0 };
        let hdr = header(pos, seqno + packets, false, n, false);
        let prefix = prefix_len(&hdr);
        let total = prefix + wire_sums + n;
        if buf.len() < used + total {
            // Grows (and zeroes) only the first time: buffers are reused.
            buf.resize(used + total, 0);
        }
        let (mut head, body) = buf[used..used + total].split_at_mut(prefix);
        encode_prefix(&hdr, wire_sums, n, &mut head);
        if send_sums {
            let (sums, data) = body.split_at_mut(sum_len);
            reader.read_into(pos, end, verify, data, sums)?;
        } else {
            // The checksums are still read (and verified with `verify`),
            // just not sent.
            scratch.resize(sum_len, 0);
            reader.read_into(pos, end, verify, body, &mut scratch)?;
        }
        used += total;
        pos = end;
        packets += 1;
    }
    Ok(Batch {
        buf,
        used,
        from,
        to: pos,
        packets,
    })
}

async fn send_packets(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    key: &ReplicaKey,
    reader: Arc<ReplicaReader>,
    start: u64,
    end: u64,
    send_sums: bool,
) -> Result<(), XferError> {
    let cfg = &shared.config;
    let bpc = u64::from(reader.checksum().bytes_per_checksum);
    let per_packet = (cfg.read_packet_bytes as u64 / bpc).max(1) * bpc;
    let span = Span {
        start,
        end,
        per_packet,
    };
    if span.is_long() {
        set_send_buffer(conn, START_SEND_BUFFER);
    }
    let zero_copy = cfg.read_zero_copy && super::zero_copy::supported();
    let seqno = if zero_copy && send_sums && !cache_helps(shared, conn) {
        send_zero_copy(shared, conn, key, reader, span).await?
    } else {
        send_copied(shared, conn, key, reader, span, send_sums).await?
    };
    let mut buf = BytesMut::new();
    encode_packet(&header(end, seqno, true, 0, false), &[], &[], &mut buf);
    send_watching(conn, &buf, cfg.socket_write_timeout).await?;
    Metrics::inc(&shared.metrics.read_packets_sent);
    Ok(())
}

/// Whether copying the data through the DataNode serves this reader
/// better than `sendfile` does: a reader on this host (its copy out of
/// the socket then reads data the DataNode's copy just brought into the
/// CPU's caches, not memory) while this is the only read here, so the
/// DataNode's CPU is to spare. Under concurrent reads, and for readers
/// elsewhere, saving the DataNode's two copies wins.
fn cache_helps(shared: &Shared, conn: &Conn) -> bool {
    if !shared.config.read_local_copy {
        return false;
    }
    let local = conn
        .wr
        .local_addr()
        .is_ok_and(|ours| ours.ip() == conn.peer.ip());
    local && Metrics::get(&shared.metrics.reads_active) <= 1
}

/// The chunk-aligned range a read sends, and its packets' data size.
#[derive(Clone, Copy)]
struct Span {
    start: u64,
    end: u64,
    per_packet: u64,
}

impl Span {
    /// A read long enough to start with a small send buffer.
    fn is_long(&self) -> bool {
        self.end - self.start > STREAMING_AFTER
    }

    /// Where a batch of `packets` packets from `from` ends.
    fn batch_end(&self, from: u64, packets: u64) -> u64 {
        from.saturating_add(packets.saturating_mul(self.per_packet))
            .min(self.end)
    }
}

/// After a batch went out: counts it, and lets the send buffer grow once
/// the reader has shown it streams.
fn batch_sent(shared: &Shared, conn: &Conn, span: Span, from: u64, to: u64, packets: i64) {
    let m = &shared.metrics;
    Metrics::add(&m.read_bytes_sent, to - from);
    Metrics::add(&m.read_packets_sent, packets as u64);
    if span.is_long() && from - span.start < STREAMING_AFTER && to - span.start >= STREAMING_AFTER {
        set_send_buffer(conn, STREAMING_SEND_BUFFER);
    }
}

/// A replica that failed to read while serving a client: counted, logged
/// and checked.
fn read_failed(shared: &Arc<Shared>, conn: &Conn, key: &ReplicaKey, e: ReadError) -> XferError {
    Metrics::inc(&shared.metrics.read_checksum_errors);
    warn!(replica = %key, peer = %conn.peer, error = %e, "cannot read a replica for a client");
    crate::scanner::check_replica(shared, key.clone(), format!("read: {e}"));
    XferError::Read(e)
}

/// The data packets of `span` built here (read, optionally verified, and
/// copied into packet buffers) while the previous batch is sent. Returns
/// the next sequence number.
async fn send_copied(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    key: &ReplicaKey,
    reader: Arc<ReplicaReader>,
    span: Span,
    send_sums: bool,
) -> Result<i64, XferError> {
    let cfg = &shared.config;
    let verify = cfg.read_verify_checksums.then_some(cfg.write_path.crc);
    let spawn = |from: u64, packets: u64, seqno: i64, buf: Vec<u8>| {
        let reader = reader.clone();
        let to = span.batch_end(from, packets);
        let per_packet = span.per_packet;
        tokio::task::spawn_blocking(move || {
            build_batch(&reader, from, to, per_packet, seqno, send_sums, verify, buf)
        })
    };
    let mut batch_packets = 1;
    let mut next = (span.start < span.end).then(|| spawn(span.start, batch_packets, 0, Vec::new()));
    let mut spare = Vec::new();
    let mut seqno = 0i64;
    while let Some(pending) = next.take() {
        let built = pending
            .await
            .map_err(|e| XferError::Protocol(format!("read task failed: {e}")))?;
        let batch = built.map_err(|e| read_failed(shared, conn, key, e))?;
        seqno += batch.packets;
        // Build the next batch while this one is sent.
        if batch.to < span.end {
            batch_packets = (batch_packets * 2).min(MAX_PACKETS_PER_BATCH);
            next = Some(spawn(
                batch.to,
                batch_packets,
                seqno,
                std::mem::take(&mut spare),
            ));
        }
        send_watching(conn, &batch.buf[..batch.used], cfg.socket_write_timeout).await?;
        batch_sent(shared, conn, span, batch.from, batch.to, batch.packets);
        spare = batch.buf;
    }
    Ok(seqno)
}

/// The data packets of `span` sent with `sendfile` ([`super::zero_copy`]),
/// in batches growing like [`send_copied`]'s, each pushed from a blocking
/// thread until the socket is full, then waited for here. Returns the next
/// sequence number.
async fn send_zero_copy(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    key: &ReplicaKey,
    reader: Arc<ReplicaReader>,
    span: Span,
) -> Result<i64, XferError> {
    use super::zero_copy::{Batch, Pushed, SendError};
    let limit = shared.config.socket_write_timeout;
    let stream: &tokio::net::TcpStream = conn.wr.as_ref();
    let sock = std::os::fd::AsFd::as_fd(stream)
        .try_clone_to_owned()
        .map_err(|source| XferError::Io {
            what: "duplicating the connection for sendfile",
            source,
        })?;
    let sock = Arc::new(sock);
    let mut batch_packets = 1;
    let mut seqno = 0i64;
    let mut from = span.start;
    while from < span.end {
        let to = span.batch_end(from, batch_packets);
        let mut batch = Batch::new(from, to, span.per_packet, seqno);
        loop {
            let (r, s) = (reader.clone(), sock.clone());
            let (back, pushed) = tokio::task::spawn_blocking(move || {
                let pushed = batch.push(&r, &s);
                (batch, pushed)
            })
            .await
            .map_err(|e| XferError::Protocol(format!("read task failed: {e}")))?;
            batch = back;
            match pushed {
                Ok(Pushed::Done) => break,
                Ok(Pushed::Full) => wait_for_room(shared, conn, key, &sock, limit).await?,
                Err(SendError::Read(e)) => return Err(read_failed(shared, conn, key, e)),
                Err(SendError::Socket(source)) => {
                    return Err(XferError::Io {
                        what: "sending a read packet",
                        source,
                    })
                }
            }
        }
        seqno += batch.packets;
        Metrics::add(&shared.metrics.read_bytes_zero_copy, to - from);
        batch_sent(shared, conn, span, from, to, batch.packets);
        from = to;
        batch_packets = (batch_packets * 2).min(MAX_PACKETS_PER_BATCH);
    }
    Ok(seqno)
}

/// Waits until the socket of a zero-copy read takes more bytes, up to the
/// write timeout, while watching the reader: one that closed, or spoke
/// before its read was over, stops the read.
async fn wait_for_room(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    key: &ReplicaKey,
    sock: &std::os::fd::OwnedFd,
    limit: Duration,
) -> Result<(), XferError> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let Conn { rd, wr, .. } = &mut *conn;
        let stream: &tokio::net::TcpStream = wr.as_ref();
        let heard = tokio::select! {
            biased;
            r = tokio::time::timeout_at(deadline, stream.writable()) => match r {
                Err(_) => return Err(XferError::Timeout("sending a read packet")),
                Ok(Err(source)) => return Err(XferError::Io { what: "sending a read packet", source }),
                Ok(Ok(())) => false,
            },
            r = rd.fill_buf() => match r {
                Ok([]) | Err(_) => {
                    info!("reader went away during a read");
                    return Err(XferError::Protocol("reader went away".into()));
                }
                Ok(_) => true,
            },
        };
        if heard {
            return Err(early_status(shared, conn, key).await);
        }
        // tokio's readiness may be stale (the pushes write on another
        // descriptor): ask the socket, and let tokio forget a stale "ready".
        let stream: &tokio::net::TcpStream = conn.wr.as_ref();
        match stream.try_io(tokio::io::Interest::WRITABLE, || {
            super::zero_copy::writable_now(sock)
        }) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(source) => {
                return Err(XferError::Io {
                    what: "sending a read packet",
                    source,
                })
            }
        }
    }
}

/// A reader spoke before its read was over: a client that found a bad
/// chunk answers ERROR_CHECKSUM (the replica is checked at once); any
/// other word stops the read too.
async fn early_status(shared: &Arc<Shared>, conn: &mut Conn, key: &ReplicaKey) -> XferError {
    let status = timed(
        shared.config.socket_read_timeout,
        "reading a status sent during a read",
        read_delimited::<ClientReadStatusProto, _>(&mut conn.rd, 64),
    )
    .await;
    match status {
        Ok(s) if s.status == Status::ErrorChecksum as i32 => {
            client_found_bad_chunk(shared, conn, key);
            XferError::Protocol("the client reported a checksum error".into())
        }
        _ => XferError::Protocol("the reader stopped the read".into()),
    }
}

/// A client answered a read with ERROR_CHECKSUM: counted, logged, and the
/// replica verified in full at once.
fn client_found_bad_chunk(shared: &Arc<Shared>, conn: &Conn, key: &ReplicaKey) {
    Metrics::inc(&shared.metrics.read_client_checksum_errors);
    warn!(replica = %key, peer = %conn.peer, "client reports a checksum error reading this replica");
    crate::scanner::check_replica(
        shared,
        key.clone(),
        "client reported a checksum error".into(),
    );
}

/// Writes `bytes` while watching the read side: a reader that closed its
/// connection (or sends anything before the read is over) stops the read
/// at once.
async fn send_watching(conn: &mut Conn, bytes: &[u8], limit: Duration) -> Result<(), XferError> {
    let Conn { rd, wr, .. } = conn;
    let write = tokio::time::timeout(limit, wr.write_all(bytes));
    tokio::pin!(write);
    let mut watching = true;
    loop {
        tokio::select! {
            r = &mut write => {
                return match r {
                    Ok(Ok(())) => Ok(()),
                    Ok(Err(e)) => Err(XferError::Io { what: "sending a read packet", source: e }),
                    Err(_) => Err(XferError::Timeout("sending a read packet")),
                };
            }
            r = rd.fill_buf(), if watching => {
                match r {
                    Ok([]) | Err(_) => {
                        info!("reader went away during a read");
                        return Err(XferError::Protocol("reader went away".into()));
                    }
                    Ok(_) => {
                        // Bytes before the read is over: leave them for the
                        // status read and stop watching.
                        watching = false;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::aligned_range;

    #[test]
    fn ranges_align_like_the_captures() {
        // hdfs-native read_range(70000, 1000) of a 200000-byte block.
        assert_eq!(aligned_range(70_000, 1000, 512, 200_000), (69_632, 71_168));
        // Whole block.
        assert_eq!(aligned_range(0, 200_000, 512, 200_000), (0, 200_000));
        // Partial last chunk of a replica being written.
        assert_eq!(aligned_range(0, 1000, 512, 1000), (0, 1000));
        assert_eq!(aligned_range(600, 1, 512, 1000), (512, 1000));
        assert_eq!(aligned_range(512, 0, 512, 1000), (512, 512));
    }
}
