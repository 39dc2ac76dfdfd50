//! The DataNodes and storages that replicas are on, each named once: a
//! replica holds 4-byte indexes instead of a uuid and a storage id. Also
//! the per-DataNode list of the blocks it holds (block-table slots, each
//! replica knowing its position in its node's list), so a full report and
//! a node's removal cost O(that node's replicas) at 4 bytes per replica,
//! where a hash set per node cost about 19. Indexes are never reused (a
//! handful of DataNodes and storages per cluster; re-registrations keep
//! their uuid).

use std::collections::HashMap;
use std::sync::Arc;

use crate::datanodes::DatanodeUuid;

#[derive(Debug, Default)]
pub(super) struct Nodes {
    uuids: Vec<DatanodeUuid>,
    by_uuid: HashMap<DatanodeUuid, u32>,
    /// By DataNode index: the slots of the blocks it holds a replica of.
    held: Vec<Vec<u32>>,
    storage_names: Vec<Arc<str>>,
    by_storage: HashMap<Arc<str>, u32>,
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
        self.held.push(Vec::new());
        self.by_uuid.insert(uuid.clone(), n);
        n
    }

    pub fn uuid(&self, n: u32) -> &DatanodeUuid {
        &self.uuids[n as usize]
    }

    /// The index of storage id `name`, given one if new.
    pub fn storage(&mut self, name: &str) -> u32 {
        if let Some(s) = self.by_storage.get(name) {
            return *s;
        }
        let s = u32::try_from(self.storage_names.len()).expect("more than 2^32 storages");
        let name: Arc<str> = Arc::from(name);
        self.storage_names.push(Arc::clone(&name));
        self.by_storage.insert(name, s);
        s
    }

    /// The index of storage id `name`, if known.
    pub fn find_storage(&self, name: &str) -> Option<u32> {
        self.by_storage.get(name).copied()
    }

    pub fn storage_name(&self, s: u32) -> &str {
        &self.storage_names[s as usize]
    }

    /// The block slots DataNode `n` holds a replica of.
    pub fn held(&self, n: u32) -> &[u32] {
        self.held.get(n as usize).map_or(&[], Vec::as_slice)
    }

    /// Records that DataNode `n` holds block `slot`; returns its position.
    pub fn hold(&mut self, n: u32, slot: u32) -> u32 {
        let list = &mut self.held[n as usize];
        let pos = u32::try_from(list.len()).expect("more than 2^32 replicas on a DataNode");
        list.push(slot);
        pos
    }

    /// Forgets the entry at `pos` of DataNode `n`'s list; returns the slot
    /// moved into `pos` (its replica's position must follow), if any.
    pub fn release(&mut self, n: u32, pos: u32) -> Option<u32> {
        let list = &mut self.held[n as usize];
        let pos = pos as usize;
        if pos >= list.len() {
            return None;
        }
        list.swap_remove(pos);
        if list.is_empty() && list.capacity() > 0 {
            // A node that left should not keep its peak list.
            *list = Vec::new();
        }
        list.get(pos).copied()
    }

    /// Takes DataNode `n`'s whole list (it left): the caller drops the
    /// replicas themselves.
    pub fn take_held(&mut self, n: u32) -> Vec<u32> {
        std::mem::take(&mut self.held[n as usize])
    }

    /// Every DataNode with at least one replica, and how many it holds.
    pub fn holding(&self) -> impl Iterator<Item = (&DatanodeUuid, usize)> {
        self.uuids
            .iter()
            .zip(&self.held)
            .filter(|(_, l)| !l.is_empty())
            .map(|(u, l)| (u, l.len()))
    }
}
