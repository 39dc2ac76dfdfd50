//! The DataNodes and storages that replicas are on, each named once: a
//! replica holds a 4-byte [`Placed`] instead of a uuid and a storage id.
//! Also the set of blocks each DataNode holds (block-table slots in a
//! roaring bitmap: about a bit per slot where a node holds most blocks, 2
//! bytes per replica where it holds few), so a full report and a node's
//! removal cost O(that node's replicas). Indexes are never reused (a
//! handful of DataNodes per cluster, a handful of storages per DataNode;
//! re-registrations keep their uuid).

use std::collections::HashMap;
use std::sync::Arc;

use roaring::RoaringBitmap;

use crate::datanodes::DatanodeUuid;

/// Bits of a [`Placed`] that number the storage within its DataNode.
const STORAGE_BITS: u32 = 10;

/// A DataNode and one of its storages in 4 bytes: the node's index above
/// [`STORAGE_BITS`] bits of the storage's number among the node's. A
/// replica whose node or storage does not fit (past 4M DataNodes or 1,024
/// storages on one) keeps whole numbers instead (`table.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Placed(u32);

impl Placed {
    /// Packs `node` and `storage`, dropping what does not fit (see
    /// [`Placed::holds`]).
    pub fn new(node: u32, storage: u32) -> Self {
        Placed((node << STORAGE_BITS) | (storage & ((1 << STORAGE_BITS) - 1)))
    }

    pub fn node(self) -> u32 {
        self.0 >> STORAGE_BITS
    }

    pub fn storage(self) -> u32 {
        self.0 & ((1 << STORAGE_BITS) - 1)
    }

    /// Whether this is exactly where `r` is (nothing was dropped).
    pub fn holds(self, r: &super::table::Replica) -> bool {
        self.node() == r.node && self.storage() == r.storage
    }
}

/// One DataNode's storage ids, numbered in the order first seen (found by
/// hash: a DataNode may report any number of them).
#[derive(Debug, Default)]
struct Storages {
    names: Vec<Arc<str>>,
    numbers: HashMap<Arc<str>, u32>,
}

#[derive(Debug, Default)]
pub(super) struct Nodes {
    uuids: Vec<DatanodeUuid>,
    by_uuid: HashMap<DatanodeUuid, u32>,
    /// By DataNode index: its storages.
    storages: Vec<Storages>,
    /// By DataNode index: the slots of the blocks it holds a replica of.
    held: Vec<RoaringBitmap>,
}

impl Nodes {
    /// The index of DataNode `uuid`, if any replica or pipeline named it.
    pub fn find(&self, uuid: &DatanodeUuid) -> Option<u32> {
        self.by_uuid.get(uuid).copied()
    }

    /// The index of DataNode `uuid`, given one if new.
    pub fn index(&mut self, uuid: &DatanodeUuid) -> u32 {
        if let Some(n) = self.find(uuid) {
            return n;
        }
        let n = u32::try_from(self.uuids.len()).expect("more than 2^32 DataNodes");
        self.uuids.push(uuid.clone());
        self.storages.push(Storages::default());
        self.held.push(RoaringBitmap::new());
        self.by_uuid.insert(uuid.clone(), n);
        n
    }

    pub fn uuid(&self, n: u32) -> &DatanodeUuid {
        &self.uuids[n as usize]
    }

    /// The number of storage `name` among DataNode `n`'s, given one if new.
    pub fn storage(&mut self, n: u32, name: &str) -> u32 {
        if let Some(s) = self.find_storage(n, name) {
            return s;
        }
        let node = &mut self.storages[n as usize];
        let s = u32::try_from(node.names.len()).expect("more than 2^32 storages on a DataNode");
        let name: Arc<str> = Arc::from(name);
        node.names.push(Arc::clone(&name));
        node.numbers.insert(name, s);
        s
    }

    /// The number of storage `name` among DataNode `n`'s, if known.
    pub fn find_storage(&self, n: u32, name: &str) -> Option<u32> {
        self.storages.get(n as usize)?.numbers.get(name).copied()
    }

    /// The id of storage `s` of DataNode `n`.
    pub fn storage_name(&self, n: u32, s: u32) -> &str {
        &self.storages[n as usize].names[s as usize]
    }

    /// The block slots DataNode `n` holds a replica of, in slot order.
    pub fn held(&self, n: u32) -> impl Iterator<Item = u32> + '_ {
        self.held.get(n as usize).into_iter().flat_map(|b| b.iter())
    }

    /// DataNode `n`'s block slots from its `start`-th (modulo how many it
    /// holds) to the end, then from the first: a walk from a chosen point
    /// without copying the set.
    pub fn held_from(&self, n: u32, start: u64) -> impl Iterator<Item = u32> + '_ {
        let from = self.held.get(n as usize).and_then(|set| {
            let len = set.len();
            let first = u32::try_from(start.checked_rem(len)?).ok()?;
            set.select(first).map(|slot| (set, slot))
        });
        let (after, before) = match from {
            Some((set, slot)) => (Some(set.range(slot..)), Some(set.range(..slot))),
            None => (None, None),
        };
        after
            .into_iter()
            .flatten()
            .chain(before.into_iter().flatten())
    }

    /// Whether DataNode `n`'s set has block `slot` (the tests' check).
    #[cfg(test)]
    pub fn is_held(&self, n: u32, slot: u32) -> bool {
        self.held
            .get(n as usize)
            .is_some_and(|set| set.contains(slot))
    }

    /// Records that DataNode `n` holds block `slot`.
    pub fn hold(&mut self, n: u32, slot: u32) {
        self.held[n as usize].insert(slot);
    }

    /// Records that DataNode `n` no longer holds block `slot`.
    pub fn release(&mut self, n: u32, slot: u32) {
        if let Some(set) = self.held.get_mut(n as usize) {
            set.remove(slot);
        }
    }

    /// Takes DataNode `n`'s whole set (it left): the caller drops the
    /// replicas themselves.
    pub fn take_held(&mut self, n: u32) -> RoaringBitmap {
        std::mem::take(&mut self.held[n as usize])
    }

    /// Every DataNode with at least one replica, and how many it holds.
    pub fn holding(&self) -> impl Iterator<Item = (&DatanodeUuid, usize)> {
        self.uuids
            .iter()
            .zip(&self.held)
            .filter(|(_, set)| !set.is_empty())
            .map(|(u, set)| (u, set.len() as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::table::Replica;
    use crate::namespace::GenStamp;

    #[test]
    fn a_place_packs_a_node_and_its_storage_or_says_it_cannot() {
        let at = |node, storage| Replica {
            gs: GenStamp(1),
            num_bytes: 0,
            node,
            storage,
            finalized: true,
            corrupt: false,
        };
        for (node, storage) in [(0, 0), (7, 3), ((1 << 22) - 1, 1023)] {
            let p = Placed::new(node, storage);
            assert_eq!((p.node(), p.storage()), (node, storage));
            assert!(p.holds(&at(node, storage)));
        }
        for (node, storage) in [(1 << 22, 0), (3, 1024), (u32::MAX, u32::MAX)] {
            assert!(!Placed::new(node, storage).holds(&at(node, storage)));
        }
    }

    #[test]
    fn storages_are_numbered_per_datanode() {
        let mut nodes = Nodes::default();
        let a = nodes.index(&DatanodeUuid("a".into()));
        let b = nodes.index(&DatanodeUuid("b".into()));
        assert_eq!(nodes.storage(a, "DS-1"), 0);
        assert_eq!(nodes.storage(a, "DS-2"), 1);
        assert_eq!(nodes.storage(b, "DS-3"), 0);
        assert_eq!(nodes.storage(a, "DS-2"), 1);
        assert_eq!(nodes.find_storage(b, "DS-1"), None);
        assert_eq!(nodes.storage_name(a, 1), "DS-2");
        assert_eq!(nodes.find_storage(9, "DS-1"), None, "an unknown node");
    }
}
