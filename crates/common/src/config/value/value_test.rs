//! Tests of the value parsers: every accepted form, and the refusals that
//! keep a bad value from turning into a surprising one.

#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn bool_accepts_true_false_in_any_case() {
    assert_eq!(parse_bool("true"), Ok(true));
    assert_eq!(parse_bool("TRUE"), Ok(true));
    assert_eq!(parse_bool(" True "), Ok(true));
    assert_eq!(parse_bool("false"), Ok(false));
    assert_eq!(parse_bool("FaLsE"), Ok(false));
}

#[test]
fn bool_refuses_anything_else() {
    for bad in ["yes", "no", "1", "0", "on", "", "tru", "true!"] {
        assert!(parse_bool(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn unsigned_integers_decimal_and_hex() {
    assert_eq!(parse_u64("0"), Ok(0));
    assert_eq!(parse_u64(" 42 "), Ok(42));
    assert_eq!(parse_u64("+7"), Ok(7));
    assert_eq!(parse_u64("0x1F"), Ok(31));
    assert_eq!(parse_u64("0XfF"), Ok(255));
    assert_eq!(parse_u64("18446744073709551615"), Ok(u64::MAX));
    assert_eq!(parse_u32("4294967295"), Ok(u32::MAX));
}

#[test]
fn unsigned_integers_refuse_negative_overflow_and_garbage() {
    assert_eq!(parse_u64("-1").unwrap_err(), "must not be negative");
    assert!(parse_u64("18446744073709551616")
        .unwrap_err()
        .contains("too large"));
    assert!(parse_u64("0x10000000000000000")
        .unwrap_err()
        .contains("too large"));
    assert!(parse_u32("4294967296").unwrap_err().contains("too large"));
    for bad in [
        "", "1.5", "12x", "0x", "0xg", "1 000", "+", "+-1", "1e3", "three",
    ] {
        assert!(parse_u64(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn signed_integers() {
    assert_eq!(parse_i64("-5"), Ok(-5));
    assert_eq!(parse_i64("-0x10"), Ok(-16));
    assert_eq!(parse_i64("9223372036854775807"), Ok(i64::MAX));
    assert_eq!(parse_i64("-9223372036854775808"), Ok(i64::MIN));
    assert!(parse_i64("9223372036854775808").is_err());
    assert!(parse_i64("-9223372036854775809").is_err());
    assert!(parse_i64("--1").is_err());
    assert!(parse_i64("-").is_err());
}

#[test]
fn bytes_with_binary_suffixes() {
    assert_eq!(parse_bytes("512"), Ok(512));
    assert_eq!(parse_bytes("4k"), Ok(4096));
    assert_eq!(parse_bytes("4K"), Ok(4096));
    assert_eq!(parse_bytes("128m"), Ok(134_217_728));
    assert_eq!(parse_bytes("128M"), Ok(134_217_728));
    assert_eq!(parse_bytes("1g"), Ok(1 << 30));
    assert_eq!(parse_bytes("1t"), Ok(1 << 40));
    assert_eq!(parse_bytes("1p"), Ok(1 << 50));
    assert_eq!(parse_bytes("1e"), Ok(1 << 60));
    assert_eq!(parse_bytes("7e"), Ok(7 << 60));
    assert_eq!(parse_bytes(" 64 k "), Ok(64 * 1024));
    assert_eq!(parse_bytes("0m"), Ok(0));
    assert_eq!(parse_bytes("9223372036854775807"), Ok(i64::MAX as u64));
}

#[test]
fn bytes_refuse_overflow_beyond_hadoops_long() {
    for bad in [
        "8e",
        "8388608t",
        "9223372036854775808",
        "99999999999999999999",
        "16384p",
    ] {
        let reason = parse_bytes(bad).unwrap_err();
        assert!(reason.contains("too large"), "{bad:?}: {reason}");
    }
}

#[test]
fn bytes_refuse_negatives_fractions_and_unknown_suffixes() {
    assert_eq!(parse_bytes("-1").unwrap_err(), "must not be negative");
    assert_eq!(parse_bytes("-1k").unwrap_err(), "must not be negative");
    assert!(parse_bytes("128mb")
        .unwrap_err()
        .contains("unknown size suffix 'b'"));
    assert!(parse_bytes("12x")
        .unwrap_err()
        .contains("unknown size suffix 'x'"));
    for bad in ["", "k", "1.5g", "0x10", "m128", "1kk", "one", "1 2k"] {
        assert!(parse_bytes(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn durations_with_suffixes() {
    let s = TimeUnit::Seconds;
    assert_eq!(parse_duration("7ns", s), Ok(Duration::from_nanos(7)));
    assert_eq!(parse_duration("8us", s), Ok(Duration::from_micros(8)));
    assert_eq!(parse_duration("10000ms", s), Ok(Duration::from_secs(10)));
    assert_eq!(parse_duration("5MS", s), Ok(Duration::from_millis(5)));
    assert_eq!(parse_duration("3s", s), Ok(Duration::from_secs(3)));
    assert_eq!(parse_duration("5m", s), Ok(Duration::from_secs(300)));
    assert_eq!(parse_duration("2h", s), Ok(Duration::from_secs(7200)));
    assert_eq!(parse_duration("1d", s), Ok(Duration::from_secs(86_400)));
    assert_eq!(parse_duration(" 30 s ", s), Ok(Duration::from_secs(30)));
}

#[test]
fn durations_bare_numbers_use_the_default_unit() {
    assert_eq!(
        parse_duration("3", TimeUnit::Seconds),
        Ok(Duration::from_secs(3))
    );
    assert_eq!(
        parse_duration("10000", TimeUnit::Milliseconds),
        Ok(Duration::from_secs(10))
    );
    assert_eq!(
        parse_duration("1440", TimeUnit::Minutes),
        Ok(Duration::from_secs(86_400))
    );
}

#[test]
fn durations_refuse_bad_values() {
    let s = TimeUnit::Seconds;
    assert_eq!(
        parse_duration("-1s", s).unwrap_err(),
        "must not be negative"
    );
    assert_eq!(parse_duration("-1", s).unwrap_err(), "must not be negative");
    for bad in ["", "s", "1.5s", "5x", "5 sec", "five", "1w", "0x10s"] {
        assert!(parse_duration(bad, s).is_err(), "{bad:?} accepted");
    }
    let reason = parse_duration("18446744073709551615d", s).unwrap_err();
    assert!(reason.contains("too large"), "{reason}");
    assert!(parse_duration("18446744073709551615s", s).is_ok());
}

#[test]
fn time_unit_conversion_and_overflow() {
    assert_eq!(TimeUnit::Hours.duration(2), Some(Duration::from_secs(7200)));
    assert_eq!(TimeUnit::Minutes.duration(u64::MAX), None);
    assert_eq!(TimeUnit::Days.suffix(), "d");
    assert_eq!(TimeUnit::Milliseconds.to_string(), "milliseconds");
}

#[test]
fn lists_are_trimmed_and_drop_empties() {
    assert_eq!(split_list("a, b ,,c\n d ,"), ["a", "b", "c", "d"]);
    assert_eq!(split_list("/data/1,\r\n/data/2"), ["/data/1", "/data/2"]);
    assert!(split_list("").is_empty());
    assert!(split_list(" , \n ").is_empty());
}

#[test]
fn host_port_forms() {
    let hp = parse_host_port("nn.example.com:8020", None).unwrap();
    assert_eq!((hp.host(), hp.port()), ("nn.example.com", 8020));
    assert_eq!(hp.to_string(), "nn.example.com:8020");

    let hp = parse_host_port(" 0.0.0.0:0 ", None).unwrap();
    assert_eq!((hp.host(), hp.port()), ("0.0.0.0", 0));

    let hp = parse_host_port("[::1]:9000", None).unwrap();
    assert_eq!((hp.host(), hp.port()), ("::1", 9000));
    assert_eq!(hp.to_string(), "[::1]:9000");

    let hp = parse_host_port("nn", Some(8020)).unwrap();
    assert_eq!(hp.port(), 8020);
    assert_eq!(parse_host_port("[::1]", Some(1)).unwrap().port(), 1);
    assert_eq!(
        parse_host_port("my_host-1:5", None).unwrap().host(),
        "my_host-1"
    );
}

#[test]
fn host_port_refusals() {
    assert!(parse_host_port("nn", None)
        .unwrap_err()
        .contains("missing port"));
    assert!(parse_host_port(":8020", None)
        .unwrap_err()
        .contains("missing host"));
    assert!(parse_host_port("nn:65536", None)
        .unwrap_err()
        .contains("65535"));
    assert!(parse_host_port("nn:-1", None).is_err());
    assert!(parse_host_port("nn:abc", None).is_err());
    assert!(parse_host_port("::1:80", None)
        .unwrap_err()
        .contains("brackets"));
    assert!(parse_host_port("[::1:80", None).is_err());
    assert!(parse_host_port("[nn]:80", None).is_err());
    assert!(parse_host_port("[::1]80", None).is_err());
    assert!(parse_host_port("a b:1", None).is_err());
    assert!(parse_host_port("hdfs://nn:1", None).is_err());
    assert!(parse_host_port("", None).is_err());
    assert!(parse_host_port("nn:", None).is_err());
}

#[test]
fn hdfs_uris() {
    let cases = [
        ("hdfs://nn:9000", "nn", 9000),
        ("hdfs://nn", "nn", 8020),
        ("hdfs://nn/", "nn", 8020),
        ("HDFS://NN:9000/", "NN", 9000),
        ("hdfs://user@nn:1/some/path?x#y", "nn", 1),
        ("hdfs://[::1]:8021", "::1", 8021),
        ("hdfs://nn:/", "nn", 8020),
        ("nn:9000", "nn", 9000),
        ("nn", "nn", 8020),
    ];
    for (text, host, port) in cases {
        let hp = parse_hdfs_uri(text).unwrap();
        assert_eq!((hp.host(), hp.port()), (host, port), "{text}");
    }
}

#[test]
fn hdfs_uris_refuse_other_schemes_and_missing_hosts() {
    assert!(parse_hdfs_uri("file:///").unwrap_err().contains("\"file\""));
    assert!(parse_hdfs_uri("viewfs://cluster")
        .unwrap_err()
        .contains("\"viewfs\""));
    assert!(parse_hdfs_uri("webhdfs://nn:9870").is_err());
    assert!(parse_hdfs_uri("hdfs:///").unwrap_err().contains("no host"));
    for bad in [
        "",
        "local",
        "file:/tmp",
        "/tmp",
        "hdfs://nn:http",
        "hdfs://nn:99999",
    ] {
        assert!(parse_hdfs_uri(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn resolve_literals_and_localhost_without_dns() {
    let v4 = HostPort::new("127.0.0.1", 5).resolve().unwrap();
    assert_eq!(v4, "127.0.0.1:5".parse().unwrap());
    let v6 = HostPort::new("::1", 6).resolve().unwrap();
    assert_eq!(v6, "[::1]:6".parse().unwrap());
    for name in ["localhost", "LocalHost"] {
        let local = HostPort::new(name, 8020).resolve().unwrap();
        assert_eq!(local, "127.0.0.1:8020".parse().unwrap());
    }
}
