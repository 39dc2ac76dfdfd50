//! A copy-on-truncate's commit and the truncate monitor, interleaved: the
//! monitor's pass runs while the commit's edit is applied in memory but not
//! yet durable (found by t41's random SIGKILLs: the copy's replica was
//! deleted as of no file, and the next restart waited for it forever).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::server::{CallContext, Protocol};
use futures::future::BoxFuture;
use prost::Message;

use crate::datanode_service::DatanodeProtocolService;
use crate::datanodes::DatanodeUuid;
use crate::journal::{EditLog, JournalError, MemoryEditLog, TxId};
use crate::namespace::{BlockId, Namespace};
use crate::service::ClientProtocolService;

/// An edit log whose edits become durable only when the gate is open.
#[derive(Default)]
struct GatedLog {
    log: MemoryEditLog,
    closed: Arc<AtomicBool>,
    opened: Arc<tokio::sync::Notify>,
}

impl EditLog for GatedLog {
    fn append(&self, edits: &[crate::namespace::Edit]) -> Result<TxId, JournalError> {
        self.log.append(edits)
    }

    fn wait_durable(&self, _txid: TxId) -> BoxFuture<'static, Result<(), JournalError>> {
        let (closed, opened) = (self.closed.clone(), self.opened.clone());
        Box::pin(async move {
            while closed.load(Ordering::Acquire) {
                let notified = opened.notified();
                if !closed.load(Ordering::Acquire) {
                    break;
                }
                notified.await;
            }
            Ok(())
        })
    }

    fn last_txid(&self) -> TxId {
        self.log.last_txid()
    }
}

async fn call<S: Protocol, Resp: Message + Default>(
    service: &Arc<S>,
    user: &str,
    method: &'static str,
    request: &impl Message,
) -> Resp {
    let ctx = CallContext {
        user: user.into(),
        real_user: None,
        client_id: Bytes::new(),
        call_id: 1,
        retry_count: 0,
        remote_addr: std::net::SocketAddr::from(([127, 0, 0, 1], 1)),
        state_id: None,
    };
    let body = Bytes::from(request.encode_to_vec());
    let answer = Arc::clone(service)
        .call(ctx, method.into(), body)
        .await
        .unwrap_or_else(|e| panic!("{method}: {e}"));
    Resp::decode(answer).unwrap_or_else(|e| panic!("{method} answer: {e}"))
}

fn received(
    reg: &pb::DatanodeRegistrationProto,
    pool: &str,
    id: u64,
    gs: u64,
    len: u64,
) -> pb::BlockReceivedAndDeletedRequestProto {
    pb::BlockReceivedAndDeletedRequestProto {
        registration: reg.clone(),
        block_pool_id: pool.into(),
        blocks: vec![pb::StorageReceivedDeletedBlocksProto {
            storage_uuid: "DS-1".into(),
            blocks: vec![pb::ReceivedDeletedBlockInfoProto {
                block: pb::BlockProto {
                    block_id: id,
                    gen_stamp: gs,
                    num_bytes: Some(len),
                },
                delete_hint: None,
                status: 2,
            }],
            storage: None,
        }],
    }
}

#[tokio::test]
async fn a_copy_committed_while_the_truncate_monitor_runs_keeps_its_replica() {
    let conf = cairn_common::config::Configuration::new();
    let config = crate::config::NameNodeConfig::from_conf(&conf).expect("defaults");
    let su = crate::users::UserDirectory::current_user();
    let ns = Namespace::new(&su, &config.superuser_group, 1, config.limits.clone());
    let log = Arc::new(GatedLog::default());
    let (closed, opened) = (log.closed.clone(), log.opened.clone());
    let state = crate::new_state(config, crate::new_version_info(), ns, log);
    state.startup_safe_mode.leave();
    if let Ok(mut bm) = state.blocks.lock() {
        bm.end_safe_tally();
    }
    let client = Arc::new(ClientProtocolService {
        state: state.clone(),
    });
    let dn = Arc::new(DatanodeProtocolService {
        state: state.clone(),
    });

    // One DataNode, registered and heartbeating.
    let v: pb::VersionResponseProto =
        call(&dn, &su, "versionRequest", &pb::VersionRequestProto {}).await;
    let pool = v.info.block_pool_id.clone();
    let reg = pb::DatanodeRegistrationProto {
        datanode_id: pb::DatanodeIdProto {
            ip_addr: "127.0.0.1".into(),
            host_name: "localhost".into(),
            datanode_uuid: "dn-1".into(),
            xfer_port: 9866,
            info_port: 9864,
            ipc_port: 9867,
            info_secure_port: None,
        },
        storage_info: pb::StorageInfoProto {
            layout_version: v.info.storage_info.layout_version,
            namespace_id: v.info.storage_info.namespace_id,
            cluster_id: v.info.storage_info.cluster_id.clone(),
            c_time: v.info.storage_info.c_time,
        },
        keys: pb::ExportedBlockKeysProto::tokens_off(),
        software_version: v.info.software_version.clone(),
    };
    let _: pb::RegisterDatanodeResponseProto = call(
        &dn,
        &su,
        "registerDatanode",
        &pb::RegisterDatanodeRequestProto {
            registration: reg.clone(),
        },
    )
    .await;
    let storage = pb::DatanodeStorageProto {
        storage_uuid: "DS-1".into(),
        state: Some(0),
        storage_type: Some(1),
    };
    let cap = 100u64 << 30;
    let _: pb::HeartbeatResponseProto = call(
        &dn,
        &su,
        "sendHeartbeat",
        &pb::HeartbeatRequestProto {
            registration: reg.clone(),
            reports: vec![pb::StorageReportProto {
                storage_uuid: "DS-1".into(),
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
    .await;

    // A file of one 100-byte block in a snapshot.
    let _: pb::MkdirsResponseProto = call(
        &client,
        &su,
        "mkdirs",
        &pb::MkdirsRequestProto {
            src: "/s".into(),
            masked: pb::FsPermissionProto { perm: 0o755 },
            create_parent: true,
            unmasked: None,
        },
    )
    .await;
    let _: pb::AllowSnapshotResponseProto = call(
        &client,
        &su,
        "allowSnapshot",
        &pb::AllowSnapshotRequestProto {
            snapshot_root: "/s".into(),
        },
    )
    .await;
    let writer = "writer".to_string();
    let _: pb::CreateResponseProto = call(
        &client,
        &su,
        "create",
        &pb::CreateRequestProto {
            src: "/s/f".into(),
            masked: pb::FsPermissionProto { perm: 0o644 },
            client_name: writer.clone(),
            create_flag: 1,
            create_parent: false,
            replication: 1,
            block_size: 1 << 20,
            ..Default::default()
        },
    )
    .await;
    let added: pb::AddBlockResponseProto = call(
        &client,
        &su,
        "addBlock",
        &pb::AddBlockRequestProto {
            src: "/s/f".into(),
            client_name: writer.clone(),
            ..Default::default()
        },
    )
    .await;
    let mut block = added.block.b;
    block.num_bytes = Some(100);
    let _: pb::BlockReceivedAndDeletedResponseProto = call(
        &dn,
        &su,
        "blockReceivedAndDeleted",
        &received(&reg, &pool, block.block_id, block.generation_stamp, 100),
    )
    .await;
    let done: pb::CompleteResponseProto = call(
        &client,
        &su,
        "complete",
        &pb::CompleteRequestProto {
            src: "/s/f".into(),
            client_name: writer,
            last: Some(block.clone()),
            file_id: None,
        },
    )
    .await;
    assert!(done.result, "the file closes");
    let _: pb::CreateSnapshotResponseProto = call(
        &client,
        &su,
        "createSnapshot",
        &pb::CreateSnapshotRequestProto {
            snapshot_root: "/s".into(),
            snapshot_name: Some("s0".into()),
        },
    )
    .await;

    // The truncate copies the block (the snapshot keeps the old one); the
    // DataNode makes the copy and reports it before the commit.
    let t: pb::TruncateResponseProto = call(
        &client,
        &su,
        "truncate",
        &pb::TruncateRequestProto {
            src: "/s/f".into(),
            new_length: 40,
            client_name: "truncater".into(),
        },
    )
    .await;
    assert!(
        !t.result,
        "a truncate inside a block waits for its recovery"
    );
    let uuid = DatanodeUuid("dn-1".into());
    let recovery = state
        .lock_blocks()
        .expect("blocks")
        .take_recoveries(&uuid)
        .pop()
        .expect("a recovery queued");
    let copy = recovery.truncate.expect("a truncate recovery");
    assert_ne!(copy.id, BlockId(block.block_id), "a copy-on-truncate");
    let _: pb::BlockReceivedAndDeletedResponseProto = call(
        &dn,
        &su,
        "blockReceivedAndDeleted",
        &received(&reg, &pool, copy.id.0, recovery.new_gs.0, 40),
    )
    .await;

    // The commit is applied in memory and waits for the log ...
    closed.store(true, Ordering::Release);
    let commit = {
        let dn = dn.clone();
        let su = su.clone();
        let r = pb::CommitBlockSynchronizationRequestProto {
            block: block.clone(),
            new_gen_stamp: recovery.new_gs.0,
            new_length: 40,
            close_file: true,
            delete_block: false,
            new_targets: vec![reg.datanode_id.clone()],
            new_target_storages: vec!["DS-1".into()],
        };
        tokio::spawn(async move {
            let _: pb::CommitBlockSynchronizationResponseProto =
                call(&dn, &su, "commitBlockSynchronization", &r).await;
        })
    };
    let file = state
        .lock_blocks()
        .expect("blocks")
        .file_of(BlockId(block.block_id))
        .expect("the file of the block");
    for _ in 0..1000 {
        let open = state
            .namespace
            .read()
            .expect("ns")
            .writer_of(file)
            .is_some();
        if !open {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    assert!(
        state
            .namespace
            .read()
            .expect("ns")
            .writer_of(file)
            .is_none(),
        "the commit closed the file in memory"
    );
    // ... while the truncate monitor makes its pass.
    state.resume_truncates().await;
    closed.store(false, Ordering::Release);
    opened.notify_waiters();
    commit.await.expect("the commit");

    let mut bm = state.lock_blocks().expect("blocks");
    let deletions = bm.take_invalidations(&uuid, usize::MAX);
    assert!(
        deletions.iter().all(|(id, _)| *id != copy.id),
        "the copy's replica is not deleted: {deletions:?}"
    );
    assert_eq!(bm.locations(copy.id).len(), 1, "the copy is located");
}
