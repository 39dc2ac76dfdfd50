//! Centralized cache management's records (HDFS's `CacheManager` state):
//! cache pools and the path directives in them. They are part of the
//! namespace so that the edit log and checkpoint images carry them like
//! any other change. Cairn's DataNodes pin nothing in memory (HDFS's
//! `dfs.datanode.max.locked.memory` default, 0), so a directive is kept,
//! listed and counted but never cached.

use std::collections::BTreeMap;

use super::{ApplyError, Edit, Namespace};

/// HDFS's `CachePoolInfo.RELATIVE_EXPIRY_NEVER` (`Long.MAX_VALUE / 4`):
/// a pool's default maximum relative expiry, and a directive's "never".
pub const EXPIRY_NEVER_MS: i64 = i64::MAX / 4;
/// HDFS's `CachePoolInfo.LIMIT_UNLIMITED`.
pub const LIMIT_UNLIMITED: i64 = i64::MAX;

/// A cache pool, as HDFS's `CachePool` keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachePool {
    pub name: String,
    pub owner: String,
    pub group: String,
    pub mode: u16,
    /// Bytes the pool's directives may ask to cache.
    pub limit: i64,
    pub max_relative_expiry_ms: i64,
    pub default_replication: u16,
}

/// A cache directive: a path (a file, or a directory's files) to keep
/// `replication` cached replicas of until `expiry_ms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheDirective {
    pub id: i64,
    pub path: String,
    pub replication: u16,
    pub pool: String,
    /// Absolute, ms since the epoch.
    pub expiry_ms: i64,
}

/// Every pool by name and directive by id, and the next directive id.
#[derive(Debug, Clone, Default)]
pub struct CacheState {
    pools: BTreeMap<String, CachePool>,
    directives: BTreeMap<i64, CacheDirective>,
    /// Ids are never handed out twice while the NameNode runs.
    last_directive_id: i64,
}

impl CacheState {
    pub fn pools(&self) -> &BTreeMap<String, CachePool> {
        &self.pools
    }

    pub fn directives(&self) -> &BTreeMap<i64, CacheDirective> {
        &self.directives
    }

    /// The id a new directive gets (HDFS's start at 1).
    pub fn next_directive_id(&self) -> i64 {
        self.last_directive_id + 1
    }

    /// The directives of `pool`, by id.
    pub fn directives_in<'a>(&'a self, pool: &'a str) -> impl Iterator<Item = &'a CacheDirective> {
        self.directives.values().filter(move |d| d.pool == pool)
    }
}

impl Namespace {
    /// The cache pools and directives.
    pub fn cache(&self) -> &CacheState {
        &self.cache
    }

    /// [`Namespace::apply`] for the cache edits.
    pub(super) fn apply_cache_edit(&mut self, edit: &Edit) -> Result<(), ApplyError> {
        let cache = &mut self.cache;
        match edit {
            Edit::PutCachePool(pool) => {
                cache.pools.insert(pool.name.clone(), (**pool).clone());
            }
            Edit::RemoveCachePool { name } => {
                if cache.pools.remove(name).is_none() {
                    return Err(ApplyError(format!("no cache pool {name} to remove")));
                }
                cache.directives.retain(|_, d| d.pool != *name);
            }
            Edit::PutCacheDirective(d) => {
                if !cache.pools.contains_key(&d.pool) {
                    return Err(ApplyError(format!(
                        "cache directive {} names no pool {}",
                        d.id, d.pool
                    )));
                }
                cache.last_directive_id = cache.last_directive_id.max(d.id);
                cache.directives.insert(d.id, (**d).clone());
            }
            Edit::RemoveCacheDirective { id } => {
                if cache.directives.remove(id).is_none() {
                    return Err(ApplyError(format!("no cache directive {id} to remove")));
                }
            }
            Edit::CacheDirectiveIds { last_id } => {
                cache.last_directive_id = cache.last_directive_id.max(*last_id);
            }
            _ => unreachable!("not a cache edit: {edit:?}"),
        }
        Ok(())
    }

    /// The sizes a directive on `path` asks to cache, per file (HDFS's
    /// `CacheReplicationMonitor`): the file's, or those of a directory's
    /// own files (not its subdirectories'). The last block of a file being
    /// written counts only with `with_open_block`: HDFS's limit check
    /// (`computeNeeded`) counts it, its rescan (which caches no block under
    /// construction) does not. Nothing for a missing path.
    pub fn cached_file_sizes(&self, path: &str, with_open_block: bool) -> Vec<u64> {
        let Some(id) = self.resolve(path).ok().and_then(|r| r.last()) else {
            return Vec::new();
        };
        let size = |id| {
            self.node(id).file().map(|f| {
                let blocks = f.blocks.iter();
                let skip_last = usize::from(!with_open_block && f.under_construction.is_some());
                let n = f.blocks.len().saturating_sub(skip_last);
                blocks.take(n).map(|b| b.num_bytes).sum::<u64>()
            })
        };
        match self.node(id).children() {
            Some(children) => children.values().filter_map(&size).collect(),
            None => size(id).into_iter().collect(),
        }
    }

    /// The edits that rebuild the cache state (for images): pools, then
    /// their directives, then the last id handed out (when any was).
    pub(super) fn cache_edits(&self) -> impl Iterator<Item = Edit> + '_ {
        let last_id = self.cache.last_directive_id;
        let ids = (last_id > 0).then_some(Edit::CacheDirectiveIds { last_id });
        let pools = self
            .cache
            .pools
            .values()
            .map(|p| Edit::PutCachePool(Box::new(p.clone())));
        let directives = self
            .cache
            .directives
            .values()
            .map(|d| Edit::PutCacheDirective(Box::new(d.clone())));
        pools.chain(directives).chain(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::Limits;

    fn pool(name: &str) -> CachePool {
        CachePool {
            name: name.into(),
            owner: "o".into(),
            group: "g".into(),
            mode: 0o755,
            limit: LIMIT_UNLIMITED,
            max_relative_expiry_ms: EXPIRY_NEVER_MS,
            default_replication: 1,
        }
    }

    fn directive(id: i64, pool: &str) -> CacheDirective {
        CacheDirective {
            id,
            path: "/f".into(),
            replication: 2,
            pool: pool.into(),
            expiry_ms: EXPIRY_NEVER_MS,
        }
    }

    #[test]
    fn a_pools_removal_removes_its_directives_and_ids_keep_rising() {
        let mut ns = Namespace::new("su", "sg", 0, Limits::default());
        for e in [
            Edit::PutCachePool(Box::new(pool("a"))),
            Edit::PutCachePool(Box::new(pool("b"))),
            Edit::PutCacheDirective(Box::new(directive(1, "a"))),
            Edit::PutCacheDirective(Box::new(directive(2, "b"))),
            Edit::PutCacheDirective(Box::new(directive(3, "a"))),
            Edit::RemoveCachePool { name: "a".into() },
        ] {
            ns.apply(&e).expect("apply");
        }
        let left: Vec<i64> = ns.cache().directives().keys().copied().collect();
        assert_eq!(left, [2]);
        assert_eq!(ns.cache().next_directive_id(), 4);
        assert!(ns
            .apply(&Edit::PutCacheDirective(Box::new(directive(4, "a"))))
            .is_err());
        assert!(ns.apply(&Edit::RemoveCacheDirective { id: 1 }).is_err());
        let edits: Vec<Edit> = ns.cache_edits().collect();
        assert_eq!(edits.len(), 3, "pool b, directive 2, the last id");
        let mut imaged = Namespace::new("su", "sg", 0, Limits::default());
        for e in &edits {
            imaged.apply(e).expect("apply");
        }
        assert_eq!(imaged.cache().next_directive_id(), 4, "3 was handed out");
    }
}
