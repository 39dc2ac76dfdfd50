//! Corrupt replicas on one DataNode, against the fake NameNode: a checksum
//! error found while serving a read, a replica cut short before a restart,
//! and corruption nobody reads, found by the block scanner. Each is set
//! aside in `quarantine/` (never deleted), no longer served, and reported
//! with `reportBadBlocks`.

mod common;

use std::path::{Path, PathBuf};

use cairn_datanode::metrics::Metrics;
use cairn_datanode::transfer::packet::{delimited, read_delimited, read_packet};
use cairn_proto::hadoop::hdfs::{BlockOpResponseProto, ClientReadStatusProto, Status};
use cairn_proto::protocols::op;
use common::*;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// The live (finalized) file of block `id` named by `suffix` ("" for the
/// block file, ".meta" for the meta file).
fn live_file(dir: &Path, id: u64, meta: bool) -> Option<PathBuf> {
    walk(dir).into_iter().find(|p| {
        let s = p.to_string_lossy();
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        s.contains("/finalized/")
            && if meta {
                name.starts_with(&format!("blk_{id}_")) && name.ends_with(".meta")
            } else {
                name == format!("blk_{id}")
            }
    })
}

fn quarantined(dir: &Path, id: u64) -> Vec<PathBuf> {
    walk(dir)
        .into_iter()
        .filter(|p| {
            p.to_string_lossy().contains("/quarantine/")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(&format!("blk_{id}")))
        })
        .collect()
}

fn flip(path: &Path, at: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .expect("open");
    let mut b = [0u8; 1];
    f.read_exact_at(&mut b, at).expect("read");
    b[0] ^= 0xFF;
    f.write_all_at(&b, at).expect("write");
}

fn reported(nn: &FakeNameNode, uuid: &str, id: u64) -> bool {
    nn.state
        .lock()
        .expect("nn")
        .bad_blocks
        .iter()
        .any(|(d, b, _)| d == uuid && *b == id)
}

/// Goal: with the data read through a buffer (zero-copy off), a block
/// whose data fails its checksum while being read is never sent, is set
/// aside and reported; one cut short while the DataNode was down is set
/// aside and reported at start-up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_errors_and_short_files_are_quarantined_and_reported() {
    let (nn_addr, nn, _t) = start_namenode().await;
    let d = tempfile::tempdir().expect("tempdir");
    let off = [
        ("dfs.block.scanner.volume.bytes.per.second", "0"),
        ("dfs.datanode.transferTo.allowed", "false"),
    ];
    let dn = start_datanode(d.path(), nn_addr, &off).await;
    let a = data(100_000, 41);
    let b = data(50_000, 42);
    write_block(dn.xfer, 900, 1001, &a, vec![]).await;
    write_block(dn.xfer, 901, 1001, &b, vec![]).await;
    let data_file = live_file(d.path(), 900, false).expect("block file");
    flip(&data_file, 70_000);

    // The read stops before the bad chunk goes out.
    let xfer = dn.xfer;
    let reader = tokio::spawn(async move {
        let mut c = TcpStream::connect(xfer).await.expect("connect");
        read_range(&mut c, 900, 1001, 0, 100_000).await.map(|r| r.1)
    });
    if let Ok(Ok(got)) = reader.await {
        panic!("a corrupt read completed with {} bytes", got.len());
    }
    eventually("block 900 reported", || reported(&nn, &dn.uuid, 900)).await;
    assert!(live_file(d.path(), 900, false).is_none());
    assert!(live_file(d.path(), 900, true).is_none());
    assert_eq!(quarantined(d.path(), 900).len(), 2, "both files kept aside");
    // No longer served.
    let mut c = TcpStream::connect(dn.xfer).await.expect("connect");
    assert!(read_range(&mut c, 900, 1001, 0, 10).await.is_err());
    // Block 901 is untouched and reads back.
    let mut c = TcpStream::connect(dn.xfer).await.expect("connect");
    let (_, got) = read_range(&mut c, 901, 1001, 0, 50_000)
        .await
        .expect("good block");
    assert_eq!(got, b);

    // Cut block 901's meta file short while the DataNode is down.
    dn.stop().await;
    let meta = live_file(d.path(), 901, true).expect("meta file");
    let len = std::fs::metadata(&meta).expect("meta").len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&meta)
        .expect("open")
        .set_len(len / 2)
        .expect("truncate");
    let dn = start_datanode(d.path(), nn_addr, &off).await;
    eventually("block 901 reported at start-up", || {
        reported(&nn, &dn.uuid, 901)
    })
    .await;
    assert!(live_file(d.path(), 901, false).is_none());
    assert_eq!(quarantined(d.path(), 901).len(), 2);
    dn.stop().await;
}

/// Goal: the block scanner alone finds a flipped byte in a block file and
/// one in a meta file that no reader touches, sets both replicas aside and
/// reports them; good replicas stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scanner_finds_corruption_nobody_reads() {
    let (nn_addr, nn, _t) = start_namenode().await;
    let d = tempfile::tempdir().expect("tempdir");
    let dn = start_datanode(
        d.path(),
        nn_addr,
        &[
            ("dfs.block.scanner.volume.bytes.per.second", "104857600"),
            ("dfs.datanode.scan.period.hours", "1s"),
        ],
    )
    .await;
    let a = data(100_000, 51);
    for id in [910, 911, 912] {
        write_block(dn.xfer, id, 1001, &a, vec![]).await;
    }
    flip(&live_file(d.path(), 910, false).expect("data"), 99_999);
    // A checksum in the meta file (after the 7-byte header).
    flip(&live_file(d.path(), 911, true).expect("meta"), 7 + 4 * 10);
    eventually("scanner reports 910", || reported(&nn, &dn.uuid, 910)).await;
    eventually("scanner reports 911", || reported(&nn, &dn.uuid, 911)).await;
    assert!(!reported(&nn, &dn.uuid, 912));
    for id in [910, 911] {
        assert!(live_file(d.path(), id, false).is_none());
        assert_eq!(quarantined(d.path(), id).len(), 2);
    }
    assert!(live_file(d.path(), 912, false).is_some());
    let m = dn.metrics.clone();
    eventually("a later scan pass verifies the good one", || {
        Metrics::get(&m.scanner_passes) >= 2 && Metrics::get(&m.scanner_bytes_verified) >= 100_000
    })
    .await;
    assert!(live_file(d.path(), 912, false).is_some());
    dn.stop().await;
}

/// Reads all of block `id` (`len` bytes) the way a client does, with
/// checksums asked for or not; with them, every chunk is checked and the
/// first bad one answered with ERROR_CHECKSUM (the DataNode's cue). The
/// bytes, or why the read stopped.
async fn client_read(
    addr: std::net::SocketAddr,
    id: u64,
    len: u64,
    sums: bool,
) -> Result<Vec<u8>, String> {
    let mut conn = TcpStream::connect(addr).await.expect("connect");
    let r = read_on(&mut conn, id, len, sums).await;
    if r.as_ref().is_err_and(|e| e.contains("checksum error")) {
        // Stay until the DataNode ends the read.
        let mut rest = Vec::new();
        let _ = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            tokio::io::AsyncReadExt::read_to_end(&mut conn, &mut rest),
        )
        .await;
    }
    r
}

/// [`client_read`] on `conn`, which stays open as the read left it: after
/// a checksum error the rest of the block is not read.
async fn read_on(conn: &mut TcpStream, id: u64, len: u64, sums: bool) -> Result<Vec<u8>, String> {
    let req = read_request(id, 1001, 0, len, sums);
    conn.write_all(&op_bytes(op::READ_BLOCK, &req))
        .await
        .expect("send");
    let resp: BlockOpResponseProto = read_delimited(conn, 1 << 16)
        .await
        .map_err(|e| e.to_string())?;
    if resp.status != 0 {
        return Err(format!("refused: {resp:?}"));
    }
    let mut got = Vec::new();
    loop {
        let p = read_packet(conn, 16 << 20, None)
            .await
            .map_err(|e| format!("stopped after {} bytes: {e}", got.len()))?;
        let d = p.data();
        if d.is_empty() {
            break;
        }
        if sums && sums_of(&d) != p.sums().to_vec() {
            let status = ClientReadStatusProto {
                status: Status::ErrorChecksum as i32,
            };
            conn.write_all(&delimited(&status)).await.expect("status");
            return Err(format!("checksum error after {} bytes", got.len()));
        }
        got.extend_from_slice(&d);
    }
    let status = ClientReadStatusProto {
        status: Status::ChecksumOk as i32,
    };
    conn.write_all(&delimited(&status)).await.expect("status");
    Ok(got)
}

/// Goal: with zero-copy reads (the default) a client that verifies
/// checksums gets a bad chunk as stored and its ERROR_CHECKSUM has the
/// replica set aside and reported; a client that reads without checksums
/// never gets the bad chunk, because the DataNode verifies for it; a block
/// file cut short under a zero-copy read ends the read and is set aside.
/// Good replicas read back intact either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_copy_reads_leave_verifying_to_the_client() {
    let (nn_addr, nn, _t) = start_namenode().await;
    let d = tempfile::tempdir().expect("tempdir");
    // Every read zero-copy, this test's reader on loopback included.
    let off = [
        ("dfs.block.scanner.volume.bytes.per.second", "0"),
        ("cairn.datanode.read.local-copy", "false"),
    ];
    let dn = start_datanode(d.path(), nn_addr, &off).await;
    let blocks: Vec<(u64, Vec<u8>)> = (0..4).map(|i| (920 + i, data(300_000, 60 + i))).collect();
    for (id, bytes) in &blocks {
        write_block(dn.xfer, *id, 1001, bytes, vec![]).await;
    }
    let len = 300_000u64;
    // Intact, with checksums and without.
    for sums in [true, false] {
        assert_eq!(
            client_read(dn.xfer, 923, len, sums).await.expect("good"),
            blocks[3].1
        );
    }

    // 920: the verifying client finds the flipped byte and says so.
    flip(&live_file(d.path(), 920, false).expect("data"), 200_000);
    let r = client_read(dn.xfer, 920, len, true).await;
    assert!(
        r.as_ref().is_err_and(|e| e.contains("checksum error")),
        "{r:?}"
    );
    eventually("920 reported", || reported(&nn, &dn.uuid, 920)).await;
    assert_eq!(quarantined(d.path(), 920).len(), 2);

    // 921: a client without checksums is never sent the bad chunk.
    flip(&live_file(d.path(), 921, false).expect("data"), 200_000);
    let r = client_read(dn.xfer, 921, len, false).await;
    match &r {
        Ok(_) => panic!("a corrupt read without checksums completed"),
        Err(e) => assert!(!e.contains("checksum error"), "{e}"),
    }
    eventually("921 reported", || reported(&nn, &dn.uuid, 921)).await;

    // 922: its block file loses its second half under the DataNode.
    std::fs::OpenOptions::new()
        .write(true)
        .open(live_file(d.path(), 922, false).expect("data"))
        .expect("open")
        .set_len(len / 2)
        .expect("truncate");
    let r = client_read(dn.xfer, 922, len, true).await;
    assert!(r.is_err(), "a read past the end of the file completed");
    eventually("922 reported", || reported(&nn, &dn.uuid, 922)).await;

    assert!(!reported(&nn, &dn.uuid, 923));
    assert_eq!(
        client_read(dn.xfer, 923, len, true).await.expect("good"),
        blocks[3].1
    );
    let m = dn.metrics.clone();
    // 920's and 922's reads may stop early; 923's three reads did not.
    assert!(Metrics::get(&m.read_bytes_zero_copy) >= 2 * len);
    dn.stop().await;
}

/// Goal: a client that finds a bad chunk early in a long zero-copy read,
/// answers ERROR_CHECKSUM and reads no further has the replica set aside
/// and reported while its connection is still open (the DataNode, waiting
/// for room in the socket, hears the status).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mid_read_error_checksum_is_heard_at_once() {
    let (nn_addr, nn, _t) = start_namenode().await;
    let d = tempfile::tempdir().expect("tempdir");
    let off = [
        ("dfs.block.scanner.volume.bytes.per.second", "0"),
        ("cairn.datanode.read.local-copy", "false"),
    ];
    let dn = start_datanode(d.path(), nn_addr, &off).await;
    let len = 16u64 << 20;
    write_block(dn.xfer, 930, 1001, &data(len as usize, 80), vec![]).await;
    flip(&live_file(d.path(), 930, false).expect("data"), 100_000);
    let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
    let r = read_on(&mut conn, 930, len, true).await;
    assert!(
        r.as_ref().is_err_and(|e| e.contains("checksum error")),
        "{r:?}"
    );
    eventually("930 reported", || reported(&nn, &dn.uuid, 930)).await;
    assert_eq!(quarantined(d.path(), 930).len(), 2);
    let m = dn.metrics.clone();
    assert_eq!(Metrics::get(&m.read_client_checksum_errors), 1);
    assert!(
        Metrics::get(&m.read_bytes_zero_copy) < len,
        "the read stopped early"
    );
    drop(conn);
    dn.stop().await;
}
