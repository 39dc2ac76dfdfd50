//! The block states by id, in one dense slab like the inode table's
//! (`crate::id_slab`: a `Vec` of states, no per-block allocation, found
//! through a paged index of ids, which a NameNode hands out one after
//! another). A block's replicas live inline in its state (room for HDFS's
//! default replication of 3 without an allocation, sharing the block's
//! stamp and one length while they agree: [`Replicas`]), each naming its
//! DataNode and that node's storage in 4 bytes ([`Placed`]). Slots are
//! stable while a block lives, so the per-DataNode sets of blocks hold
//! slot numbers.

use smallvec::SmallVec;

use super::nodes::Placed;
use crate::id_slab::{IdSlab, Keyed};
use crate::namespace::{BlockId, GenStamp, INodeId};

/// One replica of a block on one DataNode storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Replica {
    pub gs: GenStamp,
    pub num_bytes: u64,
    /// The DataNode, an index into `Nodes`.
    pub node: u32,
    /// The storage, a number among that DataNode's storages in `Nodes`.
    pub storage: u32,
    /// Finalized on the DataNode (as opposed to being written).
    pub finalized: bool,
    /// Reported bad: never served while a good replica exists, not live.
    pub corrupt: bool,
}

impl Replica {
    /// Whether this replica counts towards the block's replication.
    pub fn is_good(&self, gs: GenStamp) -> bool {
        self.finalized && !self.corrupt && self.gs >= gs
    }

    fn placed(&self) -> Placed {
        Placed::new(self.node, self.storage)
    }
}

/// How many replicas a [`Replicas`] holds in its compact form; an enum so
/// that its spare values give the outer enums their tags for free.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Count {
    Zero,
    One,
    Two,
    Three,
}

impl Count {
    const ALL: [Count; 4] = [Count::Zero, Count::One, Count::Two, Count::Three];
}

/// A block's generation stamp and its replicas, in the order they were
/// first reported. In the steady state (up to three replicas of the
/// block's own stamp, all of one length, as after their block reports) the
/// stamp and length are kept once and each replica is 4 bytes of place
/// plus two bits: 32 bytes in all. Anything else (a block being written
/// to replicas of different lengths, a stale or over-replicated one)
/// keeps whole replicas in a boxed slice. Every change goes through
/// [`Replicas::edit`] or [`Replicas::set_gs`], which pick the form again.
#[derive(Debug, Clone)]
pub(super) struct Replicas(Form);

#[derive(Debug, Clone)]
enum Form {
    Shared {
        /// The block's stamp, and every replica's.
        gs: GenStamp,
        num_bytes: u64,
        count: Count,
        /// Bit `i`: replica `i` is finalized.
        finalized: u8,
        /// Bit `i`: replica `i` is corrupt.
        corrupt: u8,
        placed: [Placed; 3],
    },
    Each {
        /// The block's stamp; each replica has its own.
        gs: GenStamp,
        all: Box<[Replica]>,
    },
}

/// Replicas taken out of their compact form to be changed.
pub(super) type Unpacked = SmallVec<[Replica; 4]>;

impl Replicas {
    /// No replicas yet, of a block at stamp `gs`.
    pub fn new(gs: GenStamp) -> Self {
        Replicas::pack(gs, Unpacked::new())
    }

    /// The block's generation stamp.
    pub fn gs(&self) -> GenStamp {
        match &self.0 {
            Form::Shared { gs, .. } | Form::Each { gs, .. } => *gs,
        }
    }

    /// Gives the block a new stamp; its replicas keep theirs.
    pub fn set_gs(&mut self, gs: GenStamp) {
        if gs != self.gs() {
            *self = Replicas::pack(gs, self.iter().collect());
        }
    }

    pub fn len(&self) -> usize {
        match &self.0 {
            Form::Shared { count, .. } => *count as usize,
            Form::Each { all, .. } => all.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> Option<Replica> {
        match &self.0 {
            Form::Shared {
                gs,
                num_bytes,
                count,
                finalized,
                corrupt,
                placed,
            } => (i < *count as usize).then(|| Replica {
                gs: *gs,
                num_bytes: *num_bytes,
                node: placed[i].node(),
                storage: placed[i].storage(),
                finalized: finalized & (1 << i) != 0,
                corrupt: corrupt & (1 << i) != 0,
            }),
            Form::Each { all, .. } => all.get(i).copied(),
        }
    }

    /// Every replica, by value (the compact form has no `Replica` to lend).
    pub fn iter(&self) -> impl Iterator<Item = Replica> + Clone + '_ {
        (0..self.len()).filter_map(move |i| self.get(i))
    }

    /// Changes the replicas through a plain list, then stores them in the
    /// most compact form that holds them.
    pub fn edit<T>(&mut self, change: impl FnOnce(&mut Unpacked) -> T) -> T {
        let mut all: Unpacked = self.iter().collect();
        let out = change(&mut all);
        *self = Replicas::pack(self.gs(), all);
        out
    }

    fn pack(gs: GenStamp, all: Unpacked) -> Replicas {
        let num_bytes = all.first().map_or(0, |r| r.num_bytes);
        let shared = all.len() <= 3
            && all
                .iter()
                .all(|r| r.gs == gs && r.num_bytes == num_bytes && r.placed().holds(r));
        if !shared {
            return Replicas(Form::Each {
                gs,
                all: all.into_vec().into_boxed_slice(),
            });
        }
        let mut placed = [Placed::default(); 3];
        let (mut finalized, mut corrupt) = (0u8, 0u8);
        for (i, r) in all.iter().enumerate() {
            placed[i] = r.placed();
            finalized |= u8::from(r.finalized) << i;
            corrupt |= u8::from(r.corrupt) << i;
        }
        Replicas(Form::Shared {
            gs,
            num_bytes,
            count: Count::ALL[all.len()],
            finalized,
            corrupt,
            placed,
        })
    }

    pub fn push(&mut self, r: Replica) {
        self.edit(|all| all.push(r));
    }

    /// Replaces replica `i` (nothing if there is none).
    pub fn set(&mut self, i: usize, r: Replica) {
        self.edit(|all| {
            if let Some(old) = all.get_mut(i) {
                *old = r;
            }
        });
    }

    pub fn retain(&mut self, keep: impl FnMut(&Replica) -> bool) {
        let mut keep = keep;
        self.edit(|all| all.retain(|r| keep(r)));
    }
}

#[derive(Debug, Clone)]
pub(super) struct BlockState {
    pub id: BlockId,
    pub file: INodeId,
    /// Its committed length and whether start-up safe mode counts it
    /// safe, and the pipeline it was handed out with, live in side tables
    /// of the block manager (only blocks in start-up safe mode or handed
    /// out by this NameNode have them).
    pub replicas: Replicas,
}

impl BlockState {
    pub fn new(id: BlockId, gs: GenStamp, file: INodeId) -> Self {
        BlockState {
            id,
            file,
            replicas: Replicas::new(gs),
        }
    }

    /// The block's generation stamp.
    pub fn gs(&self) -> GenStamp {
        self.replicas.gs()
    }

    /// The position in `replicas` of the replica on DataNode `node`.
    pub fn replica_on(&self, node: u32) -> Option<usize> {
        self.replicas.iter().position(|r| r.node == node)
    }
}

/// The block states by id: a slab of states found through a paged id
/// index (`crate::id_slab`); a state keeps its slot while it lives, so the
/// per-DataNode lists name blocks by slot.
pub(super) type BlockTable = IdSlab<BlockState>;

impl Keyed for BlockState {
    type Key = BlockId;

    fn raw(key: BlockId) -> u64 {
        key.0
    }

    fn from_raw(raw: u64) -> BlockId {
        BlockId(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_replicas_fit_inline_in_a_compact_state() {
        // id and file (16); the block's stamp, the replicas' one length,
        // three 4-byte places, their count and two flag bytes (32); the
        // safe-mode figures and the pipeline are in side tables.
        assert_eq!(std::mem::size_of::<Option<BlockState>>(), 48);
    }

    fn replica(node: u32, gs: u64, num_bytes: u64) -> Replica {
        Replica {
            gs: GenStamp(gs),
            num_bytes,
            node,
            storage: node + 10,
            finalized: node.is_multiple_of(2),
            corrupt: node == 2,
        }
    }

    fn is_shared(r: &Replicas) -> bool {
        matches!(r.0, Form::Shared { .. })
    }

    #[test]
    fn replicas_keep_one_stamp_and_length_while_they_agree() {
        let mut r = Replicas::new(GenStamp(1001));
        assert!(r.is_empty() && is_shared(&r));
        for node in 0..3 {
            r.push(replica(node, 1001, 64));
        }
        assert!(is_shared(&r), "three agreeing replicas are compact");
        let all: Vec<Replica> = r.iter().collect();
        assert_eq!(
            all,
            (0..3).map(|n| replica(n, 1001, 64)).collect::<Vec<_>>()
        );

        // A replica of another length (still being written) keeps its own.
        r.set(1, replica(1, 1001, 10));
        assert!(!is_shared(&r));
        assert_eq!(r.get(1), Some(replica(1, 1001, 10)));
        assert_eq!(r.get(0), Some(replica(0, 1001, 64)), "the others unchanged");
        r.set(1, replica(1, 1001, 64));
        assert!(is_shared(&r), "agreeing again: compact again");

        // A fourth replica (over-replicated) does not fit the compact form.
        r.push(replica(3, 1001, 64));
        assert!(!is_shared(&r) && r.len() == 4);
        r.retain(|x| x.node != 0);
        assert!(is_shared(&r));
        assert_eq!(
            r.iter().map(|x| x.node).collect::<Vec<_>>(),
            vec![1, 2, 3],
            "order kept"
        );
        r.retain(|_| false);
        assert!(r.is_empty() && is_shared(&r));
        assert_eq!(r.gs(), GenStamp(1001));
    }

    #[test]
    fn a_new_block_stamp_leaves_the_replicas_theirs() {
        let mut r = Replicas::new(GenStamp(1001));
        for node in 0..2 {
            r.push(replica(node, 1001, 64));
        }
        r.set_gs(GenStamp(1002));
        assert_eq!(r.gs(), GenStamp(1002));
        assert!(!is_shared(&r), "replicas of another stamp than the block's");
        assert_eq!(
            r.iter().collect::<Vec<_>>(),
            (0..2).map(|n| replica(n, 1001, 64)).collect::<Vec<_>>()
        );
        // Reported again at the new stamp: compact again.
        for i in 0..2 {
            r.set(i, replica(i as u32, 1002, 64));
        }
        assert!(is_shared(&r));
        assert_eq!(r.get(1), Some(replica(1, 1002, 64)));
        // A replica ahead of the block (reported before the NameNode
        // learned the new stamp) keeps its own stamp too.
        r.set(0, replica(0, 1003, 64));
        assert!(!is_shared(&r));
        assert_eq!(r.get(0), Some(replica(0, 1003, 64)));
        assert_eq!(r.gs(), GenStamp(1002));
    }

    #[test]
    fn places_beyond_the_packed_range_keep_whole_replicas() {
        let mut r = Replicas::new(GenStamp(7));
        let far = Replica {
            node: u32::MAX - 1,
            storage: 5000,
            ..replica(0, 7, 64)
        };
        r.push(replica(0, 7, 64));
        r.push(far);
        assert!(!is_shared(&r), "a place that does not pack");
        assert_eq!(r.get(1), Some(far));
        r.retain(|x| x.node == 0);
        assert!(is_shared(&r));
    }

    #[test]
    fn finds_and_removes_by_the_states_own_id_and_reuses_slots() {
        let mut t = BlockTable::default();
        for id in 1..=1000u64 {
            t.slot_or_insert(BlockId(id), || {
                BlockState::new(BlockId(id), GenStamp(1), INodeId(id))
            });
        }
        assert_eq!(t.len(), 1000);
        let slot = t.slot_of(BlockId(500)).expect("present");
        assert_eq!(t.remove(&BlockId(500)).map(|b| b.file), Some(INodeId(500)));
        assert!(t.get(&BlockId(500)).is_none());
        let again = t.slot_or_insert(BlockId(5000), || {
            BlockState::new(BlockId(5000), GenStamp(1), INodeId(7))
        });
        assert_eq!(again, slot, "the vacant slot is reused");
        assert_eq!(t.get(&BlockId(5000)).map(|b| b.file), Some(INodeId(7)));
        assert_eq!(t.len(), 1000);
        for id in 1..=1000u64 {
            t.remove(&BlockId(id));
        }
        t.remove(&BlockId(5000));
        assert_eq!((t.len(), t.values().count()), (0, 0));
    }
}
