//! Writes seed inputs for the fuzz targets: pieces of the byte-exact HDFS
//! captures, cut per target, and small valid encodings made by our own
//! encoders.
//!
//! ```text
//! python3 shared/hdfs-wire/captures/decode.py X.pcap --dump-streams STREAMS/X   # each capture
//! cargo run -p cairn-fuzzing --example seeds -- STREAMS OUT
//! ```
//!
//! `STREAMS/<capture>/connNN-{c2s,s2c}.bin` are read; `OUT/<target>/` is
//! written (then `cargo fuzz cmin` keeps what adds coverage).

use std::path::{Path, PathBuf};

use bytes::{Bytes, BytesMut};
use cairn_datanode::block_report::{encode_buffers, encode_legacy};
use cairn_datanode::checksum::{ChecksumKind, Crc32cImpl, DataChecksum};
use cairn_datanode::ids::{BlockId, GenStamp};
use cairn_datanode::storage::{meta, version::StorageVersion, ReportedReplica, ReportedState};
use cairn_datanode::transfer::packet::{
    delimited, encode_packet, header, read_delimited, read_packet,
};
use cairn_namenode::journal::codec::encode_record;
use cairn_namenode::namespace::{BlockRecord, Edit, INodeId, Limits, Namespace};
use cairn_namenode::storage::{self as nn_storage, VersionInfo};
use cairn_proto::hadoop::common::RpcRequestHeaderProto;
use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::{self, op};
use cairn_rpc::frame;
use futures::executor::block_on;
use prost::Message;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

struct Out {
    root: PathBuf,
    n: usize,
}

impl Out {
    fn put(&mut self, target: &str, name: &str, data: &[u8]) -> Res<()> {
        let dir = self.root.join(target);
        std::fs::create_dir_all(&dir)?;
        self.n += 1;
        std::fs::write(dir.join(format!("seed-{:04}-{name}", self.n)), data)?;
        Ok(())
    }
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, streams, out] = args.as_slice() else {
        return Err("usage: seeds STREAMS_DIR OUT_DIR".into());
    };
    let mut out = Out {
        root: PathBuf::from(out),
        n: 0,
    };
    captures(Path::new(streams), &mut out)?;
    own_encodings(&mut out)?;
    println!("wrote {} seeds", out.n);
    Ok(())
}

// ------------------------------------------------------------- captures

fn captures(dir: &Path, out: &mut Out) -> Res<()> {
    let mut files = Vec::new();
    for cap in std::fs::read_dir(dir)? {
        let cap = cap?.path();
        for f in std::fs::read_dir(&cap)? {
            files.push(f?.path());
        }
    }
    files.sort();
    // A preamble and connection context to put before streams captured
    // without theirs (connections opened before the capture started).
    let mut prefix = Vec::new();
    prefix.extend_from_slice(b"hrpc\x09\x00\x00");
    let ctx = pb_context();
    prefix.extend_from_slice(&ctx);
    for path in files {
        let data = std::fs::read(&path)?;
        let name = format!(
            "{}-{}",
            path.parent()
                .and_then(|p| p.file_name())
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            path.file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        );
        let c2s = name.contains("c2s");
        if data.starts_with(b"hrpc") {
            out.put("ipc_stream", &name, &data)?;
            calls(&data[7..], out, &name)?;
        } else if u16::from_be_bytes([data[0], *data.get(1).unwrap_or(&0)])
            == protocols::DATA_TRANSFER_VERSION
            && c2s
        {
            xfer_c2s(&data, out, &name)?;
        } else if is_frames(&data) {
            if c2s {
                let mut s = prefix.clone();
                s.extend_from_slice(&data);
                out.put("ipc_stream", &name, &s)?;
                calls(&data, out, &name)?;
            } else {
                out.put("ipc_stream", &name, &data)?;
            }
        } else if !c2s {
            xfer_s2c(&data, out, &name)?;
        }
    }
    Ok(())
}

fn pb_context() -> Vec<u8> {
    use cairn_proto::hadoop::common::{IpcConnectionContextProto, UserInformationProto};
    let header = RpcRequestHeaderProto {
        rpc_kind: Some(2),
        rpc_op: Some(0),
        call_id: frame::CALL_ID_CONNECTION_CONTEXT,
        client_id: Bytes::from_static(&[7; 16]),
        retry_count: Some(-1),
        ..Default::default()
    };
    let ctx = IpcConnectionContextProto {
        user_info: Some(UserInformationProto {
            effective_user: Some("hdfs".into()),
            real_user: None,
        }),
        protocol: Some(protocols::DATANODE_PROTOCOL.into()),
    };
    let mut body = BytesMut::new();
    frame::put_delimited(&mut body, &header);
    frame::put_delimited(&mut body, &ctx);
    let mut f = (body.len() as u32).to_be_bytes().to_vec();
    f.extend_from_slice(&body);
    f
}

fn is_frames(data: &[u8]) -> bool {
    let mut r = data;
    matches!(block_on(frame::read_frame(&mut r, 1 << 20)), Ok(Some(_)))
}

/// Every call of a client stream (after its preamble) as an rpc_request
/// seed; block reports also as block_report seeds.
fn calls(mut r: &[u8], out: &mut Out, name: &str) -> Res<()> {
    let mut i = 0;
    while let Ok(Some(mut body)) = block_on(frame::read_frame(&mut r, 1 << 24)) {
        let Ok(h) = frame::take_request_header(&mut body) else {
            break;
        };
        if h.call_id < 0 {
            continue;
        }
        let Ok(m) = frame::take_method_header(&mut body) else {
            continue;
        };
        let Ok(req) = frame::take_delimited_raw(&mut body) else {
            continue;
        };
        let Some(idx) = cairn_fuzzing::REQUESTS
            .iter()
            .position(|(p, meth)| m.declaring_class_protocol_name == *p && m.method_name == *meth)
        else {
            continue;
        };
        let mut seed = vec![idx as u8];
        seed.extend_from_slice(&req);
        i += 1;
        out.put(
            "rpc_request",
            &format!("{name}-{i}-{}", m.method_name),
            &seed,
        )?;
        if m.method_name == "blockReport" {
            if let Ok(r) = pb::BlockReportRequestProto::decode(req) {
                for s in r.reports {
                    out.put("block_report", name, &s.encode_to_vec())?;
                    for b in &s.blocks_buffers {
                        let mut raw = vec![0u8];
                        raw.extend_from_slice(b);
                        out.put("block_report", &format!("{name}-buf"), &raw)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Shrinks a packet to at most `keep` data bytes, checksums recomputed.
fn shrink(p: &cairn_datanode::transfer::packet::Packet, keep: usize, out: &mut BytesMut) {
    let data = p.data();
    let data = &data[..data.len().min(keep)];
    let mut sums = Vec::new();
    DataChecksum::DEFAULT.compute_into(Crc32cImpl::Hardware, data, &mut sums);
    let mut h = p.header;
    h.data_len = data.len() as i32;
    encode_packet(&h, &sums, data, out);
}

/// The first two packets of `r` and its last one, shrunk.
fn shrink_packets(mut r: &[u8], s: &mut BytesMut) {
    let mut n = 0;
    while let Ok(p) = block_on(read_packet(&mut r, 16 << 20, None)) {
        if n < 2 || p.header.last_packet_in_block {
            shrink(&p, 1000, s);
        }
        n += 1;
    }
}

fn xfer_c2s(data: &[u8], out: &mut Out, name: &str) -> Res<()> {
    if data.len() < 1024 {
        return out.put("xfer_stream", name, data);
    }
    // A write: the op and request as captured, packets shrunk to 1000
    // bytes of data each (the captured ones are 64 KiB).
    let mut r = &data[3..];
    let req: pb::OpWriteBlockProto = block_on(read_delimited(&mut r, 1 << 20))?;
    let mut s = BytesMut::new();
    s.extend_from_slice(&data[..3]);
    s.extend_from_slice(&delimited(&req));
    shrink_packets(r, &mut s);
    out.put("xfer_stream", name, &s)
}

fn xfer_s2c(data: &[u8], out: &mut Out, name: &str) -> Res<()> {
    if data.len() < 1024 {
        return out.put("xfer_stream", name, data);
    }
    // A read reply: the response as captured, packets shrunk.
    let mut r = data;
    let resp: pb::BlockOpResponseProto = block_on(read_delimited(&mut r, 1 << 20))?;
    let mut s = BytesMut::new();
    s.extend_from_slice(&delimited(&resp));
    shrink_packets(r, &mut s);
    out.put("xfer_stream", name, &s)
}

// --------------------------------------------------------- own encoders

fn edits() -> Vec<Edit> {
    let block = |id, gs, num_bytes| BlockRecord {
        id: cairn_namenode::namespace::BlockId(id),
        gs: GenStamp(gs),
        num_bytes,
    };
    vec![
        Edit::Mkdir {
            id: INodeId(16386),
            path: "/a".into(),
            permission: 0o755,
            owner: "hdfs".into(),
            group: "supergroup".into(),
            mtime_ms: 5,
        },
        Edit::AddFile {
            id: INodeId(16387),
            path: "/a/f".into(),
            permission: 0o644,
            owner: "hdfs".into(),
            group: "supergroup".into(),
            mtime_ms: 6,
            replication: 3,
            block_size: 128 << 20,
            client_name: "DFSClient_1".into(),
            client_machine: "127.0.0.1".into(),
            overwrite: false,
        },
        Edit::AddBlock {
            path: "/a/f".into(),
            previous: None,
            block: block(1_073_741_825, 1001, 0),
        },
        Edit::UpdateBlock {
            path: "/a/f".into(),
            block: block(1_073_741_825, 1002, 10),
        },
        Edit::AddBlock {
            path: "/a/f".into(),
            previous: Some(block(1_073_741_825, 1002, 10)),
            block: block(1_073_741_826, 1003, 0),
        },
        Edit::AbandonBlock {
            path: "/a/f".into(),
            block: cairn_namenode::namespace::BlockId(1_073_741_826),
        },
        Edit::CloseFile {
            path: "/a/f".into(),
            mtime_ms: 7,
            last: Some(block(1_073_741_825, 1002, 10)),
            length: Some(10),
        },
        Edit::Reopen {
            path: "/a/f".into(),
            client_name: "DFSClient_2".into(),
            client_machine: "127.0.0.1".into(),
        },
        Edit::CloseFile {
            path: "/a/f".into(),
            mtime_ms: 8,
            last: None,
            length: Some(10),
        },
        Edit::SetPermission {
            path: "/a".into(),
            permission: 0o700,
        },
        Edit::SetOwner {
            path: "/a/f".into(),
            owner: Some("u".into()),
            group: None,
        },
        Edit::SetTimes {
            path: "/a/f".into(),
            mtime_ms: Some(9),
            atime_ms: None,
        },
        Edit::SetReplication {
            path: "/a/f".into(),
            replication: 2,
        },
        Edit::AddFile {
            id: INodeId(16388),
            path: "/a/s".into(),
            permission: 0o644,
            owner: "hdfs".into(),
            group: "supergroup".into(),
            mtime_ms: 8,
            replication: 1,
            block_size: 1024,
            client_name: "DFSClient_3".into(),
            client_machine: "127.0.0.1".into(),
            overwrite: false,
        },
        Edit::AddBlock {
            path: "/a/s".into(),
            previous: None,
            block: block(1_073_741_827, 1004, 0),
        },
        Edit::CloseFile {
            path: "/a/s".into(),
            mtime_ms: 9,
            last: Some(block(1_073_741_827, 1004, 1024)),
            length: Some(10),
        },
        Edit::Concat {
            target: "/a/f".into(),
            srcs: vec!["/a/s".into()],
            mtime_ms: 10,
        },
        Edit::Truncate {
            path: "/a/f".into(),
            new_length: 5,
            client_name: "DFSClient_4".into(),
            client_machine: "127.0.0.1".into(),
            mtime_ms: 11,
            truncate_block: Some(block(1_073_741_825, 1005, 5)),
        },
        Edit::RestampTruncate {
            path: "/a/f".into(),
            gs: GenStamp(1006),
        },
        Edit::SetGenStamp { gs: GenStamp(1007) },
        Edit::ReassignLease {
            path: "/a/f".into(),
            holder: "HDFS_NameNode".into(),
        },
        Edit::CloseFile {
            path: "/a/f".into(),
            mtime_ms: 12,
            last: Some(block(1_073_741_825, 1006, 5)),
            length: Some(10),
        },
        Edit::Rename {
            src: "/a/f".into(),
            dst: "/a/g".into(),
            overwrite: true,
            mtime_ms: 10,
        },
        Edit::Delete {
            path: "/a/g".into(),
            mtime_ms: 11,
        },
    ]
}

fn own_encodings(out: &mut Out) -> Res<()> {
    // Journal: all edits as one segment, each alone, and a torn tail.
    let mut seg = Vec::new();
    for (i, e) in edits().iter().enumerate() {
        let mut one = Vec::new();
        encode_record(&mut one, 1, e);
        out.put("journal", &format!("edit{i}"), &one)?;
        encode_record(&mut seg, i as u64 + 1, e);
    }
    out.put("journal", "segment", &seg)?;
    let mut torn = seg.clone();
    torn.truncate(seg.len() - 5);
    out.put("journal", "torn", &torn)?;
    let mut pre = seg.clone();
    pre.extend_from_slice(&[0u8; 64]);
    out.put("journal", "preallocated", &pre)?;

    // Image and VERSION, written by the NameNode's own code.
    let dir = std::env::temp_dir().join(format!("cairn-seeds-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut ns = Namespace::new("hdfs", "supergroup", 0, Limits::default());
    for e in edits().iter().take(9) {
        ns.apply(e)?;
    }
    let info = VersionInfo {
        cluster_id: "CID-1".into(),
        block_pool_id: "BP-1-127.0.0.1-1".into(),
        namespace_id: 42,
        created_ms: 1,
    };
    nn_storage::format(
        &cairn_common::disk::RealDisk,
        std::slice::from_ref(&dir),
        &info,
        &ns,
        true,
    )?;
    let img = nn_storage::write_image(&cairn_common::disk::RealDisk, &dir, 9, &ns)?;
    out.put("image", "fsimage", &std::fs::read(&img)?)?;
    out.put("image", "VERSION", &std::fs::read(dir.join("VERSION"))?)?;
    let empty = Namespace::new("hdfs", "supergroup", 0, Limits::default());
    let img0 = nn_storage::write_image(&cairn_common::disk::RealDisk, &dir, 0, &empty)?;
    out.put("image", "fsimage-empty", &std::fs::read(&img0)?)?;
    let _ = std::fs::remove_dir_all(&dir);

    // Meta files: [request len][stripe][meta len] meta data.
    for (kind, bpc, len, request, stripe) in [
        (ChecksumKind::Crc32c, 512u32, 1300usize, u64::MAX, 0u64),
        (ChecksumKind::Crc32c, 512, 1300, 700, 0),
        (ChecksumKind::Crc32, 100, 450, u64::MAX, 257),
        (ChecksumKind::Crc32c, 512, 1300, 1000, 1),
        (ChecksumKind::Null, 512, 100, u64::MAX, 0),
    ] {
        let c = DataChecksum {
            kind,
            bytes_per_checksum: bpc,
        };
        let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
        let mut m = meta::encode_header(&c).to_vec();
        c.compute_into(Crc32cImpl::Hardware, &data, &mut m);
        let mut seed = request.to_be_bytes().to_vec();
        seed.extend_from_slice(&stripe.to_be_bytes());
        seed.extend_from_slice(&(m.len() as u16).to_be_bytes());
        seed.extend_from_slice(&m);
        seed.extend_from_slice(&data);
        out.put("meta", &format!("{kind:?}-{bpc}-{len}"), &seed)?;
    }
    let v = StorageVersion {
        datanode_uuid: cairn_datanode::ids::DatanodeUuid("3f1c".into()),
        storage_id: cairn_datanode::ids::StorageId("DS-1".into()),
    };
    out.put("meta", "VERSION", &v.encode())?;
    out.put("meta", "name", b"blk_-1073741825_1001.meta")?;

    // Block reports from the DataNode's encoders.
    let replicas: Vec<ReportedReplica> = (0..6u64)
        .map(|i| ReportedReplica {
            block: BlockId(1_073_741_825 + i),
            len: i * 1000,
            gs: GenStamp(1001 + i),
            state: if i % 3 == 0 {
                ReportedState::Rbw
            } else {
                ReportedState::Finalized
            },
        })
        .collect();
    let buffers = pb::StorageBlockReportProto {
        blocks_buffers: encode_buffers(&replicas),
        ..Default::default()
    };
    out.put("block_report", "buffers", &buffers.encode_to_vec())?;
    let legacy = pb::StorageBlockReportProto {
        blocks: encode_legacy(&replicas),
        ..Default::default()
    };
    out.put("block_report", "legacy", &legacy.encode_to_vec())?;
    let longs: Vec<u8> = encode_legacy(&replicas)
        .iter()
        .flat_map(|v| v.to_be_bytes())
        .collect();
    out.put("block_report", "legacy-longs", &longs)?;

    // Data transfer: a small write with a sync packet and a heartbeat, and
    // a BLOCK_CHECKSUM and TRANSFER_BLOCK request.
    let block = pb::ExtendedBlockProto {
        pool_id: "BP-1-127.0.0.1-1".into(),
        block_id: 1_073_741_825,
        generation_stamp: 1001,
        num_bytes: Some(2000),
    };
    let base = pb::BaseHeaderProto {
        block: block.clone(),
        ..Default::default()
    };
    let client = pb::ClientOperationHeaderProto {
        base_header: base.clone(),
        client_name: "DFSClient_1".into(),
    };
    let write = pb::OpWriteBlockProto {
        header: client.clone(),
        stage: 6,
        pipeline_size: 1,
        requested_checksum: pb::ChecksumProto {
            r#type: 2,
            bytes_per_checksum: 512,
        },
        ..Default::default()
    };
    let mut s = BytesMut::new();
    s.extend_from_slice(&protocols::DATA_TRANSFER_VERSION.to_be_bytes());
    s.extend_from_slice(&[op::WRITE_BLOCK]);
    s.extend_from_slice(&delimited(&write));
    encode_packet(&header(0, -1, false, 0, false), &[], &[], &mut s);
    let data: Vec<u8> = (0..1500u32).map(|i| (i % 251) as u8).collect();
    let mut sums = Vec::new();
    DataChecksum::DEFAULT.compute_into(Crc32cImpl::Hardware, &data, &mut sums);
    encode_packet(&header(0, 0, false, 1500, true), &sums, &data, &mut s);
    encode_packet(&header(1500, 1, true, 0, false), &[], &[], &mut s);
    out.put("xfer_stream", "write", &s)?;
    let csum = pb::OpBlockChecksumProto {
        header: base.clone(),
        block_checksum_options: Some(pb::BlockChecksumOptionsProto {
            block_checksum_type: Some(2),
            stripe_length: Some(1024),
        }),
    };
    let mut s = protocols::DATA_TRANSFER_VERSION.to_be_bytes().to_vec();
    s.push(op::BLOCK_CHECKSUM);
    s.extend_from_slice(&delimited(&csum));
    out.put("xfer_stream", "block-checksum", &s)?;
    let transfer = pb::OpTransferBlockProto {
        header: client,
        ..Default::default()
    };
    let mut s = protocols::DATA_TRANSFER_VERSION.to_be_bytes().to_vec();
    s.push(op::TRANSFER_BLOCK);
    s.extend_from_slice(&delimited(&transfer));
    out.put("xfer_stream", "transfer-block", &s)?;

    // Configuration files.
    let confs = [
        "<?xml version=\"1.0\"?>\n<configuration>\n  <property>\n    <name>fs.defaultFS</name>\n    <value>hdfs://localhost:9000</value>\n  </property>\n</configuration>\n",
        "<configuration>\n<property><name>dfs.replication</name><value>3</value><final>true</final></property>\n<property><name>dfs.blocksize</name><value>128m</value></property>\n<property><name>dfs.heartbeat.interval</name><value>3s</value></property>\n<property><name>dfs.namenode.name.dir</name><value>${hadoop.tmp.dir}/dfs/name,/data/nn</value></property>\n<property><name>hadoop.tmp.dir</name><value>/tmp/hadoop-${user.name}</value></property>\n<property><name>dfs.namenode.rpc-address</name><value>nn.example:8020</value></property>\n<property name=\"ipc.maximum.data.length\" value=\"64m\"/>\n</configuration>\n",
        "<configuration><property><name>a</name><value>${b}${b}</value></property><property><name>b</name><value>${c}${c}</value></property><property><name>c</name><value>${env.HOME:-x}-${a}</value></property><property><name>dfs.namenode.handler.count</name><value>0x10</value></property></configuration>",
        "<configuration><property><name>dfs.datanode.address</name><value>[::1]:9866</value></property><property><name>dfs.permissions.enabled</name><value>false</value></property><property><name>dfs.namenode.safemode.threshold-pct</name><value>0.999f</value></property><description>x</description></configuration>",
    ];
    for (i, c) in confs.iter().enumerate() {
        out.put("config_xml", &format!("conf{i}.xml"), c.as_bytes())?;
    }
    Ok(())
}
