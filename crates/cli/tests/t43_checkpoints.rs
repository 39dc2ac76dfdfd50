//! Checkpoints: every N transactions the NameNode rolls its edit log and
//! writes a new image from disk in the background; old images and segments
//! are purged; a restart from image + remaining segments loses nothing.

mod common;

use std::time::Duration;

use common::{wait_until, NameNode};

fn images_and_segments(dir: &std::path::Path) -> (Vec<u64>, usize) {
    let mut images = Vec::new();
    let mut segments = 0;
    for e in std::fs::read_dir(dir).expect("ls").flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if let Some(t) = n.strip_prefix("fsimage_") {
            images.push(t.parse::<u64>().expect("txid"));
        } else if n.starts_with("edits_") {
            segments += 1;
        }
    }
    images.sort();
    (images, segments)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_follow_the_log_and_old_files_are_purged() {
    // Goal: with a checkpoint every 50 transactions, images appear as the
    // namespace grows, at most two are kept with the segments after them,
    // and a SIGKILL + restart brings back all 400 directories.
    let defines = [
        "dfs.namenode.checkpoint.txns=50",
        "dfs.namenode.checkpoint.check.period=200ms",
    ];
    let nn = NameNode::start(&defines);
    let c = nn.client(None);
    for i in 0..400 {
        c.mkdirs(&format!("/cp/d{i:03}"), 0o755, true)
            .await
            .expect("mkdir");
        if i % 100 == 99 {
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }
    let name = nn.dir.path().join("name");
    assert!(
        wait_until(Duration::from_secs(10), || images_and_segments(&name)
            .0
            .last()
            .copied()
            .unwrap_or(0)
            >= 350),
        "no recent image: {:?}",
        images_and_segments(&name)
    );
    let (images, segments) = images_and_segments(&name);
    assert!(images.len() <= 2, "old images purged: {images:?}");
    assert!(segments <= 4, "old segments purged: {segments}");
    let dir = nn.kill();
    let nn = NameNode::start_in(dir, &defines);
    let c = nn.client(None);
    let listed = c.list_status("/cp", false).await.expect("list");
    assert_eq!(listed.len(), 400);
}
