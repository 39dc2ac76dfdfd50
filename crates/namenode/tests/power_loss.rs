//! Power loss, not just SIGKILL: the NameNode's metadata (edit segments
//! with preallocation, rolls, checkpoint images, start-up's own repairs)
//! is written to a simulated disk ([`SimDisk`]) that records every write,
//! sync, create, rename and unlink. At random crash points the disk is
//! rebuilt as a power cut would leave it — what was synced, plus any
//! subset of the rest, writes torn page by page — and start-up must load
//! it, with every acknowledged transaction and nothing never attempted.
//!
//! `POWER_LOSS_SEED=<n>` replays one seed; `POWER_LOSS_POINTS=<n>` sets
//! the number of crash points per seed.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;

use cairn_common::config::Configuration;
use cairn_common::disk::sim::{SimDisk, SimRng, Unsynced};
use cairn_common::disk::Disk;
use cairn_namenode::config::NameNodeConfig;
use cairn_namenode::journal::file::Preallocation;
use cairn_namenode::journal::rolling::RollingEditLog;
use cairn_namenode::journal::{EditLog, TxId};
use cairn_namenode::namespace::permission::Caller;
use cairn_namenode::namespace::{
    AclChange, AclEntry, AclEntryType, AclScope, Edit, FsError, GenStamp, Namespace, XAttr,
    XAttrNamespace, XAttrSetFlags,
};
use cairn_namenode::storage;

const SUPERUSER: &str = "hdfs";
const NAME_DIR: &str = "/meta/name";
/// Namespace operations in the workload.
const WORKLOAD_OPS: usize = 260;
/// Crash points per seed unless `POWER_LOSS_POINTS` says otherwise.
const DEFAULT_POINTS: usize = 1200;

fn config(preallocation: Preallocation) -> NameNodeConfig {
    let mut config = NameNodeConfig::from_conf(&Configuration::new()).expect("default config");
    config.name_dirs = vec![PathBuf::from(NAME_DIR)];
    config.journal.preallocation = preallocation;
    // Small steps, so the workload crosses many preallocation boundaries.
    config.journal.step_bytes = 4096;
    config
}

/// What the namespace looks like, independent of how it was rebuilt.
fn fingerprint(ns: &Namespace) -> u64 {
    let mut h = DefaultHasher::new();
    format!("{:?}", ns.to_edits()).hash(&mut h);
    h.finish()
}

/// Everything the workload did that the checks need.
struct Run {
    disk: SimDisk,
    config: NameNodeConfig,
    /// Fingerprint of the namespace after each txid (index = txid).
    after_txid: Vec<u64>,
    /// Id counters of the namespace after each txid.
    counters: Vec<(u64, u64, GenStamp)>,
    /// (recorded disk calls when the ack came, txid acknowledged).
    acks: Vec<(usize, u64)>,
}

impl Run {
    /// The highest txid acknowledged when the first `at` disk calls were done.
    fn acked_at(&self, at: usize) -> u64 {
        self.acks
            .iter()
            .take_while(|(calls, _)| *calls <= at)
            .map(|(_, t)| *t)
            .max()
            .unwrap_or(0)
    }
}

struct Workload {
    disk: SimDisk,
    config: NameNodeConfig,
    rng: SimRng,
    ns: Namespace,
    journal: RollingEditLog,
    edits: Vec<Edit>,
    acks: Vec<(usize, u64)>,
    unacked: Option<TxId>,
    /// Whether a change may wait for durability (not within a burst).
    waits: bool,
    clock_ms: u64,
    paths: Vec<String>,
}

impl Workload {
    /// Logs `edits` (already applied to `self.ns`) as a handler does, and
    /// sometimes waits for them (group commit when it does not).
    fn log(&mut self, edits: Vec<Edit>) {
        if edits.is_empty() {
            return;
        }
        let txid = self.journal.append(&edits).expect("append");
        self.edits.extend(edits);
        self.unacked = Some(txid);
        if self.waits && self.rng.below(3) != 0 {
            self.wait();
        }
    }

    fn wait(&mut self) {
        if let Some(txid) = self.unacked.take() {
            futures::executor::block_on(self.journal.wait_durable(txid)).expect("durable");
            self.acks.push((self.disk.op_count(), txid.0));
        }
    }

    fn pick_path(&mut self) -> String {
        let i = self.rng.below(self.paths.len() as u64) as usize;
        self.paths[i].clone()
    }

    fn new_path(&mut self) -> String {
        let parent = if self.rng.coin() {
            self.pick_path()
        } else {
            "/".to_string()
        };
        let name = format!("n{}", self.rng.below(1000));
        if parent == "/" {
            format!("/{name}")
        } else {
            format!("{parent}/{name}")
        }
    }

    /// One namespace change through the same Namespace calls the RPC
    /// handlers make; failures (a path that is a file, …) log nothing.
    fn mutate(&mut self) {
        self.clock_ms += 1;
        let (su, now) = (Caller::superuser(SUPERUSER), self.clock_ms);
        let edits = match self.rng.below(10) {
            0 | 1 => {
                let p = self.new_path();
                let edits = self
                    .ns
                    .mkdirs(&su, &p, 0o755, true, now)
                    .unwrap_or_default();
                if !edits.is_empty() {
                    self.paths.push(p);
                }
                edits
            }
            2 => {
                let p = self.new_path();
                let created = self.ns.create(
                    &su,
                    &p,
                    0o644,
                    "client",
                    "host",
                    true,
                    true,
                    3,
                    1 << 20,
                    now,
                );
                match created {
                    Ok((status, mut edits, _)) => {
                        let done = self
                            .ns
                            .complete(&p, status.id.0, "client", None, now, &|_| true);
                        if let Ok((_, Some(e))) = done {
                            edits.push(e);
                        }
                        edits
                    }
                    Err(_) => Vec::new(),
                }
            }
            3 => {
                let p = self.pick_path();
                match self.ns.delete(&su, &p, true, now) {
                    Ok(Some((e, _))) => vec![e],
                    _ => Vec::new(),
                }
            }
            4 => {
                let (from, to) = (self.pick_path(), self.new_path());
                match self.ns.rename(&su, &from, &to, now) {
                    Ok((true, Some(e))) => {
                        self.paths.push(to);
                        vec![e]
                    }
                    _ => Vec::new(),
                }
            }
            6 => self.namespace_feature(&su),
            _ => {
                let p = self.pick_path();
                let mode = 0o700 | self.rng.below(0o100) as u16;
                self.ns
                    .set_permission(&su, &p, mode)
                    .map(|e| vec![e])
                    .unwrap_or_default()
            }
        };
        self.log(edits);
    }

    /// One change of the features kept in side tables (xattrs, ACLs,
    /// quotas, storage policies, snapshots): their edits must survive as
    /// the tree's do.
    fn namespace_feature(&mut self, su: &Caller) -> Vec<Edit> {
        let p = self.pick_path();
        let n = self.rng.below(1000);
        let now = self.clock_ms;
        let result = match self.rng.below(7) {
            // Snapshots: a directory made snapshottable and a snapshot of
            // it taken, or one deleted (its diffs and kept blocks go).
            5 => {
                let mut edits = self
                    .ns
                    .allow_snapshot(su, &p)
                    .map(|e| vec![e])
                    .unwrap_or_default();
                let name = format!("s{}", n % 3);
                if let Ok((_, e)) = self.ns.create_snapshot(su, &p, Some(&name), now) {
                    edits.push(e);
                }
                return edits;
            }
            6 => self.ns.delete_snapshot(su, &p, &format!("s{}", n % 3), now),
            0 => self.ns.set_xattr(
                su,
                &p,
                XAttr {
                    namespace: XAttrNamespace::User,
                    name: format!("k{}", n % 4),
                    value: Some(n.to_be_bytes().to_vec()),
                },
                XAttrSetFlags {
                    create: true,
                    replace: true,
                },
            ),
            1 => self.ns.remove_xattr(
                su,
                &p,
                &XAttr {
                    namespace: XAttrNamespace::User,
                    name: format!("k{}", n % 4),
                    value: None,
                },
            ),
            2 => self.ns.change_acl(
                su,
                &p,
                AclChange::Modify,
                &[AclEntry::new(
                    AclScope::Access,
                    AclEntryType::User,
                    Some(&format!("u{}", n % 3)),
                    (n % 8) as u16,
                )],
            ),
            3 => self
                .ns
                .set_quota(su, &p, 1000 + n as i64, -1, None)
                .and_then(|e| e.ok_or_else(|| FsError::Io("unchanged".into()))),
            _ => {
                let policy = ["HOT", "COLD", "ALL_SSD", "WARM"][(n % 4) as usize];
                self.ns.set_storage_policy(su, &p, policy)
            }
        };
        result.map(|e| vec![e]).unwrap_or_default()
    }

    /// Many changes while the disk syncs slowly: the journal writes them
    /// in large group commits, records spanning many sectors.
    fn burst(&mut self) {
        self.disk
            .set_sync_delay(std::time::Duration::from_micros(300));
        for _ in 0..5 + self.rng.below(40) {
            self.mutate_without_waiting();
        }
        self.wait();
        self.disk.set_sync_delay(std::time::Duration::ZERO);
    }

    fn burst_without_waiting(&mut self) {
        self.disk
            .set_sync_delay(std::time::Duration::from_micros(300));
        for _ in 0..1 + self.rng.below(20) {
            self.mutate_without_waiting();
        }
        self.disk.set_sync_delay(std::time::Duration::ZERO);
    }

    fn mutate_without_waiting(&mut self) {
        self.waits = false;
        self.mutate();
        self.waits = true;
    }

    /// A roll and a checkpoint, as the checkpointer or saveNamespace does.
    fn checkpoint(&mut self) {
        // The checkpointer rolls under the namespace lock without waiting
        // for handlers' edits to be durable: the last batch may still be
        // in flight in the old segment.
        if self.rng.coin() {
            self.burst_without_waiting();
        }
        let dir = PathBuf::from(NAME_DIR);
        let up_to = self.journal.roll().expect("roll");
        if self.rng.coin() {
            storage::checkpoint_from_disk(
                &self.disk,
                &dir,
                up_to,
                SUPERUSER,
                &self.config.superuser_group,
                self.config.limits.clone(),
                storage::IMAGES_KEPT,
            )
            .expect("checkpoint");
        } else {
            storage::write_image(&self.disk, &dir, up_to, &self.ns).expect("save namespace");
            storage::purge(&self.disk, &dir, storage::IMAGES_KEPT).expect("purge");
        }
    }

    /// A clean shutdown and start-up on the same disk.
    fn restart(&mut self) {
        self.wait();
        self.journal.close();
        let (_, ns, last, journal) = start(&self.disk, &self.config).expect("restart");
        assert_eq!(
            last as usize,
            self.edits.len(),
            "a clean restart keeps everything"
        );
        self.journal = journal;
        assert_eq!(fingerprint(&ns), fingerprint(&self.ns));
    }
}

type Started = (storage::VersionInfo, Namespace, u64, RollingEditLog);

fn start(disk: &SimDisk, config: &NameNodeConfig) -> Result<Started, String> {
    let disk: Arc<dyn Disk> = Arc::new(disk.clone());
    cairn_namenode::open_metadata(disk, config, SUPERUSER).map_err(|e| e.to_string())
}

/// Formats a disk, then runs the workload on it, recording every disk call.
fn run_workload(seed: u64) -> Run {
    let mut rng = SimRng::new(seed);
    let preallocation = match rng.below(4) {
        0 => Preallocation::Fill,
        1 => Preallocation::None,
        _ => Preallocation::Fallocate,
    };
    let config = config(preallocation);
    let disk = SimDisk::new();
    let empty = Namespace::new(SUPERUSER, &config.superuser_group, 1, config.limits.clone());
    let info = cairn_namenode::new_version_info();
    storage::format(&disk, &config.name_dirs, &info, &empty, false).expect("format");
    disk.sync_dir(&PathBuf::from("/meta")).expect("sync parent");
    disk.sync_dir(&PathBuf::from("/")).expect("sync root");
    disk.settle();
    let (_, ns, last, journal) = start(&disk, &config).expect("first start");
    assert_eq!(last, 0);
    let base = ns.clone();
    let mut w = Workload {
        disk: disk.clone(),
        config: config.clone(),
        rng,
        ns,
        journal,
        edits: Vec::new(),
        acks: Vec::new(),
        unacked: None,
        waits: true,
        clock_ms: 1_000,
        paths: vec!["/".to_string()],
    };
    for i in 0..WORKLOAD_OPS {
        w.mutate();
        match w.rng.below(40) {
            0 | 1 => w.checkpoint(),
            2 if i > WORKLOAD_OPS / 4 => w.restart(),
            3 => w.burst(),
            _ => {}
        }
    }
    w.wait();
    w.journal.close();
    let (mut ns, mut after_txid, mut counters) = (base, Vec::new(), Vec::new());
    after_txid.push(fingerprint(&ns));
    counters.push(ns.counters());
    for e in &w.edits {
        ns.apply(e).expect("the workload's own edits apply");
        after_txid.push(fingerprint(&ns));
        counters.push(ns.counters());
    }
    Run {
        disk,
        config,
        after_txid,
        counters,
        acks: w.acks,
    }
}

fn unsynced_fate(rng: &mut SimRng) -> Unsynced {
    match rng.below(4) {
        0 => Unsynced::Lost,
        1 => Unsynced::Kept,
        _ => Unsynced::Random,
    }
}

/// Checks a loaded namespace against the workload: at least `floor`, at
/// most what was ever logged, and exactly the state after its last txid.
fn check_loaded(run: &Run, ns: &Namespace, last: u64, floor: u64) -> Result<(), String> {
    if last < floor {
        return Err(format!(
            "lost acknowledged txids: loaded up to {last}, acked {floor}"
        ));
    }
    let Some(expected) = run.after_txid.get(last as usize) else {
        return Err(format!("loaded txid {last}, never logged"));
    };
    if fingerprint(ns) != *expected {
        return Err(format!(
            "the namespace at txid {last} is not the one logged"
        ));
    }
    let (have, want) = (ns.counters(), run.counters[last as usize]);
    if have.0 < want.0 || have.1 < want.1 || have.2 < want.2 {
        return Err(format!("id counters went back: {have:?} < {want:?}"));
    }
    Ok(())
}

/// One crash point: cut, start up, check; then cut start-up's own disk
/// work (after it logged one more change) at a random point and check
/// that a second start-up loses nothing either.
fn crash_once(run: &Run, rng: &mut SimRng) -> Result<(), String> {
    let total = run.disk.op_count();
    let at = rng.below(total as u64 + 1) as usize;
    let fate = unsynced_fate(rng);
    let crashed = run.disk.crash(at, fate, rng);
    let floor = run.acked_at(at);
    let context = |e: String| {
        format!(
            "cut after {at} of {total} disk calls ({fate:?}): {e}\nlast calls:\n{}",
            run.disk.describe(at.saturating_sub(12), at)
        )
    };
    let (_, ns, last, journal) = start(&crashed, &run.config).map_err(context)?;
    check_loaded(run, &ns, last, floor).map_err(context)?;
    // Start-up wrote (finalized segments, an image, a new segment); one
    // more change is acknowledged on top of it.
    let mut after = ns.clone();
    let su = Caller::superuser(SUPERUSER);
    let edits = after
        .mkdirs(&su, "/after-the-crash", 0o755, true, 5)
        .map_err(|e| e.to_string())?;
    let txid = journal.append(&edits).map_err(|e| e.to_string())?;
    futures::executor::block_on(journal.wait_durable(txid)).map_err(|e| e.to_string())?;
    let acked_calls = crashed.op_count();
    journal.close();
    let again_at = rng.below(crashed.op_count() as u64 + 1) as usize;
    let again_fate = unsynced_fate(rng);
    let twice = crashed.crash(again_at, again_fate, rng);
    let context2 = |e: String| {
        context(format!(
            "then cut start-up after {again_at} calls ({again_fate:?}): {e}\nits calls:\n{}",
            crashed.describe(0, again_at)
        ))
    };
    let (_, ns2, last2, _journal) = start(&twice, &run.config).map_err(context2)?;
    let want = if again_at >= acked_calls {
        txid.0
    } else {
        last
    };
    if last2 < want || last2 > txid.0 {
        return Err(context2(format!(
            "second start-up loaded up to {last2}, wanted {want}"
        )));
    }
    let expected = if last2 == txid.0 { &after } else { &ns };
    if last2 != last && last2 != txid.0 {
        return Err(context2(format!("second start-up loaded txid {last2}")));
    }
    if fingerprint(&ns2) != fingerprint(expected) {
        return Err(context2("the second start-up's namespace differs".into()));
    }
    Ok(())
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

#[test]
fn every_acknowledged_change_survives_power_loss_at_random_points() {
    let seed = env_u64("POWER_LOSS_SEED").unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    let points = env_u64("POWER_LOSS_POINTS").map_or(DEFAULT_POINTS, |n| n as usize);
    let started = std::time::Instant::now();
    let run = run_workload(seed);
    let mut rng = SimRng::new(seed ^ 0xC0FF_EE00);
    for point in 0..points {
        if let Err(e) = crash_once(&run, &mut rng) {
            panic!("POWER_LOSS_SEED={seed}, crash point {point}: {e}");
        }
    }
    eprintln!(
        "power loss: seed {seed}, {points} crash points over {} disk calls and {} txids, {:?}",
        run.disk.op_count(),
        run.after_txid.len() - 1,
        started.elapsed()
    );
}
