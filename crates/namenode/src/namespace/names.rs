//! Interned user and group names, and interned attribute sets. A
//! namespace has millions of inodes but only a handful of distinct owners
//! and groups, and few distinct combinations of owner, group, permission,
//! replication and block size, so each inode keeps one 4-byte [`AttrId`]
//! (its [`AttrSet`], interned) instead of the fields themselves (as HDFS
//! packs mode, user and group into one long per inode). Names are never
//! removed (the table grows only with the distinct ones ever used); sets
//! no inode uses any more are swept once there are many of them
//! ([`NameTable::sweep_due`]), since any user can make new ones (a chmod,
//! a file with a block size of its own).

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::HashTable;

use super::tree::{BlockSize, UnderConstruction, Writer};

/// An interned user or group name: an index into a [`NameTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NameId(u32);

impl NameId {
    /// Its position in [`NameTable::all`].
    pub fn index(self) -> u32 {
        self.0
    }
}

/// What an inode shares with many others: its owner and group, its
/// permission bits, and a file's replication and block size (0 and the
/// default for a directory, as HDFS reports them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AttrSet {
    pub owner: NameId,
    pub group: NameId,
    pub permission: u16,
    pub replication: u16,
    pub block_size: BlockSize,
}

/// An inode's [`AttrSet`], interned in a [`NameTable`]: one 4-byte id in
/// the inode takes the room of the five fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AttrId(u32);

impl AttrId {
    /// Its position in the table that made it.
    pub(super) fn index(self) -> usize {
        self.0 as usize
    }
}

/// Distinct attribute sets, each numbered once in the order first seen:
/// the namespace's own (in its [`NameTable`]), or one image part's while
/// it is decoded on its own thread, whose inodes hold the part's numbers
/// until [`AttrTable::into_namespace`] maps them to the namespace's.
#[derive(Debug, Clone, Default)]
pub struct AttrTable {
    sets: Vec<AttrSet>,
    ids: HashMap<AttrSet, AttrId, foldhash::fast::RandomState>,
}

impl AttrTable {
    /// The number of `set`, adding it on first use.
    pub fn intern(&mut self, set: AttrSet) -> AttrId {
        if let Some(id) = self.ids.get(&set) {
            return *id;
        }
        // Fewer distinct sets than 2^32 is all a real cluster can have
        // (as for names, above).
        let id = AttrId(u32::try_from(self.sets.len()).expect("too many attribute sets"));
        self.sets.push(set);
        self.ids.insert(set, id);
        id
    }

    /// The set numbered `id` (ids only come from this table).
    pub fn get(&self, id: AttrId) -> AttrSet {
        self.sets[id.index()]
    }

    /// The namespace's id for each of this (a part's) table's numbers, in
    /// order.
    pub fn into_namespace(self, names: &mut NameTable) -> Vec<AttrId> {
        self.sets.into_iter().map(|s| names.attrs(s)).collect()
    }

    /// Keeps the sets `used` marks (indexed by id), numbered anew in their
    /// old order; returns each old id's new one (unused ones map to 0).
    fn retain(&mut self, used: &[bool]) -> Vec<AttrId> {
        let mut renumbered = Vec::with_capacity(self.sets.len());
        let mut kept = Vec::new();
        self.ids.clear();
        for (i, set) in self.sets.iter().enumerate() {
            if used.get(i).copied().unwrap_or(false) {
                let id = AttrId(u32::try_from(kept.len()).unwrap_or(u32::MAX));
                kept.push(*set);
                self.ids.insert(*set, id);
                renumbered.push(id);
            } else {
                renumbered.push(AttrId(0));
            }
        }
        self.sets = kept;
        renumbered
    }
}

/// Sets below this many are never swept: a namespace's few sets cost
/// nothing, and a sweep walks every inode.
const SWEEP_FLOOR: usize = 4096;

/// The distinct user and group names of a namespace, and the distinct
/// attribute sets of its inodes.
#[derive(Debug, Clone, Default)]
pub struct NameTable {
    names: Vec<Arc<str>>,
    ids: HashMap<Arc<str>, NameId>,
    sets: AttrTable,
    /// Sets in use after the last sweep (0 before any).
    live_after_sweep: usize,
}

impl NameTable {
    /// The id of `name`, adding it on first use.
    pub fn intern(&mut self, name: &str) -> NameId {
        if let Some(id) = self.ids.get(name) {
            return *id;
        }
        // More than 2^32 distinct user names cannot come from a real
        // cluster; stopping beats aliasing two owners.
        let id = NameId(u32::try_from(self.names.len()).expect("too many distinct names"));
        let shared: Arc<str> = Arc::from(name);
        self.names.push(Arc::clone(&shared));
        self.ids.insert(shared, id);
        id
    }

    /// The name behind `id` (ids only come from this table).
    pub fn get(&self, id: NameId) -> &str {
        &self.names[id.0 as usize]
    }

    /// Every name, indexed by [`NameId::index`].
    pub fn all(&self) -> Vec<&str> {
        self.names.iter().map(|n| &**n).collect()
    }

    /// The id of `name` if it was ever interned (a lookup that adds nothing,
    /// for comparisons against a caller's name).
    pub fn find(&self, name: &str) -> Option<NameId> {
        self.ids.get(name).copied()
    }

    /// The id of `set`, adding it on first use.
    pub fn attrs(&mut self, set: AttrSet) -> AttrId {
        self.sets.intern(set)
    }

    /// The set of the names `owner` and `group` (interning both) with
    /// `permission`, `replication` and `block_size`.
    pub fn attrs_of(
        &mut self,
        owner: &str,
        group: &str,
        permission: u16,
        replication: u16,
        block_size: BlockSize,
    ) -> AttrId {
        let (owner, group) = (self.intern(owner), self.intern(group));
        self.attrs(AttrSet {
            owner,
            group,
            permission,
            replication,
            block_size,
        })
    }

    /// The set behind `id` (ids only come from this table).
    pub fn set(&self, id: AttrId) -> AttrSet {
        self.sets.get(id)
    }

    /// The number of sets, in use or not.
    pub fn set_count(&self) -> usize {
        self.sets.sets.len()
    }

    /// Whether sets no inode may use any more should be swept: there are
    /// at least [`SWEEP_FLOOR`] and twice as many as the last sweep kept,
    /// so sweeps cost amortized O(1) inode visits per set made.
    pub fn sweep_due(&self) -> bool {
        self.set_count() >= SWEEP_FLOOR.max(2 * self.live_after_sweep)
    }

    /// Keeps only the sets `used` marks (indexed by [`AttrId::index`]) and
    /// numbers them anew: every holder of an id must take its new one from
    /// the returned map (indexed by the old id).
    pub fn sweep_sets(&mut self, used: &[bool]) -> Vec<AttrId> {
        let renumbered = self.sets.retain(used);
        self.live_after_sweep = self.set_count();
        renumbered
    }

    /// The owner of a set.
    pub fn owner(&self, id: AttrId) -> NameId {
        self.set(id).owner
    }

    /// The group of a set.
    pub fn group(&self, id: AttrId) -> NameId {
        self.set(id).group
    }

    /// The permission bits of a set.
    pub fn permission(&self, id: AttrId) -> u16 {
        self.set(id).permission
    }

    /// The replication of a set (0 for a directory's).
    pub fn replication(&self, id: AttrId) -> u16 {
        self.set(id).replication
    }

    /// The block size of a set in bytes (0 for a directory's).
    pub fn block_size(&self, id: AttrId) -> u64 {
        self.set(id).block_size.bytes()
    }

    /// `id` changed by `change`: the id of the changed set.
    pub fn with(&mut self, id: AttrId, change: impl FnOnce(&mut AttrSet)) -> AttrId {
        let mut set = self.set(id);
        change(&mut set);
        self.attrs(set)
    }

    /// `id` with its owner replaced by `owner`.
    pub fn with_owner(&mut self, id: AttrId, owner: NameId) -> AttrId {
        self.with(id, |s| s.owner = owner)
    }

    /// `id` with its group replaced by `group`.
    pub fn with_group(&mut self, id: AttrId, group: NameId) -> AttrId {
        self.with(id, |s| s.group = group)
    }

    /// `id` with its permission bits replaced by `permission`.
    pub fn with_permission(&mut self, id: AttrId, permission: u16) -> AttrId {
        self.with(id, |s| s.permission = permission)
    }
}

/// The writers (client name and machine) of open files. Every file one
/// client holds open shares one [`Writer`]. Unlike [`NameTable`], entries
/// go away: each client has a name of its own, so a table that only grew
/// would leak. Writers no file refers to any more are dropped whenever the
/// table has doubled since the last sweep, which keeps it at most twice the
/// live size at an amortized O(1) cost per insert.
#[derive(Debug, Clone, Default)]
pub struct ClientNames {
    set: HashTable<Arc<Writer>>,
    hasher: RandomState,
    sweep_at: usize,
}

impl ClientNames {
    /// The shared writer `name` on `machine`, added on first use.
    pub fn intern(&mut self, name: &str, machine: &str) -> UnderConstruction {
        let hash = self.hasher.hash_one((name, machine));
        if let Some(shared) = self.find(hash, name, machine) {
            return UnderConstruction::shared(Arc::clone(shared));
        }
        if self.set.len() >= self.sweep_at {
            // A count of one is the table's own reference: no file uses it.
            self.set.retain(|w| Arc::strong_count(w) > 1);
            self.sweep_at = (self.set.len() * 2).max(64);
        }
        let shared = Arc::new(Writer {
            client_name: name.into(),
            client_machine: machine.into(),
            truncate_block: None,
        });
        self.insert(hash, Arc::clone(&shared));
        UnderConstruction::shared(shared)
    }

    /// Takes in the writers of `other` (an image part's) that this table
    /// lacks, so that later files of the same client share them.
    pub fn adopt(&mut self, other: ClientNames) {
        for w in other.set {
            let hash = self.hasher.hash_one((&*w.client_name, &*w.client_machine));
            if self.find(hash, &w.client_name, &w.client_machine).is_none() {
                self.insert(hash, w);
            }
        }
        self.sweep_at = self.sweep_at.max(self.set.len() * 2);
    }

    fn find(&self, hash: u64, name: &str, machine: &str) -> Option<&Arc<Writer>> {
        self.set.find(hash, |w| {
            &*w.client_name == name && &*w.client_machine == machine
        })
    }

    /// Adds `w`, known to be absent, under `hash`.
    fn insert(&mut self, hash: u64, w: Arc<Writer>) {
        let hasher = &self.hasher;
        self.set.insert_unique(hash, w, |x| {
            hasher.hash_one((&*x.client_name, &*x.client_machine))
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_gives_one_id_per_distinct_name() {
        let mut t = NameTable::default();
        let a = t.intern("alice");
        let b = t.intern("hadoop");
        assert_eq!(t.intern("alice"), a);
        assert_ne!(a, b);
        assert_eq!(t.get(a), "alice");
        assert_eq!(t.get(b), "hadoop");
        assert_eq!(t.find("hadoop"), Some(b));
        assert_eq!(t.find("bob"), None);
    }

    #[test]
    fn an_attribute_set_is_interned_once() {
        let mut t = NameTable::default();
        let size = BlockSize::new(128 << 20).expect("size");
        let a = t.attrs_of("alice", "staff", 0o644, 3, size);
        let b = t.attrs_of("bob", "staff", 0o644, 3, size);
        assert_eq!(t.attrs_of("alice", "staff", 0o644, 3, size), a);
        assert_ne!(a, b);
        assert_ne!(t.attrs_of("alice", "staff", 0o600, 3, size), a);
        assert_ne!(t.attrs_of("alice", "staff", 0o644, 2, size), a);
        assert_eq!(t.get(t.owner(b)), "bob");
        assert_eq!(t.get(t.group(b)), "staff");
        assert_eq!(
            (t.permission(b), t.replication(b), t.block_size(b)),
            (0o644, 3, 128 << 20)
        );
        let alice = t.find("alice").expect("interned");
        assert_eq!(t.with_owner(b, alice), a);
        let admins = t.intern("admins");
        let c = t.with_group(a, admins);
        assert_eq!((t.get(t.owner(c)), t.get(t.group(c))), ("alice", "admins"));
        // A change makes a new set and leaves the old one as it was.
        let d = t.with_permission(c, 0o700);
        assert_eq!((t.permission(c), t.permission(d)), (0o644, 0o700));
        assert_eq!(t.owner(d), alice);
    }

    #[test]
    fn client_names_are_shared_and_unused_ones_swept() {
        let mut t = ClientNames::default();
        let a = t.intern("DFSClient_1", "10.0.0.1");
        let b = t.intern("DFSClient_1", "10.0.0.1");
        assert!(Arc::ptr_eq(&a.0, &b.0));
        assert!(!Arc::ptr_eq(&a.0, &t.intern("DFSClient_1", "10.0.0.2").0));
        assert_eq!(
            (a.client_name(), a.client_machine()),
            ("DFSClient_1", "10.0.0.1")
        );
        drop((a, b));
        // Enough distinct names to pass a sweep: the dropped one goes, the
        // held ones stay shared.
        let held: Vec<UnderConstruction> =
            (0..200).map(|i| t.intern(&format!("c{i}"), "m")).collect();
        assert!(t.set.iter().all(|w| &*w.client_name != "DFSClient_1"));
        assert!(t.set.len() <= 2 * held.len());
        assert!(Arc::ptr_eq(&t.intern("c7", "m").0, &held[7].0));
    }
}
