//! Checkpoints: every N transactions the NameNode rolls its edit log and
//! writes a new image from disk in the background; old images and segments
//! are purged; a restart from image + remaining segments loses nothing.

mod common;

use std::time::Duration;

use common::{http_request, wait_until, NameNode};

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

#[test]
fn dfsadmin_fetch_image_downloads_the_newest_image() {
    // Goal: `hdfs dfsadmin -fetchImage DIR` (HDFS's ImageServlet at
    // /imagetransfer, what operators back a NameNode up with) saves the
    // newest checkpoint image under its own name, byte for byte; an image
    // that is not there is HDFS's 410.
    let nn = NameNode::start(&[]);
    let name = nn.dir.path().join("name");
    let (images, _) = images_and_segments(&name);
    let newest = *images.last().expect("the format's image");
    let file = format!("fsimage_{newest:019}");
    let out = tempfile::tempdir().expect("tempdir");
    let script = out.path().join("fetch.txt");
    let target = out.path().join("backup");
    std::fs::create_dir(&target).expect("mkdir");
    std::fs::write(&script, format!("-fetchImage {}\n", target.display())).expect("script");
    let http = format!("dfs.namenode.http-address={}", nn.http);
    let transcript = common::run_java_kit(&[
        "--main",
        "DfsAdmin",
        "--fs",
        &nn.url(),
        "--script",
        &script.to_string_lossy(),
        "-D",
        &http,
    ]);
    assert!(transcript.contains("exit=0"), "{transcript}");
    let fetched = std::fs::read(target.join(&file)).expect("the fetched image");
    assert_eq!(fetched, std::fs::read(name.join(&file)).expect("the image"));

    let (status, headers, body) =
        http_request(nn.http, "GET", "/imagetransfer?getimage=1&txid=latest", b"");
    assert_eq!(status, 200);
    assert_eq!(body, fetched);
    assert!(headers
        .iter()
        .any(|(k, v)| k == "x-image-edits-name" && *v == file));
    let (status, _, _) = http_request(nn.http, "GET", "/imagetransfer?getimage=1&txid=99999", b"");
    assert_eq!(status, 410);
    // The two whole downloads count as HDFS's GetImage figures; the refused
    // one does not.
    let (_, _, jmx) = http_request(
        nn.http,
        "GET",
        "/jmx?qry=Hadoop:service=NameNode,name=NameNodeActivity",
        b"",
    );
    let jmx: serde_json::Value = serde_json::from_slice(&jmx).expect("jmx JSON");
    assert_eq!(jmx["beans"][0]["GetImageNumOps"], 2, "{jmx}");
}
