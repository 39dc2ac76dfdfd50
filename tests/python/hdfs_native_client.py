"""hdfs-native's Python client (PyPI `hdfs-native`) against a Cairn NameNode.

usage: hdfs_native_client.py hdfs://HOST:PORT WORKDIR

Python users reach HDFS through this package directly, through its fsspec
file system (`hdfs://` URLs in pandas, Dask, Ray ...) and through its
`hdfsn` command line; each is driven here the way such a user would, and
every answer is checked against what HDFS answers; pandas reads and writes
Parquet through its fsspec file system. Prints one line per
check and exits non-zero at the first that fails.
"""

import asyncio
import os
import subprocess
import sys
import tempfile

import fsspec
import pandas
from hdfs_native import AclEntry, AsyncClient, Client, WriteOptions

URL, WORK = sys.argv[1], sys.argv[2].rstrip("/")
MIB = 1024 * 1024


def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + (f": {detail}" if detail and not ok else ""))
    if not ok:
        sys.exit(1)


def expect_error(what, kind, fn, text=""):
    try:
        fn()
    except kind as e:
        check(what, text in str(e), str(e))
        return e
    except Exception as e:  # noqa: BLE001 - the wrong kind is the failure
        check(what, False, f"{type(e).__name__}: {e}")
    else:
        check(what, False, "no error")


def pattern(n, seed):
    """n bytes that differ at every offset, so a misplaced range shows."""
    base = bytes((i * 7 + seed) % 251 for i in range(251))
    return (base * (n // 251 + 1))[:n]


def files_and_blocks(client):
    # 2.5 blocks of 1 MiB with replication 2: a read crosses block ends.
    data = pattern(5 * MIB // 2, 3)
    opts = WriteOptions(block_size=MIB, replication=2)
    with client.create(f"{WORK}/blocks.bin", opts) as f:
        for i in range(0, len(data), 300_000):
            f.write(data[i : i + 300_000])
    st = client.get_file_info(f"{WORK}/blocks.bin")
    check("length after close", st.length == len(data), st.length)
    check("block size and replication", (st.blocksize, st.replication) == (MIB, 2))
    with client.read(f"{WORK}/blocks.bin") as r:
        check("whole read", r.read() == data)
        check("read_range across a block end", r.read_range(MIB - 10, 20) == data[MIB - 10 : MIB + 10])
        r.seek(2 * MIB + 5)
        check("seek then read", r.read(7) == data[2 * MIB + 5 : 2 * MIB + 12] and r.tell() == 2 * MIB + 12)

    # Append to a file whose last block is part full.
    more = pattern(MIB // 2 + 17, 9)
    with client.append(f"{WORK}/blocks.bin") as f:
        f.write(more)
    with client.read(f"{WORK}/blocks.bin") as r:
        check("append", r.read() == data + more)

    expect_error("create over an existing file", FileExistsError, lambda: client.create(f"{WORK}/blocks.bin").close())
    with client.create(f"{WORK}/blocks.bin", WriteOptions(overwrite=True)) as f:
        f.write(b"short")
    check("overwrite", client.get_file_info(f"{WORK}/blocks.bin").length == 5)
    expect_error("read of a missing file", FileNotFoundError, lambda: client.read(f"{WORK}/missing"))


def namespace(client):
    client.mkdirs(f"{WORK}/a/b/c", 0o750, True)
    st = client.get_file_info(f"{WORK}/a/b/c")
    check("mkdirs with parents and permission", st.isdir and st.permission == 0o750, oct(st.permission))
    expect_error("mkdirs without parents", FileNotFoundError, lambda: client.mkdirs(f"{WORK}/x/y"))
    for name in ("f1", "f2", "g1"):
        client.create(f"{WORK}/a/{name}").close()
    names = sorted(s.path.rsplit("/", 1)[1] for s in client.list_status(f"{WORK}/a"))
    check("list_status", names == ["b", "f1", "f2", "g1"], names)
    deep = sorted(s.path for s in client.list_status(f"{WORK}/a", True))
    check("recursive listing", f"{WORK}/a/b/c" in deep and len(deep) == 5, deep)
    globbed = sorted(s.path for s in client.glob_status(f"{WORK}/a/f*"))
    check("glob", globbed == [f"{WORK}/a/f1", f"{WORK}/a/f2"], globbed)

    client.rename(f"{WORK}/a/f1", f"{WORK}/a/h1")
    expect_error("rename onto a file without overwrite", FileExistsError, lambda: client.rename(f"{WORK}/a/f2", f"{WORK}/a/h1"))
    client.rename(f"{WORK}/a/f2", f"{WORK}/a/h1", True)
    names = sorted(s.path.rsplit("/", 1)[1] for s in client.list_status(f"{WORK}/a"))
    check("rename with overwrite", names == ["b", "g1", "h1"], names)

    client.set_permission(f"{WORK}/a/h1", 0o600)
    client.set_times(f"{WORK}/a/h1", 1_700_000_000_123, 1_600_000_000_456)
    st = client.get_file_info(f"{WORK}/a/h1")
    check("set_permission", st.permission == 0o600, oct(st.permission))
    check("set_times", (st.modification_time, st.access_time) == (1_700_000_000_123, 1_600_000_000_456))
    client.set_owner(f"{WORK}/a/h1", "someone", "somegroup")
    st = client.get_file_info(f"{WORK}/a/h1")
    check("set_owner", (st.owner, st.group) == ("someone", "somegroup"), (st.owner, st.group))
    check("set_replication", client.set_replication(f"{WORK}/a/h1", 2) is True)
    check("set_replication", client.get_file_info(f"{WORK}/a/h1").replication == 2)

    summary = client.get_content_summary(f"{WORK}/a")
    check("content summary", (summary.directory_count, summary.file_count) == (3, 2), summary)

    # Exceptions without a Python counterpart come as RuntimeError naming
    # HDFS's class.
    expect_error(
        "delete of a non-empty directory",
        RuntimeError,
        lambda: client.delete(f"{WORK}/a/b"),
        "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException",
    )
    check("recursive delete", client.delete(f"{WORK}/a/b", True) is True)
    check("delete of a missing path", client.delete(f"{WORK}/a/b", True) is False)


def acls(client):
    path = f"{WORK}/acl"
    client.mkdirs(path)
    client.modify_acl_entries(path, [AclEntry("user", "access", "r-x", "alice")])
    status = client.get_acl_status(path)
    entries = [(e.type, e.scope, e.permissions, e.name) for e in status.entries]
    check("modify_acl_entries", ("user", "access", "r-x", "alice") in entries, entries)
    client.remove_acl(path)
    check("remove_acl", client.get_acl_status(path).entries == [])


def trash(client):
    client.create(f"{WORK}/doomed").close()
    moved = client.trash(f"{WORK}/doomed")
    check("trash moves into the user's trash", moved is not None and "/.Trash/Current" in moved, moved)
    check("trashed file is there", client.get_file_info(moved).length == 0)


async def async_client():
    client = AsyncClient(URL)
    data = pattern(3 * MIB, 5)
    writer = await client.create(f"{WORK}/async.bin", WriteOptions(block_size=MIB))
    await writer.write(data)
    await writer.close()
    reader = await client.read(f"{WORK}/async.bin")
    check("async write and read", await reader.read() == data)
    check("async read_range", await reader.read_range(MIB + 1, 9) == data[MIB + 1 : MIB + 10])
    listed = [s.path async for s in client.list_status(WORK)]
    check("async listing", f"{WORK}/async.bin" in listed, listed)


def fsspec_interface():
    fs = fsspec.filesystem("hdfs", host=URL.split("//")[1].split(":")[0], port=int(URL.rsplit(":", 1)[1]))
    base = f"{WORK}/fsspec"
    fs.mkdir(base)
    fs.pipe_file(f"{base}/one.txt", b"hello\n")
    with fs.open(f"{base}/two.txt", "wb") as f:
        f.write(b"x" * 1000)
    check("fsspec ls", sorted(fs.ls(base, detail=False)) == [f"{base}/one.txt", f"{base}/two.txt"], fs.ls(base, detail=False))
    check("fsspec cat", fs.cat_file(f"{base}/one.txt") == b"hello\n")
    check("fsspec info", fs.info(f"{base}/two.txt")["size"] == 1000)
    with tempfile.TemporaryDirectory() as local:
        fs.get(f"{base}/one.txt", f"{local}/one.txt")
        with open(f"{local}/one.txt", "rb") as f:
            check("fsspec get", f.read() == b"hello\n")
    fs.mv(f"{base}/one.txt", f"{base}/three.txt")
    check("fsspec mv", fs.exists(f"{base}/three.txt") and not fs.exists(f"{base}/one.txt"))
    # pandas' pyarrow engine would take a bare hdfs:// URL to libhdfs (a
    # JVM); with hdfs-native users hand it the fsspec file system.
    frame = pandas.DataFrame({"id": range(1000), "name": [f"row{i}" for i in range(1000)]})
    frame.to_parquet(f"{base}/frame.parquet", filesystem=fs)
    back = pandas.read_parquet(f"{base}/frame.parquet", filesystem=fs)
    check("pandas Parquet through the fsspec file system", back.equals(frame))
    fs.rm(base, recursive=True)
    check("fsspec rm", not fs.exists(base))


def hdfsn(*args):
    """Runs the package's `hdfsn` command (from this Python's bin folder)."""
    exe = os.path.join(os.path.dirname(sys.executable), "hdfsn")
    run = subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)
    check(f"hdfsn {args[0]} exits 0", run.returncode == 0, run.stderr.strip())
    return run.stdout


def command_line():
    base = f"{URL}{WORK}/cli"
    hdfsn("mkdir", "-p", f"{base}/d")
    with tempfile.TemporaryDirectory() as local:
        with open(f"{local}/in.txt", "wb") as f:
            f.write(b"line one\nline two\n")
        hdfsn("put", f"{local}/in.txt", f"{base}/d/")
        check("hdfsn cat", hdfsn("cat", f"{base}/d/in.txt") == "line one\nline two\n")
        listed = hdfsn("ls", f"{base}/d")
        check("hdfsn ls", f"{WORK}/cli/d/in.txt" in listed, listed)
        hdfsn("mv", f"{base}/d/in.txt", f"{base}/d/moved.txt")
        hdfsn("get", f"{base}/d/moved.txt", f"{local}/out.txt")
        with open(f"{local}/out.txt", "rb") as f:
            check("hdfsn mv and get", f.read() == b"line one\nline two\n")
    hdfsn("rm", "-r", "-s", base)  # -s: skip the trash
    expect_error("hdfsn rm removed the tree", FileNotFoundError, lambda: Client(URL).get_file_info(f"{WORK}/cli"))


def main():
    client = Client(URL)
    client.delete(WORK, True)  # what an earlier, failed run left
    client.mkdirs(WORK, create_parent=True)
    files_and_blocks(client)
    namespace(client)
    acls(client)
    trash(client)
    asyncio.run(async_client())
    fsspec_interface()
    command_line()
    client.delete(WORK, True)
    print("all checks passed")


if __name__ == "__main__":
    main()
