//! The cache pool and directive edits in the journal's records (split from
//! `codec.rs` as the snapshot edits are).

use cairn_proto::cairn::journal as pj;
use pj::edit_proto::Op;

use crate::namespace::cache::{CacheDirective, CachePool};
use crate::namespace::Edit;

/// The record of a cache edit; `None` for any other edit.
pub fn cache_to_proto(e: &Edit) -> Option<Op> {
    Some(match e {
        Edit::PutCachePool(p) => Op::PutCachePool(pj::PutCachePoolEdit {
            pool: pj::CachePoolRecord {
                name: p.name.clone(),
                owner: p.owner.clone(),
                group: p.group.clone(),
                mode: u32::from(p.mode),
                limit: p.limit,
                max_relative_expiry_ms: p.max_relative_expiry_ms,
                default_replication: u32::from(p.default_replication),
            },
        }),
        Edit::RemoveCachePool { name } => {
            Op::RemoveCachePool(pj::RemoveCachePoolEdit { name: name.clone() })
        }
        Edit::PutCacheDirective(d) => Op::PutCacheDirective(pj::PutCacheDirectiveEdit {
            directive: pj::CacheDirectiveRecord {
                id: d.id,
                path: d.path.clone(),
                replication: u32::from(d.replication),
                pool: d.pool.clone(),
                expiry_ms: d.expiry_ms,
            },
        }),
        Edit::RemoveCacheDirective { id } => {
            Op::RemoveCacheDirective(pj::RemoveCacheDirectiveEdit { id: *id })
        }
        Edit::CacheDirectiveIds { last_id } => {
            Op::CacheDirectiveIds(pj::CacheDirectiveIdsEdit { last_id: *last_id })
        }
        _ => return None,
    })
}

fn narrow16(v: u32, what: &str) -> Result<u16, String> {
    u16::try_from(v).map_err(|_| format!("cache {what} {v} out of range"))
}

/// The cache edit of a record; `None` for any other record.
pub fn cache_from_proto(op: &Op) -> Option<Result<Edit, String>> {
    Some(match op {
        Op::PutCachePool(p) => {
            let r = &p.pool;
            narrow16(r.mode, "pool mode").and_then(|mode| {
                Ok(Edit::PutCachePool(Box::new(CachePool {
                    name: r.name.clone(),
                    owner: r.owner.clone(),
                    group: r.group.clone(),
                    mode,
                    limit: r.limit,
                    max_relative_expiry_ms: r.max_relative_expiry_ms,
                    default_replication: narrow16(r.default_replication, "replication")?,
                })))
            })
        }
        Op::RemoveCachePool(r) => Ok(Edit::RemoveCachePool {
            name: r.name.clone(),
        }),
        Op::PutCacheDirective(p) => {
            let r = &p.directive;
            narrow16(r.replication, "replication").map(|replication| {
                Edit::PutCacheDirective(Box::new(CacheDirective {
                    id: r.id,
                    path: r.path.clone(),
                    replication,
                    pool: r.pool.clone(),
                    expiry_ms: r.expiry_ms,
                }))
            })
        }
        Op::RemoveCacheDirective(r) => Ok(Edit::RemoveCacheDirective { id: r.id }),
        Op::CacheDirectiveIds(r) => Ok(Edit::CacheDirectiveIds { last_id: r.last_id }),
        _ => return None,
    })
}
