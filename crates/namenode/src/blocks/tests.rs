//! Unit tests of the block manager: replication work, corrupt replicas,
//! completeness, reports, and blocks following their file (concat).

use super::*;

#[test]
fn replication_work_copies_the_most_endangered_first_and_trims_excess() {
    let mut bm = BlockManager::default();
    let now = std::time::Instant::now();
    // Block 1: one replica of three; block 2: two of three; block 3: four of three.
    bm.add_block(BlockId(1), 1, INodeId(10), vec![]);
    bm.add_block(BlockId(2), 1, INodeId(10), vec![]);
    bm.add_block(BlockId(3), 1, INodeId(10), vec![]);
    bm.replica_reported(&dn("a"), "s", BlockId(1), 1, 5, true);
    for d in ["a", "b"] {
        bm.replica_reported(&dn(d), "s", BlockId(2), 1, 5, true);
    }
    for d in ["a", "b", "c", "d"] {
        bm.replica_reported(&dn(d), "s", BlockId(3), 1, 5, true);
    }
    let mut chosen = Vec::new();
    let work = bm.compute_replication_work(
        now,
        std::time::Duration::from_secs(60),
        1,
        &|_| Some(3),
        &|_| true,
        &|_| true,
        &mut |n, holders| {
            chosen.push(holders.len());
            (0..n).map(|i| dn(&format!("new{i}"))).collect()
        },
        &|d| if d.0 == "d" { 0 } else { 100 },
    );
    // Block 1 (one replica) is scheduled first, from "a"; "a" then has
    // its one stream, so block 2 is copied from "b".
    assert_eq!(work.scheduled, 2);
    assert_eq!(work.excess_removed, 1);
    let t = bm.take_transfers(&dn("a"), 10);
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].block, BlockId(1));
    assert_eq!(t[0].targets.len(), 2);
    assert_eq!(bm.take_transfers(&dn("b"), 10)[0].block, BlockId(2));
    assert!(
        bm.take_invalidations(&dn("d"), 10)
            .contains(&(BlockId(3), 1)),
        "fullest node loses the excess"
    );
    // Nothing is scheduled twice while a copy is under way.
    let again = bm.compute_replication_work(
        now,
        std::time::Duration::from_secs(60),
        5,
        &|_| Some(3),
        &|_| true,
        &|_| true,
        &mut |n, _| (0..n).map(|i| dn(&format!("x{i}"))).collect(),
        &|_| 0,
    );
    assert_eq!(again.scheduled, 0, "both copies are under way");
}

#[test]
fn decommissioning_nodes_are_sources_but_do_not_count() {
    let mut bm = BlockManager::default();
    bm.add_block(BlockId(1), 1, INodeId(10), vec![]);
    for d in ["a", "b", "c"] {
        bm.replica_reported(&dn(d), "s", BlockId(1), 1, 5, true);
    }
    let counts = |d: &DatanodeUuid| d.0 != "a";
    assert!(!bm.fully_replicated_elsewhere(&dn("a"), &|_| Some(3), &counts));
    let work = bm.compute_replication_work(
        std::time::Instant::now(),
        std::time::Duration::from_secs(60),
        2,
        &|_| Some(3),
        &counts,
        &|_| true,
        &mut |n, _| (0..n).map(|i| dn(&format!("new{i}"))).collect(),
        &|_| 0,
    );
    assert_eq!(work.scheduled, 1);
    bm.replica_reported(&dn("new0"), "s", BlockId(1), 1, 5, true);
    assert!(bm.fully_replicated_elsewhere(&dn("a"), &|_| Some(3), &counts));
    assert!(
        !bm.fully_replicated_elsewhere(&dn("a"), &|_| None, &counts),
        "files being written are never safe"
    );
}

fn dn(s: &str) -> DatanodeUuid {
    DatanodeUuid(s.to_string())
}

#[test]
fn completeness_needs_a_finalized_replica_of_the_committed_length() {
    let mut bm = BlockManager::default();
    let b = BlockRecord {
        id: BlockId(1),
        gs: 1001,
        num_bytes: 100,
    };
    bm.add_block(b.id, b.gs, INodeId(16386), vec![dn("a")]);
    assert!(!bm.is_complete(&b, 1));
    assert_eq!(bm.locations(b.id), vec![(dn("a"), None)]);
    bm.replica_reported(&dn("a"), "DS-a", b.id, 1001, 99, true);
    assert!(!bm.is_complete(&b, 1), "short replica");
    bm.replica_reported(&dn("a"), "DS-a", b.id, 1001, 100, true);
    assert!(bm.is_complete(&b, 1));
    assert!(!bm.is_complete(&b, 2));
}

#[test]
fn unknown_and_stale_replicas_are_invalidated() {
    let mut bm = BlockManager::default();
    bm.add_block(BlockId(1), 1005, INodeId(16386), vec![]);
    assert_eq!(
        bm.replica_reported(&dn("a"), "s", BlockId(9), 1, 1, true),
        ReportOutcome::Invalidate
    );
    assert_eq!(
        bm.replica_reported(&dn("a"), "s", BlockId(1), 1004, 1, true),
        ReportOutcome::Invalidate
    );
    assert_eq!(bm.take_invalidations(&dn("a"), 10).len(), 2);
    assert!(bm.take_invalidations(&dn("a"), 10).is_empty());
}

#[test]
fn full_reports_replace_a_nodes_replicas_and_deletes_queue_invalidations() {
    let mut bm = BlockManager::default();
    for i in 1..=3 {
        bm.add_block(BlockId(i), 1001, INodeId(16386), vec![]);
        bm.replica_reported(&dn("a"), "s", BlockId(i), 1001, 10, true);
    }
    let (ok, bad) = bm.full_report(
        &dn("a"),
        "s",
        &[(BlockId(1), 1001, 10, true), (BlockId(7), 1, 1, true)],
        &|_, _| None,
    );
    assert_eq!((ok, bad), (1, 1));
    assert_eq!(bm.replica_count(BlockId(1)), 1);
    assert_eq!(bm.replica_count(BlockId(2)), 0);
    bm.remove_blocks(&[BlockId(1)]);
    let inv = bm.take_invalidations(&dn("a"), 10);
    assert!(inv.contains(&(BlockId(1), 1001)) && inv.contains(&(BlockId(7), 1)));
}

/// One pass of the monitor over a cluster of `nodes`, replication 3.
fn pass(bm: &mut BlockManager, nodes: &[&str]) -> ReplicationWork {
    let nodes: Vec<DatanodeUuid> = nodes.iter().map(|n| dn(n)).collect();
    bm.compute_replication_work(
        std::time::Instant::now(),
        std::time::Duration::from_secs(60),
        10,
        &|_| Some(3),
        &|_| true,
        &|_| true,
        &mut |n, holders| {
            nodes
                .iter()
                .filter(|d| !holders.contains(d))
                .take(n)
                .cloned()
                .collect()
        },
        &|_| 0,
    )
}

#[test]
fn corrupt_replicas_are_hidden_recopied_then_deleted() {
    let mut bm = BlockManager::default();
    bm.add_block(BlockId(1), 7, INodeId(10), vec![]);
    for d in ["a", "b", "c"] {
        bm.replica_reported(&dn(d), "s", BlockId(1), 7, 5, true);
    }
    assert_eq!(
        bm.mark_corrupt(&dn("c"), BlockId(1)),
        CorruptOutcome::Marked
    );
    assert_eq!(
        bm.mark_corrupt(&dn("z"), BlockId(1)),
        CorruptOutcome::UnknownReplica
    );
    assert_eq!(
        bm.mark_corrupt(&dn("c"), BlockId(2)),
        CorruptOutcome::UnknownBlock
    );
    // Never handed to readers, not live, counted in getFsStats.
    let locs: Vec<DatanodeUuid> = bm.locations(BlockId(1)).into_iter().map(|l| l.0).collect();
    assert_eq!(locs, vec![dn("a"), dn("b")]);
    assert!(!bm.all_corrupt(BlockId(1)));
    assert_eq!(bm.replica_count(BlockId(1)), 2);
    assert_eq!(bm.corrupt_block_count(), 1);
    // A fourth node gets a copy from a good replica; the corrupt one
    // stays until the copy is there.
    let w = pass(&mut bm, &["a", "b", "c", "d"]);
    assert_eq!((w.scheduled, w.corrupt_removed), (1, 0));
    let t: Vec<Transfer> = ["a", "b"]
        .iter()
        .flat_map(|s| bm.take_transfers(&dn(s), 10))
        .collect();
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].targets, vec![dn("d")]);
    assert!(
        bm.take_transfers(&dn("c"), 10).is_empty(),
        "never from the corrupt one"
    );
    assert!(bm.take_invalidations(&dn("c"), 10).is_empty());
    // Re-reported by its node, it is still corrupt.
    bm.replica_reported(&dn("c"), "s", BlockId(1), 7, 5, true);
    assert!(bm.is_corrupt(&dn("c"), BlockId(1)));
    bm.replica_reported(&dn("d"), "s", BlockId(1), 7, 5, true);
    let w = pass(&mut bm, &["a", "b", "c", "d"]);
    assert_eq!(
        (w.scheduled, w.corrupt_removed, w.excess_removed),
        (0, 1, 0)
    );
    assert_eq!(bm.take_invalidations(&dn("c"), 10), vec![(BlockId(1), 7)]);
    assert_eq!(bm.corrupt_block_count(), 0);
    assert_eq!(bm.replica_count(BlockId(1)), 3);
}

#[test]
fn without_a_spare_node_the_corrupt_replica_makes_room_first() {
    let mut bm = BlockManager::default();
    bm.add_block(BlockId(1), 7, INodeId(10), vec![]);
    for d in ["a", "b", "c"] {
        bm.replica_reported(&dn(d), "s", BlockId(1), 7, 5, true);
    }
    bm.mark_corrupt(&dn("c"), BlockId(1));
    let w = pass(&mut bm, &["a", "b", "c"]);
    assert_eq!((w.scheduled, w.corrupt_removed), (0, 1));
    // Until "c" has been told to delete, it gets no new copy.
    assert_eq!(pass(&mut bm, &["a", "b", "c"]).scheduled, 0);
    assert_eq!(bm.take_invalidations(&dn("c"), 10), vec![(BlockId(1), 7)]);
    assert_eq!(pass(&mut bm, &["a", "b", "c"]).scheduled, 1);
    let t: Vec<Transfer> = ["a", "b"]
        .iter()
        .flat_map(|s| bm.take_transfers(&dn(s), 10))
        .collect();
    assert_eq!(t[0].targets, vec![dn("c")]);
}

#[test]
fn all_corrupt_replicas_are_handed_out_marked_and_kept() {
    let mut bm = BlockManager::default();
    bm.add_block(BlockId(1), 7, INodeId(10), vec![]);
    for d in ["a", "b"] {
        bm.replica_reported(&dn(d), "s", BlockId(1), 7, 5, true);
        bm.mark_corrupt(&dn(d), BlockId(1));
    }
    assert_eq!(bm.locations(BlockId(1)).len(), 2);
    assert!(bm.all_corrupt(BlockId(1)));
    let w = pass(&mut bm, &["a", "b", "c"]);
    assert_eq!((w.missing, w.corrupt_removed, w.scheduled), (1, 0, 0));
    assert!(bm.take_invalidations(&dn("a"), 10).is_empty());
}

#[test]
fn a_full_report_with_the_wrong_length_marks_the_replica_corrupt() {
    let mut bm = BlockManager::default();
    bm.add_block(BlockId(1), 7, INodeId(10), vec![]);
    bm.add_block(BlockId(2), 7, INodeId(11), vec![]);
    let committed = |file: INodeId, _id: BlockId| (file == INodeId(10)).then_some((7, 100));
    bm.full_report(
        &dn("a"),
        "s",
        &[(BlockId(1), 7, 99, true), (BlockId(2), 7, 3, true)],
        &committed,
    );
    assert!(bm.is_corrupt(&dn("a"), BlockId(1)));
    assert!(
        !bm.is_corrupt(&dn("a"), BlockId(2)),
        "file 11 is being written"
    );
    bm.full_report(&dn("b"), "s", &[(BlockId(1), 7, 100, true)], &committed);
    assert!(!bm.is_corrupt(&dn("b"), BlockId(1)));
    assert_eq!(bm.replica_count(BlockId(1)), 1);
}

#[test]
fn moved_blocks_take_the_replication_of_their_new_file() {
    // concat: the block of a replication-1 source now belongs to a
    // replication-3 target, so the monitor copies it.
    let mut bm = BlockManager::default();
    bm.add_block(BlockId(1), 7, INodeId(10), vec![]);
    bm.replica_reported(&dn("a"), "s", BlockId(1), 7, 5, true);
    let repl = |f: INodeId| Some(if f == INodeId(20) { 3 } else { 1 });
    let run = |bm: &mut BlockManager| {
        bm.compute_replication_work(
            std::time::Instant::now(),
            std::time::Duration::from_secs(60),
            10,
            &repl,
            &|_| true,
            &|_| true,
            &mut |n, _| (0..n).map(|i| dn(&format!("n{i}"))).collect(),
            &|_| 0,
        )
    };
    assert_eq!(run(&mut bm).scheduled, 0);
    bm.set_file(&[BlockId(1), BlockId(99)], INodeId(20));
    assert_eq!(bm.file_of(BlockId(1)), Some(INodeId(20)));
    assert_eq!(bm.file_of(BlockId(99)), None, "unknown blocks are ignored");
    assert_eq!(run(&mut bm).scheduled, 1);
    assert_eq!(bm.take_transfers(&dn("a"), 10)[0].targets.len(), 2);
}
