//! The wall clock as Hadoop's messages carry it: milliseconds since the
//! Unix epoch (modification times, expiries, report times).

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the epoch; 0 for a clock set before it.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// [`now_ms`] as the signed milliseconds of Java's `long` fields.
pub fn now_ms_signed() -> i64 {
    i64::try_from(now_ms()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_is_after_2020_and_fits_both_types() {
        let ms = now_ms();
        assert!(ms > 1_577_836_800_000, "{ms}");
        assert_eq!(
            u64::try_from(now_ms_signed()).ok().map(|s| s >= ms),
            Some(true)
        );
    }
}
