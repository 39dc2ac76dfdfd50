//! Configuration as Hadoop users expect it: `core-site.xml`/`hdfs-site.xml`
//! from `--conf DIR` or `$HADOOP_CONF_DIR`, `-D key=value` overrides,
//! size suffixes, unknown keys ignored, and invalid values refused at
//! start-up with a message naming the key.

mod common;

use std::net::TcpListener;
use std::process::Command;
use std::time::Duration;

use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::CLIENT_PROTOCOL;
use cairn_rpc::client::Client;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

fn write_site(dir: &std::path::Path, file: &str, props: &[(&str, &str)]) {
    let mut xml = String::from("<?xml version=\"1.0\"?>\n<configuration>\n");
    for (k, v) in props {
        xml.push_str(&format!(
            "  <property><name>{k}</name><value>{v}</value></property>\n"
        ));
    }
    xml.push_str("</configuration>\n");
    std::fs::write(dir.join(file), xml).expect("write site file");
}

struct Kill(std::process::Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn server_defaults(port: u16) -> pb::FsServerDefaultsProto {
    let addr = format!("127.0.0.1:{port}").parse().expect("addr");
    let mut last = None;
    for _ in 0..100 {
        match Client::connect(addr, "someone", CLIENT_PROTOCOL).await {
            Ok(c) => {
                let r: pb::GetServerDefaultsResponseProto = c
                    .call("getServerDefaults", &pb::GetServerDefaultsRequestProto {})
                    .await
                    .expect("getServerDefaults");
                return r.server_defaults;
            }
            Err(e) => last = Some(e),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("NameNode never answered on {port}: {last:?}");
}

#[tokio::test]
async fn site_files_and_overrides_configure_the_namenode() {
    // Goal: the NameNode takes its address from fs.defaultFS in
    // core-site.xml, sizes with suffixes from hdfs-site.xml, ignores unknown
    // keys, and lets -D override a file's value.
    let conf = tempfile::tempdir().expect("conf dir");
    let data = tempfile::tempdir().expect("data dir");
    common::format_namenode(data.path(), &[]);
    let port = free_port();
    write_site(
        conf.path(),
        "core-site.xml",
        &[
            ("fs.defaultFS", &format!("hdfs://127.0.0.1:{port}")),
            ("some.unknown.key", "whatever"),
        ],
    );
    write_site(
        conf.path(),
        "hdfs-site.xml",
        &[("dfs.blocksize", "32m"), ("dfs.replication", "2")],
    );
    let child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--conf")
        .arg(conf.path())
        .args(["-D", "dfs.replication=1"])
        .args(["-D", "dfs.namenode.http-address=127.0.0.1:0"])
        .args(["namenode", "--dir"])
        .arg(data.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let first = Kill(child);
    let d = server_defaults(port).await;
    assert_eq!(d.block_size, 32 << 20);
    assert_eq!(d.replication, 1, "-D wins over hdfs-site.xml");
    // The second NameNode uses the same directory: the first must be gone
    // (two writing one edit log interfere; the second could stop and reset
    // the connection the client had just made).
    drop(first);

    // The same through $HADOOP_CONF_DIR, with another port.
    let port2 = free_port();
    write_site(
        conf.path(),
        "core-site.xml",
        &[("fs.defaultFS", &format!("hdfs://127.0.0.1:{port2}"))],
    );
    let child = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .env("HADOOP_CONF_DIR", conf.path())
        .args(["-D", "dfs.namenode.http-address=127.0.0.1:0"])
        .args(["namenode", "--dir"])
        .arg(data.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let _guard2 = Kill(child);
    let d = server_defaults(port2).await;
    assert_eq!((d.block_size, d.replication), (32 << 20, 2));
}

#[test]
fn invalid_values_stop_start_up_naming_the_key() {
    // Goal: a bad value (from -D or from a site file) makes `cairn namenode`
    // exit with an error that names the key, before serving anything.
    let data = tempfile::tempdir().expect("data dir");
    common::format_namenode(data.path(), &[]);
    for (key, value) in [
        ("dfs.replication", "three"),
        ("dfs.blocksize", "12x"),
        ("dfs.namenode.handler.count", "0"),
        ("ipc.maximum.data.length", "-5"),
        ("dfs.permissions.enabled", "maybe"),
    ] {
        let out = common::output_within(
            Command::new(env!("CARGO_BIN_EXE_cairn"))
                .args(["-D", &format!("{key}={value}")])
                .args(["namenode", "--dir"])
                .arg(data.path())
                .args(["--rpc-address", "127.0.0.1:0"]),
            Duration::from_secs(900),
            "run",
        );
        assert!(!out.status.success(), "{key}={value} must be refused");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(key),
            "{key}={value}: message must name the key: {err}"
        );
    }
    let conf = tempfile::tempdir().expect("conf dir");
    write_site(conf.path(), "hdfs-site.xml", &[("dfs.ls.limit", "lots")]);
    let start_with_conf = || {
        common::output_within(
            Command::new(env!("CARGO_BIN_EXE_cairn"))
                .arg("--conf")
                .arg(conf.path())
                .args(["namenode", "--dir"])
                .arg(data.path())
                .args(["--rpc-address", "127.0.0.1:0"]),
            Duration::from_secs(900),
            "cairn namenode",
        )
    };
    let out = start_with_conf();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("dfs.ls.limit") && err.contains("hdfs-site.xml"),
        "{err}"
    );
    // Malformed XML names the file.
    std::fs::write(
        conf.path().join("core-site.xml"),
        "<configuration><property>",
    )
    .expect("write");
    let out = start_with_conf();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("core-site.xml"));
}
