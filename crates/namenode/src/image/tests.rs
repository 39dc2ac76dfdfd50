//! The image codec's refusals: every damaged or unknown image stops with
//! the section and offset, and format-1 images still load.

use super::*;
use crate::namespace::permission::Caller;

fn sample() -> Namespace {
    let mut ns = Namespace::new("hdfs", "supergroup", 5, Limits::default());
    let su = Caller::superuser("hdfs");
    for i in 0..300 {
        let path = format!("/a/d{}/f{i}", i % 7);
        ns.create(&su, &path, 0o644, "c", "m", false, true, 3, 1024, 1)
            .expect("create");
        if i % 3 != 0 {
            ns.complete(&path, 0, "c", None, 2, &|_| true)
                .expect("complete");
        }
    }
    ns
}

/// `bytes` decoded in memory and from a file (read section by section):
/// both ways must agree, refusals word for word.
fn load(bytes: &[u8]) -> Result<Namespace, String> {
    let in_memory = decode(bytes, "hdfs", "supergroup", Limits::default()).map(|(n, _)| n);
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("fsimage");
    std::fs::write(&path, bytes).expect("write image");
    let disk = cairn_common::disk::RealDisk;
    let len = bytes.len() as u64;
    let from_file =
        decode_file(&disk, &path, len, "hdfs", "supergroup", Limits::default()).map(|(n, _)| n);
    match (&in_memory, &from_file) {
        (Ok(a), Ok(b)) => assert_eq!(a.to_edits(), b.to_edits(), "file and memory differ"),
        (Err(a), Err(b)) => assert_eq!(a, b, "file and memory refuse differently"),
        (a, b) => panic!(
            "memory: {:?}, file: {:?}",
            a.as_ref().map(|_| ()),
            b.as_ref().map(|_| ())
        ),
    }
    in_memory
}

/// The section table of an encoded image.
fn sections(bytes: &[u8]) -> Result<Vec<Section>, String> {
    header_and_sections(&Source::Memory(bytes)).map(|(_, s)| s)
}

#[test]
fn round_trip_keeps_the_tree_and_counters() {
    let ns = sample();
    let bytes = encode(&ns, 42);
    let (back, txid) = decode(&bytes, "x", "y", Limits::default()).expect("decode");
    assert_eq!(txid, 42);
    assert_eq!(back.to_edits(), ns.to_edits());
    assert_eq!(back.counters(), ns.counters());
    assert_eq!(back.inode_count(), ns.inode_count());
}

#[test]
fn format_1_images_still_load() {
    let ns = sample();
    let (back, txid) =
        decode(&v1::encode(&ns, 9), "hdfs", "supergroup", Limits::default()).expect("format 1");
    assert_eq!(txid, 9);
    assert_eq!(back.to_edits(), ns.to_edits());
}

#[test]
fn a_flipped_byte_names_its_section() {
    let bytes = encode(&sample(), 1);
    let secs = sections(&bytes).expect("sections");
    for s in secs.iter().filter(|s| s.len > 0) {
        let mut bad = bytes.clone();
        let at = s.offset + s.len / 2;
        bad[at] ^= 0x40;
        let err = load(&bad).expect_err("flipped byte accepted");
        assert!(
            err.contains(&format!("section {} ({})", s.index, s.kind.name()))
                && err.contains(&format!("offset {}", s.offset))
                && err.contains("checksum mismatch"),
            "{err}"
        );
    }
    // In the header or table: the header's own checksum.
    let mut bad = bytes.clone();
    bad[FIXED_HEADER_LEN + 3] ^= 1;
    assert!(load(&bad).expect_err("bad table").contains("header"));
}

#[test]
fn a_truncated_file_is_refused() {
    let bytes = encode(&sample(), 1);
    for len in [
        0,
        10,
        FIXED_HEADER_LEN + 2,
        bytes.len() / 2,
        bytes.len() - 1,
    ] {
        let err = load(&bytes[..len]).expect_err("truncated accepted");
        assert!(
            err.contains("truncated") || err.contains("past the end") || err.contains("magic"),
            "{len}: {err}"
        );
    }
}

#[test]
fn an_unknown_format_or_section_is_refused() {
    let mut bytes = encode(&sample(), 1);
    bytes[8..12].copy_from_slice(&7u32.to_be_bytes());
    let err = load(&bytes).expect_err("format 7");
    assert!(err.contains("unsupported image format 7"), "{err}");
    // A section kind this NameNode does not know, with the checksums right.
    let mut bytes = encode(&sample(), 1);
    bytes[FIXED_HEADER_LEN..FIXED_HEADER_LEN + 4].copy_from_slice(&99u32.to_be_bytes());
    let count = usize::try_from(be_u32(&bytes, FIXED_HEADER_LEN - 4).expect("count")).expect("n");
    let end = FIXED_HEADER_LEN + TABLE_ENTRY_LEN * count;
    let crc = crc32c::crc32c(&bytes[..end]);
    bytes[end..end + 4].copy_from_slice(&crc.to_be_bytes());
    let err = load(&bytes).expect_err("kind 99");
    assert!(
        err.contains("section 0") && err.contains("unknown section kind 99"),
        "{err}"
    );
}

#[test]
fn big_directories_split_across_chunks() {
    let mut ns = Namespace::new("hdfs", "supergroup", 5, Limits::default());
    let su = Caller::superuser("hdfs");
    let n = CHUNK_RECORDS + 10;
    for i in 0..n {
        ns.create(
            &su,
            &format!("/big/f{i}"),
            0o644,
            "c",
            "m",
            false,
            true,
            3,
            1024,
            1,
        )
        .expect("create");
    }
    let bytes = encode(&ns, 3);
    let chunks = sections(&bytes)
        .expect("sections")
        .iter()
        .filter(|s| s.kind == Kind::Inodes)
        .count();
    assert_eq!(chunks, 2);
    let back = load(&bytes).expect("load");
    assert_eq!(back.inode_count(), ns.inode_count());
    assert_eq!(back.to_edits(), ns.to_edits());
}

#[test]
fn open_files_of_one_writer_share_it_after_a_load() {
    let mut ns = Namespace::new("hdfs", "supergroup", 5, Limits::default());
    let su = Caller::superuser("hdfs");
    // Two chunks, so that two parts (maybe two threads) read writers.
    let n = CHUNK_RECORDS + 10;
    for i in 0..n {
        let client = if i % 2 == 0 { "c1" } else { "c2" };
        let path = format!("/open/f{i:07}");
        ns.create(&su, &path, 0o644, client, "m", false, true, 3, 1024, 1)
            .expect("create");
    }
    let writers = |ns: &Namespace| {
        let mut ptrs: Vec<_> = ns.open_files().map(|(_, uc)| uc.writer_ptr()).collect();
        ptrs.sort_unstable();
        ptrs.dedup();
        ptrs.len()
    };
    assert_eq!(writers(&ns), 2);
    let mut back = load(&encode(&ns, 3)).expect("load");
    assert_eq!(back.to_edits(), ns.to_edits());
    assert_eq!(back.open_files().count(), n);
    // At most one writer per client and part, not one per file.
    assert!(writers(&back) <= 4, "{} writers", writers(&back));
    let before = writers(&back);
    // A client's next file shares a writer it already has.
    back.create(&su, "/open/new", 0o644, "c1", "m", false, true, 3, 1024, 1)
        .expect("create after load");
    assert_eq!(writers(&back), before);
    let c1 = back
        .open_files()
        .filter(|(_, uc)| uc.client_name() == "c1")
        .count();
    assert_eq!(c1, n / 2 + 1);
}

/// `ns` through a format-2 image and back (the namespace tests' check
/// that every feature survives a checkpoint).
pub(crate) fn round_trip(ns: &Namespace) -> Namespace {
    let back = load(&encode(ns, 1)).expect("image round trip");
    assert_eq!(back.to_edits(), ns.to_edits(), "image round trip");
    back
}

/// Names in one directory whose HDFS order (signed bytes) differs from
/// unsigned byte order: the non-ASCII ones come first in HDFS's.
const MIXED_NAMES: [&str; 6] = ["zz", "a", "é", "B", "日本", "a\u{80}"];

fn mixed() -> Namespace {
    let mut ns = Namespace::new("hdfs", "supergroup", 5, Limits::default());
    let su = Caller::superuser("hdfs");
    for name in MIXED_NAMES {
        ns.create(
            &su,
            &format!("/d/{name}"),
            0o644,
            "c",
            "m",
            false,
            true,
            3,
            1024,
            1,
        )
        .expect("create");
        ns.mkdirs(&su, &format!("/e/{name}"), 0o755, true, 1)
            .expect("mkdirs");
    }
    ns
}

fn names_in(ns: &Namespace, dir: &str) -> Vec<String> {
    ns.get_listing(&Caller::superuser("hdfs"), dir, "", 100)
        .expect("listing")
        .expect("a directory")
        .entries
        .into_iter()
        .map(|e| e.name)
        .collect()
}

/// `bytes` (format 3) as a format-2 image wrote it: the same sections,
/// each directory's records in unsigned byte order of their names, the
/// checksums made again.
fn as_format_2(mut bytes: Vec<u8>) -> Vec<u8> {
    for s in sections(&bytes).expect("sections") {
        if s.kind != Kind::Inodes {
            continue;
        }
        let chunk = bytes[s.offset..s.offset + s.len].to_vec();
        let mut r = Reader::new(&chunk);
        let mut out = Vec::with_capacity(chunk.len());
        while !r.is_empty() {
            let head = r.pos();
            r.varint().expect("parent");
            let n = r.count(9).expect("count");
            out.extend_from_slice(&chunk[head..r.pos()]);
            let mut records: Vec<(&str, &[u8])> = (0..n)
                .map(|_| {
                    let at = r.pos();
                    let name = r.inode().expect("record").name;
                    (name, &chunk[at..r.pos()])
                })
                .collect();
            records.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            for (_, rec) in records {
                out.extend_from_slice(rec);
            }
        }
        bytes[s.offset..s.offset + s.len].copy_from_slice(&out);
        let at = FIXED_HEADER_LEN + TABLE_ENTRY_LEN * s.index + 4;
        bytes[at..at + 4].copy_from_slice(&crc32c::crc32c(&out).to_be_bytes());
    }
    set_format(&mut bytes, FORMAT_2);
    bytes
}

/// Sets the header's format, with the header's checksum made again.
fn set_format(bytes: &mut [u8], format: u32) {
    bytes[8..12].copy_from_slice(&format.to_be_bytes());
    let count = usize::try_from(be_u32(bytes, FIXED_HEADER_LEN - 4).expect("count")).expect("n");
    let end = FIXED_HEADER_LEN + TABLE_ENTRY_LEN * count;
    let crc = crc32c::crc32c(&bytes[..end]);
    bytes[end..end + 4].copy_from_slice(&crc.to_be_bytes());
}

#[test]
fn names_are_kept_in_hdfs_order_and_format_2_images_sorted_again() {
    let ns = mixed();
    let hdfs_order = ["é", "日本", "B", "a", "a\u{80}", "zz"];
    assert_eq!(names_in(&ns, "/d"), hdfs_order);
    let bytes = encode(&ns, 4);
    let back = load(&bytes).expect("format 3");
    assert_eq!(names_in(&back, "/d"), hdfs_order);
    assert_eq!(back.to_edits(), ns.to_edits());

    // An image from before: names in unsigned byte order, sorted again on
    // load, so lookups and listings page as a fresh namespace does.
    let old = as_format_2(bytes.clone());
    let from_old = load(&old).expect("format 2");
    for dir in ["/d", "/e"] {
        assert_eq!(names_in(&from_old, dir), hdfs_order, "{dir}");
    }
    assert_eq!(from_old.to_edits(), ns.to_edits());
    let su = Caller::superuser("hdfs");
    for name in MIXED_NAMES {
        assert!(
            from_old
                .get_file_info(&su, &format!("/d/{name}"))
                .expect("file info")
                .is_some(),
            "{name}"
        );
    }
    let page = from_old
        .get_listing(&su, "/d", "日本", 2)
        .expect("listing")
        .expect("dir");
    let page: Vec<String> = page.entries.into_iter().map(|e| e.name).collect();
    assert_eq!(page, ["B", "a"]);

    // The same bytes claiming format 3 are out of order: refused.
    let mut wrong = old;
    set_format(&mut wrong, FORMAT);
    let err = load(&wrong).expect_err("unsigned order as format 3");
    assert!(err.contains("out of order"), "{err}");
}
