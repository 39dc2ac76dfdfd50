//! READ_BLOCK: sends exactly the checksum chunks that cover the requested
//! range (PROTOCOL.md §3.7; seeds 003 and 004).
//!
//! The range `[offset, offset + len)` is widened to chunk boundaries —
//! `chunkOffset` is the chunk-aligned start, the end is rounded up to a chunk
//! and capped at the replica's length — and nothing beyond it is read or
//! sent. Data goes out in packets of about 64 KiB (`read.packet-bytes`,
//! whole chunks) with the checksums from the meta file, then the empty last
//! packet. The disk read of the next packet overlaps the send of the current
//! one and goes no further (read-ahead of one packet).
//!
//! While packets are going out the connection is also watched for the
//! reader going away: a closed connection (or unexpected bytes) stops the
//! read before the next packet, instead of filling socket buffers nobody
//! reads. Bytes requested and bytes sent are counted per DataNode
//! ([`crate::metrics`]).

use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use cairn_proto::hadoop::hdfs::{ClientReadStatusProto, OpReadBlockProto, Status};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tracing::{debug, info, warn};

use crate::checksum::{ChecksumKind, DataChecksum};
use crate::ids::{GenStamp, ReplicaKey};
use crate::metrics::Metrics;
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

    let outcome = send_packets(shared, conn, &key, Arc::new(reader), start, end, send_sums).await;
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
                Metrics::inc(&m.read_client_checksum_errors);
                warn!(replica = %key, peer = %conn.peer, "client reports a checksum error reading this replica");
                crate::scanner::check_replica(
                    shared,
                    key.clone(),
                    "client reported a checksum error".into(),
                );
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
    let m = &shared.metrics;
    let bpc = u64::from(reader.checksum().bytes_per_checksum);
    let per_packet = (cfg.read_packet_bytes as u64 / bpc).max(1) * bpc;
    let verify = cfg.read_verify_checksums.then_some(cfg.write_path.crc);
    let spawn = |from: u64, packets: u64, seqno: i64, buf: Vec<u8>| {
        let reader = reader.clone();
        let to = from
            .saturating_add(packets.saturating_mul(per_packet))
            .min(end);
        tokio::task::spawn_blocking(move || {
            build_batch(&reader, from, to, per_packet, seqno, send_sums, verify, buf)
        })
    };
    let mut batch_packets = 1;
    let mut next = (start < end).then(|| spawn(start, batch_packets, 0, Vec::new()));
    let long_read = end - start > STREAMING_AFTER;
    if long_read {
        set_send_buffer(conn, START_SEND_BUFFER);
    }
    let mut spare = Vec::new();
    let mut seqno = 0i64;
    while let Some(pending) = next.take() {
        let built = pending
            .await
            .map_err(|e| XferError::Protocol(format!("read task failed: {e}")))?;
        let batch = match built {
            Ok(b) => b,
            Err(e) => {
                Metrics::inc(&m.read_checksum_errors);
                warn!(replica = %key, peer = %conn.peer, error = %e, "cannot read a replica for a client");
                crate::scanner::check_replica(shared, key.clone(), format!("read: {e}"));
                return Err(XferError::Read(e));
            }
        };
        seqno += batch.packets;
        // Build the next batch while this one is sent.
        if batch.to < end {
            batch_packets = (batch_packets * 2).min(MAX_PACKETS_PER_BATCH);
            next = Some(spawn(
                batch.to,
                batch_packets,
                seqno,
                std::mem::take(&mut spare),
            ));
        }
        send_watching(conn, &batch.buf[..batch.used], cfg.socket_write_timeout).await?;
        Metrics::add(&m.read_bytes_sent, batch.to - batch.from);
        if long_read && batch.from - start < STREAMING_AFTER && batch.to - start >= STREAMING_AFTER
        {
            set_send_buffer(conn, STREAMING_SEND_BUFFER);
        }
        Metrics::add(&m.read_packets_sent, batch.packets as u64);
        spare = batch.buf;
    }
    let mut buf = BytesMut::new();
    encode_packet(&header(end, seqno, true, 0, false), &[], &[], &mut buf);
    send_watching(conn, &buf, cfg.socket_write_timeout).await?;
    Metrics::inc(&m.read_packets_sent);
    Ok(())
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
