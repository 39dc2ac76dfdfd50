//! Decodes bytes captured between real Hadoop 3.4.1 daemons and real clients
//! (FsShell, hdfs-native 0.14.7, Java DataNodes). The vectors were cut out of
//! `shared/hdfs-wire/captures/*.pcap` (each comment names the transcript,
//! connection, direction and stream offset) and are copied into
//! `captures/vectors.rs` so the tests never read `../shared` at run time.
//!
//! Java and Hadoop encode fields in field-number order, and so does prost
//! with our `.proto` files, so re-encoding a decoded message must give the
//! captured bytes back exactly: that checks field numbers, wire types,
//! packed-ness and that every required/explicit field survives.

use bytes::{Buf, Bytes};
use cairn_proto::hadoop::common::{
    HaServiceStateProto, RequestHeaderProto, RpcKindProto, RpcRequestHeaderProto,
    RpcResponseHeaderProto, TokenProto,
};
use cairn_proto::hadoop::hdfs::*;
use cairn_proto::protocols;
use prost::Message;

#[path = "captures/vectors.rs"]
mod vectors;
use vectors::*;

// ---------------------------------------------------------------- helpers

fn hex(s: &str) -> Bytes {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).expect("bad hex in test vector"))
        .collect::<Vec<u8>>()
        .into()
}

/// Splits one length-delimited message off the front of `buf`.
fn delimited(buf: &mut Bytes) -> Bytes {
    let len = prost::decode_length_delimiter(&mut *buf).expect("length delimiter");
    assert!(
        len <= buf.len(),
        "delimited length {len} > {} left",
        buf.len()
    );
    buf.split_to(len)
}

/// Decodes `bytes` as `M`, re-encodes it and checks the bytes are identical.
fn roundtrip<M: Message + Default>(bytes: &Bytes) -> M {
    let msg = M::decode(bytes.clone()).expect("decode");
    assert_eq!(
        msg.encode_to_vec(),
        bytes.to_vec(),
        "re-encoding {} changed the bytes",
        std::any::type_name::<M>()
    );
    msg
}

/// One IPC request frame: 4-byte BE length, delimited RpcRequestHeaderProto,
/// delimited RequestHeaderProto, delimited request.
fn call_frame(frame: &str) -> (RpcRequestHeaderProto, RequestHeaderProto, Bytes) {
    let mut buf = hex(frame);
    let len = buf.get_u32() as usize;
    assert_eq!(len, buf.len(), "frame length");
    let rpc: RpcRequestHeaderProto = roundtrip(&delimited(&mut buf));
    let req: RequestHeaderProto = roundtrip(&delimited(&mut buf));
    let payload = delimited(&mut buf);
    assert!(buf.is_empty(), "bytes left after the request");
    assert_eq!(rpc.rpc_kind(), RpcKindProto::RpcProtocolBuffer);
    assert_eq!(req.client_protocol_version, protocols::PROTOCOL_VERSION);
    (rpc, req, payload)
}

/// One IPC response frame: 4-byte BE length, delimited RpcResponseHeaderProto,
/// delimited response.
fn reply_frame(frame: &str) -> (RpcResponseHeaderProto, Bytes) {
    let mut buf = hex(frame);
    let len = buf.get_u32() as usize;
    assert_eq!(len, buf.len(), "frame length");
    let rpc: RpcResponseHeaderProto = roundtrip(&delimited(&mut buf));
    let payload = delimited(&mut buf);
    assert!(buf.is_empty(), "bytes left after the response");
    assert_eq!(rpc.server_ipc_version_num, Some(9));
    (rpc, payload)
}

/// A DataTransfer op request: 2-byte BE version, op byte, delimited message.
fn op_request(bytes: &str, op: u8) -> Bytes {
    let mut buf = hex(bytes);
    assert_eq!(buf.get_u16(), protocols::DATA_TRANSFER_VERSION);
    assert_eq!(buf.get_u8(), op);
    let msg = delimited(&mut buf);
    assert!(buf.is_empty());
    msg
}

/// A packet's PLEN, HLEN and header (checksums/data not included).
fn packet_header(bytes: &str) -> (u32, PacketHeaderProto) {
    let mut buf = hex(bytes);
    let plen = buf.get_u32();
    let hlen = buf.get_u16() as usize;
    assert!(hlen <= protocols::PACKET_HEADER_MAX_LEN);
    let header = roundtrip(&buf.split_to(hlen));
    (plen, header)
}

/// The empty block token Hadoop sends when block tokens are off.
fn assert_empty_token(t: &TokenProto) {
    assert!(t.identifier.is_empty() && t.password.is_empty());
    assert!(t.kind.is_empty() && t.service.is_empty());
}

fn read_varint(buf: &mut Bytes) -> u64 {
    prost::encoding::decode_varint(buf).expect("varint")
}

// ---------------------------------------------------------------- ClientProtocol

#[test]
fn fsshell_get_file_info_call() {
    let (rpc, req, payload) = call_frame(FSSHELL_GET_FILE_INFO_CALL);
    assert_eq!(rpc.call_id, 0);
    assert_eq!(rpc.retry_count, Some(0));
    assert_eq!(rpc.client_id.len(), 16);
    // ToolRunner tools put callerContext "CLI" in every header.
    assert_eq!(
        rpc.caller_context.as_ref().map(|c| c.context.as_str()),
        Some("CLI")
    );
    assert_eq!(req.method_name, "getFileInfo");
    assert_eq!(
        req.declaring_class_protocol_name,
        protocols::CLIENT_PROTOCOL
    );
    let msg: GetFileInfoRequestProto = roundtrip(&payload);
    assert_eq!(msg.src, "/cap/java/f200k.bin");
}

#[test]
fn fsshell_create_call() {
    let (rpc, req, payload) = call_frame(FSSHELL_CREATE_CALL);
    assert_eq!(rpc.call_id, 3);
    assert_eq!(req.method_name, "create");
    let msg: CreateRequestProto = roundtrip(&payload);
    assert_eq!(msg.src, "/cap/java/f200k.bin._COPYING_");
    assert_eq!(msg.masked.perm, 0o644);
    assert_eq!(msg.client_name, "DFSClient_NONMAPREDUCE_1004478482_1");
    assert_eq!(
        msg.create_flag,
        CreateFlagProto::Create as u32 | CreateFlagProto::Overwrite as u32
    );
    assert!(msg.create_parent);
    assert_eq!(msg.replication, 2);
    assert_eq!(msg.block_size, 134_217_728);
    assert_eq!(
        msg.crypto_protocol_version().collect::<Vec<_>>(),
        vec![CryptoProtocolVersionProto::EncryptionZones]
    );
    assert_eq!(msg.unmasked.map(|p| p.perm), Some(0o666));
    assert_eq!(msg.ec_policy_name, None);
}

#[test]
fn hdfs_native_create_call() {
    let (rpc, req, payload) = call_frame(NATIVE_CREATE_CALL);
    // hdfs-native sends no callerContext.
    assert_eq!(rpc.caller_context, None);
    assert_eq!(req.method_name, "create");
    let msg: CreateRequestProto = roundtrip(&payload);
    assert_eq!(msg.src, "/cap/native/f200k.bin");
    assert_eq!(msg.masked.perm, 0o644);
    assert!(msg.client_name.starts_with("hdfs_native_client-"));
    // CREATE only, no OVERWRITE.
    assert_eq!(msg.create_flag, CreateFlagProto::Create as u32);
    assert_eq!(msg.replication, 2);
    assert_eq!(msg.block_size, 1_048_576);
    assert_eq!(msg.unmasked, None);
}

#[test]
fn get_file_info_reply_directory() {
    let (rpc, payload) = reply_frame(FSSHELL_GET_FILE_INFO_DIR_REPLY);
    assert_eq!(rpc.call_id, 1);
    assert_eq!(
        rpc.status(),
        cairn_proto::hadoop::common::rpc_response_header_proto::RpcStatusProto::Success
    );
    let msg: GetFileInfoResponseProto = roundtrip(&payload);
    let fs = msg.fs.expect("fs present");
    assert_eq!(fs.file_type(), hdfs_file_status_proto::FileType::IsDir);
    assert!(fs.path.is_empty());
    assert_eq!(fs.length, 0);
    assert_eq!(fs.permission.perm, 0o755);
    assert_eq!(fs.owner, "root");
    assert_eq!(fs.group, "supergroup");
    assert_eq!(fs.modification_time, 1_795_239_095_833);
    assert_eq!(fs.access_time, 0);
    assert_eq!(fs.block_replication, Some(0));
    assert_eq!(fs.blocksize, Some(0));
    assert_eq!(fs.file_id, Some(16387));
    assert_eq!(fs.children_num, Some(0));
    assert_eq!(fs.storage_policy, Some(0));
    assert_eq!(fs.flags, Some(0));
    assert_eq!(fs.ec_policy, None);
}

#[test]
fn get_file_info_absent_children_num_defaults_to_minus_one() {
    let fs = HdfsFileStatusProto::default();
    assert_eq!(fs.children_num(), -1);
    assert_eq!(fs.file_id(), 0);
}

#[test]
fn create_reply_file_status() {
    let (rpc, payload) = reply_frame(FSSHELL_CREATE_REPLY);
    assert_eq!(rpc.call_id, 3);
    let msg: CreateResponseProto = roundtrip(&payload);
    let fs = msg.fs.expect("create must return fs");
    assert_eq!(fs.file_type(), hdfs_file_status_proto::FileType::IsFile);
    assert!(fs.path.is_empty());
    assert_eq!(fs.permission.perm, 0o644);
    assert_eq!(fs.modification_time, fs.access_time);
    assert_eq!(fs.block_replication, Some(2));
    assert_eq!(fs.blocksize, Some(134_217_728));
    assert_eq!(fs.file_id, Some(16388));
    assert_eq!(fs.children_num, Some(0));
}

#[test]
fn get_listing_reply() {
    let (_, payload) = reply_frame(FSSHELL_GET_LISTING_REPLY);
    let msg: GetListingResponseProto = roundtrip(&payload);
    let list = msg.dir_list.expect("dir_list");
    assert_eq!(list.remaining_entries, 0);
    assert_eq!(list.partial_listing.len(), 1);
    // Listing entries carry the child's local name only.
    assert_eq!(&list.partial_listing[0].path[..], b"java");
}

#[test]
fn add_block_reply_located_block() {
    let (rpc, payload) = reply_frame(FSSHELL_ADD_BLOCK_REPLY);
    assert_eq!(rpc.call_id, 4);
    let msg: AddBlockResponseProto = roundtrip(&payload);
    let lb = msg.block;
    assert_eq!(lb.b.pool_id, "BP-1248180331-127.0.0.1-1795239077730");
    assert_eq!(lb.b.block_id, 1_073_741_825);
    assert_eq!(lb.b.generation_stamp, 1001);
    assert_eq!(lb.b.num_bytes, Some(0));
    assert_eq!(lb.offset, 0);
    assert!(!lb.corrupt);
    assert_empty_token(&lb.block_token);
    assert_eq!(lb.is_cached, vec![false, false]);
    assert_eq!(
        lb.storage_types().collect::<Vec<_>>(),
        vec![StorageTypeProto::Disk, StorageTypeProto::Disk]
    );
    assert_eq!(
        lb.storage_ids,
        vec![
            "DS-01db1b43-8145-4e69-a85e-75b5aa95881a",
            "DS-391a01e7-ac20-4e84-afcd-587515528404"
        ]
    );
    assert_eq!(lb.locs.len(), 2);
    let first = &lb.locs[0];
    assert_eq!(first.id.ip_addr, "127.0.0.1");
    assert_eq!(
        first.id.datanode_uuid,
        "2cc83166-3cdf-498c-9835-1113f7251961"
    );
    assert_eq!(first.id.xfer_port, 37559);
    assert_eq!(first.id.info_port, 43823);
    assert_eq!(first.id.ipc_port, 41775);
    assert_eq!(first.id.info_secure_port, Some(0));
    assert_eq!(first.capacity, Some(541_106_348_032));
    assert_eq!(first.location.as_deref(), Some("/default-rack"));
    assert_eq!(first.admin_state(), datanode_info_proto::AdminState::Normal);
    assert_eq!(first.upgrade_domain, None);
    assert_eq!(first.num_blocks, Some(0));
    assert_eq!(lb.locs[1].id.xfer_port, 40421);
    assert!(lb.block_indices.is_none() && lb.block_tokens.is_empty());
}

#[test]
fn server_defaults_reply_reencodes_exactly() {
    let (rpc, payload) = reply_frame(FSSHELL_SERVER_DEFAULTS_REPLY);
    assert_eq!(rpc.call_id, 5);
    // The bytes quoted in PROTOCOL.md §2.1.
    let quoted = hex(
        "0A 1D 08 80 80 80 40 10 80 04 18 80 80 04 20 02 28 80 20 30 00 38 00 40 02 4A 00 50 07 58 00",
    );
    assert_eq!(payload, quoted);
    let msg: GetServerDefaultsResponseProto = roundtrip(&payload);
    let d = &msg.server_defaults;
    assert_eq!(d.block_size, 134_217_728);
    assert_eq!(d.bytes_per_checksum, 512);
    assert_eq!(d.write_packet_size, 65536);
    assert_eq!(d.replication, 2);
    assert_eq!(d.file_buffer_size, 4096);
    assert_eq!(d.encrypt_data_transfer, Some(false));
    assert_eq!(d.trash_interval, Some(0));
    assert_eq!(d.checksum_type(), ChecksumTypeProto::ChecksumCrc32c);
    assert_eq!(d.key_provider_uri.as_deref(), Some(""));
    assert_eq!(d.policy_id, Some(7));
    assert_eq!(d.snapshot_trash_root_enabled, Some(false));

    // Built from scratch, the way a NameNode would, it gives the same bytes.
    let built = GetServerDefaultsResponseProto {
        server_defaults: FsServerDefaultsProto {
            block_size: 128 << 20,
            bytes_per_checksum: 512,
            write_packet_size: 64 << 10,
            replication: 2,
            file_buffer_size: 4096,
            encrypt_data_transfer: Some(false),
            trash_interval: Some(0),
            checksum_type: Some(ChecksumTypeProto::ChecksumCrc32c as i32),
            key_provider_uri: Some(String::new()),
            policy_id: Some(7),
            snapshot_trash_root_enabled: Some(false),
        },
    };
    assert_eq!(built.encode_to_vec(), quoted.to_vec());
    // An absent checksum type means CRC32 (the proto default), hence "send it".
    assert_eq!(
        FsServerDefaultsProto::default().checksum_type(),
        ChecksumTypeProto::ChecksumCrc32
    );
}

#[test]
fn fsync_call_zigzag_length() {
    let (_, req, payload) = call_frame(OPEN_FSYNC_CALL);
    assert_eq!(req.method_name, "fsync");
    let msg: FsyncRequestProto = roundtrip(&payload);
    assert_eq!(msg.src, "/cap/java/open.txt");
    assert_eq!(msg.last_block_length, Some(1000));
    assert_eq!(msg.file_id, Some(16391));
    assert_eq!(FsyncRequestProto::default().last_block_length(), -1);
}

#[test]
fn required_fields_are_always_encoded() {
    // proto2 `required` zero values must still be on the wire.
    assert_eq!(
        CompleteResponseProto { result: false }.encode_to_vec(),
        [0x08, 0x00]
    );
    assert_eq!(
        TokenProto::default().encode_to_vec(),
        hex("0A 00 12 00 1A 00 22 00").to_vec()
    );
    let listing = DirectoryListingProto::default();
    assert_eq!(listing.encode_to_vec(), [0x10, 0x00]);
    // A missing getFileInfo target is the empty message.
    assert!(GetFileInfoResponseProto::default()
        .encode_to_vec()
        .is_empty());
    let ha = HaServiceStateResponseProto {
        state: HaServiceStateProto::Active as i32,
    };
    assert_eq!(ha.encode_to_vec(), [0x08, 0x01]);
}

// ---------------------------------------------------------------- DataTransferProtocol

#[test]
fn fsshell_write_block_request() {
    let msg: OpWriteBlockProto =
        roundtrip(&op_request(FSSHELL_WRITE_BLOCK, protocols::op::WRITE_BLOCK));
    let base = msg.header.base_header.clone();
    assert_eq!(base.block.block_id, 1_073_741_825);
    assert_eq!(base.block.generation_stamp, 1001);
    // Java's header block carries the preferred block size, not the length.
    assert_eq!(base.block.num_bytes, Some(134_217_728));
    assert_empty_token(base.token.as_ref().expect("token"));
    assert_eq!(
        msg.header.client_name,
        "DFSClient_NONMAPREDUCE_1004478482_1"
    );
    assert_eq!(msg.targets.len(), 1);
    assert_eq!(msg.targets[0].id.xfer_port, 40421);
    assert_eq!(msg.source, None);
    assert_eq!(
        msg.stage(),
        op_write_block_proto::BlockConstructionStage::PipelineSetupCreate
    );
    assert_eq!(msg.pipeline_size, 2);
    assert_eq!((msg.min_bytes_rcvd, msg.max_bytes_rcvd), (0, 0));
    assert_eq!(msg.latest_generation_stamp, 0);
    assert_eq!(
        msg.requested_checksum.r#type(),
        ChecksumTypeProto::ChecksumCrc32c
    );
    assert_eq!(msg.requested_checksum.bytes_per_checksum, 512);
    assert_eq!(msg.caching_strategy, Some(CachingStrategyProto::default()));
    assert_eq!(msg.storage_type(), StorageTypeProto::Disk);
    assert_eq!(
        msg.target_storage_types().collect::<Vec<_>>(),
        vec![StorageTypeProto::Disk]
    );
    assert_eq!(msg.allow_lazy_persist, Some(false));
    assert_eq!(msg.pinning, Some(false));
    // Unpacked repeated bool on the wire (`78 00`).
    assert_eq!(msg.target_pinnings, vec![false]);
    assert_eq!(
        msg.storage_id.as_deref(),
        Some("DS-01db1b43-8145-4e69-a85e-75b5aa95881a")
    );
    assert_eq!(
        msg.target_storage_ids,
        vec!["DS-391a01e7-ac20-4e84-afcd-587515528404"]
    );
}

#[test]
fn packet_headers() {
    let (plen, h) = packet_header(FSSHELL_FIRST_PACKET_HEAD);
    assert_eq!(plen, 4 + 126 * 4 + 64512);
    assert_eq!(h.offset_in_block, 0);
    assert_eq!(h.seqno, 0);
    assert!(!h.last_packet_in_block);
    assert_eq!(h.data_len, 64512);
    assert_eq!(h.sync_block, None);
    assert_eq!(h.encoded_len(), 25);

    let (plen, h) = packet_header(FSSHELL_LAST_PACKET);
    assert_eq!(plen, 4);
    assert_eq!((h.offset_in_block, h.seqno, h.data_len), (200_000, 4, 0));
    assert!(h.last_packet_in_block);
    assert_eq!(h.sync_block, None);

    // hdfs-native sets syncBlock on its last packet: 27-byte header.
    let (plen, h) = packet_header(NATIVE_LAST_PACKET);
    assert_eq!(plen, 4);
    assert!(h.last_packet_in_block);
    assert_eq!(h.sync_block, Some(true));
    assert_eq!(h.encoded_len(), protocols::PACKET_HEADER_MAX_LEN);
}

#[test]
fn connect_ack_and_pipeline_acks() {
    let mut buf = hex(FSSHELL_CONNECT_ACK);
    let ack: BlockOpResponseProto = roundtrip(&delimited(&mut buf));
    assert_eq!(ack.status(), Status::Success);
    assert_eq!(ack.first_bad_link.as_deref(), Some(""));

    // First node of a 2-node pipeline: [own, downstream], flags packed.
    let mut buf = hex(FSSHELL_ACK_TWO_NODES);
    let ack: PipelineAckProto = roundtrip(&delimited(&mut buf));
    assert_eq!(ack.seqno, 0);
    assert_eq!(
        ack.reply().collect::<Vec<_>>(),
        vec![Status::Success, Status::Success]
    );
    assert_eq!(ack.downstream_ack_time_nanos, Some(4_708_717));
    assert_eq!(ack.flag, vec![0, 0]);

    // Last node: the exact bytes a DataNode of ours must produce.
    let built = PipelineAckProto {
        seqno: 0,
        reply: vec![Status::Success as i32],
        downstream_ack_time_nanos: Some(0),
        flag: vec![0],
    };
    assert_eq!(
        built.encode_length_delimited_to_vec(),
        hex(FSSHELL_ACK_LAST_NODE).to_vec()
    );
    let built = BlockOpResponseProto {
        status: Status::Success as i32,
        first_bad_link: Some(String::new()),
        ..Default::default()
    };
    assert_eq!(
        built.encode_length_delimited_to_vec(),
        hex(FSSHELL_CONNECT_ACK).to_vec()
    );
}

#[test]
fn read_block_request_response_status() {
    let msg: OpReadBlockProto =
        roundtrip(&op_request(FSSHELL_READ_BLOCK, protocols::op::READ_BLOCK));
    assert_eq!(msg.header.base_header.block.num_bytes, Some(200_000));
    assert_eq!((msg.offset, msg.len), (0, 200_000));
    assert_eq!(msg.send_checksums, Some(true));
    assert_eq!(msg.caching_strategy, Some(CachingStrategyProto::default()));

    let mut buf = hex(FSSHELL_READ_RESPONSE);
    let resp: BlockOpResponseProto = roundtrip(&delimited(&mut buf));
    assert_eq!(resp.status(), Status::Success);
    let info = resp.read_op_checksum_info.expect("readOpChecksumInfo");
    assert_eq!(info.checksum.r#type(), ChecksumTypeProto::ChecksumCrc32c);
    assert_eq!(info.checksum.bytes_per_checksum, 512);
    assert_eq!(info.chunk_offset, 0);

    let mut buf = hex(FSSHELL_READ_STATUS);
    let st: ClientReadStatusProto = roundtrip(&delimited(&mut buf));
    assert_eq!(st.status(), Status::ChecksumOk);
}

#[test]
fn hdfs_native_range_read() {
    let msg: OpReadBlockProto =
        roundtrip(&op_request(NATIVE_READ_RANGE, protocols::op::READ_BLOCK));
    assert_eq!((msg.offset, msg.len), (70_000, 1000));
    assert_eq!(msg.caching_strategy, None);
    assert!(!msg.header.client_name.is_empty());
    let mut buf = hex(NATIVE_READ_RANGE_RESPONSE);
    let resp: BlockOpResponseProto = roundtrip(&delimited(&mut buf));
    let info = resp.read_op_checksum_info.expect("readOpChecksumInfo");
    // Chunk-aligned start below the requested offset.
    assert_eq!(info.chunk_offset, 69_632);
}

// ---------------------------------------------------------------- DatanodeProtocol

#[test]
fn datanode_heartbeat_call() {
    let (rpc, req, payload) = call_frame(DN_HEARTBEAT_CALL);
    assert_eq!(rpc.call_id, 5);
    assert_eq!(req.method_name, "sendHeartbeat");
    assert_eq!(
        req.declaring_class_protocol_name,
        protocols::DATANODE_PROTOCOL
    );
    let msg: HeartbeatRequestProto = roundtrip(&payload);
    let reg = &msg.registration;
    assert_eq!(
        reg.datanode_id.datanode_uuid,
        "2cc83166-3cdf-498c-9835-1113f7251961"
    );
    // Layout versions are negative, carried as uint32.
    assert_eq!(reg.storage_info.layout_version as i32, -57);
    assert_eq!(reg.storage_info.namespace_id, 1_041_380_037);
    assert_eq!(reg.storage_info.cluster_id, "testClusterID");
    assert!(!reg.keys.is_block_token_enabled);
    assert_eq!(reg.keys.current_key.key_bytes.as_deref(), Some(&b""[..]));
    assert_eq!(reg.software_version, "3.4.1");
    assert_eq!(msg.reports.len(), 2);
    let r = &msg.reports[0];
    assert_eq!(r.storage_uuid, "DS-01db1b43-8145-4e69-a85e-75b5aa95881a");
    assert_eq!(r.failed, None);
    assert_eq!(r.capacity, Some(270_553_174_016));
    let storage = r.storage.as_ref().expect("storage");
    assert_eq!(storage.storage_type(), StorageTypeProto::Disk);
    assert_eq!(r.mount.as_deref(), Some(""));
    assert_eq!(
        (msg.xmits_in_progress, msg.xceiver_count, msg.failed_volumes),
        (Some(0), Some(0), Some(0))
    );
    assert_eq!(msg.request_full_block_report_lease, Some(true));
}

#[test]
fn datanode_heartbeat_replies() {
    let (_, payload) = reply_frame(DN_HEARTBEAT_REPLY);
    let msg: HeartbeatResponseProto = roundtrip(&payload);
    assert!(msg.cmds.is_empty());
    assert_eq!(
        msg.ha_status.state(),
        nnha_status_heartbeat_proto::State::Active
    );
    assert_eq!(msg.ha_status.txid, 1);
    assert_eq!(
        msg.full_block_report_lease_id,
        Some(1_478_212_924_433_838_800)
    );
    assert_eq!(msg.is_slownode, Some(false));

    let (_, payload) = reply_frame(FSSHELL_INVALIDATE_HEARTBEAT_REPLY);
    let msg: HeartbeatResponseProto = roundtrip(&payload);
    assert_eq!(msg.cmds.len(), 1);
    let cmd = &msg.cmds[0];
    assert_eq!(cmd.cmd_type(), datanode_command_proto::Type::BlockCommand);
    let blk = cmd.blk_cmd.as_ref().expect("blkCmd");
    assert_eq!(blk.action(), block_command_proto::Action::Invalidate);
    assert_eq!(blk.blocks.len(), 1);
    assert_eq!(blk.blocks[0].block_id, 1_073_741_825);
    assert_eq!(blk.blocks[0].gen_stamp, 1001);
    // Long.MAX_VALUE in numBytes of blocks to delete.
    assert_eq!(blk.blocks[0].num_bytes, Some(i64::MAX as u64));
}

#[test]
fn namenode_version_reply() {
    let (_, payload) = reply_frame(DN_VERSION_REPLY);
    let msg: VersionResponseProto = roundtrip(&payload);
    let info = &msg.info;
    assert_eq!(
        info.build_version,
        "4d7825309348956336b8f06a08322b78422849b1"
    );
    assert_eq!(info.unused, 0);
    assert_eq!(info.block_pool_id, "BP-1248180331-127.0.0.1-1795239077730");
    assert_eq!(info.storage_info.layout_version as i32, -67);
    assert_eq!(info.software_version, "3.4.1");
    assert_eq!(info.capabilities, Some(1));
    assert_eq!(info.state(), nnha_status_heartbeat_proto::State::Active);
}

#[test]
fn datanode_block_report_buffers() {
    let (_, req, payload) = call_frame(DN_BLOCK_REPORT_CALL);
    assert_eq!(req.method_name, "blockReport");
    let msg: BlockReportRequestProto = roundtrip(&payload);
    assert_eq!(msg.block_pool_id, "BP-1248180331-127.0.0.1-1795239077730");
    assert_eq!(msg.reports.len(), 2);
    // An empty storage: count 0 and one empty buffer.
    assert_eq!(msg.reports[0].number_of_blocks, Some(0));
    assert_eq!(msg.reports[0].blocks_buffers, vec![Bytes::new()]);
    assert!(msg.reports[0].blocks.is_empty());
    // One finalized replica blk_1073741828_1004 of 200000 bytes.
    let r = &msg.reports[1];
    assert_eq!(r.number_of_blocks, Some(1));
    let mut b = r.blocks_buffers[0].clone();
    let id = read_varint(&mut b);
    let id = ((id >> 1) as i64) ^ -((id & 1) as i64); // zigzag
    assert_eq!(id, 1_073_741_828);
    assert_eq!(read_varint(&mut b), 200_000);
    assert_eq!(read_varint(&mut b), 1004);
    assert_eq!(read_varint(&mut b), ReplicaStateProto::Finalized as u64);
    assert!(b.is_empty());
    let ctx = msg.context.expect("context");
    assert_eq!((ctx.total_rpcs, ctx.cur_rpc), (1, 0));
    assert_eq!(ctx.lease_id, Some(7_266_257_810_668_912_095));
}

#[test]
fn datanode_block_received() {
    let (_, req, payload) = call_frame(FSSHELL_BLOCK_RECEIVED_CALL);
    assert_eq!(req.method_name, "blockReceivedAndDeleted");
    let msg: BlockReceivedAndDeletedRequestProto = roundtrip(&payload);
    assert_eq!(msg.blocks.len(), 1);
    let s = &msg.blocks[0];
    assert_eq!(s.blocks.len(), 1);
    let b = &s.blocks[0];
    assert_eq!(
        b.status(),
        received_deleted_block_info_proto::BlockStatus::Received
    );
    assert_eq!(b.delete_hint, None);
    assert_eq!((b.block.block_id, b.block.gen_stamp), (1_073_741_825, 1001));
    assert_eq!(b.block.num_bytes, Some(200_000));
    assert_eq!(
        s.storage.as_ref().map(|st| st.storage_uuid.as_str()),
        Some(s.storage_uuid.as_str())
    );
}

// ---------------------------------------------------------------- ClientDatanodeProtocol

#[test]
fn replica_visible_length() {
    let (_, req, payload) = call_frame(OPEN_VISIBLE_LENGTH_CALL);
    assert_eq!(req.method_name, "getReplicaVisibleLength");
    assert_eq!(
        req.declaring_class_protocol_name,
        protocols::CLIENT_DATANODE_PROTOCOL
    );
    let msg: GetReplicaVisibleLengthRequestProto = roundtrip(&payload);
    assert_eq!(msg.block.block_id, 1_073_741_827);
    assert_eq!(msg.block.generation_stamp, 1003);
    assert_eq!(msg.block.num_bytes, Some(1000));

    let (_, payload) = reply_frame(OPEN_VISIBLE_LENGTH_REPLY);
    assert_eq!(payload, hex("08 E8 07"));
    let msg: GetReplicaVisibleLengthResponseProto = roundtrip(&payload);
    assert_eq!(msg.length, 1000);
}
