//! The quota side of `-count` (Hadoop's `Count` with `-u` or `-t`, which
//! asks the NameNode's `getQuotaUsage`) and its columns as Hadoop's
//! `QuotaUsage` prints them: names and space (`-u`), or per storage type
//! (`-t [TYPES]`).

use cairn_proto::hadoop::hdfs as pb;

use super::args::UsageError;
use super::format::{java_long, size};
use super::shell::{FsId, Shell};

/// The storage types that take a quota, in Java's order, with their
/// `StorageTypeProto` numbers.
const QUOTA_TYPES: [(&str, i32); 5] = [
    ("SSD", 2),
    ("DISK", 1),
    ("ARCHIVE", 3),
    ("PROVIDED", 5),
    ("NVDIMM", 6),
];

/// Every storage type by name (RAM_DISK too, which takes no quota).
const ALL_TYPES: [(&str, i32); 6] = [
    ("RAM_DISK", 4),
    ("SSD", 2),
    ("DISK", 1),
    ("ARCHIVE", 3),
    ("PROVIDED", 5),
    ("NVDIMM", 6),
];

/// A storage type as `-t` names it: its name and wire number.
pub(crate) type StorageType = (&'static str, i32);

/// Takes `-t [TYPES]` out of `-count`'s arguments as Hadoop's
/// `CommandFormat` does for an option with a value: the next argument is
/// the value unless it is an option or the last argument left.
pub(crate) fn take_type_option(args: &mut Vec<String>) -> Option<String> {
    let mut value = None;
    let mut pos = 0;
    while pos < args.len() {
        let a = &args[pos];
        if !a.starts_with('-') || a == "-" || a == "--" {
            break;
        }
        if a == "-t" {
            args.remove(pos);
            let remaining = args.len() - pos;
            let v = if remaining > 1 && !args[pos].starts_with('-') {
                args.remove(pos)
            } else {
                String::new()
            };
            value = Some(v);
            continue;
        }
        pos += 1;
    }
    value
}

/// The types `-t` names: all that take a quota for "" or "all", else the
/// comma-separated list (case-insensitive).
///
/// # Errors
/// A [`UsageError`] naming an unknown type, as Java's enum lookup.
pub(crate) fn storage_types(list: &str) -> Result<Vec<StorageType>, UsageError> {
    if list.is_empty() || list.eq_ignore_ascii_case("all") {
        return Ok(QUOTA_TYPES.to_vec());
    }
    list.split(',')
        .filter(|t| !t.is_empty())
        .map(|t| {
            let upper = t.to_ascii_uppercase();
            ALL_TYPES
                .iter()
                .find(|(name, _)| *name == upper)
                .copied()
                .ok_or_else(|| {
                    UsageError::new(format!(
                        "No enum constant org.apache.hadoop.fs.StorageType.{upper}"
                    ))
                })
        })
        .collect()
}

/// `-count -t -v`'s header without `PATHNAME` (`getStorageTypeHeader`).
pub(crate) fn storage_type_header(types: &[StorageType]) -> String {
    types
        .iter()
        .map(|(name, _)| {
            format!(
                "{:>14} {:>18} ",
                format!("{name}_QUOTA"),
                format!("REM_{name}_QUOTA")
            )
        })
        .collect()
}

/// The name and space columns of `QuotaUsage`: `none` and `inf` where no
/// quota is set (a name quota counts from 1, a space quota from 0).
pub(crate) fn usage_columns(
    quota: i64,
    used: i64,
    space_quota: i64,
    space_used: i64,
    human: bool,
) -> String {
    let (quota_str, quota_rem) = if quota > 0 {
        (size(quota, human), size(quota.saturating_sub(used), human))
    } else {
        ("none".to_owned(), "inf".to_owned())
    };
    let (space_str, space_rem) = if space_quota >= 0 {
        (
            size(space_quota, human),
            size(space_quota.saturating_sub(space_used), human),
        )
    } else {
        ("none".to_owned(), "inf".to_owned())
    };
    format!("{quota_str:>12} {quota_rem:>15} {space_str:>15} {space_rem:>15} ")
}

/// The per-type columns of `QuotaUsage` for `types`.
pub(crate) fn type_columns(
    usage: &pb::QuotaUsageProto,
    types: &[StorageType],
    human: bool,
) -> String {
    let infos = usage
        .type_quota_infos
        .as_ref()
        .map_or(&[][..], |i| i.type_quota_info.as_slice());
    types
        .iter()
        .map(|(_, number)| {
            let info = infos.iter().find(|i| i.r#type.unwrap_or(1) == *number);
            // Absent from the answer: no quota, nothing consumed.
            let quota = info.map_or(-1, |i| java_long(i.quota));
            let consumed = info.map_or(0, |i| java_long(i.consumed));
            let (q, rem) = if quota >= 0 {
                (
                    size(quota, human),
                    size(quota.saturating_sub(consumed), human),
                )
            } else {
                ("none".to_owned(), "inf".to_owned())
            };
            format!("{q:>14} {rem:>18} ")
        })
        .collect()
}

/// `getQuotaUsage` of `path`, or the message to print.
pub(crate) async fn quota_usage(
    shell: &Shell,
    fs: FsId,
    path: &str,
) -> Result<pb::QuotaUsageProto, String> {
    let request = pb::GetQuotaUsageRequestProto {
        path: path.to_owned(),
    };
    shell
        .call::<_, pb::GetQuotaUsageResponseProto>(fs, "getQuotaUsage", &request)
        .await
        .map(|r| r.usage)
}

/// One `-count -u`/`-t` line without the path.
pub(crate) fn quota_line(
    usage: &pb::QuotaUsageProto,
    types: Option<&[StorageType]>,
    human: bool,
) -> String {
    match types {
        Some(types) => type_columns(usage, types, human),
        None => usage_columns(
            java_long(usage.quota),
            java_long(usage.file_and_directory_count),
            java_long(usage.space_quota),
            java_long(usage.space_consumed),
            human,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn type_option_takes_a_value_as_hadoop_does() {
        let mut a = args(&["-q", "-t", "/p"]);
        assert_eq!(take_type_option(&mut a), Some(String::new()));
        assert_eq!(a, args(&["-q", "/p"]));
        let mut a = args(&["-q", "-t", "DISK,SSD", "/p"]);
        assert_eq!(take_type_option(&mut a), Some("DISK,SSD".into()));
        assert_eq!(a, args(&["-q", "/p"]));
        let mut a = args(&["-t", "-q", "/p"]);
        assert_eq!(take_type_option(&mut a), Some(String::new()));
        let mut a = args(&["-q", "/p"]);
        assert_eq!(take_type_option(&mut a), None);
    }

    #[test]
    fn columns_match_hadoop() {
        assert_eq!(
            storage_type_header(&storage_types("disk").expect("type")),
            "    DISK_QUOTA     REM_DISK_QUOTA "
        );
        let usage = pb::QuotaUsageProto {
            file_and_directory_count: 3,
            quota: 5,
            space_consumed: 300,
            space_quota: u64::MAX,
            type_quota_infos: Some(pb::StorageTypeQuotaInfosProto {
                type_quota_info: vec![pb::StorageTypeQuotaInfoProto {
                    r#type: Some(1),
                    quota: 2048,
                    consumed: 0,
                }],
            }),
        };
        assert_eq!(
            quota_line(&usage, None, false),
            "           5               2            none             inf "
        );
        let types = storage_types("SSD,DISK").expect("types");
        assert_eq!(
            quota_line(&usage, Some(&types), true),
            "          none                inf            2 K                2 K "
        );
        assert!(storage_types("FLOPPY").is_err());
    }
}
