//! Talking to another DataNode's transfer port: connecting (by IP, else
//! host name) and sending an op. Used by the write pipeline for its mirror
//! and by replica copies.

use std::net::SocketAddr;
use std::time::Duration;

use cairn_proto::hadoop::hdfs::DatanodeInfoProto;
use cairn_proto::protocols::DATA_TRANSFER_VERSION;
use tokio::io::AsyncWriteExt;
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::TcpStream;

use super::packet::delimited;
use super::{timed, XferError};

/// `ip:xferPort` of a DataNode, as `firstBadLink` names it.
pub(crate) fn xfer_name(dn: &DatanodeInfoProto) -> String {
    format!("{}:{}", dn.id.ip_addr, dn.id.xfer_port)
}

/// Connects to a DataNode's transfer port (its IP, else its host name).
pub(crate) async fn connect_datanode(
    dn: &DatanodeInfoProto,
    limit: Duration,
) -> Result<TcpStream, XferError> {
    let port = u16::try_from(dn.id.xfer_port)
        .map_err(|_| XferError::Protocol(format!("bad xfer port {}", dn.id.xfer_port)))?;
    let addr: SocketAddr = match dn.id.ip_addr.parse() {
        Ok(ip) => SocketAddr::new(ip, port),
        Err(_) => {
            let host = if dn.id.host_name.is_empty() {
                &dn.id.ip_addr
            } else {
                &dn.id.host_name
            };
            timed(
                limit,
                "resolving a DataNode",
                tokio::net::lookup_host((host.as_str(), port)),
            )
            .await?
            .next()
            .ok_or_else(|| XferError::Protocol(format!("cannot resolve {host}")))?
        }
    };
    let stream = timed(limit, "connecting to a DataNode", TcpStream::connect(addr)).await?;
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// Writes `version, op, delimited(req)` to a DataNode.
pub(crate) async fn send_op<M: prost::Message>(
    wr: &mut OwnedWriteHalf,
    code: u8,
    req: &M,
    limit: Duration,
) -> Result<(), XferError> {
    let mut bytes = Vec::with_capacity(3 + req.encoded_len() + 5);
    bytes.extend_from_slice(&DATA_TRANSFER_VERSION.to_be_bytes());
    bytes.push(code);
    bytes.extend_from_slice(&delimited(req));
    timed(limit, "sending an op downstream", wr.write_all(&bytes)).await
}
