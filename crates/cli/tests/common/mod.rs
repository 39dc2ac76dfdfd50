//! Test kit: starts real `cairn` processes on loopback ports chosen at run
//! time, each with its own temporary directory, and stops them when the
//! test ends (also when it panics). Logs go to a file kept in the temp dir
//! and printed when a test fails.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `cairn namenode` process.
pub struct NameNode {
    child: Child,
    pub addr: SocketAddr,
    pub dir: tempfile::TempDir,
    log: PathBuf,
}

impl NameNode {
    /// Starts a NameNode on 127.0.0.1 with a free port and `-D` overrides.
    pub fn start(defines: &[&str]) -> NameNode {
        let dir = tempfile::tempdir().expect("temp dir");
        format_namenode(&dir.path().join("name"), defines);
        Self::start_in(dir, defines)
    }

    /// Starts a NameNode on an existing (formatted) directory `dir/name`.
    pub fn start_in(dir: tempfile::TempDir, defines: &[&str]) -> NameNode {
        let log = dir.path().join("namenode.log");
        let log_file = std::fs::File::create(&log).expect("log file");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        for d in defines {
            cmd.arg("-D").arg(d);
        }
        cmd.arg("namenode")
            .arg("--dir")
            .arg(dir.path().join("name"))
            .arg("--rpc-address")
            .arg("127.0.0.1:0")
            .env("CAIRN_LOG", "debug")
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file));
        let mut child = cmd.spawn().expect("spawn cairn namenode");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the listening line");
        let addr = line
            .trim()
            .rsplit("hdfs://")
            .next()
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| {
                let _ = child.kill();
                panic!(
                    "NameNode did not report its address: {line:?}\n{}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                )
            });
        NameNode {
            child,
            addr,
            dir,
            log,
        }
    }

    pub fn url(&self) -> String {
        format!("hdfs://{}", self.addr)
    }

    /// An hdfs-native client acting as `user` (`None`: the current user).
    pub fn client(&self, user: Option<&str>) -> hdfs_native::Client {
        let mut b = hdfs_native::ClientBuilder::new().with_url(self.url());
        if let Some(u) = user {
            b = b.with_user(u);
        }
        b.build().expect("hdfs-native client")
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Resident memory of the process in KiB (Linux).
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }
}

/// Runs `cairn namenode --format` on `dir`.
pub fn format_namenode(dir: &std::path::Path, defines: &[&str]) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
    for d in defines {
        cmd.arg("-D").arg(d);
    }
    let out = cmd
        .arg("namenode")
        .arg("--dir")
        .arg(dir)
        .arg("--format")
        .output()
        .expect("run cairn namenode --format");
    assert!(
        out.status.success(),
        "format failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl NameNode {
    /// Stops the process (SIGKILL) and hands back its directory.
    pub fn kill(mut self) -> tempfile::TempDir {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let dir = std::mem::replace(&mut self.dir, tempfile::tempdir().expect("temp dir"));
        dir
    }
}

impl Drop for NameNode {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("---- namenode log ----\n{}", self.log());
        }
    }
}

/// The user running the tests: the NameNode's superuser.
pub fn current_user() -> String {
    std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| {
            let out = Command::new("id").arg("-un").output().expect("id -un");
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        })
}

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as u64
}

/// Polls `f` until it returns true or `timeout` passes.
pub fn wait_until(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < timeout {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}
