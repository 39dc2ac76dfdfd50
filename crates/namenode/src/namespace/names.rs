//! Interned user and group names. A namespace has millions of inodes but
//! only a handful of distinct owners and groups, so each inode keeps one
//! 4-byte [`Ownership`] (its owner and group [`NameId`]s as an interned
//! pair) instead of two heap strings of its own. Names and pairs are never
//! removed: the table grows only with the distinct ones ever used.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::HashTable;

use super::tree::{UnderConstruction, Writer};

/// An interned user or group name: an index into a [`NameTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NameId(u32);

impl NameId {
    /// Its position in [`NameTable::all`].
    pub fn index(self) -> u32 {
        self.0
    }
}

/// An inode's owner and group together, interned as a pair in a
/// [`NameTable`]: a namespace's inodes share few such pairs, and one
/// 4-byte id in the inode takes the room of two (as HDFS keeps mode, user
/// and group in one long per inode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ownership(u32);

impl Ownership {
    /// Its position in the table that made it.
    pub(super) fn index(self) -> usize {
        self.0 as usize
    }
}

/// Distinct (owner, group) pairs, each numbered once in the order first
/// seen: the namespace's own (in its [`NameTable`]), or one image part's
/// while it is decoded on its own thread, whose inodes hold the part's
/// numbers until [`PairTable::into_namespace`] maps them to the
/// namespace's.
#[derive(Debug, Clone, Default)]
pub struct PairTable {
    pairs: Vec<(NameId, NameId)>,
    ids: HashMap<(NameId, NameId), Ownership, foldhash::fast::RandomState>,
}

impl PairTable {
    /// The number of (`owner`, `group`), adding it on first use.
    pub fn intern(&mut self, owner: NameId, group: NameId) -> Ownership {
        if let Some(id) = self.ids.get(&(owner, group)) {
            return *id;
        }
        // Fewer distinct pairs than 2^32 is all a real cluster can have
        // (as for names, above).
        let id = Ownership(u32::try_from(self.pairs.len()).expect("too many owner-group pairs"));
        self.pairs.push((owner, group));
        self.ids.insert((owner, group), id);
        id
    }

    /// The pair numbered `id` (ids only come from this table).
    fn get(&self, id: Ownership) -> (NameId, NameId) {
        self.pairs[id.index()]
    }

    /// The namespace's id for each of this (a part's) table's numbers, in
    /// order.
    pub fn into_namespace(self, names: &mut NameTable) -> Vec<Ownership> {
        self.pairs
            .into_iter()
            .map(|(o, g)| names.ownership(o, g))
            .collect()
    }
}

/// The distinct user and group names of a namespace, and the distinct
/// (owner, group) pairs of its inodes.
#[derive(Debug, Clone, Default)]
pub struct NameTable {
    names: Vec<Arc<str>>,
    ids: HashMap<Arc<str>, NameId>,
    pairs: PairTable,
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

    /// The id of the pair (`owner`, `group`), adding it on first use.
    pub fn ownership(&mut self, owner: NameId, group: NameId) -> Ownership {
        self.pairs.intern(owner, group)
    }

    /// The pair of the names `owner` and `group`, interning both.
    pub fn ownership_of(&mut self, owner: &str, group: &str) -> Ownership {
        let (o, g) = (self.intern(owner), self.intern(group));
        self.ownership(o, g)
    }

    /// The owner of a pair (ids only come from this table).
    pub fn owner(&self, id: Ownership) -> NameId {
        self.pairs.get(id).0
    }

    /// The group of a pair.
    pub fn group(&self, id: Ownership) -> NameId {
        self.pairs.get(id).1
    }

    /// `id` with its owner replaced by `owner`.
    pub fn with_owner(&mut self, id: Ownership, owner: NameId) -> Ownership {
        let group = self.group(id);
        self.ownership(owner, group)
    }

    /// `id` with its group replaced by `group`.
    pub fn with_group(&mut self, id: Ownership, group: NameId) -> Ownership {
        let owner = self.owner(id);
        self.ownership(owner, group)
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
    fn an_owner_and_group_pair_is_interned_once() {
        let mut t = NameTable::default();
        let a = t.ownership_of("alice", "staff");
        let b = t.ownership_of("bob", "staff");
        assert_eq!(t.ownership_of("alice", "staff"), a);
        assert_ne!(a, b);
        assert_eq!(t.get(t.owner(b)), "bob");
        assert_eq!(t.get(t.group(b)), "staff");
        let alice = t.find("alice").expect("interned");
        assert_eq!(t.with_owner(b, alice), a);
        let admins = t.intern("admins");
        let c = t.with_group(a, admins);
        assert_eq!((t.get(t.owner(c)), t.get(t.group(c))), ("alice", "admins"));
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
