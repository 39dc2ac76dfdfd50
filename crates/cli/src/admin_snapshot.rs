//! The snapshot commands of `cairn admin`: `-allowSnapshot DIR` and
//! `-disallowSnapshot DIR` (as `hdfs dfsadmin`), `-lsSnapshottableDir` (as
//! `hdfs lsSnapshottableDir`) and `-snapshotDiff DIR FROM TO` (as `hdfs
//! snapshotDiff`), printing what Hadoop's tools print.

use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::client::{Client, ClientError};

/// The commands this file serves.
pub const COMMANDS: &[&str] = &[
    "-allowSnapshot",
    "-disallowSnapshot",
    "-lsSnapshottableDir",
    "-snapshotDiff",
];

/// How many arguments each command takes.
pub fn arity(cmd: &str) -> usize {
    match cmd {
        "-allowSnapshot" | "-disallowSnapshot" => 1,
        "-snapshotDiff" => 3,
        _ => 0,
    }
}

/// The first line of a call's failure, as the Java tools print it.
fn first_line(e: &ClientError) -> String {
    let text = match e {
        ClientError::Remote { message, .. } | ClientError::Fatal { message, .. } => message.clone(),
        other => other.to_string(),
    };
    text.lines().next().unwrap_or_default().to_string()
}

/// Runs `cmd` with its `args`; the process exit code.
pub async fn run(client: &Client, cmd: &str, args: &[String]) -> i32 {
    match cmd {
        "-allowSnapshot" | "-disallowSnapshot" => toggle(client, cmd, &args[0]).await,
        "-lsSnapshottableDir" => ls_snapshottable_dir(client).await,
        _ => snapshot_diff(client, &args[0], &args[1], &args[2]).await,
    }
}

async fn toggle(client: &Client, cmd: &str, dir: &str) -> i32 {
    let allow = cmd == "-allowSnapshot";
    let r = if allow {
        client
            .call::<_, pb::AllowSnapshotResponseProto>(
                "allowSnapshot",
                &pb::AllowSnapshotRequestProto {
                    snapshot_root: dir.to_string(),
                },
            )
            .await
            .map(drop)
    } else {
        client
            .call::<_, pb::DisallowSnapshotResponseProto>(
                "disallowSnapshot",
                &pb::DisallowSnapshotRequestProto {
                    snapshot_root: dir.to_string(),
                },
            )
            .await
            .map(drop)
    };
    let verb = if allow { "Allowing" } else { "Disallowing" };
    match r {
        Ok(()) => {
            println!("{verb} snapshot on {dir} succeeded");
            0
        }
        Err(e) => {
            eprintln!("{}: {}", &cmd[1..], first_line(&e));
            255
        }
    }
}

/// `FsPermission.toString()`: `rwxr-xr-x`, `t`/`T` for the sticky bit.
fn mode(perm: u32) -> String {
    let mut s: Vec<char> = "rwxrwxrwx"
        .chars()
        .enumerate()
        .map(|(i, c)| if perm & (1 << (8 - i)) != 0 { c } else { '-' })
        .collect();
    if perm & 0o1000 != 0 {
        s[8] = if s[8] == 'x' { 't' } else { 'T' };
    }
    s.into_iter().collect()
}

/// `hdfs lsSnapshottableDir` (`SnapshottableDirectoryStatus.print`).
async fn ls_snapshottable_dir(client: &Client) -> i32 {
    let r = client
        .call::<_, pb::GetSnapshottableDirListingResponseProto>(
            "getSnapshottableDirListing",
            &pb::GetSnapshottableDirListingRequestProto {},
        )
        .await;
    let dirs = match r {
        Ok(r) => r
            .snapshottable_dir_list
            .map(|l| l.snapshottable_dir_listing)
            .unwrap_or_default(),
        Err(e) => {
            eprintln!("lsSnapshottableDir: {}", first_line(&e));
            return 1;
        }
    };
    if dirs.is_empty() {
        println!();
        return 0;
    }
    let width = |f: &dyn Fn(&pb::SnapshottableDirectoryStatusProto) -> String| {
        dirs.iter().map(|d| f(d).len()).max().unwrap_or(0)
    };
    let repl = width(&|d| d.dir_status.block_replication.unwrap_or(0).to_string());
    let owner = width(&|d| d.dir_status.owner.clone());
    let group = width(&|d| d.dir_status.group.clone());
    let len = width(&|d| d.dir_status.length.to_string());
    let num = width(&|d| d.snapshot_number.to_string());
    let quota = width(&|d| d.snapshot_quota.to_string());
    for d in &dirs {
        let s = &d.dir_status;
        let parent = String::from_utf8_lossy(&d.parent_fullpath).into_owned();
        let name = String::from_utf8_lossy(&s.path).into_owned();
        let path = match (parent.as_str(), name.as_str()) {
            ("", "") => "/".to_string(),
            ("", n) => n.to_string(),
            ("/", n) => format!("/{n}"),
            (p, n) => format!("{p}/{n}"),
        };
        println!(
            "d{} {:>repl$} {:<owner$} {:<group$} {:>len$} {} {:>num$} {:>quota$} {path}",
            mode(s.permission.perm),
            s.block_replication.unwrap_or(0),
            s.owner,
            s.group,
            s.length,
            cairn_namenode::javafmt::date_minute(s.modification_time),
            d.snapshot_number,
            d.snapshot_quota,
        );
    }
    0
}

/// `SnapshotDiff.getSnapshotName`: `.` is the current tree; a leading
/// `.snapshot/` is dropped.
fn snapshot_name(arg: &str) -> String {
    if arg == "." {
        return String::new();
    }
    for prefix in [".snapshot/", "/.snapshot/"] {
        if let Some(rest) = arg.strip_prefix(prefix) {
            return rest.to_string();
        }
    }
    arg.to_string()
}

/// `DiffReportEntry`'s path: `.` or `./relative`.
fn entry_path(bytes: &[u8]) -> String {
    let p = String::from_utf8_lossy(bytes);
    if p.is_empty() {
        ".".to_string()
    } else {
        format!("./{p}")
    }
}

/// `hdfs snapshotDiff DIR FROM TO`. Between two snapshots the Java client
/// builds the report from the listing form, whose modified entries it
/// sorts by path; against the current tree it prints the NameNode's order.
async fn snapshot_diff(client: &Client, dir: &str, from: &str, to: &str) -> i32 {
    let (from, to) = (snapshot_name(from), snapshot_name(to));
    let r = client
        .call::<_, pb::GetSnapshotDiffReportResponseProto>(
            "getSnapshotDiffReport",
            &pb::GetSnapshotDiffReportRequestProto {
                snapshot_root: dir.to_string(),
                from_snapshot: from.clone(),
                to_snapshot: to.clone(),
            },
        )
        .await;
    let report = match r {
        Ok(r) => r.diff_report,
        Err(e) => {
            let line = first_line(&e);
            eprintln!("snapshotDiff: {line}");
            if let ClientError::Remote { class, .. } = &e {
                eprintln!("{class}: {line}");
            }
            return 1;
        }
    };
    let both_snapshots = !from.is_empty() && !to.is_empty();
    // Each directory's `M` entry with the entries that follow it.
    let mut groups: Vec<Vec<&pb::SnapshotDiffReportEntryProto>> = Vec::new();
    for e in &report.diff_report_entries {
        if e.modification_label == "M" || groups.is_empty() {
            groups.push(Vec::new());
        }
        if let Some(g) = groups.last_mut() {
            g.push(e);
        }
    }
    if both_snapshots {
        let key = |g: &Vec<&pb::SnapshotDiffReportEntryProto>| -> Vec<Vec<u8>> {
            let p = &g[0].fullpath;
            if p.is_empty() {
                return Vec::new();
            }
            p.split(|b| *b == b'/').map(<[u8]>::to_vec).collect()
        };
        groups.sort_by_key(key);
    }
    let describe = |name: &str| {
        if name.is_empty() {
            "current directory".to_string()
        } else {
            format!("snapshot {name}")
        }
    };
    let root = if both_snapshots {
        dir.to_string()
    } else {
        report.snapshot_root.clone()
    };
    println!(
        "Difference between {} and {} under directory {root}:",
        describe(&from),
        describe(&to)
    );
    for e in groups.into_iter().flatten() {
        match &e.target_path {
            Some(t) => println!(
                "{}\t{} -> {}",
                e.modification_label,
                entry_path(&e.fullpath),
                entry_path(t)
            ),
            None => println!("{}\t{}", e.modification_label, entry_path(&e.fullpath)),
        }
    }
    println!();
    0
}
