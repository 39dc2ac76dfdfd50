"""What every rendered section shares: a mode's JSON read back (`Run`: medians of the raw figures, the
parameters, the failed runs), number formatting, the set-up sentences, and the plots (matplotlib).
"""
import datetime
import statistics

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the back end is chosen)

# Plots written twice from the same figures are the same bytes (no date, fixed ids).
matplotlib.rcParams["svg.hashsalt"] = "cairn-bench"
matplotlib.rcParams["svg.fonttype"] = "none"

MIB = 1 << 20
# Figure kinds not measured once per repetition (blockReport runs once; fsync counts are per write run).
NOT_PER_REP = {"br", "fsyncs", "fsyncs-java"}

NATIVE_BUG = ("not possible: hdfs-native 0.14.8 bug (its `max_packet_chunks` computes (64 KiB packet − header) / "
              "(bytes-per-checksum + 4) = 0 chunks per packet for 1 MiB chunks and then sends empty packets "
              "forever), so this row is never run")

SETUP_HDFS = ("**HDFS**: Apache Hadoop 3.4.1 `MiniDFSCluster` started by the shared harness (`../shared/anchors/hdfs-harness`, "
              "copied to a temp dir, `./harness minidfs --datanodes 3 --replication 3 --blocksize 134217728`): 1 NameNode + "
              "3 DataNodes in one JVM, edit-log fsync ON, one name dir, `dfs.datanode.synconclose=false` (HDFS default), "
              "2 storage dirs per DataNode, CRC32C/512, no short-circuit reads.")
SETUP_CAIRN = ("**Cairn**: `cairn up --dir <tmp> --rpc-address 127.0.0.1:0` (a copy of `target/release/cairn` taken at the "
               "start of the run): 1 NameNode + 3 DataNodes as separate processes, durable edit log (group commit, "
               "fdatasync), 128 MiB blocks, replication 3, `dfs.datanode.synconclose=false` (the same setting as HDFS), "
               "CRC32C/512.")
SETUP_JAVA = ("*Java* = the harness's DFSIO-style client on the Hadoop 3.4.1 `FileSystem` API (`./harness dfsio`: one "
              "`FileSystem` per thread, 1 MiB `write()` calls, every byte read verified).")
SETUP_NATIVE = ("*hdfs-native* = `cairn bench dfsio` (hdfs-native 0.14, Rust, one client per task; it takes "
                "bytes-per-checksum from the NameNode's server defaults and, unlike the Java client, always sets "
                "`syncBlock` on the last packet of a block, so **every hdfs-native write fsyncs each replica at block end "
                "on both systems**, whatever `dfs.datanode.synconclose` says).")


class Run:
    """One mode's JSON: `g(*key)` is (median, min, max, count) of that figure's repetitions, or None."""

    def __init__(self, data):
        self.data = data
        self.p = data["params"]
        self.figures = {tuple(x["key"]): x["values"] for x in data.get("figures", [])}
        self.started = datetime.datetime.fromisoformat(data["started"])
        self.finished = datetime.datetime.fromisoformat(data["finished"])

    def g(self, *key):
        v = self.figures.get(tuple(key))
        if not v:
            return None
        return (statistics.median(v), min(v), max(v), len(v))

    def median(self, *key):
        x = self.g(*key)
        return x[0] if x else None

    def minutes(self):
        return (self.finished - self.started).total_seconds() / 60

    def span(self):
        """'2026-11-21 10:11 – 10:45 UTC (34 minutes)'."""
        return "%s – %s (%.0f minutes)" % (self.started.strftime("%Y-%m-%d %H:%M"), self.finished.strftime("%H:%M UTC"),
                                           self.minutes())

    def order_sentence(self):
        """How the runs of the systems were ordered, and whether each waited for the last one's deletions
        (runs from before `order_turns` and `settle` were parameters did neither)."""
        if self.p.get("order_turns"):
            s = ("Repetitions alternate between the systems, and the order turns each repetition (HDFS then "
                 "Cairn, then Cairn then HDFS, …), so that a change in the background load, and what one "
                 "system's run leaves behind, hits both.")
        else:
            s = ("Repetitions alternate between the systems (HDFS, Cairn, HDFS, Cairn, …) so that a change in the "
                 "background load hits both.")
        return s + self.settle_sentence()

    def settle_sentence(self):
        """' ' + whether each data-path run waited for the last one's deletions, or ''."""
        if not self.p.get("settle"):
            return ""
        return (" After every data-path run that deletes its files, the next run starts only once the "
                "cluster's directory has shrunk back (both systems unlink replicas in the background, seconds "
                "after the delete returns; a run timed meanwhile is slowed by the last one's clean-up).")

    def reps_sentence(self):
        """How many repetitions each figure has, and whether any has fewer (failed runs)."""
        reps = self.p["reps"]
        s = ("Each figure is the median of %d runs with (min–max)." % reps if reps > 1 else
             "**One run per figure** (`--reps 1` or `--quick`): no medians, not for comparison.")
        short = sorted(("/".join(str(k) for k in key), len(v)) for key, v in self.figures.items()
                       if len(v) < reps and key[0] not in NOT_PER_REP)
        if short:
            s += (" Figures with fewer runs (the others failed; see the failures below), by their key in the JSON: %s." %
                  ", ".join("`%s` %d of %d" % (k, n, reps) for k, n in short))
        return s

    def failures(self):
        """Markdown bullets, one per failed run."""
        return ["* `%s`" % ((x["what"] + (": " + x["why"] if x["why"] else "")).replace("`", "'"))
                for x in self.data.get("failed", [])]


def f(x, d=0):
    if x is None:
        return "–"
    if isinstance(x, tuple):
        m, lo, hi, n = x
        return f(m, d) if n == 1 else "%s (%s–%s)" % (f(m, d), f(lo, d), f(hi, d))
    return ("{:,.%df}" % d).format(x)


def ratio(a, b):
    if not a or not b or a[0] is None or b[0] is None or b[0] == 0:
        return "–"
    return "%.2f×" % (a[0] / b[0])


def pct(a, limit):
    if not a or a[0] is None or not limit:
        return "–"
    return "%.0f%%" % (100 * a[0] / limit)


def facts_table(facts):
    return ["| fact | value |", "|---|---|"] + ["| %s | %s |" % (k, v) for k, v in facts]


def plot(path, title, ylabel, series, xs):
    """A line per series (a list of values, one per x; None = not measured) over the thread counts xs."""
    fig, ax = plt.subplots(figsize=(7.5, 4))
    for name, values in series.items():
        # evenly spaced by index, labelled with the thread count (1, 4, 16, 64 would crowd the left)
        pts = [(i, v) for i, v in enumerate(values) if v]
        if pts:
            ax.plot([x for x, _ in pts], [v for _, v in pts], marker="o", label=name)
    ax.set_title(title)
    ax.set_xlabel("threads")
    ax.set_ylabel(ylabel)
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels([str(x) for x in xs])
    ax.set_ylim(bottom=0)
    ax.grid(True, color="#dddddd")
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f(v)))
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)
