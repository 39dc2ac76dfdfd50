//! Copy-on-truncate (HDFS's `shouldCopyOnTruncate`): a truncate inside a
//! block a snapshot still sees goes to a new block, the snapshot keeps the
//! old one whole; the commit swaps the blocks, journal and image rebuild
//! both states, and the old block is freed with the last snapshot holding it.

use super::snapshot_tests::{
    allow, append, assert_rebuilds, del_snap, len, mkdir, read_blocks, snap,
};
use super::tests::{ns, root, NOW};
use super::truncate_concat_tests::file;
use super::*;

/// Truncates `p` to `to` inside a block: the recovery it needs.
fn truncate_inside(
    n: &mut Namespace,
    log: &mut Vec<Edit>,
    p: &str,
    to: i64,
) -> (INodeId, truncate::TruncateRecovery) {
    let (t, e) = n
        .truncate(&root(), p, to, "c", "m", NOW + 5)
        .expect("truncate");
    log.extend(e);
    assert!(!t.done, "a cut inside a block waits for its recovery");
    (t.file, t.recovery.expect("a recovery"))
}

fn commit(
    n: &mut Namespace,
    log: &mut Vec<Edit>,
    file: INodeId,
    old: BlockId,
    rec: BlockRecord,
) -> Vec<BlockId> {
    log.extend(
        n.commit_block_synchronization(file, old, rec.gs, rec.num_bytes, false, NOW + 9)
            .expect("commit"),
    );
    n.take_freed_blocks()
}

#[test]
fn a_cut_inside_a_snapshotted_block_copies_it_to_a_new_block() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d");
    let f = file(&mut n, &mut log, "/d/f", 1024, &[1024, 1024, 512]);
    allow(&mut n, &mut log, "/d");
    snap(&mut n, &mut log, "/d", "s1");
    let (id, rec) = truncate_inside(&mut n, &mut log, "/d/f", 1500);
    assert_eq!(rec.block, f[1]);
    assert_ne!(rec.target.id, f[1].id, "a new block id");
    assert!(rec.target.id.0 > f[2].id.0);
    assert!(rec.target.gs > f[2].gs, "a new generation stamp");
    assert_eq!(rec.target.num_bytes, 476);
    // While the recovery runs: the journal and the image keep it.
    assert_eq!(n.truncate_block_of(id), Some(rec.target));
    assert_rebuilds(&n, &log);
    // The same truncate again is the one under way.
    let (t, e) = n
        .truncate(&root(), "/d/f", 1500, "c", "m", NOW + 6)
        .expect("again");
    assert!(!t.done && e.is_none());
    // A recovery started again keeps the new block, with a newer stamp.
    let (old, again, e) = n
        .begin_block_recovery(id)
        .expect("restart")
        .expect("has blocks");
    log.push(e);
    assert_eq!(old, f[1]);
    assert_eq!(again.id, rec.target.id);
    assert!(again.gs > rec.target.gs);
    let freed = commit(&mut n, &mut log, id, f[1].id, again);
    assert!(freed.is_empty(), "the snapshot holds the old block");
    assert_eq!(read_blocks(&n, "/d/f"), vec![f[0], again]);
    assert_eq!(len(&n, "/d/f"), Some(1500));
    assert_eq!(read_blocks(&n, "/d/.snapshot/s1/f"), f);
    assert_eq!(len(&n, "/d/.snapshot/s1/f"), Some(2560));
    assert_rebuilds(&n, &log);
    // An append continues the new block; the snapshot is unchanged.
    append(&mut n, &mut log, "/d/f", 100);
    assert_eq!(len(&n, "/d/f"), Some(1600));
    assert_eq!(read_blocks(&n, "/d/.snapshot/s1/f"), f);
    assert_rebuilds(&n, &log);
    let mut freed = del_snap(&mut n, &mut log, "/d", "s1");
    freed.sort();
    assert_eq!(freed, vec![f[1].id, f[2].id]);
    assert_rebuilds(&n, &log);
}

#[test]
fn a_block_no_snapshot_sees_is_cut_in_place() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d");
    allow(&mut n, &mut log, "/d");
    snap(&mut n, &mut log, "/d", "s1");
    // Created after the snapshot: no snapshot sees its blocks.
    let f = file(&mut n, &mut log, "/d/f", 1024, &[1024, 512]);
    let (id, rec) = truncate_inside(&mut n, &mut log, "/d/f", 1100);
    assert_eq!(rec.target.id, f[1].id);
    assert!(commit(&mut n, &mut log, id, f[1].id, rec.target).is_empty());
    assert_eq!(read_blocks(&n, "/d/f")[1].id, f[1].id);
    assert_eq!(len(&n, "/d/f"), Some(1100));
    assert_rebuilds(&n, &log);
}

#[test]
fn a_block_appended_to_after_the_snapshot_is_still_copied() {
    // HDFS copies whenever the latest snapshot lists the block, even when
    // the cut keeps every byte the snapshot saw.
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d");
    let f = file(&mut n, &mut log, "/d/f", 1024, &[1024, 100]);
    allow(&mut n, &mut log, "/d");
    snap(&mut n, &mut log, "/d", "s1");
    append(&mut n, &mut log, "/d/f", 200);
    let (id, rec) = truncate_inside(&mut n, &mut log, "/d/f", 1200);
    assert_ne!(rec.target.id, f[1].id);
    assert_eq!(rec.target.num_bytes, 176);
    commit(&mut n, &mut log, id, f[1].id, rec.target);
    assert_eq!(len(&n, "/d/.snapshot/s1/f"), Some(1124));
    assert_eq!(len(&n, "/d/f"), Some(1200));
    assert_eq!(read_blocks(&n, "/d/.snapshot/s1/f")[1].id, f[1].id);
    assert_rebuilds(&n, &log);
}

#[test]
fn the_old_block_goes_when_its_snapshot_went_during_the_recovery() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d");
    let f = file(&mut n, &mut log, "/d/f", 1024, &[1024, 512]);
    allow(&mut n, &mut log, "/d");
    snap(&mut n, &mut log, "/d", "s1");
    let (id, rec) = truncate_inside(&mut n, &mut log, "/d/f", 1100);
    assert_ne!(rec.target.id, f[1].id);
    // The file still has the old block: deleting the snapshot frees nothing.
    assert!(del_snap(&mut n, &mut log, "/d", "s1").is_empty());
    let freed = commit(&mut n, &mut log, id, f[1].id, rec.target);
    assert_eq!(freed, vec![f[1].id]);
    assert_eq!(read_blocks(&n, "/d/f"), vec![f[0], rec.target]);
    assert_rebuilds(&n, &log);
}
