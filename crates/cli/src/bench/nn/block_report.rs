//! The blockReport op of `cairn bench nn` (NNThroughputBenchmark's): the
//! simulated DataNodes (registration over DatanodeProtocol, heartbeats,
//! full block reports in the long-list encoding), shared with
//! `cairn bench nn-startup`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use cairn_proto::hadoop::hdfs as pb;

use super::{complete, create_req, delete, file_path, leave_safe_mode, row, run_parallel, timed};
use super::{NnArgs, Target, BASE, RUNS};
use crate::bench::Obj;

/// One simulated DataNode of the blockReport op.
pub(super) struct SimNode {
    pub(super) reg: pb::DatanodeRegistrationProto,
    pub(super) storage: pb::DatanodeStorageProto,
    pub(super) blocks: std::sync::Mutex<Vec<(u64, u64)>>,
}

pub(super) async fn block_report(
    t: &Arc<Target>,
    a: &NnArgs,
    threads: usize,
) -> anyhow::Result<Obj> {
    let d = a.datanodes.max(1);
    let base = format!("{BASE}/blockReport");
    let setup_start = Instant::now();
    // 1. Register the simulated DataNodes: versionRequest, registerDatanode,
    //    empty blockReport, one heartbeat.
    let mut nodes = Vec::with_capacity(d);
    let mut pool = String::new();
    // NNThroughputBenchmark gives node i xferPort i+1; a NameNode keys
    // excludeNodes (and Hadoop re-registrations) by ip:xferPort, so nodes
    // of an earlier run, still alive, would shadow ours: each run takes its
    // own port range instead (nodes are found by uuid, not by port).
    let port_base = 1
        + (uuid_like(0)
            .as_bytes()
            .iter()
            .map(|&b| u32::from(b))
            .sum::<u32>()
            * 7919
            + RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) * 101)
            % 50_000;
    for i in 0..d {
        let (node, p) =
            register(t, &uuid_like(i), port_base + u32::try_from(i).unwrap_or(0)).await?;
        pool = p;
        nodes.push(node);
    }
    let nodes = Arc::new(nodes);
    // 2. Files whose blocks land on the simulated nodes.
    leave_safe_mode(t).await?;
    let repl = a
        .replication
        .min(u32::try_from(d).unwrap_or(u32::MAX))
        .max(1);
    let real = ((a.blocks_per_report * d) as f64 * a.real_fraction.clamp(0.0, 1.0)
        / f64::from(repl))
    .ceil() as usize;
    let bpf = a.blocks_per_file.max(1);
    let files = real.div_ceil(bpf);
    let r: pb::GetDatanodeReportResponseProto = t
        .client(0)
        .call(
            "getDatanodeReport",
            &pb::GetDatanodeReportRequestProto { r#type: 2 },
        )
        .await?;
    let ours: std::collections::HashSet<String> = nodes
        .iter()
        .map(|n| n.reg.datanode_id.datanode_uuid.clone())
        .collect();
    let exclude: Arc<Vec<pb::DatanodeInfoProto>> = Arc::new(
        r.di.into_iter()
            .filter(|i| !ours.contains(&i.id.datanode_uuid))
            .collect(),
    );
    let (tt, nn, pool2) = (t.clone(), nodes.clone(), pool.clone());
    let (per_dir, bs) = (a.files_per_dir, a.br_block_size);
    run_parallel(threads, files, move |th, i| {
        let (t, nodes, exclude, pool) = (tt.clone(), nn.clone(), exclude.clone(), pool2.clone());
        let path = file_path("blockReport", i, per_dir);
        async move {
            let client = format!("blockReport-client-{th}");
            let _: pb::CreateResponseProto = t
                .client(th)
                .call("create", &create_req(&path, &client, repl, bs))
                .await
                .with_context(|| format!("create {path}"))?;
            let mut prev: Option<pb::ExtendedBlockProto> = None;
            for _ in 0..bpf {
                let lb = add_block(&t, th, &path, &client, prev.clone(), &exclude).await?;
                received(&t, &nodes, &pool, &path, &lb).await?;
                prev = Some(pb::ExtendedBlockProto {
                    num_bytes: Some(0),
                    ..lb.b.clone()
                });
            }
            complete(&t, th, &path, &client, prev).await
        }
    })
    .await?;
    let setup = setup_start.elapsed();
    // 3. The reports: real blocks less the missing ones, padded with fakes.
    let reports = reports_of(&nodes, a);
    let real_blocks: usize = nodes
        .iter()
        .map(|n| n.blocks.lock().map_or(0, |b| b.len()))
        .sum();
    let reports = Arc::new(reports);
    let n = a.reports.unwrap_or(3 * d);
    let (tt, nn, pool2, rr) = (t.clone(), nodes.clone(), pool.clone(), reports.clone());
    let phase = run_parallel(threads, n, move |_th, i| {
        let (t, nodes, pool, reports) = (tt.clone(), nn.clone(), pool2.clone(), rr.clone());
        async move {
            let k = i % nodes.len();
            send_report(&t, &nodes[k], &pool, &reports[k], i as u64 + 1).await
        }
    });
    let (wall, lat, cpu) = timed(t, phase).await?;
    if !a.keep_results {
        leave_safe_mode(t).await?;
        delete(t, 0, &base, true).await?;
    }
    Ok(row("blockReport", threads, n, wall, &lat, cpu)
        .with("datanodes", d)
        .with("blocks_per_report", a.blocks_per_report)
        .with("real_replicas", real_blocks)
        .with("files", files)
        .with("setup_s", setup.as_secs_f64()))
}

/// addBlock for a file of the setup, waiting out NotReplicatedYet (the
/// previous block's replicas not yet reported) as HDFS's client does.
async fn add_block(
    t: &Target,
    th: usize,
    path: &str,
    client: &str,
    prev: Option<pb::ExtendedBlockProto>,
    exclude: &[pb::DatanodeInfoProto],
) -> anyhow::Result<pb::LocatedBlockProto> {
    let mut tries = 0;
    loop {
        let r: anyhow::Result<pb::AddBlockResponseProto> = t
            .client(th)
            .call(
                "addBlock",
                &pb::AddBlockRequestProto {
                    src: path.to_string(),
                    client_name: client.to_string(),
                    previous: prev.clone(),
                    exclude_nodes: exclude.to_vec(),
                    file_id: Some(0),
                    favored_nodes: Vec::new(),
                    flags: Vec::new(),
                },
            )
            .await;
        match r {
            Ok(r) => return Ok(r.block),
            Err(e) if tries < 30 && format!("{e:#}").contains("NotReplicatedYet") => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => return Err(e.context(format!("addBlock {path}"))),
        }
    }
}

/// Reports a new block RECEIVED by each simulated DataNode it was placed on.
async fn received(
    t: &Target,
    nodes: &[SimNode],
    pool: &str,
    path: &str,
    lb: &pb::LocatedBlockProto,
) -> anyhow::Result<()> {
    for loc in &lb.locs {
        let idx = nodes
            .iter()
            .position(|n| n.reg.datanode_id.datanode_uuid == loc.id.datanode_uuid)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "addBlock {path} placed a replica on {}:{} ({}), not a simulated DataNode",
                    loc.id.ip_addr,
                    loc.id.xfer_port,
                    loc.id.datanode_uuid
                )
            })?;
        let node = &nodes[idx];
        let _: pb::BlockReceivedAndDeletedResponseProto = t
            .datanode
            .call(
                "blockReceivedAndDeleted",
                &pb::BlockReceivedAndDeletedRequestProto {
                    registration: node.reg.clone(),
                    block_pool_id: pool.to_string(),
                    blocks: vec![pb::StorageReceivedDeletedBlocksProto {
                        storage_uuid: node.storage.storage_uuid.clone(),
                        blocks: vec![pb::ReceivedDeletedBlockInfoProto {
                            block: pb::BlockProto {
                                block_id: lb.b.block_id,
                                gen_stamp: lb.b.generation_stamp,
                                num_bytes: Some(0),
                            },
                            status: 2, // RECEIVED
                            delete_hint: None,
                        }],
                        storage: Some(node.storage.clone()),
                    }],
                },
            )
            .await?;
        if let Ok(mut b) = node.blocks.lock() {
            b.push((lb.b.block_id, lb.b.generation_stamp));
        }
    }
    Ok(())
}

/// Each node's full report: its real blocks less the missing fraction,
/// padded with fake ids to `--blocks-per-report`.
fn reports_of(nodes: &[SimNode], a: &NnArgs) -> Vec<Vec<(u64, u64)>> {
    nodes
        .iter()
        .map(|n| {
            let mut real = n.blocks.lock().map(|b| b.clone()).unwrap_or_default();
            let keep =
                ((real.len() as f64) * (1.0 - a.missing_fraction.clamp(0.0, 1.0))).round() as usize;
            real.truncate(keep.min(a.blocks_per_report));
            let mut fake = 1u64;
            while real.len() < a.blocks_per_report {
                real.push((fake, 0));
                fake += 1;
            }
            real
        })
        .collect()
}

/// Registers a simulated DataNode as a real one does: versionRequest,
/// registerDatanode, an empty full block report, one heartbeat. Returns it
/// with the block pool id.
pub(super) async fn register(
    t: &Target,
    uuid: &str,
    xfer_port: u32,
) -> anyhow::Result<(SimNode, String)> {
    let v: pb::VersionResponseProto = t
        .namenode
        .call("versionRequest", &pb::VersionRequestProto {})
        .await?;
    let pool = v.info.block_pool_id.clone();
    let reg = pb::DatanodeRegistrationProto {
        datanode_id: pb::DatanodeIdProto {
            ip_addr: "127.0.0.1".into(),
            host_name: "localhost".into(),
            datanode_uuid: uuid.to_string(),
            xfer_port,
            info_port: 9864,
            ipc_port: 9867,
            info_secure_port: Some(9865),
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
    let r: pb::RegisterDatanodeResponseProto = t
        .datanode
        .call(
            "registerDatanode",
            &pb::RegisterDatanodeRequestProto { registration: reg },
        )
        .await?;
    let storage = pb::DatanodeStorageProto {
        storage_uuid: format!("DS-{uuid}"),
        state: Some(0),
        storage_type: Some(1),
    };
    let node = SimNode {
        reg: r.registration,
        storage,
        blocks: std::sync::Mutex::new(Vec::new()),
    };
    send_report(t, &node, &pool, &[], 0).await?;
    heartbeat(t, &node).await?;
    Ok((node, pool))
}

/// One heartbeat with 100 GiB free.
pub(super) async fn heartbeat(t: &Target, node: &SimNode) -> anyhow::Result<()> {
    let cap = 100u64 << 30;
    let _: pb::HeartbeatResponseProto = t
        .datanode
        .call(
            "sendHeartbeat",
            &pb::HeartbeatRequestProto {
                registration: node.reg.clone(),
                reports: vec![pb::StorageReportProto {
                    storage_uuid: node.storage.storage_uuid.clone(),
                    failed: Some(false),
                    capacity: Some(cap),
                    dfs_used: Some(0),
                    remaining: Some(cap),
                    block_pool_used: Some(0),
                    storage: Some(node.storage.clone()),
                    non_dfs_used: Some(0),
                    mount: None,
                }],
                xmits_in_progress: Some(0),
                xceiver_count: Some(0),
                failed_volumes: Some(0),
                request_full_block_report_lease: Some(true),
                ..Default::default()
            },
        )
        .await?;
    Ok(())
}

pub(super) fn uuid_like(i: usize) -> String {
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ u64::from(std::process::id()) << 32;
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        (nonce >> 32) as u32,
        (nonce >> 16) as u16,
        i & 0xfff,
        (nonce >> 4) & 0xfff,
        nonce & 0xffff_ffff_ffff
    )
}

/// A full block report of finalized replicas in the long-list encoding.
pub(super) async fn send_report(
    t: &Target,
    node: &SimNode,
    pool: &str,
    blocks: &[(u64, u64)],
    id: u64,
) -> anyhow::Result<()> {
    // Legacy long list: finalized count, under-construction count,
    // (id, len, gs) per finalized replica, then the delimiter triple.
    let mut longs = Vec::with_capacity(2 + 3 * blocks.len() + 3);
    longs.push(blocks.len() as u64);
    longs.push(0);
    for &(bid, gs) in blocks {
        longs.extend_from_slice(&[bid, 0, gs]);
    }
    longs.extend_from_slice(&[u64::MAX, u64::MAX, u64::MAX]);
    let _: pb::BlockReportResponseProto = t
        .datanode
        .call(
            "blockReport",
            &pb::BlockReportRequestProto {
                registration: node.reg.clone(),
                block_pool_id: pool.to_string(),
                reports: vec![pb::StorageBlockReportProto {
                    storage: node.storage.clone(),
                    blocks: longs,
                    // Set only with the buffer encoding (HDFS refuses both).
                    number_of_blocks: None,
                    blocks_buffers: Vec::new(),
                }],
                context: Some(pb::BlockReportContextProto {
                    total_rpcs: 1,
                    cur_rpc: 0,
                    id: i64::try_from(id).unwrap_or(0),
                    lease_id: Some(0),
                }),
            },
        )
        .await?;
    Ok(())
}
