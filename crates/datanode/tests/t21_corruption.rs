//! Corrupt replicas on one DataNode, against the fake NameNode: a checksum
//! error found while serving a read, a replica cut short before a restart,
//! and corruption nobody reads, found by the block scanner. Each is set
//! aside in `quarantine/` (never deleted), no longer served, and reported
//! with `reportBadBlocks`.

mod common;

use std::path::{Path, PathBuf};

use cairn_datanode::metrics::Metrics;
use common::*;
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

/// Goal: a block whose data fails its checksum while being read is never
/// sent, is set aside and reported; one cut short while the DataNode was
/// down is set aside and reported at start-up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_errors_and_short_files_are_quarantined_and_reported() {
    let (nn_addr, nn, _t) = start_namenode().await;
    let d = tempfile::tempdir().expect("tempdir");
    let off = [("dfs.block.scanner.volume.bytes.per.second", "0")];
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
