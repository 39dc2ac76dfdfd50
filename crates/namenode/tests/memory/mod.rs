#![allow(dead_code)] // each test binary uses part of it
//! Namespaces of a given shape, built through the same edits the journal
//! replays, for the memory-per-file measurements (`memory_per_file.rs`,
//! RSS, ignored) and the regression test (`memory_baseline.rs`, live heap
//! bytes, in the normal suite).

use cairn_common::ids::DatanodeUuid;
use std::time::Instant;

use cairn_namenode::blocks::BlockManager;
use cairn_namenode::leases::LeaseTable;
use cairn_namenode::namespace::{BlockId, BlockRecord, Edit, GenStamp, INodeId, Limits, Namespace};

/// First inode id after the root's.
const FIRST_ID: u64 = 16_386;
const FIRST_BLOCK: u64 = (1 << 30) + 1;

fn mkdir(ns: &mut Namespace, id: u64, path: &str) {
    ns.apply(&Edit::Mkdir {
        id: INodeId(id),
        path: path.to_string(),
        permission: 0o755,
        owner: "hdfs".into(),
        group: "supergroup".into(),
        mtime_ms: 1,
    })
    .expect("mkdir");
}

/// Creates `path` for `client`, left open (under construction) as a
/// writer that has not closed it yet leaves it.
fn open_file(ns: &mut Namespace, id: u64, path: String, client: &str) {
    ns.apply(&Edit::AddFile {
        id: INodeId(id),
        path: path.clone(),
        permission: 0o644,
        owner: "hdfs".into(),
        group: "supergroup".into(),
        mtime_ms: 1,
        replication: 3,
        block_size: 128 << 20,
        client_name: client.into(),
        client_machine: "127.0.0.1".into(),
        overwrite: false,
    })
    .expect("add");
}

/// Creates and closes `path`, with one 1-byte block `block` if given.
fn file(ns: &mut Namespace, id: u64, path: String, block: Option<BlockRecord>) {
    open_file(ns, id, path.clone(), "c");
    if let Some(b) = block {
        ns.apply(&Edit::AddBlock {
            path: path.clone(),
            previous: None,
            block: BlockRecord { num_bytes: 0, ..b },
        })
        .expect("add block");
    }
    ns.apply(&Edit::CloseFile {
        path,
        mtime_ms: 2,
        last: block,
        length: Some(block.map_or(0, |b| b.num_bytes)),
    })
    .expect("close");
}

/// `dirs` directories under the root (`/d0000`...) of `per_dir` empty
/// files each (`file-000000`...): the `million_files` shape.
pub fn flat(dirs: u64, per_dir: u64) -> Namespace {
    let mut ns = Namespace::new("hdfs", "supergroup", 1, Limits::default());
    let mut id = FIRST_ID;
    for d in 0..dirs {
        let dir = format!("/d{d:04}");
        mkdir(&mut ns, id, &dir);
        id += 1;
        for f in 0..per_dir {
            file(&mut ns, id, format!("{dir}/file-{f:06}"), None);
            id += 1;
        }
    }
    ns
}

/// NNThroughputBenchmark's `-op create` shape: `files` empty files, 4 to a
/// directory, named as its generator names them
/// (`/nnThroughputBenchmark/create/ThroughputBenchDir<i>/ThroughputBenchDir<j>/ThroughputBench<n>`),
/// leaf directories 250 to a parent.
pub fn nnthroughput(files: u64) -> Namespace {
    let mut ns = Namespace::new("hdfs", "supergroup", 1, Limits::default());
    let mut id = FIRST_ID;
    let base = "/nnThroughputBenchmark/create";
    mkdir(&mut ns, id, "/nnThroughputBenchmark");
    mkdir(&mut ns, id + 1, base);
    id += 2;
    let mut parent = String::new();
    let mut leaf = String::new();
    for n in 0..files {
        if n % 1000 == 0 {
            parent = format!("{base}/ThroughputBenchDir{}", n / 1000);
            mkdir(&mut ns, id, &parent);
            id += 1;
        }
        if n % 4 == 0 {
            leaf = format!("{parent}/ThroughputBenchDir{}", n / 4);
            mkdir(&mut ns, id, &leaf);
            id += 1;
        }
        file(&mut ns, id, format!("{leaf}/ThroughputBench{n}"), None);
        id += 1;
    }
    ns
}

/// NNThroughputBenchmark's `-op create` as it really leaves the namespace:
/// the same shape as [`nnthroughput`], but every file still open (the
/// benchmark never closes what it creates), written by `clients` client
/// threads (`create-client-<t>`, as it names them, thread `t` creating
/// the `t`-th share of the files), each holding a lease on its files.
pub fn nnthroughput_open(files: u64, clients: u64) -> (Namespace, LeaseTable) {
    let mut ns = Namespace::new("hdfs", "supergroup", 1, Limits::default());
    let mut leases = LeaseTable::default();
    let names: Vec<String> = (0..clients).map(|t| format!("create-client-{t}")).collect();
    let per_client = files.div_ceil(clients);
    let now = Instant::now();
    let mut id = FIRST_ID;
    let base = "/nnThroughputBenchmark/create";
    mkdir(&mut ns, id, "/nnThroughputBenchmark");
    mkdir(&mut ns, id + 1, base);
    id += 2;
    let mut parent = String::new();
    let mut leaf = String::new();
    for n in 0..files {
        if n % 1000 == 0 {
            parent = format!("{base}/ThroughputBenchDir{}", n / 1000);
            mkdir(&mut ns, id, &parent);
            id += 1;
        }
        if n % 4 == 0 {
            leaf = format!("{parent}/ThroughputBenchDir{}", n / 4);
            mkdir(&mut ns, id, &leaf);
            id += 1;
        }
        let client = &names[(n / per_client) as usize];
        open_file(&mut ns, id, format!("{leaf}/ThroughputBench{n}"), client);
        leases.add(client, INodeId(id), now);
        id += 1;
    }
    (ns, leases)
}

/// `dirs` x `per_dir` files of one block each; [`block_map`] builds the
/// block manager that goes with them (three finalized replicas of every
/// block).
pub fn files_of_one_block(dirs: u64, per_dir: u64) -> Namespace {
    let mut ns = Namespace::new("hdfs", "supergroup", 1, Limits::default());
    let mut id = FIRST_ID;
    let mut block_id = FIRST_BLOCK;
    for d in 0..dirs {
        let dir = format!("/d{d:04}");
        mkdir(&mut ns, id, &dir);
        id += 1;
        for f in 0..per_dir {
            let block = BlockRecord {
                id: BlockId(block_id),
                gs: GenStamp(1001),
                num_bytes: 1,
            };
            file(&mut ns, id, format!("{dir}/file-{f:06}"), Some(block));
            id += 1;
            block_id += 1;
        }
    }
    ns
}

/// A block manager that knows `blocks` blocks (one per file) and three
/// finalized replicas of each (on three DataNodes with one storage each,
/// as after their block reports), with nothing left for the replication
/// monitor to judge. Each block is added as addBlock adds it, with the
/// pipeline it was handed out with (a block loaded from an image has
/// none), and committed as its file's complete commits it.
pub fn block_map(blocks: u64) -> BlockManager {
    let mut bm = BlockManager::default();
    let nodes: Vec<(DatanodeUuid, String)> = (0..3)
        .map(|i| {
            (
                DatanodeUuid(format!("4f1c2a9e-0000-4000-8000-00000000000{i}")),
                format!("DS-7e2b9c1d-0000-4000-8000-00000000000{i}"),
            )
        })
        .collect();
    for n in 0..blocks {
        let (id, gs) = (BlockId(FIRST_BLOCK + n), GenStamp(1001));
        let pipeline = nodes.iter().map(|(dn, _)| dn.clone()).collect();
        bm.add_block(id, gs, INodeId(FIRST_ID + n), pipeline);
        for (dn, storage) in &nodes {
            bm.replica_reported(dn, storage, id, gs, 1, true);
        }
        // Its file closed (complete).
        bm.committed([id]);
    }
    let view = cairn_namenode::blocks::BlockView {
        replication_of: &|_| Some(3),
        counts: &|_| true,
        readable: &|_| true,
    };
    let mut work = cairn_namenode::blocks::ReplicationWork::default();
    while bm.judge_changed(100_000, &view, &|_| 0, &mut work) > 0 {}
    bm
}
