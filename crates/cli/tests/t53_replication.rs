//! Replication follows setReplication: lowering it deletes excess replicas,
//! raising it again has the DataNodes copy the block back to three.

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::{pattern, Cluster};
use hdfs_native::WriteOptions;

async fn replica_counts(cluster: &Cluster, path: &str) -> Vec<usize> {
    common::block_locations(cluster.nn.addr, path)
        .await
        .blocks
        .iter()
        .map(|b| b.locs.len())
        .collect()
}

async fn wait_counts(cluster: &Cluster, path: &str, want: usize) {
    for _ in 0..300 {
        if replica_counts(cluster, path)
            .await
            .iter()
            .all(|n| *n == want)
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!(
        "{path}: replicas {:?}, wanted {want}",
        replica_counts(cluster, path).await
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn setrep_down_then_up_again() {
    // Goal: 3 → 2 deletes one replica per block; 2 → 3 copies them back.
    let cluster = Cluster::start(
        3,
        &[
            "dfs.heartbeat.interval=1",
            "dfs.namenode.redundancy.interval.seconds=1",
        ],
    );
    let c = cluster.nn.client(None);
    let data = pattern(5, 2 * 1024 * 1024 + 77);
    let mut w = c
        .create(
            "/rep/f",
            WriteOptions::default().block_size(1 << 20).replication(3),
        )
        .await
        .expect("create");
    w.write_bytes(Bytes::from(data.clone()))
        .await
        .expect("write");
    w.close().await.expect("close");
    wait_counts(&cluster, "/rep/f", 3).await;
    assert!(c.set_replication("/rep/f", 2).await.expect("setrep"));
    wait_counts(&cluster, "/rep/f", 2).await;
    assert!(c.set_replication("/rep/f", 3).await.expect("setrep"));
    wait_counts(&cluster, "/rep/f", 3).await;
    let r = c.read("/rep/f").await.expect("open");
    assert!(r.read_range(0, r.file_length()).await.expect("read")[..] == data[..]);
}
