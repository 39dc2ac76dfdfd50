//! The torn tails a power cut can leave, one by one, on a simulated disk:
//! start-up must load each and cut only what was never synced; damage
//! with synced data after it is still refused.

use std::path::{Path, PathBuf};

use cairn_common::disk::sim::SimDisk;
use cairn_common::disk::Disk;
use cairn_namenode::journal::file::MAX_BATCH_BYTES;
use cairn_namenode::namespace::{Edit, INodeId, Limits, Namespace};
use cairn_namenode::storage;

const DIR: &str = "/name";

fn mkdir(txid: u64) -> (u64, Edit) {
    let edit = Edit::Mkdir {
        id: INodeId(16385 + txid),
        path: format!("/d{txid}"),
        permission: 0o755,
        owner: "hdfs".into(),
        group: "supergroup".into(),
        mtime_ms: 1,
    };
    (txid, edit)
}

fn formatted() -> SimDisk {
    let disk = SimDisk::new();
    let ns = Namespace::new("hdfs", "supergroup", 1, Limits::default());
    let info = cairn_namenode::new_version_info();
    storage::format(&disk, &[PathBuf::from(DIR)], &info, &ns, false).expect("format");
    disk
}

fn write(disk: &SimDisk, name: &str, data: &[u8]) {
    let f = disk.create(&Path::new(DIR).join(name)).expect("create");
    f.write_all_at(data, 0).expect("write");
}

fn load(disk: &SimDisk) -> Result<u64, storage::StorageError> {
    storage::load(
        disk,
        &[PathBuf::from(DIR)],
        "hdfs",
        "supergroup",
        Limits::default(),
    )
    .map(|(_, _, last)| last)
}

/// Records 1..=n, then `n + 1` torn: its first sector's bytes kept, the
/// next sector lost (zeros), what follows in the same batch kept.
fn torn_batch(n: u64) -> Vec<u8> {
    let mut data = storage::encode_edits(&(1..=n).map(mkdir).collect::<Vec<_>>());
    let torn_at = data.len();
    let batch: Vec<(u64, Edit)> = (n + 1..n + 40).map(mkdir).collect();
    data.extend(storage::encode_edits(&batch));
    let lost = (torn_at + 20)..(torn_at + 20 + 512).min(data.len());
    data[lost].fill(0);
    data.resize(data.len() + 8192, 0);
    data
}

#[test]
fn a_batch_torn_in_its_middle_is_cut_at_the_damage() {
    let disk = formatted();
    write(&disk, &storage::inprogress_name(1), &torn_batch(3));
    assert_eq!(load(&disk).expect("a torn batch loads"), 3);
}

#[test]
fn a_torn_tail_before_an_empty_next_segment_is_cut() {
    // A roll makes the next segment before the old one's last batch is
    // synced: a power cut between leaves both.
    let disk = formatted();
    write(&disk, &storage::inprogress_name(1), &torn_batch(3));
    write(&disk, &storage::inprogress_name(43), &[0u8; 4096]);
    assert_eq!(load(&disk).expect("loads"), 3);
}

#[test]
fn damage_with_synced_records_beyond_a_batch_is_refused() {
    let disk = formatted();
    let mut data = torn_batch(3);
    let far = data.len() + MAX_BATCH_BYTES;
    data.resize(far, 0);
    data.extend(storage::encode_edits(&[mkdir(200)]));
    write(&disk, &storage::inprogress_name(1), &data);
    assert!(
        load(&disk).is_err(),
        "data a whole batch past the damage was synced before it"
    );
}

#[test]
fn a_torn_tail_before_a_segment_with_records_is_refused() {
    let disk = formatted();
    write(&disk, &storage::inprogress_name(1), &torn_batch(3));
    write(
        &disk,
        &storage::inprogress_name(43),
        &storage::encode_edits(&[mkdir(43)]),
    );
    assert!(
        load(&disk).is_err(),
        "the next segment was written after the old one was synced"
    );
}
