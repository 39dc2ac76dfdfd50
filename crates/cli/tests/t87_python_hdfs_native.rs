//! hdfs-native's Python package (PyPI `hdfs-native`, the same Rust client
//! behind a Python API, plus its fsspec file system) against a NameNode
//! with three DataNodes: multi-block writes, ranged reads, append,
//! overwrite, the namespace setters, ACLs, the trash, the asyncio client,
//! fsspec (with pandas Parquet) and the `hdfsn` command line, each answer
//! checked (tests/python/hdfs_native_client.py).

mod common;

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
    let checked = common::python::run_checks(
        &python,
        "hdfs_native_client.py",
        &[&url, "/python-hdfs-native"],
        Duration::from_secs(300),
        "all checks passed",
    );
    if let Err(report) = checked {
        panic!("{report}\nNameNode log:\n{}", cluster.nn.log());
    }
}
