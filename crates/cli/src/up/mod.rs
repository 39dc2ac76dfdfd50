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
//!
//! With `--ha` it runs a nameservice of three NameNodes instead ([`ha`]).

mod ha;
mod procs;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context};

use procs::{spawn, stop_all, supervise, Proc, Spec};

pub struct UpArgs {
    pub dir: PathBuf,
    pub datanodes: usize,
    pub rpc_address: String,
    /// Seconds before a DataNode that exited is started again (0: never).
    pub datanode_restart_delay: u64,
    /// `--conf` and `-D` arguments to pass on to every child.
    pub passthrough: Vec<String>,
    /// Three NameNodes in one nameservice instead of one NameNode.
    pub ha: bool,
    /// The nameservice's name with `ha`.
    pub nameservice: String,
    /// With `ha`: seconds before a NameNode that exited is started again.
    pub namenode_restart_delay: u64,
}

/// The DataNode `i` (from 1) of a cluster in `dir`.
fn datanode_spec(args: &UpArgs, i: usize, passthrough: &[String], namenode: Option<&str>) -> Spec {
    let name = format!("datanode{i}");
    let mut dn_args: Vec<String> = vec![
        "datanode".into(),
        "--dir".into(),
        args.dir.join(&name).display().to_string(),
        "--data-address".into(),
        "127.0.0.1:0".into(),
    ];
    if let Some(nn) = namenode {
        dn_args.extend(["--namenode".into(), nn.to_string()]);
    }
    Spec {
        name,
        passthrough: passthrough.to_vec(),
        args: dn_args,
        lines: 1,
        restart: Some(Duration::from_secs(args.datanode_restart_delay)),
        stable_after: Duration::from_secs(120),
    }
}

/// The URL starting with `scheme` among the last words of `lines`.
fn url_in(lines: &str, scheme: &str) -> Option<String> {
    lines
        .lines()
        .filter_map(|l| l.rsplit(' ').next())
        .find(|u| u.starts_with(scheme))
        .map(str::to_string)
}

/// Flags for every NameNode of a local cluster: metaSave files go next
/// to the logs; start-up safe mode ends 5 s after its blocks are
/// reported, not HDFS's 30 s (a -D of the user's, later on the command
/// line, still wins).
fn namenode_passthrough(log_dir: &std::path::Path, user: &[String]) -> Vec<String> {
    let mut p = vec![
        "-D".to_string(),
        format!("hadoop.log.dir={}", log_dir.display()),
        "-D".to_string(),
        format!(
            "{}=5000",
            cairn_common::keys::DFS_NAMENODE_SAFEMODE_EXTENSION
        ),
    ];
    p.extend(user.iter().cloned());
    p
}

/// Runs `cairn namenode --format` with `extra` arguments, printing what
/// it says.
fn format_namenode(passthrough: &[String], extra: &[String]) -> anyhow::Result<()> {
    let out = Command::new(procs::cairn_exe()?)
        .args(passthrough)
        .args(["namenode", "--format"])
        .args(extra)
        .output()
        .context("formatting the NameNode")?;
    if !out.status.success() {
        bail!(
            "formatting failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    println!("{}", String::from_utf8_lossy(&out.stdout).trim());
    Ok(())
}

/// Runs the cluster until a signal arrives or a process dies.
///
/// # Errors
/// When a process cannot be started.
pub fn run(args: UpArgs) -> anyhow::Result<()> {
    procs::cairn_exe()?;
    if args.ha {
        return ha::run(args);
    }
    let name_dir = args.dir.join("name");
    let log_dir = args.dir.join("logs");
    std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let mut procs: Vec<Proc> = Vec::new();
    let result = (|| -> anyhow::Result<()> {
        if !name_dir.join("VERSION").exists() {
            format_namenode(
                &args.passthrough,
                &["--dir".into(), name_dir.display().to_string()],
            )?;
        }
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
        let nn_spec = Spec {
            name: "namenode".into(),
            passthrough: namenode_passthrough(&log_dir, &args.passthrough),
            args: nn_args,
            lines: 2,
            // The only NameNode: the cluster stops with it.
            restart: None,
            stable_after: Duration::ZERO,
        };
        let (nn, lines) = spawn(&nn_spec, &log_dir)?;
        procs.push(nn);
        let url = url_in(&lines, "hdfs://").context("NameNode did not print its URL")?;
        let web = url_in(&lines, "http://").context("NameNode did not print its HTTP URL")?;
        let nn_addr = url.trim_start_matches("hdfs://").to_string();
        for i in 1..=args.datanodes {
            let spec = datanode_spec(&args, i, &args.passthrough, Some(&nn_addr));
            let (dn, line) = spawn(&spec, &log_dir)?;
            println!("{} (pid {}): {line}", spec.name, dn.child.id());
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
        supervise(&mut procs, &log_dir)
    })();
    stop_all(&mut procs);
    println!("Cairn stopped.");
    result
}
