//! `ClientProtocol`'s snapshot calls: `allowSnapshot` and
//! `disallowSnapshot` (superuser), `createSnapshot`, `deleteSnapshot`
//! (whose freed blocks the DataNodes are told to delete), `renameSnapshot`,
//! `getSnapshottableDirListing`, `getSnapshotListing`,
//! `getSnapshotDiffReport` and `getSnapshotDiffReportListing`. The rules
//! live in `namespace::snapshot`; this is the wire side.

use std::sync::Arc;

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;

use super::convert::{encode, status_proto};
use super::{now_ms, CallResult, NameNodeState};
use crate::namespace::permission::Caller;
use crate::namespace::snapshot::{DiffReport, ListingEntry};
use crate::namespace::FsError;

fn bytes(s: &str) -> Bytes {
    Bytes::from(s.as_bytes().to_vec())
}

impl NameNodeState {
    /// `allowSnapshot`.
    pub(super) async fn allow_snapshot(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::AllowSnapshotRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "allowSnapshot")?;
        let what = format!("allow snapshot for {}", r.snapshot_root);
        self.mutate(
            || what.clone(),
            |ns| Ok(((), vec![ns.allow_snapshot(caller, &r.snapshot_root)?])),
        )
        .await?;
        encode(&pb::AllowSnapshotResponseProto {})
    }

    /// `disallowSnapshot`.
    pub(super) async fn disallow_snapshot(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::DisallowSnapshotRequestProto,
    ) -> CallResult {
        self.require_superuser(caller, "disallowSnapshot")?;
        let what = format!("disallow snapshot for {}", r.snapshot_root);
        self.mutate(
            || what.clone(),
            |ns| {
                let edit = ns.disallow_snapshot(caller, &r.snapshot_root)?;
                Ok(((), edit.into_iter().collect()))
            },
        )
        .await?;
        encode(&pb::DisallowSnapshotResponseProto {})
    }

    /// `createSnapshot`.
    pub(super) async fn create_snapshot(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::CreateSnapshotRequestProto,
    ) -> CallResult {
        let now = now_ms();
        let what = format!("create snapshot for {}", r.snapshot_root);
        let path = self
            .mutate(
                || what.clone(),
                |ns| {
                    let (path, edit) = ns.create_snapshot(
                        caller,
                        &r.snapshot_root,
                        r.snapshot_name.as_deref(),
                        now,
                    )?;
                    Ok((path, vec![edit]))
                },
            )
            .await?;
        encode(&pb::CreateSnapshotResponseProto {
            snapshot_path: path,
        })
    }

    /// `deleteSnapshot`: the blocks only the snapshot held are deleted.
    pub(super) async fn delete_snapshot(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::DeleteSnapshotRequestProto,
    ) -> CallResult {
        let now = now_ms();
        let what = format!("delete snapshot for {}", r.snapshot_root);
        let freed = self
            .mutate(
                || what.clone(),
                |ns| {
                    let edit =
                        ns.delete_snapshot(caller, &r.snapshot_root, &r.snapshot_name, now)?;
                    let done = (ns.take_freed_blocks(), ns.take_lowered_replication());
                    Ok((done, vec![edit]))
                },
            )
            .await?;
        let (freed, lowered) = freed;
        if !freed.is_empty() {
            self.lock_blocks()?.remove_blocks(&freed);
        }
        // Replicas a snapshot's replication kept become excess.
        for file in lowered {
            self.judge_file_again(file);
        }
        encode(&pb::DeleteSnapshotResponseProto {})
    }

    /// `renameSnapshot`.
    pub(super) async fn rename_snapshot(
        self: &Arc<Self>,
        caller: &Caller,
        r: pb::RenameSnapshotRequestProto,
    ) -> CallResult {
        // HDFS refuses this before it looks at the path.
        if r.snapshot_new_name.is_empty() {
            let e = FsError::Io("The new snapshot name is null or empty.".into());
            return Err(super::convert::to_call_error(e));
        }
        let now = now_ms();
        let what = format!("rename snapshot for {}", r.snapshot_root);
        self.mutate(
            || what.clone(),
            |ns| {
                let edit = ns.rename_snapshot(
                    caller,
                    &r.snapshot_root,
                    &r.snapshot_old_name,
                    &r.snapshot_new_name,
                    now,
                )?;
                Ok(((), edit.into_iter().collect()))
            },
        )
        .await?;
        encode(&pb::RenameSnapshotResponseProto {})
    }

    /// `getSnapshottableDirListing`: no snapshottable directory in the
    /// namespace answers no list (HDFS's null), none of the caller's an
    /// empty one.
    pub(super) fn get_snapshottable_dir_listing(&self, caller: &Caller) -> CallResult {
        let dirs = self.read(|ns| Ok(ns.snapshottable_dirs(caller)))?;
        let list = dirs.map(|dirs| pb::SnapshottableDirectoryListingProto {
            snapshottable_dir_listing: dirs
                .into_iter()
                .map(|d| pb::SnapshottableDirectoryStatusProto {
                    dir_status: status_proto(d.status, true),
                    snapshot_quota: d.quota,
                    snapshot_number: d.count,
                    parent_fullpath: bytes(&d.parent_path),
                })
                .collect(),
        });
        encode(&pb::GetSnapshottableDirListingResponseProto {
            snapshottable_dir_list: list,
        })
    }

    /// `getSnapshotListing`.
    pub(super) fn get_snapshot_listing(
        &self,
        caller: &Caller,
        r: pb::GetSnapshotListingRequestProto,
    ) -> CallResult {
        let list = self.read(|ns| ns.snapshot_listing_of(caller, &r.snapshot_root))?;
        encode(&pb::GetSnapshotListingResponseProto {
            snapshot_list: Some(pb::SnapshotListingProto {
                snapshot_listing: list
                    .into_iter()
                    .map(|s| pb::SnapshotStatusProto {
                        dir_status: status_proto(s.status, true),
                        snapshot_id: s.id,
                        parent_fullpath: bytes(&s.parent_path),
                        is_deleted: false,
                    })
                    .collect(),
            }),
        })
    }

    /// A diff report; `None` is HDFS's null name (WebHDFS's empty one).
    fn diff_report(
        &self,
        caller: &Caller,
        root: &str,
        from: Option<&str>,
        to: Option<&str>,
    ) -> Result<DiffReport, cairn_rpc::CallError> {
        self.read(|ns| {
            if root.is_empty() {
                return Err(FsError::FileNotFound("Directory does not exist: ".into()));
            }
            ns.snapshot_diff_report_of(caller, root, from, to)
        })
    }

    /// WebHDFS's GETSNAPSHOTDIFF and GETSNAPSHOTDIFFLISTING (`method`):
    /// the report as RPC's, with the null names RPC cannot carry.
    pub(crate) async fn web_diff_report(
        &self,
        ctx: &cairn_rpc::server::CallContext,
        method: &str,
        root: &str,
        (from, to): (Option<&str>, Option<&str>),
    ) -> Result<DiffReport, cairn_rpc::CallError> {
        let caller = self.caller(ctx).await;
        let report = self.diff_report(&caller, root, from, to)?;
        self.metrics.record(method);
        Ok(report)
    }

    /// `getSnapshotDiffReport`.
    pub(super) fn get_snapshot_diff_report(
        &self,
        caller: &Caller,
        r: pb::GetSnapshotDiffReportRequestProto,
    ) -> CallResult {
        let (from, to) = (Some(r.from_snapshot.as_str()), Some(r.to_snapshot.as_str()));
        let report = self.diff_report(caller, &r.snapshot_root, from, to)?;
        encode(&report_proto(report))
    }

    /// `getSnapshotDiffReportListing`: the whole report in one page.
    pub(super) fn get_snapshot_diff_report_listing(
        &self,
        caller: &Caller,
        r: pb::GetSnapshotDiffReportListingRequestProto,
    ) -> CallResult {
        let (from, to) = (Some(r.from_snapshot.as_str()), Some(r.to_snapshot.as_str()));
        let report = self.diff_report(caller, &r.snapshot_root, from, to)?;
        encode(&listing_proto(report))
    }
}

pub(crate) fn report_proto(report: DiffReport) -> pb::GetSnapshotDiffReportResponseProto {
    pb::GetSnapshotDiffReportResponseProto {
        diff_report: pb::SnapshotDiffReportProto {
            snapshot_root: report.root,
            from_snapshot: report.from,
            to_snapshot: report.to,
            diff_report_entries: report
                .entries
                .into_iter()
                .map(|e| pb::SnapshotDiffReportEntryProto {
                    fullpath: bytes(&e.path),
                    modification_label: e.kind.label().to_string(),
                    target_path: e.target.as_deref().map(bytes),
                })
                .collect(),
        },
    }
}

pub(crate) fn listing_proto(report: DiffReport) -> pb::GetSnapshotDiffReportListingResponseProto {
    let entry = |e: &ListingEntry| pb::SnapshotDiffReportListingEntryProto {
        fullpath: bytes(&e.path),
        dir_id: e.dir_id.0,
        is_reference: e.is_reference,
        target_path: e.target.as_deref().map(bytes),
        file_id: Some(e.file_id.0),
    };
    let l = &report.listing;
    pb::GetSnapshotDiffReportListingResponseProto {
        diff_report: pb::SnapshotDiffReportListingProto {
            modified_entries: l.modified.iter().map(entry).collect(),
            created_entries: l.created.iter().map(entry).collect(),
            deleted_entries: l.deleted.iter().map(entry).collect(),
            is_from_earlier: report.from_earlier,
            cursor: Some(pb::SnapshotDiffReportCursorProto {
                start_path: Bytes::new(),
                index: -1,
            }),
        },
    }
}
