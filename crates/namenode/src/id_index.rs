//! Ids to slab slots (`IdSlab`), in pages of 4,096 consecutive ids. A
//! NameNode hands out inode ids and block ids one after another, so most
//! pages are dense: a page then keeps a 4-byte slot per id, found by
//! indexing, 4 bytes an id where a hash table of 4-byte slots took about
//! 8-10 (its control bytes and its load), and no hashing per lookup but
//! of the page number in a table of a few hundred pages. Where deletes
//! thinned a page out (or ids came sparse to begin with), it keeps its
//! ids' offsets and slots in two sorted vectors instead (6 bytes an id,
//! found by binary search). Each page also costs its entry in the page
//! table and, when sparse, two small allocations (≈ 100-170 bytes), too
//! much for a handful of ids: a page thinned below [`LOOSE_BELOW`] ids
//! (by deletes, or as an image left it) gives them to one hash map of
//! loose ids (≈ 20-35 bytes an id), so ids scattered one in thousands (a
//! namespace that kept few of all the files it ever made) cost at most
//! about three times the 8-10 bytes of the hash table this replaced,
//! where a page per id would cost 180. A page turns sparse below a
//! quarter full and dense above half full, so an id going and coming at
//! the line does not convert it back and forth.
//! The page of the newest ids (the frontier: a new page right above the
//! previous frontier) is dense from its first id and stays so while it is
//! the frontier: the ids just handed out are the ones looked up most (a
//! new file's directory, its siblings), and a binary search there cost a
//! build of a million files a third of its CPU. A page further up (an id
//! far above the others) starts sparse, so scattered ids cost no 16 KiB
//! page each and leave the frontier where the ids are handed out.

use std::collections::HashMap;

use foldhash::fast::RandomState;

const PAGE_BITS: u32 = 12;
const PAGE_IDS: usize = 1 << PAGE_BITS;
/// What a dense page takes: a 4-byte slot per id.
pub(crate) const DENSE_PAGE_BYTES: usize = PAGE_IDS * 4;
/// A dense page with fewer live ids than this turns sparse.
const SPARSE_BELOW: usize = PAGE_IDS / 4;
/// A sparse page with more ids than this turns dense.
const DENSE_ABOVE: usize = PAGE_IDS / 2;
/// A dense page's entry for an id it does not hold.
const VACANT: u32 = u32::MAX;
/// A sparse page (not the frontier) with fewer ids than this gives them
/// to the loose map: at 8 ids its own costs are about those of 8 loose
/// ids.
const LOOSE_BELOW: usize = 8;

#[derive(Debug, Clone)]
enum Page {
    /// Offsets in the page of the ids it holds, sorted, and their slots.
    Sparse { offsets: Vec<u16>, slots: Vec<u32> },
    /// A slot per id of the page ([`VACANT`] where none), and how many
    /// are not vacant.
    Dense { slots: Box<[u32]>, live: usize },
}

impl Default for Page {
    fn default() -> Self {
        Page::Sparse {
            offsets: Vec::new(),
            slots: Vec::new(),
        }
    }
}

impl Page {
    fn get(&self, at: usize) -> Option<u32> {
        match self {
            Page::Sparse { offsets, slots } => {
                let i = offsets.binary_search(&(at as u16)).ok()?;
                Some(slots[i])
            }
            Page::Dense { slots, .. } => Some(slots[at]).filter(|s| *s != VACANT),
        }
    }

    /// Sets the slot of offset `at`; the slot it replaced, if any.
    fn insert(&mut self, at: usize, slot: u32) -> Option<u32> {
        match self {
            Page::Sparse { offsets, slots } => {
                // New ids are the highest: check the end before searching.
                let found = match offsets.last() {
                    Some(last) if usize::from(*last) < at => Err(offsets.len()),
                    None => Err(0),
                    _ => offsets.binary_search(&(at as u16)),
                };
                match found {
                    Ok(i) => Some(std::mem::replace(&mut slots[i], slot)),
                    Err(i) => {
                        offsets.insert(i, at as u16);
                        slots.insert(i, slot);
                        None
                    }
                }
            }
            Page::Dense { slots, live } => {
                let old = std::mem::replace(&mut slots[at], slot);
                if old == VACANT {
                    *live += 1;
                    None
                } else {
                    Some(old)
                }
            }
        }
    }

    fn remove(&mut self, at: usize) -> Option<u32> {
        match self {
            Page::Sparse { offsets, slots } => {
                let i = offsets.binary_search(&(at as u16)).ok()?;
                offsets.remove(i);
                let old = slots.remove(i);
                if offsets.len() < offsets.capacity() / 4 {
                    offsets.shrink_to_fit();
                    slots.shrink_to_fit();
                }
                Some(old)
            }
            Page::Dense { slots, live } => {
                let old = std::mem::replace(&mut slots[at], VACANT);
                (old != VACANT).then(|| {
                    *live -= 1;
                    old
                })
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            Page::Sparse { offsets, .. } => offsets.len(),
            Page::Dense { live, .. } => *live,
        }
    }

    fn dense() -> Self {
        Page::Dense {
            slots: vec![VACANT; PAGE_IDS].into_boxed_slice(),
            live: 0,
        }
    }

    /// Turns the page dense or sparse when its count crossed the line.
    fn rebalance(&mut self) {
        match self {
            Page::Sparse { offsets, slots } if offsets.len() > DENSE_ABOVE => {
                let mut dense = Page::dense();
                for (at, slot) in offsets.iter().zip(slots.iter()) {
                    dense.insert(usize::from(*at), *slot);
                }
                *self = dense;
            }
            Page::Dense { slots, live } if *live < SPARSE_BELOW => {
                let (offsets, slots) = slots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| **s != VACANT)
                    .map(|(at, s)| (at as u16, *s))
                    .unzip();
                *self = Page::Sparse { offsets, slots };
            }
            _ => {}
        }
    }
}

/// A map from 64-bit ids to 4-byte slots, in pages (see the module).
#[derive(Debug, Clone, Default)]
pub(crate) struct IdIndex {
    pages: HashMap<u64, Page, RandomState>,
    /// Ids of pages too sparse to keep (see the module). An id is in its
    /// page or here, never both.
    loose: HashMap<u64, u32, RandomState>,
    /// The page of the newest ids, dense while it is (see the module).
    frontier: Option<u64>,
    len: usize,
    /// During a bulk load ([`IdIndex::begin_load`]): how many more new
    /// pages may start dense.
    dense_credit: usize,
    /// A bulk load is under way: pages are reshaped once, by `settle`.
    loading: bool,
}

/// The page number of `id` and its offset in the page.
fn split(id: u64) -> (u64, usize) {
    (id >> PAGE_BITS, (id as usize) & (PAGE_IDS - 1))
}

impl IdIndex {
    pub(crate) fn get(&self, id: u64) -> Option<u32> {
        let (page, at) = split(id);
        if let Some(slot) = self.pages.get(&page).and_then(|p| p.get(at)) {
            return Some(slot);
        }
        if self.loose.is_empty() {
            return None;
        }
        self.loose.get(&id).copied()
    }

    /// Maps `id` to `slot` (never `u32::MAX`); the slot it had, if any.
    pub(crate) fn insert(&mut self, id: u64, slot: u32) -> Option<u32> {
        assert_ne!(slot, VACANT, "slot {VACANT} cannot be indexed");
        if !self.loose.is_empty() {
            if let Some(old) = self.loose.get_mut(&id) {
                return Some(std::mem::replace(old, slot));
            }
        }
        let (page_no, at) = split(id);
        let next_to_frontier = self
            .frontier
            .is_none_or(|f| page_no == f || page_no == f + 1);
        if !self.pages.contains_key(&page_no) {
            if next_to_frontier {
                // A new frontier: the page it takes over from may thin
                // out, or give its few ids to the loose map.
                if let Some(old) = self.frontier.replace(page_no) {
                    if !self.loading {
                        self.settle_page(old);
                    }
                }
                self.pages.insert(page_no, Page::dense());
            } else if self.dense_credit > 0 {
                // A load's ids come in the image's order, not the ids':
                // a dense page takes them without sorted inserts.
                self.dense_credit -= 1;
                self.pages.insert(page_no, Page::dense());
            }
        }
        let frontier = self.frontier == Some(page_no);
        let loading = self.loading;
        let page = self.pages.entry(page_no).or_default();
        let old = page.insert(at, slot);
        if old.is_none() {
            self.len += 1;
            if !frontier && !loading {
                page.rebalance();
            }
        }
        old
    }

    pub(crate) fn remove(&mut self, id: u64) -> Option<u32> {
        let (page_no, at) = split(id);
        let Some(old) = self.pages.get_mut(&page_no).and_then(|p| p.remove(at)) else {
            let old = self.loose.remove(&id)?;
            self.len -= 1;
            if self.loose.len() < self.loose.capacity() / 4 {
                self.loose.shrink_to_fit();
            }
            return Some(old);
        };
        self.len -= 1;
        self.settle_page(page_no);
        Some(old)
    }

    /// Reshapes page `page_no` after a change: drops it empty, turns it
    /// sparse or dense, gives its ids to the loose map when too few (the
    /// frontier stays as it is).
    fn settle_page(&mut self, page_no: u64) {
        if self.frontier == Some(page_no) {
            if self.pages.get(&page_no).is_some_and(|p| p.len() == 0) {
                self.pages.remove(&page_no);
            }
            return;
        }
        let Some(page) = self.pages.get_mut(&page_no) else {
            return;
        };
        page.rebalance();
        if page.len() >= LOOSE_BELOW {
            return;
        }
        if let Some(Page::Sparse { offsets, slots }) = self.pages.remove(&page_no) {
            let base = page_no << PAGE_BITS;
            for (at, slot) in offsets.iter().zip(slots) {
                self.loose.insert(base | u64::from(*at), slot);
            }
        }
    }

    /// Starts a bulk load that ends with [`IdIndex::settle`]: until then
    /// up to `dense_pages` new pages start dense (16 KiB each, whatever
    /// ids they get) and no page is reshaped per insert.
    pub(crate) fn begin_load(&mut self, dense_pages: usize) {
        self.dense_credit = dense_pages;
        self.loading = true;
    }

    /// Reshapes every page (after a bulk load, which only adds ids: pages
    /// it left with a few ids give them to the loose map).
    pub(crate) fn settle(&mut self) {
        self.dense_credit = 0;
        self.loading = false;
        let pages: Vec<u64> = self.pages.keys().copied().collect();
        for page_no in pages {
            self.settle_page(page_no);
        }
    }

    /// Ids mapped.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Every id with its slot, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        let paged = self.pages.iter().flat_map(|(page_no, page)| {
            let base = page_no << PAGE_BITS;
            let entries: Box<dyn Iterator<Item = (u64, u32)>> = match page {
                Page::Dense { slots, .. } => Box::new(
                    slots
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| **s != VACANT)
                        .map(move |(at, s)| (base | at as u64, *s)),
                ),
                Page::Sparse { offsets, slots } => Box::new(
                    offsets
                        .iter()
                        .zip(slots)
                        .map(move |(at, s)| (base | u64::from(*at), *s)),
                ),
            };
            entries
        });
        paged.chain(self.loose.iter().map(|(id, slot)| (*id, *slot)))
    }

    /// Ids in the loose map (tests of the layout).
    #[cfg(test)]
    fn loose_len(&self) -> usize {
        self.loose.len()
    }

    /// Pages kept, dense and sparse (tests of the layout).
    #[cfg(test)]
    fn page_counts(&self) -> (usize, usize) {
        let dense = self
            .pages
            .values()
            .filter(|p| matches!(p, Page::Dense { .. }))
            .count();
        (dense, self.pages.len() - dense)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_ids_fill_dense_pages_and_deletes_thin_them() {
        let mut index = IdIndex::default();
        let first = 16_385u64;
        for (slot, id) in (first..first + 100_000).enumerate() {
            assert_eq!(index.insert(id, slot as u32), None);
        }
        assert_eq!(index.len(), 100_000);
        // 100,000 ids from 16,385 touch 25 pages, all dense: the first
        // holds 4,095 of them, the last (the highest) 1,697.
        assert_eq!(index.page_counts(), (25, 0));
        assert_eq!(index.get(first + 77), Some(77));
        assert_eq!(index.get(first - 1), None);
        assert_eq!(index.get(first + 100_000), None);
        // Replacing keeps the count.
        assert_eq!(index.insert(first + 5, 7), Some(5));
        assert_eq!(index.len(), 100_000);
        // Delete four in five of the ids: every page but the highest
        // turns sparse, and the survivors are still found.
        for id in first..first + 100_000 {
            if id % 5 != 0 {
                assert!(index.remove(id).is_some());
            }
        }
        assert_eq!(index.len(), 20_000);
        assert_eq!(index.page_counts(), (1, 24));
        assert!((first..first + 100_000).all(|id| index.get(id).is_some() == (id % 5 == 0)));
        assert_eq!(index.remove(first + 1), None);
        // Down to a few ids a page, they go to the loose map; emptied
        // pages are dropped.
        for id in first..first + 100_000 {
            if id % 1000 != 0 {
                index.remove(id);
            }
        }
        assert_eq!(index.len(), 100);
        assert_eq!(index.page_counts(), (1, 0), "only the frontier is a page");
        assert_eq!(index.loose_len(), 98);
        assert!((first..first + 100_000).all(|id| index.get(id).is_some() == (id % 1000 == 0)));
        assert_eq!(
            index.insert(first + 615, 9),
            Some(615),
            "a loose id replaced"
        );
        assert_eq!(index.get(first + 615), Some(9));
        for id in first..first + 100_000 {
            index.remove(id);
        }
        assert_eq!((index.len(), index.page_counts()), (0, (0, 0)));
        assert_eq!(index.loose_len(), 0);
    }

    #[test]
    fn a_frontier_left_behind_with_few_ids_gives_them_to_the_loose_map() {
        let mut index = IdIndex::default();
        for id in 16_384..20_000u64 {
            index.insert(id, id as u32);
        }
        for id in 16_387..20_000u64 {
            index.remove(id);
        }
        assert_eq!(index.page_counts(), (1, 0), "the frontier stays dense");
        index.insert(20_480, 7);
        assert_eq!((index.page_counts(), index.loose_len()), ((1, 0), 3));
        assert!((16_384..16_387u64).all(|id| index.get(id) == Some(id as u32)));
    }

    #[test]
    fn a_load_of_scattered_ids_leaves_them_loose() {
        let mut index = IdIndex::default();
        // Survivors of a namespace that kept 3 ids in 4,096, loaded in no
        // particular order, then the root's page and its neighbour.
        for (slot, id) in (1..200u64).rev().map(|p| (p << 12) | 7).enumerate() {
            for k in 0..3 {
                index.insert(id + k * 100, (3 * slot as u64 + k) as u32);
            }
        }
        index.settle();
        // The first page loaded is the frontier, and stays a page.
        assert_eq!(index.page_counts(), (1, 0));
        assert_eq!(index.loose_len(), 594);
        assert_eq!(index.get((5 << 12) | 107), Some(3 * 194 + 1));
        assert_eq!(index.get((5 << 12) | 108), None);
    }

    #[test]
    fn a_far_id_starts_sparse_and_leaves_the_frontier_where_ids_grow() {
        let mut index = IdIndex::default();
        index.insert(1 << 40, 0);
        assert_eq!(
            index.page_counts(),
            (1, 0),
            "the first page is the frontier"
        );
        let mut index = IdIndex::default();
        index.insert(16_385, 0);
        index.insert(1 << 40, 1);
        index.insert((1 << 40) + 10_000, 2);
        assert_eq!(index.page_counts(), (1, 2), "far pages are sparse");
        for (slot, id) in (16_386..16_386 + 10_000u64).enumerate() {
            index.insert(id, slot as u32 + 3);
        }
        // Pages 4, 5 and 6 of the growing ids are each the frontier in
        // turn: dense while filling.
        assert_eq!(index.page_counts(), (3, 2));
        assert_eq!(index.get(1 << 40), Some(1));
        assert_eq!(index.get(16_386 + 9_999), Some(10_002));
    }

    #[test]
    fn a_bulk_load_fills_pages_dense_and_settles_them_once() {
        let mut index = IdIndex::default();
        index.begin_load(3);
        let id = |page: u64, k: u64| (page << PAGE_BITS) + k;
        let mut want = Vec::new();
        // Three pages filled in turns (an image's order is not the ids'),
        // one with five ids, one with a hundred.
        for k in 0..3_000 {
            for page in [14, 10, 12] {
                want.push((id(page, k), want.len() as u32));
            }
        }
        want.extend((0..5).map(|k| (id(20, k * 7), 0)));
        want.extend((0..100).map(|k| (id(30, k * 3), 0)));
        for (i, (id, slot)) in want.iter_mut().enumerate() {
            *slot = i as u32;
            assert_eq!(index.insert(*id, *slot), None);
        }
        // The frontier (14) and three on credit (10, 12, 20) are dense;
        // credit spent, 30 is sparse. Nothing is reshaped yet.
        assert_eq!(index.page_counts(), (4, 1));
        assert!(want.iter().all(|(id, s)| index.get(*id) == Some(*s)));
        index.settle();
        // Page 20's five ids went loose; the full pages stay dense.
        assert_eq!(index.page_counts(), (3, 1));
        assert_eq!(index.loose_len(), 5);
        assert_eq!(index.len(), want.len());
        assert!(want.iter().all(|(id, s)| index.get(*id) == Some(*s)));
        // Once settled, a thin page is reshaped as it changes again.
        for k in 0..3_000 {
            index.remove(id(10, k));
        }
        assert_eq!(index.page_counts(), (2, 1));
    }

    #[test]
    fn agrees_with_a_map_under_random_inserts_and_removes() {
        use std::collections::HashMap as Model;
        let mut index = IdIndex::default();
        let mut model = Model::new();
        // A small xorshift: ids cluster in a few pages so that pages cross
        // both lines many times, with some ids far away.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut saw_loose = false;
        // Then mostly removes, so pages thin out to the loose map, with a
        // settle now and then; then mostly inserts again.
        for step in 0..900_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let id = if x.is_multiple_of(97) {
                x
            } else {
                1_000_000 + x % 20_000
            };
            let remove = match step {
                0..400_000 => x.is_multiple_of(3),
                400_000..700_000 => !x.is_multiple_of(10),
                _ => x.is_multiple_of(4),
            };
            if step % 100_000 == 50_000 {
                index.settle();
            }
            if remove {
                assert_eq!(index.remove(id), model.remove(&id), "remove {id}");
            } else {
                assert_eq!(
                    index.insert(id, step),
                    model.insert(id, step),
                    "insert {id}"
                );
            }
            saw_loose |= index.loose_len() > 0;
            if step % 50_000 == 0 || step == 699_999 {
                assert_eq!(index.len(), model.len());
                assert!(model.iter().all(|(id, s)| index.get(*id) == Some(*s)));
                let mut sorted: Vec<(u64, u32)> = model.iter().map(|(i, s)| (*i, *s)).collect();
                sorted.sort_unstable();
                let mut listed: Vec<(u64, u32)> = index.iter().collect();
                listed.sort_unstable();
                assert_eq!(listed, sorted, "iter at step {step}");
            }
        }
        assert_eq!(index.len(), model.len());
        assert!(model.iter().all(|(id, s)| index.get(*id) == Some(*s)));
        assert!(saw_loose, "the thinning phase left ids loose");
    }
}
