//! Start-up safe mode, as HDFS: a NameNode killed under load and started
//! again refuses changes (SafeModeException with HDFS's tip) until the
//! DataNodes have reported its blocks and the extension has passed;
//! `cairn admin -safemode wait` returns once it is off; then every file
//! acknowledged before the kill reads back intact, and writes work.
//! HDFS's `/startupProgress` and its `StartupProgress` bean show the
//! phases meanwhile.

mod common;

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::{pattern, Cluster, NameNode};
use hdfs_native::WriteOptions;

const DEFINES: &[&str] = &["dfs.heartbeat.interval=1"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_namenode_waits_for_its_blocks_before_changes() {
    let mut cluster = Cluster::start(3, DEFINES);
    let url = cluster.nn.url();
    // Load: two writers; the NameNode is killed while they write.
    let acked: Arc<Mutex<Vec<(String, usize)>>> = Arc::default();
    let mut writers = Vec::new();
    for w in 0..2u64 {
        let c = cluster.nn.client(None);
        let acked = acked.clone();
        writers.push(tokio::spawn(async move {
            for i in 0..u64::MAX {
                let path = format!("/load/w{w}-{i}");
                let len = 100_000 + (i as usize * 37_000) % 1_500_000;
                let done = async {
                    let mut f = c
                        .create(
                            &path,
                            WriteOptions::default().block_size(1 << 20).replication(3),
                        )
                        .await?;
                    f.write_bytes(Bytes::from(pattern(w * 1000 + i, len)))
                        .await?;
                    f.close().await
                }
                .await;
                match done {
                    Ok(()) => acked.lock().expect("acked").push((path, len)),
                    Err(_) => return,
                }
            }
        }));
    }
    let start = Instant::now();
    while acked.lock().expect("acked").len() < 12 {
        assert!(start.elapsed() < Duration::from_secs(60), "no progress");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let addr = cluster.nn.addr.to_string();
    let dir = std::mem::replace(&mut cluster.nn, NameNode::start(&[])).kill();
    // The writers' calls in flight fail or hang retrying: stop them; what
    // was acknowledged is what must survive.
    for w in &writers {
        w.abort();
    }
    for w in writers {
        let _ = w.await;
    }
    let acked = acked.lock().expect("acked").clone();
    // Restarted on the same address (the DataNodes come back to it), with
    // a 3 s extension so safe mode is surely still on for the first call.
    let mut defines = DEFINES.to_vec();
    defines.push("dfs.namenode.safemode.extension=3000");
    cluster.nn = NameNode::start_at(dir, &defines, &addr);
    let c = cluster.nn.client(None);
    let refused = c
        .mkdirs("/after", 0o755, true)
        .await
        .expect_err("safe mode");
    let msg = refused.to_string();
    assert!(
        msg.contains("SafeModeException")
            && msg.contains("Cannot create directory /after. Name node is in safe mode.")
            && (msg.contains("needs additional") || msg.contains("In safe mode extension")),
        "HDFS's refusal: {msg}"
    );
    // `cairn admin -safemode get` says ON; `wait` returns once it is off.
    let admin = |action: &str| {
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["admin", "-fs", &url, "-safemode", action])
            .output()
            .expect("cairn admin")
    };
    let get = admin("get");
    assert_eq!(String::from_utf8_lossy(&get.stdout), "Safe mode is ON\n");
    // HDFS's /startupProgress meanwhile: the image and the edits loaded,
    // a checkpoint saved, safe mode running over the blocks loaded.
    let progress = startup_progress(&cluster.nn);
    let phases = progress["phases"].as_array().expect("phases");
    let names: Vec<&str> = phases.iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "LoadingFsImage",
            "LoadingEdits",
            "SavingCheckpoint",
            "SafeMode"
        ]
    );
    let status: Vec<&str> = phases.iter().filter_map(|p| p["status"].as_str()).collect();
    assert_eq!(status, ["COMPLETE", "COMPLETE", "COMPLETE", "RUNNING"]);
    assert!(
        progress["percentComplete"].as_f64() < Some(1.0),
        "{progress}"
    );
    let image = phases[0]["file"].as_str().expect("image file");
    assert!(image.contains("fsimage_"), "{image}");
    let edits = phases[1]["steps"].as_array().expect("edit steps");
    assert!(
        edits.iter().any(|s| s["count"].as_u64() > Some(0)
            && s["file"].as_str().is_some_and(|f| f.contains("edits_"))),
        "the log replayed: {progress}"
    );
    let blocks = &phases[3]["steps"][0];
    assert_eq!(blocks["name"], "AwaitingReportedBlocks");
    assert!(blocks["total"].as_u64() >= Some(12), "{progress}");
    let t = Instant::now();
    let wait = admin("wait");
    assert!(wait.status.success(), "{wait:?}");
    assert_eq!(String::from_utf8_lossy(&wait.stdout), "Safe mode is OFF\n");
    eprintln!(
        "safe mode off {:?} after `-safemode wait` started ({} files acknowledged before the kill)",
        t.elapsed(),
        acked.len()
    );
    assert!(
        cluster.nn.log().contains("STATE* Leaving safe mode"),
        "the NameNode logs the exit"
    );
    let progress = startup_progress(&cluster.nn);
    assert_eq!(progress["percentComplete"], 1.0, "{progress}");
    assert_eq!(progress["phases"][3]["status"], "COMPLETE");
    let (code, _, body) = common::http_request(
        cluster.nn.http,
        "GET",
        "/jmx?qry=Hadoop:service=NameNode,name=StartupProgress",
        b"",
    );
    let bean: serde_json::Value = serde_json::from_slice(&body).expect("jmx json");
    let bean = &bean["beans"][0];
    assert_eq!(
        (code, &bean["PercentComplete"]),
        (200, &serde_json::json!(1.0))
    );
    assert_eq!(
        bean["SafeModeTotal"],
        progress["phases"][3]["steps"][0]["total"]
    );
    for (path, len) in &acked {
        let (w, i) = path
            .trim_start_matches("/load/w")
            .split_once('-')
            .expect("name");
        let seed = w.parse::<u64>().expect("w") * 1000 + i.parse::<u64>().expect("i");
        let r = c.read(path).await.unwrap_or_else(|e| panic!("{path}: {e}"));
        let got = r.read_range(0, r.file_length()).await.expect("read");
        assert!(got[..] == pattern(seed, *len)[..], "{path} differs");
    }
    c.mkdirs("/after", 0o755, true)
        .await
        .expect("writable after safe mode");
    // Entered and left by hand, as an operator would.
    assert_eq!(
        String::from_utf8_lossy(&admin("enter").stdout),
        "Safe mode is ON\n"
    );
    assert!(c.mkdirs("/manual", 0o755, true).await.is_err());
    assert_eq!(
        String::from_utf8_lossy(&admin("leave").stdout),
        "Safe mode is OFF\n"
    );
    c.mkdirs("/manual", 0o755, true)
        .await
        .expect("writable again");
}

/// The NameNode's `/startupProgress`.
fn startup_progress(nn: &NameNode) -> serde_json::Value {
    let (code, headers, body) = common::http_request(nn.http, "GET", "/startupProgress", b"");
    assert_eq!(code, 200);
    assert!(headers
        .iter()
        .any(|(k, v)| k == "content-type" && v.starts_with("application/json")));
    serde_json::from_slice(&body).expect("startup progress json")
}
