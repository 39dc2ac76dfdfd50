//! `cairn up`, the README's main command: a NameNode and three DataNodes as
//! child processes, stopped cleanly by SIGTERM, and started again from the
//! same folder with every file intact.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use common::pattern;
use hdfs_native::WriteOptions;

struct Up {
    child: std::process::Child,
    url: String,
}

fn up(dir: &std::path::Path) -> Up {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "up",
            "--datanodes",
            "3",
            "--rpc-address",
            "127.0.0.1:0",
            "--dir",
        ])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("cairn up");
    let out = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(out).lines();
    let url = loop {
        let line = lines.next().expect("cairn up exited early").expect("read");
        if let Some(rest) = line.strip_prefix("Cairn is up: ") {
            break rest.split_whitespace().next().expect("url").to_string();
        }
    };
    std::thread::spawn(move || for _ in lines.by_ref() {});
    Up { child, url }
}

fn stop(mut up: Up) {
    let pid = nix::unistd::Pid::from_raw(up.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let start = std::time::Instant::now();
    loop {
        if let Ok(Some(status)) = up.child.try_wait() {
            assert!(status.success(), "cairn up exited with {status}");
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "cairn up did not stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

async fn wait_writable(url: &str) -> hdfs_native::Client {
    let c = hdfs_native::ClientBuilder::new()
        .with_url(url)
        .build()
        .expect("client");
    for _ in 0..200 {
        // Writable once DataNodes have registered: a 1-byte probe succeeds.
        if let Ok(mut w) = c
            .create(
                "/.probe",
                WriteOptions::default().overwrite(true).replication(3),
            )
            .await
        {
            if w.write_bytes(Bytes::from_static(b"x")).await.is_ok() && w.close().await.is_ok() {
                let _ = c.delete("/.probe", false).await;
                return c;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("cluster at {url} never became writable");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cluster_restarts_with_every_file_intact() {
    // Goal: files written to `cairn up` are all there, byte for byte, after
    // a clean stop and a start on the same folder.
    let dir = tempfile::tempdir().expect("tmp");
    let cluster = up(dir.path());
    let c = wait_writable(&cluster.url).await;
    let mut files = Vec::new();
    for (i, size) in [0usize, 1, 70_000, 3 * 1024 * 1024 + 5]
        .into_iter()
        .enumerate()
    {
        let path = format!("/keep/f{i}");
        let data = pattern(i as u64 + 900, size);
        let mut w = c
            .create(&path, WriteOptions::default().block_size(1 << 20))
            .await
            .expect("create");
        w.write_bytes(Bytes::from(data.clone()))
            .await
            .expect("write");
        w.close().await.expect("close");
        files.push((path, data));
    }
    stop(cluster);

    let cluster = up(dir.path());
    let c = wait_writable(&cluster.url).await;
    for (path, data) in &files {
        let r = c.read(path).await.unwrap_or_else(|e| panic!("{path}: {e}"));
        let got = r.read_range(0, r.file_length()).await.expect("read");
        assert!(got[..] == data[..], "{path} differs after the restart");
    }
    stop(cluster);
}
