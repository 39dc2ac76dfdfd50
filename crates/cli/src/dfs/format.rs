//! Pure text formatting for the shell's output, byte for byte as Hadoop's
//! `FsShell` prints it: human-readable sizes, permission strings, dates, and
//! the column layouts of `-ls`, `-count` and `-du`.
//!
//! Nothing here does I/O, so every format is unit-tested against lines taken
//! from the golden transcript (`tests/java/expected/fsshell.txt`).

use chrono::{DateTime, Local, TimeZone, Utc};
use hdfs_native::client::{ContentSummary, FileStatus};

/// Permission bits the shell shows and changes: rwx for user, group and
/// others plus the sticky bit. HDFS's extended bits (ACL, encryption,
/// erasure coding) ride above these in the wire value.
pub(crate) const PERMISSION_MASK: u16 = 0o1777;

/// The ACL bit of the wire permission (Hadoop's `FsPermissionExtension`),
/// shown as a `+` after the `-ls` permission string.
const ACL_BIT: u16 = 1 << 12;

/// A Java `long` from the `uint64` wire encoding Hadoop uses for signed
/// values (a quota of -1 arrives as `u64::MAX`): the same 64 bits read as
/// two's complement, which is what the Java client does.
pub(crate) fn java_long(v: u64) -> i64 {
    i64::from_ne_bytes(v.to_ne_bytes())
}

/// Hadoop's `TraditionalBinaryPrefix.long2String(n, "", 1)`: below 1024 the
/// plain number; otherwise one decimal and a binary prefix (`1.5 K`,
/// `128 M`), with no decimal when the value is an exact multiple.
pub(crate) fn human_size(n: i64) -> String {
    const PREFIXES: [char; 6] = ['K', 'M', 'G', 'T', 'P', 'E'];
    if n == i64::MIN {
        return "-8 E".to_owned();
    }
    let negative = n < 0;
    let abs = n.unsigned_abs();
    let sign = if negative { "-" } else { "" };
    if abs < 1024 {
        return format!("{sign}{abs}");
    }
    // The largest prefix not above the value: 10 bits per step.
    let mut index = 0usize;
    while index + 1 < PREFIXES.len() && abs >> (10 * (index + 2)) > 0 {
        index += 1;
    }
    let shift = 10 * (index + 1);
    let unit = 1u64 << shift;
    if abs & (unit - 1) == 0 {
        return format!("{sign}{} {}", abs >> shift, PREFIXES[index]);
    }
    // One decimal, rounded half up as Java's `%.1f` does, computed exactly.
    let mut tenths = (u128::from(abs) * 10 + u128::from(unit / 2)) / u128::from(unit);
    if tenths >= 10240 && index + 1 < PREFIXES.len() {
        // 1023.96 K rounds to "1024.0 K": Hadoop moves to the next prefix.
        index += 1;
        let unit = u128::from(unit) << 10;
        tenths = (u128::from(abs) * 10 + unit / 2) / unit;
    }
    format!("{sign}{}.{} {}", tenths / 10, tenths % 10, PREFIXES[index])
}

/// A size column: plain bytes, or [`human_size`] with `-h`.
pub(crate) fn size(n: i64, human: bool) -> String {
    if human {
        human_size(n)
    } else {
        n.to_string()
    }
}

/// [`size`] for the unsigned values hdfs-native hands out.
pub(crate) fn size_u64(n: u64, human: bool) -> String {
    size(java_long(n), human)
}

/// `rwxr-xr-x`, with `t`/`T` in the last place for the sticky bit, as
/// Hadoop's `FsPermission.toString()`.
pub(crate) fn permission_symbolic(permission: u16) -> String {
    cairn_common::web::page::permission_symbolic(permission)
}

/// The octal permission as `-stat %a` prints it (`644`, `1777`, `0`).
pub(crate) fn permission_octal(permission: u16) -> String {
    format!("{:o}", permission & PERMISSION_MASK)
}

/// A millisecond timestamp as a date time, or the epoch for values no
/// calendar can show (the server's value, so never trusted to be sane).
fn utc(ms: u64) -> DateTime<Utc> {
    i64::try_from(ms)
        .ok()
        .and_then(DateTime::from_timestamp_millis)
        .unwrap_or_default()
}

/// `yyyy-MM-dd HH:mm` in the local time zone, as `-ls` prints dates.
pub(crate) fn ls_date(ms: u64) -> String {
    Local
        .from_utc_datetime(&utc(ms).naive_utc())
        .format("%Y-%m-%d %H:%M")
        .to_string()
}

/// `yyyy-MM-dd HH:mm:ss` in UTC, as `-stat %y` and `%x` print dates.
pub(crate) fn stat_date(ms: u64) -> String {
    utc(ms).format("%Y-%m-%d %H:%M:%S").to_string()
}

/// Hadoop's `PrintableString` for `-ls -q`: every character a terminal would
/// not show as itself becomes `?`.
pub(crate) fn printable(s: &str) -> String {
    s.chars()
        .map(|c| {
            let invisible = c.is_control()
                || matches!(c, '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{feff}')
                || ('\u{e000}'..='\u{f8ff}').contains(&c);
            if invisible {
                '?'
            } else {
                c
            }
        })
        .collect()
}

/// The column widths of `-ls`, which only ever grow while one command runs:
/// Hadoop widens them for each batch of entries before printing it, so a
/// later, wider batch shifts the columns of the lines after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LsWidths {
    replication: usize,
    length: usize,
    owner: usize,
    group: usize,
    /// `-e`: the erasure-coding policy column's width (none: no column).
    ec_policy: Option<usize>,
}

impl Default for LsWidths {
    fn default() -> Self {
        // Hadoop's starting widths: room for a 3-digit replication and a
        // 10-digit size.
        LsWidths {
            replication: 3,
            length: 10,
            owner: 0,
            group: 0,
            ec_policy: None,
        }
    }
}

impl LsWidths {
    /// Widens the columns to fit `statuses`. The size column is sized by
    /// the byte count even with `-h`, as in Hadoop.
    pub(crate) fn widen<'a>(&mut self, statuses: impl IntoIterator<Item = &'a FileStatus>) {
        for st in statuses {
            let replication = st.replication.unwrap_or(0).to_string();
            self.replication = self.replication.max(replication.chars().count());
            let length = u64::try_from(st.length).unwrap_or(u64::MAX);
            self.length = self.length.max(java_long(length).to_string().len());
            self.owner = self.owner.max(st.owner.chars().count());
            self.group = self.group.max(st.group.chars().count());
        }
    }

    /// `-e`: sizes the policy column to the longest of `policies` (Hadoop
    /// sizes it per batch, as the others).
    pub(crate) fn widen_ec_policy<'a>(&mut self, policies: impl IntoIterator<Item = &'a str>) {
        let widest = policies.into_iter().map(|p| p.chars().count()).max();
        self.ec_policy = Some(widest.unwrap_or(0));
    }

    /// One `-ls` line: `drwxr-xr-x   - owner group          0 2024-01-01 00:00 /path`,
    /// with `ec_policy` after the group under `-e`.
    pub(crate) fn line(
        &self,
        st: &FileStatus,
        options: LsLine,
        shown_path: &str,
        ec_policy: Option<&str>,
    ) -> String {
        let kind = if st.isdir { 'd' } else { '-' };
        let acl = if st.permission & ACL_BIT != 0 {
            '+'
        } else {
            ' '
        };
        let replication = if st.isdir {
            "-".to_owned()
        } else {
            st.replication.unwrap_or(0).to_string()
        };
        let length = u64::try_from(st.length).unwrap_or(u64::MAX);
        let time = if options.access_time {
            st.access_time
        } else {
            st.modification_time
        };
        let mut line = format!(
            "{kind}{}{acl}{replication:>width$} ",
            permission_symbolic(st.permission),
            width = self.replication
        );
        // Hadoop leaves out the padding and the separating space entirely
        // while every owner (group) seen so far is empty.
        push_left(&mut line, &st.owner, self.owner);
        push_left(&mut line, &st.group, self.group);
        if let Some(width) = self.ec_policy {
            line.push_str(&format!("{:<width$} ", ec_policy.unwrap_or("")));
        }
        line.push_str(&format!(
            "{:>width$} {} {shown_path}",
            size_u64(length, options.human),
            ls_date(time),
            width = self.length
        ));
        line
    }
}

fn push_left(line: &mut String, value: &str, width: usize) {
    if width > 0 {
        line.push_str(&format!("{value:<width$} "));
    } else {
        line.push_str(value);
    }
}

/// Per-command choices that change how an `-ls` line looks.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LsLine {
    /// `-h`: human-readable sizes.
    pub human: bool,
    /// `-u`: the access time instead of the modification time.
    pub access_time: bool,
}

/// `-count -v`'s header without `PATHNAME`: the quota columns with `-q` (or
/// alone with `-u`), then the content columns.
pub(crate) fn count_header(quota: bool, quota_only: bool) -> String {
    let quota_part = format!(
        "{:>12} {:>15} {:>15} {:>15} ",
        "QUOTA", "REM_QUOTA", "SPACE_QUOTA", "REM_SPACE_QUOTA"
    );
    if quota_only {
        return quota_part;
    }
    let summary = format!(
        "{:>12} {:>12} {:>18} ",
        "DIR_COUNT", "FILE_COUNT", "CONTENT_SIZE"
    );
    if quota {
        quota_part + &summary
    } else {
        summary
    }
}

/// The quota columns of `-count -q`/`-u` (Hadoop's `QuotaUsage`): `none`
/// and `inf` where no quota is set.
pub(crate) fn quota_columns(cs: &ContentSummary, human: bool) -> String {
    super::quota::usage_columns(
        java_long(cs.quota),
        java_long(cs.directory_count).saturating_add(java_long(cs.file_count)),
        java_long(cs.space_quota),
        java_long(cs.space_consumed),
        human,
    )
}

/// One `-count` line without the path: optional quota columns, then
/// directories, files and bytes (Hadoop's `ContentSummary.toString`).
pub(crate) fn count_columns(cs: &ContentSummary, quota: bool, human: bool) -> String {
    let mut s = if quota {
        quota_columns(cs, human)
    } else {
        String::new()
    };
    s.push_str(&format!(
        "{:>12} {:>12} {:>18} ",
        size_u64(cs.directory_count, human),
        size_u64(cs.file_count, human),
        size_u64(cs.length, human)
    ));
    s
}

/// Hadoop's `TableBuilder` as `-du` uses it: left-aligned columns separated
/// by two spaces, sized to the widest cell (header included), the last one
/// unpadded.
#[derive(Debug, Default)]
pub(crate) struct Table {
    rows: Vec<Vec<String>>,
    widths: Vec<usize>,
    has_header: bool,
}

impl Table {
    /// A table whose first row is `header`.
    pub(crate) fn with_header(header: &[&str]) -> Self {
        let mut t = Table::default();
        t.add_row(header.iter().map(|h| (*h).to_owned()).collect());
        t.has_header = true;
        t
    }

    /// Appends a row; every row must have the same number of cells.
    pub(crate) fn add_row(&mut self, row: Vec<String>) {
        if self.widths.len() < row.len() {
            self.widths.resize(row.len(), 0);
        }
        for (width, cell) in self.widths.iter_mut().zip(&row) {
            *width = (*width).max(cell.chars().count());
        }
        self.rows.push(row);
    }

    /// Whether there are no rows besides the header.
    pub(crate) fn is_empty(&self) -> bool {
        self.rows.len() <= usize::from(self.has_header)
    }

    /// The rendered lines, or none when [`Table::is_empty`].
    pub(crate) fn lines(&self) -> Vec<String> {
        if self.is_empty() {
            return Vec::new();
        }
        let last = self.widths.len().saturating_sub(1);
        self.rows
            .iter()
            .map(|row| {
                let mut line = String::new();
                for (i, cell) in row.iter().enumerate() {
                    if i > 0 {
                        line.push_str("  ");
                    }
                    if i == last {
                        line.push_str(cell);
                    } else {
                        let width = self.widths.get(i).copied().unwrap_or(0);
                        line.push_str(&format!("{cell:<width$}"));
                    }
                }
                line
            })
            .collect()
    }
}

/// Hadoop's `-stat` format: `%a %A %b %F %g %n %o %r %u %x %X %y %Y`; any
/// other `%c` prints `c`, and a trailing lone `%` is dropped. `name` is the
/// last component of the path (`""` for the root).
pub(crate) fn stat_line(format: &str, st: &FileStatus, name: &str) -> String {
    let mut out = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let Some(spec) = chars.next() else { break };
        match spec {
            'a' => out.push_str(&permission_octal(st.permission)),
            'A' => out.push_str(&permission_symbolic(st.permission)),
            'b' => out.push_str(&st.length.to_string()),
            // hdfs-native does not tell symlinks apart from files.
            'F' => out.push_str(if st.isdir {
                "directory"
            } else {
                "regular file"
            }),
            'g' => out.push_str(&st.group),
            'n' => out.push_str(name),
            'o' => out.push_str(&size_u64(st.blocksize.unwrap_or(0), false)),
            'r' => out.push_str(&st.replication.unwrap_or(0).to_string()),
            'u' => out.push_str(&st.owner),
            'x' => out.push_str(&stat_date(st.access_time)),
            'X' => out.push_str(&size_u64(st.access_time, false)),
            'y' => out.push_str(&stat_date(st.modification_time)),
            'Y' => out.push_str(&size_u64(st.modification_time, false)),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(isdir: bool, permission: u16, owner: &str, group: &str, length: usize) -> FileStatus {
        FileStatus {
            path: "/x".to_owned(),
            length,
            isdir,
            permission,
            owner: owner.to_owned(),
            group: group.to_owned(),
            modification_time: 1_700_000_000_123,
            access_time: 1_600_000_000_000,
            replication: if isdir { Some(0) } else { Some(3) },
            blocksize: if isdir { Some(0) } else { Some(134_217_728) },
        }
    }

    fn summary(dirs: u64, files: u64, length: u64) -> ContentSummary {
        ContentSummary {
            length,
            file_count: files,
            directory_count: dirs,
            quota: u64::MAX,
            space_consumed: length * 3,
            space_quota: u64::MAX,
        }
    }

    #[test]
    fn human_sizes_match_hadoop() {
        assert_eq!(human_size(0), "0");
        assert_eq!(human_size(1023), "1023");
        assert_eq!(human_size(1024), "1 K");
        assert_eq!(human_size(1536), "1.5 K");
        assert_eq!(human_size(1280), "1.3 K", "Java rounds half up");
        assert_eq!(human_size(128 * 1024 * 1024), "128 M");
        assert_eq!(
            human_size(1024 * 1024 - 1),
            "1.0 M",
            "1024.0 K becomes 1.0 M"
        );
        assert_eq!(human_size(1024 * 1024 - 60), "1023.9 K");
        assert_eq!(human_size(3 * (1 << 30) + (1 << 29)), "3.5 G");
        assert_eq!(human_size(1 << 40), "1 T");
        assert_eq!(human_size(1 << 50), "1 P");
        assert_eq!(human_size(1 << 60), "1 E");
        assert_eq!(human_size(i64::MAX), "8.0 E");
        assert_eq!(human_size(-1536), "-1.5 K");
        assert_eq!(human_size(-5), "-5");
        assert_eq!(human_size(i64::MIN), "-8 E");
    }

    #[test]
    fn java_long_reads_minus_one() {
        assert_eq!(java_long(u64::MAX), -1);
        assert_eq!(java_long(5), 5);
    }

    #[test]
    fn permissions_render_like_fs_permission() {
        assert_eq!(permission_symbolic(0o755), "rwxr-xr-x");
        assert_eq!(permission_symbolic(0o644), "rw-r--r--");
        assert_eq!(permission_symbolic(0o1777), "rwxrwxrwt");
        assert_eq!(permission_symbolic(0o1776), "rwxrwxrwT");
        assert_eq!(permission_symbolic(0), "---------");
        assert_eq!(permission_octal(0o1777), "1777");
        assert_eq!(permission_octal(0o644), "644");
        assert_eq!(permission_octal(0o10644), "644", "the ACL bit is not shown");
        assert_eq!(permission_octal(0), "0");
    }

    #[test]
    fn ls_lines_match_the_golden_layout() {
        let mut w = LsWidths::default();
        let dir = status(true, 0o755, "root", "supergroup", 0);
        let file = status(false, 0o644, "root", "supergroup", 0);
        w.widen([&dir, &file]);
        let line = w.line(&dir, LsLine::default(), "/conf/a", None);
        let (head, tail) = line.split_at(line.len() - " 2023-11-14 22:13 /conf/a".len());
        assert_eq!(head, "drwxr-xr-x   - root supergroup          0");
        assert!(tail.ends_with(" /conf/a"), "{line:?}");
        let line = w.line(&file, LsLine::default(), "/conf/a/f1", None);
        assert!(
            line.starts_with("-rw-r--r--   3 root supergroup          0 "),
            "{line:?}"
        );
    }

    #[test]
    fn ls_widths_only_grow() {
        let mut w = LsWidths::default();
        let long_owner = status(false, 0o600, "alice-the-long", "g", 12_345_678_901);
        let short = status(false, 0o600, "bob", "g", 5);
        w.widen([&long_owner]);
        w.widen([&short]);
        let line = w.line(&short, LsLine::default(), "f", None);
        assert!(
            line.starts_with("-rw-------   3 bob            g           5 "),
            "{line:?}"
        );
        let human = w.line(
            &long_owner,
            LsLine {
                human: true,
                access_time: false,
            },
            "f",
            None,
        );
        assert!(
            human.starts_with("-rw-------   3 alice-the-long g      11.5 G "),
            "{human:?}"
        );
    }

    #[test]
    fn ls_with_empty_owner_has_no_padding() {
        let mut w = LsWidths::default();
        let st = status(true, 0o755, "", "", 0);
        w.widen([&st]);
        let line = w.line(&st, LsLine::default(), "/d", None);
        assert!(line.starts_with("drwxr-xr-x   -          0 "), "{line:?}");
    }

    #[test]
    fn dates_use_hadoop_patterns() {
        assert_eq!(stat_date(0), "1970-01-01 00:00:00");
        assert_eq!(stat_date(1_700_000_000_123), "2023-11-14 22:13:20");
        assert_eq!(stat_date(u64::MAX), "1970-01-01 00:00:00");
        assert_eq!(ls_date(1_700_000_000_123).len(), "2023-11-14 22:13".len());
    }

    #[test]
    fn count_columns_match_the_golden() {
        assert_eq!(
            count_columns(&summary(6, 3, 0), false, false),
            "           6            3                  0 "
        );
        assert_eq!(
            count_columns(&summary(6, 3, 0), true, false),
            "        none             inf            none             inf            6            3                  0 "
        );
        assert_eq!(
            count_header(false, false) + "PATHNAME",
            "   DIR_COUNT   FILE_COUNT       CONTENT_SIZE PATHNAME"
        );
        assert_eq!(
            count_header(true, true) + "PATHNAME",
            "       QUOTA       REM_QUOTA     SPACE_QUOTA REM_SPACE_QUOTA PATHNAME"
        );
    }

    #[test]
    fn count_shows_set_quotas() {
        let mut cs = summary(2, 3, 3072);
        cs.quota = 100;
        cs.space_quota = 10 * 1024;
        assert_eq!(
            quota_columns(&cs, false),
            format!("{:>12} {:>15} {:>15} {:>15} ", 100, 95, 10240, 10240 - 9216)
        );
        assert_eq!(
            count_columns(&cs, true, true),
            format!(
                "{:>12} {:>15} {:>15} {:>15} {:>12} {:>12} {:>18} ",
                100, 95, "10 K", "1 K", 2, 3, "3 K"
            )
        );
        cs.space_quota = 0;
        assert!(quota_columns(&cs, false).contains("              0"));
    }

    #[test]
    fn du_table_aligns_like_table_builder() {
        let mut t = Table::default();
        assert!(t.is_empty());
        t.add_row(vec!["0".into(), "0".into(), "/conf/a/b".into()]);
        t.add_row(vec!["1536".into(), "4608".into(), "/conf/a/f1".into()]);
        assert_eq!(
            t.lines(),
            ["0     0     /conf/a/b", "1536  4608  /conf/a/f1"]
        );

        let mut t = Table::with_header(&[
            "SIZE",
            "DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS",
            "FULL_PATH_NAME",
        ]);
        assert!(t.is_empty());
        assert!(t.lines().is_empty());
        t.add_row(vec!["0".into(), "0".into(), "rel/a".into()]);
        assert_eq!(
            t.lines(),
            [
                "SIZE  DISK_SPACE_CONSUMED_WITH_ALL_REPLICAS  FULL_PATH_NAME",
                "0     0                                      rel/a"
            ]
        );
    }

    #[test]
    fn stat_formats_every_specifier() {
        let file = status(false, 0o644, "root", "supergroup", 0);
        assert_eq!(
            stat_line("%n %b %r %u:%g %a %F", &file, "f1"),
            "f1 0 3 root:supergroup 644 regular file"
        );
        assert_eq!(
            stat_line("%A %a %o %r %F", &file, "f1"),
            "rw-r--r-- 644 134217728 3 regular file"
        );
        let dir = status(true, 0o1777, "root", "supergroup", 0);
        assert_eq!(
            stat_line("%A %a %o %r %F", &dir, "d"),
            "rwxrwxrwt 1777 0 0 directory"
        );
        assert_eq!(
            stat_line("%y|%Y|%x|%X", &file, "f1"),
            "2023-11-14 22:13:20|1700000000123|2020-09-13 12:26:40|1600000000000"
        );
        assert_eq!(stat_line("%q %% 100%", &file, "f1"), "q % 100");
        assert_eq!(stat_line("%n", &dir, ""), "");
    }

    #[test]
    fn printable_hides_control_characters() {
        assert_eq!(printable("a\tb\nc\u{7}"), "a?b?c?");
        assert_eq!(printable("ünïcode ok"), "ünïcode ok");
        assert_eq!(printable("zero\u{200b}width"), "zero?width");
    }
}
