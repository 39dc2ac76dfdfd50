//! The edit log's preallocation is real allocation, and a full disk is met
//! before a record is written: mutations are refused with the safe-mode
//! error, reads go on, nothing partial reaches the log, and after space is
//! freed and the NameNode restarted every acknowledged change is there.
//! Also: a torn last record is cut wherever the tear falls.

mod common;

use std::os::unix::fs::MetadataExt;
use std::process::Command;
use std::time::Duration;

use common::{format_namenode, NameNode};

fn segment(dir: &std::path::Path) -> std::path::PathBuf {
    std::fs::read_dir(dir)
        .expect("ls")
        .map(|e| e.expect("entry").path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("edits_inprogress_"))
        })
        .expect("an in-progress segment")
}

#[tokio::test]
async fn preallocated_segments_are_allocated_on_disk() {
    // Goal: after the first record the segment's allocated blocks
    // (st_blocks) cover the 1 MiB preallocation, not just the bytes written.
    let nn = NameNode::start(&[]);
    nn.client(None)
        .mkdirs("/one", 0o755, true)
        .await
        .expect("mkdir");
    let meta = std::fs::metadata(segment(&nn.dir.path().join("name"))).expect("stat");
    assert!(
        meta.blocks() * 512 >= 1024 * 1024,
        "allocated {} bytes",
        meta.blocks() * 512
    );
    assert!(meta.len() >= 1024 * 1024);
}

/// Where a tmpfs cannot be mounted (not root) the test cannot run: it says
/// so, and fails under CI, where it must run.
fn skip_unless_ci() {
    assert!(
        std::env::var_os("CI").is_none(),
        "cannot mount a small tmpfs (needs root), and CI is set: this test must run there"
    );
    eprintln!("SKIPPED: cannot mount a small tmpfs here (needs root)");
}

/// A 3 MiB tmpfs mounted for one test, unmounted on drop.
struct Mount(std::path::PathBuf);

impl Mount {
    /// Mounts it at `dir`; `None` where that is not allowed (not root).
    fn small_tmpfs(dir: &std::path::Path) -> Option<Mount> {
        std::fs::create_dir_all(dir).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=3m", "tmpfs"])
            .arg(dir)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        ok.then(|| Mount(dir.to_path_buf()))
    }
}
impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_turns_mutations_away_and_loses_nothing() {
    // Goal: on a 3 MiB tmpfs that fills up, mutations fail with
    // SafeModeException, reads work, the log holds only whole records, and
    // after freeing space and restarting, every acknowledged mkdir exists.
    let base = tempfile::tempdir().expect("tmp");
    let Some(_guard) = Mount::small_tmpfs(&base.path().join("small")) else {
        skip_unless_ci();
        return;
    };
    let mnt = _guard.0.clone();
    let name = mnt.join("name");
    let step = "cairn.namenode.edits.preallocate.step=65536";
    format_namenode(&name, &[step]);
    // Fill the file system, leaving ~160 KiB: room for the segment's first
    // steps only.
    let filler = mnt.join("filler");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&filler).expect("filler");
        let chunk = vec![7u8; 4096];
        while f.write_all(&chunk).is_ok() {}
        let len = f.metadata().expect("stat").len();
        f.set_len(len.saturating_sub(160 * 1024)).expect("shrink");
        f.sync_all().expect("sync");
    }
    // The test kit runs a NameNode on <dir>/name: make <dir> the tmpfs.
    let dir = tempfile::TempDir::new_in(base.path()).expect("tmp");
    std::fs::remove_dir_all(dir.path()).expect("rmdir");
    std::os::unix::fs::symlink(&mnt, dir.path()).expect("symlink");
    let nn = NameNode::start_in(dir, &[step]);
    let c = nn.client(None);
    let mut acked = Vec::new();
    let mut refused = None;
    for i in 0..20_000 {
        let p = format!("/d{i:05}-{}", "x".repeat(180));
        match c.mkdirs(&p, 0o755, true).await {
            Ok(()) => acked.push(p),
            Err(e) => {
                refused = Some((p, e.to_string()));
                break;
            }
        }
    }
    let (refused_path, refused) = refused.expect("the disk never filled up");
    assert!(refused.contains("SafeModeException"), "{refused}");
    assert!(
        !acked.is_empty(),
        "nothing was written before the disk filled"
    );
    // Reads still work, and show exactly what was acknowledged: the
    // refused mkdir was not applied.
    assert!(c.get_file_info(&acked[0]).await.is_ok());
    let listed = |c: hdfs_native::Client| async move {
        let mut names: Vec<String> = c
            .list_status("/", false)
            .await
            .expect("list")
            .into_iter()
            .map(|s| format!("/{}", s.path.trim_start_matches('/')))
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        listed(nn.client(None)).await,
        acked,
        "the listing shows exactly the acknowledged mkdirs"
    );
    assert!(
        c.get_file_info(&refused_path).await.is_err(),
        "the refused mkdir is not visible"
    );
    let dir = nn.kill();
    // Only whole records on disk: after the last valid record, zeros.
    let seg = segment(&name);
    let data = std::fs::read(&seg).expect("read segment");
    let mut pos = 0usize;
    while pos + 4 <= data.len() {
        let len =
            u32::from_be_bytes([data[pos], data[pos + 1], data[pos + 2], data[pos + 3]]) as usize;
        if len == 0 {
            break;
        }
        pos += 16 + len;
        assert!(
            pos <= data.len(),
            "a record runs past the end of the segment"
        );
    }
    assert!(
        data[pos.min(data.len())..].iter().all(|b| *b == 0),
        "bytes after the last whole record"
    );
    // Free the space and restart: everything acknowledged is there.
    std::fs::remove_file(&filler).expect("free space");
    let nn = NameNode::start_in(dir, &[step]);
    let c = nn.client(None);
    assert_eq!(
        listed(nn.client(None)).await,
        acked,
        "after the restart, exactly the acknowledged mkdirs"
    );
    assert!(
        c.get_file_info(&refused_path).await.is_err(),
        "the refused mkdir is absent after the restart"
    );
    c.mkdirs("/after", 0o755, true)
        .await
        .expect("writable again");
    drop(nn);
}

#[tokio::test]
async fn a_tear_anywhere_in_the_last_record_is_cut() {
    // Goal: truncating the newest segment at every offset inside its last
    // record, then starting, recovers everything before that record.
    let nn = NameNode::start(&[]);
    let c = nn.client(None);
    c.mkdirs("/a", 0o755, true).await.expect("mkdir");
    c.mkdirs("/b", 0o755, true).await.expect("mkdir");
    c.mkdirs("/last-one", 0o755, true).await.expect("mkdir");
    let dir = nn.kill();
    let name = dir.path().join("name");
    let seg = segment(&name);
    let data = std::fs::read(&seg).expect("read");
    // Find the record boundaries.
    let mut bounds = vec![0usize];
    loop {
        let pos = *bounds.last().expect("start");
        let len =
            u32::from_be_bytes([data[pos], data[pos + 1], data[pos + 2], data[pos + 3]]) as usize;
        if len == 0 {
            break;
        }
        bounds.push(pos + 16 + len);
    }
    let (start, end) = (bounds[bounds.len() - 2], bounds[bounds.len() - 1]);
    let mut dir = dir;
    for cut in start + 1..end {
        // Keep the valid prefix, then zeros (the preallocated tail).
        let mut torn = data[..cut].to_vec();
        torn.resize(data.len(), 0);
        std::fs::write(&seg, &torn).expect("write");
        let nn = NameNode::start_in(dir, &[]);
        let c = nn.client(None);
        assert!(c.get_file_info("/a").await.is_ok(), "cut at {cut}");
        assert!(c.get_file_info("/b").await.is_ok(), "cut at {cut}");
        assert!(c.get_file_info("/last-one").await.is_err(), "cut at {cut}");
        dir = nn.kill();
        // Start-up finalized the segment; put the torn copy back for the
        // next cut.
        for e in std::fs::read_dir(&name).expect("ls").flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with("edits_")
                || (n.starts_with("fsimage_") && !n.ends_with("0000000000000000000"))
            {
                std::fs::remove_file(e.path()).expect("rm");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_copy_of_the_log_is_dropped_while_one_stays_healthy() {
    // Goal: with two metadata directories, the one that runs out of space
    // is dropped with an error and the NameNode goes on with the other;
    // every acknowledged change is there after a restart.
    let base = tempfile::tempdir().expect("tmp");
    let Some(_guard) = Mount::small_tmpfs(&base.path().join("small")) else {
        skip_unless_ci();
        return;
    };
    let mnt = _guard.0.clone();
    let healthy = base.path().join("healthy");
    let dirs = format!("{},{}", healthy.display(), mnt.join("b").display());
    let step = "cairn.namenode.edits.preallocate.step=65536";
    let out = common::output_within(
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["-D", step, "namenode", "--format", "--dir", &dirs]),
        Duration::from_secs(900),
        "format",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    {
        use std::io::Write;
        let filler = mnt.join("filler");
        let mut f = std::fs::File::create(&filler).expect("filler");
        let chunk = vec![7u8; 4096];
        while f.write_all(&chunk).is_ok() {}
        let len = f.metadata().expect("stat").len();
        f.set_len(len.saturating_sub(160 * 1024)).expect("shrink");
        f.sync_all().expect("sync");
    }
    let start = |dirs: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args([
                "-D",
                step,
                "namenode",
                "--rpc-address",
                "127.0.0.1:0",
                "--dir",
                dirs,
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("namenode");
        let (mut line, mut web) = (String::new(), String::new());
        {
            use std::io::BufRead;
            let out = child.stdout.take().expect("stdout");
            let mut out = std::io::BufReader::new(out);
            out.read_line(&mut line).expect("line");
            out.read_line(&mut web).expect("HTTP line");
        }
        let url = format!(
            "hdfs://{}",
            line.trim().rsplit("hdfs://").next().expect("addr")
        );
        let http: std::net::SocketAddr = web
            .trim()
            .rsplit("http://")
            .next()
            .and_then(|a| a.parse().ok())
            .expect("HTTP address");
        (child, url, http)
    };
    let (mut child, url, http) = start(&dirs);
    let c = hdfs_native::ClientBuilder::new()
        .with_url(&url)
        .build()
        .expect("client");
    let mut acked = Vec::new();
    for i in 0..3000 {
        let p = format!("/d{i:05}-{}", "y".repeat(180));
        c.mkdirs(&p, 0o755, true)
            .await
            .unwrap_or_else(|e| panic!("mkdir {i} failed although one copy is healthy: {e}"));
        acked.push(p);
    }
    // The dropped copy's directory is failed in HDFS's NameNodeInfo, its
    // journal disabled; the healthy one writes on.
    let query = "/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo";
    let (status, _, body) = common::http_request(http, "GET", query, b"");
    assert_eq!(status, 200);
    let info: serde_json::Value = serde_json::from_slice(&body).expect("jmx JSON");
    let info = &info["beans"][0];
    let text = |k: &str| info[k].as_str().unwrap_or_else(|| panic!("{k}: {info}"));
    let dirs_status: serde_json::Value =
        serde_json::from_str(text("NameDirStatuses")).expect("NameDirStatuses JSON");
    let full = mnt.join("b").display().to_string();
    let ok = healthy.display().to_string();
    assert_eq!(
        dirs_status["failed"][&full], "IMAGE_AND_EDITS",
        "{dirs_status}"
    );
    assert_eq!(
        dirs_status["active"][&ok], "IMAGE_AND_EDITS",
        "{dirs_status}"
    );
    let journals: serde_json::Value =
        serde_json::from_str(text("NameJournalStatus")).expect("NameJournalStatus JSON");
    let disabled = |root: &str| {
        let manager = format!("FileJournalManager(root={root})");
        let j = journals
            .as_array()
            .and_then(|a| a.iter().find(|j| j["manager"] == manager.as_str()))
            .unwrap_or_else(|| panic!("{manager}: {journals}"));
        j["disabled"].clone()
    };
    assert_eq!(
        (disabled(&full), disabled(&ok)),
        ("true".into(), "false".into())
    );
    let _ = child.kill();
    let output = child.wait_with_output().expect("wait");
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(
        log.contains("dropping this journal directory"),
        "the full copy was not dropped:\n{log}"
    );
    std::fs::remove_file(mnt.join("filler")).expect("free");
    let (mut child, url, _) = start(&dirs);
    let c = hdfs_native::ClientBuilder::new()
        .with_url(&url)
        .build()
        .expect("client");
    let listed = c.list_status("/", false).await.expect("list");
    assert_eq!(listed.len(), acked.len());
    let _ = child.kill();
    let _ = child.wait();
}
