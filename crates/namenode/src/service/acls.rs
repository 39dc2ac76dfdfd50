//! `ClientProtocol`'s ACL calls: `modifyAclEntries`, `removeAclEntries`,
//! `removeDefaultAcl`, `removeAcl`, `setAcl` and `getAclStatus`. The
//! rules live in `namespace::acl` and `namespace::acl_storage`; this is the
//! wire side (AclEntryProto ⇄ [`AclEntry`]).

use std::sync::Arc;

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;

use super::convert::{decode, encode};
use super::{CallResult, NameNodeState};
use crate::namespace::permission::Caller;
use crate::namespace::{AclChange, AclEntry, AclEntryType, AclScope};
use cairn_rpc::CallError;

fn from_proto(p: &pb::AclEntryProto) -> Result<AclEntry, CallError> {
    let scope = AclScope::from_number(p.scope)
        .ok_or_else(|| CallError::BadRequest(format!("unknown ACL scope {}", p.scope)))?;
    let kind = AclEntryType::from_number(p.r#type)
        .ok_or_else(|| CallError::BadRequest(format!("unknown ACL entry type {}", p.r#type)))?;
    let permission = u16::try_from(p.permissions)
        .ok()
        .filter(|bits| *bits <= 7)
        .ok_or_else(|| CallError::BadRequest(format!("unknown FsAction {}", p.permissions)))?;
    Ok(AclEntry::new(scope, kind, p.name.as_deref(), permission))
}

fn to_proto(e: AclEntry) -> pb::AclEntryProto {
    pb::AclEntryProto {
        r#type: e.kind.number(),
        scope: e.scope.number(),
        permissions: i32::from(e.permission),
        name: e.name,
    }
}

fn spec_of(entries: &[pb::AclEntryProto]) -> Result<Vec<AclEntry>, CallError> {
    entries.iter().map(from_proto).collect()
}

impl NameNodeState {
    /// The five calls that change an ACL; their requests are `src` and,
    /// for three of them, an ACL spec.
    pub(super) async fn change_acl(
        self: &Arc<Self>,
        caller: &Caller,
        method: &str,
        req: &Bytes,
    ) -> CallResult {
        let (src, change, spec, what) = match method {
            "modifyAclEntries" => {
                let r: pb::ModifyAclEntriesRequestProto = decode(req)?;
                (
                    r.src,
                    Some(AclChange::Modify),
                    spec_of(&r.acl_spec)?,
                    "modify ACL entries",
                )
            }
            "removeAclEntries" => {
                let r: pb::RemoveAclEntriesRequestProto = decode(req)?;
                let spec = spec_of(&r.acl_spec)?;
                (
                    r.src,
                    Some(AclChange::RemoveEntries),
                    spec,
                    "remove ACL entries",
                )
            }
            "removeDefaultAcl" => {
                let r: pb::RemoveDefaultAclRequestProto = decode(req)?;
                let what = "remove default ACL entries";
                (r.src, Some(AclChange::RemoveDefault), Vec::new(), what)
            }
            "setAcl" => {
                let r: pb::SetAclRequestProto = decode(req)?;
                (
                    r.src,
                    Some(AclChange::Set),
                    spec_of(&r.acl_spec)?,
                    "set ACL",
                )
            }
            _ => {
                let r: pb::RemoveAclRequestProto = decode(req)?;
                (r.src, None, Vec::new(), "remove ACL")
            }
        };
        // HDFS's safe-mode message: "Cannot <what> on <src>".
        self.mutate(
            || format!("{what} on {src}"),
            |ns| {
                let edit = match change {
                    Some(change) => ns.change_acl(caller, &src, change, &spec)?,
                    None => ns.remove_acl(caller, &src)?,
                };
                Ok(((), vec![edit]))
            },
        )
        .await?;
        // Every response of these five is an empty message.
        encode(&pb::SetAclResponseProto {})
    }

    /// `getAclStatus`.
    pub(super) fn get_acl_status(
        &self,
        caller: &Caller,
        r: pb::GetAclStatusRequestProto,
    ) -> CallResult {
        let st = self.read(|ns| ns.get_acl_status(caller, &r.src))?;
        encode(&pb::GetAclStatusResponseProto {
            result: pb::AclStatusProto {
                owner: st.owner,
                group: st.group,
                sticky: st.sticky,
                entries: st.entries.into_iter().map(to_proto).collect(),
                permission: st
                    .permission
                    .map(|p| pb::FsPermissionProto { perm: u32::from(p) }),
            },
        })
    }
}
