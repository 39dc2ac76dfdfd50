//! Resident memory per file of the namespace (and, in one case, the block
//! map), for namespaces that use none of the optional features (ACLs,
//! xattrs, quotas, snapshots, storage policies), built through the same
//! edits the journal replays; the process's VmRSS read before and after.
//! Ignored by default (each case takes seconds and up to ~1 GB); run them
//! with
//!
//! ```text
//! cargo test --release -p cairn-namenode --test memory_per_file -- --ignored --nocapture --test-threads 1
//! ```
//!
//! (one at a time: they share the process's RSS); `CAIRN_MEMORY_SCALE=10`
//! makes the two cases of 1M files 10M (about 2 GB, minutes).
//! docs/namenode-memory.md
//! has the figures before and after issue 11, and for each step of issue
//! 14 that makes the namespace leaner; `memory_baseline.rs` keeps them
//! from regressing.

mod memory;

use cairn_namenode::namespace::INode;

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// How many millions of files the 1M cases build (`CAIRN_MEMORY_SCALE`).
fn millions() -> u64 {
    std::env::var("CAIRN_MEMORY_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
}

fn report(case: &str, files: u64, inodes: usize, before: u64, after: u64) {
    println!(
        "{case}: files={files} inodes={inodes} size_of::<INode>={} rss_before_kib={before} \
         rss_after_kib={after} bytes_per_file={:.1}",
        std::mem::size_of::<INode>(),
        (after - before) as f64 * 1024.0 / files as f64
    );
}

#[test]
#[ignore = "measurement: 1M files, run by hand (see the module doc)"]
fn resident_memory_per_empty_file() {
    let m = millions();
    let before = rss_kib();
    let ns = memory::flat(1_000 * m, 1_000);
    let after = rss_kib();
    assert_eq!(ns.inode_count() as u64, 1_001_000 * m + 1);
    report(
        &format!("{m}M empty files in {m},000 dirs"),
        1_000_000 * m,
        ns.inode_count(),
        before,
        after,
    );
}

#[test]
#[ignore = "measurement: 500k files, run by hand (see the module doc)"]
fn resident_memory_nnthroughput_create_shape() {
    let before = rss_kib();
    let ns = memory::nnthroughput(500_000);
    let after = rss_kib();
    assert_eq!(ns.inode_count(), 1 + 2 + 500 + 125_000 + 500_000);
    report(
        "500k empty files, 4 per dir (NNThroughputBenchmark -op create)",
        500_000,
        ns.inode_count(),
        before,
        after,
    );
}

#[test]
#[ignore = "measurement: 500k open files, run by hand (see the module doc)"]
fn resident_memory_nnthroughput_create_files_left_open() {
    let before = rss_kib();
    let (ns, leases) = memory::nnthroughput_open(500_000, 16);
    let after = rss_kib();
    assert_eq!(ns.inode_count(), 1 + 2 + 500 + 125_000 + 500_000);
    assert_eq!(leases.holder_count(), 16);
    report(
        "500k files left open by 16 clients, 4 per dir (NNThroughputBenchmark -op create as run)",
        500_000,
        ns.inode_count(),
        before,
        after,
    );
}

#[test]
#[ignore = "measurement: 1M files and 3M replicas, run by hand (see the module doc)"]
fn resident_memory_per_file_with_one_block_three_replicas() {
    let m = millions();
    let files = 1_000_000 * m;
    let before = rss_kib();
    let ns = memory::files_of_one_block(1_000 * m, 1_000);
    let namespace = rss_kib();
    let bm = memory::block_map(files);
    let after = rss_kib();
    assert_eq!(bm.block_count() as u64, files);
    // Which side the bytes are on: the namespace (inodes and their block
    // lists) and the block map.
    println!(
        "namespace {:.1} B/file, block map {:.1} B/block",
        (namespace - before) as f64 * 1024.0 / files as f64,
        (after - namespace) as f64 * 1024.0 / files as f64
    );
    report(
        &format!("{m}M files of one block, 3 replicas each (namespace + block map)"),
        files,
        ns.inode_count(),
        before,
        after,
    );
}
