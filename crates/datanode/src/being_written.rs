//! What WebHDFS's OPEN reads of a file still being written, as HDFS's
//! `DFSInputStream` reads it: the NameNode's file length leaves out a last
//! block under construction, whose readable length is what a DataNode
//! holding it has acknowledged (`getReplicaVisibleLength`), and whose bytes
//! come from that DataNode with READ_BLOCK, checked against their CRCs.
//! hdfs-native, which serves the rest of the read, stops at the NameNode's
//! length.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use cairn_proto::hadoop::hdfs::{
    BaseHeaderProto, BlockOpResponseProto, ClientOperationHeaderProto, ClientReadStatusProto,
    DatanodeInfoProto, GetBlockLocationsRequestProto, GetBlockLocationsResponseProto,
    GetReplicaVisibleLengthRequestProto, GetReplicaVisibleLengthResponseProto, LocatedBlockProto,
    OpReadBlockProto, Status,
};
use cairn_proto::protocols::{op, CLIENT_DATANODE_PROTOCOL, CLIENT_PROTOCOL};
use cairn_rpc::client::{Client, ClientError};
use tokio::io::AsyncWriteExt;

use crate::checksum::{ChecksumKind, Crc32cImpl, DataChecksum};
use crate::ids::extended_block_name;
use crate::transfer::packet::{delimited, read_delimited, read_packet};
use crate::transfer::peer::{connect_datanode, send_op, xfer_name};
use crate::transfer::{timed, XferError};
use cairn_common::webhdfs::RemoteError;

/// The exception a DataNode answers for a replica it does not have.
const REPLICA_NOT_FOUND: &str = "ReplicaNotFoundException";

/// How long one DataNode may take over a step of a read.
const STEP_LIMIT: Duration = Duration::from_secs(60);

/// Largest op answer or packet taken from a DataNode.
const MAX_RESPONSE_BYTES: usize = 64 * 1024;
const MAX_PACKET_BYTES: usize = 16 * 1024 * 1024;

/// The last block of a file being written, with the bytes readable in it.
#[derive(Debug, Clone)]
pub(crate) struct LastBlock {
    block: LocatedBlockProto,
    /// Where the block starts in the file (the NameNode's file length).
    pub start: u64,
    /// Bytes of it readable now.
    pub visible: u64,
}

fn client_error(e: ClientError) -> RemoteError {
    match e {
        ClientError::Remote { class, message } => RemoteError::new(class, message),
        other => RemoteError::io(other.to_string()),
    }
}

/// The last block of `path` when the file is being written and that block
/// is not complete; `None` for any other file.
///
/// # Errors
/// The NameNode's refusal, or HDFS's "Cannot obtain block length" when no
/// DataNode holding the block answers for its length.
pub(crate) async fn last_block_being_written(
    namenode: SocketAddr,
    user: &str,
    path: &str,
) -> Result<Option<LastBlock>, RemoteError> {
    let nn = Client::connect(namenode, user, CLIENT_PROTOCOL)
        .await
        .map_err(client_error)?;
    let request = GetBlockLocationsRequestProto {
        src: path.to_string(),
        offset: 0,
        length: i64::MAX as u64,
    };
    let reply: GetBlockLocationsResponseProto = nn
        .call("getBlockLocations", &request)
        .await
        .map_err(client_error)?;
    let Some(located) = reply.locations else {
        return Ok(None);
    };
    if !located.under_construction || located.is_last_block_complete {
        return Ok(None);
    }
    let Some(block) = located.last_block else {
        return Ok(None);
    };
    if block.locs.is_empty() {
        return Ok(None);
    }
    let mut not_found = 0;
    for dn in &block.locs {
        match visible_length(dn, user, &block).await {
            Ok(visible) => {
                return Ok(Some(LastBlock {
                    start: block.offset,
                    visible,
                    block,
                }))
            }
            Err(e) => {
                tracing::debug!(
                    datanode = %xfer_name(dn),
                    "getReplicaVisibleLength failed: {e}"
                );
                not_found += usize::from(e.contains(REPLICA_NOT_FOUND));
            }
        }
    }
    // No DataNode knows the replica yet: the pipeline is still being set
    // up, and nothing of the block is readable (HDFS's readBlockLength).
    if not_found == block.locs.len() {
        return Ok(Some(LastBlock {
            start: block.offset,
            visible: 0,
            block,
        }));
    }
    Err(RemoteError::new(
        "org.apache.hadoop.hdfs.CannotObtainBlockLengthException",
        format!(
            "Cannot obtain block length for LocatedBlock{{{}}} of {path}",
            extended_block_name(&block.b)
        ),
    ))
}

async fn visible_length(
    dn: &DatanodeInfoProto,
    user: &str,
    block: &LocatedBlockProto,
) -> Result<u64, String> {
    let port = u16::try_from(dn.id.ipc_port).map_err(|_| "bad IPC port".to_string())?;
    let ip = dn.id.ip_addr.parse().map_err(|e| format!("{e}"))?;
    let ask = async {
        let client =
            Client::connect(SocketAddr::new(ip, port), user, CLIENT_DATANODE_PROTOCOL).await?;
        let request = GetReplicaVisibleLengthRequestProto {
            block: block.b.clone(),
        };
        let reply: GetReplicaVisibleLengthResponseProto =
            client.call("getReplicaVisibleLength", &request).await?;
        Ok::<_, ClientError>(reply.length)
    };
    tokio::time::timeout(STEP_LIMIT, ask)
        .await
        .map_err(|_| "timed out".to_string())?
        .map_err(|e| e.to_string())
}

impl LastBlock {
    /// Bytes `[from, from + len)` of the block (offsets within it), from
    /// the first DataNode holding it that serves them whole.
    ///
    /// # Errors
    /// An IOException when none does.
    pub(crate) async fn read(&self, from: u64, len: u64) -> Result<Bytes, RemoteError> {
        let mut last_error = String::new();
        for dn in &self.block.locs {
            match read_from(dn, &self.block, from, len).await {
                Ok(data) => return Ok(data),
                Err(e) => {
                    tracing::warn!(datanode = %xfer_name(dn), "READ_BLOCK failed: {e}");
                    last_error = e.to_string();
                }
            }
        }
        Err(RemoteError::io(format!(
            "Could not read {} at {from} (+{len}): {last_error}",
            extended_block_name(&self.block.b)
        )))
    }
}

/// One READ_BLOCK of `[from, from + len)`: the answer, the packets (their
/// CRCs checked), then CHECKSUM_OK back, as a reader that got all it asked
/// for says.
async fn read_from(
    dn: &DatanodeInfoProto,
    block: &LocatedBlockProto,
    from: u64,
    len: u64,
) -> Result<Bytes, XferError> {
    let stream = connect_datanode(dn, STEP_LIMIT).await?;
    let (mut rd, mut wr) = stream.into_split();
    let request = OpReadBlockProto {
        header: ClientOperationHeaderProto {
            base_header: BaseHeaderProto {
                block: block.b.clone(),
                token: Some(block.block_token.clone()),
                trace_info: None,
            },
            client_name: "webhdfs".into(),
        },
        offset: from,
        len,
        send_checksums: Some(true),
        caching_strategy: None,
    };
    send_op(&mut wr, op::READ_BLOCK, &request, STEP_LIMIT).await?;
    let reply: BlockOpResponseProto = timed(
        STEP_LIMIT,
        "waiting for a READ_BLOCK answer",
        read_delimited(&mut rd, MAX_RESPONSE_BYTES),
    )
    .await?;
    if reply.status() != Status::Success {
        return Err(XferError::Protocol(format!(
            "READ_BLOCK refused: {:?}, {}",
            reply.status(),
            reply.message.unwrap_or_default()
        )));
    }
    let info = reply
        .read_op_checksum_info
        .ok_or_else(|| XferError::Protocol("no checksum info in the answer".into()))?;
    let kind = u8::try_from(info.checksum.r#type)
        .ok()
        .and_then(ChecksumKind::from_id)
        .ok_or_else(|| XferError::Protocol(format!("checksum type {}", info.checksum.r#type)))?;
    let checksum = DataChecksum {
        kind,
        bytes_per_checksum: info.checksum.bytes_per_checksum.max(1),
    };
    // Packets start at a chunk boundary at or before `from`.
    let skip = from
        .checked_sub(info.chunk_offset)
        .ok_or_else(|| XferError::Protocol("chunk offset past the start".into()))?;
    let skip = usize::try_from(skip).unwrap_or(usize::MAX);
    let want = usize::try_from(len).unwrap_or(usize::MAX);
    // What the answer may hold at most: the span asked for, widened to
    // whole chunks at both ends.
    let most = skip.saturating_add(want).saturating_add(checksum.bpc());
    let mut data = BytesMut::new();
    loop {
        let packet = timed(
            STEP_LIMIT,
            "waiting for a packet",
            read_packet(&mut rd, MAX_PACKET_BYTES, None),
        )
        .await?;
        let bytes = packet.data();
        if !bytes.is_empty() {
            // Each packet continues where the last one ended.
            let due = info.chunk_offset + data.len() as u64;
            if u64::try_from(packet.header.offset_in_block).ok() != Some(due) {
                return Err(XferError::Protocol(format!(
                    "a packet at {} where {due} was due",
                    packet.header.offset_in_block
                )));
            }
            if data.len() + bytes.len() > most {
                return Err(XferError::Protocol(
                    "the DataNode sent more than was asked for".into(),
                ));
            }
            checksum
                .verify(Crc32cImpl::Hardware, &bytes, &packet.sums())
                .map_err(|e| XferError::Protocol(format!("checksum error: {e}")))?;
            data.extend_from_slice(&bytes);
        }
        if packet.header.last_packet_in_block || bytes.is_empty() {
            break;
        }
    }
    let ok = ClientReadStatusProto {
        status: Status::ChecksumOk as i32,
    };
    let _ = timed(
        STEP_LIMIT,
        "confirming a read",
        wr.write_all(&delimited(&ok)),
    )
    .await;
    if data.len() < skip.saturating_add(want) {
        return Err(XferError::Protocol(format!(
            "the DataNode sent {} bytes, {} were asked for",
            data.len().saturating_sub(skip),
            want
        )));
    }
    Ok(data.freeze().slice(skip..skip + want))
}
