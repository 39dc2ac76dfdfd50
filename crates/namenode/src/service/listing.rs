//! Directory listings: `getListing` (with block locations when the client
//! asks, as Spark, MapReduce's FileInputFormat and Hive split planning do
//! through `listLocatedStatus`/`listFiles`), `getLocatedFileInfo`, and
//! `getBatchedListing` (several directories per call, HDFS 3.3+).
//!
//! As HDFS, a page holds at most `dfs.ls.limit` entries and, with
//! locations, stops once about `dfs.ls.limit` block locations are in it
//! (each file costs its located blocks times its replication), so one
//! answer stays small however large the files are.

use cairn_proto::exceptions as ex;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::{CallContext, CallError};
use prost::Message;

use super::convert::{encode, status_proto};
use super::{CallResult, NameNodeState};
use crate::namespace::permission::Caller;
use crate::namespace::{BlockRecord, FileStatus, FsError, Listing};

/// One page of a listing with, per file entry, its blocks when locations
/// were asked for.
struct Page {
    entries: Vec<(FileStatus, Option<Vec<BlockRecord>>)>,
    remaining: u32,
}

impl NameNodeState {
    /// A page of `src` after `start_after`, with each file's blocks when
    /// `need_location`. `Ok(None)`: no such path.
    fn listing_page(
        &self,
        caller: &Caller,
        src: &str,
        start_after: &str,
        need_location: bool,
    ) -> Result<Option<Page>, CallError> {
        let limit = self.config.ls_limit;
        self.read(|ns| {
            let Some(Listing { entries, remaining }) =
                ns.get_listing(caller, src, start_after, limit)?
            else {
                return Ok(None);
            };
            let entries = entries
                .into_iter()
                .map(|e| {
                    let blocks = (need_location && !e.is_dir).then(|| ns.blocks_for_status(&e));
                    (e, blocks)
                })
                .collect();
            Ok(Some(Page { entries, remaining }))
        })
    }

    /// Encodes a page, with locations for its files when they were read,
    /// cut where the location budget runs out (the cut entries count as
    /// remaining).
    fn encode_page(
        &self,
        page: Page,
        ctx: &CallContext,
    ) -> Result<pb::DirectoryListingProto, CallError> {
        let located = page.entries.iter().any(|(_, b)| b.is_some());
        let (bm, dns) = if located {
            (Some(self.lock_blocks()?), Some(self.lock_datanodes()?))
        } else {
            (None, None)
        };
        let client_ip = Some(ctx.remote_addr.ip());
        let total = page.entries.len();
        let mut budget = i64::try_from(self.config.ls_limit).unwrap_or(i64::MAX);
        let mut out = Vec::with_capacity(total);
        for (st, blocks) in page.entries {
            if located && budget <= 0 {
                break;
            }
            let mut locations = None;
            if let (Some(blocks), Some(bm), Some(dns)) = (&blocks, &bm, &dns) {
                let lbs = self.located_blocks(&st, blocks, (0, st.length), bm, dns, client_ip);
                let cost = lbs.blocks.len() as i64 * i64::from(st.replication);
                budget = budget.saturating_sub(cost);
                locations = Some(lbs);
            }
            let with_name = !st.name.is_empty();
            let mut proto = status_proto(st, with_name);
            proto.locations = locations;
            out.push(proto);
        }
        let cut = u32::try_from(total - out.len()).unwrap_or(u32::MAX);
        Ok(pb::DirectoryListingProto {
            partial_listing: out,
            remaining_entries: page.remaining.saturating_add(cut),
        })
    }

    /// `getListing`.
    pub(super) fn get_listing(
        &self,
        caller: &Caller,
        ctx: &CallContext,
        r: pb::GetListingRequestProto,
    ) -> CallResult {
        let start_after = String::from_utf8_lossy(&r.start_after).into_owned();
        let page = self.listing_page(caller, &r.src, &start_after, r.need_location)?;
        let dir_list = match page {
            Some(page) => Some(self.encode_page(page, ctx)?),
            None => None,
        };
        if let Some(d) = &dir_list {
            self.metrics.record_listing(d.partial_listing.len());
        }
        encode(&pb::GetListingResponseProto { dir_list })
    }

    /// `getLocatedFileInfo`: a file's status with all its block locations
    /// (a directory's has none).
    pub(super) fn get_located_file_info(
        &self,
        caller: &Caller,
        ctx: &CallContext,
        r: pb::GetLocatedFileInfoRequestProto,
    ) -> CallResult {
        let src = r.src.unwrap_or_default();
        let found = self.read(|ns| {
            Ok(ns.get_file_info(caller, &src)?.map(|st| {
                let blocks = (!st.is_dir).then(|| ns.blocks_for_status(&st));
                (st, blocks)
            }))
        })?;
        let fs = match found {
            None => None,
            Some((st, None)) => Some(status_proto(st, false)),
            Some((st, Some(blocks))) => {
                let bm = self.lock_blocks()?;
                let dns = self.lock_datanodes()?;
                let client_ip = Some(ctx.remote_addr.ip());
                let locations =
                    self.located_blocks(&st, &blocks, (0, st.length), &bm, &dns, client_ip);
                let mut proto = status_proto(st, false);
                proto.locations = Some(locations);
                Some(proto)
            }
        };
        encode(&pb::GetLocatedFileInfoResponseProto { fs })
    }

    /// `getBatchedListing`: lists several paths in one call, up to about
    /// `dfs.ls.limit` entries in all. A path that fails gets its exception
    /// in its own slot; the others are still listed. `start_after` is an
    /// opaque key naming the path and name to go on from.
    pub(super) fn get_batched_listing(
        &self,
        caller: &Caller,
        ctx: &CallContext,
        r: pb::GetBatchedListingRequestProto,
    ) -> CallResult {
        let limit = self.config.batched_ls_limit;
        if r.paths.len() > limit {
            return Err(CallError::remote(
                ex::ILLEGAL_ARGUMENT,
                format!("Too many source paths ({} > {limit})", r.paths.len()),
            ));
        }
        let checksum = paths_checksum(&r.paths);
        let (mut index, mut start_after) = (0usize, Vec::new());
        if !r.start_after.is_empty() {
            let key = pb::BatchedListingKeyProto::decode(r.start_after.clone())
                .map_err(|e| CallError::io(format!("bad batched listing key: {e}")))?;
            if key.checksum[..] != checksum[..] {
                return Err(CallError::remote(
                    ex::ILLEGAL_ARGUMENT,
                    "The paths of a continued batched listing differ from the first call's",
                ));
            }
            index = key.path_index as usize;
            start_after = key.start_after.to_vec();
            // An empty name: the last thing listed was a whole path.
            if start_after.is_empty() {
                index += 1;
            }
        }
        let mut listings = Vec::new();
        let mut entries = 0usize;
        // Whether the last path listed has more to come, and its last name.
        let mut last: Option<(bool, Vec<u8>)> = None;
        while index < r.paths.len() {
            let src = &r.paths[index];
            let after = String::from_utf8_lossy(&start_after).into_owned();
            let parent_idx = u32::try_from(index).unwrap_or(u32::MAX);
            let listed = match self.listing_page(caller, src, &after, r.need_location) {
                Ok(Some(page)) => self.encode_page(page, ctx),
                Ok(None) => Err(super::to_call_error(FsError::FileNotFound(format!(
                    "Path {src} does not exist"
                )))),
                Err(e) => Err(e),
            };
            match listed {
                Ok(dl) => {
                    entries += dl.partial_listing.len();
                    let last_name = dl
                        .partial_listing
                        .last()
                        .map(|s| s.path.to_vec())
                        .unwrap_or_default();
                    last = Some((dl.remaining_entries > 0, last_name));
                    listings.push(pb::BatchedDirectoryListingProto {
                        partial_listing: dl.partial_listing,
                        parent_idx,
                        exception: None,
                    });
                }
                Err(e) => {
                    last = None;
                    let (class_name, message) = match e {
                        CallError::Remote { class, message } => (class, message),
                        other => (ex::IO.to_string(), other.to_string()),
                    };
                    listings.push(pb::BatchedDirectoryListingProto {
                        partial_listing: Vec::new(),
                        parent_idx,
                        exception: Some(pb::RemoteExceptionProto {
                            class_name,
                            message: Some(message),
                        }),
                    });
                }
            }
            start_after.clear();
            if entries >= self.config.ls_limit {
                break;
            }
            index += 1;
        }
        let done = index >= r.paths.len()
            || (index + 1 == r.paths.len() && matches!(last, Some((false, _))));
        let (has_more, next) = if done {
            (false, Vec::new())
        } else {
            let key = pb::BatchedListingKeyProto {
                checksum: checksum.to_vec().into(),
                path_index: u32::try_from(index).unwrap_or(u32::MAX),
                start_after: last.map(|(_, name)| name).unwrap_or_default().into(),
            };
            (true, key.encode_to_vec())
        };
        encode(&pb::GetBatchedListingResponseProto {
            listings,
            has_more,
            start_after: next.into(),
        })
    }
}

/// Ties a continuation key to the paths of the call that made it.
fn paths_checksum(paths: &[String]) -> [u8; 8] {
    let mut crc = 0u32;
    for p in paths {
        crc = crc32c::crc32c_append(crc, p.as_bytes());
        crc = crc32c::crc32c_append(crc, &[0]);
    }
    let n = u32::try_from(paths.len()).unwrap_or(u32::MAX);
    let mut out = [0u8; 8];
    out[..4].copy_from_slice(&crc.to_be_bytes());
    out[4..].copy_from_slice(&n.to_be_bytes());
    out
}
