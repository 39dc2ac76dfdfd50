//! The namespace features of issue 11 in the crash test: every client owns
//! a directory `/m<id>` that only it changes, with extended attributes and
//! named-user ACL entries on it, name and space quotas, a storage policy on
//! `/m<id>/p`, and snapshots of `/m<id>/s` (created, renamed, deleted, with
//! files written, truncated (copy-on-truncate) and deleted between them). After every restart, what was
//! acknowledged is there: the same xattrs, ACL entries, quotas, policy,
//! the snapshot names, and each snapshot's files with their exact bytes.
//! What the operation in flight at the kill touched becomes uncertain until
//! an acknowledged operation sets it again.

use std::collections::{BTreeMap, BTreeSet};

use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::client::Client;
use pb::acl_entry_proto::{AclEntryScopeProto, AclEntryTypeProto};
use pb::x_attr_proto::XAttrNamespaceProto;

/// What one client was told about its `/m<id>` tree.
#[derive(Default, Debug, Clone)]
pub struct Meta {
    ready: bool,
    /// `user.` xattrs of `/m<id>` by name (without the namespace).
    xattrs: BTreeMap<String, Vec<u8>>,
    /// Named-user access ACL entries of `/m<id>`: user → rwx bits.
    acl: BTreeMap<String, i32>,
    /// (name quota, space quota) of `/m<id>`.
    quota: Option<(u64, u64)>,
    /// The storage policy of `/m<id>/p`.
    policy: Option<String>,
    /// Files of `/m<id>/s` and their bytes.
    live: BTreeMap<String, Vec<u8>>,
    /// Snapshots of `/m<id>/s`: the files each saw.
    snapshots: BTreeMap<String, BTreeMap<String, Vec<u8>>>,
    /// Keys ("xattr:a0", "acl:u1", "quota", "policy", "file:f7",
    /// "snap:s9") the operation in flight touches, and those left unknown.
    in_flight: Vec<String>,
    uncertain: BTreeSet<String>,
    /// Acknowledged operations: setXAttr, modifyAclEntries, setQuota,
    /// setStoragePolicy, createSnapshot, rename or delete of a snapshot.
    pub acked: [u64; 6],
    /// Acknowledged truncates of snapshotted files (copy-on-truncate).
    pub truncates: u64,
}

impl Meta {
    /// After a kill: what was in flight is unknowable.
    pub fn settle(&mut self) {
        for k in std::mem::take(&mut self.in_flight) {
            match k.split_once(':') {
                Some(("xattr", n)) => drop(self.xattrs.remove(n)),
                Some(("acl", u)) => drop(self.acl.remove(u)),
                Some(("file", f)) => drop(self.live.remove(f)),
                Some(("snap", s)) => drop(self.snapshots.remove(s)),
                _ if k == "quota" => self.quota = None,
                _ if k == "policy" => self.policy = None,
                _ => {}
            }
            self.uncertain.insert(k);
        }
    }

    fn known(&mut self, key: String) {
        self.uncertain.remove(&key);
    }
}

async fn call<Q: prost::Message, R: prost::Message + Default>(
    raw: &Client,
    method: &str,
    req: &Q,
) -> Result<R, String> {
    raw.call(method, req)
        .await
        .map_err(|e| format!("{method}: {e}"))
}

/// One operation on `/m<id>` (the `j`th of the client); `model` is
/// updated once it is acknowledged.
pub async fn step(
    c: &hdfs_native::Client,
    raw: &Client,
    id: usize,
    j: u64,
    model: &std::sync::Mutex<Meta>,
) -> Result<(), String> {
    let lock = || model.lock().expect("meta model");
    let root = format!("/m{id}");
    let sdir = format!("{root}/s");
    if !lock().ready {
        c.mkdirs(&sdir, 0o755, true)
            .await
            .map_err(|e| format!("mkdirs {sdir}: {e}"))?;
        c.mkdirs(&format!("{root}/p"), 0o755, true)
            .await
            .map_err(|e| format!("mkdirs {root}/p: {e}"))?;
        let req = pb::AllowSnapshotRequestProto {
            snapshot_root: sdir.clone(),
        };
        call::<_, pb::AllowSnapshotResponseProto>(raw, "allowSnapshot", &req).await?;
        lock().ready = true;
        return Ok(());
    }
    let flight = |keys: Vec<String>| lock().in_flight = keys;
    match j % 6 {
        0 => {
            let name = format!("a{}", j % 3);
            let value = format!("v{j}").into_bytes();
            flight(vec![format!("xattr:{name}")]);
            let req = pb::SetXAttrRequestProto {
                src: root,
                x_attr: Some(pb::XAttrProto {
                    namespace: XAttrNamespaceProto::User as i32,
                    name: name.clone(),
                    value: Some(value.clone().into()),
                }),
                flag: Some(3),
            };
            call::<_, pb::SetXAttrResponseProto>(raw, "setXAttr", &req).await?;
            let mut m = lock();
            m.xattrs.insert(name.clone(), value);
            m.known(format!("xattr:{name}"));
        }
        1 => {
            let user = format!("u{}", j % 3);
            let perm = (j % 8) as i32;
            flight(vec![format!("acl:{user}")]);
            let req = pb::ModifyAclEntriesRequestProto {
                src: root,
                acl_spec: vec![pb::AclEntryProto {
                    r#type: AclEntryTypeProto::User as i32,
                    scope: AclEntryScopeProto::Access as i32,
                    permissions: perm,
                    name: Some(user.clone()),
                }],
            };
            call::<_, pb::ModifyAclEntriesResponseProto>(raw, "modifyAclEntries", &req).await?;
            let mut m = lock();
            m.acl.insert(user.clone(), perm);
            m.known(format!("acl:{user}"));
        }
        2 => {
            let q = (10_000 + j, (1 << 34) + j);
            flight(vec!["quota".into()]);
            let req = pb::SetQuotaRequestProto {
                path: root,
                namespace_quota: q.0,
                storagespace_quota: q.1,
                storage_type: None,
            };
            call::<_, pb::SetQuotaResponseProto>(raw, "setQuota", &req).await?;
            let mut m = lock();
            m.quota = Some(q);
            m.known("quota".into());
        }
        3 => {
            let policy = ["HOT", "WARM", "ALL_SSD", "ONE_SSD"][(j / 6 % 4) as usize];
            flight(vec!["policy".into()]);
            let req = pb::SetStoragePolicyRequestProto {
                src: format!("{root}/p"),
                policy_name: policy.into(),
            };
            call::<_, pb::SetStoragePolicyResponseProto>(raw, "setStoragePolicy", &req).await?;
            let mut m = lock();
            m.policy = Some(policy.into());
            m.known("policy".into());
        }
        4 => snapshot_with_a_new_file(c, raw, &sdir, j, model).await?,
        _ => drop_something(c, raw, &sdir, j, model).await?,
    }
    let mut m = lock();
    m.acked[(j % 6) as usize] += 1;
    m.in_flight.clear();
    Ok(())
}

/// Writes a new file into `/m<id>/s`, then snapshots the directory.
async fn snapshot_with_a_new_file(
    c: &hdfs_native::Client,
    raw: &Client,
    sdir: &str,
    j: u64,
    model: &std::sync::Mutex<Meta>,
) -> Result<(), String> {
    let lock = || model.lock().expect("meta model");
    let (file, name) = (format!("f{j}"), format!("s{j}"));
    let data = super::pattern(j ^ 0x5eed, 300 + (j as usize % 5) * 211);
    lock().in_flight = vec![format!("file:{file}"), format!("snap:{name}")];
    super::write_file(c, &format!("{sdir}/{file}"), &data).await?;
    lock().live.insert(file, data);
    let req = pb::CreateSnapshotRequestProto {
        snapshot_root: sdir.into(),
        snapshot_name: Some(name.clone()),
    };
    call::<_, pb::CreateSnapshotResponseProto>(raw, "createSnapshot", &req).await?;
    let mut m = lock();
    let seen = m.live.clone();
    m.snapshots.insert(name, seen);
    Ok(())
}

/// Every other time truncates the newest live file of `/m<id>/s` (inside a
/// block a snapshot sees: a copy-on-truncate); in between, in turn, deletes
/// the oldest snapshot (while two are left), renames it, deletes the oldest
/// live file. The truncate waits for its block recovery, which a kill often
/// interrupts; the four clients reach it at about the same time, so each
/// tries it several times a run (once a run per client left all four
/// interrupted in one run of ten).
async fn drop_something(
    c: &hdfs_native::Client,
    raw: &Client,
    sdir: &str,
    j: u64,
    model: &std::sync::Mutex<Meta>,
) -> Result<(), String> {
    let lock = || model.lock().expect("meta model");
    let (oldest_file, oldest_snap, count) = {
        let m = lock();
        let snap = m.snapshots.keys().next().cloned();
        (m.live.keys().next().cloned(), snap, m.snapshots.len())
    };
    // This runs for every sixth `j`: alternately a truncate, and one of
    // the three others.
    let turn = if (j / 6).is_multiple_of(2) {
        2
    } else {
        [0, 1, 3][(j / 12 % 3) as usize]
    };
    match (oldest_snap, oldest_file) {
        (Some(s), _) if count >= 2 && turn == 0 => {
            lock().in_flight = vec![format!("snap:{s}")];
            let req = pb::DeleteSnapshotRequestProto {
                snapshot_root: sdir.into(),
                snapshot_name: s.clone(),
            };
            call::<_, pb::DeleteSnapshotResponseProto>(raw, "deleteSnapshot", &req).await?;
            lock().snapshots.remove(&s);
        }
        (Some(s), _) if turn == 1 => {
            let new = format!("r{s}");
            lock().in_flight = vec![format!("snap:{s}"), format!("snap:{new}")];
            let req = pb::RenameSnapshotRequestProto {
                snapshot_root: sdir.into(),
                snapshot_old_name: s.clone(),
                snapshot_new_name: new.clone(),
            };
            call::<_, pb::RenameSnapshotResponseProto>(raw, "renameSnapshot", &req).await?;
            let mut m = lock();
            if let Some(files) = m.snapshots.remove(&s) {
                m.snapshots.insert(new, files);
            }
        }
        (_, Some(_)) if turn == 2 => {
            // The newest file is in a snapshot: a copy-on-truncate.
            let Some((f, data)) = lock()
                .live
                .iter()
                .next_back()
                .map(|(f, d)| (f.clone(), d.clone()))
            else {
                return Ok(());
            };
            let path = format!("{sdir}/{f}");
            let keep = data.len() / 2;
            lock().in_flight = vec![format!("file:{f}")];
            super::truncate(raw, &path, keep, "t41-meta").await?;
            if !super::wait_closed(raw, &path).await {
                return Err(format!("the truncate of {path} never finished"));
            }
            let mut m = lock();
            m.live.insert(f, data[..keep].to_vec());
            m.truncates += 1;
        }
        (_, Some(f)) if turn == 3 => {
            lock().in_flight = vec![format!("file:{f}")];
            c.delete(&format!("{sdir}/{f}"), false)
                .await
                .map_err(|e| format!("delete {sdir}/{f}: {e}"))?;
            lock().live.remove(&f);
        }
        _ => {}
    }
    Ok(())
}

/// Checks `/m<id>` against what the client was told.
pub async fn verify(c: &hdfs_native::Client, raw: &Client, id: usize, m: &Meta, round: usize) {
    if !m.ready {
        return;
    }
    let root = format!("/m{id}");
    let sure = |k: String| !m.uncertain.contains(&k) && !m.in_flight.contains(&k);
    let got: pb::GetXAttrsResponseProto = call(
        raw,
        "getXAttrs",
        &pb::GetXAttrsRequestProto {
            src: root.clone(),
            x_attrs: Vec::new(),
        },
    )
    .await
    .unwrap_or_else(|e| panic!("round {round}: {e}"));
    let xattrs: BTreeMap<String, Vec<u8>> = got
        .x_attrs
        .into_iter()
        .filter(|x| sure(format!("xattr:{}", x.name)))
        .map(|x| (x.name, x.value.map(|v| v.to_vec()).unwrap_or_default()))
        .collect();
    let want: BTreeMap<_, _> = m
        .xattrs
        .iter()
        .filter(|(n, _)| sure(format!("xattr:{n}")))
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect();
    assert_eq!(xattrs, want, "round {round}: xattrs of {root}");
    let acl: pb::GetAclStatusResponseProto = call(
        raw,
        "getAclStatus",
        &pb::GetAclStatusRequestProto { src: root.clone() },
    )
    .await
    .unwrap_or_else(|e| panic!("round {round}: {e}"));
    let named: BTreeMap<String, i32> = acl
        .result
        .entries
        .into_iter()
        .filter_map(|e| e.name.map(|n| (n, e.permissions)))
        .filter(|(n, _)| sure(format!("acl:{n}")))
        .collect();
    let want: BTreeMap<_, _> = m
        .acl
        .iter()
        .filter(|(u, _)| sure(format!("acl:{u}")))
        .map(|(u, p)| (u.clone(), *p))
        .collect();
    assert_eq!(named, want, "round {round}: ACL entries of {root}");
    if let (Some(q), true) = (m.quota, sure("quota".into())) {
        let u: pb::GetQuotaUsageResponseProto = call(
            raw,
            "getQuotaUsage",
            &pb::GetQuotaUsageRequestProto { path: root.clone() },
        )
        .await
        .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(
            (u.usage.quota, u.usage.space_quota),
            q,
            "round {round}: quota"
        );
    }
    if let (Some(p), true) = (&m.policy, sure("policy".into())) {
        let r: pb::GetStoragePolicyResponseProto = call(
            raw,
            "getStoragePolicy",
            &pb::GetStoragePolicyRequestProto {
                path: format!("{root}/p"),
            },
        )
        .await
        .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(&r.storage_policy.name, p, "round {round}: storage policy");
    }
    verify_snapshots(c, &root, m, round).await;
}

async fn read(c: &hdfs_native::Client, path: &str, round: usize) -> Vec<u8> {
    let r = c
        .read(path)
        .await
        .unwrap_or_else(|e| panic!("round {round}: lost {path}: {e}"));
    r.read_range(0, r.file_length())
        .await
        .unwrap_or_else(|e| panic!("round {round}: read {path}: {e}"))
        .to_vec()
}

async fn verify_snapshots(c: &hdfs_native::Client, root: &str, m: &Meta, round: usize) {
    let sure = |k: String| !m.uncertain.contains(&k) && !m.in_flight.contains(&k);
    let listed: BTreeSet<String> = c
        .list_status(&format!("{root}/s/.snapshot"), false)
        .await
        .unwrap_or_else(|e| panic!("round {round}: list snapshots: {e}"))
        .into_iter()
        .filter_map(|s| s.path.rsplit('/').next().map(str::to_string))
        .filter(|s| sure(format!("snap:{s}")))
        .collect();
    let want: BTreeSet<String> = m
        .snapshots
        .keys()
        .filter(|s| sure(format!("snap:{s}")))
        .cloned()
        .collect();
    assert_eq!(listed, want, "round {round}: snapshots of {root}/s");
    for (s, files) in m.snapshots.iter().filter(|(s, _)| want.contains(*s)) {
        for (f, data) in files.iter().filter(|(f, _)| sure(format!("file:{f}"))) {
            let p = format!("{root}/s/.snapshot/{s}/{f}");
            assert!(read(c, &p, round).await == *data, "round {round}: {p}");
        }
    }
    for (f, data) in m.live.iter().filter(|(f, _)| sure(format!("file:{f}"))) {
        let p = format!("{root}/s/{f}");
        assert!(read(c, &p, round).await == *data, "round {round}: {p}");
    }
}
