//! Three NameNodes on Raft, end to end (issue 15): `cairn up --ha` starts a
//! nameservice of three `cairn namenode` processes (one Raft group, the
//! leader is the active) and three DataNodes, and writes the client
//! configuration into `<dir>/conf`. hdfs-native and the Java client
//! (`ConfiguredFailoverProxyProvider`, from that configuration) write and
//! read through SIGKILLs of the active: a new leader takes over, every
//! acknowledged file is there with its bytes, `cairn up` starts the killed
//! NameNode again and it catches up from the group. No two NameNodes were
//! active for the same Raft term (from their logs).
//!
//! The Java half needs a JDK and Maven (the kit fetches the jars on first
//! use).

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use bytes::Bytes;
use common::ha::{active_terms, exists_on_observer, kill, read, state_id_of, up_ha, write};
use common::pattern;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_write_and_read_through_sigkills_of_the_active() {
    let up = up_ha(6);
    let c = up.client();
    let mut files: Vec<(String, Bytes)> = Vec::new();
    for i in 0..3 {
        let path = format!("/before/f{i}");
        let data = Bytes::from(pattern(i as u64, 200_000 + i * 1000));
        write(&c, &path, &data).await;
        files.push((path, data));
    }
    let java = up.java("fs -mkdir -p /java/before\nfs -ls /before\n");
    assert!(java.contains("/before/f2"), "{java}");

    for round in 0..2 {
        let victim = up.active(Duration::from_secs(30));
        kill(&up, &victim);
        let killed = Instant::now();
        // The first mutation that succeeds after the kill.
        let mut tries = 0;
        loop {
            tries += 1;
            match c.mkdirs(&format!("/after-kill-{round}"), 0o755, true).await {
                Ok(()) => break,
                Err(e) => {
                    assert!(
                        killed.elapsed() < Duration::from_secs(60),
                        "no mutation within 60 s of killing {victim}: {e}"
                    );
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
        let failover = killed.elapsed();
        let now_active = up.active(Duration::from_secs(10));
        eprintln!(
            "round {round}: killed {victim}; {now_active} active, first mutation after \
             {:.2} s ({tries} tries)",
            failover.as_secs_f64()
        );
        assert_ne!(now_active, victim);
        for i in 0..2 {
            let path = format!("/round{round}/f{i}");
            let data = Bytes::from(pattern(100 + round * 10 + i as u64, 150_000 + i * 777));
            write(&c, &path, &data).await;
            files.push((path, data));
        }
        for (path, data) in &files {
            assert_eq!(&read(&c, path).await, data, "{path} after round {round}");
        }
        // cairn up starts the killed NameNode again; it rejoins as a
        // follower and catches up: as an observer it shows the new files.
        let start = Instant::now();
        loop {
            let s = up.state_of(&victim);
            if s == "standby" || s == "observer" {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "{victim} did not come back: {s}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
            .arg("--conf")
            .arg(up.conf_dir())
            .args(["admin", "-transitionToObserver", &victim])
            .output()
            .expect("cairn admin");
        assert!(out.status.success(), "{out:?}");
        let seen = state_id_of(up.addr(&now_active)).await;
        for (path, _) in &files {
            assert!(
                exists_on_observer(up.addr(&victim), path, seen).await,
                "{path} on {victim}"
            );
        }
    }

    // Java through ConfiguredFailoverProxyProvider after the failovers.
    let java = up.java("fs -mkdir /java/after\nfs -ls /round1\n");
    assert!(java.contains("/round1/f1"), "{java}");
    let c2 = up.client();
    assert!(c2.get_file_info("/java/after").await.is_ok());
    assert!(c2.get_file_info("/java/before").await.is_ok());

    // Observer reads: with ObserverReadProxyProvider (msync on the active,
    // its state id in every request) listings and file infos are served by
    // the observers, counted there (Hadoop 3.4 picks among them in random
    // order, `dfs.client.failover.random.order`), never by the active; the
    // writer reads its own write at once.
    let active = up.active(Duration::from_secs(10));
    let observers: Vec<String> = up
        .namenodes
        .iter()
        .map(|(nn, _)| nn.clone())
        .filter(|nn| up.state_of(nn) == "observer")
        .collect();
    assert!(!observers.is_empty(), "a member was made observer above");
    let served =
        |method: &str, at: &[String]| -> u64 { at.iter().map(|nn| up.rpc_calls(nn, method)).sum() };
    let listings = served("GetListing", &observers);
    let infos = served("GetFileInfo", &observers);
    let active_listings = up.rpc_calls(&active, "GetListing");
    let java = up.java_with(
        &[(
            "dfs.client.failover.proxy.provider.cairn",
            "org.apache.hadoop.hdfs.server.namenode.ha.ObserverReadProxyProvider",
        )],
        "fs -mkdir /ryw\nfs -ls -d /ryw\nfs -ls /round0\nfs -ls /round1\n",
    );
    assert!(java.contains("$ fs -mkdir /ryw\nexit=0"), "{java}");
    assert!(java.contains("/ryw\n"), "read-your-writes: {java}");
    assert!(java.contains("/round0/f1"), "{java}");
    assert!(java.contains("/round1/f1"), "{java}");
    assert!(
        served("GetListing", &observers) >= listings + 2,
        "the two listings were served by the observers {observers:?}"
    );
    assert!(
        served("GetFileInfo", &observers) >= infos + 3,
        "the file infos were served by the observers {observers:?}"
    );
    assert_eq!(
        up.rpc_calls(&active, "GetListing"),
        active_listings,
        "no listing went to the active {active}"
    );

    // Operators' view: /jmx says each NameNode's HA state as haadmin does.
    for (nn, _) in &up.namenodes {
        let status = up.jmx_bean(nn, "NameNodeStatus");
        assert_eq!(status["State"], up.state_of(nn), "{nn}: {status}");
        assert!(
            nn != &active || status["LastHATransitionTime"].as_u64() > Some(0),
            "{nn} became active at some time: {status}"
        );
        let fs = up.jmx_bean(nn, "FSNamesystem");
        assert_eq!(fs["tag.HAState"], up.state_of(nn), "{nn}: {fs}");
    }

    let terms = active_terms(up.dir.path());
    assert!(terms.len() >= 3, "three terms had an active: {terms:?}");
    for (t, n) in &terms {
        assert_eq!(*n, 1, "term {t} had {n} active NameNodes: {terms:?}");
    }
}
