//! The DataNode's administration calls over raw ClientDatanodeProtocol,
//! where the effects show that `dfsadmin`'s printout (t34's golden
//! transcript) does not: a triggered full report reaches the NameNode,
//! the balancer bandwidth follows `setBalancerBandwidth`, evicted writers
//! recover their pipelines, the volume report describes the data
//! directory, nothing is reconfigurable (nor on the NameNode's
//! ReconfigurationProtocol), a served block pool is not deleted, and
//! `shutdownDatanode` stops the process.

mod common;

use std::time::Duration;

use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::{CLIENT_DATANODE_PROTOCOL, CLIENT_PROTOCOL};
use cairn_rpc::client::{Client, ClientError};
use common::{current_user, wait_until, Cluster};
use hdfs_native::WriteOptions;

async fn dn_client(cluster: &Cluster, user: &str) -> Client {
    let nn = Client::connect(cluster.nn.addr, &current_user(), CLIENT_PROTOCOL)
        .await
        .expect("connect to the NameNode");
    let r: pb::GetDatanodeReportResponseProto = nn
        .call(
            "getDatanodeReport",
            &pb::GetDatanodeReportRequestProto { r#type: 1 },
        )
        .await
        .expect("datanode report");
    let id = &r.di[0].id;
    let addr = format!("{}:{}", id.ip_addr, id.ipc_port)
        .parse()
        .expect("ipc address");
    Client::connect(addr, user, CLIENT_DATANODE_PROTOCOL)
        .await
        .expect("connect to the DataNode")
}

fn remote<T: std::fmt::Debug>(r: Result<T, ClientError>) -> (String, String) {
    match r {
        Err(ClientError::Remote { class, message }) => (class, message),
        other => panic!("expected a remote exception, got {other:?}"),
    }
}

async fn bandwidth(dn: &Client) -> u64 {
    let r: pb::GetBalancerBandwidthResponseProto = dn
        .call(
            "getBalancerBandwidth",
            &pb::GetBalancerBandwidthRequestProto {},
        )
        .await
        .expect("getBalancerBandwidth");
    r.bandwidth
}

async fn status(dn: &Client) -> pb::GetReconfigurationStatusResponseProto {
    dn.call(
        "getReconfigurationStatus",
        &pb::GetReconfigurationStatusRequestProto {},
    )
    .await
    .expect("status")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datanode_administration() {
    let mut cluster = Cluster::start(1, &["dfs.heartbeat.interval=1"]);
    let dn = dn_client(&cluster, &current_user()).await;

    // A full report on request, not only at start-up.
    let reports = |log: &str| log.matches("full block report sent").count();
    let before = reports(&cluster.dns[0].log());
    let _: pb::TriggerBlockReportResponseProto = dn
        .call(
            "triggerBlockReport",
            &pb::TriggerBlockReportRequestProto {
                incremental: false,
                nn_address: None,
            },
        )
        .await
        .expect("triggerBlockReport");
    assert!(
        wait_until(Duration::from_secs(20), || reports(&cluster.dns[0].log())
            > before),
        "no full report after triggerBlockReport:\n{}",
        cluster.dns[0].log()
    );

    // The balancer bandwidth the NameNode hands out with a heartbeat.
    assert_eq!(bandwidth(&dn).await, 100 << 20);
    let nn = Client::connect(cluster.nn.addr, &current_user(), CLIENT_PROTOCOL)
        .await
        .expect("connect");
    let _: pb::SetBalancerBandwidthResponseProto = nn
        .call(
            "setBalancerBandwidth",
            &pb::SetBalancerBandwidthRequestProto {
                bandwidth: 2_000_000,
            },
        )
        .await
        .expect("setBalancerBandwidth");
    let mut now = 0;
    for _ in 0..100 {
        now = bandwidth(&dn).await;
        if now == 2_000_000 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(now, 2_000_000);

    // The volume report: the data directory, its blocks.
    let fs = cluster.nn.client(None);
    let mut w = fs
        .create("/f", WriteOptions::default().replication(1))
        .await
        .expect("create");
    w.write_bytes(bytes::Bytes::from_static(b"first"))
        .await
        .expect("write");
    w.close().await.expect("close");
    let v: pb::GetVolumeReportResponseProto = dn
        .call("getVolumeReport", &pb::GetVolumeReportRequestProto {})
        .await
        .expect("getVolumeReport");
    assert_eq!(v.volume_info.len(), 1, "{v:?}");
    let vol = &v.volume_info[0];
    assert_eq!(
        std::path::Path::new(&vol.path),
        cluster.dns[0].dir.as_path()
    );
    assert_eq!(vol.num_blocks, 1);
    assert!(vol.used_space >= 5 && vol.free_space > 0, "{vol:?}");

    // A writer with a pipeline open is told to stop (its client then has
    // to recover the pipeline or give up, as with HDFS).
    let mut w = fs
        .create("/g", WriteOptions::default().replication(1))
        .await
        .expect("create");
    w.write_bytes(bytes::Bytes::from_static(b"before "))
        .await
        .expect("write");
    w.hsync().await.expect("hsync");
    let _: pb::EvictWritersResponseProto = dn
        .call("evictWriters", &pb::EvictWritersRequestProto {})
        .await
        .expect("evictWriters");
    assert!(
        wait_until(Duration::from_secs(10), || cluster.dns[0]
            .log()
            .lines()
            .any(
                |l| l.contains("Evicting all writers.") && l.contains("writers=1")
            )),
        "{}",
        cluster.dns[0].log()
    );
    drop(w);

    // Nothing reconfigurable; a started reconfiguration ends at once.
    let props: pb::ListReconfigurablePropertiesResponseProto = dn
        .call(
            "listReconfigurableProperties",
            &pb::ListReconfigurablePropertiesRequestProto {},
        )
        .await
        .expect("properties");
    assert!(props.name.is_empty());
    assert_eq!(status(&dn).await.start_time, 0);
    let _: pb::StartReconfigurationResponseProto = dn
        .call(
            "startReconfiguration",
            &pb::StartReconfigurationRequestProto {},
        )
        .await
        .expect("start");
    let s = status(&dn).await;
    assert!(s.start_time > 0 && s.end_time >= Some(s.start_time) && s.changes.is_empty());

    // The NameNode's ReconfigurationProtocol (`-reconfig namenode`) alike.
    let nn_reconfig = Client::connect(
        cluster.nn.addr,
        &current_user(),
        cairn_proto::protocols::RECONFIGURATION_PROTOCOL,
    )
    .await
    .expect("connect");
    assert_eq!(status(&nn_reconfig).await.start_time, 0);
    let _: pb::StartReconfigurationResponseProto = nn_reconfig
        .call(
            "startReconfiguration",
            &pb::StartReconfigurationRequestProto {},
        )
        .await
        .expect("start on the NameNode");
    let s = status(&nn_reconfig).await;
    assert!(s.start_time > 0 && s.end_time >= Some(s.start_time) && s.changes.is_empty());
    let props: pb::ListReconfigurablePropertiesResponseProto = nn_reconfig
        .call(
            "listReconfigurableProperties",
            &pb::ListReconfigurablePropertiesRequestProto {},
        )
        .await
        .expect("NameNode properties");
    assert!(props.name.is_empty());

    // The pool the NameNode serves is not deleted, forced or not.
    let bpid = {
        let r: pb::VersionResponseProto = Client::connect(
            cluster.nn.addr,
            &current_user(),
            cairn_proto::protocols::NAMENODE_PROTOCOL,
        )
        .await
        .expect("connect")
        .call("versionRequest", &pb::VersionRequestProto {})
        .await
        .expect("versionRequest");
        r.info.block_pool_id
    };
    for force in [false, true] {
        let (_, msg) = remote(
            dn.call::<_, pb::DeleteBlockPoolResponseProto>(
                "deleteBlockPool",
                &pb::DeleteBlockPoolRequestProto {
                    block_pool: bpid.clone(),
                    force,
                },
            )
            .await,
        );
        assert!(msg.starts_with("The block pool is still running."), "{msg}");
    }

    // A pool no NameNode serves: refused while block files lie in it (the
    // disk decides; no replica of it is loaded), deleted when forced.
    let served = find_dir(&cluster.dns[0].dir, &bpid).expect("the served pool's directory");
    let gone = served.with_file_name("BP-1-127.0.0.1-1");
    let subdir = gone.join("finalized/subdir0/subdir0");
    std::fs::create_dir_all(&subdir).expect("mkdir");
    std::fs::write(subdir.join("blk_1073741825"), b"data").expect("block file");
    let delete = |force| {
        let dn = &dn;
        async move {
            dn.call::<_, pb::DeleteBlockPoolResponseProto>(
                "deleteBlockPool",
                &pb::DeleteBlockPoolRequestProto {
                    block_pool: "BP-1-127.0.0.1-1".into(),
                    force,
                },
            )
            .await
        }
    };
    let (_, msg) = remote(delete(false).await);
    assert_eq!(
        msg,
        "Cannot delete block pool, it contains some block files"
    );
    assert!(subdir.join("blk_1073741825").exists());
    delete(true).await.expect("forced deleteBlockPool");
    assert!(!gone.exists());

    // Not the superuser: refused, as HDFS.
    let alice = dn_client(&cluster, "alice").await;
    let (class, msg) = remote(
        alice
            .call::<_, pb::GetVolumeReportResponseProto>(
                "getVolumeReport",
                &pb::GetVolumeReportRequestProto {},
            )
            .await,
    );
    assert_eq!(
        (class.as_str(), msg.as_str()),
        (
            "org.apache.hadoop.security.AccessControlException",
            "Permission denied."
        )
    );

    // Shut down on request; a second request is refused meanwhile.
    let _: pb::ShutdownDatanodeResponseProto = dn
        .call(
            "shutdownDatanode",
            &pb::ShutdownDatanodeRequestProto { for_upgrade: false },
        )
        .await
        .expect("shutdownDatanode");
    let (_, msg) = remote(
        dn.call::<_, pb::ShutdownDatanodeResponseProto>(
            "shutdownDatanode",
            &pb::ShutdownDatanodeRequestProto { for_upgrade: true },
        )
        .await,
    );
    assert_eq!(msg, "Shutdown already in progress.");
    assert!(
        cluster.dns[0].wait_exit(Duration::from_secs(30)).is_some(),
        "the DataNode still runs"
    );
}

/// The directory named `name` under `dir`, searched depth first.
fn find_dir(dir: &std::path::Path, name: &str) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if entry.file_name() == name {
                return Some(path);
            }
            if let Some(found) = find_dir(&path, name) {
                return Some(found);
            }
        }
    }
    None
}
