//! The child processes of `cairn up`: starting one and waiting for the
//! lines it announces itself with, stopping them all, and the supervisor
//! loop that starts again the ones that may exit without taking the
//! cluster down.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// How long children get to stop after SIGTERM before SIGKILL.
const STOP_DEADLINE: Duration = Duration::from_secs(15);
/// How long a child gets to report that it is ready.
const START_DEADLINE: Duration = Duration::from_secs(60);
/// The longest wait before starting a process that keeps exiting.
const MAX_RESTART_DELAY: Duration = Duration::from_secs(600);

/// How to start one child, kept to start it again.
#[derive(Clone)]
pub struct Spec {
    /// Its name in messages and its log file (`<name>.log`).
    pub name: String,
    /// `--conf`/`-D` arguments, before the subcommand.
    pub passthrough: Vec<String>,
    /// The subcommand and its arguments.
    pub args: Vec<String>,
    /// How many lines it prints on stdout once it serves.
    pub lines: usize,
    /// What its exit means: `None` stops the cluster; `Some(d)` starts it
    /// again after `d` (doubling while it keeps exiting); `Some(ZERO)`
    /// leaves it down.
    pub restart: Option<Duration>,
    /// A process that ran this long after a restart has recovered: its
    /// next exit waits the base delay again, not a doubled one.
    pub stable_after: Duration,
}

pub struct Proc {
    pub spec: Spec,
    pub child: Child,
}

/// A child started but not yet known to serve.
pub struct Starting {
    proc: Proc,
    log_path: PathBuf,
    first_lines: Receiver<String>,
}

static EXE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// The cairn binary the children run: where this process was started
/// from, looked up once at start (Linux names a replaced binary
/// "... (deleted)" later on; a binary upgraded in place is what restarts
/// run).
pub fn cairn_exe() -> anyhow::Result<PathBuf> {
    if let Some(p) = EXE.get() {
        return Ok(p.clone());
    }
    let p = std::env::current_exe().context("locating the cairn binary")?;
    Ok(EXE.get_or_init(|| p).clone())
}

/// Starts `spec` with its stderr appended to `<log_dir>/<name>.log`.
pub fn start(spec: &Spec, log_dir: &Path) -> anyhow::Result<Starting> {
    let exe = cairn_exe()?;
    let log_path = log_dir.join(format!("{}.log", spec.name));
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .with_context(|| format!("opening {}", log_path.display()))?;
    let mut child = Command::new(exe)
        .args(&spec.passthrough)
        .args(&spec.args)
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .spawn()
        .with_context(|| format!("starting {}", spec.name))?;
    let stdout = child.stdout.take().context("child stdout")?;
    // The child announces itself with `lines` lines on stdout.
    let (tx, rx) = std::sync::mpsc::channel();
    let lines = spec.lines;
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
    Ok(Starting {
        proc: Proc {
            spec: spec.clone(),
            child,
        },
        log_path,
        first_lines: rx,
    })
}

impl Starting {
    /// Waits until the child has announced itself; returns it with its
    /// announcement, or kills it and fails with the tail of its log.
    pub fn ready(self) -> anyhow::Result<(Proc, String)> {
        let line = self
            .first_lines
            .recv_timeout(START_DEADLINE)
            .unwrap_or_default();
        let mut proc = self.proc;
        if line.trim().is_empty() {
            let _ = proc.child.kill();
            let _ = proc.child.wait();
            let tail = std::fs::read_to_string(&self.log_path).unwrap_or_default();
            let tail: Vec<&str> = tail.lines().rev().take(20).collect();
            bail!(
                "{} did not start (log {}):\n{}",
                proc.spec.name,
                self.log_path.display(),
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        Ok((proc, line.trim().to_string()))
    }
}

/// Starts `spec` and waits until it serves.
pub fn spawn(spec: &Spec, log_dir: &Path) -> anyhow::Result<(Proc, String)> {
    start(spec, log_dir)?.ready()
}

/// SIGTERM to every child, last started first; SIGKILL to those still
/// running after [`STOP_DEADLINE`].
pub fn stop_all(procs: &mut [Proc]) {
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
                    eprintln!("{} did not stop in time; killing it", p.spec.name);
                    let _ = p.child.kill();
                    let _ = p.child.wait();
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
}

/// A child that exited, waiting to be started again.
struct Down {
    index: usize,
    /// When to start it again; `None`: never.
    restart_at: Option<Instant>,
}

/// Runs until Ctrl-C/SIGTERM (Ok) or the exit of a child whose spec says
/// the cluster stops with it (Err); other children that exit are reported
/// and started again after their delay.
pub fn supervise(procs: &mut [Proc], log_dir: &Path) -> anyhow::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let term = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    signal_hook::flag::register(SIGTERM, term.clone())?;
    signal_hook::flag::register(SIGINT, term.clone())?;
    let base = |p: &Proc| p.spec.restart.unwrap_or_default();
    // Per child: when it was last started, and the delay its next restart
    // waits.
    let mut started: Vec<Instant> = vec![Instant::now(); procs.len()];
    let mut delay: Vec<Duration> = procs.iter().map(base).collect();
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
            let Some(first_delay) = p.spec.restart else {
                bail!(
                    "{} exited unexpectedly ({status}); stopping the cluster",
                    p.spec.name
                );
            };
            if started[i].elapsed() >= p.spec.stable_after {
                delay[i] = first_delay;
            }
            if first_delay.is_zero() {
                eprintln!(
                    "{} exited ({status}); the cluster keeps serving without it \
                     (restart delay 0: not restarted)",
                    p.spec.name
                );
                down.push(Down {
                    index: i,
                    restart_at: None,
                });
            } else {
                eprintln!(
                    "{} exited ({status}); the cluster keeps serving without it; \
                     restarting it in {} s",
                    p.spec.name,
                    delay[i].as_secs_f64()
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
            match spawn(&p.spec, log_dir) {
                Ok((proc, line)) => {
                    eprintln!(
                        "{} (pid {}) started again: {line}",
                        proc.spec.name,
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
