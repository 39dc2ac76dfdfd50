//! Test kit: starts real `cairn` processes on loopback ports chosen at run
//! time, each with its own temporary directory, and stops them when the
//! test ends (also when it panics). Logs go to a file kept in the temp dir
//! and printed when a test fails.

#![allow(dead_code)]

pub mod datanode;
pub mod ha;
pub mod ha_load;
pub mod netns;
pub mod python;
pub mod transcript;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub use datanode::DataNode;

/// One HTTP/1.1 exchange with `addr` (no keep-alive): the status code, the
/// response headers (names lower-cased) and the body.
pub fn http_request(
    addr: SocketAddr,
    method: &str,
    path_and_query: &str,
    body: &[u8],
) -> (u16, Vec<(String, String)>, Vec<u8>) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("connect http");
    s.set_read_timeout(Some(Duration::from_secs(120)))
        .expect("timeout");
    let head = format!(
        "{method} {path_and_query} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).expect("request head");
    s.write_all(body).expect("request body");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("response");
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("response head");
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let (status, headers) = parse_response_head(&head);
    let mut body = raw[split + 4..].to_vec();
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    if chunked {
        body = dechunk(&body);
    }
    (status, headers, body)
}

/// An HTTP response head (status line and headers, without the blank
/// line): the status and the headers, names lower-cased.
pub fn parse_response_head(head: &str) -> (u16, Vec<(String, String)>) {
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers)
}

/// Joins the chunks of a `Transfer-Encoding: chunked` body.
fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(eol) = raw.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = std::str::from_utf8(&raw[..eol])
            .ok()
            .and_then(|h| usize::from_str_radix(h.split(';').next().unwrap_or("").trim(), 16).ok())
            .unwrap_or(0);
        if size == 0 || raw.len() < eol + 2 + size {
            return out;
        }
        out.extend_from_slice(&raw[eol + 2..eol + 2 + size]);
        raw = &raw[(eol + 4 + size).min(raw.len())..];
    }
}

/// A running `cairn namenode` process.
pub struct NameNode {
    child: Child,
    pub addr: SocketAddr,
    /// The HTTP server (WebHDFS, web UI).
    pub http: SocketAddr,
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
        Self::start_at(dir, defines, "127.0.0.1:0")
    }

    /// Like [`NameNode::start_in`], on a given RPC address (a restart on the
    /// same port, so running DataNodes find it again). Until it is bound
    /// again, an outgoing connection elsewhere on the machine may hold the
    /// port as its local one for a moment: the start is retried for up to
    /// 30 s while the NameNode reports the address in use.
    pub fn start_at(dir: tempfile::TempDir, defines: &[&str], rpc_address: &str) -> NameNode {
        let log = dir.path().join("namenode.log");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let logged_before = std::fs::metadata(&log).map_or(0, |m| m.len());
            match Self::spawn(dir.path(), &log, defines, rpc_address) {
                Ok((child, addr, http)) => {
                    return NameNode {
                        child,
                        addr,
                        http,
                        dir,
                        log,
                    }
                }
                Err(why) => {
                    let text = std::fs::read(&log).unwrap_or_default();
                    let new =
                        String::from_utf8_lossy(&text[text.len().min(logged_before as usize)..])
                            .into_owned();
                    let in_use = new.contains("Address already in use");
                    if !(in_use && !rpc_address.ends_with(":0") && Instant::now() < deadline) {
                        panic!("{why}\n{new}");
                    }
                    eprintln!("NameNode on {rpc_address}: address in use; trying again");
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        }
    }

    /// Starts the process; its RPC and HTTP addresses, or why not.
    fn spawn(
        dir: &std::path::Path,
        log: &std::path::Path,
        defines: &[&str],
        rpc_address: &str,
    ) -> Result<(Child, SocketAddr, SocketAddr), String> {
        let log_file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .expect("log file");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        // As MiniDFSCluster: no safe-mode extension once blocks are
        // reported (a test's own -D comes later and wins).
        cmd.arg("-D").arg("dfs.namenode.safemode.extension=0");
        for d in defines {
            cmd.arg("-D").arg(d);
        }
        cmd.arg("namenode")
            .arg("--dir")
            .arg(dir.join("name"))
            .arg("--rpc-address")
            .arg(rpc_address)
            // A free HTTP port even when restarting on a fixed RPC port
            // (the default would be 9870, shared by tests running at once).
            .arg("--http-address")
            .arg("127.0.0.1:0")
            .env("CAIRN_LOG", "debug")
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file));
        let mut child = cmd.spawn().expect("spawn cairn namenode");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        let mut http_line = String::new();
        let mut reader = BufReader::new(stdout);
        reader
            .read_line(&mut line)
            .expect("read the listening line");
        let _ = reader.read_line(&mut http_line);
        let http = http_line
            .trim()
            .rsplit("http://")
            .next()
            .and_then(|a| a.parse().ok());
        let addr = line
            .trim()
            .rsplit("hdfs://")
            .next()
            .and_then(|a| a.parse().ok());
        let Some(addr) = addr else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("NameNode did not report its address: {line:?}"));
        };
        let Some(http) = http else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "NameNode did not report its HTTP address: {http_line:?}"
            ));
        };
        Ok((child, addr, http))
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

    /// Waits up to `timeout` for the process to exit; its status if it did.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        wait_exit(&mut self.child, timeout)
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
        std::mem::replace(&mut self.dir, tempfile::tempdir().expect("temp dir"))
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

/// A NameNode with `n` DataNodes, all registered and reported.
pub struct Cluster {
    // DataNodes first: fields drop in order, and their logs (printed when
    // a test fails) live in the NameNode's temporary directory.
    pub dns: Vec<DataNode>,
    pub nn: NameNode,
}

impl Cluster {
    pub fn start(n: usize, defines: &[&str]) -> Cluster {
        let nn = NameNode::start(defines);
        let dns: Vec<DataNode> = (0..n)
            .map(|i| DataNode::start(nn.addr, &nn.dir.path().join(format!("dn{i}")), defines))
            .collect();
        let cluster = Cluster { nn, dns };
        cluster.wait_for_datanodes(n);
        cluster
    }

    /// Waits until `n` DataNodes are live at the NameNode.
    pub fn wait_for_datanodes(&self, n: usize) {
        self.nn.wait_for_datanodes(n);
    }
}

impl NameNode {
    /// Waits until `n` DataNodes are live here (registered again after a
    /// restart), then until safe mode is off.
    pub fn wait_for_datanodes(&self, n: usize) {
        let addr = self.addr;
        // Its own thread and runtime, so async tests can call it too.
        let ok = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                use cairn_proto::hadoop::hdfs as pb;
                let c = cairn_rpc::client::Client::connect(
                    addr,
                    &current_user(),
                    cairn_proto::protocols::CLIENT_PROTOCOL,
                )
                .await
                .expect("connect");
                for _ in 0..300 {
                    let r: pb::GetDatanodeReportResponseProto = c
                        .call(
                            "getDatanodeReport",
                            &pb::GetDatanodeReportRequestProto { r#type: 2 },
                        )
                        .await
                        .expect("report");
                    if r.di.len() >= n {
                        return true;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                false
            })
        })
        .join()
        .expect("wait thread");
        assert!(ok, "DataNodes did not register:\n{}", self.log());
        self.wait_safe_mode_off();
    }
}

impl NameNode {
    /// Waits (up to 60 s) until the NameNode is out of safe mode: after a
    /// restart, once the DataNodes have reported its blocks.
    pub fn wait_safe_mode_off(&self) {
        let addr = self.addr;
        let ok = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                use cairn_proto::hadoop::hdfs as pb;
                let c = cairn_rpc::client::Client::connect(
                    addr,
                    &current_user(),
                    cairn_proto::protocols::CLIENT_PROTOCOL,
                )
                .await
                .expect("connect");
                for _ in 0..1200 {
                    let r: pb::SetSafeModeResponseProto = c
                        .call(
                            "setSafeMode",
                            &pb::SetSafeModeRequestProto {
                                action: pb::SafeModeActionProto::SafemodeGet as i32,
                                checked: None,
                            },
                        )
                        .await
                        .expect("setSafeMode GET");
                    if !r.result {
                        return true;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                false
            })
        })
        .join()
        .expect("wait thread");
        assert!(ok, "the NameNode stayed in safe mode:\n{}", self.log());
    }
}

/// Deterministic file contents: a cheap pattern that differs per offset
/// and per file seed, so misplaced bytes are caught.
pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.truncate(len);
    out
}

/// Panics unless `got` equals `want`, the golden output `what` recorded
/// from Apache HDFS 3.4.1, naming the first differing line.
pub fn assert_matches_golden(got: &str, want: &str, what: &str) {
    if got == want {
        return;
    }
    let first = got
        .lines()
        .zip(want.lines())
        .enumerate()
        .find(|(_, (g, w))| g != w)
        .map(|(i, (g, w))| format!("line {}: got {g:?}, HDFS printed {w:?}", i + 1))
        .unwrap_or_else(|| {
            format!(
                "lengths differ: {} vs {} lines",
                got.lines().count(),
                want.lines().count()
            )
        });
    panic!("{what} differs from Apache HDFS's: {first}\n--- got ---\n{got}");
}

/// allowSnapshot on `dir` through raw ClientProtocol (the superuser's call).
pub async fn allow_snapshot(c: &cairn_rpc::client::Client, dir: &str) {
    use cairn_proto::hadoop::hdfs as pb;
    let _: pb::AllowSnapshotResponseProto = c
        .call(
            "allowSnapshot",
            &pb::AllowSnapshotRequestProto {
                snapshot_root: dir.into(),
            },
        )
        .await
        .expect("allowSnapshot");
}

/// getBlockLocations of a whole file, through raw ClientProtocol (what the
/// NameNode hands readers: blocks, lengths, live locations).
pub async fn block_locations(
    nn: SocketAddr,
    path: &str,
) -> cairn_proto::hadoop::hdfs::LocatedBlocksProto {
    use cairn_proto::hadoop::hdfs as pb;
    let c = cairn_rpc::client::Client::connect(
        nn,
        &current_user(),
        cairn_proto::protocols::CLIENT_PROTOCOL,
    )
    .await
    .expect("connect");
    let r: pb::GetBlockLocationsResponseProto = c
        .call(
            "getBlockLocations",
            &pb::GetBlockLocationsRequestProto {
                src: path.into(),
                offset: 0,
                length: u64::MAX >> 1,
            },
        )
        .await
        .expect("getBlockLocations");
    r.locations.expect("a file")
}

/// Every file under `dir`, at any depth.
pub fn files_under(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// Starts the Java kit's PausedWrite (`tests/java`): it writes half of
/// `size` bytes to `path`, hflushes and waits on stdin; returns once it
/// printed PAUSED, with its stdout for what follows. `stderr` decides
/// where the JVM's own messages go.
pub fn paused_java_writer(
    url: &str,
    path: &str,
    size: u64,
    stderr: Stdio,
) -> (Child, BufReader<std::process::ChildStdout>) {
    let kit = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/java/run.sh");
    let mut child = Command::new(kit)
        .args(["--main", "PausedWrite", "--fs", url, "--path", path])
        .args(["--size", &size.to_string(), "--replication", "3"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("run the Java kit (needs java and mvn)");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("read");
    assert_eq!(line.trim(), "PAUSED", "unexpected: {line}");
    (child, out)
}

/// Finalized replicas (data files `blk_<id>`) under a DataNode's directory.
pub fn finalized_replicas(dir: &std::path::Path) -> usize {
    fn walk(d: &std::path::Path, in_finalized: bool) -> usize {
        let Ok(entries) = std::fs::read_dir(d) else {
            return 0;
        };
        let mut n = 0;
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                n += walk(&path, in_finalized || name == "finalized");
            } else if in_finalized
                && name
                    .strip_prefix("blk_")
                    .is_some_and(|id| id.bytes().all(|b| b.is_ascii_digit()))
            {
                n += 1;
            }
        }
        n
    }
    walk(dir, false)
}

/// Waits up to `timeout` for `child` to exit; its status if it did.
pub fn wait_exit(child: &mut Child, timeout: Duration) -> Option<std::process::ExitStatus> {
    let start = std::time::Instant::now();
    while start.elapsed() < timeout {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// A private copy of the anchor harness, built (the Hadoop jars come from
/// Maven Central the first time).
pub fn anchor_harness(work: &std::path::Path) -> Option<PathBuf> {
    let src =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/anchors/hdfs-harness");
    if !src.join("harness").exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "no anchor harness at {} and CI is set: this test must run there",
            src.display()
        );
        eprintln!("SKIPPED: no anchor harness at {}", src.display());
        return None;
    }
    let dst = work.join("harness");
    let ok = std::process::Command::new("cp")
        .arg("-r")
        .arg(&src)
        .arg(&dst)
        .status()
        .expect("cp")
        .success();
    assert!(ok, "copying the harness");
    let _ = std::fs::remove_dir_all(dst.join("target"));
    let _ = std::fs::remove_dir_all(dst.join("data"));
    let mut build = std::process::Command::new(dst.join("harness"));
    build.arg("build");
    let out = output_within(&mut build, Duration::from_secs(900), "harness build");
    assert!(
        out.status.success(),
        "harness build failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(dst)
}

/// Runs an outside client (the anchor harness, Maven, a setup script) to
/// completion like `Command::output`, but gives up after `limit`: the whole
/// process group (a script and the JVM it started) is killed and the test
/// fails with what the client printed so far, instead of hanging the suite.
pub fn output_within(cmd: &mut Command, limit: Duration, what: &str) -> std::process::Output {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    let mut child = cmd
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("stdout")));
    let err = drain(Box::new(child.stderr.take().expect("stderr")));
    let status = wait_exit(&mut child, limit);
    if status.is_none() {
        if let Ok(pid) = i32::try_from(child.id()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = child.wait();
    }
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    let Some(status) = status else {
        panic!(
            "{what}: still running after {limit:?}; killed\n{}\n{}",
            String::from_utf8_lossy(&stdout),
            String::from_utf8_lossy(&stderr)
        );
    };
    std::process::Output {
        status,
        stdout,
        stderr,
    }
}

/// The Java kit's `DfsAdmin` (FsShell and DFSAdmin commands in one JVM)
/// running `script`, written into `work`, on file system `fs` with `conf`
/// as `-D` keys; its raw transcript.
pub fn run_java_script(fs: &str, conf: &[(String, String)], work: &Path, script: &str) -> String {
    let file = work.join("java-script.txt");
    std::fs::write(&file, script).expect("write script");
    let mut args = vec![
        "--main".to_string(),
        "DfsAdmin".into(),
        "--fs".into(),
        fs.into(),
        "--script".into(),
        file.to_string_lossy().into_owned(),
        "--raw".into(),
    ];
    for (k, v) in conf {
        args.push("-D".into());
        args.push(format!("{k}={v}"));
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    run_java_kit(&refs)
}

/// Runs the Java kit (`tests/java/run.sh ARGS`, 15 minutes at most) and
/// returns its standard output, after checking it succeeded.
pub fn run_java_kit(args: &[&str]) -> String {
    let kit = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/java");
    let out = output_within(
        Command::new(kit.join("run.sh")).args(args),
        Duration::from_secs(900),
        "run tests/java/run.sh (needs java and mvn)",
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "the Java kit failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}
