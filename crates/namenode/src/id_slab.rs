//! Records found by their own ids, in one dense slab: a `Vec` of records
//! (no allocation per record, so no malloc header or size-class rounding)
//! with a free list of the slots removed records left, and an [`IdIndex`]
//! from ids to slots. The namespace keeps its inodes this way and the
//! block manager its blocks. Ids are never reused, so a plain vector
//! indexed by id would keep a slot per deleted record forever; slots are
//! reused instead, and a record keeps its slot while it lives (the block
//! map's per-DataNode lists name blocks by slot). A record need not carry
//! its id: the index maps ids to slots, and iterating it gives them back
//! (inodes save 8 bytes each so).

use crate::id_index::IdIndex;

/// A record kept in an [`IdSlab`], and how its ids map to the index's.
pub(crate) trait Keyed {
    type Key: Copy;
    /// The id as the index keeps it.
    fn raw(key: Self::Key) -> u64;
    /// The id of the index's `raw`.
    fn from_raw(raw: u64) -> Self::Key;
}

#[derive(Debug, Clone)]
pub(crate) struct IdSlab<T> {
    /// Live records; `None` in the slots of removed ones (in `free`).
    slots: Vec<Option<T>>,
    free: Vec<u32>,
    index: IdIndex,
}

impl<T> Default for IdSlab<T> {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            index: IdIndex::default(),
        }
    }
}

impl<T: Keyed> IdSlab<T> {
    pub(crate) fn slot_of(&self, id: T::Key) -> Option<u32> {
        self.index.get(T::raw(id))
    }

    pub(crate) fn get(&self, id: &T::Key) -> Option<&T> {
        self.at(self.slot_of(*id)?)
    }

    /// Mutable access; callers never change a record's id (it is the key).
    pub(crate) fn get_mut(&mut self, id: &T::Key) -> Option<&mut T> {
        let slot = self.slot_of(*id)?;
        self.at_mut(slot)
    }

    pub(crate) fn at(&self, slot: u32) -> Option<&T> {
        self.slots.get(slot as usize)?.as_ref()
    }

    pub(crate) fn at_mut(&mut self, slot: u32) -> Option<&mut T> {
        self.slots.get_mut(slot as usize)?.as_mut()
    }

    pub(crate) fn contains_key(&self, id: &T::Key) -> bool {
        self.slot_of(*id).is_some()
    }

    /// Adds `record` under `id`, replacing any record with that id (in
    /// its slot).
    pub(crate) fn insert(&mut self, id: T::Key, record: T) {
        match self.slot_of(id) {
            Some(slot) => self.slots[slot as usize] = Some(record),
            None => {
                self.add(id, record);
            }
        }
    }

    /// The slot of record `id`, added as `make()` makes it if absent.
    pub(crate) fn slot_or_insert(&mut self, id: T::Key, make: impl FnOnce() -> T) -> u32 {
        match self.slot_of(id) {
            Some(slot) => slot,
            None => self.add(id, make()),
        }
    }

    /// Adds a record under an id not in the slab yet; its slot.
    fn add(&mut self, id: T::Key, record: T) -> u32 {
        let id = T::raw(id);
        let slot = match self.take_free_slot() {
            Some(slot) => {
                self.slots[slot as usize] = Some(record);
                slot
            }
            None => {
                // 2^32 records would be hundreds of GiB of them; stopping
                // beats aliasing two slots (and u32::MAX marks none in
                // the index).
                let slot = u32::try_from(self.slots.len())
                    .ok()
                    .filter(|s| *s != u32::MAX)
                    .expect("more than 2^32 - 1 records in a slab");
                self.slots.push(Some(record));
                slot
            }
        };
        self.index.insert(id, slot);
        slot
    }

    /// Room for `more` records without growing on the way (image loading
    /// knows the count up front).
    pub(crate) fn reserve(&mut self, more: usize) {
        self.slots.reserve(more);
    }

    /// Starts a bulk load of `memory` bytes or so of ids' index pages at
    /// most; [`IdSlab::settle`] ends it (see [`IdIndex::begin_load`]).
    pub(crate) fn begin_load(&mut self, memory: usize) {
        self.index
            .begin_load(memory / crate::id_index::DENSE_PAGE_BYTES);
    }

    /// Adds a record during a bulk load without looking for one with
    /// its id first: a second record with one id leaves [`IdSlab::len`]
    /// short of the records added, which the loader checks at the end.
    pub(crate) fn insert_loaded(&mut self, id: T::Key, record: T) {
        self.add(id, record);
    }

    /// Removes record `id`; its slot may be reused by the next record.
    pub(crate) fn remove(&mut self, id: &T::Key) -> Option<T> {
        let slot = self.index.remove(T::raw(*id))?;
        self.free.push(slot);
        let record = self.slots[slot as usize].take();
        self.shrink_tail();
        record
    }

    /// A vacant slot to reuse. `free` may hold stale entries (slots given
    /// back at the end of the slab, or already reused): they are skipped.
    fn take_free_slot(&mut self) -> Option<u32> {
        while let Some(slot) = self.free.pop() {
            if self.slots.get(slot as usize).is_some_and(Option::is_none) {
                return Some(slot);
            }
        }
        None
    }

    /// Gives back the vacant slots at the end of the slab, so a slab that
    /// shrank does not keep its peak size (each slot is pushed and popped
    /// once: amortized O(1)); drops stale free entries once they outnumber
    /// the slots.
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

    pub(crate) fn len(&self) -> usize {
        self.index.len()
    }

    /// Reshapes the index after a load that only added records (see
    /// [`IdIndex::settle`]).
    pub(crate) fn settle(&mut self) {
        self.index.settle();
    }

    /// Every record with its id, in slot order: the slab read front to
    /// back, the ids from a table of them by slot made first (8 bytes a
    /// slot while the iterator lives). Reading each record where the
    /// index's id order puts it instead jumps about in memory wherever
    /// slots are not in id order (a slab loaded from an image): a
    /// NameNode's start-up pass took a third longer so.
    pub(crate) fn iter_by_slot(&self) -> impl Iterator<Item = (T::Key, &T)> {
        let mut ids = vec![0u64; self.slots.len()];
        for (id, slot) in self.index.iter() {
            if let Some(at) = ids.get_mut(slot as usize) {
                *at = id;
            }
        }
        self.slots
            .iter()
            .zip(ids)
            .filter_map(|(record, id)| Some((T::from_raw(id), record.as_ref()?)))
    }

    /// Every record, in no particular order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &T> {
        self.slots.iter().flatten()
    }

    /// Every record, mutably (callers never change a record's id).
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.slots.iter_mut().flatten()
    }

    /// Slots in use or vacant (tests of slot reuse).
    #[cfg(test)]
    pub(crate) fn slot_count(&self) -> usize {
        self.slots.len()
    }
}
