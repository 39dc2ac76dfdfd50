//! `cairn up`: a whole local cluster — one NameNode and N DataNodes as
//! child processes of this one, on loopback, with their data under one
//! folder — started in order, announced with its `hdfs://` URL, and stopped
//! cleanly (SIGTERM to each child, SIGKILL after a deadline) on Ctrl-C or
//! SIGTERM. Starting again on the same folder brings every file back.
//!
//! A DataNode that exits does not take the cluster down: as on a real
//! cluster the others keep serving, the NameNode notices the loss and
//! re-replicates, and `cairn up` starts the node again after
//! `--datanode-restart-delay` seconds (0: never), with a longer delay each
//! time it exits again soon after a restart. Only the NameNode's exit, or
//! Ctrl-C/SIGTERM, stops everything.

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
    /// Seconds before a DataNode that exited is started again (0: never).
    pub datanode_restart_delay: u64,
    /// `--conf` and `-D` arguments to pass on to every child.
    pub passthrough: Vec<String>,
}

struct Proc {
    name: String,
    child: Child,
    /// The arguments it was started with, to start it again.
    args: Vec<String>,
}

/// A DataNode that exited, waiting to be started again.
struct Down {
    index: usize,
    /// When to start it again; `None`: never (restart delay 0).
    restart_at: Option<Instant>,
}

/// A DataNode that runs this long after a restart has recovered: its next
/// exit waits the base delay again, not a doubled one.
const STABLE_AFTER: Duration = Duration::from_secs(120);
/// The longest wait before starting a DataNode that keeps exiting.
const MAX_RESTART_DELAY: Duration = Duration::from_secs(600);

fn spawn(
    name: &str,
    args: &[String],
    passthrough: &[String],
    log_dir: &Path,
    lines: usize,
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
    // The child announces itself with `lines` lines on stdout.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let mut r = BufReader::new(stdout);
        for _ in 0..lines {
            if r.read_line(&mut line).map(|n| n == 0).unwrap_or(true) {
                break;
            }
        }
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
        args: args.to_vec(),
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
        // metaSave files go next to the logs; a local cluster's start-up
        // safe mode ends 5 s after its blocks are reported, not HDFS's 30 s
        // (a -D of the user's, later on the command line, still wins).
        let mut nn_passthrough = vec![
            "-D".to_string(),
            format!("hadoop.log.dir={}", log_dir.display()),
            "-D".to_string(),
            format!(
                "{}=5000",
                cairn_common::keys::DFS_NAMENODE_SAFEMODE_EXTENSION
            ),
        ];
        nn_passthrough.extend(args.passthrough.iter().cloned());
        let mut nn_args: Vec<String> = vec![
            "namenode".into(),
            "--dir".into(),
            name_dir.display().to_string(),
            "--rpc-address".into(),
            args.rpc_address.clone(),
        ];
        // The web server on a free port unless the user picked one.
        let http_key = format!("{}=", cairn_common::keys::DFS_NAMENODE_HTTP_ADDRESS);
        if !args.passthrough.iter().any(|a| a.starts_with(&http_key)) {
            nn_args.extend(["--http-address".into(), "127.0.0.1:0".into()]);
        }
        let (nn, lines) = spawn("namenode", &nn_args, &nn_passthrough, &log_dir, 2)?;
        procs.push(nn);
        let url_in = |scheme: &str| {
            lines
                .lines()
                .filter_map(|l| l.rsplit(' ').next())
                .find(|u| u.starts_with(scheme))
                .map(str::to_string)
        };
        let url = url_in("hdfs://").context("NameNode did not print its URL")?;
        let web = url_in("http://").context("NameNode did not print its HTTP URL")?;
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
                1,
            )?;
            println!("{name} (pid {}): {line}", dn.child.id());
            procs.push(dn);
        }
        println!(
            "Cairn is up: {url}  ({} DataNode(s), data in {}, logs in {})",
            args.datanodes,
            args.dir.display(),
            log_dir.display()
        );
        println!("Web UI and WebHDFS: {web}  (e.g. curl '{web}/webhdfs/v1/?op=LISTSTATUS')");
        println!("Try: cairn dfs -fs {url} -ls /    (Ctrl-C stops the cluster)");
        supervise(&mut procs, &args, &log_dir)
    })();
    stop_all(&mut procs);
    println!("Cairn stopped.");
    result
}

/// Runs until Ctrl-C/SIGTERM (Ok) or the NameNode exits (Err); DataNodes
/// that exit are reported and started again after the restart delay.
fn supervise(procs: &mut [Proc], args: &UpArgs, log_dir: &Path) -> anyhow::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let term = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    signal_hook::flag::register(SIGTERM, term.clone())?;
    signal_hook::flag::register(SIGINT, term.clone())?;
    let base = Duration::from_secs(args.datanode_restart_delay);
    // Per DataNode: when it was last started, and the delay its next
    // restart waits.
    let mut started: Vec<Instant> = vec![Instant::now(); procs.len()];
    let mut delay: Vec<Duration> = vec![base; procs.len()];
    let mut down: Vec<Down> = Vec::new();
    loop {
        if term.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(());
        }
        for (i, p) in procs.iter_mut().enumerate() {
            if down.iter().any(|d| d.index == i) {
                continue;
            }
            let Ok(Some(status)) = p.child.try_wait() else {
                continue;
            };
            if i == 0 {
                bail!(
                    "{} exited unexpectedly ({status}); stopping the cluster",
                    p.name
                );
            }
            if started[i].elapsed() >= STABLE_AFTER {
                delay[i] = base;
            }
            if base.is_zero() {
                eprintln!(
                    "{} exited ({status}); the cluster keeps serving without it \
                     (--datanode-restart-delay 0: not restarted)",
                    p.name
                );
                down.push(Down {
                    index: i,
                    restart_at: None,
                });
            } else {
                eprintln!(
                    "{} exited ({status}); the cluster keeps serving without it; \
                     restarting it in {} s",
                    p.name,
                    delay[i].as_secs()
                );
                down.push(Down {
                    index: i,
                    restart_at: Some(Instant::now() + delay[i]),
                });
                delay[i] = (delay[i] * 2).min(MAX_RESTART_DELAY);
            }
        }
        let now = Instant::now();
        let mut still_down = Vec::new();
        for d in down.drain(..) {
            if d.restart_at.is_none_or(|at| at > now) {
                still_down.push(d);
                continue;
            }
            let p = &mut procs[d.index];
            match spawn(&p.name, &p.args, &args.passthrough, log_dir, 1) {
                Ok((proc, line)) => {
                    eprintln!(
                        "{} (pid {}) started again: {line}",
                        proc.name,
                        proc.child.id()
                    );
                    *p = proc;
                    started[d.index] = Instant::now();
                }
                Err(e) => {
                    eprintln!("{e:#}");
                    still_down.push(Down {
                        index: d.index,
                        restart_at: Some(now + delay[d.index]),
                    });
                    delay[d.index] = (delay[d.index] * 2).min(MAX_RESTART_DELAY);
                }
            }
        }
        down = still_down;
        std::thread::sleep(Duration::from_millis(100));
    }
}
