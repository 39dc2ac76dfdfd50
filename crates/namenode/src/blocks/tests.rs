//! Unit tests of the block manager: replication work, corrupt replicas,
//! completeness, reports, and blocks following their file (concat).

use super::*;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

#[test]
fn replication_work_copies_the_most_endangered_first_and_trims_excess() {
    let mut bm = BlockManager::default();
    let now = std::time::Instant::now();
    // Block 1: one replica of three; block 2: two of three; block 3: four of three.
    bm.add_block(BlockId(1), GenStamp(1), INodeId(10), vec![]);
    bm.add_block(BlockId(2), GenStamp(1), INodeId(10), vec![]);
    bm.add_block(BlockId(3), GenStamp(1), INodeId(10), vec![]);
    bm.replica_reported(&dn("a"), "s", BlockId(1), GenStamp(1), 5, true);
    for d in ["a", "b"] {
        bm.replica_reported(&dn(d), "s", BlockId(2), GenStamp(1), 5, true);
    }
    for d in ["a", "b", "c", "d"] {
        bm.replica_reported(&dn(d), "s", BlockId(3), GenStamp(1), 5, true);
    }
    let mut chosen = Vec::new();
    let work = bm.compute_replication_work(
        now,
        std::time::Duration::from_secs(60),
        1,
        &|_| Some(3),
        &|_| true,
        &|_| true,
        &mut |c| {
            chosen.push(c.holders.len());
            (0..c.want).map(|i| dn(&format!("new{i}"))).collect()
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
            .contains(&(BlockId(3), GenStamp(1))),
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
        &mut |c| (0..c.want).map(|i| dn(&format!("x{i}"))).collect(),
        &|_| 0,
    );
    assert_eq!(again.scheduled, 0, "both copies are under way");
}

#[test]
fn decommissioning_nodes_are_sources_but_do_not_count() {
    let mut bm = BlockManager::default();
    bm.add_block(BlockId(1), GenStamp(1), INodeId(10), vec![]);
    for d in ["a", "b", "c"] {
        bm.replica_reported(&dn(d), "s", BlockId(1), GenStamp(1), 5, true);
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
        &mut |c| (0..c.want).map(|i| dn(&format!("new{i}"))).collect(),
        &|_| 0,
    );
    assert_eq!(work.scheduled, 1);
    bm.replica_reported(&dn("new0"), "s", BlockId(1), GenStamp(1), 5, true);
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
        gs: GenStamp(1001),
        num_bytes: 100,
    };
    bm.add_block(b.id, b.gs, INodeId(16386), vec![dn("a")]);
    assert!(!bm.is_complete(&b, 1));
    assert_eq!(bm.locations(b.id), vec![(dn("a"), None)]);
    bm.replica_reported(&dn("a"), "DS-a", b.id, GenStamp(1001), 99, true);
    assert!(!bm.is_complete(&b, 1), "short replica");
    bm.replica_reported(&dn("a"), "DS-a", b.id, GenStamp(1001), 100, true);
    assert!(bm.is_complete(&b, 1));
    assert!(!bm.is_complete(&b, 2));
}

#[test]
fn unknown_and_stale_replicas_are_invalidated() {
    let mut bm = BlockManager::default();
    bm.add_block(BlockId(1), GenStamp(1005), INodeId(16386), vec![]);
    assert_eq!(
        bm.replica_reported(&dn("a"), "s", BlockId(9), GenStamp(1), 1, true),
        ReportOutcome::Invalidate
    );
    assert_eq!(
        bm.replica_reported(&dn("a"), "s", BlockId(1), GenStamp(1004), 1, true),
        ReportOutcome::Invalidate
    );
    assert_eq!(bm.take_invalidations(&dn("a"), 10).len(), 2);
    assert!(bm.take_invalidations(&dn("a"), 10).is_empty());
}

#[test]
fn a_standby_queues_no_deletions_and_a_new_active_starts_fresh() {
    let mut bm = BlockManager::default();
    bm.add_block(BlockId(1), GenStamp(1005), INodeId(16386), vec![]);
    // Active: an unknown replica is queued for deletion.
    bm.replica_reported(&dn("a"), "s", BlockId(9), GenStamp(1), 1, true);
    assert!(!bm.set_active(false));
    // Turning standby dropped it; as standby, unknown (maybe newer than
    // this NameNode's namespace) and stale replicas are left alone.
    bm.replica_reported(&dn("a"), "s", BlockId(8), GenStamp(1), 1, true);
    bm.replica_reported(&dn("a"), "s", BlockId(1), GenStamp(1004), 1, true);
    bm.remove_blocks(&[BlockId(1)]);
    assert_eq!(bm.pending_deletions(), 0);
    assert!(bm.set_active(true));
    assert!(bm.take_invalidations(&dn("a"), 10).is_empty());
    // Active again: deletions are queued as before.
    bm.replica_reported(&dn("a"), "s", BlockId(7), GenStamp(1), 1, true);
    assert_eq!(bm.take_invalidations(&dn("a"), 10).len(), 1);
}

#[test]
fn full_reports_replace_a_nodes_replicas_and_deletes_queue_invalidations() {
    let mut bm = BlockManager::default();
    for i in 1..=3 {
        bm.add_block(BlockId(i), GenStamp(1001), INodeId(16386), vec![]);
        bm.replica_reported(&dn("a"), "s", BlockId(i), GenStamp(1001), 10, true);
    }
    let (ok, bad) = bm.full_report(
        &dn("a"),
        "s",
        &[
            (BlockId(1), GenStamp(1001), 10, true),
            (BlockId(7), GenStamp(1), 1, true),
        ],
        &|_, _| None,
    );
    assert_eq!((ok, bad), (1, 1));
    assert_eq!(bm.replica_count(BlockId(1)), 1);
    assert_eq!(bm.replica_count(BlockId(2)), 0);
    bm.remove_blocks(&[BlockId(1)]);
    let inv = bm.take_invalidations(&dn("a"), 10);
    assert!(
        inv.contains(&(BlockId(1), GenStamp(1001))) && inv.contains(&(BlockId(7), GenStamp(1)))
    );
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
        &mut |c| {
            nodes
                .iter()
                .filter(|d| !c.holders.contains(d))
                .take(c.want)
                .cloned()
                .collect()
        },
        &|_| 0,
    )
}

#[test]
fn corrupt_replicas_are_hidden_recopied_then_deleted() {
    let mut bm = BlockManager::default();
    bm.add_block(BlockId(1), GenStamp(7), INodeId(10), vec![]);
    for d in ["a", "b", "c"] {
        bm.replica_reported(&dn(d), "s", BlockId(1), GenStamp(7), 5, true);
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
    bm.replica_reported(&dn("c"), "s", BlockId(1), GenStamp(7), 5, true);
    assert!(bm.is_corrupt(&dn("c"), BlockId(1)));
    bm.replica_reported(&dn("d"), "s", BlockId(1), GenStamp(7), 5, true);
    let w = pass(&mut bm, &["a", "b", "c", "d"]);
    assert_eq!(
        (w.scheduled, w.corrupt_removed, w.excess_removed),
        (0, 1, 0)
    );
    assert_eq!(
        bm.take_invalidations(&dn("c"), 10),
        vec![(BlockId(1), GenStamp(7))]
    );
    assert_eq!(bm.corrupt_block_count(), 0);
    assert_eq!(bm.replica_count(BlockId(1)), 3);
}

#[test]
fn without_a_spare_node_the_corrupt_replica_makes_room_first() {
    let mut bm = BlockManager::default();
    bm.add_block(BlockId(1), GenStamp(7), INodeId(10), vec![]);
    for d in ["a", "b", "c"] {
        bm.replica_reported(&dn(d), "s", BlockId(1), GenStamp(7), 5, true);
    }
    bm.mark_corrupt(&dn("c"), BlockId(1));
    let w = pass(&mut bm, &["a", "b", "c"]);
    assert_eq!((w.scheduled, w.corrupt_removed), (0, 1));
    // Until "c" confirms the deletion, it gets no new copy: it deletes in
    // the background, and a copy arriving first would be deleted too.
    assert_eq!(pass(&mut bm, &["a", "b", "c"]).scheduled, 0);
    assert_eq!(
        bm.take_invalidations(&dn("c"), 10),
        vec![(BlockId(1), GenStamp(7))]
    );
    assert_eq!(
        pass(&mut bm, &["a", "b", "c"]).scheduled,
        0,
        "told, not done"
    );
    bm.replica_deleted(&dn("c"), BlockId(1));
    assert_eq!(pass(&mut bm, &["a", "b", "c"]).scheduled, 1);
    let t: Vec<Transfer> = ["a", "b"]
        .iter()
        .flat_map(|s| bm.take_transfers(&dn(s), 10))
        .collect();
    assert_eq!(t[0].targets, vec![dn("c")]);
}

#[test]
fn a_full_report_without_the_block_confirms_its_deletion() {
    let mut bm = BlockManager::default();
    bm.add_block(BlockId(1), GenStamp(7), INodeId(10), vec![]);
    for d in ["a", "b", "c"] {
        bm.replica_reported(&dn(d), "s", BlockId(1), GenStamp(7), 5, true);
    }
    bm.mark_corrupt(&dn("c"), BlockId(1));
    pass(&mut bm, &["a", "b", "c"]);
    assert_eq!(
        bm.take_invalidations(&dn("c"), 10),
        vec![(BlockId(1), GenStamp(7))]
    );
    assert_eq!(pass(&mut bm, &["a", "b", "c"]).scheduled, 0);
    bm.full_report(&dn("c"), "s", &[], &|_, _| Some((GenStamp(7), 5)));
    assert_eq!(pass(&mut bm, &["a", "b", "c"]).scheduled, 1);
}

#[test]
fn all_corrupt_replicas_are_handed_out_marked_and_kept() {
    let mut bm = BlockManager::default();
    bm.add_block(BlockId(1), GenStamp(7), INodeId(10), vec![]);
    for d in ["a", "b"] {
        bm.replica_reported(&dn(d), "s", BlockId(1), GenStamp(7), 5, true);
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
    bm.add_block(BlockId(1), GenStamp(7), INodeId(10), vec![]);
    bm.add_block(BlockId(2), GenStamp(7), INodeId(11), vec![]);
    let committed =
        |file: INodeId, _id: BlockId| (file == INodeId(10)).then_some((GenStamp(7), 100));
    bm.full_report(
        &dn("a"),
        "s",
        &[
            (BlockId(1), GenStamp(7), 99, true),
            (BlockId(2), GenStamp(7), 3, true),
        ],
        &committed,
    );
    assert!(bm.is_corrupt(&dn("a"), BlockId(1)));
    assert!(
        !bm.is_corrupt(&dn("a"), BlockId(2)),
        "file 11 is being written"
    );
    bm.full_report(
        &dn("b"),
        "s",
        &[(BlockId(1), GenStamp(7), 100, true)],
        &committed,
    );
    assert!(!bm.is_corrupt(&dn("b"), BlockId(1)));
    assert_eq!(bm.replica_count(BlockId(1)), 1);
}

#[test]
fn moved_blocks_take_the_replication_of_their_new_file() {
    // concat: the block of a replication-1 source now belongs to a
    // replication-3 target, so the monitor copies it.
    let mut bm = BlockManager::default();
    bm.add_block(BlockId(1), GenStamp(7), INodeId(10), vec![]);
    bm.replica_reported(&dn("a"), "s", BlockId(1), GenStamp(7), 5, true);
    let repl = |f: INodeId| Some(if f == INodeId(20) { 3 } else { 1 });
    let run = |bm: &mut BlockManager| {
        bm.compute_replication_work(
            std::time::Instant::now(),
            std::time::Duration::from_secs(60),
            10,
            &repl,
            &|_| true,
            &|_| true,
            &mut |c| (0..c.want).map(|i| dn(&format!("n{i}"))).collect(),
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

/// A small deterministic generator (xorshift64*), for event sequences.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

/// What the index, the safe-mode tally and the queue must agree with,
/// counted from the replicas themselves.
fn check_against_recount(bm: &BlockManager, view: &BlockView<'_>, min: usize) {
    let mut on_node: HashMap<DatanodeUuid, HashSet<BlockId>> = HashMap::new();
    let mut safe = 0u64;
    for s in bm.blocks.values() {
        let id = s.id;
        let slot = bm.blocks.slot_of(id).expect("found by its id");
        for r in s.replicas.iter() {
            assert!(bm.nodes.is_held(r.node, slot), "{id} in its node's set");
            on_node
                .entry(bm.nodes.uuid(r.node).clone())
                .or_default()
                .insert(id);
        }
        let counted = bm.safe_lens.get(&id).copied();
        let good = s
            .replicas
            .iter()
            .filter(|r| r.is_good(s.gs()) && Some(r.num_bytes) == counted.map(|c| c.len))
            .count();
        let is_safe = counted.is_some() && good >= min;
        assert_eq!(
            counted.is_some_and(|c| c.safe),
            is_safe,
            "safe flag of {id}"
        );
        safe += u64::from(is_safe);
        let want = (view.replication_of)(s.file).unwrap_or(0);
        let uuid = |r: &super::Replica| bm.nodes.uuid(r.node);
        let live = s
            .replicas
            .iter()
            .filter(|r| r.is_good(s.gs()) && (view.counts)(uuid(r)))
            .count();
        let out = s
            .replicas
            .iter()
            .filter(|r| r.is_good(s.gs()) && !(view.counts)(uuid(r)) && (view.readable)(uuid(r)))
            .count();
        assert_eq!(bm.queue_level(id), priority(live, out, want), "block {id}");
    }
    let index: HashMap<DatanodeUuid, HashSet<BlockId>> = bm
        .nodes
        .holding()
        .map(|(d, _)| {
            let n = bm.nodes.find(d).expect("indexed");
            let ids = bm.nodes.held(n);
            let ids = ids.map(|slot| bm.blocks.at(slot).expect("live slot").id);
            (d.clone(), ids.collect())
        })
        .collect();
    assert_eq!(index, on_node, "per-node index");
    let total = bm
        .blocks
        .values()
        .filter(|s| bm.safe_lens.contains_key(&s.id))
        .count() as u64;
    assert_eq!(bm.safe_tally(), Some((total, safe)), "safe-mode tally");
}

#[test]
fn index_tally_and_queue_agree_with_a_recount_after_random_events() {
    // Goal: after any sequence of reports, deletions, corruptions, full
    // reports, node removals and block deletions, the per-node index, the
    // start-up safe-mode count and the queue (once changed blocks are
    // judged) equal what a brute-force recount of the replicas gives.
    let nodes = ["a", "b", "c", "d", "e"];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut bm = BlockManager::default();
    let mut complete = Vec::new();
    for id in 1..=60u64 {
        bm.add_block(BlockId(id), GenStamp(5), INodeId(id % 4), vec![]);
        complete.push(BlockRecord {
            id: BlockId(id),
            gs: GenStamp(5),
            num_bytes: 10,
        });
    }
    bm.start_safe_tally(2, &complete);
    let repl = |f: INodeId| Some(1 + (f.0 as usize % 4));
    let counts = |d: &DatanodeUuid| d.0 != "e";
    let readable = |_: &DatanodeUuid| true;
    let view = BlockView {
        replication_of: &repl,
        counts: &counts,
        readable: &readable,
    };
    for step in 0..3000 {
        let node = dn(nodes[rng.below(5) as usize]);
        let id = BlockId(1 + rng.below(64));
        match rng.below(10) {
            0..=3 => {
                let len = if rng.below(8) == 0 { 9 } else { 10 };
                let gs = GenStamp(4 + rng.below(3));
                bm.replica_reported(&node, "s", id, gs, len, rng.below(6) != 0);
            }
            4 => bm.replica_deleted(&node, id),
            5 => {
                bm.mark_corrupt(&node, id);
            }
            6 => {
                let listed: Vec<(BlockId, GenStamp, u64, bool)> = (0..rng.below(30))
                    .map(|_| (BlockId(1 + rng.below(64)), GenStamp(5), 10, true))
                    .collect();
                bm.full_report(&node, "s", &listed, &|_, _| Some((GenStamp(5), 10)));
            }
            7 if rng.below(10) == 0 => bm.remove_datanode(&node),
            8 if rng.below(10) == 0 => bm.remove_blocks(&[id]),
            _ => bm.update_generation_stamp(id, GenStamp(5), None),
        }
        if step % 50 == 0 {
            let mut w = ReplicationWork::default();
            bm.judge_changed(usize::MAX, &view, &|_| 0, &mut w);
            check_against_recount(&bm, &view, 2);
        }
    }
}

#[test]
fn blocks_are_queued_at_hdfs_priorities_and_taken_round_robin() {
    // Goal: LowRedundancyBlocks' levels (one live replica or only
    // out-of-service ones: highest; live*3 < wanted: very low; else low;
    // none at all: corrupt), and the monitor takes the highest level
    // first, a bounded number at a time, resuming where it stopped.
    assert_eq!(priority(3, 0, 3), None);
    assert_eq!(priority(1, 0, 3), Some(QUEUE_HIGHEST_PRIORITY));
    assert_eq!(priority(0, 2, 3), Some(QUEUE_HIGHEST_PRIORITY));
    assert_eq!(priority(0, 0, 3), Some(QUEUE_WITH_CORRUPT_BLOCKS));
    assert_eq!(priority(2, 0, 7), Some(QUEUE_VERY_LOW_REDUNDANCY));
    assert_eq!(priority(2, 0, 6), Some(QUEUE_LOW_REDUNDANCY));
    assert_eq!(priority(2, 0, 3), Some(QUEUE_LOW_REDUNDANCY));
    let mut q = queue::LowRedundancy::default();
    for id in 1..=5 {
        q.set(BlockId(id), Some(QUEUE_LOW_REDUNDANCY));
    }
    q.set(BlockId(9), Some(QUEUE_HIGHEST_PRIORITY));
    q.set(BlockId(8), Some(QUEUE_WITH_CORRUPT_BLOCKS));
    let ids = |v: Vec<(usize, BlockId)>| v.into_iter().map(|(_, b)| b.0).collect::<Vec<_>>();
    assert_eq!(ids(q.choose(3)), vec![9, 1, 2]);
    assert_eq!(ids(q.choose(3)), vec![9, 3, 4]);
    assert_eq!(ids(q.choose(4)), vec![9, 5, 1, 2], "wraps round");
    q.set(BlockId(9), Some(QUEUE_LOW_REDUNDANCY));
    assert_eq!(q.level(BlockId(9)), Some(QUEUE_LOW_REDUNDANCY));
    assert_eq!(q.copyable(), 6);
    assert_eq!(q.len_at(QUEUE_WITH_CORRUPT_BLOCKS), 1);
    assert!(
        !ids(q.choose(100)).contains(&8),
        "corrupt blocks are not copied"
    );
}

#[test]
fn a_node_leaving_or_reporting_touches_only_its_own_replicas() {
    // Goal: with 2000 blocks, of which node "a" holds 10, removing "a" or
    // a full report from it marks only its blocks for the monitor, a
    // steady-state report (nothing changed) marks none, and the monitor
    // then judges just those.
    let mut bm = BlockManager::default();
    for id in 1..=2000u64 {
        bm.add_block(BlockId(id), GenStamp(1), INodeId(10), vec![]);
        for d in ["b", "c"] {
            bm.replica_reported(&dn(d), "s", BlockId(id), GenStamp(1), 5, true);
        }
    }
    let mine: Vec<(BlockId, GenStamp, u64, bool)> = (1..=10)
        .map(|id| (BlockId(id), GenStamp(1), 5, true))
        .collect();
    bm.full_report(&dn("a"), "s", &mine, &|_, _| Some((GenStamp(1), 5)));
    let view = BlockView {
        replication_of: &|_| Some(3),
        counts: &|_| true,
        readable: &|_| true,
    };
    let mut w = ReplicationWork::default();
    assert_eq!(bm.judge_changed(usize::MAX, &view, &|_| 0, &mut w), 0);
    assert_eq!(w.under_replicated, 1990, "only a's blocks have three");
    // The same report again changes nothing.
    bm.full_report(&dn("a"), "s", &mine, &|_, _| Some((GenStamp(1), 5)));
    assert_eq!(bm.changed_count(), 0);
    // Three of them gone from the report: three blocks to judge.
    bm.full_report(&dn("a"), "s", &mine[3..], &|_, _| Some((GenStamp(1), 5)));
    assert_eq!(bm.changed_count(), 3);
    bm.judge_changed(usize::MAX, &view, &|_| 0, &mut w);
    bm.remove_datanode(&dn("a"));
    assert_eq!(bm.changed_count(), 7);
    bm.node_changed(&dn("b"));
    assert_eq!(bm.changed_count(), 2000);
}

#[test]
fn the_safe_mode_tally_follows_replicas_of_the_committed_length() {
    // Goal: start-up safe mode's count (HDFS's blockSafe) rises when a
    // block gets its minimum of good replicas of the committed length and
    // falls when one is lost, corrupt or its node goes; deleted blocks
    // leave the total.
    let mut bm = BlockManager::default();
    let recs: Vec<BlockRecord> = (1..=3)
        .map(|i| BlockRecord {
            id: BlockId(i),
            gs: GenStamp(7),
            num_bytes: 100,
        })
        .collect();
    for b in &recs {
        bm.add_block(b.id, b.gs, INodeId(10), vec![]);
    }
    bm.add_block(BlockId(4), GenStamp(7), INodeId(11), vec![]); // being written
    bm.start_safe_tally(1, &recs[..]);
    assert_eq!(bm.safe_tally(), Some((3, 0)));
    bm.replica_reported(&dn("a"), "s", BlockId(1), GenStamp(7), 99, true);
    assert_eq!(bm.safe_tally(), Some((3, 0)), "short replica");
    bm.replica_reported(&dn("a"), "s", BlockId(1), GenStamp(7), 100, true);
    bm.replica_reported(&dn("a"), "s", BlockId(2), GenStamp(7), 100, true);
    bm.replica_reported(&dn("a"), "s", BlockId(4), GenStamp(7), 100, true);
    assert_eq!(bm.safe_tally(), Some((3, 2)));
    bm.mark_corrupt(&dn("a"), BlockId(2));
    assert_eq!(bm.safe_tally(), Some((3, 1)));
    bm.remove_blocks(&[BlockId(1)]);
    assert_eq!(bm.safe_tally(), Some((2, 0)));
    bm.replica_reported(&dn("b"), "s", BlockId(3), GenStamp(7), 100, true);
    assert_eq!(bm.safe_tally(), Some((2, 1)));
    bm.remove_datanode(&dn("b"));
    assert_eq!(bm.safe_tally(), Some((2, 0)));
    bm.end_safe_tally();
    assert_eq!(bm.safe_tally(), None);
}

#[test]
fn a_pipeline_is_forgotten_once_committed_and_all_its_nodes_hold_good_replicas() {
    let mut bm = BlockManager::default();
    let pipeline = vec![dn("a"), dn("b"), dn("c")];
    bm.add_block(BlockId(1), GenStamp(1), INodeId(10), pipeline.clone());
    // Being written: replicas of other lengths, not finalized yet.
    for (d, len) in [("a", 3), ("b", 2)] {
        bm.replica_reported(&dn(d), "s", BlockId(1), GenStamp(1), len, false);
    }
    assert_eq!(bm.candidate_holders(BlockId(1)), pipeline);
    for d in ["a", "b", "c"] {
        bm.replica_reported(&dn(d), "s", BlockId(1), GenStamp(1), 5, true);
    }
    // Every node reported, but the writer has not committed the block (it
    // may have died before complete): a node that registers again loses
    // its replicas until its next full report, and lease recovery must
    // still find it.
    assert_eq!(bm.pipeline(BlockId(1)).len(), 3, "not committed yet");
    bm.remove_datanode(&dn("a"));
    assert_eq!(
        bm.candidate_holders(BlockId(1)),
        vec![dn("b"), dn("c"), dn("a")]
    );

    // Committed with a node missing: kept until that node reports again.
    bm.committed([BlockId(1)]);
    assert_eq!(bm.pipeline(BlockId(1)).len(), 3, "a has not reported again");
    bm.replica_reported(&dn("a"), "s", BlockId(1), GenStamp(1), 5, true);
    assert!(
        bm.pipelines.is_empty(),
        "committed and reported: nothing to keep"
    );
    assert_eq!(
        bm.candidate_holders(BlockId(1)),
        vec![dn("b"), dn("c"), dn("a")]
    );

    // Reopened (append): the new pipeline is uncommitted again, and
    // replicas of the old stamp do not count.
    bm.update_generation_stamp(BlockId(1), GenStamp(2), Some(pipeline.clone()));
    bm.committed([BlockId(1)]);
    assert_eq!(
        bm.pipeline(BlockId(1)).len(),
        3,
        "old-stamp replicas say nothing"
    );
    bm.update_generation_stamp(BlockId(1), GenStamp(3), Some(pipeline.clone()));
    for d in ["a", "b", "c"] {
        bm.replica_reported(&dn(d), "s", BlockId(1), GenStamp(3), 9, true);
    }
    assert_eq!(bm.pipeline(BlockId(1)).len(), 3, "reported, not committed");
    bm.committed([BlockId(1)]);
    assert!(bm.pipelines.is_empty());
}

#[test]
fn a_lease_recovery_keeps_the_old_stamp_and_may_start_again_after_its_timeout() {
    let mut bm = BlockManager::default();
    let file = INodeId(16390);
    let old = BlockRecord {
        id: BlockId(7),
        gs: GenStamp(1001),
        num_bytes: 100,
    };
    bm.add_block(old.id, old.gs, file, vec![dn("a")]);
    let recovery = |block: BlockRecord, new_gs: u64| Recovery {
        block,
        new_gs: GenStamp(new_gs),
        locations: vec![dn("a")],
        truncate: None,
    };
    bm.queue_recovery(dn("a"), recovery(old, 1002));
    assert!(bm.under_recovery(file));
    assert!(bm.recovery_pending(file, Duration::from_secs(90)));
    assert!(!bm.recovery_pending(file, Duration::ZERO), "timed out");
    // Started again (after the timeout): readers still get the first stamp.
    bm.queue_recovery(
        dn("a"),
        recovery(
            BlockRecord {
                gs: GenStamp(1002),
                ..old
            },
            1003,
        ),
    );
    assert_eq!(bm.stamp_before_recovery(file, old.id), Some(GenStamp(1001)));
    assert_eq!(bm.stamp_before_recovery(file, BlockId(8)), None);
    // ... and so do the DataNodes: the second command asks the replicas
    // for the stamp they hold, under the new recovery id.
    let sent: Vec<(u64, u64)> = bm
        .take_recoveries(&dn("a"))
        .iter()
        .map(|r| (r.block.gs.0, r.new_gs.0))
        .collect();
    assert_eq!(sent, [(1001, 1002), (1001, 1003)]);
    assert_eq!(
        bm.recovery_id(file),
        Some(GenStamp(1003)),
        "only the latest attempt may commit"
    );
    bm.recovery_done(file);
    assert!(!bm.under_recovery(file));
    assert_eq!(bm.stamp_before_recovery(file, old.id), None);
}
