//! `listOpenFiles` (`hdfs dfsadmin -listOpenFiles`): the files under
//! construction and their writers, paged by inode id in batches of
//! `dfs.namenode.list.openfiles.num.responses`; and the encryption-zone
//! queries, answered as an HDFS cluster without a KMS answers them (no
//! zone anywhere).

use cairn_proto::exceptions as ex;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::CallError;

use super::convert::encode;
use super::{CallResult, NameNodeState};
use crate::datanodes::DatanodeUuid;
use crate::namespace::open_files::{page_blocking_decommission, page_open_files, OpenFilesPage};
use crate::namespace::permission::{Access, Caller};
use crate::namespace::INodeId;

impl NameNodeState {
    /// `listOpenFiles` (superuser): one page of the open files after
    /// inode id `r.id`, under `r.path`; all of them (ALL_OPEN_FILES) or
    /// those keeping a DataNode from finishing its decommissioning
    /// (BLOCKING_DECOMMISSION). The answer echoes the requested types.
    pub(super) fn list_open_files(
        &self,
        caller: &Caller,
        r: pb::ListOpenFilesRequestProto,
    ) -> CallResult {
        // Clients before HDFS-12969 send no path: everything.
        let path = r.path.clone().unwrap_or_else(|| "/".to_string());
        if !path.starts_with('/') {
            // INode.checkAbsolutePath, before any other check.
            return Err(CallError::remote(
                "java.lang.AssertionError",
                format!("Absolute path required, but got '{path}'"),
            ));
        }
        self.require_superuser(caller, "listOpenFiles")?;
        // HDFS filters by `new Path(path).toString()`.
        let filter = crate::namespace::path::hadoop_path(&path);
        let all = pb::OpenFilesTypeProto::AllOpenFiles as i32;
        let blocking = pb::OpenFilesTypeProto::BlockingDecommission as i32;
        let max = self.config.list_open_files_max;
        let page = if r.types.contains(&all) {
            self.read(|ns| {
                Ok(page_open_files(
                    &ns.under_construction_ids(),
                    r.id,
                    &filter,
                    max,
                    &|id| ns.open_file(id),
                ))
            })?
        } else if r.types.contains(&blocking) {
            self.blocking_decommission_page(r.id, &filter, max)?
        } else {
            return Err(CallError::remote(
                ex::ILLEGAL_ARGUMENT,
                "Unknown OpenFileType: []".to_string(),
            ));
        };
        encode(&pb::ListOpenFilesResponseProto {
            entries: page
                .entries
                .into_iter()
                .map(|f| pb::OpenFilesBatchResponseProto {
                    id: i64::try_from(f.id.0).unwrap_or(i64::MAX),
                    path: f.path,
                    client_name: f.client_name,
                    client_machine: f.client_machine,
                })
                .collect(),
            has_more: page.has_more,
            types: r.types,
        })
    }

    /// Open files with a block on a DataNode being decommissioned: such a
    /// node cannot finish while a file it holds is still being written.
    fn blocking_decommission_page(
        &self,
        prev_id: i64,
        filter: &str,
        max: usize,
    ) -> Result<OpenFilesPage, CallError> {
        let ns = self.read_namespace()?;
        let mut nodes: Vec<DatanodeUuid> = self.lock_datanodes()?.decommissioning();
        nodes.sort();
        let per_node: Vec<Vec<INodeId>> = {
            let bm = self.lock_blocks()?;
            nodes
                .iter()
                .map(|d| {
                    bm.files_on(d)
                        .into_iter()
                        .filter(|f| ns.writer_of(*f).is_some())
                        .collect()
                })
                .collect()
        };
        Ok(page_blocking_decommission(
            &per_node,
            prev_id,
            filter,
            max,
            &|id| ns.open_file(id),
        ))
    }

    /// `getEZForPath`: after HDFS's permission check (READ on the path when
    /// it exists), an answer without a zone: Cairn has no encryption zones.
    pub(super) fn get_ez_for_path(
        &self,
        caller: &Caller,
        r: pb::GetEzForPathRequestProto,
    ) -> CallResult {
        self.read(|ns| ns.check_path_access(caller, &r.src, Access::READ))?;
        encode(&pb::GetEzForPathResponseProto { zone: None })
    }

    /// `listEncryptionZones` (superuser): none.
    pub(super) fn list_encryption_zones(
        &self,
        caller: &Caller,
        _r: pb::ListEncryptionZonesRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "listEncryptionZones")?;
        encode(&pb::ListEncryptionZonesResponseProto {
            zones: Vec::new(),
            has_more: false,
        })
    }

    /// `listReencryptionStatus` (superuser): no zone, so nothing is being
    /// re-encrypted.
    pub(super) fn list_reencryption_status(
        &self,
        caller: &Caller,
        _r: pb::ListReencryptionStatusRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "listReencryptionStatus")?;
        encode(&pb::ListReencryptionStatusResponseProto {
            statuses: Vec::new(),
            has_more: false,
        })
    }
}
