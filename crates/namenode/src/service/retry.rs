//! At-most-once ClientProtocol calls through the retry cache
//! ([`crate::retry_cache`]): HDFS's `@AtMostOnce` methods that Cairn
//! serves. A retried call that succeeded before is answered from the
//! cache; one still running is waited for.

use std::cell::Cell;
use std::sync::Arc;

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::{CallContext, CallError};
use prost::Message;

use super::convert::decode;
use super::{CallResult, NameNodeState};
use crate::retry_cache::{Lookup, RetryKey};
use futures::future::Either;
use std::future::Future;

tokio::task_local! {
    /// The call whose edits `mutate` is logging, on a Raft member: its
    /// first edits are followed by an `Edit::RetryId` with these ids.
    static LOGGED_CALL: Cell<Option<RetryKey>>;
    /// The directive an addCacheDirective being logged added: its answer,
    /// logged with its ids so a follower can give it to a retry.
    static NEW_DIRECTIVE: Cell<Option<i64>>;
}

/// How a retry of a finished call is answered.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// `true` (delete, old rename).
    True,
    /// The empty message of a void call.
    Empty,
    /// create: the file's status now (nothing has changed it: its writer
    /// never got the answer).
    FileStatus,
    /// append: kept whole where it ran (its block's locations may change);
    /// a follower that learnt the ids rebuilds it from the reopened file.
    Append,
    /// createSnapshot: kept whole where it ran; a follower rebuilds it
    /// when the request named the snapshot (a generated name is known
    /// only where it ran: there the call runs again).
    SnapshotPath,
    /// addCacheDirective: the new id, kept where it ran; a follower learns
    /// it from the log with the call's ids.
    CacheDirectiveId,
}

impl Answer {
    /// Whether the answer is kept whole where the call ran.
    fn kept(self) -> bool {
        matches!(
            self,
            Answer::Append | Answer::SnapshotPath | Answer::CacheDirectiveId
        )
    }
}

fn at_most_once(method: &str) -> Option<Answer> {
    Some(match method {
        "delete" | "rename" => Answer::True,
        "rename2"
        | "concat"
        | "createSymlink"
        | "updatePipeline"
        | "deleteSnapshot"
        | "renameSnapshot"
        | "addCachePool"
        | "modifyCachePool"
        | "removeCachePool"
        | "modifyCacheDirective"
        | "removeCacheDirective" => Answer::Empty,
        "addCacheDirective" => Answer::CacheDirectiveId,
        "create" => Answer::FileStatus,
        "append" => Answer::Append,
        "createSnapshot" => Answer::SnapshotPath,
        _ => return None,
    })
}

/// The call's key, when the client sent a 16-byte client id.
fn key_of(ctx: &CallContext) -> Option<RetryKey> {
    let id: [u8; 16] = ctx.client_id[..].try_into().ok()?;
    Some((id, ctx.call_id))
}

/// The ids `mutate` should log after its edits, taken once per call, with
/// the new directive's id when the call added one.
pub(super) fn take_logged_call() -> Option<(RetryKey, Option<i64>)> {
    let key = LOGGED_CALL.try_with(Cell::take).ok().flatten()?;
    Some((key, NEW_DIRECTIVE.try_with(Cell::take).ok().flatten()))
}

/// Drops the call's ids so that `mutate` logs its edits without them: a
/// call refused after it changed the namespace did not succeed.
pub(super) fn forget_logged_call() {
    let _ = take_logged_call();
}

/// Notes the id addCacheDirective gives out, for the log's retry ids.
pub(super) fn note_new_directive(id: i64) {
    // Outside a logged call (no Raft) there is nothing to note.
    let _ = NEW_DIRECTIVE.try_with(|d| d.set(Some(id)));
}

/// The answer to a retry of addCacheDirective that added `id`.
pub(crate) fn directive_answer(id: i64) -> Bytes {
    Bytes::from(pb::AddCacheDirectiveResponseProto { id }.encode_to_vec())
}

impl NameNodeState {
    /// Runs a ClientProtocol call, through the retry cache when it is an
    /// at-most-once one. Not an `async fn`: the future of every call is
    /// allocated, and an `async fn` holding both paths would copy its
    /// arguments into a state as large as the retry path's (over 1 KiB,
    /// past glibc's per-thread cache) for reads too. The retry path is
    /// boxed on its own.
    pub(crate) fn dispatch_once(
        self: Arc<Self>,
        ctx: CallContext,
        method: &str,
        req: Bytes,
    ) -> impl Future<Output = CallResult> + Send + '_ {
        let remembered = match (at_most_once(method), key_of(&ctx)) {
            (Some(answer), Some(key)) if self.retry_cache.enabled() => Some((answer, key)),
            _ => None,
        };
        match remembered {
            Some((answer, key)) => Either::Left(Box::pin(
                self.dispatch_remembered(ctx, method, req, answer, key),
            )),
            None => Either::Right(self.dispatch(ctx, method, req)),
        }
    }

    /// An at-most-once call through the retry cache: a retry of a finished
    /// call gets the first answer, a retry of a running one waits for it.
    async fn dispatch_remembered(
        self: Arc<Self>,
        ctx: CallContext,
        method: &str,
        req: Bytes,
        answer: Answer,
        key: RetryKey,
    ) -> CallResult {
        match self.retry_cache.begin(key).await {
            Lookup::Done(Some(kept)) => Ok(kept),
            Lookup::Done(None) => match self.rebuild(&ctx, answer, &req)? {
                Some(rebuilt) => Ok(rebuilt),
                // The file create made is gone again: run the call anew.
                None => self.dispatch(ctx, method, req).await,
            },
            Lookup::Run(ticket) => {
                let log_ids = self.config.raft.is_some();
                let result = if log_ids {
                    let state = self.clone();
                    let run =
                        NEW_DIRECTIVE.scope(Cell::new(None), state.dispatch(ctx, method, req));
                    LOGGED_CALL.scope(Cell::new(Some(key)), run).await
                } else {
                    self.clone().dispatch(ctx, method, req).await
                };
                if let Ok(bytes) = &result {
                    ticket.succeeded(answer.kept().then(|| bytes.clone()));
                }
                result
            }
        }
    }

    /// The answer to a retry of a finished call; `None` when it cannot
    /// be rebuilt (a create whose file is gone, an append whose file is
    /// no longer open by the caller, an unnamed snapshot): the call runs
    /// again.
    fn rebuild(
        &self,
        ctx: &CallContext,
        answer: Answer,
        req: &Bytes,
    ) -> Result<Option<Bytes>, CallError> {
        Ok(Some(match answer {
            // DeleteResponseProto and RenameResponseProto alike:
            // `required bool result = 1`.
            Answer::True => Bytes::from(pb::DeleteResponseProto { result: true }.encode_to_vec()),
            Answer::Empty => Bytes::new(),
            Answer::FileStatus => {
                let r: pb::CreateRequestProto = decode(req)?;
                let Some(fs) = self.status_for_retry(ctx, r.src)? else {
                    return Ok(None);
                };
                Bytes::from(pb::CreateResponseProto { fs: Some(fs) }.encode_to_vec())
            }
            Answer::Append => {
                let r: pb::AppendRequestProto = decode(req)?;
                let new_block = r.flag.unwrap_or(0) & 0x20 != 0;
                let reopened =
                    self.read(|ns| Ok(ns.reopened_by(&r.src, &r.client_name, new_block)))?;
                let Some((st, partial)) = reopened else {
                    return Ok(None);
                };
                self.append_answer(ctx, &st, partial, new_block)?
            }
            Answer::CacheDirectiveId => return Ok(None),
            Answer::SnapshotPath => {
                let r: pb::CreateSnapshotRequestProto = decode(req)?;
                // An empty name, like none, was generated where it ran.
                let Some(name) = r.snapshot_name.filter(|n| !n.is_empty()) else {
                    return Ok(None);
                };
                let path = crate::namespace::snapshot::snapshot_path(&r.snapshot_root, &name);
                if self.status_for_retry(ctx, path.clone())?.is_none() {
                    return Ok(None);
                }
                Bytes::from(
                    pb::CreateSnapshotResponseProto {
                        snapshot_path: path,
                    }
                    .encode_to_vec(),
                )
            }
        }))
    }

    /// `path`'s status as the caller sees it now (what a rebuilt answer
    /// reports); `None` when it is gone.
    fn status_for_retry(
        &self,
        ctx: &CallContext,
        path: String,
    ) -> Result<Option<pb::HdfsFileStatusProto>, CallError> {
        // The call's dispatch has just looked the caller up: a cache hit.
        let caller = self.users.caller_shared(Arc::clone(&ctx.user));
        let info = self.get_file_info(&caller, pb::GetFileInfoRequestProto { src: path })?;
        let info = pb::GetFileInfoResponseProto::decode(info)
            .map_err(|e| CallError::io(format!("file status: {e}")))?;
        Ok(info.fs)
    }
}
