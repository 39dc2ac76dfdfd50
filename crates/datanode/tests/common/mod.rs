//! Test kit for the DataNode end-to-end tests: a fake NameNode (our own
//! small DatanodeProtocol service on `cairn_rpc::server`) that records what
//! DataNodes tell it and can hand out commands, DataNodes run in-process,
//! and a minimal client for the data-transfer protocol (the client side of
//! WRITE_BLOCK and READ_BLOCK, written from PROTOCOL.md §3).

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use cairn_common::config::Configuration;
use cairn_datanode::checksum::{crc32c, Crc32cImpl};
use cairn_datanode::config::DataNodeConfig;
use cairn_datanode::metrics::Metrics;
use cairn_datanode::transfer::packet::{
    decode_packet, delimited, encode_packet, header, read_delimited, read_packet,
};
use cairn_datanode::DataNode;
use cairn_proto::hadoop::common::TokenProto;
use cairn_proto::hadoop::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use cairn_proto::hadoop::hdfs::{
    BaseHeaderProto, BlockCommandProto, BlockOpResponseProto, BlockProto,
    BlockReceivedAndDeletedRequestProto, BlockReceivedAndDeletedResponseProto,
    BlockRecoveryCommandProto, BlockReportRequestProto, BlockReportResponseProto, ChecksumProto,
    ClientOperationHeaderProto, ClientReadStatusProto, CommitBlockSynchronizationRequestProto,
    CommitBlockSynchronizationResponseProto, DatanodeCommandProto, DatanodeIdProto,
    DatanodeInfoProto, DatanodeInfosProto, DatanodeRegistrationProto, ExtendedBlockProto,
    HeartbeatRequestProto, HeartbeatResponseProto, LocatedBlockProto, NamespaceInfoProto,
    NnhaStatusHeartbeatProto, OpReadBlockProto, OpReplaceBlockProto, OpWriteBlockProto,
    PipelineAckProto, RecoveringBlockProto, RegisterDatanodeRequestProto,
    RegisterDatanodeResponseProto, StorageInfoProto, StorageTypesProto, StorageUuidsProto,
    VersionResponseProto,
};
use cairn_proto::protocols::{op, DATANODE_PROTOCOL, DATA_TRANSFER_VERSION};
use cairn_rpc::{CallContext, CallError, Protocol};
use futures::future::BoxFuture;
use prost::Message;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

pub const POOL: &str = "BP-1-127.0.0.1-1700000000000";
pub const BPC: usize = 512;
/// Data bytes per full client packet (126 chunks), as both clients send.
pub const PACKET_DATA: usize = 64512;

/// One replica line of a decoded block report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reported {
    pub id: u64,
    pub len: u64,
    pub gs: u64,
    pub state: u64,
}

/// An incremental report entry: (block id, gs, numBytes, status).
pub type Ibr = (u64, u64, u64, i32);

#[derive(Default, Debug)]
pub struct NnState {
    pub registrations: Vec<DatanodeRegistrationProto>,
    pub heartbeats: Vec<HeartbeatRequestProto>,
    /// Decoded block reports: (datanode uuid, replicas, lease id).
    pub reports: Vec<(String, Vec<Reported>, u64)>,
    /// (datanode uuid, entry).
    pub ibrs: Vec<(String, Ibr)>,
    /// RECEIVED entries with a delete hint: (datanode uuid, block id, hint).
    pub delete_hints: Vec<(String, u64, String)>,
    /// Commands to hand out with the next heartbeat of a DataNode.
    pub commands: Vec<(String, DatanodeCommandProto)>,
    /// reportBadBlocks: (datanode uuid in `locs`, block id, gs).
    pub bad_blocks: Vec<(String, u64, u64)>,
    /// commitBlockSynchronization calls, as received.
    pub commits: Vec<CommitBlockSynchronizationRequestProto>,
}

/// The fake NameNode.
#[derive(Clone, Default)]
pub struct FakeNameNode {
    pub state: Arc<Mutex<NnState>>,
}

fn decode_buffers(bufs: &[Bytes], n: u64) -> Vec<Reported> {
    let mut all = BytesMut::new();
    for b in bufs {
        all.extend_from_slice(b);
    }
    let mut buf = all.freeze();
    let mut out = Vec::new();
    for _ in 0..n {
        let z = prost::encoding::decode_varint(&mut buf).expect("id");
        let id = (((z >> 1) as i64) ^ -((z & 1) as i64)) as u64;
        let len = prost::encoding::decode_varint(&mut buf).expect("len");
        let gs = prost::encoding::decode_varint(&mut buf).expect("gs");
        let state = prost::encoding::decode_varint(&mut buf).expect("state");
        out.push(Reported { id, len, gs, state });
    }
    out
}

impl FakeNameNode {
    fn handle(&self, method: &str, request: Bytes) -> Result<Bytes, CallError> {
        let mut st = self.state.lock().expect("lock");
        let out = match method {
            "versionRequest" => VersionResponseProto {
                info: NamespaceInfoProto {
                    build_version: "fake".into(),
                    unused: 0,
                    block_pool_id: POOL.into(),
                    storage_info: StorageInfoProto {
                        layout_version: -67i32 as u32,
                        namespace_id: 12345,
                        cluster_id: "test-cluster".into(),
                        c_time: 1,
                    },
                    software_version: "3.4.1".into(),
                    capabilities: Some(1),
                    state: Some(0),
                },
            }
            .encode_to_vec(),
            "registerDatanode" => {
                let req = RegisterDatanodeRequestProto::decode(request)?;
                st.registrations.push(req.registration.clone());
                RegisterDatanodeResponseProto {
                    registration: req.registration,
                }
                .encode_to_vec()
            }
            "sendHeartbeat" => {
                let req = HeartbeatRequestProto::decode(request)?;
                let uuid = req.registration.datanode_id.datanode_uuid.clone();
                let lease = if req.request_full_block_report_lease == Some(true) {
                    42
                } else {
                    0
                };
                let mut cmds = Vec::new();
                st.commands.retain(|(u, c)| {
                    if *u == uuid {
                        cmds.push(c.clone());
                        false
                    } else {
                        true
                    }
                });
                st.heartbeats.push(req);
                HeartbeatResponseProto {
                    cmds,
                    ha_status: NnhaStatusHeartbeatProto { state: 0, txid: 1 },
                    rolling_upgrade_status: None,
                    rolling_upgrade_status_v2: None,
                    full_block_report_lease_id: Some(lease),
                    is_slownode: Some(false),
                }
                .encode_to_vec()
            }
            "blockReport" => {
                let req = BlockReportRequestProto::decode(request)?;
                let uuid = req.registration.datanode_id.datanode_uuid.clone();
                let mut replicas = Vec::new();
                for r in &req.reports {
                    replicas.extend(decode_buffers(
                        &r.blocks_buffers,
                        r.number_of_blocks.unwrap_or(0),
                    ));
                }
                let lease = req.context.and_then(|c| c.lease_id).unwrap_or(0);
                st.reports.push((uuid, replicas, lease));
                BlockReportResponseProto { cmd: None }.encode_to_vec()
            }
            "blockReceivedAndDeleted" => {
                let req = BlockReceivedAndDeletedRequestProto::decode(request)?;
                let uuid = req.registration.datanode_id.datanode_uuid.clone();
                for s in req.blocks {
                    for b in s.blocks {
                        if let Some(hint) = &b.delete_hint {
                            st.delete_hints
                                .push((uuid.clone(), b.block.block_id, hint.clone()));
                        }
                        st.ibrs.push((
                            uuid.clone(),
                            (
                                b.block.block_id,
                                b.block.gen_stamp,
                                b.block.num_bytes.unwrap_or(0),
                                b.status,
                            ),
                        ));
                    }
                }
                BlockReceivedAndDeletedResponseProto {}.encode_to_vec()
            }
            "reportBadBlocks" => {
                let req = cairn_proto::hadoop::hdfs::ReportBadBlocksRequestProto::decode(request)?;
                for lb in req.blocks {
                    for loc in &lb.locs {
                        st.bad_blocks.push((
                            loc.id.datanode_uuid.clone(),
                            lb.b.block_id,
                            lb.b.generation_stamp,
                        ));
                    }
                }
                cairn_proto::hadoop::hdfs::ReportBadBlocksResponseProto {}.encode_to_vec()
            }
            "commitBlockSynchronization" => {
                let req = CommitBlockSynchronizationRequestProto::decode(request)?;
                st.commits.push(req);
                CommitBlockSynchronizationResponseProto {}.encode_to_vec()
            }
            other => return Err(CallError::NoSuchMethod(other.to_string())),
        };
        Ok(Bytes::from(out))
    }

    /// RECEIVED entries (status 2) seen so far.
    pub fn received(&self) -> Vec<(String, Ibr)> {
        let st = self.state.lock().expect("lock");
        st.ibrs.iter().filter(|(_, e)| e.3 == 2).cloned().collect()
    }

    /// DELETED entries (status 3) seen so far.
    pub fn deleted(&self) -> Vec<(String, Ibr)> {
        let st = self.state.lock().expect("lock");
        st.ibrs.iter().filter(|(_, e)| e.3 == 3).cloned().collect()
    }

    /// Queues a BlockRecoveryCommand for DataNode `uuid` (the primary): the
    /// block `id` with stamp `gs` at the NameNode, recovered to `new_gs`,
    /// whose replicas are on `locs`.
    pub fn recover(&self, uuid: &str, id: u64, gs: u64, new_gs: u64, locs: Vec<DatanodeInfoProto>) {
        self.recover_to(uuid, id, gs, new_gs, None, locs);
    }

    /// Queues a BlockRecoveryCommand as [`FakeNameNode::recover`]; with
    /// `truncate_len`, a truncate's (the command's `truncateBlock` is the
    /// block with `new_gs` and that length, as HDFS sends it).
    pub fn recover_to(
        &self,
        uuid: &str,
        id: u64,
        gs: u64,
        new_gs: u64,
        truncate_len: Option<u64>,
        locs: Vec<DatanodeInfoProto>,
    ) {
        let cmd = DatanodeCommandProto {
            cmd_type: 2,
            recovery_cmd: Some(BlockRecoveryCommandProto {
                blocks: vec![RecoveringBlockProto {
                    new_gen_stamp: new_gs,
                    block: LocatedBlockProto {
                        b: block(id, gs, 0),
                        offset: 0,
                        locs,
                        corrupt: false,
                        block_token: empty_token(),
                        ..Default::default()
                    },
                    truncate_block: truncate_len.map(|len| BlockProto {
                        block_id: id,
                        gen_stamp: new_gs,
                        num_bytes: Some(len),
                    }),
                    ec_policy: None,
                    block_indices: None,
                }],
            }),
            ..Default::default()
        };
        self.state
            .lock()
            .expect("lock")
            .commands
            .push((uuid.to_string(), cmd));
    }

    /// Queues a TRANSFER of one block from DataNode `uuid` to `target`.
    pub fn transfer(&self, uuid: &str, id: u64, gs: u64, target: DatanodeInfoProto) {
        let cmd = DatanodeCommandProto {
            cmd_type: 1,
            blk_cmd: Some(BlockCommandProto {
                action: 1,
                block_pool_id: POOL.into(),
                blocks: vec![BlockProto {
                    block_id: id,
                    gen_stamp: gs,
                    num_bytes: Some(0),
                }],
                targets: vec![DatanodeInfosProto {
                    datanodes: vec![target],
                }],
                target_storage_uuids: vec![StorageUuidsProto {
                    storage_uuids: vec!["DS-target".into()],
                }],
                target_storage_types: vec![StorageTypesProto {
                    storage_types: vec![1],
                }],
            }),
            ..Default::default()
        };
        self.state
            .lock()
            .expect("lock")
            .commands
            .push((uuid.to_string(), cmd));
    }

    /// Queues an INVALIDATE of one block for DataNode `uuid`.
    pub fn invalidate(&self, uuid: &str, id: u64, gs: u64) {
        let cmd = DatanodeCommandProto {
            cmd_type: 1,
            blk_cmd: Some(BlockCommandProto {
                action: 2,
                block_pool_id: POOL.into(),
                blocks: vec![BlockProto {
                    block_id: id,
                    gen_stamp: gs,
                    num_bytes: Some(i64::MAX as u64),
                }],
                targets: vec![],
                target_storage_uuids: vec![],
                target_storage_types: vec![],
            }),
            ..Default::default()
        };
        self.state
            .lock()
            .expect("lock")
            .commands
            .push((uuid.to_string(), cmd));
    }
}

struct NnProtocol(FakeNameNode);

impl Protocol for NnProtocol {
    fn name(&self) -> &str {
        DATANODE_PROTOCOL
    }
    fn call(
        self: Arc<Self>,
        _ctx: CallContext,
        method: cairn_rpc::MethodName,
        request: Bytes,
    ) -> BoxFuture<'static, Result<Bytes, CallError>> {
        let nn = self.0.clone();
        Box::pin(async move { nn.handle(&method, request) })
    }
}

/// Starts the fake NameNode on a free port.
pub async fn start_namenode() -> (SocketAddr, FakeNameNode, CancellationToken) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind nn");
    let addr = listener.local_addr().expect("addr");
    let nn = FakeNameNode::default();
    let token = CancellationToken::new();
    let proto: Arc<dyn Protocol> = Arc::new(NnProtocol(nn.clone()));
    tokio::spawn(cairn_rpc::server::serve(
        listener,
        vec![proto],
        Default::default(),
        token.clone(),
    ));
    (addr, nn, token)
}

/// A DataNode running in this process.
pub struct RunningDn {
    pub uuid: String,
    pub xfer: SocketAddr,
    pub ipc: SocketAddr,
    pub http: SocketAddr,
    pub metrics: Arc<Metrics>,
    pub token: CancellationToken,
    pub task: tokio::task::JoinHandle<()>,
}

impl RunningDn {
    /// This DataNode as a pipeline target.
    pub fn info(&self) -> DatanodeInfoProto {
        DatanodeInfoProto {
            id: DatanodeIdProto {
                ip_addr: self.xfer.ip().to_string(),
                host_name: self.xfer.ip().to_string(),
                datanode_uuid: self.uuid.clone(),
                xfer_port: u32::from(self.xfer.port()),
                info_port: u32::from(self.http.port()),
                ipc_port: u32::from(self.ipc.port()),
                info_secure_port: Some(0),
            },
            ..Default::default()
        }
    }

    /// Stops it and waits until it has.
    pub async fn stop(self) {
        self.token.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(20), self.task).await;
    }
}

/// Starts a DataNode on `dir` reporting to `nn`, with `extra` settings.
pub async fn start_datanode(dir: &Path, nn: SocketAddr, extra: &[(&str, &str)]) -> RunningDn {
    let mut conf = Configuration::new();
    conf.set("dfs.datanode.address", "127.0.0.1:0");
    conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    conf.set("dfs.heartbeat.interval", "100ms");
    conf.set("cairn.datanode.shutdown-timeout", "2s");
    for (k, v) in extra {
        conf.set(k, v);
    }
    let config = DataNodeConfig::from_conf(&conf, dir.to_path_buf(), nn).expect("config");
    let dn = DataNode::bind(config).await.expect("bind datanode");
    let token = CancellationToken::new();
    let running = RunningDn {
        uuid: dn.uuid().to_string(),
        xfer: dn.xfer_addr(),
        ipc: dn.ipc_addr(),
        http: dn.http_addr(),
        metrics: dn.metrics(),
        token: token.clone(),
        task: tokio::spawn(async move {
            dn.run(token).await.expect("datanode run");
        }),
    };
    running
}

/// Polls `f` until it is true or 10 s passed.
pub async fn eventually(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..1000 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

pub fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u8
        })
        .collect()
}

pub fn sums_of(data: &[u8]) -> Vec<u8> {
    sums_by(data, BPC)
}

/// The CRC32C checksums of `data` in chunks of `bpc` bytes.
pub fn sums_by(data: &[u8], bpc: usize) -> Vec<u8> {
    data.chunks(bpc)
        .flat_map(|c| crc32c(Crc32cImpl::Hardware, c).to_be_bytes())
        .collect()
}

pub fn empty_token() -> TokenProto {
    TokenProto {
        identifier: Bytes::new(),
        password: Bytes::new(),
        kind: String::new(),
        service: String::new(),
    }
}

pub fn block(id: u64, gs: u64, num_bytes: u64) -> ExtendedBlockProto {
    ExtendedBlockProto {
        pool_id: POOL.into(),
        block_id: id,
        generation_stamp: gs,
        num_bytes: Some(num_bytes),
    }
}

/// A client WRITE_BLOCK request, as the Java client sends it.
pub fn write_request(
    id: u64,
    gs: u64,
    stage: Stage,
    targets: Vec<DatanodeInfoProto>,
    min_bytes: u64,
    latest_gs: u64,
) -> OpWriteBlockProto {
    let n = targets.len();
    OpWriteBlockProto {
        header: ClientOperationHeaderProto {
            base_header: BaseHeaderProto {
                block: block(id, gs, 134_217_728),
                token: Some(empty_token()),
                trace_info: None,
            },
            client_name: "DFSClient_test".into(),
        },
        targets,
        source: None,
        stage: stage as i32,
        pipeline_size: u32::try_from(n + 1).expect("size"),
        min_bytes_rcvd: min_bytes,
        max_bytes_rcvd: min_bytes,
        latest_generation_stamp: latest_gs,
        requested_checksum: ChecksumProto {
            r#type: 2,
            bytes_per_checksum: 512,
        },
        caching_strategy: Some(Default::default()),
        storage_type: Some(1),
        target_storage_types: vec![1; n],
        allow_lazy_persist: Some(false),
        pinning: Some(false),
        target_pinnings: vec![false; n],
        storage_id: Some("DS-x".into()),
        target_storage_ids: vec!["DS-y".into(); n],
    }
}

pub fn op_bytes<M: Message>(code: u8, m: &M) -> Vec<u8> {
    let mut b = DATA_TRANSFER_VERSION.to_be_bytes().to_vec();
    b.push(code);
    b.extend_from_slice(&delimited(m));
    b
}

/// One write packet's bytes.
pub fn packet(offset: u64, seqno: i64, payload: &[u8], last: bool, sync: bool) -> Vec<u8> {
    packet_by(offset, seqno, payload, last, sync, BPC)
}

/// [`packet`] with checksum chunks of `bpc` bytes.
pub fn packet_by(
    offset: u64,
    seqno: i64,
    payload: &[u8],
    last: bool,
    sync: bool,
    bpc: usize,
) -> Vec<u8> {
    let mut out = BytesMut::new();
    encode_packet(
        &header(offset, seqno, last, payload.len(), sync),
        &sums_by(payload, bpc),
        payload,
        &mut out,
    );
    out.to_vec()
}

/// An open WRITE_BLOCK connection after the connect-ack.
pub struct Writer {
    pub rd: BufReader<tokio::net::tcp::OwnedReadHalf>,
    pub wr: tokio::net::tcp::OwnedWriteHalf,
    pub connect_ack: BlockOpResponseProto,
}

/// Sends a WRITE_BLOCK request and reads the connect-ack.
pub async fn open_write(addr: SocketAddr, req: &OpWriteBlockProto) -> Writer {
    let s = TcpStream::connect(addr).await.expect("connect");
    let (rd, mut wr) = s.into_split();
    wr.write_all(&op_bytes(op::WRITE_BLOCK, req))
        .await
        .expect("send op");
    let mut rd = BufReader::new(rd);
    let connect_ack: BlockOpResponseProto =
        read_delimited(&mut rd, 1 << 16).await.expect("connect-ack");
    Writer {
        rd,
        wr,
        connect_ack,
    }
}

impl Writer {
    pub async fn send(&mut self, bytes: &[u8]) {
        self.wr.write_all(bytes).await.expect("send packet");
    }

    pub async fn ack(&mut self) -> PipelineAckProto {
        tokio::time::timeout(
            Duration::from_secs(20),
            read_delimited::<PipelineAckProto, _>(&mut self.rd, 1 << 16),
        )
        .await
        .expect("ack in time")
        .expect("ack")
    }

    /// Reads the next ack, or `None` when the DataNode closed.
    pub async fn try_ack(&mut self) -> Option<PipelineAckProto> {
        tokio::time::timeout(
            Duration::from_secs(20),
            read_delimited::<PipelineAckProto, _>(&mut self.rd, 1 << 16),
        )
        .await
        .expect("ack or close in time")
        .ok()
    }
}

/// Writes a whole new block through `addr` (and `targets`) the way the
/// Java client does (full 64512-byte packets, acks awaited before the last
/// packet). Returns the acks.
pub async fn write_block(
    addr: SocketAddr,
    id: u64,
    gs: u64,
    payload: &[u8],
    targets: Vec<DatanodeInfoProto>,
) -> Vec<PipelineAckProto> {
    let req = write_request(id, gs, Stage::PipelineSetupCreate, targets, 0, 0);
    write_with(addr, &req, payload, false).await
}

/// [`write_block`] with a request of the caller's (its client name, say),
/// the last packet asking for a sync or not.
pub async fn write_with(
    addr: SocketAddr,
    req: &OpWriteBlockProto,
    payload: &[u8],
    sync: bool,
) -> Vec<PipelineAckProto> {
    write_in_packets(addr, req, payload, sync, PACKET_DATA, BPC).await
}

/// [`write_with`] in packets of `packet_data` bytes with checksum chunks of
/// `bpc` bytes (the request's `requested_checksum` must say the same).
pub async fn write_in_packets(
    addr: SocketAddr,
    req: &OpWriteBlockProto,
    payload: &[u8],
    sync: bool,
    packet_data: usize,
    bpc: usize,
) -> Vec<PipelineAckProto> {
    let mut w = open_write(addr, req).await;
    assert_eq!(w.connect_ack.status, 0, "connect-ack {:?}", w.connect_ack);
    let mut seqno = 0i64;
    for (i, chunk) in payload.chunks(packet_data).enumerate() {
        let offset = (i * packet_data) as u64;
        w.send(&packet_by(offset, seqno, chunk, false, false, bpc))
            .await;
        seqno += 1;
    }
    let mut acks = Vec::new();
    for _ in 0..seqno {
        acks.push(w.ack().await);
    }
    w.send(&packet_by(
        payload.len() as u64,
        seqno,
        &[],
        true,
        sync,
        bpc,
    ))
    .await;
    acks.push(w.ack().await);
    acks
}

/// A READ_BLOCK of `[offset, offset + len)` of block `id`, with checksums
/// asked for (`sums`) or not.
pub fn read_request(id: u64, gs: u64, offset: u64, len: u64, sums: bool) -> OpReadBlockProto {
    OpReadBlockProto {
        header: ClientOperationHeaderProto {
            base_header: BaseHeaderProto {
                block: block(id, gs, offset + len),
                token: Some(empty_token()),
                trace_info: None,
            },
            client_name: "reader".into(),
        },
        offset,
        len,
        send_checksums: Some(sums),
        caching_strategy: None,
    }
}

/// A REPLACE_BLOCK (the Balancer's move) of block `id` from `source`, to
/// storage `DS-y`, with `del_hint` as the node to delete it from.
pub fn replace_request(
    id: u64,
    gs: u64,
    len: u64,
    source: DatanodeInfoProto,
    del_hint: &str,
) -> OpReplaceBlockProto {
    OpReplaceBlockProto {
        header: BaseHeaderProto {
            block: block(id, gs, len),
            token: Some(empty_token()),
            trace_info: None,
        },
        del_hint: del_hint.into(),
        source,
        storage_type: Some(1),
        storage_id: Some("DS-y".into()),
    }
}

/// Reads `[offset, offset + len)` of a block on an open connection, checks
/// every packet like the Java reader, verifies checksums and answers
/// CHECKSUM_OK. Returns the response and exactly the bytes asked for.
pub async fn read_range(
    conn: &mut TcpStream,
    id: u64,
    gs: u64,
    offset: u64,
    len: u64,
) -> Result<(BlockOpResponseProto, Vec<u8>), BlockOpResponseProto> {
    let req = read_request(id, gs, offset, len, true);
    conn.write_all(&op_bytes(op::READ_BLOCK, &req))
        .await
        .expect("send read");
    let resp: BlockOpResponseProto = read_delimited(conn, 1 << 16).await.expect("response");
    if resp.status != 0 {
        return Err(resp);
    }
    let info = resp.read_op_checksum_info.expect("checksum info");
    let bpc = u64::from(info.checksum.bytes_per_checksum);
    assert_eq!(info.chunk_offset, offset - offset % bpc, "chunkOffset");
    let mut got = Vec::new();
    let mut expect_seq = 0i64;
    let mut pos = info.chunk_offset;
    loop {
        let p = read_packet(conn, 16 << 20, None).await.expect("packet");
        assert_eq!(p.header.seqno, expect_seq, "seqno");
        expect_seq += 1;
        assert_eq!(p.header.offset_in_block as u64, pos, "packet offset");
        if p.data_len() == 0 {
            assert!(p.header.last_packet_in_block, "empty packet must be last");
            break;
        }
        assert!(!p.header.last_packet_in_block);
        let d = p.data();
        assert_eq!(sums_by(&d, bpc as usize), p.sums().to_vec(), "checksums");
        pos += d.len() as u64;
        got.extend_from_slice(&d);
    }
    // Never more than one chunk beyond the range.
    assert!(
        pos <= (offset + len).div_ceil(bpc) * bpc,
        "sent past the range"
    );
    conn.write_all(&delimited(&ClientReadStatusProto { status: 6 }))
        .await
        .expect("status");
    let skip = (offset - info.chunk_offset) as usize;
    let want = got[skip..skip + len as usize].to_vec();
    Ok((resp, want))
}

/// Decodes packet bytes (for tests that corrupt them).
pub fn reparse(bytes: &[u8]) -> cairn_datanode::transfer::packet::Packet {
    decode_packet(Bytes::copy_from_slice(bytes), 16 << 20).expect("packet")
}

/// Fetches `/metrics` and returns one counter.
pub async fn metric(http: SocketAddr, name: &str) -> u64 {
    use tokio::io::AsyncReadExt;
    let mut s = TcpStream::connect(http).await.expect("connect http");
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .expect("request");
    let mut body = String::new();
    s.read_to_string(&mut body).await.expect("response");
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
    let key = format!("\"{name}\":");
    let at = body
        .find(&key)
        .unwrap_or_else(|| panic!("{name} in {body}"))
        + key.len();
    body[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .expect("number")
}
