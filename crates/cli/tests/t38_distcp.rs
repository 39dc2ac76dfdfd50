//! DistCp between Apache HDFS and Cairn, with its checksum verification
//! on (no `-skipcrccheck`): Hadoop's own DistCp 3.4.1 (hadoop-distcp from
//! Maven Central) in local mode, on the anchor harness's Hadoop classpath,
//! copies a tree from a real MiniDFSCluster to Cairn and back; a second
//! `-update` run skips every file (sizes and checksums equal), in both
//! `dfs.checksum.combine.mode`s. The copies are compared byte for byte.

mod common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::Cluster;

struct MiniDfs(Child);
impl Drop for MiniDfs {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A MiniDFSCluster with one DataNode; its URL once READY.
fn minidfs(harness: &Path, work: &Path) -> (MiniDfs, String) {
    let (nn, http) = (free_port(), free_port());
    let out = work.join("minidfs.out");
    let child = Command::new(harness.join("harness"))
        .args([
            "minidfs",
            "--nn-port",
            &nn.to_string(),
            "--http-port",
            &http.to_string(),
        ])
        .args(["--datanodes", "1", "--dir"])
        .arg(work.join("dfs"))
        .stdout(Stdio::from(std::fs::File::create(&out).expect("out")))
        .stderr(Stdio::null())
        .spawn()
        .expect("harness minidfs");
    let mini = MiniDfs(child);
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        if let Some(line) = text.lines().find(|l| l.starts_with("READY ")) {
            let url = line.trim_start_matches("READY ").trim().to_string();
            return (mini, url);
        }
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "MiniDFSCluster not ready:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// hadoop-distcp 3.4.1 from Maven Central (the local repository first).
fn distcp_jar(work: &Path) -> PathBuf {
    let dir = work.join("distcp-lib");
    let mut mvn = Command::new("mvn");
    mvn.args(["-q", "-B", "dependency:copy"])
        .arg("-Dartifact=org.apache.hadoop:hadoop-distcp:3.4.1")
        .arg(format!("-DoutputDirectory={}", dir.display()))
        .current_dir(work);
    let out = common::output_within(&mut mvn, Duration::from_secs(600), "mvn hadoop-distcp");
    assert!(
        out.status.success(),
        "fetching hadoop-distcp failed:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    dir.join("hadoop-distcp-3.4.1.jar")
}

/// Runs DistCp with `args`; its log (the job counters).
fn distcp(harness: &Path, jar: &Path, args: &[&str]) -> String {
    let cp = std::fs::read_to_string(harness.join("target/classpath.txt")).expect("classpath");
    let cp = format!(
        "{}:{}:{}",
        cp.trim(),
        harness.join("target/classes").display(),
        jar.display()
    );
    let mut java = Command::new("java");
    java.args(["-Xmx1g", "-cp", &cp, "org.apache.hadoop.tools.DistCp"])
        .args(["-D", "mapreduce.framework.name=local"])
        .args(args)
        .current_dir(harness);
    let out = common::output_within(&mut java, Duration::from_secs(600), "java DistCp");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "DistCp {args:?} failed:\n{log}");
    log
}

fn counter(log: &str, name: &str) -> Option<u64> {
    log.lines()
        .filter_map(|l| l.trim().strip_prefix(&format!("{name}=")))
        .find_map(|v| v.trim().parse().ok())
}

async fn read_all(c: &hdfs_native::Client, path: &str) -> Vec<u8> {
    let r = c.read(path).await.unwrap_or_else(|e| panic!("{path}: {e}"));
    r.read_range(0, r.file_length())
        .await
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distcp_to_cairn_and_back_with_checksums() {
    let work = tempfile::tempdir().expect("tmp");
    let Some(h) = common::anchor_harness(work.path()) else {
        return;
    };
    let jar = distcp_jar(work.path());
    let (_mini, mini_url) = minidfs(&h, work.path());
    let cluster = Cluster::start(3, &[]);
    let cairn = cluster.nn.url();
    // A tree on Apache HDFS: the Java kit writes deterministic files of
    // several sizes (1 MiB blocks, replication 1).
    let sizes = "0,1,512,1048577,3146000";
    let out =
        Command::new(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/java/run.sh"))
            .args(["--main", "DataCheck", "--fs", &mini_url, "--dir", "/src"])
            .args([
                "--replication",
                "1",
                "--blocksize",
                "1048576",
                "--sizes",
                sizes,
            ])
            .output()
            .expect("the Java kit");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let files = sizes.split(',').count() as u64;

    // HDFS → Cairn, Cairn → HDFS: every file copied and verified.
    let to = distcp(
        &h,
        &jar,
        &["-pb", &format!("{mini_url}/src"), &format!("{cairn}/dst")],
    );
    assert_eq!(counter(&to, "Files Copied"), Some(files), "{to}");
    let back = distcp(
        &h,
        &jar,
        &["-pb", &format!("{cairn}/dst"), &format!("{mini_url}/back")],
    );
    assert_eq!(counter(&back, "Files Copied"), Some(files), "{back}");
    // Again with -update: nothing to copy, in both checksum modes.
    for mode in ["MD5MD5CRC", "COMPOSITE_CRC"] {
        let again = distcp(
            &h,
            &jar,
            &[
                "-D",
                &format!("dfs.checksum.combine.mode={mode}"),
                "-update",
                "-pb",
                &format!("{mini_url}/src"),
                &format!("{cairn}/dst"),
            ],
        );
        assert_eq!(
            counter(&again, "Files Skipped"),
            Some(files),
            "{mode}: {again}"
        );
        assert_eq!(counter(&again, "Files Copied"), None, "{mode}: {again}");
    }
    // Byte for byte, through hdfs-native on both systems.
    let hdfs = hdfs_native::ClientBuilder::new()
        .with_url(&mini_url)
        .build()
        .expect("client for HDFS");
    let c = cluster.nn.client(None);
    for size in sizes.split(',') {
        let src = read_all(&hdfs, &format!("/src/r1/f{size}")).await;
        assert_eq!(src.len().to_string(), size);
        assert!(
            read_all(&c, &format!("/dst/r1/f{size}")).await == src,
            "/dst f{size}"
        );
        assert!(
            read_all(&hdfs, &format!("/back/r1/f{size}")).await == src,
            "/back f{size}"
        );
    }
}
