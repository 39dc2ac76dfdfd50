//! Quotas: setQuota's rules and messages, every operation that can exceed
//! a quota refused with HDFS's exception and message (and changing
//! nothing), the space of blocks under construction, journal replay and
//! images, and a random sequence of operations on a tree with quotas at
//! several levels checked against a full recount after every step.

use super::tests::{ns, root, user, NOW};
use super::*;

const MB: u64 = 1 << 20;

fn always(_: &BlockRecord) -> bool {
    true
}

/// The usage every quota directory holds equals a full recount.
pub(super) fn assert_exact(n: &Namespace) {
    for (id, counted) in n.recount_quota_usage() {
        let kept = n.dir_quota(id).expect("quota dir").usage;
        assert_eq!(kept, counted, "usage of {:?}", n.path_of(id));
    }
}

fn usage(n: &Namespace, p: &str) -> QuotaCounts {
    n.quota_usage(&root(), p).expect("quota usage").usage
}

fn set(n: &mut Namespace, log: &mut Vec<Edit>, p: &str, ns_q: i64, ss_q: i64) {
    log.extend(n.set_quota(&root(), p, ns_q, ss_q, None).expect("setQuota"));
}

fn create(n: &mut Namespace, log: &mut Vec<Edit>, p: &str, repl: u16, bs: u64) -> INodeId {
    let (st, e, _) = n
        .create(&root(), p, 0o644, "w", "m", true, true, repl, bs, NOW)
        .expect("create");
    log.extend(e);
    st.id
}

pub(super) fn ns_exceeded(dir: &str, quota: i64, count: i64) -> FsError {
    FsError::NSQuotaExceeded(format!(
        "The NameSpace quota (directories and files) of directory {dir} is exceeded: quota={quota} file count={count}"
    ))
}

#[test]
fn set_quota_rules_and_messages() {
    let mut n = ns();
    let mut log = n.mkdirs(&root(), "/d", 0o777, false, NOW).expect("mkdir");
    create(&mut n, &mut log, "/d/f", 1, MB);
    let alice = user("alice", &[]);
    let denied = |op: &str| {
        FsError::AccessControl(format!(
            "Access denied for user alice. Superuser privilege is required for operation {op}"
        ))
    };
    let e = n.set_quota(&alice, "/d", 5, QUOTA_DONT_SET, None);
    assert_eq!(e, Err(denied("setQuota")));
    let e = n.set_quota(&alice, "/d", QUOTA_RESET, QUOTA_DONT_SET, None);
    assert_eq!(e, Err(denied("clearQuota")));
    let e = n.set_quota(&alice, "/d", QUOTA_DONT_SET, 10, None);
    assert_eq!(e, Err(denied("setSpaceQuota")));
    let e = n.set_quota(&alice, "/d", QUOTA_DONT_SET, QUOTA_RESET, None);
    assert_eq!(e, Err(denied("clearSpaceQuota")));
    // The path is resolved first: a file among its ancestors.
    assert_eq!(
        n.set_quota(&root(), "/d/f/x", -5, QUOTA_DONT_SET, None),
        Err(FsError::AccessControl("/d/f (is not a directory)".into()))
    );
    assert_eq!(
        n.set_quota(&root(), "/d", -5, QUOTA_DONT_SET, None),
        Err(FsError::BadArgument(
            "Illegal value for nsQuota or ssQuota : -5 and 9223372036854775807".into()
        ))
    );
    assert_eq!(
        n.set_quota(&root(), "/d", 5, 10, Some(StorageType::Disk)),
        Err(FsError::UnsupportedAction(
            "Failed to set quota by storage type because eitherdfs.quota.by.storagetype.enabled is set to true or nsQuota value is illegal 5".into()
        ))
    );
    assert_eq!(
        n.set_quota(&root(), "/nope", 5, QUOTA_DONT_SET, None),
        Err(FsError::FileNotFound(
            "Directory does not exist: /nope".into()
        ))
    );
    assert_eq!(
        n.set_quota(&root(), "/d/f", 5, QUOTA_DONT_SET, None),
        Err(FsError::PathIsNotDirectory(
            "`/d/f': Is not a directory".into()
        ))
    );
    // Clearing what is not set changes nothing and logs nothing.
    assert_eq!(
        n.set_quota(&root(), "/d", QUOTA_RESET, QUOTA_DONT_SET, None),
        Ok(None)
    );
    assert!(n
        .dir_quota(n.resolve("/d").expect("ok").last().expect("d"))
        .is_none());
    set(&mut n, &mut log, "/d", 5, QUOTA_DONT_SET);
    let q = n.quota_usage(&root(), "/d").expect("usage");
    assert_eq!((q.quota.namespace, q.quota.storage_space), (5, -1));
    assert_eq!(q.usage.namespace, 2);
    // Setting the same again is no change.
    assert_eq!(
        n.set_quota(&root(), "/d", 5, QUOTA_DONT_SET, None),
        Ok(None)
    );
    log.extend(
        n.set_quota(&root(), "/d", QUOTA_DONT_SET, 4096, Some(StorageType::Ssd))
            .expect("type quota"),
    );
    set(&mut n, &mut log, "/d", QUOTA_RESET, QUOTA_DONT_SET);
    let q = n.quota_usage(&root(), "/d").expect("usage");
    assert_eq!(q.quota.type_space[0], 4096);
    log.extend(
        n.set_quota(
            &root(),
            "/d",
            QUOTA_DONT_SET,
            QUOTA_RESET,
            Some(StorageType::Ssd),
        )
        .expect("clear type quota"),
    );
    // Nothing left: the entry goes.
    let d = n.resolve("/d").expect("ok").last().expect("d");
    assert!(n.dir_quota(d).is_none());
    assert_eq!(
        n.quota_usage(&root(), "/d").expect("usage").quota,
        QuotaCounts::NONE
    );
    // The root keeps its name quota: a reset puts back Long.MAX_VALUE.
    set(&mut n, &mut log, "/", 100, QUOTA_DONT_SET);
    set(&mut n, &mut log, "/", QUOTA_RESET, QUOTA_DONT_SET);
    assert_eq!(
        n.quota_usage(&root(), "/").expect("usage").quota.namespace,
        i64::MAX
    );
    super::tests::assert_replays(&n, &log);
}

#[test]
fn name_quota_refuses_mkdir_create_and_rename_in() {
    let mut n = ns();
    let mut log = n.mkdirs(&root(), "/d", 0o777, false, NOW).expect("mkdir");
    log.extend(
        n.mkdirs(&root(), "/o/sub", 0o777, true, NOW)
            .expect("mkdir"),
    );
    set(&mut n, &mut log, "/d", 2, QUOTA_DONT_SET);
    log.extend(
        n.mkdirs(&root(), "/d/a", 0o755, false, NOW)
            .expect("one fits"),
    );
    let before = n.to_edits();
    assert_eq!(
        n.mkdirs(&root(), "/d/b", 0o755, false, NOW),
        Err(ns_exceeded("/d", 2, 3))
    );
    assert_eq!(
        n.create(&root(), "/d/f", 0o644, "w", "m", false, false, 1, MB, NOW)
            .map(|_| ()),
        Err(ns_exceeded("/d", 2, 3))
    );
    // Creating parents counts each new name: the first that does not fit.
    assert_eq!(
        n.mkdirs(&root(), "/d/a/x/y", 0o755, true, NOW),
        Err(ns_exceeded("/d", 2, 3))
    );
    assert_eq!(
        n.rename(&root(), "/o/sub", "/d/a", NOW).map(|_| ()),
        Err(ns_exceeded("/d", 2, 3))
    );
    assert_eq!(
        n.rename2(&root(), "/o/sub", "/d/s", false, NOW).map(|_| ()),
        Err(ns_exceeded("/d", 2, 3))
    );
    assert_eq!(n.to_edits(), before, "refused operations changed nothing");
    // Moving within the quota directory, or out of it, is fine.
    log.push(
        n.rename(&root(), "/d/a", "/d/b", NOW)
            .expect("rename")
            .1
            .expect("edit"),
    );
    log.push(
        n.rename(&root(), "/d/b", "/o", NOW)
            .expect("rename out")
            .1
            .expect("edit"),
    );
    assert_eq!(usage(&n, "/d").namespace, 1);
    // A quota set below the usage is allowed; growth is then refused.
    set(&mut n, &mut log, "/o", 1, QUOTA_DONT_SET);
    assert_eq!(
        n.mkdirs(&root(), "/o/sub/z", 0o755, false, NOW),
        Err(ns_exceeded("/o", 1, 4))
    );
    // The nearest quota directory is reported first.
    set(&mut n, &mut log, "/o/sub", 1, QUOTA_DONT_SET);
    assert_eq!(
        n.mkdirs(&root(), "/o/sub/z", 0o755, false, NOW),
        Err(ns_exceeded("/o/sub", 1, 2))
    );
    assert_exact(&n);
    super::tests::assert_replays(&n, &log);
}

#[test]
fn space_quota_reserves_a_full_block_until_commit() {
    let mut n = ns();
    let mut log = n.mkdirs(&root(), "/d", 0o777, false, NOW).expect("mkdir");
    set(&mut n, &mut log, "/d", QUOTA_DONT_SET, 1024);
    let id = create(&mut n, &mut log, "/d/f", 3, 128 * MB);
    let before = n.to_edits();
    let e = n.add_block("/d/f", id.0, "w", None, &always);
    assert_eq!(
        e.map(|_| ()),
        Err(FsError::DSQuotaExceeded(
            "The DiskSpace quota of /d is exceeded: quota = 1024 B = 1 KB but diskspace consumed = 402653184 B = 384 MB".into()
        ))
    );
    assert_eq!(n.to_edits(), before);
    // Room for one 1000-byte block at replication 1: reserved in full
    // while written, then the committed length.
    set(&mut n, &mut log, "/d", QUOTA_DONT_SET, 2000);
    let id = create(&mut n, &mut log, "/d/g", 1, 1000);
    let (a, e) = n
        .add_block("/d/g", id.0, "w", None, &always)
        .expect("block");
    log.extend(e);
    assert_eq!(usage(&n, "/d").storage_space, 1000);
    let b1 = BlockRecord {
        num_bytes: 100,
        ..a.block
    };
    let (a2, e) = n
        .add_block("/d/g", id.0, "w", Some(b1), &always)
        .expect("block 2");
    log.extend(e);
    assert_eq!(usage(&n, "/d").storage_space, 1100);
    let b2 = BlockRecord {
        num_bytes: 1000,
        ..a2.block
    };
    let e = n.add_block("/d/g", id.0, "w", Some(b2), &always);
    assert_eq!(
        e.map(|_| ()),
        Err(FsError::DSQuotaExceeded(
            "The DiskSpace quota of /d is exceeded: quota = 2000 B = 1.95 KB but diskspace consumed = 2100 B = 2.05 KB".into()
        ))
    );
    let (done, e) = n
        .complete("/d/g", id.0, "w", Some(b2), NOW, &always)
        .expect("complete");
    assert!(done);
    log.extend(e);
    assert_eq!(usage(&n, "/d").storage_space, 1100);
    // Appending opens the last block again: a full block reserved (the
    // last block is full here, so nothing more).
    let (_, _, e) = n.append(&root(), "/d/g", "w", "m", false).expect("append");
    log.push(e);
    assert_eq!(usage(&n, "/d").storage_space, 1100);
    // Lease recovery with nothing to recover drops the last block.
    log.extend(n.close_abandoned(id, NOW).expect("close"));
    assert_eq!(usage(&n, "/d").storage_space, 100);
    assert_exact(&n);
    super::tests::assert_replays(&n, &log);
}

#[test]
fn replication_append_truncate_and_concat_respect_space_quotas() {
    let mut n = ns();
    let mut log = n.mkdirs(&root(), "/d", 0o777, false, NOW).expect("mkdir");
    let file = |n: &mut Namespace, log: &mut Vec<Edit>, p: &str, repl: u16, lens: &[u64]| {
        let id = create(n, log, p, repl, 1000);
        let mut prev = None;
        for len in lens {
            let (a, e) = n.add_block(p, id.0, "w", prev, &always).expect("block");
            log.extend(e);
            prev = Some(BlockRecord {
                num_bytes: *len,
                ..a.block
            });
        }
        log.extend(
            n.complete(p, id.0, "w", prev, NOW, &always)
                .expect("complete")
                .1,
        );
        id
    };
    file(&mut n, &mut log, "/d/a", 1, &[1000, 400]);
    file(&mut n, &mut log, "/d/b", 2, &[300]);
    set(&mut n, &mut log, "/d", QUOTA_DONT_SET, 2100);
    assert_eq!(usage(&n, "/d").storage_space, 2000);
    let before = n.to_edits();
    let ds_of = |quota: u64, consumed: u64| {
        FsError::DSQuotaExceeded(format!(
            "The DiskSpace quota of /d is exceeded: quota = {quota} B = {} but diskspace consumed = {consumed} B = {}",
            crate::javafmt::byte_desc(quota),
            crate::javafmt::byte_desc(consumed)
        ))
    };
    let ds = |consumed| ds_of(2100, consumed);
    assert_eq!(n.set_replication(&root(), "/d/a", 2), Err(ds(3400)));
    // Appending to /d/a reserves 600 more bytes.
    assert_eq!(
        n.append(&root(), "/d/a", "x", "m", false).map(|_| ()),
        Err(ds(2600))
    );
    // A truncate inside a block copies it as a full block: 1000 - 300.
    assert_eq!(
        n.truncate(&root(), "/d/b", 100, "x", "m", NOW).map(|_| ()),
        Err(ds(3400))
    );
    // concat: /d/b's 300 bytes at /d/a's replication 1 free 300.
    assert_eq!(n.to_edits(), before);
    let (_, e) = n
        .concat(&root(), "/d/a", &["/d/b".into()], NOW)
        .expect("concat");
    log.push(e);
    assert_eq!(
        usage(&n, "/d"),
        QuotaCounts {
            namespace: 2,
            storage_space: 1700,
            ..QuotaCounts::default()
        }
    );
    // Lowering the replication is always allowed.
    log.extend(n.set_replication(&root(), "/d/a", 1).expect("same"));
    // A cut at a block boundary frees space without reopening.
    let (t, e) = n
        .truncate(&root(), "/d/a", 1000, "x", "m", NOW)
        .expect("truncate");
    assert!(t.done);
    log.extend(e);
    assert_eq!(usage(&n, "/d").storage_space, 1000);
    // Concat into a file of higher replication needs the difference.
    file(&mut n, &mut log, "/d/c", 1, &[700]);
    set(&mut n, &mut log, "/d", QUOTA_DONT_SET, 3000);
    log.extend(n.set_replication(&root(), "/d/a", 2).expect("grow"));
    assert_eq!(usage(&n, "/d").storage_space, 2700);
    assert_eq!(
        n.concat(&root(), "/d/a", &["/d/c".into()], NOW).map(|_| ()),
        Err(ds_of(3000, 3400))
    );
    assert_exact(&n);
    super::tests::assert_replays(&n, &log);
}

#[test]
fn journal_and_image_rebuild_quotas_and_deletes_drop_them() {
    let mut n = ns();
    let mut log = n
        .mkdirs(&root(), "/a/b/c", 0o777, true, NOW)
        .expect("mkdir");
    set(&mut n, &mut log, "/a", 100, 1 << 30);
    set(&mut n, &mut log, "/a/b/c", 10, QUOTA_DONT_SET);
    set(&mut n, &mut log, "/", 1000, 1 << 40);
    log.extend(
        n.set_quota(
            &root(),
            "/a/b",
            QUOTA_DONT_SET,
            5000,
            Some(StorageType::Archive),
        )
        .expect("type"),
    );
    let id = create(&mut n, &mut log, "/a/b/c/f", 2, 4096);
    let (_, e) = n
        .add_block("/a/b/c/f", id.0, "w", None, &always)
        .expect("block");
    log.extend(e);
    let quotas = |n: &Namespace| {
        let mut v: Vec<(String, DirQuota)> = n
            .quota_dirs()
            .map(|(id, q)| (n.path_of(id).expect("path"), q.clone()))
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    let mut replayed = ns();
    for e in &log {
        replayed.apply(e).expect("replay");
    }
    assert_eq!(quotas(&replayed), quotas(&n));
    let mut imaged = ns();
    for e in n.to_edits() {
        imaged.apply(&e).expect("image");
    }
    assert_eq!(quotas(&imaged), quotas(&n));
    assert_eq!(quotas(&n).len(), 4);
    assert_eq!(usage(&n, "/a/b/c").storage_space, 8192);
    let (e, _) = n
        .delete(&root(), "/a/b", true, NOW)
        .expect("delete")
        .expect("existed");
    log.push(e);
    assert_eq!(
        quotas(&n).len(),
        2,
        "the deleted quota directories are forgotten"
    );
    assert_eq!(usage(&n, "/a").namespace, 1);
    assert_exact(&n);
}

/// splitmix64: a small deterministic generator for the random sequences.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, v: &'a [&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
}

const DIRS: [&str; 6] = ["/a", "/a/b", "/a/b/c", "/x", "/x/y", "/"];
const NAMES: [&str; 5] = ["f0", "f1", "f2", "d0", "d1"];
const BS: u64 = 100;

fn random_path(r: &mut Rng) -> String {
    let dir = r.pick(&DIRS);
    let name = r.pick(&NAMES);
    if dir == "/" {
        format!("/{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// A random existing file open for writing.
fn open_file(n: &Namespace, r: &mut Rng) -> Option<String> {
    let found: Vec<String> = DIRS
        .iter()
        .flat_map(|d| {
            NAMES
                .iter()
                .map(move |f| format!("{}/{f}", d.trim_end_matches('/')))
        })
        .filter(|p| {
            n.resolve_file(p, 0)
                .is_ok_and(|(id, _)| n.writer_of(id).is_some())
        })
        .collect();
    (!found.is_empty()).then(|| found[r.below(found.len())].clone())
}

/// A random existing closed file with data, in `dir` when given.
fn closed_file(n: &Namespace, r: &mut Rng, dir: Option<&str>) -> Option<String> {
    let dirs: Vec<&str> = dir.map_or(DIRS.to_vec(), |d| vec![d]);
    let found: Vec<String> = dirs
        .iter()
        .flat_map(|d| {
            NAMES
                .iter()
                .map(move |f| format!("{}/{f}", d.trim_end_matches('/')))
        })
        .filter(|p| {
            n.resolve_file(p, 0)
                .is_ok_and(|(id, _)| n.writer_of(id).is_none() && !n.blocks_of(id).is_empty())
        })
        .collect();
    (!found.is_empty()).then(|| found[r.below(found.len())].clone())
}

fn is_quota_error(e: &FsError) -> bool {
    matches!(
        e,
        FsError::NSQuotaExceeded(_)
            | FsError::DSQuotaExceeded(_)
            | FsError::QuotaByStorageTypeExceeded(_)
    )
}

/// Operation kinds of [`random_step`].
const KINDS: usize = 14;

/// How often each kind is drawn: writing (2-4) more than the rest, so
/// that there are closed files with data to truncate, concat and append.
const DRAW: [usize; 26] = [
    0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4, 4, 5, 6, 7, 8, 9, 9, 10, 10, 10, 11, 12, 13, 13,
];

/// Policies the random sequence sets (`None`: unset).
const POLICIES: [Option<&str>; 6] = [
    Some("HOT"),
    Some("ALL_SSD"),
    Some("ONE_SSD"),
    Some("COLD"),
    Some("WARM"),
    None,
];

/// One random operation of kind `kind`; its edits go to `log`.
fn random_step(
    n: &mut Namespace,
    r: &mut Rng,
    kind: usize,
    log: &mut Vec<Edit>,
) -> Result<(), FsError> {
    let c = root();
    let p = random_path(r);
    let file_of = |n: &Namespace, p: &str| n.resolve_file(p, 0).ok().map(|(id, _)| id);
    match kind {
        0 => log.extend(n.mkdirs(&c, &p, 0o755, r.below(2) == 0, NOW)?),
        1 => {
            let repl = 1 + r.below(3) as u16;
            let (_, e, _) = n.create(
                &c,
                &p,
                0o644,
                "w",
                "m",
                r.below(2) == 0,
                r.below(2) == 0,
                repl,
                BS,
                NOW,
            )?;
            log.extend(e);
        }
        2 | 3 => {
            // Write: commit the last block at some length and add one.
            let p = open_file(n, r).unwrap_or(p);
            let Some(id) = file_of(n, &p).filter(|id| n.writer_of(*id).is_some()) else {
                return Ok(());
            };
            if n.truncate_block_of(id).is_some() {
                return Ok(());
            }
            let prev = n.blocks_of(id).last().map(|b| BlockRecord {
                num_bytes: 1 + r.next() % BS,
                ..*b
            });
            let (_, e) = n.add_block(&p, id.0, "w", prev, &always)?;
            log.extend(e);
        }
        4 => {
            let p = open_file(n, r).unwrap_or(p);
            let Some(id) = file_of(n, &p).filter(|id| n.writer_of(*id).is_some()) else {
                return Ok(());
            };
            let last = n.blocks_of(id).last().copied();
            if let Some(tb) = n.truncate_block_of(id) {
                log.extend(n.commit_block_synchronization(
                    id,
                    tb.id,
                    tb.gs,
                    tb.num_bytes,
                    false,
                    NOW,
                )?);
            } else if r.below(4) == 0 {
                if let Some(l) = last {
                    log.extend(n.abandon_block(&p, id.0, "w", l.id)?);
                }
            } else {
                let last = last.map(|b| BlockRecord {
                    num_bytes: r.next() % (BS + 1),
                    ..b
                });
                log.extend(n.complete(&p, id.0, "w", last, NOW, &always)?.1);
            }
        }
        5 => {
            if let Some((e, _)) = n.delete(&c, &p, true, NOW)? {
                log.push(e);
            }
        }
        6 => {
            let dst = r.pick(&DIRS).to_string();
            log.extend(n.rename(&c, &p, &dst, NOW)?.1);
        }
        7 => {
            let dst = random_path(r);
            log.push(n.rename2(&c, &p, &dst, r.below(2) == 0, NOW)?.0);
        }
        8 => log.extend(n.set_replication(&c, &p, 1 + r.below(3) as u16)?),
        9 => {
            let Some(p) = closed_file(n, r, None) else {
                return Ok(());
            };
            let Some(id) = file_of(n, &p) else {
                return Ok(());
            };
            let len = n
                .inode(id)
                .and_then(INode::file)
                .map_or(0, FileNode::length);
            let to = r.next() % (len + 1);
            log.extend(n.truncate(&c, &p, to as i64, "w", "m", NOW)?.1);
        }
        10 => {
            let Some(p) = closed_file(n, r, None) else {
                return Ok(());
            };
            let dir = p.rsplit_once('/').map_or("/", |(d, _)| d).to_string();
            let dir = if dir.is_empty() { "/".to_string() } else { dir };
            let mut srcs: Vec<String> = (0..1 + r.below(3))
                .filter_map(|_| closed_file(n, r, Some(&dir)))
                .filter(|s| *s != p)
                .collect();
            srcs.dedup();
            if srcs.is_empty() {
                return Ok(());
            }
            log.push(n.concat(&c, &p, &srcs, NOW)?.1);
        }
        11 => {
            let p = closed_file(n, r, None).unwrap_or(p);
            log.push(n.append(&c, &p, "w", "m", r.below(3) == 0)?.2);
        }
        12 => {
            let dir = r.pick(&DIRS);
            let pick = |r: &mut Rng, big: i64| match r.below(4) {
                0 => QUOTA_RESET,
                1 => QUOTA_DONT_SET,
                _ => (r.next() % big as u64) as i64,
            };
            if r.below(3) == 0 {
                // A typed quota, bound by the files the policies put there.
                let t = [StorageType::Ssd, StorageType::Disk, StorageType::Archive][r.below(3)];
                let q = match pick(r, 3000) {
                    QUOTA_DONT_SET => QUOTA_RESET,
                    q => q,
                };
                log.extend(n.set_quota(&c, dir, QUOTA_DONT_SET, q, Some(t))?);
                return Ok(());
            }
            let (ns_q, ss_q) = (pick(r, 12), pick(r, 3000));
            let ns_q = if ns_q == 0 { 1 } else { ns_q };
            log.extend(n.set_quota(&c, dir, ns_q, ss_q, None)?);
        }
        _ => {
            // A policy set or unset on a directory or a file.
            let target = if r.below(2) == 0 {
                r.pick(&DIRS).to_string()
            } else {
                p
            };
            let e = match POLICIES[r.below(POLICIES.len())] {
                Some(name) => n.set_storage_policy(&c, &target, name)?,
                None => n.unset_storage_policy(&c, &target)?,
            };
            log.push(e);
        }
    }
    Ok(())
}

#[test]
fn random_operations_keep_usage_exact() {
    let mut applied = [0usize; KINDS];
    let mut typed_refusals = 0;
    for seed in 0..40u64 {
        let mut r = Rng(seed);
        let mut n = ns();
        let mut log = Vec::new();
        for d in ["/a/b/c", "/x/y"] {
            log.extend(n.mkdirs(&root(), d, 0o755, true, NOW).expect("mkdir"));
        }
        set(&mut n, &mut log, "/a", 14, 2400);
        set(&mut n, &mut log, "/a/b", 8, 1200);
        set(&mut n, &mut log, "/x/y", 6, 900);
        log.push(
            n.set_storage_policy(&root(), "/a", "ALL_SSD")
                .expect("policy"),
        );
        log.extend(
            n.set_quota(&root(), "/a/b", QUOTA_DONT_SET, 700, Some(StorageType::Ssd))
                .expect("typed quota"),
        );
        let mut refused = 0;
        for step in 0..300 {
            let before = n.clone();
            let kind = DRAW[r.below(DRAW.len())];
            let logged = log.len();
            match random_step(&mut n, &mut r, kind, &mut log) {
                Ok(()) => applied[kind] += usize::from(log.len() > logged),
                Err(e) if is_quota_error(&e) => {
                    refused += 1;
                    typed_refusals +=
                        usize::from(matches!(e, FsError::QuotaByStorageTypeExceeded(_)));
                    assert_eq!(
                        n.to_edits(),
                        before.to_edits(),
                        "seed {seed} step {step}: {e}"
                    );
                    assert_eq!(n.counters(), before.counters());
                }
                Err(_) => {}
            }
            assert_exact(&n);
        }
        assert!(refused > 0, "seed {seed}: the quotas never bit");
        let mut replayed = ns();
        for e in &log {
            replayed.apply(e).expect("replay");
        }
        let mut imaged = ns();
        for e in n.to_edits() {
            imaged.apply(&e).expect("image");
        }
        let loaded = super::tests::imaged(&n);
        for copy in [&replayed, &imaged, &loaded] {
            assert_exact(copy);
            for (id, q) in n.quota_dirs() {
                let path = n.path_of(id).expect("path");
                let other = copy.quota_usage(&root(), &path).expect("usage");
                assert_eq!(
                    (other.quota, other.usage),
                    (q.quota, q.usage),
                    "seed {seed} {path}"
                );
            }
        }
    }
    assert!(
        typed_refusals > 20,
        "typed quotas bit {typed_refusals} times"
    );
    // Every kind of operation changed the tree many times.
    assert!(
        applied.iter().all(|n| *n > 20),
        "applied per kind: {applied:?}"
    );
}
