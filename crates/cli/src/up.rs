//! `cairn up`: a whole local cluster — one NameNode and N DataNodes as
//! child processes of this one, on loopback, with their data under one
//! folder — started in order, announced with its `hdfs://` URL, and stopped
//! cleanly (SIGTERM to each child, SIGKILL after a deadline) on Ctrl-C or
//! SIGTERM. Starting again on the same folder brings every file back.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// How long children get to stop after SIGTERM before SIGKILL.
const STOP_DEADLINE: Duration = Duration::from_secs(15);
/// How long a child gets to report that it is ready.
const START_DEADLINE: Duration = Duration::from_secs(60);

pub struct UpArgs {
    pub dir: PathBuf,
    pub datanodes: usize,
    pub rpc_address: String,
    /// `--conf` and `-D` arguments to pass on to every child.
    pub passthrough: Vec<String>,
}

struct Proc {
    name: String,
    child: Child,
}

fn spawn(
    name: &str,
    args: &[String],
    passthrough: &[String],
    log_dir: &Path,
) -> anyhow::Result<(Proc, String)> {
    let exe = std::env::current_exe().context("locating the cairn binary")?;
    let log_path = log_dir.join(format!("{name}.log"));
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .with_context(|| format!("opening {}", log_path.display()))?;
    let mut child = Command::new(exe)
        .args(passthrough)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .spawn()
        .with_context(|| format!("starting {name}"))?;
    let stdout = child.stdout.take().context("child stdout")?;
    // The child announces itself with one line on stdout.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let mut r = BufReader::new(stdout);
        let _ = r.read_line(&mut line);
        let _ = tx.send(line);
        // Keep draining so the child never blocks on a full pipe.
        let mut sink = String::new();
        while r.read_line(&mut sink).map(|n| n > 0).unwrap_or(false) {
            sink.clear();
        }
    });
    let line = rx.recv_timeout(START_DEADLINE).unwrap_or_default();
    let proc = Proc {
        name: name.to_string(),
        child,
    };
    if line.trim().is_empty() {
        let mut p = proc;
        let _ = p.child.kill();
        let tail = std::fs::read_to_string(&log_path).unwrap_or_default();
        bail!(
            "{name} did not start (log {}):\n{}",
            log_path.display(),
            tail.lines()
                .rev()
                .take(20)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    Ok((proc, line.trim().to_string()))
}

fn stop_all(procs: &mut [Proc]) {
    // DataNodes first, the NameNode last (it is first in the list).
    for p in procs.iter_mut().rev() {
        let pid = nix::unistd::Pid::from_raw(p.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    }
    let start = Instant::now();
    for p in procs.iter_mut().rev() {
        loop {
            match p.child.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) if start.elapsed() > STOP_DEADLINE => {
                    eprintln!("{} did not stop in time; killing it", p.name);
                    let _ = p.child.kill();
                    let _ = p.child.wait();
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
}

/// Runs the cluster until a signal arrives or a process dies.
///
/// # Errors
/// When a process cannot be started.
pub fn run(args: UpArgs) -> anyhow::Result<()> {
    let name_dir = args.dir.join("name");
    let log_dir = args.dir.join("logs");
    std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let mut procs: Vec<Proc> = Vec::new();
    let result = (|| -> anyhow::Result<()> {
        if !name_dir.join("VERSION").exists() {
            let out = Command::new(std::env::current_exe()?)
                .args(&args.passthrough)
                .args(["namenode", "--format", "--dir"])
                .arg(&name_dir)
                .output()
                .context("formatting the NameNode")?;
            if !out.status.success() {
                bail!(
                    "formatting failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            println!("{}", String::from_utf8_lossy(&out.stdout).trim());
        }
        let (nn, line) = spawn(
            "namenode",
            &[
                "namenode".into(),
                "--dir".into(),
                name_dir.display().to_string(),
                "--rpc-address".into(),
                args.rpc_address.clone(),
            ],
            &args.passthrough,
            &log_dir,
        )?;
        procs.push(nn);
        let url = line
            .rsplit(' ')
            .next()
            .filter(|u| u.starts_with("hdfs://"))
            .context("NameNode did not print its URL")?
            .to_string();
        let nn_addr = url.trim_start_matches("hdfs://").to_string();
        for i in 1..=args.datanodes {
            let name = format!("datanode{i}");
            let (dn, line) = spawn(
                &name,
                &[
                    "datanode".into(),
                    "--dir".into(),
                    args.dir.join(&name).display().to_string(),
                    "--namenode".into(),
                    nn_addr.clone(),
                    "--data-address".into(),
                    "127.0.0.1:0".into(),
                ],
                &args.passthrough,
                &log_dir,
            )?;
            println!("{name}: {line}");
            procs.push(dn);
        }
        println!(
            "Cairn is up: {url}  ({} DataNode(s), data in {}, logs in {})",
            args.datanodes,
            args.dir.display(),
            log_dir.display()
        );
        println!("Try: cairn dfs -fs {url} -ls /    (Ctrl-C stops the cluster)");
        wait_for_signal_or_exit(&mut procs)
    })();
    stop_all(&mut procs);
    println!("Cairn stopped.");
    result
}

fn wait_for_signal_or_exit(procs: &mut [Proc]) -> anyhow::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let term = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    signal_hook::flag::register(SIGTERM, term.clone())?;
    signal_hook::flag::register(SIGINT, term.clone())?;
    loop {
        if term.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(());
        }
        for p in procs.iter_mut() {
            if let Ok(Some(status)) = p.child.try_wait() {
                bail!(
                    "{} exited unexpectedly ({status}); stopping the cluster",
                    p.name
                );
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
