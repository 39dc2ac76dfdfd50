//! What fsck does to a corrupt file when asked (HDFS's `deleteCorruptedFile`
//! and `copyBlocksToLostFound`): `delete` removes it; `move` makes
//! `/lost+found` (once), then `/lost+found/<path>` with the file's
//! permission, where HDFS then copies each run of readable blocks into a
//! chain file (`0`, `1`, ...). Both go through the ClientProtocol dispatch
//! as the fsck caller, so permissions, safe mode and the journal apply as
//! to any client.
//!
//! The copy of the block data is in `copy.rs`.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::{CallContext, CallError};
use prost::Message;

use super::facts::FileFacts;
use super::walk::Walk;

const LOST_FOUND: &str = "/lost+found";

impl Walk<'_> {
    fn context(&self) -> CallContext {
        let ip = self
            .req
            .remote
            .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST));
        CallContext {
            user: Arc::from(self.req.user.as_str()),
            real_user: None,
            client_id: Bytes::new(),
            call_id: 0,
            retry_count: 0,
            remote_addr: SocketAddr::new(ip, 0),
            state_id: None,
        }
    }

    async fn call<Q: Message, R: Message + Default>(
        &self,
        method: &str,
        msg: &Q,
    ) -> Result<R, CallError> {
        let bytes = self
            .state
            .clone()
            .dispatch(self.context(), method, Bytes::from(msg.encode_to_vec()))
            .await?;
        R::decode(bytes).map_err(|e| CallError::io(format!("cannot decode {method}: {e}")))
    }

    async fn mkdirs(&self, path: &str, permission: u32) -> Result<bool, CallError> {
        let r: pb::MkdirsResponseProto = self
            .call(
                "mkdirs",
                &pb::MkdirsRequestProto {
                    src: path.to_string(),
                    masked: pb::FsPermissionProto { perm: permission },
                    create_parent: true,
                    unmasked: None,
                },
            )
            .await?;
        Ok(r.result)
    }

    async fn exists(&self, path: &str) -> Result<Option<bool>, CallError> {
        let r: pb::GetFileInfoResponseProto = self
            .call(
                "getFileInfo",
                &pb::GetFileInfoRequestProto {
                    src: path.to_string(),
                },
            )
            .await?;
        Ok(r.fs.map(|s| s.file_type == pb::hdfs_file_status_proto::FileType::IsDir as i32))
    }

    /// `delete`: removes a corrupt file (recursively, as HDFS calls it).
    pub(super) async fn delete_corrupt(&mut self, path: &str) {
        let r: Result<pb::DeleteResponseProto, CallError> = self
            .call(
                "delete",
                &pb::DeleteRequestProto {
                    src: path.to_string(),
                    recursive: true,
                },
            )
            .await;
        match r {
            Ok(_) => tracing::info!(%path, "fsck: deleted corrupt file"),
            Err(e) => {
                tracing::error!(%path, error = %e, "fsck: error deleting corrupted file");
                self.internal_error = true;
            }
        }
    }

    /// HDFS's `lostFoundInit`: `/lost+found` as a directory, made when
    /// missing (with the default directory permission).
    async fn lost_found_ready(&mut self) -> bool {
        if let Some(ok) = self.lost_found {
            return ok;
        }
        let ok = match self.exists(LOST_FOUND).await {
            Ok(None) => self.mkdirs(LOST_FOUND, 0o755).await.unwrap_or(false),
            Ok(Some(true)) => true,
            Ok(Some(false)) => {
                tracing::warn!("Cannot use /lost+found : a regular file with this name exists.");
                false
            }
            Err(e) => {
                tracing::warn!(error = %e, "fsck: cannot check /lost+found");
                false
            }
        };
        if !ok {
            tracing::warn!("Cannot initialize /lost+found .");
            self.internal_error = true;
        }
        self.lost_found = Some(ok);
        ok
    }

    /// `move`: the file's directory under `/lost+found`, and its readable
    /// blocks copied there (`copy.rs`).
    pub(super) async fn move_to_lost_found(&mut self, f: &FileFacts) {
        if !self.lost_found_ready().await {
            tracing::error!(path = %f.path, "fsck: failed to initialize lost+found");
            self.internal_error = true;
            return;
        }
        let target = format!("{LOST_FOUND}{}", f.path);
        match self.exists(&target).await {
            Ok(Some(_)) => {
                tracing::warn!(path = %f.path, %target, "fsck: can't copy the remains to lost+found: the target exists");
                return;
            }
            Ok(None) => {}
            Err(e) => {
                tracing::error!(path = %f.path, error = %e, "fsck: copyBlocksToLostFound failed");
                self.internal_error = true;
                return;
            }
        }
        let permission = u32::from(f.status.permission & 0o7777);
        if !matches!(self.mkdirs(&target, permission).await, Ok(true)) {
            tracing::error!(%target, "fsck: failed to create directory");
            self.internal_error = true;
            return;
        }
        self.copy_blocks_to(f, &target).await;
    }
}
