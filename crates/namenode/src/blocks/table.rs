//! The block states by id, in one dense slab like the inode table's: a
//! `Vec` of states (no per-block allocation, so no malloc header or
//! size-class rounding) with a free list of the slots removed blocks left,
//! and a hash table of 4-byte slot numbers found by the id inside each
//! state. A block's replicas live inline in its state (room for HDFS's
//! default replication of 3 without an allocation), each naming its
//! DataNode and storage by a 4-byte index into [`super::nodes::Nodes`]
//! rather than by a string. Slots are stable while a block lives, so the
//! per-DataNode lists of blocks hold slot numbers. Ids are hashed with
//! foldhash (as the inode table's), seeded per process: every report and
//! lookup hashes one, and SipHash cost more per id.

use std::hash::BuildHasher;

use foldhash::fast::RandomState;

use hashbrown::hash_table::Entry;
use hashbrown::HashTable;
use smallvec::SmallVec;

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

/// The replicas of a block, in the order they were first reported.
pub(super) type Replicas = SmallVec<[Replica; 3]>;

#[derive(Debug, Clone)]
pub(super) struct BlockState {
    pub id: BlockId,
    pub file: INodeId,
    pub gs: GenStamp,
    pub replicas: Replicas,
    /// Whether start-up safe mode counts it safe now. Its committed
    /// length and the pipeline it was handed out with live in side tables
    /// of the block manager (only blocks in start-up safe mode or handed
    /// out by this NameNode have them).
    pub counted_safe: bool,
}

impl BlockState {
    pub fn new(id: BlockId, gs: GenStamp, file: INodeId) -> Self {
        BlockState {
            id,
            file,
            gs,
            replicas: Replicas::new(),
            counted_safe: false,
        }
    }

    /// The position in `replicas` of the replica on DataNode `node`.
    pub fn replica_on(&self, node: u32) -> Option<usize> {
        self.replicas.iter().position(|r| r.node == node)
    }
}

#[derive(Debug, Default)]
pub(super) struct BlockTable {
    /// Live blocks; `None` in the slots of removed ones (in `free`).
    slots: Vec<Option<BlockState>>,
    free: Vec<u32>,
    by_id: HashTable<u32>,
    hasher: RandomState,
}

impl BlockTable {
    pub fn slot_of(&self, id: BlockId) -> Option<u32> {
        let slots = &self.slots;
        self.by_id
            .find(self.hasher.hash_one(id), |s| {
                slots[*s as usize].as_ref().is_some_and(|b| b.id == id)
            })
            .copied()
    }

    pub fn get(&self, id: &BlockId) -> Option<&BlockState> {
        self.at(self.slot_of(*id)?)
    }

    /// Mutable access; callers never change a state's `id` (it is the key).
    pub fn get_mut(&mut self, id: &BlockId) -> Option<&mut BlockState> {
        let slot = self.slot_of(*id)?;
        self.at_mut(slot)
    }

    pub fn at(&self, slot: u32) -> Option<&BlockState> {
        self.slots.get(slot as usize)?.as_ref()
    }

    pub fn at_mut(&mut self, slot: u32) -> Option<&mut BlockState> {
        self.slots.get_mut(slot as usize)?.as_mut()
    }

    pub fn contains_key(&self, id: &BlockId) -> bool {
        self.slot_of(*id).is_some()
    }

    /// The slot of block `id`, added as `make()` makes it if absent.
    pub fn slot_or_insert(&mut self, id: BlockId, make: impl FnOnce() -> BlockState) -> u32 {
        if let Some(slot) = self.slot_of(id) {
            return slot;
        }
        let state = make();
        let slot = match self.take_free_slot() {
            Some(slot) => {
                self.slots[slot as usize] = Some(state);
                slot
            }
            None => {
                // 2^32 blocks would be over 500 GiB of states; stopping
                // beats aliasing two slots.
                let slot = u32::try_from(self.slots.len()).expect("more than 2^32 blocks");
                self.slots.push(Some(state));
                slot
            }
        };
        let (hasher, slots) = (&self.hasher, &self.slots);
        let rehash = |s: &u32| {
            slots[*s as usize]
                .as_ref()
                .map_or(0, |b| hasher.hash_one(b.id))
        };
        match self.by_id.entry(hasher.hash_one(id), |_| false, rehash) {
            Entry::Occupied(_) => unreachable!("the eq closure matches nothing"),
            Entry::Vacant(v) => {
                v.insert(slot);
            }
        }
        slot
    }

    /// Removes block `id`; its slot may be reused by the next block.
    pub fn remove(&mut self, id: &BlockId) -> Option<BlockState> {
        let hash = self.hasher.hash_one(*id);
        let slots = &self.slots;
        let entry = self
            .by_id
            .find_entry(hash, |s| {
                slots[*s as usize].as_ref().is_some_and(|b| b.id == *id)
            })
            .ok()?;
        let slot = entry.remove().0;
        self.free.push(slot);
        let state = self.slots[slot as usize].take();
        self.shrink_tail();
        state
    }

    /// A vacant slot to reuse; stale entries (slots given back at the end
    /// of the slab, or already reused) are skipped.
    fn take_free_slot(&mut self) -> Option<u32> {
        while let Some(slot) = self.free.pop() {
            if self.slots.get(slot as usize).is_some_and(Option::is_none) {
                return Some(slot);
            }
        }
        None
    }

    /// Gives back the vacant slots at the end of the slab (amortized O(1)),
    /// and drops stale free entries once they outnumber the slots.
    fn shrink_tail(&mut self) {
        let before = self.slots.len();
        while matches!(self.slots.last(), Some(None)) {
            self.slots.pop();
        }
        if self.slots.len() < before && self.slots.capacity() > 2 * self.slots.len() + 1024 {
            self.slots.shrink_to_fit();
        }
        if self.free.len() > self.slots.len() + 1024 {
            let slots = &self.slots;
            self.free
                .retain(|s| slots.get(*s as usize).is_some_and(Option::is_none));
            self.free.shrink_to_fit();
        }
    }

    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Every block, in no particular order.
    pub fn values(&self) -> impl Iterator<Item = &BlockState> {
        self.slots.iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_replicas_fit_inline_in_a_compact_state() {
        assert_eq!(std::mem::size_of::<Replica>(), 32);
        // id, file, stamp (24), three replicas inline and the vector's
        // length (104), a flag; the safe-mode length and the pipeline are
        // in side tables.
        assert!(std::mem::size_of::<Option<BlockState>>() <= 136);
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
