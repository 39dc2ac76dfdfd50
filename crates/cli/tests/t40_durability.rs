//! The namespace survives the NameNode: every acknowledged change is in the
//! edit log (group-committed, fdatasync'd) before the client hears back, so
//! a SIGKILL loses nothing; start-up replays the log on top of the newest
//! checkpoint, cuts a torn tail, and refuses damaged or missing metadata.

mod common;

use std::process::Command;
use std::time::Duration;

use common::{format_namenode, NameNode};
use hdfs_native::WriteOptions;

#[tokio::test]
async fn acknowledged_changes_survive_sigkill_and_restarts() {
    // Goal: mkdirs, files, renames, deletes, chmod/chown/setTimes acknowledged
    // before a SIGKILL are all there after a restart, three times over.
    let nn = NameNode::start(&[]);
    let c = nn.client(None);
    c.mkdirs("/keep/a/b", 0o750, true).await.expect("mkdirs");
    c.create("/keep/a/f", WriteOptions::default())
        .await
        .expect("create")
        .close()
        .await
        .expect("close");
    c.mkdirs("/gone/x", 0o755, true).await.expect("mkdirs");
    c.delete("/gone", true).await.expect("delete");
    c.rename("/keep/a/f", "/keep/g", false)
        .await
        .expect("rename");
    c.set_permission("/keep/g", 0o600).await.expect("chmod");
    c.set_owner("/keep/g", Some("alice"), Some("staff"))
        .await
        .expect("chown");
    c.set_times("/keep/g", 123_000, 456_000)
        .await
        .expect("times");
    let before: Vec<_> = c.list_status("/", true).await.expect("list");
    let mut dir = nn.kill();
    for round in 0..3 {
        let nn = NameNode::start_in(dir, &[]);
        let c = nn.client(None);
        let after: Vec<_> = c.list_status("/", true).await.expect("list");
        let key = |v: &[hdfs_native::client::FileStatus]| {
            let mut k: Vec<_> = v
                .iter()
                .map(|s| {
                    (
                        s.path.clone(),
                        s.isdir,
                        s.permission,
                        s.owner.clone(),
                        s.group.clone(),
                        s.modification_time,
                        s.length,
                    )
                })
                .collect();
            k.sort();
            k
        };
        assert_eq!(key(&before), key(&after), "round {round}");
        let g = c.get_file_info("/keep/g").await.expect("g");
        assert_eq!((g.modification_time, g.access_time), (123_000, 456_000));
        assert!(c.get_file_info("/gone").await.is_err());
        // New ids keep counting up: a new directory does not reuse an id.
        c.mkdirs(&format!("/round{round}"), 0o755, true)
            .await
            .expect("mkdir");
        dir = nn.kill();
        let nn = NameNode::start_in(dir, &[]);
        assert!(nn
            .client(None)
            .get_file_info(&format!("/round{round}"))
            .await
            .is_ok());
        dir = nn.kill();
        let nn = NameNode::start_in(dir, &[]);
        nn.client(None)
            .delete(&format!("/round{round}"), true)
            .await
            .expect("delete");
        dir = nn.kill();
    }
}

#[test]
fn unformatted_and_damaged_directories_are_refused() {
    // Goal: a directory that was never formatted, or whose edit log is
    // damaged in the middle, stops start-up with a message naming the file;
    // formatting twice is refused.
    let dir = tempfile::tempdir().expect("tmp");
    let run = |d: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["namenode", "--rpc-address", "127.0.0.1:0", "--dir"])
            .arg(d)
            .output()
            .expect("run")
    };
    let out = run(dir.path());
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not formatted"));
    format_namenode(dir.path(), &[]);
    let again = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["namenode", "-format", "--dir"])
        .arg(dir.path())
        .output()
        .expect("run");
    assert!(!again.status.success(), "a second format must be refused");
    assert!(String::from_utf8_lossy(&again.stderr).contains("already holds a namespace"));

    // Damage the middle of a finalized segment.
    let parent = dir.path().parent().expect("parent").to_path_buf();
    let _ = parent;
    let seg = dir
        .path()
        .join("edits_0000000000000000001-0000000000000000003");
    let mut bytes = Vec::new();
    for (i, p) in ["/a", "/b", "/c"].iter().enumerate() {
        bytes.extend(cairn_namenode_record(i as u64 + 1, p));
    }
    bytes[20] ^= 0xff;
    std::fs::write(&seg, &bytes).expect("write segment");
    let out = run(dir.path());
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("edits_0000000000000000001-0000000000000000003") && err.contains("offset 0"),
        "{err}"
    );
}

#[test]
fn a_second_server_on_a_directory_in_use_is_refused() {
    // Goal: as HDFS's `in_use.lock`, a second NameNode, a format or a
    // recovery on the metadata directory a running NameNode uses, and a
    // second DataNode on a running one's data directory, stop at once with
    // "Cannot lock storage" and change nothing; the first keeps serving and
    // the lock goes with its process.
    let nn = NameNode::start(&[]);
    let name = nn.dir.path().join("name");
    // Start-up opens its edit segment after it announces its address.
    let snapshot = || {
        let mut files: Vec<_> = common::files_under(&name)
            .into_iter()
            .map(|f| {
                let bytes = std::fs::read(&f).unwrap_or_default();
                (f, bytes)
            })
            .collect();
        files.sort();
        files
    };
    assert!(common::wait_until(Duration::from_secs(10), || snapshot()
        .iter()
        .any(|(f, _)| f.to_string_lossy().contains("edits_inprogress"))));
    // The segment is written to (its header, the preallocated tail) after
    // it appears: take the directory once it holds still.
    let mut files_before = snapshot();
    assert!(common::wait_until(Duration::from_secs(10), || {
        std::thread::sleep(Duration::from_millis(200));
        let now = snapshot();
        let still = now == files_before;
        files_before = now;
        still
    }));
    // `cairn ARGS --dir DIR` must stop at once, naming DIR as locked.
    let refused = |args: &[&str], dir: &std::path::Path, what: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(args)
            .arg("--dir")
            .arg(dir)
            .output()
            .expect("run cairn");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{what} must be refused: {err}");
        assert!(
            err.contains(&format!(
                "Cannot lock storage {}. The directory is already locked",
                dir.display()
            )),
            "{what}: {err}"
        );
    };
    let serve = [
        "namenode",
        "--rpc-address",
        "127.0.0.1:0",
        "--http-address",
        "127.0.0.1:0",
    ];
    refused(&serve, &name, "a second NameNode");
    refused(&["namenode", "--format", "--force"], &name, "a format");
    refused(&["namenode", "--recover"], &name, "a recovery");
    assert!(
        files_before == snapshot(),
        "nothing in the directory changed"
    );
    let holder = std::fs::read_to_string(name.join("in_use.lock")).expect("lock file");
    assert!(holder.contains('@'), "pid@host of the holder: {holder:?}");

    let data = nn.dir.path().join("data");
    let dn = common::DataNode::start(nn.addr, &data, &[]);
    let nn_addr = nn.addr.to_string();
    refused(
        &["datanode", "--namenode", &nn_addr],
        &data,
        "a second DataNode",
    );
    drop(dn);

    // The lock ends with the process: a restart on the same directory works.
    let dir = nn.kill();
    let again = NameNode::start_in(dir, &[]);
    drop(again);
}

/// A journal record for a Mkdir of `path`, built with the NameNode's codec
/// (via its public API) so the test damages a real record.
fn cairn_namenode_record(txid: u64, path: &str) -> Vec<u8> {
    use cairn_namenode::namespace::{Edit, INodeId};
    cairn_namenode::storage::encode_edits(&[(
        txid,
        Edit::Mkdir {
            id: INodeId(16385 + txid),
            path: path.into(),
            permission: 0o755,
            owner: "u".into(),
            group: "g".into(),
            mtime_ms: 1,
        },
    )])
}

#[tokio::test]
async fn a_torn_tail_is_cut_and_the_rest_survives() {
    // Goal: a record cut in half at the end of the in-progress segment (a
    // crash mid-write) is dropped on start-up, earlier records are kept.
    let nn = NameNode::start(&[]);
    let c = nn.client(None);
    c.mkdirs("/before", 0o755, true).await.expect("mkdir");
    let dir = nn.kill();
    let name = dir.path().join("name");
    let seg = std::fs::read_dir(&name)
        .expect("ls")
        .map(|e| e.expect("entry").path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("edits_inprogress_"))
        })
        .expect("an in-progress segment");
    // Append half a record after the valid ones (inside the preallocation).
    let data = std::fs::read(&seg).expect("read");
    let end = {
        let mut pos = 0usize;
        loop {
            let len = u32::from_be_bytes([data[pos], data[pos + 1], data[pos + 2], data[pos + 3]])
                as usize;
            if len == 0 {
                break pos;
            }
            pos += 16 + len;
        }
    };
    let torn = cairn_namenode_record(99, "/torn");
    let mut patched = data.clone();
    patched[end..end + torn.len() / 2].copy_from_slice(&torn[..torn.len() / 2]);
    std::fs::write(&seg, &patched).expect("write");
    let nn = NameNode::start_in(dir, &[]);
    let c = nn.client(None);
    assert!(c.get_file_info("/before").await.is_ok());
    assert!(c.get_file_info("/torn").await.is_err());
    c.mkdirs("/after", 0o755, true)
        .await
        .expect("still writable");
}

#[tokio::test]
async fn recover_mode_skips_a_damaged_record_on_request() {
    // Goal: a flipped byte in the middle of the log refuses a normal start;
    // `cairn namenode -recover`, told to skip, keeps every record before and
    // after the damaged one, and the next normal start serves that state.
    let nn = NameNode::start(&[]);
    let c = nn.client(None);
    for d in ["/r1", "/r2", "/r3", "/r4"] {
        c.mkdirs(d, 0o755, true).await.expect("mkdir");
    }
    let dir = nn.kill();
    let name = dir.path().join("name");
    let seg = std::fs::read_dir(&name)
        .expect("ls")
        .map(|e| e.expect("entry").path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("edits_inprogress_"))
        })
        .expect("segment");
    let mut data = std::fs::read(&seg).expect("read");
    // Damage the payload of the second record (/r2).
    let first_len = u32::from_be_bytes([data[0], data[1], data[2], data[3]]) as usize;
    let second = 16 + first_len;
    data[second + 20] ^= 0x5a;
    std::fs::write(&seg, &data).expect("write");
    let run = |args: &[&str], stdin: &str| {
        use std::io::Write;
        let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["namenode", "--rpc-address", "127.0.0.1:0", "--dir"])
            .arg(&name)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes())
            .expect("answer");
        child.wait_with_output().expect("wait")
    };
    // A normal start refuses, naming the file and the offset.
    let out = run(&[], "");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("edits_inprogress_") && err.contains(&format!("offset {second}")),
        "{err}"
    );
    // Quitting changes nothing.
    let out = run(&["-recover"], "q\n");
    assert!(!out.status.success());
    // Skipping repairs.
    let out = run(&["-recover"], "s\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let nn = NameNode::start_in(dir, &[]);
    let c = nn.client(None);
    for d in ["/r1", "/r3", "/r4"] {
        assert!(c.get_file_info(d).await.is_ok(), "{d} kept");
    }
    assert!(
        c.get_file_info("/r2").await.is_err(),
        "the damaged record was skipped"
    );
    c.mkdirs("/after", 0o755, true).await.expect("writable");
}
