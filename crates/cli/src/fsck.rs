//! `cairn fsck`: `hdfs fsck` (Hadoop's `DFSck`) for Cairn. It reads the
//! NameNode's `/fsck` report over HTTP, as `DFSck` does, prints it as it
//! arrives and exits as `hdfs fsck` does: 0 when the last line says
//! HEALTHY (or the path does not exist), 1 when it says CORRUPT, 255 (-1)
//! otherwise (FAILED, or `-list-corruptfileblocks` found some).
//!
//! The NameNode's HTTP address is `-http HOST:PORT` when given, else
//! `dfs.namenode.http-address` (a wildcard host means the host of
//! `fs.defaultFS` / `-fs`, as `DFSUtil.getInfoServer` resolves it), else
//! port 9870 on the NameNode's host.

use std::io::Write as _;

use cairn_common::config::Configuration;
use cairn_common::keys;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

const USAGE: &str = "Usage: cairn fsck [-fs hdfs://HOST:PORT] [-http HOST:PORT] <path> [-list-corruptfileblocks | [-move | -delete | -openforwrite] [-files [-blocks [-locations | -racks | -replicaDetails | -upgradedomains]]]] [-includeSnapshots] [-showprogress] [-storagepolicies] [-maintenance] [-blockId <blk_Id>]
\t<path>\tstart checking from this path
\t-move\tmove corrupted files to /lost+found
\t-delete\tdelete corrupted files
\t-files\tprint out files being checked
\t-openforwrite\tprint out files opened for write
\t-includeSnapshots\tinclude snapshot data if the given path indicates a snapshottable directory or there are snapshottable directories under it
\t-list-corruptfileblocks\tprint out list of missing blocks and files they belong to
\t-files -blocks\tprint out block report
\t-files -blocks -locations\tprint out locations for every block
\t-files -blocks -racks\tprint out network topology for data-node locations
\t-files -blocks -replicaDetails\tprint out each replica details
\t-storagepolicies\tprint out storage policy summary for the blocks
\t-maintenance\tprint out maintenance state node details
\t-blockId\tprint out which file this blockId belongs to, locations (nodes, racks) of this block, and other diagnostics info (under replicated, corrupted or not, etc)";

/// The query flag of each `hdfs fsck` option.
const FLAGS: &[(&str, &str)] = &[
    ("-move", "move"),
    ("-delete", "delete"),
    ("-files", "files"),
    ("-openforwrite", "openforwrite"),
    ("-blocks", "blocks"),
    ("-locations", "locations"),
    ("-racks", "racks"),
    ("-replicaDetails", "replicadetails"),
    ("-upgradedomains", "upgradedomains"),
    ("-storagepolicies", "storagepolicies"),
    ("-showprogress", "showprogress"),
    ("-list-corruptfileblocks", "listcorruptfileblocks"),
    ("-includeSnapshots", "includeSnapshots"),
    ("-maintenance", "maintenance"),
    ("-replicate", "replicate"),
];

/// The parsed command line.
#[derive(Debug, Default)]
struct Args {
    fs: Option<String>,
    http: Option<String>,
    path: Option<String>,
    query: String,
    list_corrupt: bool,
}

fn parse(args: Vec<String>) -> Result<Args, String> {
    let mut a = Args::default();
    let mut it = args.into_iter().peekable();
    while let Some(arg) = it.next() {
        if let Some((_, flag)) = FLAGS.iter().find(|(o, _)| *o == arg) {
            a.query.push_str(&format!("&{flag}=1"));
            a.list_corrupt |= arg == "-list-corruptfileblocks";
            continue;
        }
        match arg.as_str() {
            "-fs" => a.fs = Some(it.next().ok_or("fsck: -fs needs a URL")?),
            "-http" | "--http" => a.http = Some(it.next().ok_or("fsck: -http needs HOST:PORT")?),
            "-blockId" => {
                let mut ids = String::new();
                while let Some(id) = it.next_if(|n| !n.starts_with('-')) {
                    ids.push_str(&id);
                    ids.push(' ');
                }
                a.query.push_str(&format!("&blockId={}", encode(&ids)));
            }
            p if !p.starts_with('-') => {
                if a.path.is_some() {
                    return Err(format!(
                        "fsck: can only operate on one path at a time '{p}'"
                    ));
                }
                a.path = Some(p.to_string());
            }
            other => return Err(format!("fsck: Illegal option '{other}'")),
        }
    }
    Ok(a)
}

/// `URLEncoder.encode(s, "UTF-8")`.
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The NameNode's URL: `-fs`, else `fs.defaultFS`.
fn default_fs(conf: &Configuration, args: &Args) -> String {
    args.fs
        .clone()
        .or_else(|| conf.get("fs.defaultFS").map(str::to_string))
        .unwrap_or_else(|| "hdfs://127.0.0.1:8020".into())
}

/// `host:port` of the NameNode's HTTP server.
fn http_address(conf: &Configuration, args: &Args) -> String {
    if let Some(h) = &args.http {
        return h.clone();
    }
    let fs = default_fs(conf, args);
    let nn_host = fs
        .strip_prefix("hdfs://")
        .unwrap_or(&fs)
        .split(['/', ':'])
        .next()
        .filter(|h| !h.is_empty())
        .unwrap_or("127.0.0.1")
        .to_string();
    let configured = conf
        .get(keys::DFS_NAMENODE_HTTP_ADDRESS)
        .unwrap_or("0.0.0.0:9870");
    match configured.rsplit_once(':') {
        Some(("0.0.0.0" | "", port)) => format!("{nn_host}:{port}"),
        Some(_) => configured.to_string(),
        None => format!("{configured}:9870"),
    }
}

/// The path as `DFSck` sends it: absolute, without scheme and authority.
fn plain_path(p: &str) -> String {
    let rest = p
        .strip_prefix("hdfs://")
        .map(|r| r.find('/').map_or("/", |i| &r[i..]))
        .unwrap_or(p);
    if rest.starts_with('/') {
        rest.to_string()
    } else {
        format!("/{rest}")
    }
}

/// Runs `cairn fsck ARGS`; returns the exit code.
pub async fn run(conf: Configuration, args: Vec<String>) -> i32 {
    if args.is_empty() {
        eprintln!("{USAGE}");
        return 255;
    }
    let args = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            return 255;
        }
    };
    let dir = args.path.clone().unwrap_or_else(|| "/".into());
    let user = std::env::var("HADOOP_USER_NAME")
        .ok()
        .or_else(|| whoami::username().ok())
        .unwrap_or_else(|| "unknown".to_owned());
    // As DFSck resolves the path first: a missing one never reaches /fsck.
    let fs = default_fs(&conf, &args);
    let path = plain_path(&dir);
    match exists(&fs, &user, &path).await {
        Ok(true) => {}
        Ok(false) => {
            eprintln!(
                "FileSystem is inaccessible due to:\njava.io.FileNotFoundException: File does not exist: {path}\nDFSck exiting."
            );
            return 0;
        }
        Err(e) => {
            eprintln!("FileSystem is inaccessible due to:\n{e}\nDFSck exiting.");
            return 0;
        }
    }
    let addr = http_address(&conf, &args);
    let base = format!(
        "/fsck?ugi={}{}&path={}",
        encode(&user),
        args.query,
        encode(&path)
    );
    eprintln!("Connecting to namenode via http://{addr}{base}");
    if args.list_corrupt {
        return list_corrupt(&addr, &base, &dir).await;
    }
    let mut last = String::from("is CORRUPT");
    let mut stdout = std::io::stdout();
    let r = fetch_lines(&addr, &base, |line| {
        let _ = writeln!(stdout, "{line}");
        last = line.to_string();
        true
    })
    .await;
    if let Err(e) = r {
        eprintln!("fsck: {e}");
        return 255;
    }
    exit_code(&last)
}

/// Whether `path` exists, asked over RPC as `user`.
async fn exists(fs: &str, user: &str, path: &str) -> Result<bool, String> {
    use cairn_proto::hadoop::hdfs as pb;
    let authority = fs.strip_prefix("hdfs://").unwrap_or(fs);
    let authority = authority.split('/').next().unwrap_or(authority);
    let addr = tokio::net::lookup_host(authority)
        .await
        .map_err(|e| format!("java.net.UnknownHostException: {authority}: {e}"))?
        .next()
        .ok_or_else(|| format!("java.net.UnknownHostException: {authority}"))?;
    let client =
        cairn_rpc::client::Client::connect(addr, user, cairn_proto::protocols::CLIENT_PROTOCOL)
            .await
            .map_err(|e| format!("java.net.ConnectException: {e}"))?;
    let r: pb::GetFileInfoResponseProto = client
        .call(
            "getFileInfo",
            &pb::GetFileInfoRequestProto {
                src: path.to_string(),
            },
        )
        .await
        .map_err(|e| e.to_string())?;
    Ok(r.fs.is_some())
}

/// `DFSck`'s exit status from the report's last line.
fn exit_code(last: &str) -> i32 {
    if last.ends_with("is HEALTHY") || last.ends_with("does not exist") {
        0
    } else if last.ends_with("is CORRUPT") {
        1
    } else if last.contains("Incorrect blockId format:") || last.ends_with("is EXCESS") {
        0
    } else if last.ends_with("is DECOMMISSIONED") {
        2
    } else if last.ends_with("is DECOMMISSIONING") {
        3
    } else {
        255
    }
}

/// `-list-corruptfileblocks`: pages of corrupt blocks, cookie by cookie, as
/// `DFSck.listCorruptFileBlocks` reads and reprints them.
async fn list_corrupt(addr: &str, base: &str, dir: &str) -> i32 {
    let mut cookie = 0i64;
    let mut found = 0u64;
    let mut denied = false;
    loop {
        let url = if cookie > 0 {
            format!("{base}&startblockafter={cookie}")
        } else {
            base.to_string()
        };
        let mut done = false;
        let r = fetch_lines(addr, &url, |line| {
            if let Some(rest) = line.strip_prefix("Cookie:") {
                match rest.trim().parse::<i64>() {
                    Ok(c) => cookie = c,
                    Err(_) => done = true,
                }
                return !done;
            }
            if line.ends_with("has no CORRUPT files")
                || line.ends_with("has no more CORRUPT files")
                || line.ends_with("does not exist")
            {
                done = true;
                return false;
            }
            if line.starts_with("Access denied for user") {
                denied = true;
                return false;
            }
            if line.is_empty()
                || line.starts_with("FSCK started by")
                || line.starts_with("FSCK ended at")
                || line.starts_with("The filesystem under path")
            {
                return true;
            }
            found += 1;
            if found == 1 {
                println!("The list of corrupt blocks under path '{dir}' are:");
            }
            println!("{line}");
            true
        })
        .await;
        if let Err(e) = r {
            eprintln!("fsck: {e}");
            return 255;
        }
        if denied {
            println!("Failed to open path '{dir}': Permission denied");
            return 255;
        }
        if done {
            break;
        }
    }
    println!("The filesystem under path '{dir}' has {found} CORRUPT blocks");
    if found == 0 {
        0
    } else {
        255
    }
}

/// GETs `path_and_query` from `addr` and hands each line of the body to
/// `line` as it arrives (until it returns false).
async fn fetch_lines(
    addr: &str,
    path_and_query: &str,
    mut line: impl FnMut(&str) -> bool,
) -> Result<(), String> {
    let mut s = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("cannot connect to the NameNode's HTTP server {addr}: {e}"))?;
    let head =
        format!("GET {path_and_query} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(head.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut r = BufReader::new(s);
    let mut status = String::new();
    r.read_line(&mut status).await.map_err(|e| e.to_string())?;
    let mut chunked = false;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).await.map_err(|e| e.to_string())? == 0 || h.trim().is_empty() {
            break;
        }
        let h = h.to_ascii_lowercase();
        chunked |= h.starts_with("transfer-encoding:") && h.contains("chunked");
    }
    let code = status.split_whitespace().nth(1).unwrap_or("");
    if code != "200" {
        return Err(format!("server answered {}", status.trim()));
    }
    let mut pending = Vec::new();
    let mut emit = |bytes: &[u8], pending: &mut Vec<u8>| -> bool {
        pending.extend_from_slice(bytes);
        while let Some(i) = pending.iter().position(|b| *b == b'\n') {
            let l: Vec<u8> = pending.drain(..=i).collect();
            if !line(String::from_utf8_lossy(&l[..i]).trim_end_matches('\r')) {
                return false;
            }
        }
        true
    };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let data = if chunked {
            let mut size = String::new();
            r.read_line(&mut size).await.map_err(|e| e.to_string())?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16)
                .map_err(|_| format!("bad chunk size {size:?}"))?;
            if n == 0 {
                break;
            }
            let mut chunk = vec![0u8; n + 2];
            r.read_exact(&mut chunk).await.map_err(|e| e.to_string())?;
            chunk.truncate(n);
            chunk
        } else {
            let n = r.read(&mut buf).await.map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            buf[..n].to_vec()
        };
        if !emit(&data, &mut pending) {
            return Ok(());
        }
    }
    if !pending.is_empty() {
        line(String::from_utf8_lossy(&pending).trim_end_matches('\r'));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_become_the_servlet_query() {
        let a = parse(
            [
                "/x",
                "-files",
                "-blocks",
                "-replicaDetails",
                "-list-corruptfileblocks",
            ]
            .map(String::from)
            .to_vec(),
        )
        .expect("parse");
        assert_eq!(a.path.as_deref(), Some("/x"));
        assert_eq!(
            a.query,
            "&files=1&blocks=1&replicadetails=1&listcorruptfileblocks=1"
        );
        assert!(a.list_corrupt);
        assert!(parse(vec!["/a".into(), "/b".into()]).is_err());
        assert!(parse(vec!["-bogus".into()]).is_err());
        let b = parse(
            ["-blockId", "blk_1", "blk_2", "-files"]
                .map(String::from)
                .to_vec(),
        )
        .expect("parse");
        assert_eq!(b.query, "&blockId=blk_1+blk_2+&files=1");
    }

    #[test]
    fn exit_codes_follow_dfsck() {
        assert_eq!(exit_code("The filesystem under path '/' is HEALTHY"), 0);
        assert_eq!(exit_code("The filesystem under path '/' is CORRUPT"), 1);
        assert_eq!(exit_code("Path '/x' does not exist"), 0);
        assert_eq!(exit_code("Fsck on path '/' FAILED"), 255);
    }

    #[test]
    fn http_address_from_configuration() {
        let mut conf = Configuration::default();
        let args = Args {
            fs: Some("hdfs://nn.example:8020".into()),
            ..Default::default()
        };
        assert_eq!(http_address(&conf, &args), "nn.example:9870");
        conf.set(keys::DFS_NAMENODE_HTTP_ADDRESS, "0.0.0.0:50070");
        assert_eq!(http_address(&conf, &args), "nn.example:50070");
        conf.set(keys::DFS_NAMENODE_HTTP_ADDRESS, "10.0.0.1:9871");
        assert_eq!(http_address(&conf, &args), "10.0.0.1:9871");
        assert_eq!(plain_path("hdfs://nn:8020/a/b"), "/a/b");
        assert_eq!(plain_path("a"), "/a");
    }
}
