//! `cairn up --ha`: a nameservice of three NameNodes (`nn1`, `nn2`,
//! `nn3`, one Raft group: the leader is the active) and N DataNodes that
//! serve all three, as child processes on loopback.
//!
//! The addresses are chosen once, written as a Hadoop client
//! configuration (`core-site.xml` with `fs.defaultFS = hdfs://<ns>`,
//! `hdfs-site.xml` with the nameservice and HDFS's
//! `ConfiguredFailoverProxyProvider`) into `<dir>/conf`, and read back from
//! there when the cluster is started again: the Raft group remembers its
//! members by address. Every child reads that folder, so the NameNodes,
//! the DataNodes and any client given `--conf <dir>/conf` (or
//! `HADOOP_CONF_DIR`) agree on the nameservice.
//!
//! A NameNode that exits does not stop the cluster: the other two elect
//! an active and serve, and `cairn up` starts it again (a NameNode that
//! lost its term with edits never committed stops on purpose and rejoins
//! as a follower).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context};
use cairn_common::config::Configuration;
use cairn_common::keys;

use super::procs::{self, stop_all, supervise, Proc, Spec};
use super::{datanode_spec, format_namenode, namenode_passthrough, url_in, UpArgs};

/// The NameNode ids of the nameservice.
const MEMBERS: [&str; 3] = ["nn1", "nn2", "nn3"];
/// Prefix of the key naming a member's Raft address:
/// `cairn.namenode.raft-address.<ns>.<nn>`.
const RAFT_ADDRESS_PREFIX: &str = "cairn.namenode.raft-address";
/// Which member of the nameservice a NameNode is (HDFS's key).
const NAMENODE_ID: &str = "dfs.ha.namenode.id";
/// The failover proxy provider HDFS clients use for the nameservice.
const FAILOVER_PROVIDER: &str =
    "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider";

/// One NameNode's addresses.
struct Member {
    id: String,
    rpc: String,
    http: String,
    raft: String,
}

/// A free port on `host`, held until the returned listener is dropped so
/// that the next call picks another one. Taken below the kernel's range
/// of ephemeral ports where it can: a NameNode restarted on its port must
/// find it free, and a port from that range can meanwhile be the local
/// end of any outgoing connection (the kernel hands them out), which keeps
/// the NameNode from coming back for as long as that connection lives.
fn free_port(host: &str) -> anyhow::Result<(u16, TcpListener)> {
    /// Ports below this are left to well-known services.
    const LOWEST: u16 = 10_000;
    if let Some(first_ephemeral) = first_ephemeral_port().filter(|p| *p > LOWEST + 1_000) {
        let span = u64::from(first_ephemeral - LOWEST);
        for _ in 0..200 {
            let pick = std::hash::BuildHasher::hash_one(
                &std::collections::hash_map::RandomState::new(),
                std::time::Instant::now(),
            );
            let port = LOWEST + u16::try_from(pick % span).unwrap_or(0);
            if let Ok(l) = TcpListener::bind((host, port)) {
                return Ok((port, l));
            }
        }
    }
    let l =
        TcpListener::bind((host, 0)).with_context(|| format!("finding a free port on {host}"))?;
    Ok((l.local_addr()?.port(), l))
}

/// The first port of the kernel's ephemeral range (Linux), if readable.
fn first_ephemeral_port() -> Option<u16> {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    range.split_whitespace().next()?.parse().ok()
}

/// The members' addresses for a new cluster: RPC on the port of
/// `--rpc-address` and the next two, or on free ports when it is 0;
/// Raft and HTTP on free ports.
fn new_members(rpc_address: &str) -> anyhow::Result<Vec<Member>> {
    let (host, port) = rpc_address
        .rsplit_once(':')
        .with_context(|| format!("--rpc-address {rpc_address}: expected HOST:PORT"))?;
    let port: u16 = port
        .parse()
        .with_context(|| format!("--rpc-address {rpc_address}: bad port"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addr = |p: u16| {
        if host.contains(':') {
            format!("[{host}]:{p}")
        } else {
            format!("{host}:{p}")
        }
    };
    let mut held = Vec::new();
    let mut members = Vec::new();
    for (i, id) in MEMBERS.iter().enumerate() {
        let rpc = if port == 0 {
            let (p, l) = free_port(host)?;
            held.push(l);
            p
        } else {
            port.checked_add(i as u16)
                .context("--rpc-address: port too high for three NameNodes")?
        };
        let (http, l) = free_port(host)?;
        held.push(l);
        let (raft, l) = free_port(host)?;
        held.push(l);
        members.push(Member {
            id: id.to_string(),
            rpc: addr(rpc),
            http: addr(http),
            raft: addr(raft),
        });
    }
    Ok(members)
}

/// The members as an existing `<dir>/conf` names them.
fn members_from(conf_dir: &Path, ns: &str) -> anyhow::Result<Vec<Member>> {
    let conf = Configuration::load(Some(conf_dir))
        .with_context(|| format!("reading {}", conf_dir.display()))?;
    let get = |key: String| -> anyhow::Result<String> {
        conf.get_str(&key)?
            .filter(|v| !v.trim().is_empty())
            .map(|v| v.trim().to_string())
            .with_context(|| format!("{} has no {key}", conf_dir.display()))
    };
    let ids = conf.get_strings(&format!("dfs.ha.namenodes.{ns}"))?;
    if ids.is_empty() {
        bail!(
            "{} names no NameNodes for nameservice {ns} (was the cluster started with \
             another --nameservice?)",
            conf_dir.display()
        );
    }
    ids.into_iter()
        .map(|id| {
            Ok(Member {
                rpc: get(format!("{}.{ns}.{id}", keys::DFS_NAMENODE_RPC_ADDRESS))?,
                http: get(format!("{}.{ns}.{id}", keys::DFS_NAMENODE_HTTP_ADDRESS))?,
                raft: get(format!("{RAFT_ADDRESS_PREFIX}.{ns}.{id}"))?,
                id,
            })
        })
        .collect()
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A Hadoop `<configuration>` file of `properties`.
fn site_xml(properties: &[(String, String)]) -> String {
    let mut x = String::from(
        "<?xml version=\"1.0\"?>\n<!-- Written by cairn up (HA); it reads this file back when started again. -->\n<configuration>\n",
    );
    for (k, v) in properties {
        x.push_str(&format!(
            "  <property><name>{}</name><value>{}</value></property>\n",
            xml_escape(k),
            xml_escape(v)
        ));
    }
    x.push_str("</configuration>\n");
    x
}

/// Writes `core-site.xml` and `hdfs-site.xml` for nameservice `ns` into
/// `conf_dir`, each through a temporary file and a rename.
fn write_conf(conf_dir: &Path, ns: &str, members: &[Member]) -> anyhow::Result<()> {
    std::fs::create_dir_all(conf_dir)
        .with_context(|| format!("creating {}", conf_dir.display()))?;
    let core = vec![("fs.defaultFS".to_string(), format!("hdfs://{ns}"))];
    let ids: Vec<&str> = members.iter().map(|m| m.id.as_str()).collect();
    let mut hdfs = vec![
        ("dfs.nameservices".to_string(), ns.to_string()),
        (format!("dfs.ha.namenodes.{ns}"), ids.join(",")),
        (
            format!("dfs.client.failover.proxy.provider.{ns}"),
            FAILOVER_PROVIDER.to_string(),
        ),
        // `hdfs haadmin -failover` insists on a fencer. Raft's terms fence
        // a deposed active (nothing it does commits), so none is needed.
        (
            "dfs.ha.fencing.methods".to_string(),
            "shell(/bin/true)".to_string(),
        ),
    ];
    for m in members {
        hdfs.push((
            format!("{}.{ns}.{}", keys::DFS_NAMENODE_RPC_ADDRESS, m.id),
            m.rpc.clone(),
        ));
        hdfs.push((
            format!("{}.{ns}.{}", keys::DFS_NAMENODE_HTTP_ADDRESS, m.id),
            m.http.clone(),
        ));
        hdfs.push((
            format!("{RAFT_ADDRESS_PREFIX}.{ns}.{}", m.id),
            m.raft.clone(),
        ));
    }
    for (name, props) in [("core-site.xml", core), ("hdfs-site.xml", hdfs)] {
        let path = conf_dir.join(name);
        let tmp = conf_dir.join(format!(".{name}.tmp"));
        std::fs::write(&tmp, site_xml(&props))
            .with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Copies the files of directory `from` into `to` (created), recursively.
fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Formats a new nameservice: the first member is formatted, and the
/// others start from a copy of its directory (as HDFS's
/// `-bootstrapStandby`), so all share one cluster and block pool id.
fn format_members(
    passthrough: &[String],
    name_dirs: &[PathBuf],
    members: &[Member],
) -> anyhow::Result<()> {
    let present = name_dirs
        .iter()
        .filter(|d| d.join("VERSION").exists())
        .count();
    if present == name_dirs.len() {
        return Ok(());
    }
    if present > 0 {
        bail!(
            "only {present} of the {} NameNode directories exist ({}); a member's directory \
             cannot be made again from the others here",
            name_dirs.len(),
            name_dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut first = passthrough.to_vec();
    first.extend(["-D".into(), format!("{NAMENODE_ID}={}", members[0].id)]);
    format_namenode(
        &first,
        &["--dir".into(), name_dirs[0].display().to_string()],
    )?;
    for d in &name_dirs[1..] {
        copy_dir(&name_dirs[0], d)?;
    }
    Ok(())
}

/// Runs the nameservice until a signal arrives.
pub fn run(args: UpArgs) -> anyhow::Result<()> {
    if args.passthrough.iter().any(|a| a == "--conf") {
        bail!(
            "--ha writes its own configuration into {}/conf; add keys with -D",
            args.dir.display()
        );
    }
    let ns = args.nameservice.clone();
    let conf_dir = args.dir.join("conf");
    let log_dir = args.dir.join("logs");
    std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let members = if conf_dir.join("hdfs-site.xml").exists() {
        members_from(&conf_dir, &ns)?
    } else {
        let m = new_members(&args.rpc_address)?;
        write_conf(&conf_dir, &ns, &m)?;
        m
    };
    let mut shared = vec!["--conf".to_string(), conf_dir.display().to_string()];
    shared.extend(args.passthrough.iter().cloned());
    let name_dirs: Vec<PathBuf> = members.iter().map(|m| args.dir.join(&m.id)).collect();
    let mut procs: Vec<Proc> = Vec::new();
    let result = (|| -> anyhow::Result<()> {
        format_members(&shared, &name_dirs, &members)?;
        // All three at once: a member may wait for the others (an election)
        // before it serves.
        let mut starting = Vec::new();
        for (m, dir) in members.iter().zip(&name_dirs) {
            let mut passthrough = namenode_passthrough(&log_dir, &shared);
            passthrough.extend(["-D".into(), format!("{NAMENODE_ID}={}", m.id)]);
            let spec = Spec {
                name: format!("namenode-{}", m.id),
                passthrough,
                args: vec![
                    "namenode".into(),
                    "--dir".into(),
                    dir.display().to_string(),
                    "--rpc-address".into(),
                    m.rpc.clone(),
                    "--http-address".into(),
                    m.http.clone(),
                ],
                lines: 2,
                // Never 0 (which would leave it down): the nameservice
                // needs its members back.
                restart: Some(Duration::from_secs(args.namenode_restart_delay.max(1))),
                // Always after the base delay, as systemd's Restart=always:
                // the nameservice needs its members back, and a member
                // killed soon after a restart is not crash-looping.
                stable_after: Duration::ZERO,
            };
            starting.push(procs::start(&spec, &log_dir)?);
        }
        for s in starting {
            let (nn, lines) = s.ready()?;
            let url = url_in(&lines, "hdfs://").unwrap_or_default();
            println!("{} (pid {}): {url}", nn.spec.name, nn.child.id());
            procs.push(nn);
        }
        for i in 1..=args.datanodes {
            let spec = datanode_spec(&args, i, &shared, None);
            let (dn, line) = procs::spawn(&spec, &log_dir)?;
            println!("{} (pid {}): {line}", spec.name, dn.child.id());
            procs.push(dn);
        }
        println!(
            "Cairn is up: hdfs://{ns}  (3 NameNodes, {} DataNode(s), data in {}, logs in {})",
            args.datanodes,
            args.dir.display(),
            log_dir.display()
        );
        println!(
            "Client configuration: {}  (export HADOOP_CONF_DIR={})",
            conf_dir.display(),
            conf_dir.display()
        );
        println!(
            "Try: cairn --conf {} dfs -ls hdfs://{ns}/    (Ctrl-C stops the cluster)",
            conf_dir.display()
        );
        supervise(&mut procs, &log_dir)
    })();
    stop_all(&mut procs);
    println!("Cairn stopped.");
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_come_from_below_the_ephemeral_range() {
        let Some(first) = first_ephemeral_port().filter(|p| *p > 11_000) else {
            return; // no such range to stay out of here
        };
        let held: Vec<_> = (0..20)
            .map(|_| free_port("127.0.0.1").expect("a free port"))
            .collect();
        for (port, _) in &held {
            assert!((10_000..first).contains(port), "port {port}");
        }
    }

    #[test]
    fn the_written_configuration_reads_back_as_a_nameservice() {
        let dir = tempfile::tempdir().expect("tempdir");
        let members = new_members("127.0.0.1:0").expect("ports");
        let ports: std::collections::HashSet<&str> = members
            .iter()
            .flat_map(|m| [m.rpc.as_str(), m.http.as_str(), m.raft.as_str()])
            .collect();
        assert_eq!(ports.len(), 9, "nine distinct addresses");
        write_conf(dir.path(), "ns1", &members).expect("write");
        let conf = Configuration::load(Some(dir.path())).expect("load");
        let nns = conf.ha_namenodes("ns1").expect("nameservice");
        assert_eq!(nns.len(), 3);
        assert_eq!(nns[2].id, "nn3");
        assert_eq!(nns[2].rpc_address.to_string(), members[2].rpc);
        assert!(conf.is_ha_enabled().expect("ha"));
        let back = members_from(dir.path(), "ns1").expect("read back");
        assert_eq!(back[1].raft, members[1].raft);
        assert_eq!(back[0].http, members[0].http);
        assert!(members_from(dir.path(), "other").is_err());
    }

    #[test]
    fn fixed_rpc_ports_count_up_from_the_given_one() {
        let members = new_members("127.0.0.1:18020").expect("ports");
        let rpc: Vec<&str> = members.iter().map(|m| m.rpc.as_str()).collect();
        assert_eq!(
            rpc,
            ["127.0.0.1:18020", "127.0.0.1:18021", "127.0.0.1:18022"]
        );
        assert!(new_members("127.0.0.1:65535").is_err());
        assert!(new_members("no-port").is_err());
    }
}
