//! Interned user and group names. A namespace has millions of inodes but
//! only a handful of distinct owners and groups, so each inode keeps a
//! 4-byte [`NameId`] instead of two heap strings of its own. Names are
//! never removed: the table grows only with the distinct names ever used.

use std::collections::HashMap;
use std::sync::Arc;

/// An interned user or group name: an index into a [`NameTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NameId(u32);

impl NameId {
    /// Its position in [`NameTable::all`].
    pub fn index(self) -> u32 {
        self.0
    }
}

/// The distinct user and group names of a namespace.
#[derive(Debug, Clone, Default)]
pub struct NameTable {
    names: Vec<Arc<str>>,
    ids: HashMap<Arc<str>, NameId>,
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
}
