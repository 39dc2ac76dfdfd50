//! Manual HA failover with real processes and real clients: two `cairn
//! namenode` processes formatted from one name directory (a copy, as HDFS's
//! `bootstrapStandby`: the same namespace id; they do not share edits yet),
//! one active and one standby, in nameservice `ns1`. hdfs-native with
//! `hdfs://ns1` and Java (`ConfiguredFailoverProxyProvider`, `hadoop fs`)
//! follow the active across `cairn admin -failover` and Java's own
//! `hdfs haadmin -failover` (DFSHAAdmin); a direct call to the standby gets
//! `StandbyException`; `-getServiceState` prints the truth throughout.
//! Each new directory lands on the NameNode that was active when it was
//! made, which is how the test sees where the clients went. And Java's
//! `ObserverReadProxyProvider` (msync on the active, its state id in the
//! request header) reads from an observer.
//!
//! The Java half needs a JDK and Maven (the kit fetches the jars on first
//! use).

mod common;

use std::path::Path;
use std::process::Command;

use cairn_proto::exceptions as ex;
use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::CLIENT_PROTOCOL;
use cairn_rpc::client::{Client, ClientError};
use common::{current_user, format_namenode, NameNode};

/// What makes each NameNode part of the nameservice (its own addresses
/// need not be right for that; the clients get the real ones).
const NN_HA: &[&str] = &[
    "dfs.nameservices=ns1",
    "dfs.ha.namenodes.ns1=nn1,nn2",
    "dfs.namenode.rpc-address.ns1.nn1=127.0.0.1:1",
    "dfs.namenode.rpc-address.ns1.nn2=127.0.0.1:2",
];

/// The client side of the nameservice, with the real addresses.
fn client_conf(nn1: &NameNode, nn2: &NameNode) -> Vec<(String, String)> {
    vec![
        ("dfs.nameservices".into(), "ns1".into()),
        ("dfs.ha.namenodes.ns1".into(), "nn1,nn2".into()),
        (
            "dfs.namenode.rpc-address.ns1.nn1".into(),
            nn1.addr.to_string(),
        ),
        (
            "dfs.namenode.rpc-address.ns1.nn2".into(),
            nn2.addr.to_string(),
        ),
        (
            "dfs.client.failover.proxy.provider.ns1".into(),
            "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider".into(),
        ),
        // haadmin's failover wants a fencer configured; the old active
        // steps down gracefully, so it is never run.
        ("dfs.ha.fencing.methods".into(), "shell(/bin/true)".into()),
    ]
}

/// `cairn -D ... admin ARGS`: (exit code, stdout, stderr).
fn admin(conf: &[(String, String)], args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
    for (k, v) in conf {
        cmd.arg("-D").arg(format!("{k}={v}"));
    }
    let out = cmd
        .arg("admin")
        .args(args)
        .output()
        .expect("run cairn admin");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn service_state(conf: &[(String, String)], nn: &str) -> String {
    let (code, out, err) = admin(conf, &["-getServiceState", nn]);
    assert_eq!(code, 0, "-getServiceState {nn}: {err}");
    out.trim().to_string()
}

/// Whether `path` exists on the NameNode at `nn`, asked directly (an
/// active: a standby answers StandbyException).
async fn exists(nn: &NameNode, path: &str) -> Result<bool, ClientError> {
    let c = Client::connect(nn.addr, &current_user(), CLIENT_PROTOCOL).await?;
    let r: pb::GetFileInfoResponseProto = c
        .call(
            "getFileInfo",
            &pb::GetFileInfoRequestProto { src: path.into() },
        )
        .await?;
    Ok(r.fs.is_some())
}

fn start_pair() -> (NameNode, NameNode) {
    let dir1 = tempfile::tempdir().expect("temp dir");
    format_namenode(&dir1.path().join("name"), NN_HA);
    let dir2 = tempfile::tempdir().expect("temp dir");
    // bootstrapStandby: the standby starts from a copy of the formatted
    // directory, so both have one namespace id and block pool.
    let ok = Command::new("cp")
        .arg("-r")
        .arg(dir1.path().join("name"))
        .arg(dir2.path().join("name"))
        .status()
        .expect("cp")
        .success();
    assert!(ok, "copying the name directory");
    let mut active = NN_HA.to_vec();
    active.push("cairn.namenode.ha.initial-state=active");
    let mut standby = NN_HA.to_vec();
    standby.push("cairn.namenode.ha.initial-state=standby");
    (
        NameNode::start_in(dir1, &active),
        NameNode::start_in(dir2, &standby),
    )
}

/// HDFS's `/isActive` of `nn`: status and body.
fn is_active(nn: &NameNode) -> (u16, String) {
    let (code, _, body) = common::http_request(nn.http, "GET", "/isActive", b"");
    (code, String::from_utf8_lossy(&body).into_owned())
}

fn java_dfsadmin(conf: &[(String, String)], work: &Path, script: &str) -> String {
    common::run_java_script("hdfs://ns1", conf, work, script)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_follow_manual_failover() {
    let (nn1, nn2) = start_pair();
    let conf = client_conf(&nn1, &nn2);
    assert_eq!(service_state(&conf, "nn1"), "active");
    assert_eq!(service_state(&conf, "nn2"), "standby");
    // By address as well as by id.
    assert_eq!(service_state(&conf, &nn2.addr.to_string()), "standby");
    // What load balancers poll: HDFS's /isActive.
    assert_eq!(is_active(&nn1), (200, "I am Active!".to_string()));
    assert_eq!(is_active(&nn2), (405, "I am not Active!".to_string()));

    // A direct call to the standby: StandbyException, HDFS's text.
    let direct = Client::connect(nn2.addr, &current_user(), CLIENT_PROTOCOL)
        .await
        .expect("connect");
    let e = direct
        .call::<_, pb::MkdirsResponseProto>(
            "mkdirs",
            &pb::MkdirsRequestProto {
                src: "/direct".into(),
                masked: pb::FsPermissionProto { perm: 0o755 },
                create_parent: true,
                unmasked: None,
            },
        )
        .await
        .expect_err("a standby refuses mkdirs");
    assert_eq!(e.class(), Some(ex::STANDBY), "{e}");

    // hdfs-native on the nameservice URL: nn1 is active.
    let native = hdfs_native::ClientBuilder::new()
        .with_url("hdfs://ns1")
        .with_config(conf.clone())
        .build()
        .expect("hdfs-native client");
    native
        .mkdirs("/native-1", 0o755, true)
        .await
        .expect("mkdirs");
    assert!(exists(&nn1, "/native-1").await.expect("ask nn1"));

    // cairn admin -failover: nn2 becomes active; the same client follows.
    let (code, out, err) = admin(&conf, &["-failover", "nn1", "nn2"]);
    assert_eq!(code, 0, "failover: {out}{err}");
    assert_eq!(out.trim(), "Failover from nn1 to nn2 successful");
    assert_eq!(service_state(&conf, "nn1"), "standby");
    assert_eq!(service_state(&conf, "nn2"), "active");
    assert_eq!(is_active(&nn1).0, 405);
    assert_eq!(is_active(&nn2).0, 200);
    native
        .mkdirs("/native-2", 0o755, true)
        .await
        .expect("mkdirs after failover");
    assert!(exists(&nn2, "/native-2").await.expect("ask nn2"));
    // Failing over to the active is refused, as haadmin does.
    let (code, _, err) = admin(&conf, &["-failover", "nn1", "nn2"]);
    assert_ne!(code, 0);
    assert!(err.contains("Can't failover to an active service"), "{err}");

    // Java: FsShell through ConfiguredFailoverProxyProvider (which tries
    // nn1 first and fails over on its StandbyException), Hadoop's own
    // DFSHAAdmin failing back, and FsShell following it.
    let work = tempfile::tempdir().expect("temp dir");
    let got = java_dfsadmin(
        &conf,
        work.path(),
        "fs -mkdir /java-1\n\
         haadmin -getServiceState nn2\n\
         haadmin -failover nn2 nn1\n\
         haadmin -getServiceState nn1\n\
         haadmin -getServiceState nn2\n\
         fs -mkdir /java-2\n",
    );
    let blocks: Vec<&str> = got.split("\n\n").collect();
    let block = |cmd: &str| -> &str {
        blocks
            .iter()
            .find(|b| b.starts_with(&format!("$ {cmd}")))
            .unwrap_or_else(|| panic!("no `{cmd}` in:\n{got}"))
    };
    assert!(block("fs -mkdir /java-1").ends_with("exit=0"), "{got}");
    assert!(
        block("haadmin -getServiceState nn2").contains("\nactive\nexit=0"),
        "{got}"
    );
    assert!(
        block("haadmin -failover nn2 nn1").contains("Failover from nn2 to nn1 successful"),
        "{got}"
    );
    assert!(
        block("haadmin -getServiceState nn1").contains("\nactive\nexit=0"),
        "{got}"
    );
    // The second -getServiceState nn2, after the failback.
    assert!(
        got.contains("$ haadmin -getServiceState nn2\nstandby\nexit=0"),
        "{got}"
    );
    assert!(block("fs -mkdir /java-2").ends_with("exit=0"), "{got}");
    // /java-1 succeeded while nn2 was active, so it is there, not on nn1.
    assert!(exists(&nn1, "/java-2").await.expect("ask nn1"));
    assert!(
        !exists(&nn1, "/java-1").await.expect("ask nn1"),
        "made on nn2"
    );

    // cairn tells the same story, and hdfs-native follows back to nn1.
    assert_eq!(service_state(&conf, "nn1"), "active");
    assert_eq!(service_state(&conf, "nn2"), "standby");
    native
        .mkdirs("/native-3", 0o755, true)
        .await
        .expect("mkdirs after the failback");
    assert!(exists(&nn1, "/native-3").await.expect("ask nn1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn java_observer_read_proxy_provider_reads_from_the_observer() {
    // nn2 makes /on-observer while briefly active, then becomes an
    // observer: it is one transaction ahead of nn1, so a read in step with
    // nn1's state id (ObserverReadProxyProvider msyncs with the active
    // first) is served by nn2, and only nn2 has /on-observer. (With a
    // shared journal both would have it; here it shows where reads go.)
    let (nn1, nn2) = start_pair();
    let me = current_user();
    let mut conf = client_conf(&nn1, &nn2);
    let (code, _, err) = admin(&conf, &["-transitionToActive", "nn2"]);
    assert_eq!(code, 0, "{err}");
    assert!(exists(&nn2, "/").await.expect("nn2 active"));
    let c2 = Client::connect(nn2.addr, &me, CLIENT_PROTOCOL)
        .await
        .expect("connect");
    let _: pb::MkdirsResponseProto = c2
        .call(
            "mkdirs",
            &pb::MkdirsRequestProto {
                src: "/on-observer".into(),
                masked: pb::FsPermissionProto { perm: 0o755 },
                create_parent: true,
                unmasked: None,
            },
        )
        .await
        .expect("mkdirs on nn2");
    for step in ["-transitionToStandby", "-transitionToObserver"] {
        let (code, _, err) = admin(&conf, &[step, "nn2"]);
        assert_eq!(code, 0, "{step}: {err}");
    }
    assert_eq!(service_state(&conf, "nn2"), "observer");
    assert!(!exists(&nn1, "/on-observer").await.expect("ask nn1"));
    for (k, v) in conf.iter_mut() {
        if k == "dfs.client.failover.proxy.provider.ns1" {
            *v = "org.apache.hadoop.hdfs.server.namenode.ha.ObserverReadProxyProvider".into();
        }
    }
    let work = tempfile::tempdir().expect("temp dir");
    let got = java_dfsadmin(&conf, work.path(), "fs -ls /\nfs -mkdir /written\n");
    assert!(
        got.contains("/on-observer"),
        "the listing came from nn2:\n{got}"
    );
    assert!(got.contains("$ fs -mkdir /written\nexit=0"), "{got}");
    // The write went to the active.
    assert!(exists(&nn1, "/written").await.expect("ask nn1"));

    // hdfs-native with the same provider: reads from the observer too
    // (msync first, then its state id), writes to the active.
    let native = hdfs_native::ClientBuilder::new()
        .with_url("hdfs://ns1")
        .with_config(conf.clone())
        .build()
        .expect("hdfs-native client");
    native
        .get_file_info("/on-observer")
        .await
        .expect("served by the observer");
    native
        .mkdirs("/native-written", 0o755, true)
        .await
        .expect("mkdirs on the active");
    assert!(exists(&nn1, "/native-written").await.expect("ask nn1"));
}
