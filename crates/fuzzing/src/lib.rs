//! Fuzzing entry points: one function per family of decoders that take
//! bytes from the network or from disk. Each runs hostile bytes through the
//! same functions the servers use, in the order the servers use them, and
//! must return (never panic, hang or allocate without bound) whatever the
//! bytes are.
//!
//! The cargo-fuzz targets in `fuzz/fuzz_targets/` are one line each over
//! [`TARGETS`]; `tests/corpus_replay.rs` runs every committed corpus file
//! (`fuzz/corpus/<target>/`) through the same functions under `cargo test`.
//!
//! Where a check needs a valid checksum to reach the code behind it (edit
//! records, images, VERSION files), the target runs the bytes twice: as
//! they are, and with the checksums made right ([`fix_record_crcs`]).

use std::path::{Path, PathBuf};

use bytes::Bytes;
use cairn_common::config::{Configuration, TimeUnit};
use cairn_datanode::checksum::{ChecksumKind, Crc32cImpl, DataChecksum};
use cairn_datanode::ids::BlockPoolId;
use cairn_datanode::storage::reader::ReadError;
use cairn_datanode::storage::{
    layout, meta, version::StorageVersion, ReportedReplica, ReportedState,
};
use cairn_datanode::transfer::checksum_op::{self, ChecksumSource, Mode};
use cairn_datanode::transfer::packet::{read_delimited, read_packet};
use cairn_datanode::transfer::{ack, read, write, MAX_OP_BYTES};
use cairn_namenode::journal::codec::{decode_record, Decoded, RECORD_HEADER_LEN};
use cairn_namenode::namespace::{Limits, Namespace};
use cairn_namenode::storage::{self as nn_storage, RecoveryChoice, SegmentFile, VersionInfo};
use cairn_proto::hadoop::common::{
    rpc_sasl_proto::SaslState, IpcConnectionContextProto, RpcResponseHeaderProto, RpcSaslProto,
};
use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::{self, op};
use cairn_rpc::frame;
use futures::executor::block_on;
use prost::Message;

/// A fuzz target's entry point.
pub type Target = fn(&[u8]);

/// Every target: its name (the folder under `fuzz/corpus/`) and function.
pub const TARGETS: &[(&str, Target)] = &[
    ("ipc_stream", ipc_stream),
    ("rpc_request", rpc_request),
    ("block_report", block_report),
    ("xfer_stream", xfer_stream),
    ("journal", journal),
    ("image", image),
    ("meta", meta_file),
    ("config_xml", config_xml),
];

/// Runs the target called `name`; false if there is none.
pub fn run(name: &str, data: &[u8]) -> bool {
    match TARGETS.iter().find(|(n, _)| *n == name) {
        Some((_, f)) => {
            f(data);
            true
        }
        None => false,
    }
}

// ------------------------------------------------------------------ IPC

/// Largest frame the harness accepts: the IPC server's default limit.
fn max_frame() -> usize {
    cairn_rpc::ServerConfig::default().max_frame_bytes
}

/// A client's byte stream to an IPC server (preamble, SASL, connection
/// context, calls), read as `rpc::server` reads it, each call's request
/// decoded as its protocol's service decodes it; then the same bytes as
/// the response stream a client (`rpc::client`) reads.
pub fn ipc_stream(data: &[u8]) {
    server_stream(data);
    client_stream(data);
}

fn server_stream(data: &[u8]) {
    let Some((preamble, mut rest)) = data.split_first_chunk::<7>() else {
        return;
    };
    let [m0, m1, m2, m3, ..] = *preamble;
    if frame::is_http_get(&[m0, m1, m2, m3]) {
        return;
    }
    let Ok(auth) = frame::parse_preamble(preamble) else {
        return;
    };
    let mut sasl_pending = auth == frame::AUTH_SASL;
    let mut context = false;
    loop {
        let mut body = match block_on(frame::read_frame(&mut rest, max_frame())) {
            Ok(Some(b)) => b,
            _ => return,
        };
        let Ok(header) = frame::take_request_header(&mut body) else {
            return;
        };
        if frame::check_header_kind(&header).is_err() {
            return;
        }
        match header.call_id {
            frame::CALL_ID_SASL => {
                let Ok(msg) = frame::take_delimited::<RpcSaslProto>(&mut body) else {
                    return;
                };
                match SaslState::try_from(msg.state) {
                    Ok(SaslState::Negotiate) => sasl_pending = true,
                    Ok(SaslState::Initiate)
                        if msg.auths.first().is_some_and(|a| a.method == "SIMPLE") =>
                    {
                        sasl_pending = false
                    }
                    _ => return,
                }
            }
            _ if sasl_pending => return,
            frame::CALL_ID_CONNECTION_CONTEXT => {
                let Ok(ctx) = frame::take_delimited::<IpcConnectionContextProto>(&mut body) else {
                    return;
                };
                if ctx
                    .user_info
                    .and_then(|u| u.effective_user)
                    .is_none_or(|u| u.is_empty())
                {
                    return;
                }
                context = true;
            }
            frame::CALL_ID_PING => {}
            id if id >= 0 => {
                if !context {
                    return;
                }
                // Errors below get an ERROR reply and keep the connection.
                let Ok(method) = frame::take_method_header(&mut body) else {
                    continue;
                };
                if method.client_protocol_version != protocols::PROTOCOL_VERSION {
                    continue;
                }
                let Ok(request) = frame::take_delimited_raw(&mut body) else {
                    continue;
                };
                decode_request(
                    &method.declaring_class_protocol_name,
                    &method.method_name,
                    &request,
                );
            }
            _ => return,
        }
    }
}

fn client_stream(mut data: &[u8]) {
    // rpc::client's limit for a response frame, as large as the server's.
    while let Ok(Some(mut body)) = block_on(frame::read_frame(&mut data, max_frame())) {
        let Ok(header) = frame::take_delimited::<RpcResponseHeaderProto>(&mut body) else {
            return;
        };
        if header.status == 0 && frame::take_delimited_raw(&mut body).is_err() {
            return;
        }
    }
}

macro_rules! requests {
    ($($protocol:ident $method:literal => $ty:ident,)*) => {
        /// Every (protocol, method) a Cairn server answers, in a fixed order
        /// ([`rpc_request`] picks one by index; new ones go at the end).
        pub const REQUESTS: &[(&str, &str)] = &[$((protocols::$protocol, $method)),*];

        fn decode_typed(protocol: &str, method: &str, request: &Bytes) -> Option<bool> {
            $(
                if protocol == protocols::$protocol && method == $method {
                    return Some(pb::$ty::decode(request.clone()).is_ok());
                }
            )*
            None
        }
    };
}

// The request type of every method the services decode (the `decode(&req)`
// calls of namenode::service, namenode::datanode_service and datanode::ipc).
requests! {
    CLIENT_PROTOCOL "getFileInfo" => GetFileInfoRequestProto,
    CLIENT_PROTOCOL "getFileLinkInfo" => GetFileInfoRequestProto,
    CLIENT_PROTOCOL "getLocatedFileInfo" => GetLocatedFileInfoRequestProto,
    CLIENT_PROTOCOL "getListing" => GetListingRequestProto,
    CLIENT_PROTOCOL "getBatchedListing" => GetBatchedListingRequestProto,
    CLIENT_PROTOCOL "getBlockLocations" => GetBlockLocationsRequestProto,
    CLIENT_PROTOCOL "getServerDefaults" => GetServerDefaultsRequestProto,
    CLIENT_PROTOCOL "getContentSummary" => GetContentSummaryRequestProto,
    CLIENT_PROTOCOL "getQuotaUsage" => GetQuotaUsageRequestProto,
    CLIENT_PROTOCOL "reportBadBlocks" => ReportBadBlocksRequestProto,
    CLIENT_PROTOCOL "getFsStats" => GetFsStatusRequestProto,
    CLIENT_PROTOCOL "getFsReplicatedBlockStats" => GetFsReplicatedBlockStatsRequestProto,
    CLIENT_PROTOCOL "getFsECBlockGroupStats" => GetFsEcBlockGroupStatsRequestProto,
    CLIENT_PROTOCOL "getDatanodeReport" => GetDatanodeReportRequestProto,
    CLIENT_PROTOCOL "getDatanodeStorageReport" => GetDatanodeStorageReportRequestProto,
    CLIENT_PROTOCOL "getSlowDatanodeReport" => GetSlowDatanodeReportRequestProto,
    CLIENT_PROTOCOL "listOpenFiles" => ListOpenFilesRequestProto,
    CLIENT_PROTOCOL "getEZForPath" => GetEzForPathRequestProto,
    CLIENT_PROTOCOL "listEncryptionZones" => ListEncryptionZonesRequestProto,
    CLIENT_PROTOCOL "listReencryptionStatus" => ListReencryptionStatusRequestProto,
    CLIENT_PROTOCOL "getPreferredBlockSize" => GetPreferredBlockSizeRequestProto,
    CLIENT_PROTOCOL "isFileClosed" => IsFileClosedRequestProto,
    CLIENT_PROTOCOL "getStoragePolicies" => GetStoragePoliciesRequestProto,
    CLIENT_PROTOCOL "getStoragePolicy" => GetStoragePolicyRequestProto,
    CLIENT_PROTOCOL "setStoragePolicy" => SetStoragePolicyRequestProto,
    CLIENT_PROTOCOL "unsetStoragePolicy" => UnsetStoragePolicyRequestProto,
    CLIENT_PROTOCOL "getErasureCodingPolicies" => GetErasureCodingPoliciesRequestProto,
    CLIENT_PROTOCOL "getErasureCodingPolicy" => GetErasureCodingPolicyRequestProto,
    CLIENT_PROTOCOL "getEnclosingRoot" => GetEnclosingRootRequestProto,
    CLIENT_PROTOCOL "getAclStatus" => GetAclStatusRequestProto,
    CLIENT_PROTOCOL "checkAccess" => CheckAccessRequestProto,
    CLIENT_PROTOCOL "msync" => MsyncRequestProto,
    CLIENT_PROTOCOL "getHAServiceState" => HaServiceStateRequestProto,
    CLIENT_PROTOCOL "setSafeMode" => SetSafeModeRequestProto,
    CLIENT_PROTOCOL "saveNamespace" => SaveNamespaceRequestProto,
    CLIENT_PROTOCOL "rollEdits" => RollEditsRequestProto,
    CLIENT_PROTOCOL "metaSave" => MetaSaveRequestProto,
    CLIENT_PROTOCOL "refreshNodes" => RefreshNodesRequestProto,
    CLIENT_PROTOCOL "setBalancerBandwidth" => SetBalancerBandwidthRequestProto,
    CLIENT_PROTOCOL "mkdirs" => MkdirsRequestProto,
    CLIENT_PROTOCOL "delete" => DeleteRequestProto,
    CLIENT_PROTOCOL "rename" => RenameRequestProto,
    CLIENT_PROTOCOL "rename2" => Rename2RequestProto,
    CLIENT_PROTOCOL "setPermission" => SetPermissionRequestProto,
    CLIENT_PROTOCOL "setOwner" => SetOwnerRequestProto,
    CLIENT_PROTOCOL "setTimes" => SetTimesRequestProto,
    CLIENT_PROTOCOL "setReplication" => SetReplicationRequestProto,
    CLIENT_PROTOCOL "create" => CreateRequestProto,
    CLIENT_PROTOCOL "complete" => CompleteRequestProto,
    CLIENT_PROTOCOL "renewLease" => RenewLeaseRequestProto,
    CLIENT_PROTOCOL "recoverLease" => RecoverLeaseRequestProto,
    CLIENT_PROTOCOL "fsync" => FsyncRequestProto,
    CLIENT_PROTOCOL "abandonBlock" => AbandonBlockRequestProto,
    CLIENT_PROTOCOL "addBlock" => AddBlockRequestProto,
    CLIENT_PROTOCOL "append" => AppendRequestProto,
    CLIENT_PROTOCOL "updateBlockForPipeline" => UpdateBlockForPipelineRequestProto,
    CLIENT_PROTOCOL "updatePipeline" => UpdatePipelineRequestProto,
    CLIENT_PROTOCOL "getAdditionalDatanode" => GetAdditionalDatanodeRequestProto,
    DATANODE_PROTOCOL "versionRequest" => VersionRequestProto,
    DATANODE_PROTOCOL "registerDatanode" => RegisterDatanodeRequestProto,
    DATANODE_PROTOCOL "sendHeartbeat" => HeartbeatRequestProto,
    DATANODE_PROTOCOL "blockReport" => BlockReportRequestProto,
    DATANODE_PROTOCOL "blockReceivedAndDeleted" => BlockReceivedAndDeletedRequestProto,
    DATANODE_PROTOCOL "reportBadBlocks" => ReportBadBlocksRequestProto,
    DATANODE_PROTOCOL "errorReport" => ErrorReportRequestProto,
    DATANODE_PROTOCOL "commitBlockSynchronization" => CommitBlockSynchronizationRequestProto,
    NAMENODE_PROTOCOL "versionRequest" => VersionRequestProto,
    CLIENT_DATANODE_PROTOCOL "getReplicaVisibleLength" => GetReplicaVisibleLengthRequestProto,
    INTER_DATANODE_PROTOCOL "initReplicaRecovery" => InitReplicaRecoveryRequestProto,
    INTER_DATANODE_PROTOCOL "updateReplicaUnderRecovery" => UpdateReplicaUnderRecoveryRequestProto,
    // Added later: appended so that committed inputs keep their method.
    CLIENT_PROTOCOL "getCurrentEditLogTxid" => GetCurrentEditLogTxidRequestProto,
    CLIENT_PROTOCOL "getEditsFromTxid" => GetEditsFromTxidRequestProto,
    CLIENT_PROTOCOL "truncate" => TruncateRequestProto,
    CLIENT_PROTOCOL "concat" => ConcatRequestProto,
    CLIENT_PROTOCOL "setQuota" => SetQuotaRequestProto,
    CLIENT_PROTOCOL "addCachePool" => AddCachePoolRequestProto,
    CLIENT_PROTOCOL "modifyCachePool" => ModifyCachePoolRequestProto,
    CLIENT_PROTOCOL "removeCachePool" => RemoveCachePoolRequestProto,
    CLIENT_PROTOCOL "listCachePools" => ListCachePoolsRequestProto,
    CLIENT_PROTOCOL "addCacheDirective" => AddCacheDirectiveRequestProto,
    CLIENT_PROTOCOL "modifyCacheDirective" => ModifyCacheDirectiveRequestProto,
    CLIENT_PROTOCOL "removeCacheDirective" => RemoveCacheDirectiveRequestProto,
    CLIENT_PROTOCOL "listCacheDirectives" => ListCacheDirectivesRequestProto,
    CLIENT_PROTOCOL "createSymlink" => CreateSymlinkRequestProto,
    CLIENT_PROTOCOL "setErasureCodingPolicy" => SetErasureCodingPolicyRequestProto,
    CLIENT_PROTOCOL "addErasureCodingPolicies" => AddErasureCodingPoliciesRequestProto,
    CLIENT_PROTOCOL "restoreFailedStorage" => RestoreFailedStorageRequestProto,
}

/// Decodes `request` as the service for (protocol, method) does, block
/// reports down to their replicas.
fn decode_request(protocol: &str, method: &str, request: &Bytes) {
    if protocol == protocols::DATANODE_PROTOCOL && method == "blockReport" {
        if let Ok(r) = pb::BlockReportRequestProto::decode(request.clone()) {
            for storage in &r.reports {
                let _ = cairn_namenode::datanode_service::decode_storage_report(storage);
            }
        }
        return;
    }
    let _ = decode_typed(protocol, method, request);
}

/// One RPC request message: the first byte picks the method from
/// [`REQUESTS`], the rest is the message.
pub fn rpc_request(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let (protocol, method) = REQUESTS[usize::from(pick) % REQUESTS.len()];
    decode_request(protocol, method, &Bytes::copy_from_slice(rest));
}

// ---------------------------------------------------------- block reports

/// The replicas of one storage's block report, as the NameNode decodes
/// them: the bytes as a `StorageBlockReportProto`, as the buffer encoding
/// (split in two buffers at the first byte, since a replica may straddle
/// buffers) and as the legacy list of longs. Whatever decodes as buffers
/// must encode (DataNode side) and decode again to the same replicas.
pub fn block_report(data: &[u8]) {
    use cairn_namenode::datanode_service::decode_storage_report;
    if let Ok(r) = pb::StorageBlockReportProto::decode(data) {
        let _ = decode_storage_report(&r);
    }
    let split = data.first().map_or(0, |b| usize::from(*b)).min(data.len());
    let (a, b) = data.split_at(split);
    let buffers = pb::StorageBlockReportProto {
        blocks_buffers: vec![Bytes::copy_from_slice(a), Bytes::copy_from_slice(b)],
        ..Default::default()
    };
    if let Ok(replicas) = decode_storage_report(&buffers) {
        let reported: Vec<ReportedReplica> = replicas
            .iter()
            .map(|&(id, gs, len, finalized)| ReportedReplica {
                block: cairn_datanode::ids::BlockId(id.0),
                len,
                gs,
                state: if finalized {
                    ReportedState::Finalized
                } else {
                    ReportedState::Rbw
                },
            })
            .collect();
        let again = pb::StorageBlockReportProto {
            blocks_buffers: cairn_datanode::block_report::encode_buffers(&reported),
            ..Default::default()
        };
        let back = decode_storage_report(&again);
        assert_eq!(back.as_ref().ok(), Some(&replicas), "buffer round trip");
    }
    let legacy = pb::StorageBlockReportProto {
        blocks: data
            .chunks_exact(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b.copy_from_slice(c);
                u64::from_be_bytes(b)
            })
            .collect(),
        ..Default::default()
    };
    let _ = decode_storage_report(&legacy);
}

// ------------------------------------------------------- data transfer

/// The DataNode's packet limit by default.
const MAX_PACKET_BYTES: usize = 16 * 1024 * 1024;

/// A client's byte stream to a DataNode's transfer port (version, op,
/// request, then packets or a read status), read as `datanode::transfer`
/// reads it; then the same bytes as what a writer reads back (a response,
/// then pipeline acks) and as what a reader reads back (a response, then
/// packets).
pub fn xfer_stream(data: &[u8]) {
    xfer_server(data, data.len().is_multiple_of(2));
    xfer_acks(data);
    xfer_read_reply(data);
}

fn xfer_server(mut r: &[u8], small_reads: bool) {
    loop {
        let Some((&[v0, v1, code], rest)) = r.split_first_chunk::<3>() else {
            return;
        };
        r = rest;
        if u16::from_be_bytes([v0, v1]) != protocols::DATA_TRANSFER_VERSION {
            return;
        }
        match code {
            op::WRITE_BLOCK => {
                let Some(req) = read_op::<pb::OpWriteBlockProto>(&mut r) else {
                    return;
                };
                let Ok(client) = write::check_write_request(&req) else {
                    return;
                };
                receive_packets(&mut r, client, small_reads);
                return;
            }
            op::READ_BLOCK => {
                let Some(req) = read_op::<pb::OpReadBlockProto>(&mut r) else {
                    return;
                };
                if BlockPoolId::new(&req.header.base_header.block.pool_id).is_err() {
                    return;
                }
                // As read_block, against a replica of the block's length.
                let replica_len = req.header.base_header.block.num_bytes.unwrap_or(0);
                let (offset, len) = (req.offset, req.len);
                if offset > replica_len
                    || offset.saturating_add(len) > replica_len
                    || offset.checked_add(len).is_none()
                {
                    return;
                }
                let _ = read::aligned_range(offset, len, 512, replica_len);
                if block_on(read_delimited::<pb::ClientReadStatusProto, _>(&mut r, 64)).is_err() {
                    return;
                }
            }
            op::TRANSFER_BLOCK => {
                if let Some(req) = read_op::<pb::OpTransferBlockProto>(&mut r) {
                    let _ = BlockPoolId::new(&req.header.base_header.block.pool_id);
                }
                return;
            }
            op::BLOCK_CHECKSUM => {
                if let Some(req) = read_op::<pb::OpBlockChecksumProto>(&mut r) {
                    let _ = BlockPoolId::new(&req.header.block.pool_id);
                    let _ = checksum_op::requested_mode(req.block_checksum_options.as_ref());
                }
                return;
            }
            _ => {
                let _ = read_op::<pb::OpCopyBlockProto>(&mut r);
                return;
            }
        }
    }
}

/// An op's request, as `transfer::read_op` reads it.
fn read_op<M: Message + Default>(r: &mut &[u8]) -> Option<M> {
    block_on(read_delimited::<M, _>(r, MAX_OP_BYTES)).ok()
}

/// The WRITE_BLOCK network stage's reading and checking of packets.
fn receive_packets(r: &mut &[u8], client: DataChecksum, small_reads: bool) {
    let small = small_reads.then_some(4096);
    loop {
        let Ok(packet) = block_on(read_packet(r, MAX_PACKET_BYTES, small)) else {
            return;
        };
        let h = &packet.header;
        let Ok(offset) = write::check_packet(h, packet.data_len()) else {
            return;
        };
        if h.last_packet_in_block {
            return;
        }
        let _ = offset.checked_add(packet.data_len() as u64);
        if packet.data_len() > 0
            && client
                .verify(Crc32cImpl::Hardware, &packet.data(), &packet.sums())
                .is_err()
        {
            return;
        }
    }
}

/// Reads a `BlockOpResponseProto`; whether one was there.
fn read_response(r: &mut &[u8]) -> bool {
    block_on(read_delimited::<pb::BlockOpResponseProto, _>(
        r,
        MAX_OP_BYTES,
    ))
    .is_ok()
}

/// What the upstream side of a write reads: the connect-ack, then one
/// pipeline ack per packet (folded into its own ack as a DataNode does).
fn xfer_acks(mut r: &[u8]) {
    if !read_response(&mut r) {
        return;
    }
    while let Ok(a) = block_on(read_delimited::<pb::PipelineAckProto, _>(
        &mut r,
        write::MAX_ACK_BYTES,
    )) {
        let _ = ack::first_error(&a);
        let _ = ack::pipeline_ack(a.seqno, pb::Status::Success, Some(&a), false, 0);
    }
}

/// What a reader reads back: the response, then packets to the last one.
fn xfer_read_reply(mut r: &[u8]) {
    if !read_response(&mut r) {
        return;
    }
    while let Ok(p) = block_on(read_packet(&mut r, MAX_PACKET_BYTES, None)) {
        if p.header.last_packet_in_block {
            return;
        }
    }
}

// -------------------------------------------------------- journal, image

/// Makes every whole record's checksum right (and numbers the records
/// 1, 2, ... when `renumber`), so the decoding behind the checksum is
/// reached; the walk stops at the first record that does not fit.
pub fn fix_record_crcs(buf: &mut [u8], renumber: bool) {
    let mut pos = 0usize;
    let mut txid = 1u64;
    while let Some(head) = buf.get(pos..pos + RECORD_HEADER_LEN) {
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        if len == 0 {
            return;
        }
        let end = pos + RECORD_HEADER_LEN + len;
        if end > buf.len() {
            return;
        }
        if renumber {
            buf[pos + 8..pos + 16].copy_from_slice(&txid.to_be_bytes());
            txid += 1;
        }
        let crc = crc32c::crc32c(&buf[pos + 8..end]);
        buf[pos + 4..pos + 8].copy_from_slice(&crc.to_be_bytes());
        pos = end;
    }
}

fn namespace() -> Namespace {
    Namespace::new("root", "supergroup", 0, Limits::default())
}

/// A scratch directory of this process and thread (in `/dev/shm` where
/// there is one), made empty; the caller removes it.
fn scratch_dir() -> PathBuf {
    let base = Path::new("/dev/shm");
    let base = if base.is_dir() {
        base.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    let thread = format!("{:?}", std::thread::current().id())
        .chars()
        .filter(char::is_ascii_digit)
        .collect::<String>();
    let dir = base.join(format!("cairn-fuzz-{}-t{thread}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::create_dir_all(&dir);
    dir
}

/// Replays `bytes` as the in-progress edit segment `edits_inprogress_1`
/// (a real file: replay reads files), plainly and in recovery mode
/// skipping every damaged spot, and reads it as inotify does
/// (`getEditsFromTxid`: the edits from txid 1, each turned into events).
fn replay_segment(bytes: &[u8]) {
    let dir = scratch_dir();
    let path = dir.join("edits_inprogress_1");
    if std::fs::write(&path, bytes).is_err() {
        return;
    }
    let seg = [SegmentFile {
        path: path.clone(),
        first: 1,
        last: None,
    }];
    let _ = nn_storage::replay(&cairn_common::disk::RealDisk, &mut namespace(), &seg, 0);
    let mut skip = |_: &str| RecoveryChoice::Skip;
    let _ = nn_storage::replay_with(
        &cairn_common::disk::RealDisk,
        &mut namespace(),
        &seg,
        0,
        Some(&mut skip),
    );
    let _ =
        cairn_namenode::inotify::read_edits(std::slice::from_ref(&dir), 1, u64::MAX, |_, edit| {
            let _ = cairn_namenode::inotify::events_of(edit, &|_| Some(1));
            false
        });
    let _ = std::fs::remove_dir_all(&dir);
}

/// An edit log segment: records decoded one after another as a reader
/// does, then replayed into a namespace with checksums as they are and
/// made right.
pub fn journal(data: &[u8]) {
    let mut pos = 0usize;
    while let Some(Decoded::Record { size, .. }) = data.get(pos..).map(decode_record) {
        pos += size;
    }
    replay_segment(data);
    let mut fixed = data.to_vec();
    fix_record_crcs(&mut fixed, true);
    replay_segment(&fixed);
}

/// Header bytes of a format-1 image (magic, format, txid, three counters).
const IMAGE_HEADER_LEN: usize = 44;

/// A checkpoint image, as it is and with its checksums made right (format
/// 1: every record's and the file's; formats 2 and 3: every section's and
/// the header's); and the same bytes as a NameNode VERSION file, likewise.
pub fn image(data: &[u8]) {
    let _ = nn_storage::decode_image(data, "root", "supergroup", Limits::default());
    let sectioned = [2u32, 3].map(u32::to_be_bytes);
    if data
        .get(8..12)
        .is_some_and(|f| sectioned.iter().any(|s| s[..] == *f))
    {
        let mut fixed = data.to_vec();
        fix_section_crcs(&mut fixed);
        let _ = nn_storage::decode_image(&fixed, "root", "supergroup", Limits::default());
    } else if data.len() >= IMAGE_HEADER_LEN + 8 {
        let mut fixed = data.to_vec();
        let body_end = fixed.len() - 4;
        fix_record_crcs(&mut fixed[IMAGE_HEADER_LEN..body_end], false);
        let crc = crc32c::crc32c(&fixed[..body_end]);
        fixed[body_end..].copy_from_slice(&crc.to_be_bytes());
        let _ = nn_storage::decode_image(&fixed, "root", "supergroup", Limits::default());
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let path = Path::new("VERSION");
        let _ = VersionInfo::parse(path, text);
        if let Some((body, _)) = text.rsplit_once("checksum=") {
            let fixed = format!("{body}checksum={:08x}\n", crc32c::crc32c(body.as_bytes()));
            let _ = VersionInfo::parse(path, &fixed);
        }
    }
}

// ------------------------------------------------------------ meta files

/// A replica held in memory: its meta file and its data.
struct MemReplica<'a> {
    checksum: DataChecksum,
    meta: &'a [u8],
    data: &'a [u8],
}

impl MemReplica<'_> {
    fn range(start: u64, want: usize, have: usize) -> Result<std::ops::Range<usize>, ReadError> {
        let err = || ReadError::Range {
            start,
            end: start.saturating_add(want as u64),
            len: have as u64,
        };
        let s = usize::try_from(start).map_err(|_| err())?;
        let e = s.checked_add(want).ok_or_else(err)?;
        if e > have {
            return Err(err());
        }
        Ok(s..e)
    }
}

impl ChecksumSource for MemReplica<'_> {
    fn visible_len(&self) -> u64 {
        self.data.len() as u64
    }
    fn checksum(&self) -> DataChecksum {
        self.checksum
    }
    fn read_checksums(&self, first_chunk: u64, sums: &mut [u8]) -> Result<(), ReadError> {
        let at = meta::checksum_offset(&self.checksum, first_chunk);
        let r = Self::range(at, sums.len(), self.meta.len())?;
        sums.copy_from_slice(&self.meta[r]);
        Ok(())
    }
    fn read_data(&self, start: u64, data: &mut [u8]) -> Result<(), ReadError> {
        let r = Self::range(start, data.len(), self.data.len())?;
        data.copy_from_slice(&self.data[r]);
        Ok(())
    }
}

/// A replica's meta file: `[request length u64][stripe u64][meta length
/// u16][meta file][block data]`. The meta header is decoded, the data
/// checked against the stored checksums, and BLOCK_CHECKSUM computed over
/// it (MD5 of CRCs, or composed CRCs when the stripe is not zero). The
/// whole input is also tried as a DataNode VERSION file and as a replica
/// file name.
pub fn meta_file(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = layout::parse_name(text);
    }
    let _ = StorageVersion::decode(data);
    let Some((head, rest)) = data.split_first_chunk::<18>() else {
        return;
    };
    let mut b = [0u8; 8];
    b.copy_from_slice(&head[0..8]);
    let request_len = u64::from_be_bytes(b);
    b.copy_from_slice(&head[8..16]);
    let stripe = u64::from_be_bytes(b);
    let meta_len = usize::from(u16::from_be_bytes([head[16], head[17]])).min(rest.len());
    let (meta_bytes, block) = rest.split_at(meta_len);
    let Ok(checksum) = meta::decode_header(meta_bytes) else {
        return;
    };
    let _ = meta::meta_len(&checksum, block.len() as u64);
    if let Some(sums) = meta_bytes.get(meta::HEADER_LEN as usize..) {
        let _ = checksum.verify(Crc32cImpl::Hardware, block, sums);
        if checksum.kind == ChecksumKind::Crc32c {
            let _ = checksum.verify(Crc32cImpl::Software, block, sums);
        }
    }
    let replica = MemReplica {
        checksum,
        meta: meta_bytes,
        data: block,
    };
    let mode = if stripe == 0 {
        Mode::Md5Crc
    } else {
        Mode::CompositeCrc {
            stripe_bytes: stripe - 1,
        }
    };
    let _ = checksum_op::compute(&replica, request_len, mode, Crc32cImpl::Hardware);
}

// ---------------------------------------------------------- configuration

/// A configuration file (`core-site.xml`, `hdfs-site.xml`): parsed with
/// `${...}` substitution, every key read with every typed getter, and the
/// NameNode's configuration built from it.
pub fn config_xml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(conf) = Configuration::from_xml_text(Path::new("fuzz-site.xml"), text) else {
        return;
    };
    let keys: Vec<String> = conf.iter().map(|(k, _)| k.to_string()).collect();
    for key in &keys {
        let _ = conf.get_str(key);
        let _ = conf.get_bool(key, false);
        let _ = conf.get_u32(key, 0);
        let _ = conf.get_u64(key, 0);
        let _ = conf.get_i64(key, 0);
        let _ = conf.get_bytes(key, 0);
        let _ = conf.get_duration(key, TimeUnit::Milliseconds, std::time::Duration::ZERO);
        let _ = conf.get_strings(key);
        let _ = conf.get_host_port(key, "localhost:0");
        let _ = conf.get_hdfs_uri(key, "hdfs://localhost");
    }
    let _ = conf.namenode_rpc_address();
    let _ = cairn_namenode::config::NameNodeConfig::from_conf(&conf);
}

/// Makes the checksums of a sectioned (format 2 or 3) image right where
/// its table can be read: each section's (kind, crc, offset, length
/// entries after the 48-byte fixed header), then the header's own.
fn fix_section_crcs(img: &mut [u8]) {
    let be = |b: &[u8], at: usize, n: usize| -> Option<u64> {
        b.get(at..at + n)
            .map(|s| s.iter().fold(0u64, |acc, x| (acc << 8) | u64::from(*x)))
    };
    let Some(count) = be(img, 44, 4) else { return };
    let count = (count as usize).min(1 << 16);
    let table_end = 48 + 24 * count;
    if img.len() < table_end + 4 {
        return;
    }
    for i in 0..count {
        let at = 48 + 24 * i;
        let (Some(off), Some(len)) = (be(img, at + 8, 8), be(img, at + 16, 8)) else {
            return;
        };
        let Some(end) = off.checked_add(len) else {
            continue;
        };
        if let Some(sec) = img.get(off as usize..end as usize) {
            let crc = crc32c::crc32c(sec);
            img[at + 4..at + 8].copy_from_slice(&crc.to_be_bytes());
        }
    }
    let crc = crc32c::crc32c(&img[..table_end]);
    img[table_end..table_end + 4].copy_from_slice(&crc.to_be_bytes());
}
