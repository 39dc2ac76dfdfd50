//! `cairn bench limits`: what this machine can do at best, in the units the
//! other benchmarks print, so their figures can be read against it (the
//! same measurements as the HDFS harness's `scripts/limits.py` and `dd`):
//!
//! - sequential write of the data disk, 1 MiB writes then one fdatasync
//!   (`dd bs=1M count=N conv=fdatasync`), MB = 10^6;
//! - fdatasync latency of 4 KiB writes, appending (the file grows, so its
//!   size is synced too) and overwriting a preallocated file;
//! - loopback TCP: one stream of 1 MiB writes, and 64 B request/response;
//! - CRC32C of one core, whole buffers and per 512-byte chunk (as DataNodes
//!   checksum);
//! - memory copy bandwidth of one core.

use std::fs::File;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;

use super::{machine_facts, mb_per_s, parse_size, report, Json, Obj, Rng, Samples};

#[derive(Args, Debug)]
pub struct LimitsArgs {
    /// Data directory whose disk is measured (default: the temp directory).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Bytes written for the sequential disk test (dd's bs=1M × count).
    #[arg(long, default_value = "1g", value_parser = parse_size, value_name = "BYTES")]
    pub dd_bytes: u64,
    /// Number of 4 KiB write + fdatasync rounds (each way).
    #[arg(long, default_value_t = 2000, value_name = "N")]
    pub fsync_count: usize,
    /// Seconds of one-stream loopback TCP.
    #[arg(long, default_value_t = 3.0, value_name = "SECONDS")]
    pub tcp_seconds: f64,
    /// Request/response round trips of 64 bytes over loopback.
    #[arg(long, default_value_t = 5000, value_name = "N")]
    pub rtt_count: usize,
    /// Buffer checksummed repeatedly for the CRC32C test.
    #[arg(long, default_value = "64m", value_parser = parse_size, value_name = "BYTES")]
    pub crc_bytes: u64,
    /// Buffer copied repeatedly for the memory copy test.
    #[arg(long, default_value = "256m", value_parser = parse_size, value_name = "BYTES")]
    pub memcpy_bytes: u64,
    /// Seconds each CPU-bound test (CRC32C, memcpy) runs for at least.
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub cpu_seconds: f64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

const MIB: usize = 1 << 20;

fn dd(dir: &std::path::Path, bytes: u64) -> anyhow::Result<Json> {
    let path = dir.join(format!("cairn-bench-dd-{}.bin", std::process::id()));
    let mut buf = vec![0u8; MIB];
    Rng::new(1).fill(&mut buf);
    let count = bytes.div_ceil(MIB as u64).max(1);
    let mut f = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    let start = Instant::now();
    for _ in 0..count {
        f.write_all(&buf)?;
    }
    let written = start.elapsed();
    f.sync_data()?;
    let total = start.elapsed();
    drop(f);
    let _ = std::fs::remove_file(&path);
    let n = count * MIB as u64;
    Ok(Obj::new()
        .with(
            "what",
            "1 MiB write() calls into a new file, then one fdatasync (dd bs=1M conv=fdatasync)",
        )
        .with("bytes", n)
        .with("seconds", total.as_secs_f64())
        .with("mb_per_s_with_fdatasync", mb_per_s(n, total))
        .with("mb_per_s_page_cache_only", mb_per_s(n, written))
        .into())
}

fn fsync_latency(dir: &std::path::Path, n: usize) -> anyhow::Result<Json> {
    let buf = [b'x'; 4096];
    let mut rows = Vec::new();
    for mode in ["append", "prealloc"] {
        let path = dir.join(format!("cairn-bench-fsync-{}.bin", std::process::id()));
        let mut f = File::options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .with_context(|| format!("creating {}", path.display()))?;
        if mode == "prealloc" {
            use std::os::fd::AsRawFd;
            let len = i64::try_from(n * 4096).unwrap_or(i64::MAX);
            nix::fcntl::posix_fallocate(f.as_raw_fd(), 0, len).context("posix_fallocate")?;
            f.sync_all()?;
        }
        let mut s = Samples::with_capacity(n);
        for i in 0..n {
            let t = Instant::now();
            if mode == "append" {
                f.write_all(&buf)?;
            } else {
                f.write_all_at(&buf, (i * 4096) as u64)?;
            }
            f.sync_data()?;
            s.push(t.elapsed());
        }
        drop(f);
        let _ = std::fs::remove_file(&path);
        let mut o = Obj::new().with("mode", mode);
        for (k, v) in s.summary().0 {
            o.put(&k, v);
        }
        o.put("syncs_per_s", s.len() as f64 / (s.sum_us() / 1e6));
        rows.push(Json::from(o));
    }
    Ok(Json::Arr(rows))
}

fn tcp_stream(seconds: f64) -> anyhow::Result<Json> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    let addr = l.local_addr()?;
    let rx = std::thread::spawn(move || -> std::io::Result<(u64, Duration)> {
        let (mut s, _) = l.accept()?;
        let mut buf = vec![0u8; MIB];
        let mut total = 0u64;
        let mut start = None;
        loop {
            let n = s.read(&mut buf)?;
            if n == 0 {
                break;
            }
            start.get_or_insert_with(Instant::now);
            total += n as u64;
        }
        Ok((total, start.map_or(Duration::ZERO, |t| t.elapsed())))
    });
    let mut c = TcpStream::connect(addr)?;
    let buf = vec![7u8; MIB];
    let start = Instant::now();
    let limit = Duration::from_secs_f64(seconds.max(0.01));
    while start.elapsed() < limit {
        c.write_all(&buf)?;
    }
    drop(c);
    let (total, took) = rx
        .join()
        .map_err(|_| anyhow::anyhow!("receiver thread panicked"))??;
    Ok(Obj::new()
        .with(
            "what",
            "one TCP stream over 127.0.0.1, 1 MiB write() calls, receiver thread in this process",
        )
        .with("bytes", total)
        .with("seconds", took.as_secs_f64())
        .with("mb_per_s", mb_per_s(total, took))
        .into())
}

fn tcp_rtt(count: usize) -> anyhow::Result<Json> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    let addr = l.local_addr()?;
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        let (mut s, _) = l.accept()?;
        s.set_nodelay(true)?;
        let mut buf = [0u8; 64];
        loop {
            match s.read_exact(&mut buf) {
                Ok(()) => s.write_all(&buf)?,
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
                Err(e) => return Err(e),
            }
        }
    });
    let mut c = TcpStream::connect(addr)?;
    c.set_nodelay(true)?;
    let mut buf = [1u8; 64];
    let mut s = Samples::with_capacity(count);
    for _ in 0..count {
        let t = Instant::now();
        c.write_all(&buf)?;
        c.read_exact(&mut buf)?;
        s.push(t.elapsed());
    }
    drop(c);
    echo.join()
        .map_err(|_| anyhow::anyhow!("echo thread panicked"))??;
    let mut o = Obj::new().with(
        "what",
        "64-byte request, 64-byte reply, TCP_NODELAY, echo thread in this process",
    );
    for (k, v) in s.summary().0 {
        o.put(&k, v);
    }
    Ok(o.into())
}

fn crc(bytes: u64, seconds: f64) -> Json {
    let mut buf = vec![0u8; usize::try_from(bytes).unwrap_or(MIB).max(4096)];
    Rng::new(2).fill(&mut buf);
    let run = |chunk: usize| {
        let start = Instant::now();
        let mut done = 0u64;
        let mut acc = 0u32;
        while done == 0 || start.elapsed().as_secs_f64() < seconds {
            for c in buf.chunks(chunk) {
                acc ^= crc32c::crc32c(std::hint::black_box(c));
            }
            done += buf.len() as u64;
        }
        (done, start.elapsed(), acc)
    };
    let (whole, whole_t, a) = run(buf.len());
    std::hint::black_box(a);
    let (chunked, chunked_t, b) = run(512);
    std::hint::black_box(b);
    Obj::new()
        .with(
            "what",
            "crc32c crate on one core (hardware instruction where the CPU has it)",
        )
        .with("buffer_bytes", buf.len())
        .with("mb_per_s_whole_buffer", mb_per_s(whole, whole_t))
        .with("mb_per_s_per_512_byte_chunk", mb_per_s(chunked, chunked_t))
        .into()
}

fn memcpy(bytes: u64, seconds: f64) -> Json {
    let n = usize::try_from(bytes).unwrap_or(MIB).max(4096);
    let src = vec![3u8; n];
    let mut dst = vec![0u8; n];
    dst.copy_from_slice(&src); // fault the pages in before timing
    let start = Instant::now();
    let mut done = 0u64;
    while done == 0 || start.elapsed().as_secs_f64() < seconds {
        dst.copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&mut dst);
        done += n as u64;
    }
    let took = start.elapsed();
    Obj::new()
        .with(
            "what",
            "copy_from_slice between two buffers on one core (bytes copied, not read+written)",
        )
        .with("buffer_bytes", n)
        .with("mb_per_s", mb_per_s(done, took))
        .into()
}

/// Runs every measurement in order.
///
/// # Errors
/// When the directory cannot be written or loopback sockets fail.
pub fn run(a: &LimitsArgs) -> anyhow::Result<Json> {
    let dir = a.dir.clone().unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let machine = machine_facts(Some(&dir));
    let params = Obj::new()
        .with("dd_bytes", a.dd_bytes)
        .with("fsync_count", a.fsync_count)
        .with("fsync_write_bytes", 4096u64)
        .with("tcp_seconds", a.tcp_seconds)
        .with("rtt_count", a.rtt_count)
        .with("crc_bytes", a.crc_bytes)
        .with("memcpy_bytes", a.memcpy_bytes)
        .with("cpu_seconds", a.cpu_seconds)
        .with(
            "units",
            "MB = 10^6 bytes; latencies in microseconds; nearest-rank percentiles",
        );
    let results = Obj::new()
        .with("disk_sequential_write", dd(&dir, a.dd_bytes)?)
        .with("fdatasync_4k", fsync_latency(&dir, a.fsync_count.max(1))?)
        .with("tcp_loopback_stream", tcp_stream(a.tcp_seconds)?)
        .with("tcp_loopback_rtt_64b", tcp_rtt(a.rtt_count.max(1))?)
        .with("crc32c", crc(a.crc_bytes, a.cpu_seconds))
        .with("memcpy", memcpy(a.memcpy_bytes, a.cpu_seconds));
    Ok(report(
        "limits",
        "physical limits of this machine, measured one after the other in this process",
        machine,
        params,
        results.into(),
    ))
}
