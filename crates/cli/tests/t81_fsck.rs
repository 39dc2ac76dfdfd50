//! `hdfs fsck` against Cairn: Hadoop 3.4.1's own `DFSck` (through the Java
//! kit's DfsAdmin program) reads the NameNode's `/fsck` on a cluster of two
//! DataNodes (dfs.replication=2) in four situations, each compared line for
//! line with the transcript recorded from Apache HDFS 3.4.1 in the same
//! situation (`tests/java/expected/fsck-*.txt`, by `regenerate-golden.sh
//! fsck`; dates, times, block, pool and storage ids and DataNode addresses
//! masked): healthy; after the only replica of a file was corrupted on disk
//! and read (then `-delete`); after one DataNode died (under-replicated);
//! after both died (missing blocks, `-move`). In each situation `cairn fsck`
//! prints what `DFSck` printed, with the same exit status. Between the
//! second and third, `-move` of a file with a corrupt block among good
//! ones copies the good blocks' bytes to `/lost+found` (checked against the
//! data written; no HDFS golden for it).
//!
//! Needs a JDK and Maven (the kit fetches the jars on first use).

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::{wait_until, Cluster};

const DEFINES: &[&str] = &[
    "dfs.replication=2",
    "dfs.heartbeat.interval=1",
    "dfs.namenode.heartbeat.recheck-interval=500",
    "dfs.namenode.redundancy.interval.seconds=1",
];

fn java_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/java")
}

/// Runs one phase's script through DfsAdmin; its transcript.
fn run_phase(cluster: &Cluster, phase: &str) -> String {
    let script = java_dir().join(format!("scripts/admin/fsck/{phase}.txt"));
    let script = script.to_string_lossy();
    let url = cluster.nn.url();
    let http = format!("dfs.namenode.http-address={}", cluster.nn.http);
    common::run_java_kit(&[
        "--main",
        "DfsAdmin",
        "--fs",
        &url,
        "--script",
        &script,
        "-D",
        &http,
        "-D",
        "dfs.replication=2",
    ])
}

fn golden(phase: &str) -> String {
    std::fs::read_to_string(java_dir().join(format!("expected/fsck-{phase}.txt")))
        .expect("golden transcript")
}

/// Sorts each run of `-list-corruptfileblocks` entries: HDFS lists them in
/// the order its queue of corrupt blocks received them (for a dead node,
/// its most recent block first), Cairn by block id.
fn sort_corrupt_lists(text: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut run: Vec<String> = Vec::new();
    for l in text.lines() {
        if l.starts_with("blk_") && l.contains('\t') {
            run.push(l.to_string());
            continue;
        }
        run.sort();
        out.append(&mut run);
        out.push(l.to_string());
    }
    run.sort();
    out.append(&mut run);
    out.join("\n") + "\n"
}

/// A phase's transcript against its golden.
fn assert_phase(got: &str, phase: &str) {
    common::assert_matches_golden(
        &sort_corrupt_lists(got),
        &sort_corrupt_lists(&golden(phase)),
        &format!("fsck-{phase}"),
    );
}

/// The stdout lines and exit status of `$ fsck ARGS` in a transcript.
fn step(transcript: &str, args: &str) -> (String, String) {
    let head = format!("$ fsck {args}\n");
    let start = transcript.find(&head).expect("step in transcript") + head.len();
    let rest = &transcript[start..];
    let end = rest.find("\nexit=").expect("exit line");
    let exit = rest[end + 6..]
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    let body: Vec<&str> = rest[..end]
        .lines()
        .filter(|l| !l.starts_with("! "))
        .collect();
    (body.join("\n"), exit)
}

/// The kit's masks (DfsAdmin.mask) for what `cairn fsck` prints.
fn mask(text: &str, user: &str) -> String {
    text.lines()
        .map(|l| {
            let l = mask_tokens(l.trim_end());
            let l = match l.split_once(" at ") {
                Some((head, _)) if l.starts_with("FSCK started by") => format!("{head} at <date>"),
                _ => l,
            };
            let l = match l.strip_prefix("FSCK ended at ") {
                Some(_) => "FSCK ended at <date> in <ms> milliseconds".to_string(),
                None => l,
            };
            l.replace(&format!("by {user} "), "by <super> ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Pool, block and storage ids and `ip:port` addresses, as the kit masks
/// them.
fn mask_tokens(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("BP-") {
            let n = r
                .bytes()
                .take_while(|b| b.is_ascii_digit() || *b == b'.' || *b == b'-')
                .count();
            out.push_str("<bpid>");
            rest = &r[n..];
        } else if let Some(r) = rest.strip_prefix("blk_") {
            let n = digits(r);
            let gs = r[n..].strip_prefix('_').map(digits).filter(|g| *g > 0);
            match gs {
                Some(g) => {
                    out.push_str("blk_<id>_<gs>");
                    rest = &r[n + 1 + g..];
                }
                None => {
                    out.push_str("blk_<id>");
                    rest = &r[n..];
                }
            }
        } else if let Some(r) = rest.strip_prefix("DS-") {
            let n = r
                .bytes()
                .take_while(|b| b.is_ascii_hexdigit() || *b == b'-')
                .count();
            out.push_str("<storage>");
            rest = &r[n..];
        } else if rest.starts_with("127.0.0.1:") {
            let n = "127.0.0.1:".len() + digits(&rest[10..]);
            out.push_str("<dn>");
            rest = &rest[n..];
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// `cairn fsck ARGS` against the cluster: (masked stdout, exit status).
fn cairn_fsck(cluster: &Cluster, args: &str) -> (String, String) {
    let out = common::output_within(
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("-D")
            .arg(format!("dfs.namenode.http-address={}", cluster.nn.http))
            .args(["fsck", "-fs", &cluster.nn.url()])
            .args(args.split_whitespace()),
        Duration::from_secs(60),
        "cairn fsck",
    );
    let code = out.status.code().unwrap_or(-1);
    // DFSck's -1 is 255 as a process status.
    let exit = if code == 255 { -1 } else { code };
    (
        mask(
            &String::from_utf8_lossy(&out.stdout),
            &common::current_user(),
        ),
        exit.to_string(),
    )
}

/// Checks `cairn fsck` against DFSck's lines in the golden transcript.
fn check_cairn_fsck(cluster: &Cluster, phase: &str, commands: &[&str]) {
    let want = golden(phase);
    for args in commands {
        let (got, exit) = cairn_fsck(cluster, args);
        let (want_body, want_exit) = step(&want, args);
        common::assert_matches_golden(&got, &want_body, &format!("cairn fsck {args}"));
        assert_eq!(exit, want_exit, "exit status of cairn fsck {args}");
    }
}

/// Flips the first byte of the (only) replica of `path`'s block `index`
/// and reads that block, so the reader reports the replica.
async fn corrupt_only_replica(cluster: &Cluster, path: &str, index: usize) {
    let located = common::block_locations(cluster.nn.addr, path).await.blocks[index].clone();
    let id = located.b.block_id;
    let name = format!("blk_{id}");
    let files: Vec<PathBuf> = cluster
        .dns
        .iter()
        .flat_map(|dn| common::files_under(&dn.dir))
        .filter(|p| {
            p.file_name().is_some_and(|n| n.to_string_lossy() == name)
                && p.to_string_lossy().contains("/finalized/")
        })
        .collect();
    assert_eq!(files.len(), 1, "one replica of {path}");
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&files[0])
            .expect("open block file");
        let mut b = [0u8; 1];
        f.read_exact_at(&mut b, 0).expect("read");
        f.write_all_at(&[b[0] ^ 0xFF], 0).expect("write");
    }
    let client = cluster.nn.client(None);
    if let Ok(r) = client.read(path).await {
        let len = usize::try_from(located.b.num_bytes.unwrap_or(0)).unwrap_or(0);
        let at = usize::try_from(located.offset).unwrap_or(0);
        let _ = r.read_range(at, len).await;
    }
}

fn fsck_body(cluster: &Cluster, query: &str) -> String {
    let (status, _, body) = common::http_request(
        cluster.nn.http,
        "GET",
        &format!("/fsck?ugi={}&{query}", common::current_user()),
        b"",
    );
    assert_eq!(status, 200);
    String::from_utf8_lossy(&body).into_owned()
}

/// Waits until the NameNode has `n` live DataNodes.
fn wait_live(cluster: &Cluster, n: usize) {
    let ok = wait_until(Duration::from_secs(60), || {
        fsck_body(cluster, "path=/nope").contains("does not exist")
            && fsck_body(cluster, "path=/").contains(&format!(" Number of data-nodes:\t{n}\n"))
    });
    assert!(ok, "the NameNode did not see {n} live DataNodes");
    // Let the replication monitor judge the blocks the node left.
    std::thread::sleep(Duration::from_secs(3));
}

/// `-move` on a file of three 1 MiB blocks whose middle one is corrupt:
/// as HDFS's `copyBlocksToLostFound`, the first and last blocks become the
/// chain files `0` and `1` under `/lost+found/<path>` (byte for byte), the
/// corrupt block cannot be read (an internal error: the report ends
/// FAILED), and the file stays. Then all of it is removed, so the later
/// phases see the tree they saw before.
async fn move_copies_the_readable_blocks(cluster: &Cluster) {
    const MIB: usize = 1 << 20;
    let data: Vec<u8> = (0..3 * MIB).map(|i| (i * 7 % 251) as u8).collect();
    let client = cluster.nn.client(None);
    let mut w = client
        .create(
            "/fsckmove/multi",
            hdfs_native::WriteOptions {
                block_size: Some(MIB as u64),
                replication: Some(1),
                ..Default::default()
            },
        )
        .await
        .expect("create");
    w.write_bytes(bytes::Bytes::from(data.clone()))
        .await
        .expect("write");
    w.close().await.expect("close");
    corrupt_only_replica(cluster, "/fsckmove/multi", 1).await;
    let reported = wait_until(Duration::from_secs(60), || {
        fsck_body(cluster, "path=/fsckmove&listcorruptfileblocks=1").contains("/fsckmove/multi")
    });
    assert!(reported, "the corrupt replica was not reported");

    let report = fsck_body(cluster, "path=/fsckmove&move=1");
    assert!(
        report.contains("/fsckmove/multi: CORRUPT 1 blocks of total size 1048576 B."),
        "{report}"
    );
    assert!(
        report
            .ends_with("\nfsck encountered internal errors!\n\n\nFsck on path '/fsckmove' FAILED"),
        "{report}"
    );
    let read_all = |path: &'static str| {
        let client = client.clone();
        async move {
            let r = client.read(path).await.expect(path);
            r.read_range(0, r.file_length()).await.expect(path).to_vec()
        }
    };
    assert_eq!(read_all("/lost+found/fsckmove/multi/0").await, &data[..MIB]);
    assert_eq!(
        read_all("/lost+found/fsckmove/multi/1").await,
        &data[2 * MIB..]
    );
    let chains = client
        .list_status("/lost+found/fsckmove/multi", false)
        .await
        .expect("list");
    assert_eq!(chains.len(), 2, "two chains: {chains:?}");
    assert!(
        client.get_file_info("/fsckmove/multi").await.is_ok(),
        "-move keeps the file"
    );

    client.delete("/fsckmove", true).await.expect("delete");
    client.delete("/lost+found", true).await.expect("delete");
}

/// `listCorruptFileBlocks` (`DistributedFileSystem.listCorruptFileBlocks`)
/// reads the list fsck's `-list-corruptfileblocks` prints: the superuser
/// gets the file with the corrupt block, a path outside it nothing, anyone
/// else HDFS's refusal.
async fn corrupt_files_over_rpc(cluster: &Cluster) {
    use cairn_proto::hadoop::hdfs as pb;
    use cairn_proto::protocols::CLIENT_PROTOCOL;
    use cairn_rpc::client::Client;
    let list = |user: String, path: &str| {
        let req = pb::ListCorruptFileBlocksRequestProto {
            path: path.into(),
            cookie: None,
        };
        let addr = cluster.nn.addr;
        async move {
            let c = Client::connect(addr, &user, CLIENT_PROTOCOL)
                .await
                .expect("connect");
            c.call::<_, pb::ListCorruptFileBlocksResponseProto>("listCorruptFileBlocks", &req)
                .await
        }
    };
    let me = common::current_user();
    let got = list(me.clone(), "/fsck").await.expect("superuser");
    assert_eq!(got.corrupt.files, vec!["/fsck/one".to_string()]);
    let next = list(me.clone(), "/elsewhere").await.expect("superuser");
    assert!(next.corrupt.files.is_empty(), "{next:?}");
    let refused = list("mallory".into(), "/fsck")
        .await
        .expect_err("not superuser");
    assert_eq!(
        refused.class(),
        Some("org.apache.hadoop.security.AccessControlException")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fsck_reports_match_apache_hdfs() {
    let mut cluster = Cluster::start(2, DEFINES);

    assert_phase(&run_phase(&cluster, "healthy"), "healthy");
    check_cairn_fsck(
        &cluster,
        "healthy",
        &["/", "/fsck -files -blocks -locations", "/nope"],
    );
    // -storagepolicies: the blocks by their replicas' storage types (every
    // DataNode volume is DISK), all satisfying the default HOT policy.
    let report = fsck_body(&cluster, "path=/fsck&storagepolicies=1");
    let table = "\nBlocks satisfying the specified storage policy:\n\
        Storage Policy                  # of blocks       % of blocks\n\
        DISK:2(HOT)                        2              66.6667%\n\
        DISK:1(HOT)                        1              33.3333%\n\
        \nAll blocks satisfy specified storage policy.\nFSCK ended at ";
    assert!(report.contains(table), "{report}");

    corrupt_only_replica(&cluster, "/fsck/one", 0).await;
    let reported = wait_until(Duration::from_secs(60), || {
        fsck_body(&cluster, "path=/fsck&listcorruptfileblocks=1").contains("/fsck/one")
    });
    assert!(reported, "the corrupt replica was not reported");
    check_cairn_fsck(&cluster, "corrupt", &["/fsck", "/fsck -files -blocks"]);
    // Before the phase's `fsck -delete` removes the file.
    corrupt_files_over_rpc(&cluster).await;
    assert_phase(&run_phase(&cluster, "corrupt"), "corrupt");

    move_copies_the_readable_blocks(&cluster).await;

    cluster.dns[0].kill();
    wait_live(&cluster, 1);
    assert_phase(&run_phase(&cluster, "dead"), "dead");
    check_cairn_fsck(&cluster, "dead", &["/", "/fsck -list-corruptfileblocks"]);

    cluster.dns[1].kill();
    wait_live(&cluster, 0);
    check_cairn_fsck(&cluster, "nodatanodes", &["/", "/fsck -files -blocks"]);
    assert_phase(&run_phase(&cluster, "nodatanodes"), "nodatanodes");
}
