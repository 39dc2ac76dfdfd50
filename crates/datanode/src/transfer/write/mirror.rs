//! The downstream DataNode of a write pipeline (`targets[0]`): the request
//! forwarded to it and, for client writes, its connect-ack passed up.

use cairn_proto::hadoop::hdfs::{
    BlockOpResponseProto, DatanodeInfoProto, OpWriteBlockProto, Status,
};
use cairn_proto::protocols::op;
use tokio::io::BufReader;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tracing::info;

use super::super::ack::connect_ack;
use super::super::packet::read_delimited;
use super::super::peer::{connect_datanode, send_op, xfer_name};
use super::super::{timed, Conn, XferError};
use super::{WriteRequest, MAX_ACK_BYTES, PER_NODE_EXTENSION};
use crate::config::DataNodeConfig;

/// The request sent to `targets[0]`: the same op with the target lists
/// shifted by one, `storageType`/`storageId` taken from their heads, and an
/// empty `source` when none was given, as a Hadoop DataNode sends it.
pub(super) fn forwarded(req: &OpWriteBlockProto) -> OpWriteBlockProto {
    let mut f = req.clone();
    f.targets = req.targets.iter().skip(1).cloned().collect();
    f.storage_type = req
        .target_storage_types
        .first()
        .copied()
        .or(req.storage_type);
    f.target_storage_types = req.target_storage_types.iter().skip(1).copied().collect();
    f.storage_id = req.target_storage_ids.first().cloned();
    f.target_storage_ids = req.target_storage_ids.iter().skip(1).cloned().collect();
    if req.pinning.is_some() || !req.target_pinnings.is_empty() {
        f.pinning = Some(req.target_pinnings.first().copied().unwrap_or(false));
    }
    f.target_pinnings = req.target_pinnings.iter().skip(1).copied().collect();
    if f.source.is_none() {
        f.source = Some(DatanodeInfoProto::default());
    }
    f
}

/// The downstream DataNode of this pipeline.
pub(super) struct Mirror {
    pub(super) rd: BufReader<OwnedReadHalf>,
    pub(super) wr: OwnedWriteHalf,
    pub(super) name: String,
}

/// Connects to `targets[0]` and forwards the request. A client write gets
/// the mirror's connect-ack: a refusal goes up unchanged and fails the
/// write; a mirror that cannot be reached fails it too. A DataNode-initiated
/// copy goes on without the mirror.
///
/// # Errors
/// [`XferError`] when the write cannot go on (the upstream was answered).
pub(super) async fn connect_mirror(
    cfg: &DataNodeConfig,
    conn: &mut Conn,
    req: &OpWriteBlockProto,
    w: &WriteRequest,
) -> Result<Option<Mirror>, XferError> {
    let Some(target) = req.targets.first() else {
        return Ok(None);
    };
    let wt = cfg.socket_write_timeout;
    let name = xfer_name(target);
    let ds_timeout = cfg.socket_read_timeout + PER_NODE_EXTENSION * req.targets.len() as u32;
    let attempt = async {
        let stream = connect_datanode(target, cfg.socket_read_timeout).await?;
        let (rd, mut mwr) = stream.into_split();
        send_op(&mut mwr, op::WRITE_BLOCK, &forwarded(req), wt).await?;
        let mut rd = BufReader::with_capacity(4096, rd);
        let status = if w.acks {
            let resp: BlockOpResponseProto = timed(
                ds_timeout,
                "waiting for the downstream connect-ack",
                read_delimited(&mut rd, MAX_ACK_BYTES),
            )
            .await?;
            Some(resp)
        } else {
            None
        };
        Ok::<_, XferError>((rd, mwr, status))
    };
    match attempt.await {
        Ok((rd, mwr, status)) => {
            if let Some(resp) = status {
                if resp.status != Status::Success as i32 {
                    // Pass the downstream verdict up unchanged.
                    let bad = resp.first_bad_link.clone().unwrap_or_default();
                    let up =
                        connect_ack(Status::try_from(resp.status).unwrap_or(Status::Error), &bad);
                    let _ = conn.send(&up, wt).await;
                    return Err(XferError::Protocol(format!(
                        "downstream refused the pipeline (first bad link {bad:?})"
                    )));
                }
            }
            Ok(Some(Mirror { rd, wr: mwr, name }))
        }
        Err(e) if w.acks => {
            info!(target = %name, error = %e, "cannot set up the downstream DataNode");
            let _ = conn.send(&connect_ack(Status::Error, &name), wt).await;
            Err(e)
        }
        Err(e) => {
            // A DataNode-initiated copy goes on without the mirror.
            info!(target = %name, error = %e, "continuing without the downstream DataNode");
            Ok(None)
        }
    }
}
