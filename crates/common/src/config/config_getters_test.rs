//! Tests of [`Configuration`]'s typed getters (their errors name the key,
//! the value and where it came from), the NameNode address, and odds and
//! ends. Loading, overrides and substitution: `config_test.rs`.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use super::config_test::{conf_with, empty_conf, env, load_dir, site_xml, write};
use super::*;

// --- typed getters -------------------------------------------------------

#[test]
fn getters_return_defaults_when_unset_or_empty() {
    let conf = conf_with(&[("empty", "")]);
    for key in ["unset", "empty"] {
        assert!(conf.get_bool(key, true).unwrap());
        assert_eq!(conf.get_u32(key, 7).unwrap(), 7);
        assert_eq!(conf.get_u64(key, 8).unwrap(), 8);
        assert_eq!(conf.get_i64(key, -9).unwrap(), -9);
        assert_eq!(conf.get_bytes(key, 10).unwrap(), 10);
        let d = Duration::from_secs(11);
        assert_eq!(conf.get_duration(key, TimeUnit::Seconds, d).unwrap(), d);
        assert_eq!(conf.get_str_or(key, "dflt").unwrap(), "dflt");
        assert!(conf.get_strings(key).unwrap().is_empty());
        assert_eq!(
            conf.get_host_port(key, "h:1").unwrap(),
            HostPort::new("h", 1)
        );
    }
    assert_eq!(conf.get_str("empty").unwrap(), Some(""));
    assert_eq!(conf.get_str("unset").unwrap(), None);
}

#[test]
fn getters_parse_values() {
    let conf = conf_with(&[
        (keys::DFS_PERMISSIONS_ENABLED, "FALSE"),
        (keys::DFS_REPLICATION, "2"),
        (keys::DFS_BLOCKSIZE, "256m"),
        (keys::DFS_HEARTBEAT_INTERVAL, "5"),
        (keys::IPC_CLIENT_CONNECTION_MAXIDLETIME, "10000"),
        (keys::DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL, "2m"),
        ("big", "0x10"),
        ("neg", "-3"),
        (keys::DFS_DATANODE_ADDRESS, "localhost:50010"),
    ]);
    assert!(!conf.get_bool(keys::DFS_PERMISSIONS_ENABLED, true).unwrap());
    assert_eq!(conf.get_u32(keys::DFS_REPLICATION, 3).unwrap(), 2);
    assert_eq!(conf.get_bytes(keys::DFS_BLOCKSIZE, 0).unwrap(), 256 << 20);
    let heartbeat = conf
        .get_duration(
            keys::DFS_HEARTBEAT_INTERVAL,
            keys::DFS_HEARTBEAT_INTERVAL_UNIT,
            keys::DFS_HEARTBEAT_INTERVAL_DEFAULT,
        )
        .unwrap();
    assert_eq!(heartbeat, Duration::from_secs(5));
    let idle = conf
        .get_duration(
            keys::IPC_CLIENT_CONNECTION_MAXIDLETIME,
            keys::IPC_CLIENT_CONNECTION_MAXIDLETIME_UNIT,
            keys::IPC_CLIENT_CONNECTION_MAXIDLETIME_DEFAULT,
        )
        .unwrap();
    assert_eq!(idle, Duration::from_secs(10));
    let recheck = conf
        .get_duration(
            keys::DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL,
            keys::DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL_UNIT,
            keys::DFS_NAMENODE_HEARTBEAT_RECHECK_INTERVAL_DEFAULT,
        )
        .unwrap();
    assert_eq!(recheck, Duration::from_secs(120));
    assert_eq!(conf.get_u64("big", 0).unwrap(), 16);
    assert_eq!(conf.get_i64("neg", 0).unwrap(), -3);
    let addr = conf
        .get_socket_addr(
            keys::DFS_DATANODE_ADDRESS,
            keys::DFS_DATANODE_ADDRESS_DEFAULT,
        )
        .unwrap();
    assert_eq!(addr, "127.0.0.1:50010".parse().unwrap());
    let addr = conf
        .get_socket_addr(
            keys::DFS_DATANODE_IPC_ADDRESS,
            keys::DFS_DATANODE_IPC_ADDRESS_DEFAULT,
        )
        .unwrap();
    assert_eq!(addr, "0.0.0.0:9867".parse().unwrap());
}

#[test]
fn getter_errors_name_the_key_the_value_and_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "hdfs-site.xml",
        &site_xml(&[
            ("dfs.replication", "three", false),
            ("dfs.blocksize", "128mb", false),
            ("dfs.permissions.enabled", "yes", false),
            ("dfs.heartbeat.interval", "-3s", false),
            ("dfs.namenode.handler.count", "99999999999", false),
            ("dfs.datanode.address", "0.0.0.0", false),
            ("ipc.maximum.data.length", "-1", false),
        ]),
    );
    let conf = load_dir(dir.path()).unwrap();
    let errors = [
        (
            "dfs.replication",
            "three",
            conf.get_u32("dfs.replication", 3).unwrap_err(),
        ),
        (
            "dfs.blocksize",
            "128mb",
            conf.get_bytes("dfs.blocksize", 1).unwrap_err(),
        ),
        (
            "dfs.permissions.enabled",
            "yes",
            conf.get_bool("dfs.permissions.enabled", true).unwrap_err(),
        ),
        (
            "dfs.heartbeat.interval",
            "-3s",
            conf.get_duration("dfs.heartbeat.interval", TimeUnit::Seconds, Duration::ZERO)
                .unwrap_err(),
        ),
        (
            "dfs.namenode.handler.count",
            "99999999999",
            conf.get_u32("dfs.namenode.handler.count", 10).unwrap_err(),
        ),
        (
            "dfs.datanode.address",
            "0.0.0.0",
            conf.get_socket_addr("dfs.datanode.address", "0.0.0.0:9866")
                .unwrap_err(),
        ),
        (
            "ipc.maximum.data.length",
            "-1",
            conf.get_bytes("ipc.maximum.data.length", 1).unwrap_err(),
        ),
    ];
    for (key, value, err) in errors {
        assert!(
            matches!(&err, ConfigError::InvalidValue { key: k, value: v, origin: Origin::File(f), .. }
                if k == key && v == value && *f == file),
            "{err:?}"
        );
        let message = err.to_string();
        assert!(message.contains(key), "{message}");
        assert!(message.contains(&format!("{value:?}")), "{message}");
        assert!(message.contains(file.to_str().unwrap()), "{message}");
    }
}

#[test]
fn error_message_reads_well() {
    let mut conf = empty_conf();
    conf.apply_overrides(&["dfs.blocksize=12x".to_owned()])
        .unwrap();
    let message = conf
        .get_bytes(keys::DFS_BLOCKSIZE, 0)
        .unwrap_err()
        .to_string();
    assert_eq!(
        message,
        "invalid value \"12x\" for configuration key dfs.blocksize (set by -D on the command \
         line): unknown size suffix 'x'; expected a number of bytes, optionally followed by k, \
         m, g, t, p or e"
    );
}

#[test]
fn bad_default_address_is_reported_as_the_default() {
    let conf = empty_conf();
    let message = conf
        .get_host_port("some.address", "no-port")
        .unwrap_err()
        .to_string();
    assert!(message.contains("some.address"), "{message}");
    assert!(message.contains("built-in default"), "{message}");
}

#[test]
fn values_from_substitution_are_trimmed_before_parsing() {
    let conf = Configuration {
        env: env(&[("REPL", "  2  ")]),
        ..Configuration::default()
    };
    let mut conf = conf;
    conf.set("dfs.replication", "${env.REPL}");
    assert_eq!(conf.get_u32("dfs.replication", 3).unwrap(), 2);
}

// --- NameNode address ----------------------------------------------------

#[test]
fn namenode_address_prefers_rpc_address_then_default_fs() {
    let conf = conf_with(&[
        (keys::FS_DEFAULT_FS, "hdfs://fs-host:9000"),
        (keys::DFS_NAMENODE_RPC_ADDRESS, "rpc-host"),
    ]);
    assert_eq!(
        conf.namenode_rpc_address().unwrap(),
        HostPort::new("rpc-host", 8020)
    );

    let conf = conf_with(&[(keys::FS_DEFAULT_FS, "hdfs://fs-host:9000/")]);
    assert_eq!(
        conf.namenode_rpc_address().unwrap(),
        HostPort::new("fs-host", 9000)
    );

    let conf = conf_with(&[(keys::FS_DEFAULT_FS, "hdfs://fs-host")]);
    assert_eq!(
        conf.namenode_rpc_address().unwrap(),
        HostPort::new("fs-host", 8020)
    );
}

#[test]
fn namenode_address_errors_name_the_key() {
    let message = empty_conf().namenode_rpc_address().unwrap_err().to_string();
    assert!(message.contains("fs.defaultFS"), "{message}");
    assert!(message.contains("file:///"), "{message}");

    let conf = conf_with(&[(keys::FS_DEFAULT_FS, "viewfs://cluster/")]);
    let message = conf.namenode_rpc_address().unwrap_err().to_string();
    assert!(
        message.contains("fs.defaultFS") && message.contains("viewfs"),
        "{message}"
    );

    let conf = conf_with(&[(keys::DFS_NAMENODE_RPC_ADDRESS, "nn:port")]);
    let message = conf.namenode_rpc_address().unwrap_err().to_string();
    assert!(message.contains("dfs.namenode.rpc-address"), "{message}");
}

#[test]
fn parse_hdfs_uri_names_the_key() {
    assert_eq!(
        parse_hdfs_uri("--namenode", "hdfs://a:1").unwrap(),
        HostPort::new("a", 1)
    );
    let message = parse_hdfs_uri("--namenode", "s3a://bucket")
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("--namenode") && message.contains("s3a"),
        "{message}"
    );
}

// --- odds and ends -------------------------------------------------------

#[test]
fn find_variable_matches_hadoop() {
    assert_eq!(find_variable("${a}"), Some((0, 4)));
    assert_eq!(find_variable("x${ab}y"), Some((1, 6)));
    assert_eq!(find_variable("${}${a}"), Some((3, 7)));
    assert_eq!(find_variable("${a b}${c}"), Some((6, 10)));
    assert_eq!(find_variable("$${c}"), Some((1, 5)));
    assert_eq!(find_variable("${a$b}"), None);
    assert_eq!(find_variable("${abc"), None);
    assert_eq!(find_variable("é${ü}"), Some((2, 7)));
    assert_eq!(find_variable("plain"), None);
}

#[test]
fn keys_and_values_are_trimmed_on_set() {
    let mut conf = empty_conf();
    conf.set("  k  ", "  v  ");
    assert_eq!(conf.get("k"), Some("v"));
    assert_eq!(conf.origin("k"), Some(&Origin::Programmatic));
}

#[test]
fn errors_and_configuration_cross_threads() {
    fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<ConfigError>();
    send_sync::<Configuration>();
}

#[test]
fn invalid_value_reports_where_the_value_came_from() {
    let mut conf = empty_conf();
    conf.apply_overrides(&["dfs.replication=0".to_owned()])
        .unwrap();
    let err = conf.invalid_value(keys::DFS_REPLICATION, 0, "must be at least 1");
    assert_eq!(
        err.to_string(),
        "invalid value \"0\" for configuration key dfs.replication \
         (set by -D on the command line): must be at least 1"
    );
    let err = conf.invalid_value(keys::DFS_BLOCKSIZE, 5, "too small");
    assert!(err.to_string().contains("(built-in default)"), "{err}");
}

#[test]
fn default_durations_are_shown_in_their_unit() {
    let conf = Configuration::new();
    let read = |key: &str, unit: TimeUnit, d: Duration| {
        assert_eq!(conf.get_duration(key, unit, d).ok(), Some(d));
    };
    read("a.secs", TimeUnit::Seconds, Duration::from_secs(30));
    read("b.secs", TimeUnit::Seconds, Duration::from_millis(1500));
    read("c.ms", TimeUnit::Milliseconds, Duration::from_micros(2));
    let shown: Vec<(String, String)> = conf
        .effective()
        .into_iter()
        .map(|(k, v, _)| (k, v))
        .collect();
    assert_eq!(
        shown,
        [
            ("a.secs".to_string(), "30".to_string()),
            ("b.secs".to_string(), "1500ms".to_string()),
            ("c.ms".to_string(), "2us".to_string()),
        ]
    );
}
