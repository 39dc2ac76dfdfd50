//! GETFILECHECKSUM: the NameNode redirects it to a DataNode, which asks
//! the NameNode for the blocks and a DataNode for each block's checksum
//! (BLOCK_CHECKSUM) and answers HDFS's `FileChecksum` JSON. The value must
//! be the one the Java client computes over hdfs://, the one Java's
//! `hadoop fs -checksum` prints over either scheme and `cairn dfs
//! -checksum` prints, and, for the FileChecksums files, the one Apache HDFS
//! 3.4.1's WebHDFS answered (expected/webhdfs-checksums.txt).

use std::net::SocketAddr;
use std::process::Command;

use serde_json::Value;

use super::common::{self, http_request, Cluster};
use super::{header, json, kit_dir, remote_error, split_url};

const MIB: usize = 1024 * 1024;

/// Files written here: name, size, replication (1 MiB blocks).
const FILES: [(&str, usize, u32); 4] = [
    ("empty", 0, 1),
    ("one", 1, 1),
    ("blocks", 3 * MIB + 5 * 512 + 300, 1),
    ("twice", MIB + 7, 2),
];

pub(super) fn file_checksums(cluster: &Cluster) {
    let nn = cluster.nn.http;
    let user = common::current_user();
    for (i, (name, size, replication)) in FILES.iter().enumerate() {
        let data = common::pattern(40 + i as u64, *size);
        write(
            nn,
            &format!(
                "/ck/{name}?op=CREATE&user.name={user}&blocksize={MIB}&replication={replication}"
            ),
            &data,
        );
    }
    // HDFS's JSON: keys in TreeMap order, the 28 bytes of the checksum
    // followed by the 4 zeros of Hadoop's 32-byte buffer (HDFS 3.4.1's
    // DataNode answered `{"FileChecksum":{"algorithm":"MD5-of-2048MD5-of-
    // 512CRC32C","bytes":"00000200...00000000","length":28}}` for a
    // 1.5 MB file of 1 MiB blocks).
    let mut lines = Vec::new();
    for (name, _, _) in FILES {
        let (raw, v) = checksum_json(
            nn,
            &format!("/ck/{name}?op=GETFILECHECKSUM&user.name={user}"),
        );
        assert!(
            raw.starts_with("{\"FileChecksum\":{\"algorithm\":\""),
            "{raw}"
        );
        let sum = &v["FileChecksum"];
        assert_eq!(sum["length"], 28, "{raw}");
        let bytes = sum["bytes"].as_str().expect("bytes");
        assert_eq!(bytes.len(), 64, "{raw}");
        assert!(bytes.ends_with("00000000"), "{raw}");
        let algorithm = sum["algorithm"].as_str().expect("algorithm");
        lines.push(format!("/ck/{name}\t{algorithm}\t{}", &bytes[..56]));
    }
    assert_eq!(
        lines[0],
        "/ck/empty\tMD5-of-0MD5-of-0CRC32\t00000000000000000000000070bc8f4b72a86921468bf8e8441dce51"
    );
    assert!(
        lines[2].contains("\tMD5-of-2048MD5-of-512CRC32C\t00000200"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains("\tMD5-of-2048MD5-of-512CRC32C\t"),
        "{}",
        lines[3]
    );

    // The same lines from Java's FsShell over hdfs:// (the Java client's
    // own BLOCK_CHECKSUM calls) and over webhdfs://, and from cairn dfs.
    let paths: Vec<String> = FILES.iter().map(|(n, _, _)| format!("/ck/{n}")).collect();
    let want = lines.join("\n");
    let hdfs_url = cluster.nn.url();
    let web_url = format!("webhdfs://{nn}");
    for url in [&hdfs_url, &web_url] {
        let got = java_checksum(url, &paths, &[]);
        assert_eq!(got, want, "hadoop fs -fs {url} -checksum");
    }
    assert_eq!(cairn_checksum(&hdfs_url, &paths, &[]), want);
    // -v adds the block size.
    let verbose = cairn_checksum(&hdfs_url, &paths[1..2], &["-v"]);
    assert_eq!(verbose, format!("{}\tBlockSize={MIB}", lines[1]));
    assert_eq!(java_checksum(&hdfs_url, &paths[1..2], &["-v"]), verbose);
    // COMPOSITE_CRC over hdfs:// (WebHDFS has no combine mode).
    let composite = ["-D", "dfs.checksum.combine.mode=COMPOSITE_CRC"];
    let java = java_checksum_with(&hdfs_url, &paths[1..], &[], &composite);
    assert!(java.contains("\tCOMPOSITE-CRC32C\t"), "{java}");
    assert_eq!(
        cairn_checksum_with(&hdfs_url, &paths[1..], &[], &composite),
        java
    );

    errors(cluster, &user);
    java_file_checksums_over_webhdfs(nn);
}

/// A two-step CREATE through the DataNode the NameNode names.
fn write(nn: SocketAddr, path_and_query: &str, data: &[u8]) {
    let (code, headers, _) = http_request(nn, "PUT", &format!("/webhdfs/v1{path_and_query}"), b"");
    assert_eq!(code, 307, "CREATE {path_and_query}");
    let (dn, path) = split_url(header(&headers, "location"));
    let (code, _, body) = http_request(dn, "PUT", &path, data);
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&body));
}

/// GETFILECHECKSUM through the redirect: the DataNode's raw body and JSON.
fn checksum_json(nn: SocketAddr, path_and_query: &str) -> (String, Value) {
    let (code, headers, body) =
        http_request(nn, "GET", &format!("/webhdfs/v1{path_and_query}"), b"");
    assert_eq!(code, 307, "{}", String::from_utf8_lossy(&body));
    let (dn, path) = split_url(header(&headers, "location"));
    assert!(path.contains("op=GETFILECHECKSUM"), "{path}");
    let (code, headers, body) = http_request(dn, "GET", &path, b"");
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
    assert_eq!(
        header(&headers, "content-type"),
        "application/json; charset=utf-8"
    );
    (String::from_utf8_lossy(&body).into_owned(), json(&body))
}

/// Errors as HDFS's DataNode answers them: the NameNode's exception for
/// the block lookup (FileNotFoundException, 404), a bad NameNode address.
fn errors(cluster: &Cluster, user: &str) {
    let dn = cluster.dns[0].http;
    let rpc = cluster.nn.addr;
    let (class, message) = remote_error(
        dn,
        "GET",
        &format!(
            "/webhdfs/v1/ck/nope?op=GETFILECHECKSUM&user.name={user}&namenoderpcaddress={rpc}"
        ),
        404,
    );
    assert_eq!(class, "java.io.FileNotFoundException");
    assert!(message.contains("/ck/nope"), "{message}");
    let (class, _) = remote_error(
        dn,
        "GET",
        &format!("/webhdfs/v1/ck/one?op=GETFILECHECKSUM&user.name={user}"),
        400,
    );
    assert_eq!(class, "java.lang.IllegalArgumentException");
    // A directory has no blocks: HDFS's NameNode redirects it anyway and
    // the DataNode's block lookup fails.
    let (code, headers, _) = http_request(
        cluster.nn.http,
        "GET",
        &format!("/webhdfs/v1/ck?op=GETFILECHECKSUM&user.name={user}"),
        b"",
    );
    assert_eq!(code, 307);
    let (dn, path) = split_url(header(&headers, "location"));
    let (class, message) = remote_error(dn, "GET", &path, 404);
    assert_eq!(
        (class.as_str(), message.as_str()),
        ("java.io.FileNotFoundException", "Path is not a file: /ck")
    );
}

/// Java's `hadoop fs -checksum FLAGS PATHS` through the kit: the command's
/// standard output lines.
fn java_checksum(url: &str, paths: &[String], flags: &[&str]) -> String {
    java_checksum_with(url, paths, flags, &[])
}

fn java_checksum_with(url: &str, paths: &[String], flags: &[&str], generic: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = dir.path().join("checksum.txt");
    let line = [
        &["-checksum"],
        flags,
        &paths.iter().map(String::as_str).collect::<Vec<_>>()[..],
    ]
    .concat()
    .join(" ");
    std::fs::write(&script, format!("{line}\n")).expect("script");
    let script = script.to_string_lossy();
    let stdout = common::run_java_kit(&[&["--fs", url, "--script", &script], generic].concat());
    assert!(stdout.contains("exit=0"), "{stdout}");
    // The transcript: `$ <line>`, the output, `exit=0`.
    stdout
        .lines()
        .filter(|l| l.starts_with('/'))
        .collect::<Vec<_>>()
        .join("\n")
}

fn cairn_checksum(url: &str, paths: &[String], flags: &[&str]) -> String {
    cairn_checksum_with(url, paths, flags, &[])
}

fn cairn_checksum_with(url: &str, paths: &[String], flags: &[&str], generic: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("dfs")
        .args(["-fs", url])
        .args(generic)
        .arg("-checksum")
        .args(flags)
        .args(paths)
        .env_remove("HADOOP_CONF_DIR")
        .env_remove("HADOOP_USER_NAME")
        .output()
        .expect("run cairn dfs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_owned()
}

/// The FileChecksums program over webhdfs:// (files of edge sizes written
/// through WebHDFS CREATE, whole-file checksums from GETFILECHECKSUM)
/// against what Apache HDFS 3.4.1's WebHDFS answered for it. Its whole-file
/// values are also HDFS's hdfs:// ones (expected/checksums.txt).
fn java_file_checksums_over_webhdfs(nn: SocketAddr) {
    let kit = kit_dir();
    let url = format!("webhdfs://{nn}");
    let stdout = common::run_java_kit(&[
        "--main",
        "FileChecksums",
        "--replications",
        "1",
        "--fs",
        &url,
    ]);
    let read = |name: &str| {
        std::fs::read_to_string(kit.join(format!("expected/{name}.txt"))).expect("golden")
    };
    let want = read("webhdfs-checksums");
    common::assert_matches_golden(&stdout, &want, "FileChecksums over webhdfs");
    let whole = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("r1 ") && l.contains(" MD5MD5CRC all "))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(whole(&want), whole(&read("checksums")));
}
