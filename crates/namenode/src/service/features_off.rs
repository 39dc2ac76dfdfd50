//! ClientProtocol calls whose feature a default HDFS has off, answered as
//! HDFS 3.4 answers them then, in HDFS's order of checks (superuser, safe
//! mode, the feature, the path), so that tools get the error they know
//! instead of an unknown method:
//!
//! - Delegation tokens. Without Kerberos HDFS's token secret manager does
//!   not run: `getDelegationToken` answers no token (callers such as
//!   `FileSystem.addDelegationTokens` take that as "none needed"), and no
//!   token presented for renewal or cancellation is one it issued.
//! - Data-transfer encryption (`dfs.encrypt.data.transfer`, off): no key.
//! - Symlinks, which HDFS 3 turns off in the client library and refuses in
//!   the NameNode; `getLinkTarget` then never finds a link.
//! - The storage-policy satisfier (`dfs.storage.policy.satisfier.mode`
//!   none) and encryption zones without a key provider (no KMS).
//! - Erasure coding. Cairn stores replicated files only: no policy is
//!   enabled or can be added, "replication" is what every directory is
//!   already, and no coder is installed.
//! - `restoreFailedStorage`: HDFS's flag for retrying failed name
//!   directories; kept, though Cairn's one metadata directory has nothing
//!   to retry.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use cairn_proto::exceptions as ex;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::CallError;

use super::convert::{decode, encode};
use super::{CallResult, NameNodeState};
use crate::namespace::permission::Caller;
use crate::namespace::FsError;

/// HDFS's `dfs.namenode.ec.system.default.policy`: the policy a
/// setErasureCodingPolicy without a name asks for.
const DEFAULT_EC_POLICY: &str = "RS-6-3-1024k";

/// HDFS's `MAX_PATH_LENGTH` for a symlink's own path.
const MAX_PATH_LENGTH: usize = 8000;

impl NameNodeState {
    /// The calls of this module, or `None` for a method that is not one.
    pub(super) fn dispatch_feature_off(
        &self,
        caller: &Caller,
        method: &str,
        req: &Bytes,
    ) -> Option<CallResult> {
        Some(match method {
            "getDelegationToken" => decode::<pb::GetDelegationTokenRequestProto>(req)
                .and_then(|_| self.get_delegation_token()),
            "renewDelegationToken" => decode::<pb::RenewDelegationTokenRequestProto>(req)
                .and_then(|_| self.renew_delegation_token()),
            "cancelDelegationToken" => decode::<pb::CancelDelegationTokenRequestProto>(req)
                .and_then(|_| self.cancel_delegation_token()),
            "getDataEncryptionKey" => {
                decode::<pb::GetDataEncryptionKeyRequestProto>(req).and_then(|_| {
                    encode(&pb::GetDataEncryptionKeyResponseProto {
                        data_encryption_key: None,
                    })
                })
            }
            "createSymlink" => decode(req).and_then(create_symlink),
            "getLinkTarget" => decode(req).and_then(|r| self.get_link_target(caller, r)),
            "satisfyStoragePolicy" => {
                decode::<pb::SatisfyStoragePolicyRequestProto>(req).and_then(|_| {
                    Err(CallError::remote(
                        ex::UNSUPPORTED_ACTION,
                        "Cannot request to satisfy storage policy when storage policy \
                         satisfier feature has been disabled by admin. Seek for an admin help \
                         to enable it or use Mover tool.",
                    ))
                })
            }
            "restoreFailedStorage" => {
                decode(req).and_then(|r| self.restore_failed_storage(caller, r))
            }
            "createEncryptionZone" => {
                decode(req).and_then(|r| self.create_encryption_zone(caller, r))
            }
            "reencryptEncryptionZone" => decode(req).and_then(|r| self.reencrypt_zone(caller, r)),
            "enableErasureCodingPolicy" => decode(req).and_then(|r| {
                let r: pb::EnableErasureCodingPolicyRequestProto = r;
                self.change_ec_policy(caller, "enable", &r.ec_policy_name)
            }),
            "disableErasureCodingPolicy" => decode(req).and_then(|r| {
                let r: pb::DisableErasureCodingPolicyRequestProto = r;
                self.change_ec_policy(caller, "disable", &r.ec_policy_name)
            }),
            "removeErasureCodingPolicy" => decode(req).and_then(|r| {
                let r: pb::RemoveErasureCodingPolicyRequestProto = r;
                self.change_ec_policy(caller, "remove", &r.ec_policy_name)
            }),
            "addErasureCodingPolicies" => decode(req).and_then(|r| self.add_ec_policies(caller, r)),
            "getErasureCodingCodecs" => decode::<pb::GetErasureCodingCodecsRequestProto>(req)
                .and_then(|_| {
                    encode(&pb::GetErasureCodingCodecsResponseProto { codec: Vec::new() })
                }),
            "getECTopologyResultForPolicies" => {
                decode(req).and_then(|r| self.ec_topology_result(caller, r))
            }
            _ => return None,
        })
    }

    /// `getDelegationToken`: no token without Kerberos.
    fn get_delegation_token(&self) -> CallResult {
        self.refuse_in_safe_mode("Cannot issue delegation token")?;
        encode(&pb::GetDelegationTokenResponseProto { token: None })
    }

    /// `renewDelegationToken`: this NameNode issued none, so it knows none.
    fn renew_delegation_token(&self) -> CallResult {
        self.refuse_in_safe_mode("Cannot renew delegation token")?;
        Err(CallError::remote(
            ex::INVALID_TOKEN,
            "Renewal request for unknown token",
        ))
    }

    /// `cancelDelegationToken`: as renewal.
    fn cancel_delegation_token(&self) -> CallResult {
        self.refuse_in_safe_mode("Cannot cancel delegation token")?;
        Err(CallError::remote(ex::INVALID_TOKEN, "Token not found"))
    }

    /// `getLinkTarget`: the path's own status (links are not followed);
    /// with no symlinks anywhere, an existing path is never one.
    fn get_link_target(&self, caller: &Caller, r: pb::GetLinkTargetRequestProto) -> CallResult {
        let found = self.read(|ns| ns.get_file_info(caller, &r.path))?;
        match found {
            None => Err(CallError::remote(
                ex::FILE_NOT_FOUND,
                format!("File does not exist: {}", r.path),
            )),
            Some(_) => Err(CallError::io(format!(
                "Path {} is not a symbolic link",
                r.path
            ))),
        }
    }

    /// `restoreFailedStorage`: "check" reads the flag, "true" sets it,
    /// anything else clears it; the answer is the flag.
    fn restore_failed_storage(
        &self,
        caller: &Caller,
        r: pb::RestoreFailedStorageRequestProto,
    ) -> CallResult {
        let operation = match r.arg.as_str() {
            "check" => "checkRestoreFailedStorage",
            "true" => "enableRestoreFailedStorage",
            _ => "disableRestoreFailedStorage",
        };
        self.require_superuser(caller, operation)?;
        let result = if r.arg == "check" {
            self.restore_failed_storage.load(Ordering::Acquire)
        } else {
            let on = r.arg == "true";
            self.restore_failed_storage.store(on, Ordering::Release);
            on
        };
        encode(&pb::RestoreFailedStorageResponseProto { result })
    }

    /// `createEncryptionZone`: there is no key provider to make keys with.
    fn create_encryption_zone(
        &self,
        caller: &Caller,
        r: pb::CreateEncryptionZoneRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "createEncryptionZone")?;
        Err(CallError::io(format!(
            "Can't create an encryption zone for {} since no key provider is available.",
            r.src
        )))
    }

    /// `reencryptEncryptionZone`: refused without a key provider.
    fn reencrypt_zone(
        &self,
        caller: &Caller,
        r: pb::ReencryptEncryptionZoneRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "reencryptEncryptionZone")?;
        let action = if r.action == pb::ReencryptActionProto::CancelReencrypt as i32 {
            "CANCEL"
        } else {
            "START"
        };
        self.refuse_in_safe_mode(&format!(
            "NameNode in safemode, cannot {action} re-encryption on zone {}",
            r.zone
        ))?;
        Err(CallError::io(
            "No key provider configured, re-encryption operation is rejected",
        ))
    }

    /// `setErasureCodingPolicy`: only "replication", kept on the directory
    /// as HDFS keeps it; every other name is not enabled.
    pub(super) async fn set_ec_policy(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::SetErasureCodingPolicyRequestProto,
    ) -> CallResult {
        let name = r
            .ec_policy_name
            .clone()
            .unwrap_or_else(|| DEFAULT_EC_POLICY.to_string());
        self.mutate(
            || format!("set erasure coding policy on {}", r.src),
            |ns| {
                if !name.eq_ignore_ascii_case("replication") {
                    return Err(FsError::IllegalArgument(format!(
                        "Policy '{name}' does not match any enabled erasure coding policies: []. \
                         An erasure coding policy can be enabled by enableErasureCodingPolicy API."
                    )));
                }
                Ok(((), vec![ns.set_replication_ec_policy(caller, &r.src)?]))
            },
        )
        .await?;
        encode(&pb::SetErasureCodingPolicyResponseProto {})
    }

    /// `unsetErasureCodingPolicy`.
    pub(super) async fn unset_ec_policy(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::UnsetErasureCodingPolicyRequestProto,
    ) -> CallResult {
        self.mutate(
            || format!("unset erasure coding policy on {}", r.src),
            |ns| Ok(((), vec![ns.unset_ec_policy(caller, &r.src)?])),
        )
        .await?;
        encode(&pb::UnsetErasureCodingPolicyResponseProto {})
    }

    /// `enable`/`disable`/`removeErasureCodingPolicy`: no policy exists.
    fn change_ec_policy(&self, caller: &Caller, verb: &str, name: &str) -> CallResult {
        self.require_superuser(caller, &format!("{verb}ErasureCodingPolicy"))?;
        self.refuse_in_safe_mode(&format!("Cannot {verb} erasure coding policy {name}"))?;
        Err(CallError::remote(
            ex::HADOOP_ILLEGAL_ARGUMENT,
            format!("The policy name {name} does not exist"),
        ))
    }

    /// `addErasureCodingPolicies`: each one refused in its own answer, as
    /// HDFS does with user-defined policies off.
    fn add_ec_policies(
        &self,
        caller: &Caller,
        r: pb::AddErasureCodingPoliciesRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "addErasureCodingPolicies")?;
        self.refuse_in_safe_mode("Cannot add erasure coding policy")?;
        let responses = r
            .ec_policies
            .into_iter()
            .map(|policy| pb::AddErasureCodingPolicyResponseProto {
                policy,
                succeed: false,
                error_msg: Some(
                    "Addition of user defined erasure coding policy is disabled.".into(),
                ),
            })
            .collect();
        encode(&pb::AddErasureCodingPoliciesResponseProto { responses })
    }

    /// `getECTopologyResultForPolicies` (`hdfs ec -verifyClusterSetup`):
    /// with none enabled there is nothing to verify; a named policy does
    /// not exist.
    fn ec_topology_result(
        &self,
        caller: &Caller,
        r: pb::GetEcTopologyResultForPoliciesRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "getECTopologyResultForPolicies")?;
        if let Some(name) = r.policies.first() {
            return Err(CallError::remote(
                ex::HADOOP_ILLEGAL_ARGUMENT,
                format!("The given erasure coding policy {name} does not exist."),
            ));
        }
        encode(&pb::GetEcTopologyResultForPoliciesResponseProto {
            response: pb::EcTopologyVerifierResultProto {
                result_message: "No erasure coding policy is given.".into(),
                is_supported: true,
            },
        })
    }
}

/// `createSymlink`: HDFS 3 refuses every link (after the path length).
fn create_symlink(r: pb::CreateSymlinkRequestProto) -> CallResult {
    if r.link.len() > MAX_PATH_LENGTH {
        return Err(CallError::io(format!(
            "Symlink path exceeds {MAX_PATH_LENGTH} character limit"
        )));
    }
    Err(CallError::remote(
        ex::UNSUPPORTED_OPERATION,
        "Symlinks not supported",
    ))
}
