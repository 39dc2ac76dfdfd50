//! ClientProtocol calls that stock clients make but hdfs-native's API does
//! not expose (old rename, getServerDefaults, getFsStats, renewLease,
//! getListing paging fields, safe mode, HA probes), sent with Cairn's own
//! small IPC client to a real `cairn namenode` process.

mod common;

use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::CLIENT_PROTOCOL;
use cairn_rpc::client::{Client, ClientError};
use common::{current_user, NameNode};

async fn connect(nn: &NameNode, user: &str) -> Client {
    Client::connect(nn.addr, user, CLIENT_PROTOCOL)
        .await
        .expect("connect")
}

fn class(e: &ClientError) -> &str {
    e.class().unwrap_or("<none>")
}

async fn mkdirs(c: &Client, p: &str) {
    let r: pb::MkdirsResponseProto = c
        .call(
            "mkdirs",
            &pb::MkdirsRequestProto {
                src: p.into(),
                masked: pb::FsPermissionProto { perm: 0o755 },
                create_parent: true,
                unmasked: None,
            },
        )
        .await
        .expect("mkdirs");
    assert!(r.result);
}

/// create (replication 1, 1 MiB blocks) as `test-client`; returns the file id.
async fn create_file(c: &Client, p: &str, create_flag: u32) -> Option<u64> {
    let r: pb::CreateResponseProto = c
        .call(
            "create",
            &pb::CreateRequestProto {
                src: p.into(),
                masked: pb::FsPermissionProto { perm: 0o644 },
                client_name: "test-client".into(),
                create_flag,
                create_parent: true,
                replication: 1,
                block_size: 1 << 20,
                ..Default::default()
            },
        )
        .await
        .expect("create");
    r.fs.expect("create returns the status").file_id
}

async fn touch(c: &Client, p: &str) {
    let file_id = create_file(c, p, 3).await;
    let done: pb::CompleteResponseProto = c
        .call(
            "complete",
            &pb::CompleteRequestProto {
                src: p.into(),
                client_name: "test-client".into(),
                last: None,
                file_id,
            },
        )
        .await
        .expect("complete");
    assert!(done.result);
}

async fn exists(c: &Client, p: &str) -> bool {
    let r: pb::GetFileInfoResponseProto = c
        .call(
            "getFileInfo",
            &pb::GetFileInfoRequestProto { src: p.into() },
        )
        .await
        .expect("getFileInfo");
    r.fs.is_some()
}

#[tokio::test]
async fn server_defaults_and_stats_match_configuration() {
    // Goal: getServerDefaults carries the configured values with HDFS's
    // fixed fields (CRC32C, no encryption, HOT policy), getFsStats answers.
    let nn = NameNode::start(&[
        "dfs.replication=2",
        "dfs.blocksize=64m",
        "fs.trash.interval=0",
    ]);
    let c = connect(&nn, &current_user()).await;
    let r: pb::GetServerDefaultsResponseProto = c
        .call("getServerDefaults", &pb::GetServerDefaultsRequestProto {})
        .await
        .expect("defaults");
    let d = r.server_defaults;
    assert_eq!(d.block_size, 64 << 20);
    assert_eq!(d.replication, 2);
    assert_eq!(d.bytes_per_checksum, 512);
    assert_eq!(d.write_packet_size, 65536);
    assert_eq!(d.file_buffer_size, 4096);
    assert_eq!(d.encrypt_data_transfer, Some(false));
    assert_eq!(d.trash_interval, Some(0));
    assert_eq!(
        d.checksum_type,
        Some(pb::ChecksumTypeProto::ChecksumCrc32c as i32)
    );
    assert_eq!(d.policy_id, Some(7));

    let s: pb::GetFsStatsResponseProto = c
        .call("getFsStats", &pb::GetFsStatusRequestProto {})
        .await
        .expect("stats");
    assert_eq!(
        (s.capacity, s.used, s.remaining, s.missing_blocks),
        (0, 0, 0, 0)
    );

    let _: pb::MsyncResponseProto = c
        .call("msync", &pb::MsyncRequestProto {})
        .await
        .expect("msync");
    let ha: pb::HaServiceStateResponseProto = c
        .call("getHAServiceState", &pb::HaServiceStateRequestProto {})
        .await
        .expect("ha");
    assert_eq!(
        ha.state,
        cairn_proto::hadoop::common::HaServiceStateProto::Active as i32
    );
    let _: pb::RenewLeaseResponseProto = c
        .call(
            "renewLease",
            &pb::RenewLeaseRequestProto {
                client_name: "test-client".into(),
                namespaces: vec![],
            },
        )
        .await
        .expect("renewLease");
}

#[tokio::test]
async fn old_rename_moves_into_directories_and_returns_false() {
    // Goal: the boolean rename the Java shell uses: moves into an existing
    // directory, answers false (not an error) where HDFS does, and throws
    // where HDFS's path resolution does.
    let nn = NameNode::start(&[]);
    let c = connect(&nn, &current_user()).await;
    mkdirs(&c, "/o/dir").await;
    touch(&c, "/o/f").await;
    let try_rename = |src: &'static str, dst: &'static str| {
        let c = &c;
        async move {
            c.call::<_, pb::RenameResponseProto>(
                "rename",
                &pb::RenameRequestProto {
                    src: src.into(),
                    dst: dst.into(),
                },
            )
            .await
            .map(|r| r.result)
        }
    };
    let rename = |src: &'static str, dst: &'static str| {
        let try_rename = &try_rename;
        async move { try_rename(src, dst).await.expect("rename") }
    };
    assert!(rename("/o/f", "/o/dir").await, "moves into the directory");
    assert!(exists(&c, "/o/dir/f").await);
    assert!(!rename("/o/missing", "/o/x").await, "missing source");
    // A file among the target's ancestors is refused while the path is
    // resolved, before the rename's own checks (as Apache HDFS 3.4.1 does).
    let e = try_rename("/o/dir", "/o/dir/f/x")
        .await
        .expect_err("target parent is a file");
    assert_eq!(
        class(&e),
        "org.apache.hadoop.fs.ParentNotDirectoryException"
    );
    assert!(
        !rename("/o/dir", "/o/dir/sub").await,
        "into its own subtree"
    );
    assert!(
        !rename("/o/dir", "/nowhere/x").await,
        "missing target parent"
    );
    touch(&c, "/o/g").await;
    assert!(!rename("/o/g", "/o/dir/f").await, "target exists");
    assert!(rename("/o/g", "/o/h").await);
    assert!(exists(&c, "/o/h").await && !exists(&c, "/o/g").await);
}

#[tokio::test]
async fn create_without_the_create_flag_only_overwrites() {
    // Goal: HDFS's create flags (FileContext.create with OVERWRITE alone):
    // without CREATE a missing file is FileNotFound, an existing one is
    // replaced.
    let nn = NameNode::start(&[]);
    let c = connect(&nn, &current_user()).await;
    mkdirs(&c, "/cf").await;
    let request = pb::CreateRequestProto {
        src: "/cf/f".into(),
        masked: pb::FsPermissionProto { perm: 0o644 },
        client_name: "test-client".into(),
        create_flag: 0x02,
        create_parent: true,
        replication: 1,
        block_size: 1 << 20,
        ..Default::default()
    };
    let e = c
        .call::<_, pb::CreateResponseProto>("create", &request)
        .await
        .expect_err("no CREATE flag, no file");
    assert_eq!(class(&e), "java.io.FileNotFoundException");
    assert!(
        e.to_string().contains("Can't overwrite non-existent /cf/f"),
        "{e}"
    );
    assert!(!exists(&c, "/cf/f").await);
    touch(&c, "/cf/f").await;
    let replaced = create_file(&c, "/cf/f", 0x02).await;
    assert!(
        replaced.is_some(),
        "OVERWRITE alone replaces an existing file"
    );
}

#[tokio::test]
async fn protected_directories_are_not_deleted_while_non_empty() {
    // Goal: `fs.protected.directories` as HDFS: a recursive delete (or
    // rename) of a non-empty protected directory, or of its ancestor, is
    // refused, for the superuser too.
    let nn = NameNode::start(&["fs.protected.directories=/keep, /other/"]);
    let c = connect(&nn, &current_user()).await;
    mkdirs(&c, "/keep/data").await;
    let delete = |src: &'static str| {
        let c = &c;
        async move {
            c.call::<_, pb::DeleteResponseProto>(
                "delete",
                &pb::DeleteRequestProto {
                    src: src.into(),
                    recursive: true,
                },
            )
            .await
        }
    };
    let e = delete("/keep").await.expect_err("protected");
    assert_eq!(
        class(&e),
        "org.apache.hadoop.security.AccessControlException"
    );
    assert!(
        e.to_string()
            .contains("Cannot delete/rename non-empty protected directory /keep"),
        "{e}"
    );
    assert!(exists(&c, "/keep/data").await);
    assert!(delete("/keep/data").await.expect("inside").result);
    assert!(delete("/keep").await.expect("now empty").result);
}

#[tokio::test]
async fn listing_pages_report_remaining_entries() {
    // Goal: getListing honours startAfter and reports remainingEntries
    // exactly, with local names in `path` and childrenNum for directories.
    let nn = NameNode::start(&["dfs.ls.limit=3"]);
    let c = connect(&nn, &current_user()).await;
    for n in ["e", "a", "d", "b", "c"] {
        mkdirs(&c, &format!("/l/{n}")).await;
    }
    mkdirs(&c, "/l/a/x").await;
    let page = |after: &'static str| {
        let c = &c;
        async move {
            let r: pb::GetListingResponseProto = c
                .call(
                    "getListing",
                    &pb::GetListingRequestProto {
                        src: "/l".into(),
                        start_after: after.as_bytes().to_vec().into(),
                        need_location: false,
                    },
                )
                .await
                .expect("listing");
            let l = r.dir_list.expect("a directory");
            let names: Vec<String> = l
                .partial_listing
                .iter()
                .map(|s| String::from_utf8_lossy(&s.path).into_owned())
                .collect();
            (names, l.remaining_entries, l.partial_listing)
        }
    };
    let (names, remaining, entries) = page("").await;
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(remaining, 2);
    assert_eq!(entries[0].children_num, Some(1));
    assert_eq!(entries[1].children_num, Some(0));
    let (names, remaining, _) = page("c").await;
    assert_eq!(names, ["d", "e"]);
    assert_eq!(remaining, 0);
    let (names, remaining, _) = page("bb").await;
    assert_eq!(names, ["c", "d", "e"]);
    assert_eq!(remaining, 0);
    // A missing path answers without a listing, as HDFS does.
    let r: pb::GetListingResponseProto = c
        .call(
            "getListing",
            &pb::GetListingRequestProto {
                src: "/none".into(),
                start_after: Default::default(),
                need_location: false,
            },
        )
        .await
        .expect("listing");
    assert!(r.dir_list.is_none());
}

#[tokio::test]
async fn rpc_layer_errors_and_invalid_paths() {
    // Goal: unknown methods, undecodable requests and malformed paths get
    // HDFS's exception classes and keep the connection usable.
    let nn = NameNode::start(&[]);
    let c = connect(&nn, &current_user()).await;
    let err = c.call_raw("noSuchMethod", &[]).await.expect_err("unknown");
    assert_eq!(
        class(&err),
        "org.apache.hadoop.ipc.RpcNoSuchMethodException"
    );
    assert!(err.to_string().contains(
        "Unknown method noSuchMethod called on org.apache.hadoop.hdfs.protocol.ClientProtocol protocol."
    ));
    let err = c
        .call_raw("getFileInfo", &[0x0a, 0x20, 0x2f])
        .await
        .expect_err("bad proto");
    assert_eq!(
        class(&err),
        "org.apache.hadoop.thirdparty.protobuf.InvalidProtocolBufferException"
    );
    let err = c
        .call::<_, pb::GetFileInfoResponseProto>(
            "getFileInfo",
            &pb::GetFileInfoRequestProto {
                src: "relative".into(),
            },
        )
        .await
        .expect_err("invalid path");
    assert_eq!(class(&err), "org.apache.hadoop.fs.InvalidPathException");
    // As HDFS resolves them: `.`, `..` and `:` are names no inode can
    // have (not found), an empty component is dropped.
    mkdirs(&c, "/dots/x").await;
    for (path, found) in [
        ("/dots/../dots", false),
        ("/dots/./x", false),
        ("/dots:x", false),
        ("/dots//x", true),
        ("//dots/x/", true),
    ] {
        let r: pb::GetFileInfoResponseProto = c
            .call(
                "getFileInfo",
                &pb::GetFileInfoRequestProto { src: path.into() },
            )
            .await
            .expect(path);
        assert_eq!(r.fs.is_some(), found, "{path}");
    }
    let err = c
        .call::<_, pb::MkdirsResponseProto>(
            "mkdirs",
            &pb::MkdirsRequestProto {
                src: "/dots/../y".into(),
                masked: pb::FsPermissionProto { perm: 0o755 },
                create_parent: true,
                unmasked: None,
            },
        )
        .await
        .expect_err("no such name is made");
    assert_eq!(class(&err), "org.apache.hadoop.fs.InvalidPathException");
    assert!(err
        .to_string()
        .contains("Invalid path name Invalid file name: /dots/../y"));
    // The same connection still works.
    assert!(exists(&c, "/").await);
    // getBlockLocations on a directory or a missing path.
    mkdirs(&c, "/dir").await;
    for (p, msg) in [
        ("/dir", "Path is not a file: /dir"),
        ("/gone", "File does not exist: /gone"),
    ] {
        let err = c
            .call::<_, pb::GetBlockLocationsResponseProto>(
                "getBlockLocations",
                &pb::GetBlockLocationsRequestProto {
                    src: p.into(),
                    offset: 0,
                    length: 16,
                },
            )
            .await
            .expect_err("not a file");
        assert_eq!(class(&err), "java.io.FileNotFoundException");
        assert!(err.to_string().contains(msg), "{err}");
    }
}

async fn set(
    c: &Client,
    action: pb::SafeModeActionProto,
) -> Result<pb::SetSafeModeResponseProto, ClientError> {
    let req = pb::SetSafeModeRequestProto {
        action: action as i32,
        checked: Some(false),
    };
    c.call("setSafeMode", &req).await
}

#[tokio::test]
async fn safe_mode_blocks_mutations_but_not_reads() {
    // Goal: setSafeMode ENTER (superuser only) makes mutations fail with
    // SafeModeException while reads go on; LEAVE restores them.
    let nn = NameNode::start(&[]);
    let su = connect(&nn, &current_user()).await;
    let alice = connect(&nn, "alice").await;
    let err = set(&alice, pb::SafeModeActionProto::SafemodeEnter)
        .await
        .expect_err("not super");
    assert_eq!(
        class(&err),
        "org.apache.hadoop.security.AccessControlException"
    );
    assert!(
        set(&su, pb::SafeModeActionProto::SafemodeEnter)
            .await
            .expect("enter")
            .result
    );
    assert!(
        set(&alice, pb::SafeModeActionProto::SafemodeGet)
            .await
            .expect("get")
            .result
    );
    let err = su
        .call::<_, pb::MkdirsResponseProto>(
            "mkdirs",
            &pb::MkdirsRequestProto {
                src: "/sm".into(),
                masked: pb::FsPermissionProto { perm: 0o755 },
                create_parent: true,
                unmasked: None,
            },
        )
        .await
        .expect_err("safe mode");
    assert_eq!(
        class(&err),
        "org.apache.hadoop.hdfs.server.namenode.SafeModeException"
    );
    assert!(exists(&su, "/").await, "reads still work");
    assert!(
        !set(&su, pb::SafeModeActionProto::SafemodeLeave)
            .await
            .expect("leave")
            .result
    );
    mkdirs(&su, "/sm").await;
}

fn create_request(p: &str, flag: u32) -> Vec<u8> {
    use prost::Message;
    pb::CreateRequestProto {
        src: p.into(),
        masked: pb::FsPermissionProto { perm: 0o644 },
        client_name: "retrying-client".into(),
        create_flag: flag,
        create_parent: true,
        replication: 1,
        block_size: 1 << 20,
        ..Default::default()
    }
    .encode_to_vec()
}

#[tokio::test]
async fn retried_calls_get_the_first_answer() {
    // Goal: HDFS's retry cache. A client that sends an at-most-once call
    // again with the same client id and call id (after a lost reply, on a
    // new connection) gets the first run's answer; a new call is run.
    use prost::Message;
    let nn = NameNode::start(&[]);
    let user = current_user();
    let c = connect(&nn, &user).await;
    mkdirs(&c, "/rc").await;
    // create (CREATE only: a second run would fail with
    // FileAlreadyExistsException).
    let id = c.next_call_id();
    let first = c
        .call_raw("create", &create_request("/rc/f", 1))
        .await
        .expect("create");
    let first = pb::CreateResponseProto::decode(first).expect("decode");
    let again = Client::connect_as(nn.addr, &user, CLIENT_PROTOCOL, c.client_id().clone())
        .await
        .expect("second connection");
    let retried = again
        .retry_raw("create", &create_request("/rc/f", 1), id, 1)
        .await
        .expect("the retried create is answered, not run again");
    let retried = pb::CreateResponseProto::decode(retried).expect("decode");
    assert_eq!(
        retried.fs.as_ref().map(|f| f.file_id),
        first.fs.as_ref().map(|f| f.file_id),
        "the same file's status"
    );
    // A new call for the same path runs, and fails as in HDFS (the file
    // is still open for this client).
    let e = c
        .call_raw("create", &create_request("/rc/f", 1))
        .await
        .expect_err("a new create of an existing file");
    assert_eq!(
        class(&e),
        "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException"
    );
    // delete: a second run would answer false.
    let delete = pb::DeleteRequestProto {
        src: "/rc/f".into(),
        recursive: false,
    }
    .encode_to_vec();
    let id = c.next_call_id();
    let r = pb::DeleteResponseProto::decode(c.call_raw("delete", &delete).await.expect("delete"))
        .expect("decode");
    assert!(r.result);
    let r = pb::DeleteResponseProto::decode(
        again
            .retry_raw("delete", &delete, id, 1)
            .await
            .expect("retried delete"),
    )
    .expect("decode");
    assert!(r.result, "the retried delete answers true, as the first");
    let r = pb::DeleteResponseProto::decode(c.call_raw("delete", &delete).await.expect("delete"))
        .expect("decode");
    assert!(!r.result, "a new delete of a deleted file answers false");
    // A failed call is not remembered: its retry runs (and succeeds now).
    mkdirs(&c, "/rc/src").await;
    let rename = pb::Rename2RequestProto {
        src: "/rc/src".into(),
        dst: "/rc/dst/sub".into(),
        overwrite_dest: false,
        move_to_trash: None,
    }
    .encode_to_vec();
    let id = c.next_call_id();
    let e = c
        .call_raw("rename2", &rename)
        .await
        .expect_err("no parent yet");
    assert_eq!(class(&e), "java.io.FileNotFoundException");
    mkdirs(&c, "/rc/dst").await;
    again
        .retry_raw("rename2", &rename, id, 1)
        .await
        .expect("the failed call runs again");
    assert!(exists(&c, "/rc/dst/sub").await);
}

/// A DataNode played over DatanodeProtocol, registered as a real one
/// registers (versionRequest, registerDatanode, an empty full report, a
/// heartbeat with free space), so that addBlock places replicas on it and
/// the test decides when its incremental report arrives.
struct FakeDataNode {
    dn: Client,
    reg: pb::DatanodeRegistrationProto,
    storage: pb::DatanodeStorageProto,
    pool: String,
}

async fn fake_datanode(nn: &NameNode) -> FakeDataNode {
    use cairn_proto::protocols::{DATANODE_PROTOCOL, NAMENODE_PROTOCOL};
    let user = current_user();
    let namenode = Client::connect(nn.addr, &user, NAMENODE_PROTOCOL)
        .await
        .expect("connect");
    let dn = Client::connect(nn.addr, &user, DATANODE_PROTOCOL)
        .await
        .expect("connect");
    let v: pb::VersionResponseProto = namenode
        .call("versionRequest", &pb::VersionRequestProto {})
        .await
        .expect("versionRequest");
    let info = v.info;
    let registration = pb::DatanodeRegistrationProto {
        datanode_id: pb::DatanodeIdProto {
            ip_addr: "127.0.0.1".into(),
            host_name: "localhost".into(),
            datanode_uuid: "fake-dn-1".into(),
            xfer_port: 9,
            info_port: 9,
            ipc_port: 9,
            info_secure_port: Some(0),
        },
        storage_info: pb::StorageInfoProto {
            layout_version: info.storage_info.layout_version,
            namespace_id: info.storage_info.namespace_id,
            cluster_id: info.storage_info.cluster_id.clone(),
            c_time: info.storage_info.c_time,
        },
        keys: pb::ExportedBlockKeysProto::tokens_off(),
        software_version: info.software_version.clone(),
    };
    let r: pb::RegisterDatanodeResponseProto = dn
        .call(
            "registerDatanode",
            &pb::RegisterDatanodeRequestProto { registration },
        )
        .await
        .expect("registerDatanode");
    let storage = pb::DatanodeStorageProto {
        storage_uuid: "DS-fake-dn-1".into(),
        state: Some(0),
        storage_type: Some(1),
    };
    let _: pb::BlockReportResponseProto = dn
        .call(
            "blockReport",
            &pb::BlockReportRequestProto {
                registration: r.registration.clone(),
                block_pool_id: info.block_pool_id.clone(),
                reports: vec![pb::StorageBlockReportProto {
                    storage: storage.clone(),
                    // No finalized or open replicas, then the delimiter.
                    blocks: vec![0, 0, u64::MAX, u64::MAX, u64::MAX],
                    number_of_blocks: None,
                    blocks_buffers: Vec::new(),
                }],
                context: None,
            },
        )
        .await
        .expect("blockReport");
    let cap = 100u64 << 30;
    let _: pb::HeartbeatResponseProto = dn
        .call(
            "sendHeartbeat",
            &pb::HeartbeatRequestProto {
                registration: r.registration.clone(),
                reports: vec![pb::StorageReportProto {
                    storage_uuid: storage.storage_uuid.clone(),
                    failed: Some(false),
                    capacity: Some(cap),
                    dfs_used: Some(0),
                    remaining: Some(cap),
                    block_pool_used: Some(0),
                    storage: Some(storage.clone()),
                    non_dfs_used: Some(0),
                    mount: None,
                }],
                ..Default::default()
            },
        )
        .await
        .expect("sendHeartbeat");
    FakeDataNode {
        dn,
        reg: r.registration,
        storage,
        pool: info.block_pool_id,
    }
}

impl FakeDataNode {
    /// An incremental report: `b` received, `len` bytes long.
    async fn received(&self, b: &pb::ExtendedBlockProto, len: u64) {
        let _: pb::BlockReceivedAndDeletedResponseProto = self
            .dn
            .call(
                "blockReceivedAndDeleted",
                &pb::BlockReceivedAndDeletedRequestProto {
                    registration: self.reg.clone(),
                    block_pool_id: self.pool.clone(),
                    blocks: vec![pb::StorageReceivedDeletedBlocksProto {
                        storage_uuid: self.storage.storage_uuid.clone(),
                        blocks: vec![pb::ReceivedDeletedBlockInfoProto {
                            block: pb::BlockProto {
                                block_id: b.block_id,
                                gen_stamp: b.generation_stamp,
                                num_bytes: Some(len),
                            },
                            status: 2, // RECEIVED
                            delete_hint: None,
                        }],
                        storage: Some(self.storage.clone()),
                    }],
                },
            )
            .await
            .expect("blockReceivedAndDeleted");
    }
}

/// create + addBlock of a one-replica file; returns its block.
async fn file_with_a_block(c: &Client, p: &str) -> pb::ExtendedBlockProto {
    let file_id = create_file(c, p, 1).await;
    let b: pb::AddBlockResponseProto = c
        .call(
            "addBlock",
            &pb::AddBlockRequestProto {
                src: p.into(),
                client_name: "test-client".into(),
                file_id,
                ..Default::default()
            },
        )
        .await
        .expect("addBlock");
    b.block.b
}

async fn complete(c: &Client, p: &str, last: &pb::ExtendedBlockProto) -> bool {
    let r: pb::CompleteResponseProto = c
        .call(
            "complete",
            &pb::CompleteRequestProto {
                src: p.into(),
                client_name: "test-client".into(),
                last: Some(last.clone()),
                file_id: None,
            },
        )
        .await
        .expect("complete");
    r.result
}

/// Goal: `complete` on a file whose last block has no reported replica yet
/// waits for the report (`cairn.namenode.complete.report-wait`) instead of
/// answering `false` at once (after which the Java client sleeps 400 ms),
/// and still answers `false` when no report comes in that time.
#[tokio::test]
async fn complete_waits_for_the_last_blocks_first_report() {
    let nn = NameNode::start(&["cairn.namenode.complete.report-wait=30s"]);
    let dn = fake_datanode(&nn).await;
    let c = connect(&nn, &current_user()).await;
    let mut b = file_with_a_block(&c, "/w/a").await;
    b.num_bytes = Some(10);
    let call = {
        let (c, b) = (connect(&nn, &current_user()).await, b.clone());
        tokio::spawn(async move { complete(&c, "/w/a", &b).await })
    };
    // The report comes well after the call (which must then be waiting).
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!call.is_finished(), "complete answered before the report");
    dn.received(&b, 10).await;
    assert!(call.await.expect("complete task"), "closed once reported");
    drop(nn);

    let nn = NameNode::start(&["cairn.namenode.complete.report-wait=200ms"]);
    let _dn = fake_datanode(&nn).await;
    let c = connect(&nn, &current_user()).await;
    let mut b = file_with_a_block(&c, "/w/b").await;
    b.num_bytes = Some(10);
    let t0 = std::time::Instant::now();
    assert!(!complete(&c, "/w/b", &b).await, "no report: not closed");
    assert!(t0.elapsed() >= std::time::Duration::from_millis(200));
}
