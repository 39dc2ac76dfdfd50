//! HDFS's order of names (signed bytes, `name_order`) wherever names come
//! out in order: listings and their pages, a directory's snapshots, a
//! snapshot's view of a directory, and snapshot diff reports; kept by
//! journal replay.

use super::snapshot_tests::{allow, mkdir, snap};
use super::tests::{ns, root, NOW};
use super::*;

/// In HDFS's order: non-ASCII first (negative bytes), then ASCII.
const ORDERED: [&str; 5] = ["é", "日本", "B", "a", "zz"];

fn names(listing: Option<Listing>) -> Vec<String> {
    listing
        .expect("a directory")
        .entries
        .into_iter()
        .map(|e| e.name)
        .collect()
}

#[test]
fn listings_snapshots_and_diffs_come_in_hdfs_order() {
    let mut n = Namespace::new("hdfs", "supergroup", NOW, Limits::default());
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d");
    allow(&mut n, &mut log, "/d");
    for name in ["zz", "a", "日本", "B", "é"] {
        mkdir(&mut n, &mut log, &format!("/d/{name}"));
    }
    let listing = n.get_listing(&root(), "/d", "", 100).expect("listing");
    assert_eq!(names(listing), ORDERED);
    // Pages start after a name in the same order.
    let page = n.get_listing(&root(), "/d", "é", 2).expect("page");
    assert_eq!(names(page), ["日本", "B"]);

    for s in ["zz", "é", "a"] {
        snap(&mut n, &mut log, "/d", s);
    }
    let snapshots: Vec<String> = n
        .snapshot_listing_of(&root(), "/d")
        .expect("snapshots")
        .into_iter()
        .map(|s| s.status.name)
        .collect();
    assert_eq!(snapshots, ["é", "a", "zz"]);
    let kept = n
        .get_listing(&root(), "/d/.snapshot", "", 100)
        .expect(".snapshot");
    assert_eq!(names(kept), ["é", "a", "zz"]);

    // A snapshot's view of the directory, after the live one changed.
    for name in ["a", "é"] {
        log.push(
            n.delete(&root(), &format!("/d/{name}"), true, NOW + 1)
                .expect("delete")
                .expect("existed")
                .0,
        );
    }
    mkdir(&mut n, &mut log, "/d/ü");
    let view = n
        .get_listing(&root(), "/d/.snapshot/zz", "", 100)
        .expect("view");
    assert_eq!(names(view), ORDERED);
    let view = n
        .get_listing(&root(), "/d/.snapshot/zz", "日本", 100)
        .expect("view page");
    assert_eq!(names(view), ["B", "a", "zz"]);

    let report = n
        .snapshot_diff_report(&root(), "/d", "zz", "")
        .expect("diff");
    let entries: Vec<String> = report
        .entries
        .iter()
        .map(|e| format!("{} {}", e.kind.label(), e.path))
        .collect();
    assert_eq!(entries, ["M ", "+ ü", "- é", "- a"]);

    // Replayed from its journal, the namespace keeps the same order.
    let mut again = Namespace::new("hdfs", "supergroup", NOW, Limits::default());
    for e in &log {
        again.apply(e).expect("replay");
    }
    let listing = again.get_listing(&root(), "/d", "", 100).expect("listing");
    assert_eq!(names(listing), ["ü", "日本", "B", "zz"]);
}

#[test]
fn snapshottable_directories_come_in_hdfs_order() {
    // HDFS sorts getSnapshottableDirListing by parent path, then name,
    // both as signed bytes: `/d/é` before `/d/a`, and `/é/x` before
    // `/d/a` but after `/x` (the WebHDFS differential, seed 1785, listed
    // `/wfz/a` before `/wfz/ü`).
    let mut n = ns();
    let mut log = Vec::new();
    for dir in ["/d/a", "/d/é", "/é/x", "/d/B", "/x"] {
        mkdir(&mut n, &mut log, dir);
        allow(&mut n, &mut log, dir);
    }
    let listed: Vec<String> = n
        .snapshottable_dirs(&root())
        .expect("a list")
        .into_iter()
        .map(|d| format!("{} {}", d.parent_path, d.status.name))
        .collect();
    assert_eq!(listed, ["/ x", "/é x", "/d é", "/d B", "/d a"]);
}
