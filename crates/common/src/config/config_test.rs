//! Tests of [`Configuration`]: loading files with Hadoop's override and final
//! rules, `-D` overrides and `${...}` substitution. The typed getters:
//! `config_getters_test.rs`.

#![allow(clippy::unwrap_used)]

use std::fs;

use super::*;

/// Environment seen by `${env.*}`, `${user.name}` and `$HADOOP_CONF_DIR`.
pub(super) fn env(vars: &[(&str, &str)]) -> Env {
    Env {
        fixed: Some(
            vars.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        ),
    }
}

pub(super) fn empty_conf() -> Configuration {
    Configuration {
        env: env(&[("USER", "alice")]),
        ..Configuration::default()
    }
}

pub(super) fn conf_with(pairs: &[(&str, &str)]) -> Configuration {
    let mut conf = empty_conf();
    for (key, value) in pairs {
        conf.set(key, value);
    }
    conf
}

/// A `<configuration>` with one `<property>` per `(name, value, final)`.
pub(super) fn site_xml(properties: &[(&str, &str, bool)]) -> String {
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

pub(super) fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path
}

pub(super) fn load_dir(dir: &Path) -> Result<Configuration, ConfigError> {
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
