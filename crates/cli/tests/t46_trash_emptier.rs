//! The NameNode's trash emptier (HDFS's `TrashPolicyDefault.Emptier`
//! inside the NameNode) against a real cluster: a file removed with the
//! Java shell's `hadoop fs -rm` (which moves it to `.Trash/Current`, as the
//! server defaults say trash is on) is checkpointed into
//! `.Trash/<yyMMddHHmmss>` within `fs.trash.checkpoint.interval`, the
//! checkpoint is deleted once older than `fs.trash.interval`, and the
//! DataNode then deletes the file's block. Intervals are fractional
//! minutes, as Hadoop reads them: 0.1 (6 s) and 0.05 (3 s).
//!
//! Needs a JDK and Maven (the kit fetches the jars on first use).

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{current_user, finalized_replicas, Cluster};
use hdfs_native::WriteOptions;

fn java_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/java")
}

/// Names in `.Trash` (empty when it does not exist).
async fn trash_entries(c: &hdfs_native::Client, trash: &str) -> Vec<String> {
    match c.list_status(trash, false).await {
        Ok(list) => list
            .into_iter()
            .map(|s| s.path.rsplit('/').next().unwrap_or_default().to_string())
            .collect(),
        Err(_) => Vec::new(),
    }
}

async fn wait_for(what: &str, limit: Duration, mut f: impl AsyncFnMut() -> bool) {
    let start = Instant::now();
    while start.elapsed() < limit {
        if f().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{what}: not within {limit:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removed_files_are_checkpointed_then_expunged_and_their_blocks_freed() {
    let cluster = Cluster::start(
        1,
        &[
            "fs.trash.interval=0.1",
            "fs.trash.checkpoint.interval=0.05",
            "dfs.heartbeat.interval=1",
        ],
    );
    let user = current_user();
    let home = format!("/user/{user}");
    let trash = format!("{home}/.Trash");
    let c = cluster.nn.client(None);
    c.mkdirs(&home, 0o755, true).await.expect("home");
    let mut w = c
        .create(
            &format!("{home}/trash-me"),
            WriteOptions::default().replication(1),
        )
        .await
        .expect("create");
    w.write_bytes(Bytes::from_static(b"soon gone"))
        .await
        .expect("write");
    w.close().await.expect("close");
    let dn_dir = cluster.nn.dir.path().join("dn0");
    wait_for("the replica on disk", Duration::from_secs(30), async || {
        finalized_replicas(&dn_dir) == 1
    })
    .await;

    // The Java shell moves to trash: a relative path is under the home.
    let script = cluster.nn.dir.path().join("rm.txt");
    std::fs::write(&script, "-rm trash-me\n").expect("script");
    let out = common::output_within(
        Command::new(java_dir().join("run.sh"))
            .args(["--fs", &cluster.nn.url(), "--script"])
            .arg(&script),
        Duration::from_secs(900),
        "run the Java kit (needs java and mvn)",
    );
    let shown = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success() && shown.contains("exit=0"), "{shown}");
    assert!(
        c.get_file_info(&format!("{home}/trash-me")).await.is_err(),
        "removed"
    );

    // Checkpointed: Current renamed to a yyMMddHHmmss name, holding it.
    let mut checkpoint = String::new();
    wait_for("a checkpoint", Duration::from_secs(30), async || {
        let names = trash_entries(&c, &trash).await;
        match names
            .iter()
            .find(|n| n.len() == 12 && n.bytes().all(|b| b.is_ascii_digit()))
        {
            Some(n) if !names.iter().any(|n| n == "Current") => {
                checkpoint = n.clone();
                true
            }
            _ => false,
        }
    })
    .await;
    c.get_file_info(&format!("{trash}/{checkpoint}{home}/trash-me"))
        .await
        .expect("the file is in the checkpoint");
    assert_eq!(finalized_replicas(&dn_dir), 1, "blocks stay while in trash");

    // Expunged once older than fs.trash.interval, and the block freed.
    wait_for(
        "the checkpoint deleted",
        Duration::from_secs(60),
        async || trash_entries(&c, &trash).await.is_empty(),
    )
    .await;
    wait_for("the replica deleted", Duration::from_secs(30), async || {
        finalized_replicas(&dn_dir) == 0
    })
    .await;
    let log = cluster.nn.log();
    assert!(log.contains("Created trash checkpoint"), "{log}");
    assert!(log.contains("Deleted trash checkpoint"), "{log}");
}
