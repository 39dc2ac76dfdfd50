//! Centralized cache management (`hdfs cacheadmin`), as HDFS 3.4's
//! `CacheManager` answers it: cache pools (superuser to add, change or
//! remove; owner, group and mode guard their directives) and path
//! directives, kept in the edit log and images (`namespace/cache.rs`),
//! listed in pages with their statistics. Cairn's DataNodes cache nothing
//! (HDFS's default of no locked memory), so every statistic is what HDFS
//! reports for such a cluster: bytes and files needed, none cached but
//! empty files (nothing to cache). HDFS recomputes the figures in a
//! background rescan after each change and its listings wait for it;
//! here they are computed when listed, which gives the same numbers.

use std::collections::HashMap;
use std::sync::Arc;

use cairn_proto::hadoop::hdfs as pb;

use super::convert::{encode, to_call_error};
use super::{CallResult, NameNodeState};
use crate::namespace::cache::{CacheDirective, CachePool, EXPIRY_NEVER_MS, LIMIT_UNLIMITED};
use crate::namespace::permission::Caller;
use crate::namespace::{Edit, FsError, Namespace};

/// `CacheFlag.FORCE`: skip the pool's limit.
const FORCE: u32 = 1;
/// `dfs.namenode.list.cache.pools.num.responses` and
/// `...directives.num.responses` defaults.
const LIST_BATCH: usize = 100;

fn invalid(message: impl Into<String>) -> FsError {
    FsError::InvalidRequest(message.into())
}

/// What a pool's mode grants: READ (4) or WRITE (2).
#[derive(Clone, Copy)]
enum PoolAccess {
    Read,
    Write,
}

/// HDFS's `FSPermissionChecker.checkPermission(CachePool, FsAction)`.
fn pool_allows(checked: bool, caller: &Caller, pool: &CachePool, access: PoolAccess) -> bool {
    if !checked || caller.is_superuser {
        return true;
    }
    let bit = match access {
        PoolAccess::Read => 4,
        PoolAccess::Write => 2,
    };
    let owner = *caller.user == *pool.owner;
    let member = caller.groups.contains(&pool.group);
    (owner && (pool.mode >> 6) & bit != 0)
        || (member && (pool.mode >> 3) & bit != 0)
        || (!owner && !member && pool.mode & bit != 0)
}

fn check_pool(
    checked: bool,
    caller: &Caller,
    pool: &CachePool,
    access: PoolAccess,
) -> Result<(), FsError> {
    if pool_allows(checked, caller, pool, access) {
        return Ok(());
    }
    let what = match access {
        PoolAccess::Read => "READ",
        PoolAccess::Write => "WRITE",
    };
    Err(FsError::AccessControl(format!(
        "Permission denied while accessing pool {}: user {} does not have {what} permissions.",
        pool.name, caller.user
    )))
}

/// `new Path(p).toUri().getPath()` then `DFSUtil.isValidName`.
fn directive_path(path: Option<&str>) -> Result<String, FsError> {
    let path = path.ok_or_else(|| invalid("No path specified."))?;
    let parts: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
    let normal = if path.starts_with('/') {
        format!("/{}", parts.join("/"))
    } else {
        parts.join("/")
    };
    let bad = |c: &&str| *c == "." || *c == ".." || c.contains(':');
    if !normal.starts_with('/') || parts.iter().any(bad) {
        return Err(invalid(format!("Invalid path '{normal}'.")));
    }
    Ok(normal)
}

/// A directive's absolute expiry from the request's expiration and the
/// pool's maximum (HDFS's `validateExpiryTime`).
fn expiry(e: Option<&pb::CacheDirectiveInfoExpirationProto>, max_ms: i64) -> Result<i64, FsError> {
    let now = super::now_ms_signed();
    let Some(e) = e else {
        return Ok(now.saturating_add(max_ms));
    };
    if e.millis < 0 {
        return Err(invalid(format!(
            "Cannot set a negative expiration: {}",
            e.millis
        )));
    }
    let (relative, shown) = if e.is_relative {
        (e.millis, crate::javafmt::duration(e.millis))
    } else {
        (
            e.millis - now,
            crate::javafmt::iso_seconds(e.millis.unsigned_abs()),
        )
    };
    if relative > EXPIRY_NEVER_MS {
        return Err(invalid(format!(
            "Expiration {shown} is too far in the future!"
        )));
    }
    if relative > max_ms {
        return Err(invalid(format!(
            "Expiration {shown} exceeds the max relative expiration time of {max_ms} ms."
        )));
    }
    Ok(if e.is_relative {
        now + e.millis
    } else {
        e.millis
    })
}

/// A pool's request fields, checked as `CachePoolInfo.validate`.
fn validate_pool(
    info: &pb::CachePoolInfoProto,
    default_replication: Option<i16>,
) -> Result<String, FsError> {
    if info.limit.is_some_and(|l| l < 0) {
        return Err(invalid("Limit is negative."));
    }
    if default_replication.is_some_and(|r| r < 0) {
        return Err(invalid("Default Replication is negative"));
    }
    if let Some(max) = info.max_relative_expiry {
        if max < 0 {
            return Err(invalid("Max relative expiry is negative."));
        }
        if max > EXPIRY_NEVER_MS {
            return Err(invalid("Max relative expiry is too big."));
        }
    }
    match info.pool_name.as_deref() {
        None | Some("") => Err(FsError::Io("invalid empty cache pool name".into())),
        Some(name) => Ok(name.to_string()),
    }
}

fn apply(ns: &mut Namespace, edit: Edit) -> Result<((), Vec<Edit>), FsError> {
    ns.apply(&edit).map_err(|e| FsError::Io(e.to_string()))?;
    Ok(((), vec![edit]))
}

/// Figures of one directive or pool.
#[derive(Debug, Default, Clone, Copy)]
struct Stats {
    bytes_needed: i64,
    files_needed: i64,
    files_cached: i64,
}

/// Every directive's and pool's figures now (HDFS's rescan): directives
/// in id order, each file's bytes times the directive's replication
/// counted against its pool; a file counts as cached when nothing of it
/// needs caching (empty) and the pool is within its limit.
fn statistics(ns: &Namespace, now: i64) -> (HashMap<i64, Stats>, HashMap<&str, Stats>) {
    let cache = ns.cache();
    let mut directives = HashMap::new();
    let mut pools: HashMap<&str, Stats> = HashMap::new();
    for d in cache.directives().values() {
        let mut s = Stats::default();
        if d.expiry_ms > now {
            let limit = cache
                .pools()
                .get(&d.pool)
                .map_or(LIMIT_UNLIMITED, |p| p.limit);
            let pool = pools.entry(d.pool.as_str()).or_default();
            for size in ns.cached_file_sizes(&d.path, false) {
                let needed = i64::try_from(size)
                    .unwrap_or(i64::MAX)
                    .saturating_mul(i64::from(d.replication));
                s.files_needed += 1;
                s.bytes_needed = s.bytes_needed.saturating_add(needed);
                pool.files_needed += 1;
                pool.bytes_needed = pool.bytes_needed.saturating_add(needed);
                if pool.bytes_needed <= limit && needed == 0 {
                    s.files_cached += 1;
                    pool.files_cached += 1;
                }
            }
        }
        directives.insert(d.id, s);
    }
    (directives, pools)
}

/// The bytes `path` needs at `replication` (HDFS's `computeNeeded`).
fn needed_bytes(ns: &Namespace, path: &str, replication: u16) -> i64 {
    let total: u64 = ns.cached_file_sizes(path, true).iter().sum();
    i64::try_from(total)
        .unwrap_or(i64::MAX)
        .saturating_mul(i64::from(replication))
}

/// HDFS's `checkLimit`: the pool's figures now plus the new directive's.
fn check_limit(
    ns: &Namespace,
    pool: &CachePool,
    path: &str,
    replication: u16,
) -> Result<(), FsError> {
    if pool.limit == LIMIT_UNLIMITED {
        return Ok(());
    }
    let needed = needed_bytes(ns, path, replication);
    let (_, pools) = statistics(ns, super::now_ms_signed());
    let used = pools.get(pool.name.as_str()).map_or(0, |s| s.bytes_needed);
    if used.saturating_add(needed) > pool.limit {
        return Err(invalid(format!(
            "Caching path {path} of size {} bytes at replication {replication} would exceed pool {}'s remaining capacity of {} bytes.",
            needed / i64::from(replication.max(1)),
            pool.name,
            pool.limit - used
        )));
    }
    Ok(())
}

fn pool_named<'a>(ns: &'a Namespace, name: Option<&str>) -> Result<&'a CachePool, FsError> {
    match name {
        None => Err(invalid("No pool specified.")),
        Some("") => Err(invalid("Invalid empty pool name.")),
        Some(p) => ns
            .cache()
            .pools()
            .get(p)
            .ok_or_else(|| invalid(format!("Unknown pool {p}"))),
    }
}

fn directive_by_id(ns: &Namespace, id: i64) -> Result<&CacheDirective, FsError> {
    if id <= 0 {
        return Err(invalid("Invalid negative ID."));
    }
    ns.cache()
        .directives()
        .get(&id)
        .ok_or_else(|| invalid(format!("No directive with ID {id} found.")))
}

/// A replication read off the wire as HDFS's translator reads it into a
/// Java `short` (`Shorts.checkedCast` of the `uint32` field taken as a
/// signed int): refused before any other check when out of range.
fn java_short(wire: Option<u32>) -> Result<Option<i16>, FsError> {
    wire.map(|v| {
        let as_int = v as i32;
        i16::try_from(as_int).map_err(|_| FsError::BadArgument(format!("Out of range: {as_int}")))
    })
    .transpose()
}

fn replication_of(requested: Option<i16>, default: u16) -> Result<u16, FsError> {
    let r = requested.map_or(i32::from(default), i32::from);
    u16::try_from(r)
        .ok()
        .filter(|r| *r > 0)
        .ok_or_else(|| invalid(format!("Invalid replication factor {r} <= 0")))
}

impl NameNodeState {
    /// `addCachePool` (superuser).
    pub(super) async fn add_cache_pool(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::AddCachePoolRequestProto,
    ) -> CallResult {
        let info = r.info;
        let default_replication = java_short(info.default_replication).map_err(to_call_error)?;
        self.require_superuser(caller, "addCachePool")?;
        let name = info.pool_name.clone().unwrap_or_default();
        self.mutate(
            || format!("add cache pool{name}"),
            |ns| {
                let name = validate_pool(&info, default_replication)?;
                if ns.cache().pools().contains_key(&name) {
                    return Err(invalid(format!("Cache pool {name} already exists.")));
                }
                let group = match &info.group_name {
                    Some(g) => g.clone(),
                    None => caller.groups.first().cloned().ok_or_else(|| {
                        FsError::Io(format!(
                            "There is no primary group for UGI {} (auth:SIMPLE)",
                            caller.user
                        ))
                    })?,
                };
                let pool = CachePool {
                    name,
                    owner: info
                        .owner_name
                        .clone()
                        .unwrap_or_else(|| caller.user.to_string()),
                    group,
                    mode: info.mode.map_or(0o755, |m| (m & 0o1777) as u16),
                    limit: info.limit.unwrap_or(LIMIT_UNLIMITED),
                    max_relative_expiry_ms: info.max_relative_expiry.unwrap_or(EXPIRY_NEVER_MS),
                    default_replication: default_replication.map_or(1, |r| r.unsigned_abs()),
                };
                apply(ns, Edit::PutCachePool(Box::new(pool)))
            },
        )
        .await?;
        encode(&pb::AddCachePoolResponseProto {})
    }

    /// `modifyCachePool` (superuser): the fields the request sets.
    pub(super) async fn modify_cache_pool(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::ModifyCachePoolRequestProto,
    ) -> CallResult {
        let info = r.info;
        let default_replication = java_short(info.default_replication).map_err(to_call_error)?;
        self.require_superuser(caller, "modifyCachePool")?;
        let name = info.pool_name.clone().unwrap_or_default();
        self.mutate(
            || format!("modify cache pool{name}"),
            |ns| {
                let name = validate_pool(&info, default_replication)?;
                let mut pool = ns
                    .cache()
                    .pools()
                    .get(&name)
                    .cloned()
                    .ok_or_else(|| invalid(format!("Cache pool {name} does not exist.")))?;
                if let Some(o) = &info.owner_name {
                    pool.owner.clone_from(o);
                }
                if let Some(g) = &info.group_name {
                    pool.group.clone_from(g);
                }
                if let Some(m) = info.mode {
                    pool.mode = (m & 0o1777) as u16;
                }
                if let Some(l) = info.limit {
                    pool.limit = l;
                }
                if let Some(r) = default_replication {
                    pool.default_replication = r.unsigned_abs();
                }
                if let Some(m) = info.max_relative_expiry {
                    pool.max_relative_expiry_ms = m;
                }
                apply(ns, Edit::PutCachePool(Box::new(pool)))
            },
        )
        .await?;
        encode(&pb::ModifyCachePoolResponseProto {})
    }

    /// `removeCachePool` (superuser), with its directives.
    pub(super) async fn remove_cache_pool(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::RemoveCachePoolRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "removeCachePool")?;
        let name = r.pool_name;
        // HDFS's safe-mode message says "modify" here too.
        self.mutate(
            || format!("modify cache pool{name}"),
            |ns| {
                if name.is_empty() {
                    return Err(FsError::Io("invalid empty cache pool name".into()));
                }
                if !ns.cache().pools().contains_key(&name) {
                    return Err(invalid(format!(
                        "Cannot remove non-existent cache pool {name}"
                    )));
                }
                apply(ns, Edit::RemoveCachePool { name: name.clone() })
            },
        )
        .await?;
        encode(&pb::RemoveCachePoolResponseProto {})
    }

    /// `addCacheDirective`: WRITE on the pool; the new id.
    pub(super) async fn add_cache_directive(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::AddCacheDirectiveRequestProto,
    ) -> CallResult {
        let checked = self.config.permissions_enabled;
        let force = r.cache_flags.unwrap_or(0) & FORCE != 0;
        let info = r.info;
        let requested = java_short(info.replication).map_err(to_call_error)?;
        let id = self
            .mutate(
                || "add cache directive".to_string(),
                |ns| {
                    if info.id.is_some() {
                        return Err(FsError::Io(
                            "addDirective: you cannot specify an ID for this operation.".into(),
                        ));
                    }
                    let pool = pool_named(ns, info.pool.as_deref())?;
                    check_pool(checked, caller, pool, PoolAccess::Write)?;
                    let path = directive_path(info.path.as_deref())?;
                    let replication = replication_of(requested, pool.default_replication)?;
                    let expiry_ms = expiry(info.expiration.as_ref(), pool.max_relative_expiry_ms)?;
                    if !force {
                        check_limit(ns, pool, &path, replication)?;
                    }
                    let d = CacheDirective {
                        id: ns.cache().next_directive_id(),
                        path,
                        replication,
                        pool: pool.name.clone(),
                        expiry_ms,
                    };
                    let id = d.id;
                    let ((), edits) = apply(ns, Edit::PutCacheDirective(Box::new(d)))?;
                    super::retry::note_new_directive(id);
                    Ok((id, edits))
                },
            )
            .await?;
        encode(&pb::AddCacheDirectiveResponseProto { id })
    }

    /// `modifyCacheDirective`: WRITE on its pool (and on a new one).
    pub(super) async fn modify_cache_directive(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::ModifyCacheDirectiveRequestProto,
    ) -> CallResult {
        let checked = self.config.permissions_enabled;
        let force = r.cache_flags.unwrap_or(0) & FORCE != 0;
        let info = r.info;
        let requested = java_short(info.replication).map_err(to_call_error)?;
        // HDFS's safe-mode message says "add" here too.
        self.mutate(
            || "add cache directive".to_string(),
            |ns| {
                let id = info.id.ok_or_else(|| invalid("Must supply an ID."))?;
                let old = directive_by_id(ns, id)?;
                let old_pool = pool_named(ns, Some(&old.pool))?;
                check_pool(checked, caller, old_pool, PoolAccess::Write)?;
                let path = directive_path(Some(info.path.as_deref().unwrap_or(&old.path)))?;
                let replication = replication_of(requested, old.replication)?;
                let pool = pool_named(ns, Some(info.pool.as_deref().unwrap_or(&old.pool)))?;
                if pool.name != old.pool {
                    check_pool(checked, caller, pool, PoolAccess::Write)?;
                    if !force {
                        check_limit(ns, pool, &path, replication)?;
                    }
                }
                // An unchanged expiry is checked again as an absolute one.
                let kept = pb::CacheDirectiveInfoExpirationProto {
                    millis: old.expiry_ms,
                    is_relative: false,
                };
                let expiration = info.expiration.as_ref().unwrap_or(&kept);
                let expiry_ms = expiry(Some(expiration), pool.max_relative_expiry_ms)?;
                let d = CacheDirective {
                    id,
                    path,
                    replication,
                    pool: pool.name.clone(),
                    expiry_ms,
                };
                apply(ns, Edit::PutCacheDirective(Box::new(d)))
            },
        )
        .await?;
        encode(&pb::ModifyCacheDirectiveResponseProto {})
    }

    /// `removeCacheDirective`: WRITE on its pool.
    pub(super) async fn remove_cache_directive(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::RemoveCacheDirectiveRequestProto,
    ) -> CallResult {
        let checked = self.config.permissions_enabled;
        self.mutate(
            || "remove cache directives".to_string(),
            |ns| {
                let d = directive_by_id(ns, r.id)?;
                check_pool(
                    checked,
                    caller,
                    pool_named(ns, Some(&d.pool))?,
                    PoolAccess::Write,
                )?;
                apply(ns, Edit::RemoveCacheDirective { id: r.id })
            },
        )
        .await?;
        encode(&pb::RemoveCacheDirectiveResponseProto {})
    }

    /// `listCachePools`: the pools after `prev_pool_name`, 100 a page; a
    /// pool the caller may not READ shows only its name.
    pub(super) fn list_cache_pools(
        &self,
        caller: &Caller,
        r: pb::ListCachePoolsRequestProto,
    ) -> CallResult {
        let checked = self.config.permissions_enabled;
        self.read(|ns| {
            let (_, stats) = statistics(ns, super::now_ms_signed());
            let after = ns
                .cache()
                .pools()
                .range::<str, _>((
                    std::ops::Bound::Excluded(r.prev_pool_name.as_str()),
                    std::ops::Bound::Unbounded,
                ))
                .map(|(_, p)| p);
            let mut entries = Vec::new();
            let mut has_more = false;
            for pool in after {
                if entries.len() >= LIST_BATCH {
                    has_more = true;
                    break;
                }
                entries.push(pool_entry(
                    pool,
                    pool_allows(checked, caller, pool, PoolAccess::Read),
                    stats.get(pool.name.as_str()).copied().unwrap_or_default(),
                ));
            }
            Ok(pb::ListCachePoolsResponseProto { entries, has_more })
        })
        .and_then(|resp| encode(&resp))
    }

    /// `listCacheDirectives`: after `prev_id`, 100 a page, filtered by id,
    /// pool and path; directives in pools the caller may not READ are left
    /// out.
    pub(super) fn list_cache_directives(
        &self,
        caller: &Caller,
        r: pb::ListCacheDirectivesRequestProto,
    ) -> CallResult {
        let checked = self.config.permissions_enabled;
        let filter = r.filter;
        self.read(|ns| {
            let path = match filter.path.as_deref() {
                Some(p) => Some(directive_path(Some(p))?),
                None => None,
            };
            if filter.replication.is_some() {
                return Err(invalid("Filtering by replication is unsupported."));
            }
            let mut prev = r.prev_id;
            if let Some(id) = filter.id {
                if !ns.cache().directives().contains_key(&id) {
                    return Err(invalid(format!("Did not find requested id {id}")));
                }
                prev = id - 1;
            }
            let now = super::now_ms_signed();
            let (stats, _) = statistics(ns, now);
            let mut elements = Vec::new();
            let mut has_more = false;
            for d in ns
                .cache()
                .directives()
                .range(prev.saturating_add(1)..)
                .map(|(_, d)| d)
            {
                if elements.len() >= LIST_BATCH {
                    has_more = true;
                    break;
                }
                if filter.id.is_some_and(|id| id != d.id) {
                    break;
                }
                let readable = ns
                    .cache()
                    .pools()
                    .get(&d.pool)
                    .is_some_and(|p| pool_allows(checked, caller, p, PoolAccess::Read));
                if filter.pool.as_ref().is_some_and(|p| *p != d.pool)
                    || path.as_ref().is_some_and(|p| *p != d.path)
                    || !readable
                {
                    continue;
                }
                let s = stats.get(&d.id).copied().unwrap_or_default();
                elements.push(directive_entry(d, s, now));
            }
            Ok(pb::ListCacheDirectivesResponseProto { elements, has_more })
        })
        .and_then(|resp| encode(&resp))
    }
}

fn pool_entry(pool: &CachePool, readable: bool, s: Stats) -> pb::CachePoolEntryProto {
    let info = if readable {
        pb::CachePoolInfoProto {
            pool_name: Some(pool.name.clone()),
            owner_name: Some(pool.owner.clone()),
            group_name: Some(pool.group.clone()),
            mode: Some(i32::from(pool.mode)),
            limit: Some(pool.limit),
            max_relative_expiry: Some(pool.max_relative_expiry_ms),
            default_replication: Some(u32::from(pool.default_replication)),
        }
    } else {
        pb::CachePoolInfoProto {
            pool_name: Some(pool.name.clone()),
            ..Default::default()
        }
    };
    let s = if readable { s } else { Stats::default() };
    pb::CachePoolEntryProto {
        info,
        stats: pb::CachePoolStatsProto {
            bytes_needed: s.bytes_needed,
            bytes_cached: 0,
            bytes_overlimit: if readable {
                (s.bytes_needed - pool.limit).max(0)
            } else {
                0
            },
            files_needed: s.files_needed,
            files_cached: s.files_cached,
        },
    }
}

fn directive_entry(d: &CacheDirective, s: Stats, now: i64) -> pb::CacheDirectiveEntryProto {
    pb::CacheDirectiveEntryProto {
        info: pb::CacheDirectiveInfoProto {
            id: Some(d.id),
            path: Some(d.path.clone()),
            replication: Some(u32::from(d.replication)),
            pool: Some(d.pool.clone()),
            expiration: Some(pb::CacheDirectiveInfoExpirationProto {
                millis: d.expiry_ms,
                is_relative: false,
            }),
        },
        stats: pb::CacheDirectiveStatsProto {
            bytes_needed: s.bytes_needed,
            bytes_cached: 0,
            files_needed: s.files_needed,
            files_cached: s.files_cached,
            has_expired: now > d.expiry_ms,
        },
    }
}
