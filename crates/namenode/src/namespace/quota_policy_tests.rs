//! Space per storage type under storage policies: what each built-in
//! policy charges, setStoragePolicy/unsetStoragePolicy and renames moving
//! typed usage (nested quota directories and files with a policy of their
//! own included), typed quotas refusing blocks, content summaries, and
//! journal replay and images giving the same counters.

use super::quota::{quota_index, QUOTA_TYPES};
use super::quota_tests::assert_exact;
use super::tests::{assert_replays, ns, root, NOW};
use super::*;

fn always(_: &BlockRecord) -> bool {
    true
}

/// The typed usage of a path, as `[SSD, DISK, ARCHIVE, PROVIDED, NVDIMM]`.
fn typed(n: &Namespace, p: &str) -> [i64; QUOTA_TYPES.len()] {
    n.quota_usage(&root(), p)
        .expect("quota usage")
        .usage
        .type_space
}

fn ssd_disk_archive(ssd: i64, disk: i64, archive: i64) -> [i64; QUOTA_TYPES.len()] {
    let mut t = [0; QUOTA_TYPES.len()];
    t[quota_index(StorageType::Ssd).expect("ssd")] = ssd;
    t[quota_index(StorageType::Disk).expect("disk")] = disk;
    t[quota_index(StorageType::Archive).expect("archive")] = archive;
    t
}

fn policy(n: &mut Namespace, log: &mut Vec<Edit>, p: &str, name: &str) {
    log.push(n.set_storage_policy(&root(), p, name).expect("policy"));
}

/// A closed file of `len` bytes in one block.
fn write(n: &mut Namespace, log: &mut Vec<Edit>, p: &str, repl: u16, len: u64) {
    let (st, e, _) = n
        .create(&root(), p, 0o644, "w", "m", true, true, repl, 1000, NOW)
        .expect("create");
    log.extend(e);
    let (a, e) = n
        .add_block(p, st.id.0, "w", None, &always)
        .expect("addBlock");
    log.extend(e);
    let last = BlockRecord {
        num_bytes: len,
        ..a.block
    };
    let (done, e) = n
        .complete(p, st.id.0, "w", Some(last), NOW, &always)
        .expect("complete");
    assert!(done);
    log.extend(e);
}

#[test]
fn each_policy_charges_the_types_it_chooses_per_replica() {
    // Goal: HDFS's chooseStorageTypes(replication) per policy; no policy
    // anywhere above a file charges no type at all (not HOT's DISK).
    let mut n = ns();
    let mut log = Vec::new();
    for (dir, name) in [
        ("/hot", "HOT"),
        ("/ssd", "ALL_SSD"),
        ("/one", "ONE_SSD"),
        ("/cold", "COLD"),
        ("/warm", "WARM"),
        ("/lazy", "LAZY_PERSIST"),
    ] {
        log.extend(n.mkdirs(&root(), dir, 0o755, false, NOW).expect("mkdir"));
        policy(&mut n, &mut log, dir, name);
        write(&mut n, &mut log, &format!("{dir}/f"), 3, 100);
    }
    log.extend(
        n.mkdirs(&root(), "/none", 0o755, false, NOW)
            .expect("mkdir"),
    );
    write(&mut n, &mut log, "/none/f", 3, 100);
    assert_eq!(typed(&n, "/hot"), ssd_disk_archive(0, 300, 0));
    assert_eq!(typed(&n, "/ssd"), ssd_disk_archive(300, 0, 0));
    assert_eq!(typed(&n, "/one"), ssd_disk_archive(100, 200, 0));
    assert_eq!(typed(&n, "/cold"), ssd_disk_archive(0, 0, 300));
    assert_eq!(typed(&n, "/warm"), ssd_disk_archive(0, 100, 200));
    // RAM_DISK is transient: the other replicas go to DISK.
    assert_eq!(typed(&n, "/lazy"), ssd_disk_archive(0, 300, 0));
    assert_eq!(typed(&n, "/none"), ssd_disk_archive(0, 0, 0));
    assert_eq!(typed(&n, "/"), ssd_disk_archive(400, 900, 500));
    assert_exact(&n);
    assert_replays(&n, &log);
}

#[test]
fn setting_and_unsetting_a_policy_moves_typed_usage_exactly() {
    // Goal: a policy set on a directory with files charges its files'
    // bytes to the new types at once, in the quota directories inside it
    // and above it; files with their own policy keep theirs; unsetting
    // gives the usage back; setReplication follows the policy.
    let mut n = ns();
    let mut log = n
        .mkdirs(&root(), "/d/q/s", 0o755, true, NOW)
        .expect("mkdir");
    log.extend(
        n.set_quota(&root(), "/d/q", 100, QUOTA_DONT_SET, None)
            .expect("quota"),
    );
    log.extend(
        n.set_quota(&root(), "/d", QUOTA_DONT_SET, 1 << 20, None)
            .expect("quota"),
    );
    write(&mut n, &mut log, "/d/q/s/a", 2, 100);
    write(&mut n, &mut log, "/d/q/b", 1, 50);
    write(&mut n, &mut log, "/d/c", 3, 10);
    policy(&mut n, &mut log, "/d/q/b", "COLD");
    assert_eq!(typed(&n, "/d"), ssd_disk_archive(0, 0, 50));
    policy(&mut n, &mut log, "/d", "ALL_SSD");
    assert_eq!(typed(&n, "/d/q"), ssd_disk_archive(200, 0, 50));
    assert_eq!(typed(&n, "/d"), ssd_disk_archive(230, 0, 50));
    assert_eq!(typed(&n, "/"), ssd_disk_archive(230, 0, 50));
    assert_exact(&n);
    // A policy below overrides the one above for its subtree only.
    policy(&mut n, &mut log, "/d/q", "ONE_SSD");
    assert_eq!(typed(&n, "/d/q"), ssd_disk_archive(100, 100, 50));
    assert_eq!(typed(&n, "/d"), ssd_disk_archive(130, 100, 50));
    log.extend(n.set_replication(&root(), "/d/q/s/a", 3).expect("setrep"));
    assert_eq!(typed(&n, "/d/q"), ssd_disk_archive(100, 200, 50));
    assert_exact(&n);
    // Unset: /d/q inherits ALL_SSD again; then /d: nothing charged.
    log.push(n.unset_storage_policy(&root(), "/d/q").expect("unset"));
    assert_eq!(typed(&n, "/d/q"), ssd_disk_archive(300, 0, 50));
    log.push(n.unset_storage_policy(&root(), "/d").expect("unset"));
    assert_eq!(typed(&n, "/d"), ssd_disk_archive(0, 0, 50));
    assert_eq!(typed(&n, "/"), ssd_disk_archive(0, 0, 50));
    // On the root: everything without a policy of its own.
    policy(&mut n, &mut log, "/", "HOT");
    assert_eq!(typed(&n, "/"), ssd_disk_archive(0, 300 + 30, 50));
    assert_exact(&n);
    assert_replays(&n, &log);
    let mut imaged = ns();
    for e in n.to_edits() {
        imaged.apply(&e).expect("image");
    }
    for p in ["/", "/d", "/d/q"] {
        assert_eq!(typed(&imaged, p), typed(&n, p), "{p} from the image");
    }
}

#[test]
fn renames_move_typed_usage_between_policies() {
    // Goal: a file or directory moved from under one policy to another
    // changes types in every quota directory, the common ones (the root)
    // included; one with its own policy keeps its types.
    let mut n = ns();
    let mut log = Vec::new();
    for d in ["/ssd/q", "/cold"] {
        log.extend(n.mkdirs(&root(), d, 0o755, true, NOW).expect("mkdir"));
    }
    policy(&mut n, &mut log, "/ssd", "ALL_SSD");
    policy(&mut n, &mut log, "/cold", "COLD");
    log.extend(
        n.set_quota(&root(), "/ssd/q", 100, QUOTA_DONT_SET, None)
            .expect("quota"),
    );
    write(&mut n, &mut log, "/ssd/q/f", 2, 100);
    write(&mut n, &mut log, "/ssd/g", 1, 7);
    assert_eq!(typed(&n, "/"), ssd_disk_archive(207, 0, 0));
    // The directory with a quota moves: its own counters follow COLD.
    log.extend(n.rename(&root(), "/ssd/q", "/cold/q", NOW).expect("mv").1);
    assert_eq!(typed(&n, "/cold/q"), ssd_disk_archive(0, 0, 200));
    assert_eq!(typed(&n, "/"), ssd_disk_archive(7, 0, 200));
    // A file with a policy of its own keeps its types.
    policy(&mut n, &mut log, "/ssd/g", "ONE_SSD");
    log.extend(n.rename(&root(), "/ssd/g", "/cold/q/g", NOW).expect("mv").1);
    assert_eq!(typed(&n, "/cold/q"), ssd_disk_archive(7, 0, 200));
    // Out from under every policy: no types (rename2 over a file).
    write(&mut n, &mut log, "/x", 1, 1);
    log.push(
        n.rename2(&root(), "/cold/q/f", "/x", true, NOW)
            .expect("mv")
            .0,
    );
    assert_eq!(typed(&n, "/"), ssd_disk_archive(7, 0, 0));
    // The check counts the subtree at its destination's policy.
    log.extend(
        n.mkdirs(&root(), "/fastq", 0o755, false, NOW)
            .expect("mkdir"),
    );
    policy(&mut n, &mut log, "/fastq", "ALL_SSD");
    log.extend(
        n.set_quota(&root(), "/fastq", QUOTA_DONT_SET, 5, Some(StorageType::Ssd))
            .expect("quota"),
    );
    write(&mut n, &mut log, "/big", 1, 10);
    assert_eq!(
        n.rename(&root(), "/big", "/fastq/big", NOW).map(|_| ()),
        Err(FsError::QuotaByStorageTypeExceeded(
            "Quota by storage type : SSD on path : /fastq is exceeded. quota = 5 B but space consumed = 10 B".into()
        ))
    );
    assert_exact(&n);
    assert_replays(&n, &log);
}

#[test]
fn a_typed_quota_refuses_blocks_the_policy_puts_on_that_type() {
    // Goal: setQuota -storageType SSD binds the files an SSD policy puts
    // there (a full block reserved while written), with HDFS's message;
    // the same file under HOT is not bound by it.
    let mut n = ns();
    let mut log = n.mkdirs(&root(), "/q/s", 0o755, true, NOW).expect("mkdir");
    log.extend(
        n.set_quota(&root(), "/q", QUOTA_DONT_SET, 1500, Some(StorageType::Ssd))
            .expect("quota"),
    );
    policy(&mut n, &mut log, "/q/s", "ONE_SSD");
    write(&mut n, &mut log, "/q/s/a", 3, 400);
    assert_eq!(typed(&n, "/q"), ssd_disk_archive(400, 800, 0));
    let (st, _, _) = n
        .create(&root(), "/q/s/b", 0o644, "w", "m", true, true, 2, 1200, NOW)
        .expect("create");
    let before = n.to_edits();
    let e = n.add_block("/q/s/b", st.id.0, "w", None, &always);
    assert_eq!(
        e.map(|_| ()),
        Err(FsError::QuotaByStorageTypeExceeded(
            "Quota by storage type : SSD on path : /q is exceeded. quota = 1.46 KB but space consumed = 1.56 KB".into()
        ))
    );
    assert_eq!(n.to_edits(), before);
    // Under HOT the block goes to DISK: the SSD quota does not bind it.
    n.set_storage_policy(&root(), "/q/s/b", "HOT")
        .expect("policy");
    n.add_block("/q/s/b", st.id.0, "w", None, &always)
        .expect("addBlock under HOT");
    assert_eq!(typed(&n, "/q"), ssd_disk_archive(400, 800 + 2400, 0));
    assert_exact(&n);
}

#[test]
fn content_summary_counts_file_lengths_on_the_policy_types() {
    // Goal: getContentSummary's typed space is each file's length on its
    // policy's types (HDFS's computeContentSummary), while getQuotaUsage
    // counts an open block in full.
    let mut n = ns();
    let mut log = n.mkdirs(&root(), "/d", 0o755, false, NOW).expect("mkdir");
    policy(&mut n, &mut log, "/d", "ALL_SSD");
    write(&mut n, &mut log, "/d/f", 2, 30);
    let (st, e, _) = n
        .create(
            &root(),
            "/d/open",
            0o644,
            "w",
            "m",
            true,
            true,
            1,
            1000,
            NOW,
        )
        .expect("create");
    log.extend(e);
    n.add_block("/d/open", st.id.0, "w", None, &always)
        .expect("addBlock");
    let cs = n.content_summary(&root(), "/d").expect("summary");
    assert_eq!(cs.quota.usage.type_space, ssd_disk_archive(60, 0, 0));
    assert_eq!(typed(&n, "/d"), ssd_disk_archive(1060, 0, 0));
}

/// `/q` with a DISK quota of 1,000 B over `/q/f`: 400 B in one block of a
/// 1,000 B block size, replication 3, no storage policy anywhere (so the
/// file itself charges no DISK).
fn disk_quota_over_a_file() -> (Namespace, Vec<Edit>) {
    let mut n = ns();
    let mut log = n.mkdirs(&root(), "/q", 0o755, true, NOW).expect("mkdir");
    log.extend(
        n.set_quota(&root(), "/q", QUOTA_DONT_SET, 1000, Some(StorageType::Disk))
            .expect("quota"),
    );
    write(&mut n, &mut log, "/q/f", 3, 400);
    assert_eq!(typed(&n, "/q"), ssd_disk_archive(0, 0, 0));
    (n, log)
}

/// HDFS's refusal of `/q/f`'s last block grown to a full block (600 B
/// more) on its three replicas, typed as HOT's DISK.
fn refused_a_full_block() -> FsError {
    FsError::QuotaByStorageTypeExceeded(
        "Quota by storage type : DISK on path : /q is exceeded. quota = 1000 B but space consumed = 1.76 KB".into(),
    )
}

#[test]
fn a_truncate_inside_a_block_is_charged_as_hot_when_no_policy_is_set() {
    // Goal: HDFS's verifyQuotaForTruncate: a cut inside a block charges a
    // full preferred block per replica while its recovery runs, by storage
    // type under the file's policy or, with none set, under HOT (HDFS asks
    // its policy suite for id 0, which answers the default); refused, it
    // changes nothing. A cut at a block boundary only frees space.
    let (mut n, mut log) = disk_quota_over_a_file();
    let before = n.to_edits();
    assert_eq!(
        n.truncate(&root(), "/q/f", 100, "x", "m", NOW).map(|_| ()),
        Err(refused_a_full_block())
    );
    assert_eq!(n.to_edits(), before);
    // Under HOT, set on the file, the same answer.
    policy(&mut n, &mut log, "/q/f", "HOT");
    let before = n.to_edits();
    assert!(matches!(
        n.truncate(&root(), "/q/f", 100, "x", "m", NOW),
        Err(FsError::QuotaByStorageTypeExceeded(_))
    ));
    assert_eq!(n.to_edits(), before);
    // Under COLD the replicas go to ARCHIVE: the DISK quota does not bind.
    policy(&mut n, &mut log, "/q/f", "COLD");
    let (t, e) = n
        .truncate(&root(), "/q/f", 100, "x", "m", NOW)
        .expect("truncate under COLD");
    assert!(!t.done);
    log.extend(e);
    // A cut at a block boundary (to 0 here) frees space and is allowed.
    write(&mut n, &mut log, "/q/g", 3, 400);
    let (t, e) = n
        .truncate(&root(), "/q/g", 0, "x", "m", NOW)
        .expect("truncate to a block boundary");
    assert!(t.done);
    log.extend(e);
    assert_exact(&n);
    assert_replays(&n, &log);
}

#[test]
fn an_append_into_the_last_block_is_charged_as_hot_when_no_policy_is_set() {
    // Goal: HDFS's verifyQuotaForUCBlock types the reopened last block
    // (grown to the preferred block size on every replica) as truncate
    // does: under HOT when no policy is set (as HDFS 3.4.1 answered over
    // WebHDFS: "quota = 1000 B but space consumed = 384.00 MB"); an append
    // to a new block is not charged a reopened block.
    let (mut n, mut log) = disk_quota_over_a_file();
    let before = n.to_edits();
    assert_eq!(
        n.append(&root(), "/q/f", "x", "m", false).map(|_| ()),
        Err(refused_a_full_block())
    );
    assert_eq!(n.to_edits(), before);
    let (_, _, e) = n
        .append(&root(), "/q/f", "x", "m", true)
        .expect("append to a new block");
    log.push(e);
    assert_exact(&n);
    assert_replays(&n, &log);
}

#[test]
fn a_concat_raising_replication_is_charged_as_hot_when_no_policy_is_set() {
    // Goal: HDFS's computeQuotaDeltas: a source of lower replication than
    // the target adds its length once per extra replica, typed under its
    // policy or, with none set, under HOT (as HDFS 3.4.1 answered over
    // WebHDFS: 5 B at replication 1 into a file at 3 under a DISK quota of
    // 5 B, "space consumed = 10 B"); a source at the target's replication
    // adds nothing.
    let (mut n, mut log) = disk_quota_over_a_file();
    write(&mut n, &mut log, "/q/big", 1, 600);
    write(&mut n, &mut log, "/q/small", 1, 300);
    write(&mut n, &mut log, "/q/same", 3, 900);
    let before = n.to_edits();
    assert_eq!(
        n.concat(&root(), "/q/f", &["/q/big".into()], NOW)
            .map(|_| ()),
        Err(FsError::QuotaByStorageTypeExceeded(
            "Quota by storage type : DISK on path : /q is exceeded. quota = 1000 B but space consumed = 1.17 KB".into()
        ))
    );
    assert_eq!(n.to_edits(), before);
    let (_, e) = n
        .concat(&root(), "/q/f", &["/q/small".into(), "/q/same".into()], NOW)
        .expect("600 B more on DISK fits");
    log.push(e);
    assert_exact(&n);
    assert_replays(&n, &log);
}
