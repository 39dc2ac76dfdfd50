//! The dfsadmin and monitoring calls of ClientProtocol over raw RPC, where
//! the rules show that DFSAdmin's printout hides: `listOpenFiles` pages by
//! inode id in batches of `dfs.namenode.list.openfiles.num.responses` and
//! filters by path; block and storage reports; the encryption-zone queries
//! of a cluster without a KMS; `rollEdits` and `saveNamespace` writing real
//! segments and images that a restarted NameNode loads; superuser checks
//! with HDFS's messages.

mod common;

use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::CLIENT_PROTOCOL;
use cairn_rpc::client::{Client, ClientError};
use common::{current_user, Cluster, NameNode};
use hdfs_native::WriteOptions;

async fn rpc(nn: &NameNode, user: &str) -> Client {
    Client::connect(nn.addr, user, CLIENT_PROTOCOL)
        .await
        .expect("connect")
}

/// The Java class and message of a call that must fail.
fn remote(r: Result<impl std::fmt::Debug, ClientError>) -> (String, String) {
    match r {
        Err(ClientError::Remote { class, message }) => (class, message),
        other => panic!("expected a remote exception, got {other:?}"),
    }
}

async fn open_files(
    c: &Client,
    prev: i64,
    types: &[pb::OpenFilesTypeProto],
    path: &str,
) -> Result<pb::ListOpenFilesResponseProto, ClientError> {
    c.call(
        "listOpenFiles",
        &pb::ListOpenFilesRequestProto {
            id: prev,
            types: types.iter().map(|t| *t as i32).collect(),
            path: Some(path.to_string()),
        },
    )
    .await
}

fn paths(r: &pb::ListOpenFilesResponseProto) -> Vec<&str> {
    r.entries.iter().map(|e| e.path.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_files_page_by_inode_id() {
    // Goal: HDFS's paging: batches of 2, resumed after the last inode id,
    // `hasMore` while ids are left, the path filter, the types echoed, the
    // writer's client name and address; superuser only.
    let nn = NameNode::start(&["dfs.namenode.list.openfiles.num.responses=2"]);
    let fs = nn.client(None);
    let mut writers = Vec::new();
    for p in ["/o/a", "/o/b", "/p/c"] {
        writers.push(fs.create(p, WriteOptions::default()).await.expect("create"));
    }
    fs.create("/o/closed", WriteOptions::default())
        .await
        .expect("create")
        .close()
        .await
        .expect("close");
    let c = rpc(&nn, &current_user()).await;
    let all = [pb::OpenFilesTypeProto::AllOpenFiles];
    let first = open_files(&c, 0, &all, "/").await.expect("page 1");
    assert_eq!(
        (paths(&first), first.has_more),
        (vec!["/o/a", "/o/b"], true)
    );
    assert_eq!(first.types, [pb::OpenFilesTypeProto::AllOpenFiles as i32]);
    assert!(first.entries[0].id < first.entries[1].id);
    assert_eq!(first.entries[0].client_machine, "127.0.0.1");
    assert!(
        first.entries[0]
            .client_name
            .starts_with("hdfs_native_client-"),
        "{:?}",
        first.entries[0]
    );
    let last_id = first.entries[1].id;
    let second = open_files(&c, last_id, &all, "/").await.expect("page 2");
    assert_eq!((paths(&second), second.has_more), (vec!["/p/c"], false));
    // The filter: a directory and everything below it, after normalising.
    let o = open_files(&c, 0, &all, "/o//").await.expect("filter");
    assert_eq!((paths(&o), o.has_more), (vec!["/o/a", "/o/b"], true));
    let p = open_files(&c, 0, &all, "/p/c").await.expect("one file");
    assert_eq!(paths(&p), ["/p/c"]);
    // No DataNode is decommissioning: nothing blocks one.
    let blocking = [pb::OpenFilesTypeProto::BlockingDecommission];
    let b = open_files(&c, 0, &blocking, "/").await.expect("blocking");
    assert!(b.entries.is_empty() && !b.has_more);

    let (class, msg) = remote(open_files(&c, 0, &[], "/").await);
    assert_eq!(class, "java.lang.IllegalArgumentException");
    assert_eq!(msg, "Unknown OpenFileType: []");
    let (class, _) = remote(open_files(&c, 0, &all, "o").await);
    assert_eq!(class, "java.lang.AssertionError");
    let alice = rpc(&nn, "alice").await;
    let (class, msg) = remote(open_files(&alice, 0, &all, "/").await);
    assert_eq!(class, "org.apache.hadoop.security.AccessControlException");
    assert_eq!(
        msg,
        "Access denied for user alice. Superuser privilege is required for operation listOpenFiles"
    );

    for mut w in writers {
        w.close().await.expect("close");
    }
    let none = open_files(&c, 0, &all, "/").await.expect("after close");
    assert!(none.entries.is_empty() && !none.has_more);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_storage_and_encryption_reports() {
    // Goal: the figures `dfsadmin -report` reads (replicated and EC block
    // statistics), per-DataNode storage reports from the heartbeats, no
    // slow DataNode, no encryption zone (but HDFS's permission check), and
    // superuser-only reports.
    let cluster = Cluster::start(1, &[]);
    let fs = cluster.nn.client(None);
    fs.mkdirs("/secret", 0o700, true).await.expect("mkdirs");
    let c = rpc(&cluster.nn, &current_user()).await;

    let r: pb::GetFsReplicatedBlockStatsResponseProto = c
        .call(
            "getFsReplicatedBlockStats",
            &pb::GetFsReplicatedBlockStatsRequestProto {},
        )
        .await
        .expect("replicated stats");
    assert_eq!(
        (r.low_redundancy, r.missing_blocks, r.corrupt_blocks),
        (0, 0, 0)
    );
    assert_eq!(r.highest_prio_low_redundancy_blocks, Some(0));
    let e: pb::GetFsEcBlockGroupStatsResponseProto = c
        .call(
            "getFsECBlockGroupStats",
            &pb::GetFsEcBlockGroupStatsRequestProto {},
        )
        .await
        .expect("EC stats");
    assert_eq!(
        e.low_redundancy + e.missing_blocks + e.pending_deletion_blocks,
        0
    );

    let s: pb::GetDatanodeStorageReportResponseProto = c
        .call(
            "getDatanodeStorageReport",
            &pb::GetDatanodeStorageReportRequestProto { r#type: 2 },
        )
        .await
        .expect("storage report");
    assert_eq!(s.datanode_storage_reports.len(), 1);
    let dn = &s.datanode_storage_reports[0];
    assert_eq!(dn.datanode_info.id.datanode_uuid, cluster.dns[0].uuid);
    assert!(!dn.storage_reports.is_empty());
    for st in &dn.storage_reports {
        assert!(st.capacity.unwrap_or(0) > 0, "{st:?}");
        let storage = st.storage.as_ref().expect("storage");
        assert!(storage.storage_uuid.starts_with("DS-"), "{storage:?}");
        assert_eq!(storage.storage_uuid, st.storage_uuid);
    }
    let dead: pb::GetDatanodeStorageReportResponseProto = c
        .call(
            "getDatanodeStorageReport",
            &pb::GetDatanodeStorageReportRequestProto { r#type: 3 },
        )
        .await
        .expect("dead storage report");
    assert!(dead.datanode_storage_reports.is_empty());
    let slow: pb::GetSlowDatanodeReportResponseProto = c
        .call(
            "getSlowDatanodeReport",
            &pb::GetSlowDatanodeReportRequestProto {},
        )
        .await
        .expect("slow report");
    assert!(slow.datanode_info_proto.is_empty());

    for src in ["/", "/secret", "/missing/file"] {
        let ez: pb::GetEzForPathResponseProto = c
            .call(
                "getEZForPath",
                &pb::GetEzForPathRequestProto { src: src.into() },
            )
            .await
            .expect("getEZForPath");
        assert!(ez.zone.is_none(), "{src}");
    }
    let zones: pb::ListEncryptionZonesResponseProto = c
        .call(
            "listEncryptionZones",
            &pb::ListEncryptionZonesRequestProto { id: 0 },
        )
        .await
        .expect("listEncryptionZones");
    assert!(zones.zones.is_empty() && !zones.has_more);
    let re: pb::ListReencryptionStatusResponseProto = c
        .call(
            "listReencryptionStatus",
            &pb::ListReencryptionStatusRequestProto { id: 0 },
        )
        .await
        .expect("listReencryptionStatus");
    assert!(re.statuses.is_empty() && !re.has_more);

    let alice = rpc(&cluster.nn, "alice").await;
    let (class, msg) = remote(
        alice
            .call::<_, pb::GetEzForPathResponseProto>(
                "getEZForPath",
                &pb::GetEzForPathRequestProto {
                    src: "/secret/x".into(),
                },
            )
            .await,
    );
    assert_eq!(class, "org.apache.hadoop.security.AccessControlException");
    assert!(
        msg.starts_with("Permission denied: user=alice, access=EXECUTE"),
        "{msg}"
    );
    // getEnclosingRoot makes getEZForPath's checks, then names the root
    // (no encryption zones here), also for a path that does not exist.
    let me = current_user();
    for (src, user) in [
        ("/missing/file", "alice"),
        ("/", "alice"),
        ("/secret/x", &*me),
    ] {
        let root: pb::GetEnclosingRootResponseProto = rpc(&cluster.nn, user)
            .await
            .call(
                "getEnclosingRoot",
                &pb::GetEnclosingRootRequestProto {
                    filename: Some(src.into()),
                },
            )
            .await
            .expect("getEnclosingRoot");
        assert_eq!(root.enclosing_root_path.as_deref(), Some("/"), "{src}");
    }
    let (class, msg) = remote(
        alice
            .call::<_, pb::GetEnclosingRootResponseProto>(
                "getEnclosingRoot",
                &pb::GetEnclosingRootRequestProto {
                    filename: Some("/secret/x".into()),
                },
            )
            .await,
    );
    assert_eq!(class, "org.apache.hadoop.security.AccessControlException");
    assert!(
        msg.starts_with("Permission denied: user=alice, access=EXECUTE"),
        "{msg}"
    );
    for (method, op) in [
        ("getDatanodeReport", "datanodeReport"),
        ("getDatanodeStorageReport", "getDatanodeStorageReport"),
    ] {
        let (_, msg) = remote(
            alice
                .call::<_, pb::GetDatanodeReportResponseProto>(
                    method,
                    &pb::GetDatanodeReportRequestProto { r#type: 1 },
                )
                .await,
        );
        assert_eq!(
            msg,
            format!(
                "Access denied for user alice. Superuser privilege is required for operation {op}"
            )
        );
    }
    let (_, msg) = remote(
        alice
            .call::<_, pb::ListEncryptionZonesResponseProto>(
                "listEncryptionZones",
                &pb::ListEncryptionZonesRequestProto { id: 0 },
            )
            .await,
    );
    assert!(msg.ends_with("for operation listEncryptionZones"), "{msg}");
}

/// Checkpoint images and finalized segments (first, last) in a directory.
fn image_and_segments(dir: &std::path::Path) -> (Vec<u64>, Vec<(u64, u64)>) {
    let mut images = Vec::new();
    let mut segments = Vec::new();
    for e in std::fs::read_dir(dir).expect("name dir").flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(t) = name.strip_prefix("fsimage_") {
            images.push(t.parse().expect("txid"));
        } else if let Some((a, b)) = name.strip_prefix("edits_").and_then(|r| r.split_once('-')) {
            segments.push((a.parse().expect("first"), b.parse().expect("last")));
        }
    }
    images.sort();
    segments.sort();
    (images, segments)
}

async fn safe_mode(c: &Client, action: pb::SafeModeActionProto) -> bool {
    let r: pb::SetSafeModeResponseProto = c
        .call(
            "setSafeMode",
            &pb::SetSafeModeRequestProto {
                action: action as i32,
                checked: Some(false),
            },
        )
        .await
        .expect("setSafeMode");
    r.result
}

async fn save(
    c: &Client,
    window: u64,
    gap: u64,
) -> Result<pb::SaveNamespaceResponseProto, ClientError> {
    c.call(
        "saveNamespace",
        &pb::SaveNamespaceRequestProto {
            time_window: Some(window),
            tx_gap: Some(gap),
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roll_edits_and_save_namespace_survive_a_restart() {
    // Goal: rollEdits finalizes the segment and answers where the next one
    // starts; saveNamespace only in safe mode, writes fsimage_<last txid>
    // (none when the newest image is within the window and the gap); a
    // NameNode killed afterwards starts from that image plus later edits.
    let nn = NameNode::start(&[]);
    let name_dir = nn.dir.path().join("name");
    let fs = nn.client(None);
    fs.mkdirs("/a", 0o755, true).await.expect("mkdirs");
    let c = rpc(&nn, &current_user()).await;
    let r: pb::RollEditsResponseProto = c
        .call("rollEdits", &pb::RollEditsRequestProto {})
        .await
        .expect("rollEdits");
    let (_, segments) = image_and_segments(&name_dir);
    assert_eq!(
        segments.last().map(|s| s.1 + 1),
        Some(r.new_segment_tx_id),
        "{segments:?}"
    );

    let (class, msg) = remote(save(&c, 0, 0).await);
    assert_eq!(class, "java.io.IOException");
    assert_eq!(
        msg,
        "Safe mode should be turned ON in order to create namespace image."
    );
    assert!(safe_mode(&c, pb::SafeModeActionProto::SafemodeEnter).await);
    let (class, msg) = remote(
        c.call::<_, pb::RollEditsResponseProto>("rollEdits", &pb::RollEditsRequestProto {})
            .await,
    );
    assert_eq!(
        class,
        "org.apache.hadoop.hdfs.server.namenode.SafeModeException"
    );
    assert!(
        msg.starts_with("Log not rolled. Name node is in safe mode.\n"),
        "{msg}"
    );
    let last = r.new_segment_tx_id - 1;
    assert_eq!(save(&c, 0, 0).await.expect("save").saved, Some(true));
    let (images, _) = image_and_segments(&name_dir);
    assert_eq!(images.last(), Some(&last), "{images:?}");
    // Within an hour and 100 transactions of the newest image: kept.
    assert_eq!(save(&c, 3600, 100).await.expect("save").saved, Some(true));
    assert_eq!(image_and_segments(&name_dir).0, images);
    assert!(nn.log().contains("the newest image is recent enough"));

    let alice = rpc(&nn, "alice").await;
    let (_, msg) = remote(save(&alice, 0, 0).await);
    assert!(msg.ends_with("for operation saveNamespace"), "{msg}");
    let (_, msg) = remote(
        alice
            .call::<_, pb::RollEditsResponseProto>("rollEdits", &pb::RollEditsRequestProto {})
            .await,
    );
    assert!(msg.ends_with("for operation rollEditLog"), "{msg}");
    let (_, msg) = remote(
        c.call::<_, pb::MetaSaveResponseProto>(
            "metaSave",
            &pb::MetaSaveRequestProto {
                filename: "../escape".into(),
            },
        )
        .await,
    );
    assert!(msg.contains("is not a file name"), "{msg}");

    assert!(!safe_mode(&c, pb::SafeModeActionProto::SafemodeLeave).await);
    fs.mkdirs("/b", 0o755, true).await.expect("mkdirs after");
    drop((c, alice, fs));
    let dir = nn.kill();
    let nn = NameNode::start_in(dir, &[]);
    let fs = nn.client(None);
    for p in ["/a", "/b"] {
        assert!(fs.get_file_info(p).await.is_ok(), "{p} lost:\n{}", nn.log());
    }
}

async fn restore(c: &Client, arg: &str) -> Result<bool, ClientError> {
    let req = pb::RestoreFailedStorageRequestProto { arg: arg.into() };
    call::<_, pb::RestoreFailedStorageResponseProto>(c, "restoreFailedStorage", &req)
        .await
        .map(|r| r.result)
}

async fn call<Req: prost::Message, Resp: prost::Message + Default>(
    c: &Client,
    method: &str,
    req: &Req,
) -> Result<Resp, ClientError> {
    c.call(method, req).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn features_off_answer_as_hdfs_does() {
    // Goal: the calls whose feature a default HDFS has off (tokens without
    // Kerberos, symlinks, the storage-policy satisfier, encryption zones
    // without a KMS, erasure-coding administration) answer with HDFS 3.4's
    // results and exceptions, in its order of checks, not "unknown method".
    let nn = NameNode::start(&[]);
    let fs = nn.client(None);
    fs.mkdirs("/d", 0o755, true).await.expect("mkdirs");
    fs.create("/d/f", WriteOptions::default())
        .await
        .expect("create")
        .close()
        .await
        .expect("close");
    let c = rpc(&nn, &current_user()).await;
    let alice = rpc(&nn, "alice").await;

    let t: pb::GetDelegationTokenResponseProto = call(
        &c,
        "getDelegationToken",
        &pb::GetDelegationTokenRequestProto {
            renewer: "yarn".into(),
        },
    )
    .await
    .expect("getDelegationToken");
    assert!(t.token.is_none(), "no token without Kerberos: {t:?}");
    let token = cairn_proto::hadoop::common::TokenProto {
        identifier: vec![0, 1, 2].into(),
        password: vec![3].into(),
        kind: "HDFS_DELEGATION_TOKEN".into(),
        service: "127.0.0.1:8020".into(),
    };
    let (class, msg) = remote(
        call::<_, pb::RenewDelegationTokenResponseProto>(
            &c,
            "renewDelegationToken",
            &pb::RenewDelegationTokenRequestProto {
                token: token.clone(),
            },
        )
        .await,
    );
    assert_eq!(
        class,
        "org.apache.hadoop.security.token.SecretManager$InvalidToken"
    );
    assert!(msg.contains("unknown token"), "{msg}");
    let (class, _) = remote(
        call::<_, pb::CancelDelegationTokenResponseProto>(
            &c,
            "cancelDelegationToken",
            &pb::CancelDelegationTokenRequestProto { token },
        )
        .await,
    );
    assert!(class.ends_with("$InvalidToken"), "{class}");
    let key: pb::GetDataEncryptionKeyResponseProto = call(
        &c,
        "getDataEncryptionKey",
        &pb::GetDataEncryptionKeyRequestProto {},
    )
    .await
    .expect("getDataEncryptionKey");
    assert!(key.data_encryption_key.is_none());

    let (class, msg) = remote(
        call::<_, pb::CreateSymlinkResponseProto>(
            &c,
            "createSymlink",
            &pb::CreateSymlinkRequestProto {
                target: "/d/f".into(),
                link: "/d/l".into(),
                dir_perm: pb::FsPermissionProto { perm: 0o755 },
                create_parent: false,
            },
        )
        .await,
    );
    assert_eq!(
        (class.as_str(), msg.as_str()),
        (
            "java.lang.UnsupportedOperationException",
            "Symlinks not supported"
        )
    );
    assert_eq!(fs.get_file_info("/d/l").await.ok().map(|_| ()), None);
    for (path, class, msg) in [
        (
            "/d/f",
            "java.io.IOException",
            "Path /d/f is not a symbolic link",
        ),
        (
            "/d",
            "java.io.IOException",
            "Path /d is not a symbolic link",
        ),
        (
            "/d/none",
            "java.io.FileNotFoundException",
            "File does not exist: /d/none",
        ),
    ] {
        let got = remote(
            call::<_, pb::GetLinkTargetResponseProto>(
                &c,
                "getLinkTarget",
                &pb::GetLinkTargetRequestProto { path: path.into() },
            )
            .await,
        );
        assert_eq!(got, (class.to_string(), msg.to_string()), "{path}");
    }

    let (class, msg) = remote(
        call::<_, pb::SatisfyStoragePolicyResponseProto>(
            &c,
            "satisfyStoragePolicy",
            &pb::SatisfyStoragePolicyRequestProto { src: "/d".into() },
        )
        .await,
    );
    assert_eq!(
        class,
        "org.apache.hadoop.hdfs.server.namenode.UnsupportedActionException"
    );
    assert!(
        msg.starts_with("Cannot request to satisfy storage policy"),
        "{msg}"
    );

    let (class, msg) = remote(
        call::<_, pb::CreateEncryptionZoneResponseProto>(
            &c,
            "createEncryptionZone",
            &pb::CreateEncryptionZoneRequestProto {
                src: "/d".into(),
                key_name: Some("k".into()),
            },
        )
        .await,
    );
    assert_eq!(
        (class.as_str(), msg.as_str()),
        (
            "java.io.IOException",
            "Can't create an encryption zone for /d since no key provider is available."
        )
    );
    let (_, msg) = remote(
        call::<_, pb::CreateEncryptionZoneResponseProto>(
            &alice,
            "createEncryptionZone",
            &pb::CreateEncryptionZoneRequestProto {
                src: "/d".into(),
                key_name: None,
            },
        )
        .await,
    );
    assert!(msg.ends_with("for operation createEncryptionZone"), "{msg}");
    let (_, msg) = remote(
        call::<_, pb::ReencryptEncryptionZoneResponseProto>(
            &c,
            "reencryptEncryptionZone",
            &pb::ReencryptEncryptionZoneRequestProto {
                action: pb::ReencryptActionProto::StartReencrypt as i32,
                zone: "/d".into(),
            },
        )
        .await,
    );
    assert_eq!(
        msg,
        "No key provider configured, re-encryption operation is rejected"
    );

    // Erasure coding: nothing enabled; "replication" is what /d is.
    let (class, msg) = remote(
        call::<_, pb::SetErasureCodingPolicyResponseProto>(
            &c,
            "setErasureCodingPolicy",
            &pb::SetErasureCodingPolicyRequestProto {
                src: "/d".into(),
                ec_policy_name: None,
            },
        )
        .await,
    );
    assert_eq!(class, "org.apache.hadoop.HadoopIllegalArgumentException");
    assert!(
        msg.starts_with(
            "Policy 'RS-6-3-1024k' does not match any enabled erasure coding policies: []."
        ),
        "{msg}"
    );
    let set = |src: &str| pb::SetErasureCodingPolicyRequestProto {
        src: src.into(),
        ec_policy_name: Some("replication".into()),
    };
    let _: pb::SetErasureCodingPolicyResponseProto = call(&c, "setErasureCodingPolicy", &set("/d"))
        .await
        .expect("replication on a directory");
    let (_, msg) = remote(
        call::<_, pb::SetErasureCodingPolicyResponseProto>(
            &c,
            "setErasureCodingPolicy",
            &set("/d/f"),
        )
        .await,
    );
    assert_eq!(
        msg,
        "Attempt to set an erasure coding policy for a file /d/f"
    );
    let (class, msg) = remote(
        call::<_, pb::SetErasureCodingPolicyResponseProto>(
            &c,
            "setErasureCodingPolicy",
            &set("/none"),
        )
        .await,
    );
    assert_eq!(
        (class.as_str(), msg.as_str()),
        ("java.io.FileNotFoundException", "Path not found: /none")
    );
    // The "replication" set above is kept (HDFS's system xattr, hidden
    // from getXAttrs): the first unset removes it, the second finds none.
    let unset = pb::UnsetErasureCodingPolicyRequestProto { src: "/d".into() };
    let _: pb::UnsetErasureCodingPolicyResponseProto = call(&c, "unsetErasureCodingPolicy", &unset)
        .await
        .expect("unset the replication policy");
    let (class, msg) = remote(
        call::<_, pb::UnsetErasureCodingPolicyResponseProto>(
            &c,
            "unsetErasureCodingPolicy",
            &unset,
        )
        .await,
    );
    assert_eq!(
        (class.as_str(), msg.as_str()),
        (
            "org.apache.hadoop.hdfs.protocol.NoECPolicySetException",
            "No erasure coding policy explicitly set on /d"
        )
    );
    for method in [
        "enableErasureCodingPolicy",
        "disableErasureCodingPolicy",
        "removeErasureCodingPolicy",
    ] {
        let (class, msg) = remote(
            call::<_, pb::EnableErasureCodingPolicyResponseProto>(
                &c,
                method,
                &pb::EnableErasureCodingPolicyRequestProto {
                    ec_policy_name: "XOR-2-1-1024k".into(),
                },
            )
            .await,
        );
        assert_eq!(
            (class.as_str(), msg.as_str()),
            (
                "org.apache.hadoop.HadoopIllegalArgumentException",
                "The policy name XOR-2-1-1024k does not exist"
            ),
            "{method}"
        );
    }
    let added: pb::AddErasureCodingPoliciesResponseProto = call(
        &c,
        "addErasureCodingPolicies",
        &pb::AddErasureCodingPoliciesRequestProto {
            ec_policies: vec![pb::ErasureCodingPolicyProto {
                name: Some("mine".into()),
                id: 70,
                ..Default::default()
            }],
        },
    )
    .await
    .expect("addErasureCodingPolicies");
    assert_eq!(added.responses.len(), 1);
    assert!(!added.responses[0].succeed);
    assert_eq!(added.responses[0].policy.name.as_deref(), Some("mine"));
    let codecs: pb::GetErasureCodingCodecsResponseProto = call(
        &c,
        "getErasureCodingCodecs",
        &pb::GetErasureCodingCodecsRequestProto {},
    )
    .await
    .expect("codecs");
    assert!(codecs.codec.is_empty());
    let topo: pb::GetEcTopologyResultForPoliciesResponseProto = call(
        &c,
        "getECTopologyResultForPolicies",
        &pb::GetEcTopologyResultForPoliciesRequestProto { policies: vec![] },
    )
    .await
    .expect("topology");
    assert!(topo.response.is_supported);
    assert_eq!(
        topo.response.result_message,
        "No erasure coding policy is given."
    );

    // restoreFailedStorage: a flag, superuser only (op name from the arg).
    assert!(!restore(&c, "check").await.expect("check"));
    assert!(restore(&c, "true").await.expect("true"));
    assert!(restore(&c, "check").await.expect("check"));
    assert!(!restore(&c, "false").await.expect("false"));
    let (_, msg) = remote(restore(&alice, "check").await);
    assert!(
        msg.ends_with("for operation checkRestoreFailedStorage"),
        "{msg}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_calls_need_no_superuser_when_permissions_are_off() {
    // Goal: HDFS's checkSuperuserPrivilege checks nothing while
    // dfs.permissions.enabled is false, for every admin call.
    let nn = NameNode::start(&["dfs.permissions.enabled=false"]);
    let alice = rpc(&nn, "alice").await;
    let all = [pb::OpenFilesTypeProto::AllOpenFiles];
    open_files(&alice, 0, &all, "/")
        .await
        .expect("listOpenFiles as anyone");
    let _: pb::GetDatanodeReportResponseProto = call(
        &alice,
        "getDatanodeReport",
        &pb::GetDatanodeReportRequestProto { r#type: 1 },
    )
    .await
    .expect("datanodeReport as anyone");
    let _: pb::RollEditsResponseProto = call(&alice, "rollEdits", &pb::RollEditsRequestProto {})
        .await
        .expect("rollEdits as anyone");
    let r: pb::RestoreFailedStorageResponseProto = call(
        &alice,
        "restoreFailedStorage",
        &pb::RestoreFailedStorageRequestProto {
            arg: "check".into(),
        },
    )
    .await
    .expect("restoreFailedStorage as anyone");
    assert!(!r.result);
}
