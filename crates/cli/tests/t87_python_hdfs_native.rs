//! hdfs-native's Python package (PyPI `hdfs-native`, the same Rust client
//! behind a Python API, plus its fsspec file system) against a NameNode
//! with three DataNodes: multi-block writes, ranged reads, append,
//! overwrite, the namespace setters, ACLs, the trash, the asyncio client
//! and fsspec, each answer checked (tests/python/hdfs_native_client.py).

mod common;

use std::process::Command;
use std::time::Duration;

use common::Cluster;

#[test]
fn python_hdfs_native_client_and_fsspec() {
    let Some(python) = common::python::python_venv("t87_python_hdfs_native") else {
        return;
    };
    // HDFS clients ask the NameNode whether the trash is on (its server
    // defaults), so the cluster turns it on.
    let cluster = Cluster::start(3, &["fs.trash.interval=60"]);
    let url = format!("hdfs://{}", cluster.nn.addr);
    let out = common::output_within(
        Command::new(&python)
            .arg(common::python::python_dir().join("hdfs_native_client.py"))
            .arg(&url)
            .arg("/python-hdfs-native"),
        Duration::from_secs(300),
        "hdfs_native_client.py",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.trim_end().ends_with("all checks passed"),
        "hdfs_native_client.py failed:\n{stdout}\n{}\nNameNode log:\n{}",
        String::from_utf8_lossy(&out.stderr),
        cluster.nn.log()
    );
}
