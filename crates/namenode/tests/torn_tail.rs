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

/// Records 1..=n synced, then a batch of 39 more whose second sector was
/// lost (zeros) while the sectors after it were written. Returns the
/// bytes and the last txid wholly before the lost sector.
fn torn_batch(n: u64) -> (Vec<u8>, u64) {
    let synced: Vec<(u64, Edit)> = (1..=n).map(mkdir).collect();
    let mut data = storage::encode_edits(&synced);
    let batch_at = data.len();
    let batch: Vec<(u64, Edit)> = (n + 1..n + 40).map(mkdir).collect();
    data.extend(storage::encode_edits(&batch));
    let lost = (batch_at / 512 + 1) * 512;
    data[lost..lost + 512].fill(0);
    let (mut pos, mut last) = (0, 0);
    for record in synced.iter().chain(&batch) {
        let size = storage::encode_edits(std::slice::from_ref(record)).len();
        if pos + size > lost {
            break;
        }
        (pos, last) = (pos + size, record.0);
    }
    data.resize(data.len() + 8192, 0);
    (data, last)
}

#[test]
fn a_batch_torn_in_its_middle_is_cut_at_the_damage() {
    let disk = formatted();
    let (data, last) = torn_batch(3);
    write(&disk, &storage::inprogress_name(1), &data);
    assert!(last >= 3);
    assert_eq!(load(&disk).expect("a torn batch loads"), last);
}

#[test]
fn a_flipped_byte_with_records_after_it_is_refused() {
    // Bit rot, not a lost sector: nothing says the records after it were
    // never synced.
    let disk = formatted();
    let mut data = storage::encode_edits(&(1..=20).map(mkdir).collect::<Vec<_>>());
    // In the payload of the second record, as t40 damages a real log.
    let second = storage::encode_edits(&[mkdir(1)]).len();
    data[second + 20] ^= 0x5a;
    data.resize(data.len() + 4096, 0);
    write(&disk, &storage::inprogress_name(1), &data);
    assert!(load(&disk).is_err());
}

#[test]
fn a_torn_tail_before_an_empty_next_segment_is_cut() {
    // A roll makes the next segment before the old one's last batch is
    // synced: a power cut between leaves both.
    let disk = formatted();
    let (data, last) = torn_batch(3);
    write(&disk, &storage::inprogress_name(1), &data);
    write(&disk, &storage::inprogress_name(43), &[0u8; 4096]);
    assert_eq!(load(&disk).expect("loads"), last);
}

#[test]
fn damage_with_synced_records_beyond_a_batch_is_refused() {
    let disk = formatted();
    let (mut data, _) = torn_batch(3);
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
    write(&disk, &storage::inprogress_name(1), &torn_batch(3).0);
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
