//! `FileSystem.getFileChecksum` (BLOCK_CHECKSUM, op 85, on every block)
//! from the Hadoop Java client against Cairn: for files of edge sizes, in
//! MD5MD5CRC and COMPOSITE_CRC mode, whole and for prefixes, the values
//! must equal, byte for byte, those recorded from Apache HDFS 3.4.1
//! (`tests/java/expected/checksums.txt` for CRC32C and
//! `checksums-crc32.txt` for CRC32, written by
//! `tests/java/regenerate-golden.sh checksums checksums-crc32`). A second test speaks the op
//! on the wire: its response fields, stripes, and the errors.
//!
//! The Java test needs a JDK and Maven (the kit fetches the jars on first use).

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;

use cairn_proto::hadoop::hdfs as pb;
use common::Cluster;
use prost::Message;

fn kit_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/java")
}

/// Runs FileChecksums with `args` against `cluster` and compares its output
/// with `expected/<golden>.txt`.
fn java_checksums_match(cluster: &Cluster, args: &[&str], golden: &str) {
    let kit = kit_dir();
    let url = cluster.nn.url();
    let stdout =
        common::run_java_kit(&[&["--main", "FileChecksums"], args, &["--fs", &url]].concat());
    let want = std::fs::read_to_string(kit.join(format!("expected/{golden}.txt"))).expect("golden");
    common::assert_matches_golden(&stdout, &want, golden);
    let served: u64 = cluster
        .dns
        .iter()
        .map(|dn| metric(&dn.metrics(), "block_checksum_ops"))
        .sum();
    assert!(served > 0, "no BLOCK_CHECKSUM reached a DataNode");
}

#[test]
fn java_file_checksums_match_apache_hdfs() {
    // Goal: DistCp's checksum check and any getFileChecksum caller see the
    // same values as on Apache HDFS: 0 B, 1 B, a chunk ± 1, a block ± 1 and
    // several blocks plus a partial chunk (1 MiB blocks, 512-byte CRC32C
    // chunks), replication 1 and 3 on three DataNodes, whole files and
    // prefixes that end inside chunks, on chunk and block edges, and inside
    // middle blocks.
    let cluster = Cluster::start(3, &[]);
    java_checksums_match(&cluster, &["--replications", "1,3"], "checksums");
}

#[test]
fn java_crc32_file_checksums_match_apache_hdfs() {
    // Goal: the same with zlib's CRC32 and 1024-byte chunks (the DataNode
    // stores CRC32 when its dfs.checksum.type says so), which composes with
    // the other polynomial.
    let cluster = Cluster::start(1, &["dfs.checksum.type=CRC32"]);
    let args = ["--replications", "1", "--bpc", "1024"];
    let args = [&args[..], &["-D", "dfs.checksum.type=CRC32"]].concat();
    java_checksums_match(&cluster, &args, "checksums-crc32");
}

fn metric(json: &str, name: &str) -> u64 {
    let key = format!("\"{name}\":");
    json.split(&key)
        .nth(1)
        .and_then(|rest| rest.split([',', '}']).next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// One BLOCK_CHECKSUM request and its response, on a fresh connection.
fn block_checksum(
    xfer: SocketAddr,
    block: &pb::ExtendedBlockProto,
    options: Option<pb::BlockChecksumOptionsProto>,
) -> pb::BlockOpResponseProto {
    let req = pb::OpBlockChecksumProto {
        header: pb::BaseHeaderProto {
            block: block.clone(),
            ..Default::default()
        },
        block_checksum_options: options,
    };
    let mut frame = vec![0x00, 0x1c, cairn_proto::protocols::op::BLOCK_CHECKSUM];
    req.encode_length_delimited(&mut frame).expect("encode");
    let mut s = TcpStream::connect(xfer).expect("connect to the DataNode");
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .expect("timeout");
    s.write_all(&frame).expect("send the op");
    // The DataNode closes the connection after its answer.
    let mut reply = Vec::new();
    s.read_to_end(&mut reply).expect("read the answer");
    pb::BlockOpResponseProto::decode_length_delimited(reply.as_slice()).expect("a response")
}

fn options(kind: pb::BlockChecksumTypeProto, stripe: Option<u64>) -> pb::BlockChecksumOptionsProto {
    pb::BlockChecksumOptionsProto {
        block_checksum_type: Some(kind as i32),
        stripe_length: stripe,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn block_checksum_on_the_wire() {
    // Goal: the response carries what HDFS's DataNode fills in (bytes per
    // CRC, CRCs per block, the CRC type, the options echoed), a stripe
    // length gives one composed CRC per stripe, and a missing replica, a
    // stale generation stamp, an unknown checksum type or a stripe the
    // chunks do not end on are answered with ERROR and a message.
    let cluster = Cluster::start(1, &[]);
    let client = cluster.nn.client(None);
    let data = common::pattern(22, 5000);
    let mut w = client
        .create("/c", hdfs_native::WriteOptions::default().replication(1))
        .await
        .expect("create");
    w.write_bytes(bytes::Bytes::from(data.clone()))
        .await
        .expect("write");
    w.close().await.expect("close");
    let located = common::block_locations(cluster.nn.addr, "/c").await;
    let block = located.blocks.first().expect("one block").b.clone();
    let xfer = cluster.dns.first().expect("a DataNode").xfer;

    let r = tokio::task::spawn_blocking({
        let block = block.clone();
        move || {
            let mut asked = Vec::new();
            let md5 = options(pb::BlockChecksumTypeProto::Md5crc, Some(0));
            asked.push(block_checksum(xfer, &block, Some(md5)));
            let composite = options(pb::BlockChecksumTypeProto::CompositeCrc, Some(1024));
            let mut prefix = block.clone();
            prefix.num_bytes = Some(3000);
            asked.push(block_checksum(xfer, &prefix, Some(composite)));
            asked
        }
    })
    .await
    .expect("requests");
    assert_eq!(r[0].status, pb::Status::Success as i32, "{:?}", r[0]);
    let md5 = r[0].checksum_response.as_ref().expect("a checksum");
    assert_eq!(md5.bytes_per_crc, 512);
    assert_eq!(md5.crc_per_block, 10);
    assert_eq!(
        md5.crc_type,
        Some(pb::ChecksumTypeProto::ChecksumCrc32c as i32)
    );
    assert_eq!(md5.block_checksum.len(), 16);
    let echoed = md5.block_checksum_options.as_ref().expect("options");
    assert_eq!(echoed.block_checksum_type, Some(1));
    assert_eq!(echoed.stripe_length, Some(0));

    assert_eq!(r[1].status, pb::Status::Success as i32, "{:?}", r[1]);
    let striped = r[1].checksum_response.as_ref().expect("a checksum");
    let want: Vec<u8> = data[..3000]
        .chunks(1024)
        .flat_map(|s| crc32c::crc32c(s).to_be_bytes())
        .collect();
    assert_eq!(striped.block_checksum.as_ref(), want.as_slice());
    assert_eq!(
        striped
            .block_checksum_options
            .as_ref()
            .and_then(|o| o.stripe_length),
        Some(1024)
    );

    let errors = tokio::task::spawn_blocking(move || {
        let mut missing = block.clone();
        missing.block_id += 1000;
        let mut stale = block.clone();
        stale.generation_stamp += 1;
        let bad_type = pb::BlockChecksumOptionsProto {
            block_checksum_type: Some(9),
            stripe_length: None,
        };
        let misaligned = options(pb::BlockChecksumTypeProto::CompositeCrc, Some(700));
        vec![
            block_checksum(xfer, &missing, None),
            block_checksum(xfer, &stale, None),
            block_checksum(xfer, &block, Some(bad_type)),
            block_checksum(xfer, &block, Some(misaligned)),
        ]
    })
    .await
    .expect("requests");
    for (what, e) in ["missing", "stale", "type", "stripe"].iter().zip(&errors) {
        assert_eq!(e.status, pb::Status::Error as i32, "{what}: {e:?}");
        assert!(e.checksum_response.is_none(), "{what}: {e:?}");
        assert!(
            e.message.as_deref().is_some_and(|m| !m.is_empty()),
            "{what}: {e:?}"
        );
    }
    let dn = cluster.dns.first().expect("a DataNode");
    assert_eq!(metric(&dn.metrics(), "block_checksum_ops_failed"), 4);
}
