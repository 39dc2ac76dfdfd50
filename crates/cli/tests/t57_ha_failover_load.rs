//! Failover under load (issue 15): four hdfs-native clients create (with
//! data), rename, delete and mkdir without pause on `hdfs://cairn` (three
//! NameNodes on Raft through `cairn up --ha`) while the active NameNode is
//! SIGKILLed, round after round (`cairn up` starts it again; the next round
//! waits for all three). Afterwards every operation a client saw succeed is
//! there exactly once (a created file with its bytes, a renamed one only at
//! its new name, a deleted one gone, a directory made), nothing the clients
//! never asked for is there, and no two NameNodes were active for the same
//! Raft term. An operation that failed may or may not have happened (its
//! reply was lost with the NameNode): its paths are left out of the check.
//! Failover time (SIGKILL to the first successful operation of any client)
//! is printed per round with its distribution. The members snapshot their
//! namespace every 50 Raft entries, so restarts start from snapshots and a
//! member left behind may be sent the leader's.

mod common;

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use common::ha::{active_terms, kill, log_lines, up_ha_with, HaUp};
use common::ha_load::{client_loop, report_failovers, verify, Progress};

const CLIENTS: usize = 4;
/// Rounds of SIGKILL (CAIRN_HA_ROUNDS overrides; the issue asks for 20).
const ROUNDS: usize = 20;

/// Waits until all three NameNodes answer, one of them active.
fn wait_all_up(up: &HaUp, limit: Duration) -> String {
    let start = Instant::now();
    loop {
        let states: Vec<String> = up.namenodes.iter().map(|(nn, _)| up.state_of(nn)).collect();
        let actives = states.iter().filter(|s| *s == "active").count();
        let followers = states
            .iter()
            .filter(|s| *s == "standby" || *s == "observer")
            .count();
        if actives == 1 && followers == 2 {
            let i = states.iter().position(|s| s == "active").expect("active");
            return up.namenodes[i].0.clone();
        }
        assert!(
            start.elapsed() < limit,
            "NameNodes not all back within {limit:?}: {states:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_operations_survive_sigkills_of_the_active_exactly_once() {
    let rounds: usize = std::env::var("CAIRN_HA_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ROUNDS);
    // Snapshots (checkpoints) every 50 Raft entries, 10 kept behind: the
    // killed members restart from theirs and may need the leader's.
    let up = up_ha_with(
        3,
        &[
            "cairn.namenode.raft.snapshot.entries=50",
            "cairn.namenode.raft.snapshot.keep-entries=10",
        ],
    );
    let progress = Progress::new();
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|id| tokio::spawn(client_loop(up.client(), id, progress.clone())))
        .collect();
    let mut failovers = Vec::new();
    for round in 0..rounds {
        let victim = tokio::task::block_in_place(|| wait_all_up(&up, Duration::from_secs(90)));
        // Let the clients get going on this leader.
        tokio::time::sleep(Duration::from_millis(500)).await;
        kill(&up, &victim);
        let killed = Instant::now();
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let (began, done) = progress.last_ok();
            if began > killed {
                let secs = (done - killed).as_secs_f64();
                eprintln!("round {round}: killed {victim}; first acknowledged operation {secs:.2} s later");
                failovers.push(secs);
                break;
            }
            assert!(
                killed.elapsed() < Duration::from_secs(60),
                "round {round}: no operation succeeded within 60 s of killing {victim}"
            );
        }
    }
    tokio::task::block_in_place(|| wait_all_up(&up, Duration::from_secs(90)));
    tokio::time::sleep(Duration::from_millis(500)).await;
    progress.stop.store(true, Ordering::Release);
    let mut ledgers = Vec::new();
    for t in tasks {
        ledgers.push(t.await.expect("client task"));
    }

    verify(&up.client(), &ledgers, rounds).await;

    let terms = active_terms(up.dir.path());
    let mut sorted: Vec<_> = terms.keys().collect();
    sorted.sort();
    eprintln!("terms with an active NameNode: {sorted:?}");
    for (t, n) in &terms {
        assert_eq!(*n, 1, "term {t} had {n} active NameNodes: {terms:?}");
    }
    // Each round's first success after the kill came from a NameNode
    // process that took the lead ("active for term" once per process and
    // term) after it: another member in a new term, or the killed one
    // resuming its own term (its vote is on disk) when started again
    // before the other two elected a leader.
    let taken: usize = log_lines(up.dir.path(), "active for term ")
        .iter()
        .map(|(_, n)| n)
        .sum();
    assert!(
        taken > rounds,
        "a new lead per round: {taken} in {rounds} rounds (terms {sorted:?})"
    );

    report_failovers(&failovers, "SIGKILL");
    let written = log_lines(up.dir.path(), "Raft snapshot (checkpoint) written");
    let installed = log_lines(up.dir.path(), "Raft snapshot from the leader installed");
    eprintln!("snapshots written {written:?}, installed from the leader {installed:?}");
    assert!(
        written.iter().all(|(_, n)| *n > 0),
        "every member wrote snapshots: {written:?}"
    );
}
