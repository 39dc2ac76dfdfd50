//! A `cairn datanode` process of the test kit.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::wait_exit;

/// A running `cairn datanode` process.
pub struct DataNode {
    child: Child,
    pub uuid: String,
    pub xfer: SocketAddr,
    pub http: SocketAddr,
    pub dir: PathBuf,
    log: PathBuf,
}

impl DataNode {
    /// Starts a DataNode with storage in `dir` reporting to `nn`.
    pub fn start(nn: SocketAddr, dir: &std::path::Path, defines: &[&str]) -> DataNode {
        Self::spawn(Some(nn), dir, defines)
    }

    /// Starts a DataNode without `--namenode`: it serves the NameNodes its
    /// configuration (`defines`) names, e.g. every one of a nameservice.
    pub fn start_configured(dir: &std::path::Path, defines: &[&str]) -> DataNode {
        Self::spawn(None, dir, defines)
    }

    fn spawn(nn: Option<SocketAddr>, dir: &std::path::Path, defines: &[&str]) -> DataNode {
        std::fs::create_dir_all(dir).expect("datanode dir");
        let log = dir.with_extension("log");
        let log_file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .expect("log file");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        for d in defines {
            cmd.arg("-D").arg(d);
        }
        cmd.arg("datanode").arg("--dir").arg(dir);
        if let Some(nn) = nn {
            cmd.arg("--namenode").arg(nn.to_string());
        }
        cmd.env("CAIRN_LOG", "debug")
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file));
        let mut child = cmd.spawn().expect("spawn cairn datanode");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read ready line");
        // "DataNode <uuid> xfer <addr> ipc <addr> http <addr>"
        let words: Vec<&str> = line.split_whitespace().collect();
        let field = |name: &str| {
            words
                .iter()
                .position(|w| *w == name)
                .and_then(|i| words.get(i + 1))
                .and_then(|a| a.parse().ok())
        };
        let (Some(xfer), Some(http)) = (field("xfer"), field("http")) else {
            let _ = child.kill();
            panic!(
                "DataNode did not report its addresses: {line:?}\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        };
        DataNode {
            child,
            uuid: words.get(1).map(|s| s.to_string()).unwrap_or_default(),
            xfer,
            http,
            dir: dir.to_path_buf(),
            log,
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends a signal (SIGSTOP freezes the node: a partition without a kill).
    pub fn signal(&self, sig: nix::sys::signal::Signal) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, sig).expect("signal");
    }

    /// SIGKILL.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits up to `timeout` for the process to exit; its status if it did.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        wait_exit(&mut self.child, timeout)
    }

    /// The DataNode's `/metrics` JSON.
    pub fn metrics(&self) -> String {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(self.http).expect("connect metrics");
        s.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
            .expect("request");
        let mut body = String::new();
        s.read_to_string(&mut body).expect("response");
        body.split("\r\n\r\n")
            .nth(1)
            .unwrap_or_default()
            .to_string()
    }
}

impl Drop for DataNode {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("---- datanode {} log (tail) ----", self.uuid);
            let log = self.log();
            let lines: Vec<&str> = log.lines().collect();
            for l in &lines[lines.len().saturating_sub(60)..] {
                eprintln!("{l}");
            }
        }
    }
}
