//! The NameNode with a large namespace: builds N files (default 1,000,000,
//! 1,000 per directory; `--per-dir 4` is NNThroughputBenchmark's shape) directly with the namespace API, saves them as the
//! image of a formatted metadata directory, then measures against the real
//! `cairn namenode` process (release build next to this example):
//! restart time (start to first answered RPC), resident memory per file,
//! getFileInfo latency at rest and while a checkpoint runs (roll + image
//! built in the background), the checkpoint's duration, and with
//! `--throughput N` create and getFileInfo throughput at that size (`cairn
//! bench nn` over RPC, 16 threads, N ops each, NameNode CPU per op). In process it
//! also times the image's encoding and decoding (wall and CPU time), and
//! with `--compare-format-1` the same for the previous image format.
//!
//! ```sh
//! cargo build --release -p cairn --bin cairn --examples
//! cargo run --release --example million_files -- --files 1000000 [--per-dir 1000] [--json]
//!     [--compare-format-1] [--no-checkpoint] [--no-in-process] [--throughput N]
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

/// This process's CPU time (user + system) so far.
fn cpu_s() -> f64 {
    proc_cpu_s("self")
}

/// A process's CPU time (user + system) so far, from `/proc/<pid>/stat`.
fn proc_cpu_s(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which ends with the last ')'.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let f: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|v| v.parse().ok())
        .collect();
    f.iter().sum::<u64>() as f64 / 100.0
}

/// Wall and CPU seconds of `f`, with its result.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let (t, c) = (Instant::now(), cpu_s());
    let out = f();
    (out, t.elapsed().as_secs_f64(), cpu_s() - c)
}

/// Image encode and decode in this process: (encode CPU, decode wall,
/// decode CPU, bytes). CPU time is what a loaded machine does not skew.
fn in_process(
    ns: &Namespace,
    user: &str,
    encode: fn(&Namespace, u64) -> Vec<u8>,
) -> anyhow::Result<(f64, f64, f64, usize)> {
    let (bytes, _, enc) = timed(|| encode(ns, 1));
    let (loaded, dec, dec_cpu) = timed(|| {
        cairn_namenode::storage::decode_image(&bytes, user, "supergroup", Limits::default())
    });
    let (loaded, _) = loaded.map_err(|e| anyhow::anyhow!("{e}"))?;
    anyhow::ensure!(loaded.inode_count() == ns.inode_count(), "lost inodes");
    drop(loaded);
    Ok((enc, dec, dec_cpu, bytes.len()))
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

/// The command line.
struct Options {
    files: usize,
    /// Files per directory (NNThroughputBenchmark's create puts 4 in each).
    per_dir: usize,
    json: bool,
    compare: bool,
    checkpoint_phase: bool,
    /// Decoding in process holds a second namespace beside the first.
    in_process_phase: bool,
    throughput_ops: usize,
}

fn options() -> anyhow::Result<Options> {
    let mut o = Options {
        files: 1_000_000,
        per_dir: 1000,
        json: false,
        compare: false,
        checkpoint_phase: true,
        in_process_phase: true,
        throughput_ops: 0,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--files" => {
                o.files = args
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("--files N"))?
                    .parse()?;
            }
            "--per-dir" => {
                o.per_dir = args
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("--per-dir N"))?
                    .parse::<usize>()?
                    .max(1);
            }
            "--json" => o.json = true,
            "--compare-format-1" => o.compare = true,
            "--no-checkpoint" => o.checkpoint_phase = false,
            "--no-in-process" => o.in_process_phase = false,
            "--throughput" => {
                o.throughput_ops = args
                    .next()
                    .ok_or_else(|| anyhow::anyhow!("--throughput N"))?
                    .parse()?;
            }
            other => anyhow::bail!("unknown argument {other}"),
        }
    }
    Ok(o)
}

/// The path of file `i` with `per_dir` files a directory.
fn file_path(i: usize, per_dir: usize) -> String {
    format!("/big/dir{:07}/file{:07}", i / per_dir, i)
}

/// `files` empty closed files, `per_dir` a directory, through the namespace API.
fn build_namespace(files: usize, per_dir: usize, user: &str) -> anyhow::Result<Namespace> {
    let mut ns = Namespace::new(user, "supergroup", 1, Limits::default());
    let caller = Caller::superuser(user);
    for i in 0..files {
        let path = file_path(i, per_dir);
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
    Ok(ns)
}

/// getFileInfo latencies (µs) of up to `n` calls on files spread over the
/// namespace, until `stop` is set.
async fn sample_get_file_info(
    c: Arc<Client>,
    files: usize,
    per_dir: usize,
    n: usize,
    stop: Arc<AtomicBool>,
) -> Vec<f64> {
    let mut lat = Vec::with_capacity(n.min(1 << 20));
    let mut i = 7usize;
    while lat.len() < n && !stop.load(Ordering::Relaxed) {
        i = (i * 7919 + 13) % files.max(1);
        let req = pb::GetFileInfoRequestProto {
            src: file_path(i, per_dir),
        };
        let t = Instant::now();
        let _: pb::GetFileInfoResponseProto = c.call("getFileInfo", &req).await.unwrap_or_default();
        lat.push(t.elapsed().as_secs_f64() * 1e6);
    }
    lat
}

/// Triggers a checkpoint (1,000 transactions), then samples getFileInfo
/// from the last mkdirs until the image is on disk: reads racing the
/// checkpoint. Returns their latencies and the checkpoint's seconds.
async fn checkpoint_reads(
    c: &Arc<Client>,
    name: &std::path::Path,
    files: usize,
    per_dir: usize,
) -> anyhow::Result<(Vec<f64>, f64)> {
    let images_before = count_images(name);
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
    let stop = Arc::new(AtomicBool::new(false));
    let reader = tokio::spawn(sample_get_file_info(
        c.clone(),
        files,
        per_dir,
        usize::MAX,
        stop.clone(),
    ));
    let cp_start = Instant::now();
    while count_images(name) == images_before || newest_image_txid(name) < 1000 {
        if t.elapsed() > Duration::from_secs(600) {
            anyhow::bail!("no checkpoint within 10 minutes");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let checkpoint = cp_start.elapsed();
    stop.store(true, Ordering::Relaxed);
    Ok((reader.await?, checkpoint.as_secs_f64()))
}

/// What one run measured.
struct Figures {
    files: usize,
    per_dir: usize,
    build_s: f64,
    image_bytes: u64,
    image_write_s: f64,
    image_write_cpu_s: f64,
    /// In process: encode CPU, decode wall, decode CPU.
    codec: (f64, f64, f64),
    /// The same for the previous format, with its size.
    format1: Option<(f64, f64, f64, usize)>,
    restart_s: f64,
    restart_cpu_s: f64,
    rss_kib: u64,
    rest: Vec<f64>,
    during: Vec<f64>,
    checkpoint_phase: bool,
    checkpoint_s: f64,
    throughput: Option<serde_json::Value>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let opts = options()?;
    let files = opts.files;
    let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
    let work = tempfile::tempdir()?;
    let name = work.path().join("name");

    // 1. Build the namespace in memory.
    let t = Instant::now();
    let ns = build_namespace(files, opts.per_dir, &user)?;
    let build_s = t.elapsed().as_secs_f64();
    // In process: the image codec alone (and the previous format's).
    let codec = if opts.in_process_phase {
        let (enc, dec, dec_cpu, _) = in_process(&ns, &user, cairn_namenode::image::encode)?;
        (enc, dec, dec_cpu)
    } else {
        (0.0, 0.0, 0.0)
    };
    let format1 = if opts.compare {
        Some(in_process(
            &ns,
            &user,
            cairn_namenode::image::encode_format_1,
        )?)
    } else {
        None
    };
    // 2. Save it as the image of a formatted directory (a checkpoint write).
    let info = cairn_namenode::new_version_info();
    let (formatted, image_write_s, image_write_cpu_s) = timed(|| {
        cairn_namenode::storage::format(
            &cairn_common::disk::RealDisk,
            std::slice::from_ref(&name),
            &info,
            &ns,
            false,
        )
    });
    formatted?;
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
    let checkpoint_often = [
        "-D",
        "dfs.namenode.checkpoint.txns=1000",
        "-D",
        "dfs.namenode.checkpoint.check.period=1s",
    ];
    let (mut child, addr) = start_namenode(&exe, &name, &checkpoint_often)?;
    let c = Arc::new(Client::connect(addr, &user, CLIENT_PROTOCOL).await?);
    let probe = pb::GetFileInfoRequestProto {
        src: file_path(0, opts.per_dir),
    };
    let _: pb::GetFileInfoResponseProto = c.call("getFileInfo", &probe).await?;
    let restart_s = t.elapsed().as_secs_f64();
    let restart_cpu_s = proc_cpu_s(&child.id().to_string());
    let rss_kib = rss_kib(child.id());

    // 4. getFileInfo latency at rest; 5. while a checkpoint runs.
    let rest = sample_get_file_info(c.clone(), files, opts.per_dir, 20_000, Arc::default()).await;
    let (during, checkpoint_s) = if opts.checkpoint_phase {
        checkpoint_reads(&c, &name, files, opts.per_dir).await?
    } else {
        (Vec::new(), 0.0)
    };
    let _ = child.kill();
    let _ = child.wait();

    // 6. Throughput at this size: creates and getFileInfo over RPC, on a
    // NameNode restarted with HDFS's checkpoint defaults (the one above
    // checkpoints every 1,000 edits, which would charge a whole image build
    // to the ops measured here).
    let throughput = if opts.throughput_ops > 0 {
        let (mut nn, addr) = start_namenode(&exe, &name, &[])?;
        let report = bench_nn(&exe, addr, nn.id(), opts.throughput_ops);
        let _ = nn.kill();
        let _ = nn.wait();
        Some(report?)
    } else {
        None
    };

    let figures = Figures {
        files,
        per_dir: opts.per_dir,
        build_s,
        image_bytes,
        image_write_s,
        image_write_cpu_s,
        codec,
        format1,
        restart_s,
        restart_cpu_s,
        rss_kib,
        rest,
        during,
        checkpoint_phase: opts.checkpoint_phase,
        checkpoint_s,
        throughput,
    };
    if opts.json {
        print_json(figures);
    } else {
        print_text(figures);
    }
    Ok(())
}

/// p50 and p99 of latencies.
fn p50_p99(v: &[f64]) -> (f64, f64) {
    let mut v = v.to_vec();
    (percentile(&mut v, 0.5), percentile(&mut v, 0.99))
}

fn print_json(f: Figures) {
    let per_m = 1e6 / f.files.max(1) as f64;
    let (rest_p50, rest_p99) = p50_p99(&f.rest);
    let (cp_p50, cp_p99) = p50_p99(&f.during);
    let (enc2, dec2, dec2_cpu) = f.codec;
    let mut o = serde_json::json!({
        "files": f.files,
        "per_dir": f.per_dir,
        "namespace_build_s": f.build_s,
        "image_bytes": f.image_bytes,
        "image_bytes_per_file": f.image_bytes as f64 / f.files.max(1) as f64,
        "image_write_s": f.image_write_s,
        "image_write_s_per_million": f.image_write_s * per_m,
        "image_write_cpu_s": f.image_write_cpu_s,
        "image_write_cpu_s_per_million": f.image_write_cpu_s * per_m,
        "image_encode_cpu_s": enc2,
        "image_decode_s": dec2,
        "image_decode_cpu_s": dec2_cpu,
        "restart_s": f.restart_s,
        "restart_s_per_million": f.restart_s * per_m,
        "restart_cpu_s": f.restart_cpu_s,
        "restart_cpu_s_per_million": f.restart_cpu_s * per_m,
        "rss_bytes_per_file": f.rss_kib as f64 * 1024.0 / f.files.max(1) as f64,
        "checkpoint_s": f.checkpoint_s,
        "getfileinfo_rest_p50_us": rest_p50,
        "getfileinfo_rest_p99_us": rest_p99,
        "getfileinfo_checkpoint_p50_us": cp_p50,
        "getfileinfo_checkpoint_p99_us": cp_p99,
        "getfileinfo_checkpoint_calls": f.during.len(),
    });
    if let (Some(t), Some(map)) = (&f.throughput, o.as_object_mut()) {
        map.insert("throughput".into(), t.clone());
    }
    if let (Some((enc, dec, cpu, bytes)), Some(map)) = (f.format1, o.as_object_mut()) {
        map.insert("format1_encode_cpu_s".into(), enc.into());
        map.insert("format1_decode_s".into(), dec.into());
        map.insert("format1_decode_cpu_s".into(), cpu.into());
        map.insert("format1_bytes".into(), bytes.into());
    }
    println!("{o}");
}

fn print_text(f: Figures) {
    let files = f.files;
    let per_m = 1e6 / files.max(1) as f64;
    let (rest_p50, rest_p99) = p50_p99(&f.rest);
    let (cp_p50, cp_p99) = p50_p99(&f.during);
    let (enc2, dec2, dec2_cpu) = f.codec;
    println!(
        "# cairn NameNode with {files} files ({} per directory), release build",
        f.per_dir
    );
    println!("namespace build in memory:     {:>10.2} s", f.build_s);
    println!(
        "image write (format):          {:>10.2} s  ({:.2} s per million files; CPU {:.2} s per million; {:.1} MB, {:.1} B/file)",
        f.image_write_s,
        f.image_write_s * per_m,
        f.image_write_cpu_s * per_m,
        f.image_bytes as f64 / 1e6,
        f.image_bytes as f64 / files as f64
    );
    println!(
        "image in process:              encode {enc2:.2} s CPU, decode {dec2:.2} s ({dec2_cpu:.2} s CPU)"
    );
    if let Some((enc, dec, cpu, bytes)) = f.format1 {
        println!(
            "format-1 image in process:     encode {enc:.2} s CPU, decode {dec:.2} s ({cpu:.2} s CPU), {:.1} B/file",
            bytes as f64 / files as f64
        );
    }
    println!(
        "restart to first RPC:          {:>10.2} s  ({:.2} s per million files; NameNode CPU {:.2} s per million)",
        f.restart_s,
        f.restart_s * per_m,
        f.restart_cpu_s * per_m
    );
    println!(
        "resident memory:               {:>10.1} MiB  ({:.0} B/file)",
        f.rss_kib as f64 / 1024.0,
        f.rss_kib as f64 * 1024.0 / files as f64
    );
    println!(
        "getFileInfo at rest:           p50 {rest_p50:>8.0} us  p99 {rest_p99:>8.0} us  ({} calls)",
        f.rest.len()
    );
    if f.checkpoint_phase {
        println!(
            "background checkpoint:         {:>10.2} s  (last mkdirs to image on disk, upper bound)",
            f.checkpoint_s
        );
        println!(
            "getFileInfo during checkpoint: p50 {cp_p50:>8.0} us  p99 {cp_p99:>8.0} us  ({} calls)",
            f.during.len()
        );
    }
    for r in f
        .throughput
        .as_ref()
        .and_then(|t| t["results"].as_array())
        .into_iter()
        .flatten()
    {
        println!(
            "{:<31}{:>10.0} ops/s  (16 threads, {} ops; NameNode CPU {} us/op; p99 {:.0} us)",
            format!("{} at this size:", r["op"].as_str().unwrap_or("?")),
            r["ops_per_sec"].as_f64().unwrap_or(0.0),
            r["ops"],
            r["nn_cpu_us_per_op"],
            r["p99_us"].as_f64().unwrap_or(0.0),
        );
    }
}

/// Starts `cairn namenode` on `name` (port chosen by the kernel) and reads
/// the address it prints.
fn start_namenode(
    exe: &std::path::Path,
    name: &std::path::Path,
    extra: &[&str],
) -> anyhow::Result<(std::process::Child, SocketAddr)> {
    let mut child = Command::new(exe)
        .args(extra)
        .args(["namenode", "--rpc-address", "127.0.0.1:0", "--dir"])
        .arg(name)
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
    let addr = line
        .trim()
        .rsplit("hdfs://")
        .next()
        .unwrap_or_default()
        .parse()
        .map_err(|e| anyhow::anyhow!("namenode printed {line:?}: {e}"));
    match addr {
        Ok(addr) => Ok((child, addr)),
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(e)
        }
    }
}

/// `cairn bench nn` against the running NameNode: create then fileStatus,
/// 16 client threads; its JSON report.
fn bench_nn(
    exe: &std::path::Path,
    addr: SocketAddr,
    pid: u32,
    ops: usize,
) -> anyhow::Result<serde_json::Value> {
    let out = Command::new(exe)
        .args(["bench", "nn", "--fs", &format!("hdfs://{addr}")])
        .args(["--op", "create,fileStatus", "--threads", "16", "--json"])
        .args(["--files", &ops.to_string(), "--nn-pid", &pid.to_string()])
        .env("CAIRN_LOG", "warn")
        .stderr(Stdio::inherit())
        .output()?;
    anyhow::ensure!(out.status.success(), "cairn bench nn: {}", out.status);
    Ok(serde_json::from_slice(&out.stdout)?)
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
