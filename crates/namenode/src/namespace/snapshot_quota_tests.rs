//! What snapshots keep, as quota usage and content summaries, when a
//! kept directory was renamed away and its snapshot deleted (found by the
//! WebHDFS differential, seeds 1789-1796, and a probe run against HDFS
//! 3.4.1 and Cairn side by side; the figures below are HDFS's).

use super::snapshot_tests::{allow, del_snap, delete, mkdir, snap};
use super::tests::{root, NOW};
use super::truncate_concat_tests::file;
use super::*;

/// (namespace, storage space) of `path`'s quota usage.
fn usage(n: &Namespace, path: &str) -> (i64, i64) {
    let u = n.quota_usage(&root(), path).expect("quota usage").usage;
    (u.namespace, u.storage_space)
}

/// (directories, files, length, space, kept directories, kept files).
fn summary(n: &Namespace, path: &str) -> (u64, u64, u64, u64, u64, u64) {
    let s = n.content_summary(&root(), path).expect("summary");
    (
        s.directory_count,
        s.file_count,
        s.length,
        s.space_consumed,
        s.snapshot.directory_count,
        s.snapshot.file_count,
    )
}

#[test]
fn a_directory_renamed_away_counts_at_its_old_place_as_its_snapshot_saw_it() {
    let mut n = Namespace::new("hdfs", "supergroup", NOW, Limits::default());
    let mut log = Vec::new();
    // Another tree's snapshot, taken first: its id is older than every
    // snapshot of /qz/s.
    mkdir(&mut n, &mut log, "/other");
    allow(&mut n, &mut log, "/other");
    snap(&mut n, &mut log, "/other", "o1");

    mkdir(&mut n, &mut log, "/qz/s/a/x/y");
    file(&mut n, &mut log, "/qz/s/a/x/f0", 1024, &[5]);
    allow(&mut n, &mut log, "/qz/s");
    log.extend(
        n.set_quota(&root(), "/qz/s/a", 100, -1, None)
            .expect("quota"),
    );
    snap(&mut n, &mut log, "/qz/s", "s1");
    assert_eq!(usage(&n, "/qz/s/a"), (4, 15));
    log.push(
        n.rename2(&root(), "/qz/s/a/x", "/qz/x", false, NOW)
            .expect("rename")
            .0,
    );
    assert_eq!(usage(&n, "/qz/s/a"), (4, 15));
    assert_eq!(summary(&n, "/qz/s/a"), (3, 1, 5, 15, 2, 1));

    // What is added at the new place does not count at the old one.
    file(&mut n, &mut log, "/qz/x/f1", 1024, &[10]);
    mkdir(&mut n, &mut log, "/qz/x/z");
    assert_eq!(usage(&n, "/qz/s/a"), (4, 15));
    assert_eq!(summary(&n, "/qz/s/a"), (3, 1, 5, 15, 2, 1));

    // Deleted at the new place, kept for s1 there too.
    delete(&mut n, &mut log, "/qz/x/f0");
    assert_eq!(usage(&n, "/qz/s/a"), (4, 15));
    assert_eq!(usage(&n, "/qz/x"), (5, 45));

    // With s1 gone nothing keeps the old place's view, nor f0; the other
    // tree's older snapshot does not keep them either.
    snap(&mut n, &mut log, "/qz/s", "s2");
    del_snap(&mut n, &mut log, "/qz/s", "s1");
    assert_eq!(usage(&n, "/qz/s/a"), (1, 0));
    assert_eq!(summary(&n, "/qz/s/a"), (1, 0, 0, 0, 0, 0));
    assert_eq!(usage(&n, "/qz/x"), (4, 30));

    let mut again = Namespace::new("hdfs", "supergroup", NOW, Limits::default());
    for e in &log {
        again.apply(e).expect("replay");
    }
    assert_eq!(usage(&again, "/qz/s/a"), (1, 0));
    assert_eq!(usage(&again, "/qz/x"), (4, 30));
}
