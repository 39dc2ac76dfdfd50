//! Tests of [`Configuration`]: loading files with Hadoop's override and final
//! rules, `-D` overrides, `${...}` substitution, and the typed getters'
//! errors, which must name the key and the value.

#![allow(clippy::unwrap_used)]

use std::fs;
use std::time::Duration;

use super::*;

/// Environment seen by `${env.*}`, `${user.name}` and `$HADOOP_CONF_DIR`.
fn env(vars: &[(&str, &str)]) -> Env {
    Env {
        fixed: Some(
            vars.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        ),
    }
}

fn empty_conf() -> Configuration {
    Configuration {
        env: env(&[("USER", "alice")]),
        ..Configuration::default()
    }
}

fn conf_with(pairs: &[(&str, &str)]) -> Configuration {
    let mut conf = empty_conf();
    for (key, value) in pairs {
        conf.set(key, value);
    }
    conf
}

/// A `<configuration>` with one `<property>` per `(name, value, final)`.
fn site_xml(properties: &[(&str, &str, bool)]) -> String {
    let mut xml = String::from("<?xml version=\"1.0\"?>\n<configuration>\n");
    for (name, value, is_final) in properties {
        xml.push_str(&format!(
            "  <property>\n    <name>{name}</name>\n    <value>{value}</value>\n"
        ));
        if *is_final {
            xml.push_str("    <final>true</final>\n");
        }
        xml.push_str("  </property>\n");
    }
    xml.push_str("</configuration>\n");
    xml
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path
}

fn load_dir(dir: &Path) -> Result<Configuration, ConfigError> {
    Configuration::load_with_env(Some(dir), env(&[("USER", "alice")]))
}

// --- loading -------------------------------------------------------------

#[test]
fn no_directory_means_only_defaults() {
    let conf = Configuration::load_with_env(None, env(&[])).unwrap();
    assert!(conf.is_empty());
    assert_eq!(conf.get_u32(keys::DFS_REPLICATION, 3).unwrap(), 3);

    let conf = Configuration::load_with_env(None, env(&[(HADOOP_CONF_DIR_ENV, "")])).unwrap();
    assert!(conf.is_empty());
}

#[test]
fn missing_files_are_fine() {
    let dir = tempfile::tempdir().unwrap();
    assert!(load_dir(dir.path()).unwrap().is_empty());

    write(
        dir.path(),
        "hdfs-site.xml",
        &site_xml(&[("dfs.replication", "2", false)]),
    );
    let conf = load_dir(dir.path()).unwrap();
    assert_eq!(conf.get("dfs.replication"), Some("2"));
}

#[test]
fn missing_directory_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-conf");
    let err = load_dir(&missing).unwrap_err();
    assert!(matches!(err, ConfigError::ConfDir { .. }), "{err:?}");
    assert!(err.to_string().contains("no-such-conf"), "{err}");

    let file = write(dir.path(), "plain-file", "");
    let err = load_dir(&file).unwrap_err();
    assert!(err.to_string().contains("not a directory"), "{err}");
}

#[test]
fn hadoop_conf_dir_is_used_when_no_dir_is_given() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "core-site.xml",
        &site_xml(&[("fs.defaultFS", "hdfs://nn:9000", false)]),
    );
    let dir_text = dir.path().to_str().unwrap();

    let conf = Configuration::load_with_env(None, env(&[(HADOOP_CONF_DIR_ENV, dir_text)])).unwrap();
    assert_eq!(conf.get("fs.defaultFS"), Some("hdfs://nn:9000"));

    // An explicit directory wins over the variable.
    let other = tempfile::tempdir().unwrap();
    let conf =
        Configuration::load_with_env(Some(other.path()), env(&[(HADOOP_CONF_DIR_ENV, dir_text)]))
            .unwrap();
    assert!(conf.is_empty());
}

#[test]
fn hdfs_site_overrides_core_site() {
    let dir = tempfile::tempdir().unwrap();
    let core = write(
        dir.path(),
        "core-site.xml",
        &site_xml(&[("dfs.replication", "1", false), ("only.core", "c", false)]),
    );
    let hdfs = write(
        dir.path(),
        "hdfs-site.xml",
        &site_xml(&[("dfs.replication", "2", false)]),
    );
    let conf = load_dir(dir.path()).unwrap();
    assert_eq!(conf.get("dfs.replication"), Some("2"));
    assert_eq!(conf.get("only.core"), Some("c"));
    assert_eq!(conf.origin("dfs.replication"), Some(&Origin::File(hdfs)));
    assert_eq!(conf.origin("only.core"), Some(&Origin::File(core)));
}

#[test]
fn final_values_survive_later_files_but_not_set_or_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let core = write(
        dir.path(),
        "core-site.xml",
        &site_xml(&[("dfs.replication", "1", true)]),
    );
    write(
        dir.path(),
        "hdfs-site.xml",
        &site_xml(&[("dfs.replication", "2", false)]),
    );
    let mut conf = load_dir(dir.path()).unwrap();
    assert_eq!(conf.get("dfs.replication"), Some("1"));
    assert!(conf.is_final("dfs.replication"));
    assert_eq!(conf.origin("dfs.replication"), Some(&Origin::File(core)));

    // A third file cannot override either.
    let extra = write(
        dir.path(),
        "extra.xml",
        &site_xml(&[("dfs.replication", "5", false)]),
    );
    assert!(conf.merge_file(&extra).unwrap());
    assert_eq!(conf.get("dfs.replication"), Some("1"));

    // -D and set() do, as in Hadoop.
    conf.apply_overrides(&["dfs.replication=4".to_owned()])
        .unwrap();
    assert_eq!(conf.get("dfs.replication"), Some("4"));
    assert_eq!(conf.origin("dfs.replication"), Some(&Origin::Override));
    conf.set("dfs.replication", "6");
    assert_eq!(conf.get("dfs.replication"), Some("6"));
}

#[test]
fn final_within_one_file_and_final_without_value() {
    let conf_text = site_xml(&[
        ("a", "first", true),
        ("a", "second", false),
        ("b", "", true),
    ]);
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "core-site.xml", &conf_text);
    write(
        dir.path(),
        "hdfs-site.xml",
        &site_xml(&[("b", "late", false)]),
    );
    let conf = load_dir(dir.path()).unwrap();
    assert_eq!(conf.get("a"), Some("first"));
    // `b` was marked final with no value: it stays unset, as in Hadoop.
    assert!(conf.is_final("b"));
    assert_eq!(conf.get("b"), None);
}

#[test]
fn empty_value_does_not_clear_an_earlier_one() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "core-site.xml", &site_xml(&[("k", "v", false)]));
    write(
        dir.path(),
        "hdfs-site.xml",
        "<configuration><property><name>k</name><value></value></property>\
         <property><name>k</name></property></configuration>",
    );
    assert_eq!(load_dir(dir.path()).unwrap().get("k"), Some("v"));
}

#[test]
fn xml_forms_trimming_and_ignored_parts() {
    let text = r#"<?xml version="1.0" encoding="UTF-8"?>
<?xml-stylesheet type="text/xsl" href="configuration.xsl"?>
<!-- a comment -->
<configuration>
  <property>
    <name>  spaced.key  </name>
    <value>
       spaced value
    </value>
    <description>ignored</description>
    <source>ignored</source>
  </property>
  <property name="attr.key" value="attr value" final="true"/>
  <property name="both" value="from attribute"><value>from element</value></property>
  <property><value>no name, skipped</value></property>
  <property><name>  </name><value>blank name, skipped</value></property>
  <property><name>cdata</name><value><![CDATA[a<b>&c]]></value></property>
  <property><name>entity</name><value>x &amp; y</value></property>
  <property><name>final.spaced</name><value>v</value><final> true </final></property>
  <property><name>final.upper</name><value>v</value><final>TRUE</final></property>
</configuration>
"#;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "core-site.xml", text);
    let conf = load_dir(dir.path()).unwrap();
    assert_eq!(conf.get("spaced.key"), Some("spaced value"));
    assert_eq!(conf.get("attr.key"), Some("attr value"));
    assert!(conf.is_final("attr.key"));
    assert_eq!(conf.get("both"), Some("from element"));
    assert_eq!(conf.get("cdata"), Some("a<b>&c"));
    assert_eq!(conf.get("entity"), Some("x & y"));
    assert!(conf.is_final("final.spaced"));
    // Hadoop compares with "true" exactly.
    assert!(!conf.is_final("final.upper"));
    let keys: Vec<&str> = conf.iter().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        [
            "attr.key",
            "both",
            "cdata",
            "entity",
            "final.spaced",
            "final.upper",
            "spaced.key"
        ]
    );
}

#[test]
fn malformed_xml_is_an_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "core-site.xml", &site_xml(&[("a", "1", false)]));
    let bad = write(
        dir.path(),
        "hdfs-site.xml",
        "<configuration><property><name>x</name></configuration>",
    );
    let err = load_dir(dir.path()).unwrap_err();
    assert!(matches!(err, ConfigError::Xml { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains(bad.to_str().unwrap()), "{message}");
    assert!(message.contains("hdfs-site.xml"), "{message}");
}

#[test]
fn non_configuration_files_are_errors_naming_the_file() {
    let cases = [
        (
            "<properties><property name=\"a\" value=\"b\"/></properties>",
            "<properties>",
        ),
        (
            "<configuration xmlns:xi=\"http://www.w3.org/2001/XInclude\">\
             <xi:include href=\"other.xml\"/></configuration>",
            "include",
        ),
        ("", "core-site.xml"),
        ("not xml at all", "core-site.xml"),
    ];
    for (text, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "core-site.xml", text);
        let message = load_dir(dir.path()).unwrap_err().to_string();
        assert!(message.contains("core-site.xml"), "{message}");
        assert!(message.contains(expected), "{message}");
    }
}

#[test]
fn unreadable_and_oversized_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("core-site.xml")).unwrap();
    let err = load_dir(dir.path()).unwrap_err();
    assert!(matches!(err, ConfigError::Read { .. }), "{err:?}");
    assert!(err.to_string().contains("core-site.xml"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let size = usize::try_from(xml::MAX_FILE_BYTES).unwrap() + 1;
    write(dir.path(), "hdfs-site.xml", &" ".repeat(size));
    let err = load_dir(dir.path()).unwrap_err();
    assert!(matches!(err, ConfigError::File { .. }), "{err:?}");
    assert!(err.to_string().contains("larger than"), "{err}");
}

#[test]
fn merge_file_reports_missing_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut conf = empty_conf();
    assert!(!conf.merge_file(&dir.path().join("absent.xml")).unwrap());
}

#[test]
fn unknown_keys_are_kept_and_harmless() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "hdfs-site.xml",
        &site_xml(&[
            ("yarn.something", "whatever", false),
            ("loop.a", "${loop.b}", false),
            ("loop.b", "${loop.a}", false),
        ]),
    );
    let conf = load_dir(dir.path()).unwrap();
    assert_eq!(conf.get("yarn.something"), Some("whatever"));
    assert_eq!(conf.len(), 3);
}

// --- overrides -----------------------------------------------------------

#[test]
fn overrides_split_at_the_first_equals_and_trim() {
    let mut conf = empty_conf();
    conf.apply_overrides(&[
        "dfs.replication=2".to_owned(),
        " odd.key = a=b ".to_owned(),
        "empty.value=".to_owned(),
    ])
    .unwrap();
    assert_eq!(conf.get("dfs.replication"), Some("2"));
    assert_eq!(conf.get("odd.key"), Some("a=b"));
    assert_eq!(conf.get("empty.value"), Some(""));
    assert_eq!(conf.get_u32("empty.value", 9).unwrap(), 9);
}

#[test]
fn bad_overrides_are_errors_naming_the_argument_and_apply_nothing() {
    let mut conf = empty_conf();
    let err = conf
        .apply_overrides(&["a=1".to_owned(), "dfs.replication".to_owned()])
        .unwrap_err();
    assert!(matches!(err, ConfigError::Override { .. }), "{err:?}");
    assert!(err.to_string().contains("\"dfs.replication\""), "{err}");
    assert!(err.to_string().contains("key=value"), "{err}");
    assert_eq!(conf.get("a"), None);

    let err = conf.apply_overrides(&[" =3".to_owned()]).unwrap_err();
    assert!(err.to_string().contains("key is empty"), "{err}");
}

// --- substitution --------------------------------------------------------

#[test]
fn substitutes_other_keys() {
    let conf = conf_with(&[
        ("base", "/data"),
        ("dir", "${base}/nn"),
        ("dirs", "${dir}/1,${dir}/2"),
    ]);
    assert_eq!(conf.get("dir"), Some("/data/nn"));
    assert_eq!(conf.get("dirs"), Some("/data/nn/1,/data/nn/2"));
    assert_eq!(conf.get_raw("dir"), Some("${base}/nn"));
    assert_eq!(
        conf.get_strings("dirs").unwrap(),
        ["/data/nn/1", "/data/nn/2"]
    );
}

#[test]
fn substitution_follows_later_changes() {
    let mut conf = conf_with(&[("dir", "${base}/nn")]);
    assert_eq!(conf.get("dir"), Some("${base}/nn"));
    conf.set("base", "/x");
    assert_eq!(conf.get("dir"), Some("/x/nn"));
}

#[test]
fn unknown_variables_and_non_variables_stay_as_written() {
    let conf = conf_with(&[
        ("known", "K"),
        ("a", "a${undefined.var}b"),
        ("b", "${known}-${undefined}-${known}"),
        ("c", "${} ${a b} $known {known} $${known}"),
        ("d", "${known"),
    ]);
    assert_eq!(conf.get("a"), Some("a${undefined.var}b"));
    // Hadoop stops at the first unknown name.
    assert_eq!(conf.get("b"), Some("K-${undefined}-${known}"));
    assert_eq!(conf.get("c"), Some("${} ${a b} $known {known} $K"));
    assert_eq!(conf.get("d"), Some("${known"));
}

#[test]
fn environment_and_user_name() {
    let mut conf = Configuration {
        env: env(&[("USER", "alice"), ("DATA", "/mnt/d"), ("EMPTY", "")]),
        ..Configuration::default()
    };
    conf.set("plain", "${env.DATA}/x");
    conf.set(
        "colon.default",
        "${env.UNSET:-fallback}|${env.EMPTY:-fallback}|${env.DATA:-no}",
    );
    conf.set(
        "dash.default",
        "${env.UNSET-fallback}|${env.EMPTY-fallback}",
    );
    conf.set("unset", "${env.UNSET}");
    conf.set("user", "/home/${user.name}");
    conf.set("tmp", "${hadoop.tmp.dir}/dfs/name");
    assert_eq!(conf.get("plain"), Some("/mnt/d/x"));
    assert_eq!(conf.get("colon.default"), Some("fallback|fallback|/mnt/d"));
    assert_eq!(conf.get("dash.default"), Some("fallback|"));
    assert_eq!(conf.get("unset"), Some("${env.UNSET}"));
    assert_eq!(conf.get("user"), Some("/home/alice"));
    assert_eq!(conf.get("tmp"), Some("/tmp/hadoop-alice/dfs/name"));

    conf.set(keys::HADOOP_TMP_DIR, "/var/hadoop");
    assert_eq!(conf.get("tmp"), Some("/var/hadoop/dfs/name"));

    // Like Java's system property, user.name is not taken from the keys.
    conf.set("user.name", "mallory");
    assert_eq!(conf.get("user"), Some("/home/alice"));
}

#[test]
fn user_name_falls_back_to_logname() {
    let mut conf = Configuration {
        env: env(&[("LOGNAME", "bob")]),
        ..Configuration::default()
    };
    conf.set("u", "${user.name}");
    assert_eq!(conf.get("u"), Some("bob"));
}

#[test]
fn self_reference_is_left_unexpanded() {
    let conf = conf_with(&[("a", "x${a}"), ("b", "${b}")]);
    assert_eq!(conf.get("a"), Some("x${a}"));
    assert_eq!(conf.get_str("b").unwrap(), Some("${b}"));
}

#[test]
fn reference_loop_stops_and_is_an_error_naming_the_key() {
    let conf = conf_with(&[
        ("loop.a", "${loop.b}"),
        ("loop.b", "${loop.a}"),
        ("n", "${loop.a}"),
    ]);
    // get() cannot fail: it returns the value as written.
    assert_eq!(conf.get("loop.a"), Some("${loop.b}"));
    for key in ["loop.a", "n"] {
        let err = conf.get_str(key).unwrap_err();
        let message = err.to_string();
        assert!(message.contains(key), "{message}");
        assert!(message.contains("more than 20"), "{message}");
        assert!(conf.get_u32(key, 1).is_err());
        assert!(conf.get_strings(key).is_err());
    }
}

#[test]
fn substitution_depth_is_bounded_at_twenty() {
    let chain = |len: usize| {
        let mut conf = empty_conf();
        for i in 0..len {
            conf.set(&format!("k{i}"), &format!("${{k{}}}", i + 1));
        }
        conf.set(&format!("k{len}"), "end");
        conf
    };
    assert_eq!(chain(MAX_SUBSTITUTIONS).get_str("k0").unwrap(), Some("end"));
    assert!(chain(MAX_SUBSTITUTIONS + 1).get_str("k0").is_err());
}

#[test]
fn substitution_growth_is_bounded() {
    let mut conf = empty_conf();
    conf.set("base", &"a".repeat(100 * 1024));
    conf.set("small", &"${base}".repeat(5));
    conf.set("huge", &"${base}".repeat(11));
    assert_eq!(
        conf.get_str("small").unwrap().map(str::len),
        Some(500 * 1024)
    );
    let message = conf.get_str("huge").unwrap_err().to_string();
    assert!(
        message.contains("huge") && message.contains("longer than"),
        "{message}"
    );
}

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
