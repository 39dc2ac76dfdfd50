//! Block recovery (lease recovery of a file whose writer died, or a
//! truncate inside a block), DataNode side: the primary DataNode named in a
//! BlockRecoveryCommand takes every replica over with InterDatanodeProtocol
//! `initReplicaRecovery`, brings them all to the shortest length (or the
//! truncate block's) with `updateReplicaUnderRecovery`, and tells the
//! NameNode with `commitBlockSynchronization`.

mod common;

use std::path::Path;

use cairn_proto::hadoop::hdfs::op_write_block_proto::BlockConstructionStage as Stage;
use cairn_proto::hadoop::hdfs::CommitBlockSynchronizationRequestProto;
use common::*;
use tokio::net::TcpStream;

/// Writes `payload` in client packets to `dn` as a new block, waits for
/// every ack, then drops the connection without the last packet.
async fn write_unfinished(dn: &RunningDn, id: u64, gs: u64, payload: &[u8]) {
    let req = write_request(id, gs, Stage::PipelineSetupCreate, vec![], 0, 0);
    let mut w = open_write(dn.xfer, &req).await;
    assert_eq!(w.connect_ack.status, 0, "connect-ack {:?}", w.connect_ack);
    let mut n = 0i64;
    for (i, chunk) in payload.chunks(PACKET_DATA).enumerate() {
        w.send(&packet((i * PACKET_DATA) as u64, n, chunk, false, false))
            .await;
        n += 1;
    }
    for _ in 0..n {
        let ack = w.ack().await;
        assert_eq!(ack.reply, vec![0], "ack {ack:?}");
    }
    drop(w);
}

/// Files named `name` anywhere below `dir`.
fn find(dir: &Path, name: &str, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read_dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            find(&p, name, out);
        } else if p.file_name().and_then(|n| n.to_str()) == Some(name) {
            out.push(p);
        }
    }
}

/// A fake NameNode with two registered DataNodes.
struct Two {
    nn: FakeNameNode,
    _nn_token: tokio_util::sync::CancellationToken,
    dns: [RunningDn; 2],
    dirs: [tempfile::TempDir; 2],
}

async fn two_datanodes() -> Two {
    let (nn_addr, nn, _nn_token) = start_namenode().await;
    let dirs = [
        tempfile::tempdir().expect("tempdir"),
        tempfile::tempdir().expect("tempdir"),
    ];
    let dns = [
        start_datanode(dirs[0].path(), nn_addr, &[]).await,
        start_datanode(dirs[1].path(), nn_addr, &[]).await,
    ];
    eventually("both registered", || {
        nn.state.lock().expect("lock").registrations.len() >= 2
    })
    .await;
    Two {
        nn,
        _nn_token,
        dns,
        dirs,
    }
}

impl Two {
    /// The first commitBlockSynchronization, once it arrived.
    async fn commit(&self) -> CommitBlockSynchronizationRequestProto {
        eventually("commitBlockSynchronization", || {
            !self.nn.state.lock().expect("lock").commits.is_empty()
        })
        .await;
        self.nn.state.lock().expect("lock").commits[0].clone()
    }

    /// Both replicas of `id` are finalized on disk under `new_gs`, nothing
    /// left in rbw/, and read back as `want` with READ_BLOCK.
    async fn assert_recovered(&self, id: u64, new_gs: u64, want: &[u8]) {
        for (dn, dir) in self.dns.iter().zip(&self.dirs) {
            let mut metas = Vec::new();
            find(dir.path(), &format!("blk_{id}_{new_gs}.meta"), &mut metas);
            assert_eq!(metas.len(), 1, "{metas:?}");
            assert!(metas[0].to_string_lossy().contains("/finalized/"));
            let mut blocks = Vec::new();
            find(dir.path(), &format!("blk_{id}"), &mut blocks);
            assert_eq!(blocks.len(), 1);
            assert!(blocks[0].to_string_lossy().contains("/finalized/"));
            assert_eq!(
                std::fs::metadata(&blocks[0]).expect("stat").len(),
                want.len() as u64
            );
            let mut conn = TcpStream::connect(dn.xfer).await.expect("connect");
            let (_, got) = read_range(&mut conn, id, new_gs, 0, want.len() as u64)
                .await
                .expect("read recovered replica");
            assert!(got == want, "data of {}", dn.uuid);
        }
    }

    async fn stop(self) {
        let [dn1, dn2] = self.dns;
        dn1.stop().await;
        dn2.stop().await;
    }
}

/// Goal: two RBW replicas of one block, of different lengths (the shorter
/// ending inside a checksum chunk), left by a writer that died, are both
/// finalized at the shorter length with the recovery's generation stamp,
/// read back intact with READ_BLOCK, and the NameNode is told the length,
/// stamp and both DataNodes with their storages.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn recovers_rbw_replicas_to_the_shortest() {
    let t = two_datanodes().await;
    let [dn1, dn2] = &t.dns;
    let (id, gs, new_gs) = (7001u64, 1001u64, 1005u64);
    let payload = data(3 * PACKET_DATA, 9);
    let short = 2 * PACKET_DATA + 1000;
    assert_ne!(short % BPC, 0, "the short replica ends inside a chunk");
    write_unfinished(dn1, id, gs, &payload).await;
    write_unfinished(dn2, id, gs, &payload[..short]).await;

    t.nn.recover(&dn1.uuid, id, gs, new_gs, vec![dn1.info(), dn2.info()]);
    let commit = t.commit().await;
    assert_eq!(commit.block.block_id, id);
    assert_eq!(commit.block.generation_stamp, gs);
    assert_eq!(commit.new_gen_stamp, new_gs);
    assert_eq!(commit.new_length, short as u64);
    assert!(commit.close_file);
    assert!(!commit.delete_block);
    let mut uuids: Vec<String> = commit
        .new_targets
        .iter()
        .map(|t| t.datanode_uuid.clone())
        .collect();
    uuids.sort();
    let mut want = vec![dn1.uuid.clone(), dn2.uuid.clone()];
    want.sort();
    assert_eq!(uuids, want, "targets");
    assert_eq!(commit.new_target_storages.len(), 2);
    assert!(commit
        .new_target_storages
        .iter()
        .all(|s| s.starts_with("DS-")));
    t.assert_recovered(id, new_gs, &payload[..short]).await;
    t.stop().await;
}

/// Goal: a truncate's recovery (the command carries `truncateBlock`) cuts
/// two finalized replicas of a closed file's block to the truncate length,
/// inside a checksum chunk, under the recovery id; both read back as the
/// prefix, and the NameNode is told that length.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn truncate_recovery_cuts_finalized_replicas() {
    let t = two_datanodes().await;
    let [dn1, dn2] = &t.dns;
    let (id, gs, new_gs) = (7101u64, 1001u64, 1007u64);
    let payload = data(2 * PACKET_DATA + 300, 4);
    let cut = PACKET_DATA + 777;
    assert_ne!(cut % BPC, 0, "the cut ends inside a chunk");
    write_block(dn1.xfer, id, gs, &payload, vec![dn2.info()]).await;
    eventually("both finalized", || t.nn.received().len() >= 2).await;

    let locs = vec![dn1.info(), dn2.info()];
    t.nn.recover_to(&dn2.uuid, id, gs, new_gs, Some(cut as u64), locs);
    let commit = t.commit().await;
    assert_eq!(
        (
            commit.block.generation_stamp,
            commit.new_gen_stamp,
            commit.new_length
        ),
        (gs, new_gs, cut as u64)
    );
    assert!(commit.close_file && !commit.delete_block);
    assert_eq!(commit.new_targets.len(), 2);
    t.assert_recovered(id, new_gs, &payload[..cut]).await;
    t.stop().await;
}
