//! Pipeline replacement: with `replace-datanode-on-failure.policy=ALWAYS`,
//! hdfs-native replaces every node that fails in its pipeline with a new
//! one from `getAdditionalDatanode` and copies the block so far to it
//! (TRANSFER_BLOCK). When failures repeat, the new node is often one that
//! dropped out earlier and still holds an older replica of the block: it
//! must take the copy (HDFS replaces a replica with an older generation
//! stamp), and the file must read back intact with full replication.
//!
//! Failures come from hdfs-native's own fault injection (a replica node's
//! ack is treated as failed), so this test has its own binary: the
//! injector is process-wide.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use common::{pattern, Cluster};
use hdfs_native::WriteOptions;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replacement_nodes_with_stale_replicas_take_the_copy() {
    // Goal: fail a pipeline node over and over during one block's write;
    // every replacement works, the file is identical, and every block ends
    // with three replicas at the final generation stamp.
    let cluster = Cluster::start(4, &["dfs.heartbeat.interval=1"]);
    let c = hdfs_native::ClientBuilder::new()
        .with_url(cluster.nn.url())
        .with_config(HashMap::from([
            (
                "dfs.client.block.write.replace-datanode-on-failure.policy".to_string(),
                "ALWAYS".to_string(),
            ),
            (
                "dfs.client.block.write.replace-datanode-on-failure.best-effort".to_string(),
                "false".to_string(),
            ),
        ]))
        .build()
        .expect("client");
    let total = 6 * 1024 * 1024 + 4321;
    let data = pattern(76, total);
    let mut w = c
        .create(
            "/replace/f",
            WriteOptions::default().block_size(4 << 20).replication(3),
        )
        .await
        .expect("create");
    let piece = 128 * 1024;
    let mut failures = 0;
    for (i, chunk) in data.chunks(piece).enumerate() {
        // Every third piece, the next ack counts as a failure of the first
        // node of the pipeline: it is replaced. (hdfs-native's injector is
        // consumed by the first reply it looks at, so index 0 is the one
        // that takes effect.)
        if i % 3 == 1 {
            *hdfs_native::test::WRITE_REPLY_FAULT_INJECTOR
                .lock()
                .expect("injector") = Some(0);
            failures += 1;
        }
        w.write_bytes(Bytes::copy_from_slice(chunk))
            .await
            .unwrap_or_else(|e| panic!("write of piece {i} after {failures} failures: {e}"));
        // Let the ack (and so the injected failure) be seen before the
        // next piece, so the failures land on different pipelines.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    *hdfs_native::test::WRITE_REPLY_FAULT_INJECTOR
        .lock()
        .expect("injector") = None;
    w.close().await.expect("close after replacements");
    assert!(failures >= 10, "only {failures} failures injected");

    let r = c.read("/replace/f").await.expect("open");
    let got = r.read_range(0, r.file_length()).await.expect("read");
    assert_eq!(got.len(), total);
    assert!(got[..] == data[..], "file differs after replacements");
    let log = cluster.nn.log();
    // Every block at full replication (stale replicas were replaced or
    // deleted, not counted).
    let ok = common::wait_until(Duration::from_secs(30), || {
        let located = std::thread::scope(|s| {
            s.spawn(|| {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("runtime")
                    .block_on(common::block_locations(cluster.nn.addr, "/replace/f"))
            })
            .join()
            .expect("locations")
        });
        located.blocks.len() == 2 && located.blocks.iter().all(|b| b.locs.len() == 3)
    });
    assert!(ok, "blocks not at three replicas; NameNode log:\n{log}");
}
