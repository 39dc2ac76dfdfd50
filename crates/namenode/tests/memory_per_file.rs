//! Resident memory per file of the namespace, for a namespace that uses
//! none of the optional features (ACLs, xattrs, quotas, snapshots, storage
//! policies): 1,000,000 empty closed files (1,000 directories of 1,000)
//! built through the same edits the journal replays, the process's VmRSS
//! read before and after. Ignored by default (it takes a few seconds and
//! ~0.5 GB); run it with
//!
//! ```text
//! cargo test --release -p cairn-namenode --test memory_per_file -- --ignored --nocapture
//! ```
//!
//! docs/namenode-memory.md has the figures before and after issue 11, and
//! for each step of issue 14 that makes the inode leaner.

use cairn_namenode::namespace::{Edit, INode, INodeId, Limits, Namespace};

const DIRS: u64 = 1_000;
const FILES_PER_DIR: u64 = 1_000;

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

#[test]
#[ignore = "measurement: 1M files, run by hand (see the module doc)"]
fn resident_memory_per_empty_file() {
    let before = rss_kib();
    let mut ns = Namespace::new("hdfs", "supergroup", 1, Limits::default());
    let mut id = 16_386u64;
    for d in 0..DIRS {
        let dir = format!("/d{d:04}");
        ns.apply(&Edit::Mkdir {
            id: INodeId(id),
            path: dir.clone(),
            permission: 0o755,
            owner: "hdfs".into(),
            group: "supergroup".into(),
            mtime_ms: 1,
        })
        .expect("mkdir");
        id += 1;
        for f in 0..FILES_PER_DIR {
            let path = format!("{dir}/file-{f:06}");
            ns.apply(&Edit::AddFile {
                id: INodeId(id),
                path: path.clone(),
                permission: 0o644,
                owner: "hdfs".into(),
                group: "supergroup".into(),
                mtime_ms: 1,
                replication: 3,
                block_size: 128 << 20,
                client_name: "c".into(),
                client_machine: "m".into(),
                overwrite: false,
            })
            .expect("add");
            ns.apply(&Edit::CloseFile {
                path,
                mtime_ms: 2,
                last: None,
                length: Some(0),
            })
            .expect("close");
            id += 1;
        }
    }
    let after = rss_kib();
    let files = DIRS * FILES_PER_DIR;
    assert_eq!(ns.inode_count() as u64, files + DIRS + 1);
    println!(
        "files={files} inodes={} size_of::<INode>={} rss_before_kib={before} \
         rss_after_kib={after} bytes_per_file={:.1}",
        ns.inode_count(),
        std::mem::size_of::<INode>(),
        (after - before) as f64 * 1024.0 / files as f64
    );
    drop(ns);
}
