//! The DataTransferProtocol server on the xfer port (PROTOCOL.md §3).
//!
//! One task per connection reads operations: a 2-byte version (28), an op
//! byte and a length-delimited request. WRITE_BLOCK ([`mod@write`]) closes the
//! connection when done; READ_BLOCK ([`read`]) keeps it for the client's next
//! op for `dfs.datanode.socket.reuse.keepalive`, as both Hadoop clients reuse
//! connections. TRANSFER_BLOCK copies a replica to other DataNodes
//! ([`copy`]). REPLACE_BLOCK and COPY_BLOCK move a replica for the
//! Balancer and the Mover ([`balance`]). BLOCK_CHECKSUM answers with the checksum `getFileChecksum`
//! combines ([`checksum_op`]). Other ops get ERROR_UNSUPPORTED and the
//! connection is closed.
//!
//! Connections are capped by `dfs.datanode.max.transfer.threads`; at
//! shutdown the listener stops at once and running transfers get
//! `cairn.datanode.shutdown-timeout` to finish before they are dropped (a
//! replica being written is then left in `rbw/` for recovery).

pub mod ack;
pub mod balance;
pub mod checksum_op;
pub mod copy;
pub mod packet;
pub(crate) mod peer;
pub mod read;
mod read_span;
pub mod write;
pub(crate) mod zero_copy;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use cairn_proto::hadoop::hdfs::{
    OpBlockChecksumProto, OpCopyBlockProto, OpReadBlockProto, OpReplaceBlockProto,
    OpTransferBlockProto, OpWriteBlockProto, Status,
};
use cairn_proto::protocols::{op, DATA_TRANSFER_VERSION};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn, Instrument};

use crate::metrics::{GaugeGuard, Metrics};
use crate::storage::StorageError;
use crate::Shared;

use self::packet::{delimited, read_delimited, PacketError};

/// Largest op request accepted (a WRITE_BLOCK with a long target list is a
/// few KiB).
pub const MAX_OP_BYTES: usize = 1024 * 1024;

/// Why a transfer ended early. Logged where the connection ends; never sent.
#[derive(Debug, thiserror::Error)]
pub enum XferError {
    #[error("{what}: {source}")]
    Io {
        what: &'static str,
        source: std::io::Error,
    },
    #[error("{0}")]
    Packet(#[from] PacketError),
    #[error("timed out {0}")]
    Timeout(&'static str),
    #[error("{0}")]
    Storage(#[from] StorageError),
    /// Reading a replica from disk failed (a checksum error included).
    #[error("{0}")]
    Read(crate::storage::ReadError),
    #[error("{0}")]
    Protocol(String),
    #[error("cancelled")]
    Cancelled,
}

/// Runs `fut` with a timeout, mapping expiry to [`XferError::Timeout`].
pub(crate) async fn timed<T, E: Into<XferError>>(
    limit: Duration,
    what: &'static str,
    fut: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, XferError> {
    match tokio::time::timeout(limit, fut).await {
        Ok(r) => r.map_err(Into::into),
        Err(_) => Err(XferError::Timeout(what)),
    }
}

impl From<std::io::Error> for XferError {
    fn from(source: std::io::Error) -> Self {
        XferError::Io {
            what: "socket",
            source,
        }
    }
}

/// One client connection: a buffered read half and the write half.
pub(crate) struct Conn {
    pub rd: BufReader<OwnedReadHalf>,
    pub wr: OwnedWriteHalf,
    pub peer: SocketAddr,
}

impl Conn {
    /// Writes a length-delimited message and waits for it to be sent.
    pub async fn send<M: prost::Message>(
        &mut self,
        m: &M,
        limit: Duration,
    ) -> Result<(), XferError> {
        let bytes = delimited(m);
        timed(limit, "writing a response", self.wr.write_all(&bytes)).await
    }
}

/// Whether a connection stays open after an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum After {
    KeepAlive,
    Close,
}

/// Accepts data-transfer connections until `shutdown`, then gives running
/// transfers `shutdown_timeout` to finish.
///
/// # Cancel safety
/// Cancel through `shutdown`.
pub(crate) async fn serve(listener: TcpListener, shared: Arc<Shared>, shutdown: CancellationToken) {
    let permits = Arc::new(Semaphore::new(shared.config.max_transfers));
    let mut tasks = JoinSet::new();
    loop {
        // Reap finished connections so the set stays small.
        while tasks.try_join_next().is_some() {}
        let permit = tokio::select! {
            _ = shutdown.cancelled() => break,
            p = permits.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let (stream, peer) = tokio::select! {
            _ = shutdown.cancelled() => break,
            r = listener.accept() => match r {
                Ok(x) => x,
                Err(e) => {
                    warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let shared = shared.clone();
        let token = shutdown.clone();
        tasks.spawn(
            async move {
                let _permit = permit;
                connection(stream, peer, shared, token).await;
            }
            .instrument(tracing::debug_span!("xfer", %peer)),
        );
    }
    drop(listener);
    let deadline = tokio::time::sleep(shared.config.shutdown_timeout);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            _ = &mut deadline => {
                if !tasks.is_empty() {
                    info!(remaining = tasks.len(), "aborting transfers still running at shutdown");
                }
                tasks.abort_all();
                while tasks.join_next().await.is_some() {}
                return;
            }
            next = tasks.join_next() => if next.is_none() { return },
        }
    }
}

async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
) {
    let _ = stream.set_nodelay(true);
    let (rd, wr) = stream.into_split();
    let cap = shared.config.small_read_bytes.clamp(512, 64 * 1024);
    let mut conn = Conn {
        rd: BufReader::with_capacity(cap, rd),
        wr,
        peer,
    };
    let mut first = true;
    loop {
        let wait = if first {
            shared.config.socket_read_timeout
        } else {
            shared.config.keepalive_timeout
        };
        first = false;
        let mut version = [0u8; 2];
        let got = tokio::select! {
            _ = shutdown.cancelled() => return,
            r = tokio::time::timeout(wait, conn.rd.read(&mut version[..1])) => r,
        };
        match got {
            Err(_) | Ok(Ok(0)) => return,
            Ok(Err(e)) => {
                debug!(error = %e, "read error between ops");
                return;
            }
            Ok(Ok(_)) => {}
        }
        let rest = timed(shared.config.socket_read_timeout, "reading an op", async {
            conn.rd.read_exact(&mut version[1..]).await?;
            let code = conn.rd.read_u8().await?;
            Ok::<u8, std::io::Error>(code)
        })
        .await;
        let code = match rest {
            Ok(c) => c,
            Err(e) => {
                debug!(error = %e, "incomplete op");
                return;
            }
        };
        let v = u16::from_be_bytes(version);
        if v != DATA_TRANSFER_VERSION {
            info!(
                version = v,
                "Version Mismatch (Expected: {DATA_TRANSFER_VERSION}, Received: {v}); closing"
            );
            return;
        }
        let after = {
            let _busy = GaugeGuard::new(&shared.metrics.xceivers_active);
            dispatch(&shared, &mut conn, code).await
        };
        match after {
            Ok(After::KeepAlive) => continue,
            Ok(After::Close) => return,
            Err(e) => {
                match &e {
                    XferError::Packet(PacketError::Eof) | XferError::Cancelled => {
                        debug!(error = %e, "transfer ended")
                    }
                    _ => info!(error = %e, "transfer failed"),
                }
                return;
            }
        }
    }
}

async fn read_op<M: prost::Message + Default>(
    shared: &Shared,
    conn: &mut Conn,
) -> Result<M, XferError> {
    timed(
        shared.config.socket_read_timeout,
        "reading an op request",
        read_delimited::<M, _>(&mut conn.rd, MAX_OP_BYTES),
    )
    .await
}

async fn dispatch(shared: &Arc<Shared>, conn: &mut Conn, code: u8) -> Result<After, XferError> {
    match code {
        op::WRITE_BLOCK => {
            let req: OpWriteBlockProto = read_op(shared, conn).await?;
            Metrics::inc(&shared.metrics.write_ops);
            let micros = &shared.metrics.write_op_micros;
            let r = Metrics::timed(micros, write::write_block(shared, conn, req)).await;
            if r.is_err() {
                Metrics::inc(&shared.metrics.write_ops_failed);
            }
            r.map(|()| After::Close)
        }
        op::READ_BLOCK => {
            let req: OpReadBlockProto = read_op(shared, conn).await?;
            let micros = &shared.metrics.read_op_micros;
            Metrics::timed(micros, read::read_block(shared, conn, req)).await
        }
        op::TRANSFER_BLOCK => {
            let req: OpTransferBlockProto = read_op(shared, conn).await?;
            copy::transfer_block(shared, conn, req)
                .await
                .map(|()| After::Close)
        }
        op::COPY_BLOCK => {
            let req: OpCopyBlockProto = read_op(shared, conn).await?;
            balance::copy_block(shared, conn, req)
                .await
                .map(|()| After::Close)
        }
        op::REPLACE_BLOCK => {
            let req: OpReplaceBlockProto = read_op(shared, conn).await?;
            balance::replace_block(shared, conn, req)
                .await
                .map(|()| After::Close)
        }
        op::BLOCK_CHECKSUM => {
            let req: OpBlockChecksumProto = read_op(shared, conn).await?;
            let micros = &shared.metrics.block_checksum_micros;
            Metrics::timed(micros, checksum_op::block_checksum(shared, conn, req)).await
        }
        other => {
            // Skip the request if it is well framed, then refuse.
            let _ = read_op::<OpCopyBlockProto>(shared, conn).await;
            let resp = ack::error_response(
                Status::ErrorUnsupported,
                format!("op {other} is not supported by this DataNode"),
            );
            let _ = conn.send(&resp, shared.config.socket_write_timeout).await;
            Ok(After::Close)
        }
    }
}
