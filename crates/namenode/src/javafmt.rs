//! The few Java text formats the NameNode writes where Hadoop's tools or
//! operators expect them byte for byte: `StringUtils.byteDesc` ("503.94 GB"),
//! `DFSUtilClient.percent2String` ("12.34%"), `java.util.Date.toString()`
//! ("Mon Nov 23 21:53:51 UTC 2026") and `java.sql.Time.toString()`
//! ("21:53:51"). Times are rendered in UTC. Pure functions.

/// Hadoop's `TraditionalBinaryPrefix.long2String(n, "B", 2)`: an exact
/// multiple of the largest binary prefix not above `n` prints as an
/// integer, anything else with two decimals ("0 B", "48 KB", "503.94 GB").
pub fn byte_desc(n: u64) -> String {
    const SYMBOLS: [&str; 6] = ["K", "M", "G", "T", "P", "E"];
    if n < 1024 {
        return format!("{n} B");
    }
    // The largest prefix whose value is not above n.
    let mut shift = 10u32;
    let mut i = 0usize;
    while i + 1 < SYMBOLS.len() && n >> (shift + 10) > 0 {
        shift += 10;
        i += 1;
    }
    let mask = (1u64 << shift) - 1;
    let text = if n & mask == 0 {
        (n >> shift).to_string()
    } else {
        let mut s = format!("{:.2}", n as f64 / (1u64 << shift) as f64);
        // 1023.999… rounds up to "1024.00": Java moves to the next prefix.
        if s.starts_with("1024") && i + 1 < SYMBOLS.len() {
            shift += 10;
            i += 1;
            s = format!("{:.2}", n as f64 / (1u64 << shift) as f64);
        }
        s
    };
    format!("{text} {}B", SYMBOLS[i])
}

/// `used` as a percentage of `capacity` with two decimals, as HDFS prints
/// it; a zero capacity counts as 100% used (`DFSUtilClient.getPercentUsed`).
pub fn percent_used(used: u64, capacity: u64) -> String {
    let pct = if capacity == 0 {
        100.0
    } else {
        used as f64 * 100.0 / capacity as f64
    };
    format!("{pct:.2}%")
}

/// Days since 1970-01-01 to (year, month 1-12, day 1-31), proleptic
/// Gregorian (Howard Hinnant's civil-from-days).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `java.sql.Time.toString()` of a time in milliseconds since the epoch
/// (UTC): "HH:mm:ss".
pub fn time_of_day(epoch_ms: u64) -> String {
    let secs = epoch_ms / 1000;
    format!(
        "{:02}:{:02}:{:02}",
        (secs / 3600) % 24,
        (secs / 60) % 60,
        secs % 60
    )
}

/// `java.util.Date.toString()` of a time in milliseconds since the epoch,
/// in UTC: "EEE MMM dd HH:mm:ss zzz yyyy".
pub fn java_date(epoch_ms: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = (epoch_ms / 86_400_000) as i64;
    let (year, month, day) = civil_from_days(days);
    let weekday = DAYS[(days % 7) as usize];
    let month_name = MONTHS[(month as usize + 11) % 12];
    format!(
        "{weekday} {month_name} {day:02} {} UTC {year}",
        time_of_day(epoch_ms)
    )
}

/// `SimpleDateFormat("yyyy-MM-dd HH:mm")` of a time in milliseconds since
/// the epoch (UTC), as `-ls` and `lsSnapshottableDir` print it.
pub fn date_minute(epoch_ms: u64) -> String {
    let (year, month, day) = civil_from_days((epoch_ms / 86_400_000) as i64);
    let secs = epoch_ms / 1000;
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        (secs / 3600) % 24,
        (secs / 60) % 60
    )
}

/// `SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ssZ")` of a time in milliseconds
/// since the epoch (UTC), as a cache directive's absolute expiration
/// prints.
pub fn iso_seconds(epoch_ms: u64) -> String {
    let (year, month, day) = civil_from_days((epoch_ms / 86_400_000) as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{}+0000",
        time_of_day(epoch_ms)
    )
}

/// HDFS's `DFSUtil.durationToString`: "DDD:HH:MM:SS.mmm".
pub fn duration(ms: i64) -> String {
    let (sign, ms) = if ms < 0 { ("-", -ms) } else { ("", ms) };
    format!(
        "{sign}{:03}:{:02}:{:02}:{:02}.{:03}",
        ms / 86_400_000,
        (ms / 3_600_000) % 24,
        (ms / 60_000) % 60,
        (ms / 1000) % 60,
        ms % 1000
    )
}

/// HDFS's default snapshot name, `SimpleDateFormat("'s'yyyyMMdd-HHmmss.SSS")`
/// of a time in milliseconds since the epoch (UTC).
pub fn snapshot_name(epoch_ms: u64) -> String {
    let days = (epoch_ms / 86_400_000) as i64;
    let (year, month, day) = civil_from_days(days);
    let secs = epoch_ms / 1000;
    format!(
        "s{year:04}{month:02}{day:02}-{:02}{:02}{:02}.{:03}",
        (secs / 3600) % 24,
        (secs / 60) % 60,
        secs % 60,
        epoch_ms % 1000
    )
}

/// Java's `Float.toString`: the shortest digits that read back as the
/// same `float`, with at least one digit after the point ("100.0",
/// "33.333332"), and computerized scientific notation ("1.0E-4", "1.5E7")
/// outside `[1e-3, 1e7)`, as fsck's percentages and averages print.
pub fn java_float(f: f32) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    let mag = f.abs();
    if (1e-3..1e7).contains(&mag) {
        let s = format!("{f}");
        return if s.contains('.') { s } else { format!("{s}.0") };
    }
    // Rust's `{:e}` is "1e-4" / "1.5e7": Java writes "1.0E-4" / "1.5E7".
    let s = format!("{f:e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.to_string()
    } else {
        format!("{mantissa}.0")
    };
    format!("{mantissa}E{exp}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_name_is_hdfs_default_pattern() {
        // 2024-02-29 13:05:09.007 UTC
        assert_eq!(snapshot_name(1_709_211_909_007), "s20240229-130509.007");
    }

    #[test]
    fn byte_desc_matches_hadoop() {
        assert_eq!(byte_desc(0), "0 B");
        assert_eq!(byte_desc(1023), "1023 B");
        assert_eq!(byte_desc(49_152), "48 KB");
        assert_eq!(byte_desc(1536), "1.50 KB");
        assert_eq!(byte_desc(541_106_348_032), "503.94 GB");
        assert_eq!(byte_desc(123_873_271_808), "115.37 GB");
        assert_eq!(byte_desc(1 << 30), "1 GB");
        // Just under 1 MiB rounds to "1024.00 KB" in Java's first pass.
        assert_eq!(byte_desc((1 << 20) - 1), "1.00 MB");
    }

    #[test]
    fn java_float_matches_float_to_string() {
        assert_eq!(java_float(100.0), "100.0");
        assert_eq!(java_float(0.0), "0.0");
        assert_eq!(java_float(100.0 / 3.0), "33.333332");
        assert_eq!(java_float(2.0 / 3.0), "0.6666667");
        assert_eq!(java_float(1.5), "1.5");
        assert_eq!(java_float(1e-4), "1.0E-4");
        assert_eq!(java_float(1.25e-5), "1.25E-5");
        assert_eq!(java_float(1.5e7), "1.5E7");
    }

    #[test]
    fn percentages_and_dates() {
        assert_eq!(percent_used(0, 0), "100.00%");
        assert_eq!(percent_used(49_152, 541_106_348_032), "0.00%");
        assert_eq!(percent_used(1, 3), "33.33%");
        // 2026-11-23 21:53:51 UTC, a Monday (from a real metasave file).
        let ms = 1_795_470_831_000;
        assert_eq!(java_date(ms), "Mon Nov 23 21:53:51 UTC 2026");
        assert_eq!(time_of_day(ms + 250), "21:53:51");
        assert_eq!(java_date(0), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(java_date(951_782_400_000), "Tue Feb 29 00:00:00 UTC 2000");
    }
}
