//! mkdirs as HDFS runs it (`FSDirMkdirOp`): the missing directories are
//! added one at a time, each checked as it is added, so a refusal
//! part-way leaves the directories before it, logged; the all-or-nothing
//! form changes nothing.

use super::tests::{assert_replays, ns, root, NOW};
use super::*;

fn exists(n: &Namespace, p: &str) -> bool {
    n.get_file_info(&root(), p).expect("valid").is_some()
}

#[test]
fn a_quota_refusal_part_way_keeps_the_directories_before_it() {
    let mut n = ns();
    let mut log = n.mkdirs(&root(), "/q", 0o755, true, NOW).expect("mkdir");
    // /q itself counts: room for two more names.
    log.extend(
        n.set_quota(&root(), "/q", 3, QUOTA_DONT_SET, None)
            .expect("quota"),
    );
    let refused = n.mkdirs(&root(), "/q/a/b/c", 0o755, true, NOW);
    assert!(
        matches!(refused, Err(FsError::NSQuotaExceeded(_))),
        "{refused:?}"
    );
    assert!(!exists(&n, "/q/a"), "all or nothing: nothing made");
    let (edits, refused) = n
        .mkdirs_stepwise(&root(), "/q/a/b/c", 0o755, true, NOW)
        .expect("first two fit");
    assert_eq!(
        refused,
        Some(FsError::NSQuotaExceeded(
            "The NameSpace quota (directories and files) of directory /q is exceeded: \
             quota=3 file count=4"
                .into()
        ))
    );
    assert_eq!(edits.len(), 2, "{edits:?}");
    assert!(exists(&n, "/q/a/b") && !exists(&n, "/q/a/b/c"));
    // The implicit parents got u+wx, as when the whole path is made.
    assert_eq!(
        n.get_file_info(&root(), "/q/a")
            .expect("ok")
            .map(|s| s.permission),
        Some(0o755)
    );
    log.extend(edits);
    assert_replays(&n, &log);
    // Nothing fits now: refused before any change, as an error.
    let full = n.mkdirs_stepwise(&root(), "/q/a/b/c/d", 0o755, true, NOW);
    assert!(matches!(full, Err(FsError::NSQuotaExceeded(_))), "{full:?}");
}

#[test]
fn a_name_refused_part_way_keeps_the_directories_before_it() {
    let mut n = ns();
    let long = "n".repeat(256);
    let path = format!("/d/ok/{long}/x");
    let (edits, refused) = n
        .mkdirs_stepwise(&root(), &path, 0o700, true, NOW)
        .expect("/d/ok fits");
    assert!(
        matches!(refused, Some(FsError::PathComponentTooLong(_))),
        "{refused:?}"
    );
    assert_eq!(edits.len(), 2);
    assert!(exists(&n, "/d/ok"));
    // The first new name refused: an error, nothing made.
    let first = n.mkdirs_stepwise(&root(), "/d/ok/.snapshot/x", 0o700, true, NOW);
    assert!(
        matches!(first, Err(FsError::IllegalArgument(_))),
        "{first:?}"
    );
    assert!(!exists(&n, "/d/ok/.snapshot"));
}

#[test]
fn create_makes_its_parents_before_the_file_meets_the_quota() {
    // HDFS 3.4.1, quota 5 on /q holding /q/a/b: create of /q/x/y/f makes
    // /q/x and /q/x/y, then refuses the file (count 6); quota 7 with those
    // made: /q/m and /q/m/n fit, /q/m/n/o is refused before the file.
    let mut n = ns();
    let mut log = n
        .mkdirs(&root(), "/q/a/b", 0o755, true, NOW)
        .expect("mkdir");
    log.extend(
        n.set_quota(&root(), "/q", 5, QUOTA_DONT_SET, None)
            .expect("quota"),
    );
    let file = NewFile {
        client_name: "c",
        client_machine: "m",
        overwrite: false,
        create_parent: true,
        replication: 1,
        block_size: 1 << 20,
    };
    let all_or_nothing = n.create(
        &root(),
        "/q/x/y/f",
        0o644,
        "c",
        "m",
        false,
        true,
        1,
        1 << 20,
        NOW,
    );
    assert!(all_or_nothing.is_err());
    assert!(!exists(&n, "/q/x"));
    let (edits, created) = n
        .create_stepwise(&root(), "/q/x/y/f", 0o644, &file, NOW)
        .expect("parents fit");
    assert_eq!(
        created.map(|_| ()),
        Err(FsError::NSQuotaExceeded(
            "The NameSpace quota (directories and files) of directory /q is exceeded: \
             quota=5 file count=6"
                .into()
        ))
    );
    assert_eq!(edits.len(), 2);
    assert!(exists(&n, "/q/x/y") && !exists(&n, "/q/x/y/f"));
    log.extend(edits);
    log.extend(
        n.set_quota(&root(), "/q", 7, QUOTA_DONT_SET, None)
            .expect("quota"),
    );
    let (edits, created) = n
        .create_stepwise(&root(), "/q/m/n/o/f", 0o644, &file, NOW)
        .expect("two parents fit");
    assert!(matches!(created, Err(FsError::NSQuotaExceeded(_))));
    assert_eq!(edits.len(), 2);
    assert!(exists(&n, "/q/m/n") && !exists(&n, "/q/m/n/o"));
    log.extend(edits);
    // Room for the file once its parents exist: created as usual.
    log.extend(
        n.set_quota(&root(), "/q", 9, QUOTA_DONT_SET, None)
            .expect("quota"),
    );
    let (edits, created) = n
        .create_stepwise(&root(), "/q/m/n/o/f", 0o644, &file, NOW)
        .expect("fits");
    assert!(created.is_ok());
    log.extend(edits);
    assert!(exists(&n, "/q/m/n/o/f"));
    assert_replays(&n, &log);
}
