//! A real MapReduce job on Cairn: Hadoop's TestDFSIO (from the
//! hadoop-mapreduce-client-jobclient 3.4.1 tests jar) through the local job
//! runner, driven by the anchor harness (`../shared/anchors/hdfs-harness`,
//! its `testdfsio` subcommand). The job lists its control directory on
//! Cairn with located listings (FileInputFormat's split planning), runs one
//! map per file that writes (then reads) a file on Cairn, and writes the
//! reducer's output there; the output is checked with hdfs-native.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::Cluster;

fn testdfsio(harness: &Path, url: &str, mode: &str) -> String {
    let mut cmd = Command::new(harness.join("harness"));
    cmd.args(["testdfsio", "--fs", url, "--mode", mode])
        .args(["--files", "3", "--size-mb", "3", "--parallel", "2"])
        .args(["--replication", "3"])
        .arg("--work-dir")
        .arg(harness.join("target/testdfsio"));
    let out = common::output_within(&mut cmd, Duration::from_secs(600), "harness testdfsio");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(" rc=0 "),
        "TestDFSIO {mode} failed:\n{stdout}\n{stderr}"
    );
    stdout
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn testdfsio_runs_through_the_local_job_runner() {
    // Goal: the job's write and read phases succeed, their data files have
    // the requested size, and the reducer's output on Cairn holds its
    // statistics.
    let work = tempfile::tempdir().expect("tmp");
    let Some(h) = common::anchor_harness(work.path()) else {
        return;
    };
    let cluster = Cluster::start(3, &[]);
    let url = cluster.nn.url();
    testdfsio(&h, &url, "write");
    let c = cluster.nn.client(None);
    for i in 0..3 {
        let st = c
            .get_file_info(&format!("/benchmarks/TestDFSIO/io_data/test_io_{i}"))
            .await
            .expect("a data file of the write phase");
        assert_eq!(st.length, 3 << 20);
    }
    let read_result = |phase: &'static str| {
        let c = &c;
        async move {
            let dir = format!("/benchmarks/TestDFSIO/io_{phase}");
            let listing = c.list_status(&dir, false).await.expect("job output");
            let part = listing
                .iter()
                .find(|s| s.path.contains("part-"))
                .unwrap_or_else(|| panic!("no part file in {dir}: {listing:?}"));
            let r = c.read(&part.path).await.expect("open part");
            let text = r.read_range(0, r.file_length()).await.expect("read part");
            String::from_utf8_lossy(&text).into_owned()
        }
    };
    let out = read_result("write").await;
    assert!(out.contains("l:tasks\t3"), "write output: {out}");
    assert!(
        out.contains(&format!("l:size\t{}", 9 << 20)),
        "write output: {out}"
    );
    testdfsio(&h, &url, "read");
    let out = read_result("read").await;
    assert!(out.contains("l:tasks\t3"), "read output: {out}");
}
