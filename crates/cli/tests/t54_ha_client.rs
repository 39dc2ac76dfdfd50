//! What HA clients see from one `cairn namenode` process moved between
//! HDFS's HA states over `HAServiceProtocol`: `StandbyException` with
//! HDFS's text for what a standby or observer does not serve, the state id
//! in every response header, an observer holding (then refusing with
//! `RetriableException`) a read whose state id it has not reached, and
//! HDFS's rules for transitions (superuser only, only in an HA nameservice,
//! no active-to-observer).

mod common;

use std::time::{Duration, Instant};

use cairn_proto::exceptions as ex;
use cairn_proto::hadoop::common::{self as pbc, HaServiceStateProto};
use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::{CLIENT_PROTOCOL, HA_SERVICE_PROTOCOL};
use cairn_rpc::client::{Client, ClientError};
use common::{current_user, NameNode};
use prost::Message;

/// An HA nameservice of two NameNodes; the addresses only need to exist in
/// the configuration for this NameNode to count itself part of it.
const HA_CONF: &[&str] = &[
    "dfs.nameservices=ns1",
    "dfs.ha.namenodes.ns1=nn1,nn2",
    "dfs.namenode.rpc-address.ns1.nn1=127.0.0.1:1",
    "dfs.namenode.rpc-address.ns1.nn2=127.0.0.1:2",
];

fn remote(e: &ClientError) -> (String, String) {
    match e {
        ClientError::Remote { class, message } => (class.clone(), message.clone()),
        other => panic!("not a remote error: {other:?}"),
    }
}

async fn file_info(
    c: &Client,
    path: &str,
    state_id: Option<i64>,
) -> Result<(pb::GetFileInfoResponseProto, Option<i64>), ClientError> {
    let req = pb::GetFileInfoRequestProto { src: path.into() };
    let (bytes, id) = c
        .call_raw_with_state("getFileInfo", &req.encode_to_vec(), state_id)
        .await?;
    let resp = pb::GetFileInfoResponseProto::decode(bytes).expect("decode getFileInfo");
    Ok((resp, id))
}

async fn mkdirs(c: &Client, path: &str) -> Result<Option<i64>, ClientError> {
    let req = pb::MkdirsRequestProto {
        src: path.into(),
        masked: pb::FsPermissionProto { perm: 0o755 },
        create_parent: true,
        unmasked: None,
    };
    let (_, id) = c
        .call_raw_with_state("mkdirs", &req.encode_to_vec(), None)
        .await?;
    Ok(id)
}

fn req_info() -> pbc::HaStateChangeRequestInfoProto {
    pbc::HaStateChangeRequestInfoProto {
        req_source: pbc::HaRequestSource::RequestByUser as i32,
    }
}

async fn transition(ha: &Client, to: &str) -> Result<(), ClientError> {
    let bytes = match to {
        "active" => pbc::TransitionToActiveRequestProto {
            req_info: req_info(),
        }
        .encode_to_vec(),
        "standby" => pbc::TransitionToStandbyRequestProto {
            req_info: req_info(),
        }
        .encode_to_vec(),
        _ => pbc::TransitionToObserverRequestProto {
            req_info: req_info(),
        }
        .encode_to_vec(),
    };
    let method = match to {
        "active" => "transitionToActive",
        "standby" => "transitionToStandby",
        _ => "transitionToObserver",
    };
    ha.call_raw(method, &bytes).await.map(|_| ())
}

async fn status(ha: &Client) -> pbc::GetServiceStatusResponseProto {
    ha.call("getServiceStatus", &pbc::GetServiceStatusRequestProto {})
        .await
        .expect("getServiceStatus")
}

const STANDBY_WRITE: &str =
    "Operation category WRITE is not supported in state standby. Visit https://s.apache.org/sbnn-error";

#[tokio::test]
async fn standby_and_observer_answer_as_hdfs() {
    let nn = NameNode::start(HA_CONF);
    let me = current_user();
    let c = Client::connect(nn.addr, &me, CLIENT_PROTOCOL)
        .await
        .expect("connect");
    let ha = Client::connect(nn.addr, &me, HA_SERVICE_PROTOCOL)
        .await
        .expect("connect HA");

    // Active: every answer carries the last written txid; a mutation's
    // carries its own, so it grows.
    let before = file_info(&c, "/", None).await.expect("getFileInfo").1;
    let before = before.expect("stateId in the response header");
    let after = mkdirs(&c, "/a").await.expect("mkdirs").expect("stateId");
    assert!(after > before, "{after} > {before}");
    ha.call::<_, pbc::MonitorHealthResponseProto>(
        "monitorHealth",
        &pbc::MonitorHealthRequestProto {},
    )
    .await
    .expect("monitorHealth");
    let s = status(&ha).await;
    assert_eq!(s.state, HaServiceStateProto::Active as i32);
    assert_eq!(s.ready_to_become_active, Some(true));

    // Only the superuser moves it; active cannot become an observer.
    let other = Client::connect(nn.addr, "mallory", HA_SERVICE_PROTOCOL)
        .await
        .expect("connect");
    let e = transition(&other, "standby").await.expect_err("refused");
    assert_eq!(remote(&e).0, ex::ACCESS_CONTROL, "{e:?}");
    let e = transition(&ha, "observer").await.expect_err("refused");
    assert_eq!(
        remote(&e),
        (
            ex::SERVICE_FAILED.to_string(),
            "Transition from state active to observer is not allowed.".to_string()
        )
    );

    // Standby: reads and writes refused with HDFS's text, reports still
    // answered, msync only on the active.
    transition(&ha, "standby").await.expect("to standby");
    transition(&ha, "standby").await.expect("same state: no-op");
    assert_eq!(status(&ha).await.state, HaServiceStateProto::Standby as i32);
    let e = mkdirs(&c, "/b").await.expect_err("refused");
    assert_eq!(
        remote(&e),
        (ex::STANDBY.to_string(), STANDBY_WRITE.to_string())
    );
    let e = file_info(&c, "/a", Some(after)).await.expect_err("refused");
    assert_eq!(
        remote(&e).1,
        "Operation category READ is not supported in state standby. Visit https://s.apache.org/sbnn-error"
    );
    let e = c
        .call::<_, pb::MsyncResponseProto>("msync", &pb::MsyncRequestProto {})
        .await
        .expect_err("refused");
    assert_eq!(
        remote(&e),
        (ex::STANDBY.to_string(), STANDBY_WRITE.to_string())
    );
    let e = c
        .call::<_, pb::RollEditsResponseProto>("rollEdits", &pb::RollEditsRequestProto {})
        .await
        .expect_err("refused");
    assert!(
        remote(&e)
            .1
            .starts_with("Operation category JOURNAL is not supported in state standby"),
        "{e:?}"
    );
    // WebHDFS too: HDFS's RemoteException JSON, 403.
    let (code, _, body) = common::http_request(
        nn.http,
        "PUT",
        &format!("/webhdfs/v1/web?op=MKDIRS&user.name={me}"),
        b"",
    );
    let body = String::from_utf8_lossy(&body);
    assert_eq!(code, 403, "{body}");
    assert!(
        body.contains("\"exception\":\"StandbyException\""),
        "{body}"
    );
    assert!(
        body.contains("Operation category WRITE is not supported in state standby"),
        "{body}"
    );
    let hs: pb::HaServiceStateResponseProto = c
        .call("getHAServiceState", &pb::HaServiceStateRequestProto {})
        .await
        .expect("getHAServiceState on a standby");
    assert_eq!(hs.state, HaServiceStateProto::Standby as i32);
    let _: pb::GetDatanodeReportResponseProto = c
        .call(
            "getDatanodeReport",
            &pb::GetDatanodeReportRequestProto { r#type: 1 },
        )
        .await
        .expect("getDatanodeReport is UNCHECKED");

    // Observer: reads for callers that send their state id, held while
    // the caller is ahead, then RetriableException; writes refused.
    transition(&ha, "observer").await.expect("to observer");
    let s = status(&ha).await;
    assert_eq!(s.state, HaServiceStateProto::Observer as i32);
    assert_eq!(s.ready_to_become_active, Some(false));
    let (info, id) = file_info(&c, "/a", Some(after))
        .await
        .expect("observer read");
    assert!(info.fs.is_some(), "/a is there");
    assert_eq!(id, Some(after));
    let e = file_info(&c, "/a", None).await.expect_err("refused");
    let (class, message) = remote(&e);
    assert_eq!(class, ex::STANDBY);
    assert!(message.contains("without stateId"), "{message}");
    let asked = Instant::now();
    let e = file_info(&c, "/a", Some(after + 5))
        .await
        .expect_err("refused");
    let (class, message) = remote(&e);
    assert_eq!(class, ex::RETRIABLE, "{message}");
    assert!(
        message.contains(&format!(
            "serverStateId = {after} clientStateId = {}",
            after + 5
        )),
        "{message}"
    );
    assert!(asked.elapsed() >= Duration::from_millis(1500), "held first");
    let e = mkdirs(&c, "/b").await.expect_err("refused");
    assert_eq!(
        remote(&e),
        (
            ex::OBSERVER_RETRY_ON_ACTIVE.to_string(),
            "Operation category WRITE is not supported in state observer. Visit https://s.apache.org/sbnn-error".to_string()
        )
    );
    // Not coordinated, so no state id needed: a report read.
    let _: pb::GetFsStatsResponseProto = c
        .call("getFsStats", &pb::GetFsStatusRequestProto {})
        .await
        .expect("getFsStats on an observer");
    // An observer cannot become active directly (HDFS's NameNode).
    let e = transition(&ha, "active").await.expect_err("refused");
    assert_eq!(
        remote(&e).1,
        "Cannot transition from 'observer' to 'active'"
    );
    transition(&ha, "standby")
        .await
        .expect("observer to standby");

    // Back to active (through standby): writes and msync again.
    transition(&ha, "active").await.expect("to active");
    let id = mkdirs(&c, "/b").await.expect("mkdirs on the active");
    assert!(id > Some(after));
    let _: pb::MsyncResponseProto = c
        .call("msync", &pb::MsyncRequestProto {})
        .await
        .expect("msync on the active");
}

#[tokio::test]
async fn a_lone_namenode_refuses_ha_transitions() {
    let nn = NameNode::start(&[]);
    let ha = Client::connect(nn.addr, &current_user(), HA_SERVICE_PROTOCOL)
        .await
        .expect("connect");
    let e = transition(&ha, "standby").await.expect_err("refused");
    assert_eq!(
        remote(&e),
        (
            ex::SERVICE_FAILED.to_string(),
            "HA for namenode is not enabled".to_string()
        )
    );
    let e = ha
        .call::<_, pbc::GetServiceStatusResponseProto>(
            "getServiceStatus",
            &pbc::GetServiceStatusRequestProto {},
        )
        .await
        .expect_err("refused");
    assert_eq!(remote(&e).0, ex::SERVICE_FAILED);
    // Still serves writes: it stays active.
    let c = Client::connect(nn.addr, &current_user(), CLIENT_PROTOCOL)
        .await
        .expect("connect");
    mkdirs(&c, "/x").await.expect("mkdirs");
}

#[tokio::test]
async fn only_the_active_recovers_leases() {
    // A file left open past the lease hard limit: a standby leaves it (its
    // edit log is not the one clients write to), the active recovers it.
    let mut conf = HA_CONF.to_vec();
    conf.push("dfs.namenode.lease-hard-limit-sec=1");
    let nn = NameNode::start(&conf);
    let me = current_user();
    let c = Client::connect(nn.addr, &me, CLIENT_PROTOCOL)
        .await
        .expect("connect");
    let ha = Client::connect(nn.addr, &me, HA_SERVICE_PROTOCOL)
        .await
        .expect("connect HA");
    let _: pb::CreateResponseProto = c
        .call(
            "create",
            &pb::CreateRequestProto {
                src: "/open".into(),
                masked: pb::FsPermissionProto { perm: 0o644 },
                client_name: "gone-writer".into(),
                create_flag: 1,
                create_parent: true,
                replication: 1,
                block_size: 1 << 20,
                ..Default::default()
            },
        )
        .await
        .expect("create");
    transition(&ha, "standby").await.expect("to standby");
    tokio::time::sleep(Duration::from_secs(3)).await;
    const RECOVERING: &str = "lease hard limit passed";
    assert!(
        !nn.log().contains(RECOVERING),
        "a standby recovered a lease"
    );
    transition(&ha, "active").await.expect("to active");
    assert!(
        common::wait_until(Duration::from_secs(20), || nn.log().contains(RECOVERING)),
        "the active recovers it"
    );
}
