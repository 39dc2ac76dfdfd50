//! The NameNode with a large namespace: builds N files (default 1,000,000,
//! 1,000 per directory) directly with the namespace API, saves them as the
//! image of a formatted metadata directory, then measures against the real
//! `cairn namenode` process (release build next to this example):
//! restart time (start to first answered RPC), resident memory per file,
//! getFileInfo latency at rest and while a checkpoint runs (roll + image
//! built in the background), and the checkpoint's duration.
//!
//! ```sh
//! cargo build --release && cargo run --release --example million_files -- --files 1000000
//! ```

use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_namenode::namespace::permission::Caller;
use cairn_namenode::namespace::{Limits, Namespace};
use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::CLIENT_PROTOCOL;
use cairn_rpc::client::Client;

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut files: usize = 1_000_000;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--files" {
            files = args
                .next()
                .ok_or_else(|| anyhow::anyhow!("--files N"))?
                .parse()?;
        }
    }
    let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
    let work = tempfile::tempdir()?;
    let name = work.path().join("name");

    // 1. Build the namespace in memory.
    let t = Instant::now();
    let mut ns = Namespace::new(&user, "supergroup", 1, Limits::default());
    let caller = Caller::superuser(&user);
    for i in 0..files {
        let path = format!("/big/dir{:04}/file{:07}", i / 1000, i);
        ns.create(
            &caller,
            &path,
            0o644,
            "gen",
            "127.0.0.1",
            false,
            true,
            3,
            128 << 20,
            1,
        )
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        ns.complete(&path, 0, "gen", None, 2, &|_| true)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let build = t.elapsed();
    // 2. Save it as the image of a formatted directory (a checkpoint write).
    let t = Instant::now();
    let info = cairn_namenode::new_version_info();
    cairn_namenode::storage::format(
        &cairn_common::disk::RealDisk,
        std::slice::from_ref(&name),
        &info,
        &ns,
        false,
    )?;
    let image_write = t.elapsed();
    let image_bytes = std::fs::read_dir(&name)?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("fsimage_"))
        .map(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
        .sum::<u64>();
    drop(ns);

    // 3. Start the NameNode on it: restart time and memory.
    let exe = std::env::current_exe()?
        .parent()
        .and_then(|p| p.parent())
        .ok_or_else(|| anyhow::anyhow!("target dir"))?
        .join("cairn");
    let t = Instant::now();
    let mut child = Command::new(exe)
        .args([
            "-D",
            "dfs.namenode.checkpoint.txns=1000",
            "-D",
            "dfs.namenode.checkpoint.check.period=1s",
        ])
        .args(["namenode", "--rpc-address", "127.0.0.1:0", "--dir"])
        .arg(&name)
        .env("CAIRN_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()?;
    let mut line = String::new();
    {
        use std::io::BufRead;
        let out = child
            .stdout
            .take()
            .ok_or_else(|| anyhow::anyhow!("stdout"))?;
        std::io::BufReader::new(out).read_line(&mut line)?;
    }
    let addr: SocketAddr = line
        .trim()
        .rsplit("hdfs://")
        .next()
        .unwrap_or_default()
        .parse()?;
    let c = Arc::new(Client::connect(addr, &user, CLIENT_PROTOCOL).await?);
    let probe = pb::GetFileInfoRequestProto {
        src: "/big/dir0000/file0000000".into(),
    };
    let _: pb::GetFileInfoResponseProto = c.call("getFileInfo", &probe).await?;
    let restart = t.elapsed();
    let rss = rss_kib(child.id());

    // 4. getFileInfo latency at rest.
    let sample = |c: Arc<Client>, n: usize, stop: Arc<AtomicBool>| async move {
        let mut lat = Vec::with_capacity(n.min(1 << 20));
        let mut i = 7usize;
        while lat.len() < n && !stop.load(Ordering::Relaxed) {
            i = (i * 7919 + 13) % files.max(1);
            let req = pb::GetFileInfoRequestProto {
                src: format!("/big/dir{:04}/file{:07}", i / 1000, i),
            };
            let t = Instant::now();
            let _: pb::GetFileInfoResponseProto =
                c.call("getFileInfo", &req).await.unwrap_or_default();
            lat.push(t.elapsed().as_secs_f64() * 1e6);
        }
        lat
    };
    let mut rest = sample(c.clone(), 20_000, Arc::new(AtomicBool::new(false))).await;

    // 5. Trigger a checkpoint (1,000 transactions) and sample meanwhile.
    let images_before = count_images(&name);
    let stop = Arc::new(AtomicBool::new(false));
    let reader = tokio::spawn(sample(c.clone(), usize::MAX, stop.clone()));
    let t = Instant::now();
    for i in 0..1000 {
        let req = pb::MkdirsRequestProto {
            src: format!("/cp/m{i}"),
            masked: pb::FsPermissionProto { perm: 0o755 },
            create_parent: true,
            unmasked: None,
        };
        let _: pb::MkdirsResponseProto = c.call("mkdirs", &req).await?;
    }
    let cp_start = Instant::now();
    while count_images(&name) == images_before || newest_image_txid(&name) < 1000 {
        if t.elapsed() > Duration::from_secs(600) {
            anyhow::bail!("no checkpoint within 10 minutes");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let checkpoint = cp_start.elapsed();
    stop.store(true, Ordering::Relaxed);
    let mut during = reader.await?;
    let _ = child.kill();
    let _ = child.wait();

    println!("# cairn NameNode with {files} files (1,000 per directory), release build");
    println!(
        "namespace build in memory:     {:>10.2} s",
        build.as_secs_f64()
    );
    println!(
        "image write (format):          {:>10.2} s  ({:.1} MB, {:.1} B/file)",
        image_write.as_secs_f64(),
        image_bytes as f64 / 1e6,
        image_bytes as f64 / files as f64
    );
    println!(
        "restart to first RPC:          {:>10.2} s",
        restart.as_secs_f64()
    );
    println!(
        "resident memory:               {:>10.1} MiB  ({:.0} B/file)",
        rss as f64 / 1024.0,
        rss as f64 * 1024.0 / files as f64
    );
    println!(
        "background checkpoint:         {:>10.2} s  (mkdirs done to image on disk, upper bound)",
        checkpoint.as_secs_f64()
    );
    println!(
        "getFileInfo at rest:           p50 {:>8.0} us  p99 {:>8.0} us  ({} calls)",
        percentile(&mut rest.clone(), 0.5),
        percentile(&mut rest, 0.99),
        rest.len()
    );
    println!(
        "getFileInfo during checkpoint: p50 {:>8.0} us  p99 {:>8.0} us  ({} calls)",
        percentile(&mut during.clone(), 0.5),
        percentile(&mut during, 0.99),
        during.len()
    );
    Ok(())
}

fn count_images(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("fsimage_"))
                .count()
        })
        .unwrap_or(0)
}

fn newest_image_txid(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .filter_map(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .strip_prefix("fsimage_")
                        .and_then(|t| t.parse().ok())
                })
                .max()
                .unwrap_or(0)
        })
        .unwrap_or(0)
}
