"""Python WebHDFS clients against a cluster's NameNode HTTP address:
HdfsCLI (`hdfs` on PyPI) and fsspec's `webhdfs` file system each upload,
download, list, stat, rename and delete; pandas writes and reads a Parquet
file through fsspec webhdfs, byte-identical to the same frame written
locally. Any mismatch raises; the last line is `ALL OK`.

    python webhdfs_clients.py --http HOST:PORT --user NAME --dir /hdfs/dir --local DIR
"""

import argparse
import io
import os

import fsspec
import pandas as pd
from hdfs import InsecureClient


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok:", what)


def pattern(n, seed):
    return bytes((i * 31 + seed) % 251 for i in range(n))


def hdfscli(http, user, base, local):
    client = InsecureClient(f"http://{http}", user=user)
    d = f"{base}/hdfscli"
    client.makedirs(d)
    data = pattern(3 * 1024 * 1024 + 17, 1)
    src = os.path.join(local, "up.bin")
    with open(src, "wb") as f:
        f.write(data)
    client.upload(f"{d}/up.bin", src)
    dst = os.path.join(local, "down.bin")
    client.download(f"{d}/up.bin", dst)
    with open(dst, "rb") as f:
        check(f.read() == data, "HdfsCLI upload/download round trip")
    client.write(f"{d}/small.txt", data=b"hello webhdfs", overwrite=True)
    with client.read(f"{d}/small.txt", offset=6, length=4) as r:
        check(r.read() == b"webh", "HdfsCLI read with offset/length")
    check(sorted(client.list(d)) == ["small.txt", "up.bin"], "HdfsCLI list")
    st = client.status(f"{d}/up.bin")
    check(st["type"] == "FILE" and st["length"] == len(data), "HdfsCLI status")
    check(client.status(f"{d}/nope", strict=False) is None, "HdfsCLI status of a missing path")
    client.rename(f"{d}/small.txt", f"{d}/renamed.txt")
    check(sorted(client.list(d)) == ["renamed.txt", "up.bin"], "HdfsCLI rename")
    check(client.content(d)["fileCount"] == 2, "HdfsCLI content summary")
    client.delete(f"{d}/renamed.txt")
    check(client.list(d) == ["up.bin"], "HdfsCLI delete")
    check(client.delete(d, recursive=True), "HdfsCLI recursive delete")


def fsspec_webhdfs(http, user, base, local):
    host, port = http.rsplit(":", 1)
    fs = fsspec.filesystem("webhdfs", host=host, port=int(port), user=user)
    d = f"{base}/fsspec"
    fs.mkdir(d)
    data = pattern(2 * 1024 * 1024 + 5, 2)
    src = os.path.join(local, "fs-up.bin")
    with open(src, "wb") as f:
        f.write(data)
    fs.put(src, f"{d}/a.bin")
    dst = os.path.join(local, "fs-down.bin")
    fs.get(f"{d}/a.bin", dst)
    with open(dst, "rb") as f:
        check(f.read() == data, "fsspec put/get round trip")
    fs.pipe(f"{d}/b.txt", b"0123456789")
    check(fs.cat(f"{d}/b.txt") == b"0123456789", "fsspec pipe/cat")
    check(fs.cat_file(f"{d}/b.txt", start=3, end=7) == b"3456", "fsspec ranged read")
    names = sorted(os.path.basename(p) for p in fs.ls(d, detail=False))
    check(names == ["a.bin", "b.txt"], "fsspec ls")
    info = fs.info(f"{d}/a.bin")
    check(info["type"] == "file" and info["size"] == len(data), "fsspec info")
    fs.mv(f"{d}/b.txt", f"{d}/c.txt")
    check(fs.exists(f"{d}/c.txt") and not fs.exists(f"{d}/b.txt"), "fsspec mv")
    fs.rm(f"{d}/c.txt")
    check(not fs.exists(f"{d}/c.txt"), "fsspec rm")
    fs.rm(d, recursive=True)
    check(not fs.exists(d), "fsspec recursive rm")


def pandas_parquet(http, user, base):
    frame = pd.DataFrame(
        {
            "id": list(range(5000)),
            "name": [f"row-{i}" for i in range(5000)],
            "value": [i * 0.5 for i in range(5000)],
        }
    )
    url = f"webhdfs://{http}{base}/pandas/frame.parquet"
    options = {"user": user}
    frame.to_parquet(url, storage_options=options, index=False)
    back = pd.read_parquet(url, storage_options=options)
    check(back.equals(frame), "pandas Parquet round trip through fsspec webhdfs")
    local = io.BytesIO()
    frame.to_parquet(local, index=False)
    with fsspec.open(url, "rb", **options) as f:
        remote = f.read()
    check(remote == local.getvalue(), "the Parquet file is byte-identical to a local write")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--http", required=True)
    p.add_argument("--user", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--local", required=True)
    a = p.parse_args()
    hdfscli(a.http, a.user, a.dir, a.local)
    fsspec_webhdfs(a.http, a.user, a.dir, a.local)
    pandas_parquet(a.http, a.user, a.dir)
    print("ALL OK")


if __name__ == "__main__":
    main()
