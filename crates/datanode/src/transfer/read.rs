//! READ_BLOCK: sends exactly the checksum chunks that cover the requested
//! range (PROTOCOL.md §3.7; seeds 003 and 004).
//!
//! The range `[offset, offset + len)` is widened to chunk boundaries —
//! `chunkOffset` is the chunk-aligned start, the end is rounded up to a chunk
//! and capped at the replica's length — and nothing beyond it is read or
//! sent. Data goes out in packets of about 64 KiB (`read.packet-bytes`,
//! whole chunks) with the checksums from the meta file, then the empty last
//! packet; copied reads send the response with the first packets and the
//! last packet with the last ones (a small read is one write). A read of
//! one packet is copied; longer reads for clients that verify checksums
//! mostly get the data with `sendfile` (`transfer::zero_copy`; see
//! `cache_helps` for when they are copied instead); copied data is
//! verified before it goes out, and the
//! disk read of the next batch overlaps the send of the current one. A read
//! of at most a packet whose replica files and bytes are all in the
//! kernel's caches is served on the connection's task without waiting
//! (`storage::nowait`); anything else goes to a blocking thread.
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
use prost::Message;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tracing::{debug, info, warn};

use crate::checksum::{ChecksumKind, DataChecksum};
use crate::ids::{GenStamp, ReplicaKey};
use crate::metrics::{GaugeGuard, Metrics};
use crate::storage::{ReadError, ReplicaReader, ReplicaState, Storage, StorageError};
use crate::Shared;

use super::ack::{error_response, read_ok};
use super::packet::{
    encode_packet, encode_prefix, header, prefix_len, read_delimited, PacketError,
};
use super::read_span::{Span, MAX_PACKETS_PER_BATCH, STREAMING_AFTER};
use super::{timed, After, Conn, XferError};

pub use super::read_span::aligned_range;

/// How long a read of a replica being written waits for the bytes it asks
/// for to reach the disk (Hadoop's BlockSender waits up to 3 s too).
const RBW_WAIT: Duration = Duration::from_secs(3);

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
    // How the read goes is decided before its replica is opened, so that
    // a copied read's first packets are built where the open is done (on
    // this task from the caches, or by one hand-off to a blocking thread).
    let _sending = GaugeGuard::new(&m.reads_active);
    let send_sums = req.send_checksums.unwrap_or(true);
    let zero_copy = cfg.read_zero_copy && super::zero_copy::supported();
    let can_zero_copy = zero_copy && send_sums;
    let local_copy = can_zero_copy && cache_helps(shared, conn);
    let way = Way {
        copied: !can_zero_copy || local_copy,
        send_sums,
        packet_bytes: cfg.read_packet_bytes as u64,
        streaming_packet_bytes: cfg.read_streaming_packet_bytes as u64,
        verify: cfg.read_verify_checksums.then_some(cfg.write_path.crc),
    };
    let opening = Opening {
        key: key.clone(),
        min_gs,
        offset,
        len,
        way,
        local_copy,
        copy_one_packet: can_zero_copy && cfg.read_copy_single_packet,
    };
    // A read of at most a packet is tried here first, from the kernel's
    // caches: a lone reader's small read costs less than the two thread
    // hand-offs of doing it on a blocking thread.
    let from_cache = (cfg.read_cached_inline && len <= way.packet_bytes)
        .then(|| opening.open_cached(&shared.storage))
        .flatten();
    let opened = match from_cache {
        Some(opened) => {
            if opened.is_ok() {
                Metrics::inc(&m.read_ops_from_cache);
            }
            opened
        }
        None => {
            let storage = shared.storage.clone();
            tokio::task::spawn_blocking(move || opening.open(&storage, false))
                .await
                .map_err(|e| XferError::Protocol(format!("open task failed: {e}")))?
        }
    };
    let (reader, plan, first, way) = match opened {
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
    let plan = match plan {
        Ok(p) => p,
        Err(replica_len) => {
            let msg = format!(
                "Offset {offset} and length {len} don't match block {key} ( blockLen {replica_len} )"
            );
            conn.send(&error_response(Status::Error, msg), wt).await?;
            return Ok(After::Close);
        }
    };
    Metrics::inc(&m.read_ops);
    Metrics::add(&m.read_bytes_requested, len);
    let reader = Arc::new(reader);
    let outcome = send_packets(shared, conn, &key, reader, plan, way, first).await;
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

/// The socket send buffer while a read starts (the kernel doubles it), and
/// once the reader has taken [`STREAMING_AFTER`] bytes. Left to autotuning,
/// the buffer of a long read grows to megabytes that a reader who hangs up
/// after a few KiB makes us read, checksum and copy for nothing.
const START_SEND_BUFFER: usize = 64 * 1024;
const STREAMING_SEND_BUFFER: usize = 1024 * 1024;

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
/// sequence numbers from `seqno`) into `buf` after its first `used` bytes
/// (what must go out before them), reading data and checksums straight
/// into place: no copy between the disk read and the socket write.
#[allow(clippy::too_many_arguments)] // one batch's complete description
fn build_batch(
    reader: &ReplicaReader,
    from: u64,
    to: u64,
    per_packet: u64,
    seqno: i64,
    send_sums: bool,
    verify: Option<crate::checksum::Crc32cImpl>,
    (mut buf, mut used): (Vec<u8>, usize),
) -> Result<Batch, ReadError> {
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

/// How a read is sent, decided before its replica is opened.
#[derive(Clone, Copy)]
struct Way {
    /// Read into packet buffers here (else `sendfile`; see `cache_helps`).
    copied: bool,
    send_sums: bool,
    /// `read.packet-bytes`: a packet's data, rounded down to whole chunks.
    packet_bytes: u64,
    /// `read.streaming-packet-bytes`: the same once a read streams.
    streaming_packet_bytes: u64,
    /// Verify the stored checksums of copied data with this.
    verify: Option<crate::checksum::Crc32cImpl>,
}

/// What a read sends, once its replica is open.
struct Plan {
    span: Span,
    /// The encoded response to READ_BLOCK: it goes out with the first
    /// packets (one write for a small read, not three: response, data,
    /// last packet).
    head: Vec<u8>,
}

/// The read of `offset..offset + len` from `reader`, or the replica's
/// length when the range does not fit in it.
fn plan_read(reader: &ReplicaReader, offset: u64, len: u64, way: Way) -> Result<Plan, u64> {
    let replica_len = reader.len();
    let fits = offset
        .checked_add(len)
        .is_some_and(|end| offset <= replica_len && end <= replica_len);
    if !fits {
        return Err(replica_len);
    }
    let stored = reader.checksum();
    let bpc = u64::from(stored.bytes_per_checksum);
    let (start, end) = aligned_range(offset, len, bpc, replica_len);
    let wire = if way.send_sums {
        stored
    } else {
        DataChecksum {
            kind: ChecksumKind::Null,
            bytes_per_checksum: stored.bytes_per_checksum,
        }
    };
    let whole_chunks = |bytes: u64| (bytes / bpc).max(1) * bpc;
    let per_packet = whole_chunks(way.packet_bytes);
    Ok(Plan {
        span: Span {
            start,
            end,
            per_packet,
            streaming_per_packet: whole_chunks(way.streaming_packet_bytes).max(per_packet),
        },
        head: read_ok(wire, start).encode_length_delimited_to_vec(),
    })
}

/// What a read is, decided before its replica is opened.
struct Opening {
    key: ReplicaKey,
    min_gs: GenStamp,
    offset: u64,
    len: u64,
    way: Way,
    /// A lone reader on this host (see [`cache_helps`]).
    local_copy: bool,
    /// A read that fits in one packet is copied (zero-copy is possible,
    /// and `read.copy-single-packet` is on).
    copy_one_packet: bool,
}

/// An open replica, what to send of it and how, and a copied read's first
/// batch, already built.
type Opened = (
    ReplicaReader,
    Result<Plan, u64>,
    Option<Result<Batch, ReadError>>,
    Way,
);

impl Opening {
    /// Opens the replica and plans the read; with `cached`, only from the
    /// kernel's caches (`Storage::open_reader_cached`). The reader it
    /// returns waits for the disk again.
    fn open(&self, storage: &Storage, cached: bool) -> Result<Opened, StorageError> {
        let reader = if cached {
            storage.open_reader_cached(&self.key, self.min_gs)?
        } else {
            storage.open_reader(&self.key, self.min_gs)?
        };
        let mut way = self.way;
        let plan = plan_read(&reader, self.offset, self.len, way);
        // Chunks larger than a packet (1 MiB checksum chunks) make every
        // packet one whole chunk: copied, it is verified here and leaves
        // the CPU's caches before the reader copies it out, so the copy
        // no longer pays for itself (a 4 KiB read moves the whole chunk).
        if let Ok(p) = &plan {
            if self.local_copy && p.span.per_packet > way.packet_bytes {
                way.copied = false;
            }
            // A read of one packet is copied whoever reads it: one write
            // of response, data and last packet, where `sendfile` takes
            // three system calls to save copying a few KiB.
            if self.copy_one_packet && p.span.is_single_packet(way.packet_bytes) {
                way.copied = true;
            }
        }
        let first = match &plan {
            Ok(p) if way.copied && p.span.start < p.span.end => Some(first_batch(&reader, p, way)),
            _ => None,
        };
        Ok((reader.waiting(), plan, first, way))
    }

    /// [`Opening::open`] from the kernel's caches, or `None` where that
    /// would have waited for the disk or failed in any way (then it is
    /// done on a blocking thread, from the start, and that attempt's error
    /// is the one the client hears and the scanner is told of).
    fn open_cached(&self, storage: &Storage) -> Option<Result<Opened, StorageError>> {
        match self.open(storage, true) {
            Err(_) | Ok((_, _, Some(Err(_)), _)) => None,
            done => Some(done),
        }
    }
}

/// A copied read's first batch (one packet), after its head.
fn first_batch(reader: &ReplicaReader, plan: &Plan, way: Way) -> Result<Batch, ReadError> {
    let span = plan.span;
    let to = span.batch_end(span.start, 1);
    let buf = (plan.head.clone(), plan.head.len());
    build_batch(
        reader,
        span.start,
        to,
        span.per_packet,
        0,
        way.send_sums,
        way.verify,
        buf,
    )
}

/// Sends the plan's head, its packets and the empty last packet; `first`
/// is a copied read's first batch, if already built.
async fn send_packets(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    key: &ReplicaKey,
    reader: Arc<ReplicaReader>,
    plan: Plan,
    way: Way,
    first: Option<Result<Batch, ReadError>>,
) -> Result<(), XferError> {
    let limit = shared.config.socket_write_timeout;
    let Plan { span, head } = plan;
    if span.is_long() {
        set_send_buffer(conn, START_SEND_BUFFER);
    }
    if way.copied {
        send_copied(shared, conn, key, reader, span, way, (head, first)).await?;
    } else {
        send_watching(conn, &head, limit).await?;
        let seqno = send_zero_copy(shared, conn, key, reader, span).await?;
        send_watching(conn, &last_packet(span, seqno), limit).await?;
    }
    Metrics::inc(&shared.metrics.read_packets_sent);
    Ok(())
}

/// The empty packet that ends a read, numbered `seqno`.
fn last_packet(span: Span, seqno: i64) -> BytesMut {
    let mut buf = BytesMut::new();
    encode_packet(&header(span.end, seqno, true, 0, false), &[], &[], &mut buf);
    buf
}

/// Whether copying the data through the DataNode serves this reader
/// better than `sendfile` does: a reader on this host (its copy out of
/// the socket then reads data the DataNode's copy just brought into the
/// CPU's caches, not memory) while this is the only read here, so the
/// DataNode's CPU is to spare. Under concurrent reads, and for readers
/// elsewhere, saving the DataNode's two copies wins. Once the replica is
/// open, chunks larger than a packet send with `sendfile` too (see
/// `read_block`).
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

/// `head`, then the data packets of `span` built here (read, optionally
/// verified, and copied into packet buffers) while the previous batch is
/// sent, then the last packet: the head goes out with the first batch and
/// the last packet with the last one, so a read of one batch is one write.
/// `first` is the first batch (head included) when already built.
async fn send_copied(
    shared: &Arc<Shared>,
    conn: &mut Conn,
    key: &ReplicaKey,
    reader: Arc<ReplicaReader>,
    span: Span,
    way: Way,
    (head, first): (Vec<u8>, Option<Result<Batch, ReadError>>),
) -> Result<(), XferError> {
    let limit = shared.config.socket_write_timeout;
    let spawn = |from: u64, packets: u64, seqno: i64, buf: (Vec<u8>, usize)| {
        let reader = reader.clone();
        let to = span.batch_end(from, packets);
        let per_packet = span.packet_at(from);
        tokio::task::spawn_blocking(move || {
            build_batch(
                &reader,
                from,
                to,
                per_packet,
                seqno,
                way.send_sums,
                way.verify,
                buf,
            )
        })
    };
    if span.start >= span.end {
        let mut out = head;
        out.extend_from_slice(&last_packet(span, 0));
        return send_watching(conn, &out, limit).await;
    }
    let mut batch_packets = 1;
    let mut ready = first;
    let mut next = None;
    if ready.is_none() {
        let used = head.len();
        next = Some(spawn(span.start, batch_packets, 0, (head, used)));
    }
    let mut spare = Vec::new();
    let mut seqno = 0i64;
    loop {
        let built = match (ready.take(), next.take()) {
            (Some(built), _) => built,
            (None, Some(pending)) => pending
                .await
                .map_err(|e| XferError::Protocol(format!("read task failed: {e}")))?,
            (None, None) => break,
        };
        let mut batch = built.map_err(|e| read_failed(shared, conn, key, e))?;
        seqno += batch.packets;
        if batch.to < span.end {
            // Build the next batch while this one is sent.
            batch_packets = (batch_packets * 2).min(MAX_PACKETS_PER_BATCH);
            let buf = (std::mem::take(&mut spare), 0);
            next = Some(spawn(batch.to, batch_packets, seqno, buf));
        } else {
            batch.buf.truncate(batch.used);
            batch.buf.extend_from_slice(&last_packet(span, seqno));
            batch.used = batch.buf.len();
        }
        send_watching(conn, &batch.buf[..batch.used], limit).await?;
        batch_sent(shared, conn, span, batch.from, batch.to, batch.packets);
        spare = batch.buf;
    }
    Ok(())
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
        let mut batch = Batch::new(from, to, span.packet_at(from), seqno);
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
