//! The block states by id, in one dense slab like the inode table's
//! (`crate::id_slab`: a `Vec` of states, no per-block allocation, found
//! through a paged index of ids, which a NameNode hands out one after
//! another). A block's replicas live inline in its state (room for HDFS's
//! default replication of 3 without an allocation, one stamp and length
//! for all of them while they agree: [`Replicas`]), each naming its
//! DataNode and storage by a 4-byte index into [`super::nodes::Nodes`]
//! rather than by a string. Slots are stable while a block lives, so the
//! per-DataNode lists of blocks hold slot numbers.

use smallvec::SmallVec;

use crate::id_slab::{IdSlab, Keyed};
use crate::namespace::{BlockId, GenStamp, INodeId};

/// One replica of a block on one DataNode storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Replica {
    pub gs: GenStamp,
    pub num_bytes: u64,
    /// The DataNode, an index into `Nodes`.
    pub node: u32,
    /// The storage id, an index into `Nodes`' storage names.
    pub storage: u32,
    /// Where this block's slot sits in its DataNode's list of blocks (so
    /// the entry goes in O(1) when the replica does).
    pub pos: u32,
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

    /// The same replica as far as the block map's decisions go (its place
    /// in the per-node list aside).
    pub fn same_as(&self, other: &Replica) -> bool {
        Replica { pos: 0, ..*self } == Replica { pos: 0, ..*other }
    }
}

/// Where a replica is, without its stamp, length and flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Placed {
    node: u32,
    storage: u32,
    pos: u32,
}

/// How many replicas a [`Replicas::Shared`] holds; an enum so that its
/// spare values give the outer enums their tags for free.
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

/// The replicas of a block, in the order they were first reported. In the
/// steady state (up to three replicas, all of one generation stamp and
/// length, as after their block reports) the stamp and length are kept
/// once and each replica is 12 bytes of indexes plus two bits; anything
/// else (a block being written, a stale or over-replicated one) keeps
/// whole replicas in a vector. Every change goes through [`Replicas::edit`],
/// which picks the form again.
#[derive(Debug, Clone)]
pub(super) struct Replicas(Form);

#[derive(Debug, Clone)]
enum Form {
    Shared {
        gs: GenStamp,
        num_bytes: u64,
        count: Count,
        /// Bit `i`: replica `i` is finalized.
        finalized: u8,
        /// Bit `i`: replica `i` is corrupt.
        corrupt: u8,
        placed: [Placed; 3],
    },
    Each(Vec<Replica>),
}

/// Replicas taken out of their compact form to be changed.
pub(super) type Unpacked = SmallVec<[Replica; 4]>;

impl Default for Replicas {
    fn default() -> Self {
        Replicas(Form::Shared {
            gs: GenStamp(0),
            num_bytes: 0,
            count: Count::Zero,
            finalized: 0,
            corrupt: 0,
            placed: [Placed::default(); 3],
        })
    }
}

impl Replicas {
    pub fn len(&self) -> usize {
        match &self.0 {
            Form::Shared { count, .. } => *count as usize,
            Form::Each(v) => v.len(),
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
                node: placed[i].node,
                storage: placed[i].storage,
                pos: placed[i].pos,
                finalized: finalized & (1 << i) != 0,
                corrupt: corrupt & (1 << i) != 0,
            }),
            Form::Each(v) => v.get(i).copied(),
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
        *self = Replicas::pack(all);
        out
    }

    fn pack(all: Unpacked) -> Replicas {
        let shared = all.len() <= 3
            && all
                .windows(2)
                .all(|w| w[0].gs == w[1].gs && w[0].num_bytes == w[1].num_bytes);
        if !shared {
            return Replicas(Form::Each(all.into_vec()));
        }
        let mut placed = [Placed::default(); 3];
        let (mut finalized, mut corrupt) = (0u8, 0u8);
        for (i, r) in all.iter().enumerate() {
            placed[i] = Placed {
                node: r.node,
                storage: r.storage,
                pos: r.pos,
            };
            finalized |= u8::from(r.finalized) << i;
            corrupt |= u8::from(r.corrupt) << i;
        }
        let first = all.first();
        Replicas(Form::Shared {
            gs: first.map_or(GenStamp(0), |r| r.gs),
            num_bytes: first.map_or(0, |r| r.num_bytes),
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

    /// Moves the replica on DataNode `node` to position `pos` of that
    /// node's list of blocks.
    pub fn set_pos(&mut self, node: u32, pos: u32) {
        match &mut self.0 {
            // The position is no part of what the form depends on.
            Form::Shared { count, placed, .. } => {
                if let Some(p) = placed[..*count as usize]
                    .iter_mut()
                    .find(|p| p.node == node)
                {
                    p.pos = pos;
                }
            }
            Form::Each(v) => {
                if let Some(r) = v.iter_mut().find(|r| r.node == node) {
                    r.pos = pos;
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
pub(super) struct BlockState {
    pub id: BlockId,
    pub file: INodeId,
    pub gs: GenStamp,
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
            gs,
            replicas: Replicas::default(),
        }
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

    fn key(&self) -> BlockId {
        self.id
    }

    fn raw(key: BlockId) -> u64 {
        key.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_replicas_fit_inline_in_a_compact_state() {
        // id, file, stamp (24); the replicas' shared stamp and length
        // (16), three 12-byte placements, their count and two flag bytes
        // (39); the safe-mode figures and the pipeline are in side tables.
        assert_eq!(std::mem::size_of::<Option<BlockState>>(), 80);
    }

    fn replica(node: u32, gs: u64, num_bytes: u64) -> Replica {
        Replica {
            gs: GenStamp(gs),
            num_bytes,
            node,
            storage: node + 10,
            pos: node * 7,
            finalized: node.is_multiple_of(2),
            corrupt: node == 2,
        }
    }

    fn is_shared(r: &Replicas) -> bool {
        matches!(r.0, Form::Shared { .. })
    }

    #[test]
    fn replicas_keep_one_stamp_and_length_while_they_agree() {
        let mut r = Replicas::default();
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

        // Positions move in either form without changing anything else.
        let moved = |node, pos| {
            Some(Replica {
                pos,
                ..replica(node, 1001, 64)
            })
        };
        r.set_pos(2, 99);
        assert_eq!(r.get(1), moved(2, 99));
        r.set(0, replica(1, 1002, 64));
        r.set_pos(3, 5);
        assert_eq!(r.get(2), moved(3, 5));
        assert_eq!(r.get(3), None);
        r.retain(|_| false);
        assert!(r.is_empty() && is_shared(&r));
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
