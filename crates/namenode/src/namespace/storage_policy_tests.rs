//! Storage policies: HDFS's suite, errors and their order, inheritance down
//! the tree, and that the journal and an image rebuild them exactly.

use cairn_common::storage_type::StorageType;

use super::storage_policy::{policy_to_string, BUILT_IN_POLICIES, UNSPECIFIED_POLICY_ID};
use super::tests::{imaged, ns, root, user, NOW};
use super::*;

/// /d (0755, root's) holding /d/e/f, created by root.
fn tree() -> (Namespace, Vec<Edit>) {
    let mut n = ns();
    let r = root();
    let mut log = n.mkdirs(&r, "/d/e", 0o755, true, NOW).expect("mkdir");
    let (_, edits, _) = n
        .create(&r, "/d/e/f", 0o644, "c", "m", false, false, 1, 1 << 20, NOW)
        .expect("create");
    log.extend(edits);
    (n, log)
}

fn effective(n: &Namespace, path: &str) -> &'static str {
    n.get_storage_policy(&root(), path).expect("policy").name
}

#[test]
fn the_suite_is_hdfs_default_suite() {
    let ids: Vec<(u8, &str)> = BUILT_IN_POLICIES.iter().map(|p| (p.id, p.name)).collect();
    assert_eq!(
        ids,
        [
            (1, "PROVIDED"),
            (2, "COLD"),
            (5, "WARM"),
            (7, "HOT"),
            (10, "ONE_SSD"),
            (12, "ALL_SSD"),
            (14, "ALL_NVDIMM"),
            (15, "LAZY_PERSIST")
        ]
    );
    let one_ssd = StoragePolicy::by_name("ONE_SSD").expect("ONE_SSD");
    assert_eq!(
        one_ssd.choose_storage_types(3),
        [StorageType::Ssd, StorageType::Disk, StorageType::Disk]
    );
    // RAM_DISK is transient: never chosen as a replica's type.
    let lazy = StoragePolicy::by_name("LAZY_PERSIST").expect("LAZY_PERSIST");
    assert_eq!(lazy.choose_storage_types(2), [StorageType::Disk; 2]);
    let all_ssd = StoragePolicy::by_name("ALL_SSD").expect("ALL_SSD");
    assert_eq!(
        all_ssd.fallback(&[StorageType::Ssd], true),
        Some(StorageType::Disk)
    );
    let hot = StoragePolicy::by_id(UNSPECIFIED_POLICY_ID).expect("default");
    assert_eq!(hot.name, "HOT");
    assert_eq!(hot.fallback(&[StorageType::Disk], true), None);
    // More replicas of a block fall back by the replication fallbacks.
    assert_eq!(
        hot.fallback(&[StorageType::Disk], false),
        Some(StorageType::Archive)
    );
    assert_eq!(
        one_ssd.storage_types_wanted(2, &[StorageType::Disk]),
        [StorageType::Ssd, StorageType::Disk]
    );
    assert_eq!(
        all_ssd.storage_types_wanted(1, &[StorageType::Disk, StorageType::Ssd]),
        [StorageType::Ssd]
    );
    assert_eq!(
        policy_to_string(hot),
        "BlockStoragePolicy{HOT:7, storageTypes=[DISK], creationFallbacks=[], \
         replicationFallbacks=[ARCHIVE]}"
    );
}

#[test]
fn policies_are_inherited_from_the_nearest_ancestor() {
    let (mut n, _) = tree();
    let r = root();
    assert_eq!(effective(&n, "/d/e/f"), "HOT");
    let f = n.get_file_info(&r, "/d/e/f").expect("ok").expect("f").id;
    assert_eq!(n.effective_storage_policy(f), UNSPECIFIED_POLICY_ID);
    n.set_storage_policy(&r, "/d", "COLD").expect("set");
    assert_eq!(effective(&n, "/d/e/f"), "COLD");
    n.set_storage_policy(&r, "/d/e", "ALL_SSD").expect("set");
    assert_eq!(effective(&n, "/d/e/f"), "ALL_SSD");
    assert_eq!(effective(&n, "/d"), "COLD");
    n.set_storage_policy(&r, "/d/e/f", "WARM")
        .expect("on a file");
    assert_eq!(effective(&n, "/d/e/f"), "WARM");
    n.unset_storage_policy(&r, "/d/e").expect("unset");
    n.unset_storage_policy(&r, "/d/e/f").expect("unset");
    assert_eq!(effective(&n, "/d/e/f"), "COLD");
    assert_eq!(n.effective_storage_policy(f), 2);
    assert_eq!(n.local_storage_policy(f), UNSPECIFIED_POLICY_ID);
    // A rename moves the inode under another ancestor's policy.
    n.mkdirs(&r, "/x", 0o755, false, NOW).expect("mkdir");
    n.rename(&r, "/d/e", "/x/e", NOW).expect("rename");
    assert_eq!(effective(&n, "/x/e/f"), "HOT");
}

#[test]
fn errors_come_in_hdfs_order() {
    let (mut n, _) = tree();
    let r = root();
    let bob = user("bob", &[]);
    // The name is checked before the path.
    let e = n
        .set_storage_policy(&r, "/nope", "TEPID")
        .expect_err("name");
    assert_eq!(
        e,
        FsError::IllegalArgument("Cannot find a block policy with the name TEPID".into())
    );
    let e = n.set_storage_policy(&r, "/nope", "HOT").expect_err("path");
    assert_eq!(
        e,
        FsError::FileNotFound("File/Directory does not exist: /nope".into())
    );
    let e = n.unset_storage_policy(&r, "/nope").expect_err("path");
    assert_eq!(
        e,
        FsError::FileNotFound("File/Directory does not exist: /nope".into())
    );
    let e = n.get_storage_policy(&r, "/nope").expect_err("path");
    assert_eq!(
        e,
        FsError::FileNotFound("File/Directory does not exist: /nope".into())
    );
    let e = n
        .set_storage_policy(&bob, "/d", "COLD")
        .expect_err("no write");
    assert_eq!(
        e,
        FsError::AccessControl(
            "Permission denied: user=bob, access=WRITE, inode=\"/d\":hdfs:supergroup:drwxr-xr-x"
                .into()
        )
    );
    let e = n
        .set_storage_policy(&r, "/d/e/f", "LAZY_PERSIST")
        .expect_err("copy on create");
    assert_eq!(
        e,
        FsError::IllegalArgument(
            "Policy BlockStoragePolicy{LAZY_PERSIST:15, storageTypes=[RAM_DISK, DISK], \
             creationFallbacks=[DISK], replicationFallbacks=[DISK]} cannot be set after file \
             creation."
                .into()
        )
    );
    n.set_storage_policy(&r, "/d", "LAZY_PERSIST")
        .expect("directories may have it");
    n.set_storage_policy_switches(StoragePolicySwitches {
        enabled: true,
        superuser_only: true,
    });
    let e = n
        .unset_storage_policy(&bob, "/d")
        .expect_err("superuser only");
    assert_eq!(
        e,
        FsError::AccessControl(
            "Access denied for user bob. Superuser privilege is required for operation \
             unsetStoragePolicy"
                .into()
        )
    );
    n.set_storage_policy_switches(StoragePolicySwitches {
        enabled: false,
        superuser_only: false,
    });
    let e = n.set_storage_policy(&r, "/d", "NOPE").expect_err("off");
    assert_eq!(
        e,
        FsError::Io(
            "Failed to set storage policy since dfs.storage.policy.enabled is set to false.".into()
        )
    );
    let e = n.unset_storage_policy(&r, "/d").expect_err("off");
    assert_eq!(
        e,
        FsError::Io(
            "Failed to unset storage policy since dfs.storage.policy.enabled is set to false."
                .into()
        )
    );
    assert_eq!(effective(&n, "/d/e"), "LAZY_PERSIST", "reads still work");
}

#[test]
fn journal_and_image_rebuild_them_and_deletes_drop_them() {
    let (mut n, mut log) = tree();
    let r = root();
    log.push(n.set_storage_policy(&r, "/", "WARM").expect("root"));
    log.push(n.set_storage_policy(&r, "/d/e", "ONE_SSD").expect("dir"));
    log.push(n.set_storage_policy(&r, "/d/e/f", "COLD").expect("file"));
    log.push(n.set_storage_policy(&r, "/d", "ALL_SSD").expect("dir"));
    log.push(n.unset_storage_policy(&r, "/d").expect("unset"));
    let replayed = |edits: &[Edit]| {
        let mut copy = ns();
        for e in edits {
            copy.apply(e).expect("replay");
        }
        copy
    };
    for copy in [replayed(&log), replayed(&n.to_edits()), imaged(&n)] {
        let mut got = copy
            .storage_policies
            .clone()
            .into_iter()
            .collect::<Vec<_>>();
        let mut want = n.storage_policies.clone().into_iter().collect::<Vec<_>>();
        got.sort();
        want.sort();
        assert_eq!(got, want);
        assert_eq!(effective(&copy, "/d"), "WARM");
        assert_eq!(effective(&copy, "/d/e/f"), "COLD");
    }
    let e = n.get_file_info(&r, "/d/e").expect("ok").expect("e").id;
    n.delete(&r, "/d", true, NOW).expect("delete");
    assert_eq!(n.local_storage_policy(e), UNSPECIFIED_POLICY_ID);
    assert_eq!(n.storage_policies.len(), 1, "only the root's is left");
}
