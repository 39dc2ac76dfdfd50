//! The erasure-coding policy a directory names itself, kept as HDFS keeps
//! it: the system extended attribute `system.hdfs.erasurecoding.policy`
//! (the policy's name as Java's `WritableUtils.writeString` writes it).
//! Cairn stores replicated files only, so the one policy a directory can
//! name is "replication" (`hdfs ec -setPolicy -replicate`), which HDFS
//! keeps so that a directory below an erasure-coded one stays replicated;
//! `-unsetPolicy` removes it again.

use super::permission::{Access, Caller};
use super::{Edit, FsError, Namespace, Required, XAttr, XAttrNamespace};

const EC_POLICY_XATTR: &str = "hdfs.erasurecoding.policy";

/// `WritableUtils.writeString`: a 4-byte big-endian length, then UTF-8.
fn policy_value(name: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(4 + name.len());
    v.extend_from_slice(&(name.len() as u32).to_be_bytes());
    v.extend_from_slice(name.as_bytes());
    v
}

impl Namespace {
    /// The directory at `src` after HDFS's WRITE check (`FSDirErasureCodingOp`),
    /// with its resolved path; `file_error` for a file.
    fn ec_directory(
        &self,
        caller: &Caller,
        src: &str,
        file_error: &str,
    ) -> Result<(super::INodeId, String), FsError> {
        let res = self.resolve_as(caller, src)?;
        let access = self.permissions_enabled.then_some(Access::WRITE);
        self.check(
            caller,
            &res,
            Required {
                access,
                ..Required::default()
            },
        )?;
        let id = res
            .last()
            .ok_or_else(|| FsError::FileNotFound(format!("Path not found: {}", res.path())))?;
        if !self.node(id).is_dir() {
            return Err(FsError::Io(format!("{file_error} {}", res.path())));
        }
        Ok((id, res.path()))
    }

    /// `setErasureCodingPolicy(src, "replication")`.
    ///
    /// # Errors
    /// As HDFS: no WRITE access, FileNotFound, a file.
    pub fn set_replication_ec_policy(
        &mut self,
        caller: &Caller,
        src: &str,
    ) -> Result<Edit, FsError> {
        let (_, path) = self.ec_directory(
            caller,
            src,
            "Attempt to set an erasure coding policy for a file",
        )?;
        let edit = Edit::SetXAttr {
            path,
            xattr: XAttr {
                namespace: XAttrNamespace::System,
                name: EC_POLICY_XATTR.into(),
                value: Some(policy_value("replication")),
            },
        };
        self.apply_checked(&edit);
        Ok(edit)
    }

    /// `unsetErasureCodingPolicy`.
    ///
    /// # Errors
    /// As HDFS: no WRITE access, FileNotFound, a file, and
    /// NoECPolicySetException where the directory names no policy.
    pub fn unset_ec_policy(&mut self, caller: &Caller, src: &str) -> Result<Edit, FsError> {
        let (id, path) = self.ec_directory(
            caller,
            src,
            "Cannot unset an erasure coding policy on a file",
        )?;
        let set = self
            .xattrs_of(id)
            .iter()
            .any(|x| x.namespace == XAttrNamespace::System && x.name == EC_POLICY_XATTR);
        if !set {
            return Err(FsError::NoEcPolicySet(format!(
                "No erasure coding policy explicitly set on {path}"
            )));
        }
        let edit = Edit::RemoveXAttr {
            path,
            namespace: XAttrNamespace::System,
            name: EC_POLICY_XATTR.into(),
        };
        self.apply_checked(&edit);
        Ok(edit)
    }
}
