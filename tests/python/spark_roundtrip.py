"""Apache Spark (pyspark, local mode) against an HDFS-compatible file system.

    tests/python/.venv/bin/python tests/python/spark_roundtrip.py hdfs://127.0.0.1:9820

Spark is configured as for any HDFS cluster (spark.hadoop.fs.defaultFS and
nothing else about the file system) and, in one SparkSession:

- writes a DataFrame of a few thousand rows as Parquet partitioned by a
  column, reads it back (all of it, and one partition's directory alone);
- writes it as CSV with a header and reads it back with the same schema;
- saves an RDD of lines with saveAsTextFile and reads it with textFile.

Every read must equal what was written. Prints one line per check and a
summary; exits 1 on any mismatch, 2 on a Spark error (with its traceback).
crates/cli/tests/t36_spark.rs runs it against a Cairn cluster.
"""

import collections
import os
import shutil
import sys
import tempfile
import time
import traceback

ROWS = 3000
PARTS = 5
LINES = 2000
BASE = "/spark"


def rows():
    # Column order matters for the comparison: the partition column last, as
    # Spark puts it when it reads a partitioned table back.
    out = []
    for i in range(ROWS):
        name = f"name-{i}" if i % 7 else f"name, with comma {i}"
        out.append((i, name, i * 0.25 - 100.0, i * 1_000_003, f"p{i % PARTS}"))
    return out


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = []

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
            print(f"OK   {name}", flush=True)
        else:
            self.failed.append(name)
            print(f"FAIL {name}: {detail}", flush=True)

    def equal(self, name, got, want):
        if got == want:
            self.check(name, True)
            return
        detail = f"got {len(got)} items, want {len(want)}" if hasattr(got, "__len__") else ""
        if isinstance(got, list) and isinstance(want, list):
            first = next(
                (i for i, (g, w) in enumerate(zip(got, want)) if g != w),
                min(len(got), len(want)),
            )
            g = got[first] if first < len(got) else "<end>"
            w = want[first] if first < len(want) else "<end>"
            detail += f"; first difference at {first}: got {g!r}, want {w!r}"
        else:
            detail = f"got {got!r}, want {want!r}"
        self.check(name, False, detail)


def listing(spark, path):
    """Names in a directory, through the Hadoop FileSystem API Spark uses."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    p = jvm.org.apache.hadoop.fs.Path(path)
    fs = p.getFileSystem(conf)
    return sorted(s.getPath().getName() for s in fs.listStatus(p))


def run(url, checks):
    from pyspark.sql import SparkSession
    from pyspark.sql import types as T

    work = tempfile.mkdtemp(prefix="spark-roundtrip-")
    t0 = time.monotonic()
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("cairn-spark-roundtrip")
        .config("spark.hadoop.fs.defaultFS", url)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "1g")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.local.dir", os.path.join(work, "local"))
        .config("spark.sql.warehouse.dir", "file://" + os.path.join(work, "warehouse"))
        .getOrCreate()
    )
    sc = spark.sparkContext
    sc.setLogLevel("WARN")
    print(
        f"spark {spark.version}, hadoop {sc._jvm.org.apache.hadoop.util.VersionInfo.getVersion()}, "
        f"fs.defaultFS={sc._jsc.hadoopConfiguration().get('fs.defaultFS')} "
        f"(started in {time.monotonic() - t0:.1f}s)",
        flush=True,
    )
    try:
        schema = T.StructType(
            [
                T.StructField("id", T.IntegerType(), False),
                T.StructField("name", T.StringType(), False),
                T.StructField("value", T.DoubleType(), False),
                T.StructField("big", T.LongType(), False),
                T.StructField("part", T.StringType(), False),
            ]
        )
        data = rows()
        want = sorted(data)
        want_counts = dict(collections.Counter(r[-1] for r in data))
        df = spark.createDataFrame(data, schema).repartition(3)

        # Partitioned Parquet.
        t = time.monotonic()
        pq = f"{BASE}/parquet"
        df.write.mode("overwrite").partitionBy("part").parquet(pq)
        checks.equal(
            "parquet: one directory per partition and _SUCCESS",
            listing(spark, pq),
            sorted([f"part=p{i}" for i in range(PARTS)] + ["_SUCCESS"]),
        )
        back = spark.read.parquet(pq)
        checks.equal("parquet: columns", back.columns, [f.name for f in schema.fields])
        checks.equal("parquet: row count", back.count(), ROWS)
        checks.equal(
            "parquet: rows (sorted) equal the input",
            sorted(tuple(r) for r in back.collect()),
            want,
        )
        checks.equal(
            "parquet: rows per partition",
            {r["part"]: r["count"] for r in back.groupBy("part").count().collect()},
            want_counts,
        )
        checks.equal(
            "parquet: partition filter p2",
            back.where("part = 'p2'").count(),
            want_counts["p2"],
        )
        one = spark.read.parquet(f"{pq}/part=p3")
        checks.equal("parquet: single partition path columns", one.columns, ["id", "name", "value", "big"])
        checks.equal(
            "parquet: single partition path rows",
            sorted(tuple(r) for r in one.collect()),
            [r[:-1] for r in want if r[-1] == "p3"],
        )
        print(f"     parquet done in {time.monotonic() - t:.1f}s", flush=True)

        # CSV with a header.
        t = time.monotonic()
        csv = f"{BASE}/csv"
        df.write.mode("overwrite").option("header", True).csv(csv)
        files = listing(spark, csv)
        checks.check(
            "csv: part files and _SUCCESS",
            "_SUCCESS" in files and any(f.startswith("part-") and f.endswith(".csv") for f in files),
            f"listing {files}",
        )
        back = spark.read.schema(schema).option("header", True).csv(csv)
        checks.equal("csv: row count", back.count(), ROWS)
        checks.equal(
            "csv: rows (sorted) equal the input",
            sorted(tuple(r) for r in back.collect()),
            want,
        )
        header = spark.read.option("header", True).csv(csv)
        checks.equal("csv: header names the columns", header.columns, [f.name for f in schema.fields])
        print(f"     csv done in {time.monotonic() - t:.1f}s", flush=True)

        # RDD text files.
        t = time.monotonic()
        text = f"{BASE}/text"
        lines = [f"line {i:05d} {'x' * (i % 50)}" for i in range(LINES)]
        sc.parallelize(lines, 4).saveAsTextFile(text)
        files = listing(spark, text)
        checks.equal(
            "text: part files and _SUCCESS",
            files,
            sorted([f"part-{i:05d}" for i in range(4)] + ["_SUCCESS"]),
        )
        rdd = sc.textFile(text)
        checks.equal("text: textFile count", rdd.count(), LINES)
        checks.equal("text: lines equal the input", sorted(rdd.collect()), sorted(lines))
        checks.equal(
            "text: one part file alone",
            sc.textFile(f"{text}/part-00000").collect(),
            lines[: LINES // 4],
        )
        print(f"     text done in {time.monotonic() - t:.1f}s", flush=True)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


def main():
    if len(sys.argv) != 2 or not sys.argv[1].startswith("hdfs://"):
        print(__doc__, file=sys.stderr)
        return 64
    # The Python workers of RDD operations run this interpreter (the venv's).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # Loopback only (no warning about the host name resolving to it).
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    checks = Checks()
    t0 = time.monotonic()
    try:
        run(sys.argv[1].rstrip("/"), checks)
    except Exception:
        traceback.print_exc()
        print(
            f"spark_roundtrip: ERROR after {checks.passed} checks passed "
            f"({time.monotonic() - t0:.1f}s): {sys.exc_info()[1]!s:.500}",
            flush=True,
        )
        return 2
    total = checks.passed + len(checks.failed)
    if checks.failed:
        print(
            f"spark_roundtrip: {len(checks.failed)} of {total} checks FAILED: "
            + "; ".join(checks.failed),
            flush=True,
        )
        return 1
    print(f"spark_roundtrip: all {total} checks passed in {time.monotonic() - t0:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
