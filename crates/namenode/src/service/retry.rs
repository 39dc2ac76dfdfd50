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

tokio::task_local! {
    /// The call whose edits `mutate` is logging, on a Raft member: its
    /// first edits are followed by an `Edit::RetryId` with these ids.
    static LOGGED_CALL: Cell<Option<RetryKey>>;
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
    /// Kept whole: the answer cannot be rebuilt (append's last block, a
    /// snapshot's generated name). Not logged for followers.
    Kept,
}

fn at_most_once(method: &str) -> Option<Answer> {
    Some(match method {
        "delete" | "rename" => Answer::True,
        "rename2" | "concat" | "createSymlink" | "updatePipeline" | "deleteSnapshot"
        | "renameSnapshot" => Answer::Empty,
        "create" => Answer::FileStatus,
        "append" | "createSnapshot" => Answer::Kept,
        _ => return None,
    })
}

/// The call's key, when the client sent a 16-byte client id.
fn key_of(ctx: &CallContext) -> Option<RetryKey> {
    let id: [u8; 16] = ctx.client_id[..].try_into().ok()?;
    Some((id, ctx.call_id))
}

/// The ids `mutate` should log after its edits, taken once per call.
pub(super) fn take_logged_call() -> Option<RetryKey> {
    LOGGED_CALL.try_with(Cell::take).ok().flatten()
}

impl NameNodeState {
    /// Runs a ClientProtocol call, through the retry cache when it is an
    /// at-most-once one.
    pub(crate) async fn dispatch_once(
        self: Arc<Self>,
        ctx: CallContext,
        method: &str,
        req: Bytes,
    ) -> CallResult {
        let (Some(answer), Some(key)) = (at_most_once(method), key_of(&ctx)) else {
            return self.dispatch(ctx, method, req).await;
        };
        if !self.retry_cache.enabled() {
            return self.dispatch(ctx, method, req).await;
        }
        match self.retry_cache.begin(key).await {
            Lookup::Done(Some(kept)) => Ok(kept),
            Lookup::Done(None) => match self.rebuild(&ctx, answer, &req)? {
                Some(rebuilt) => Ok(rebuilt),
                // The file create made is gone again: run the call anew.
                None => self.dispatch(ctx, method, req).await,
            },
            Lookup::Run(ticket) => {
                let log_ids = answer != Answer::Kept && self.config.raft.is_some();
                let result = if log_ids {
                    let state = self.clone();
                    LOGGED_CALL
                        .scope(Cell::new(Some(key)), state.dispatch(ctx, method, req))
                        .await
                } else {
                    self.clone().dispatch(ctx, method, req).await
                };
                if let Ok(bytes) = &result {
                    ticket.succeeded((answer == Answer::Kept).then(|| bytes.clone()));
                }
                result
            }
        }
    }

    /// The answer to a retry of a finished call; `None` for a create
    /// whose file is gone.
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
                let caller = self.caller(ctx);
                let info =
                    self.get_file_info(&caller, pb::GetFileInfoRequestProto { src: r.src })?;
                let info = pb::GetFileInfoResponseProto::decode(info)
                    .map_err(|e| CallError::io(format!("file status: {e}")))?;
                let Some(fs) = info.fs else {
                    return Ok(None);
                };
                Bytes::from(pb::CreateResponseProto { fs: Some(fs) }.encode_to_vec())
            }
            // Kept answers are found whole.
            Answer::Kept => return Ok(None),
        }))
    }
}
