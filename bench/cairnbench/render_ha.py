"""Renders `--mode ha` (measure_ha.run's dict) as a Markdown section of docs/benchmarks.md.

`render_ha(data) -> str`: durable ops/s of three NameNodes (Raft) beside one, the ratio against issue 15's
goal (≥ 70% of one NameNode at 16 threads and more), NameNode CPU per operation, how it was measured, the
repetitions and the failed runs. Pure: reads only `data`.
"""
from .measure_ha import OPS, THREADS
from .render_common import Run, f, ratio

SECTION_TITLE = "## Three NameNodes (Raft) beside one"
CLIENTS = ["NNThroughputBenchmark", "cairn bench nn"]
GOAL = 0.70


def render_ha(data):
    r = Run(data)
    md = [SECTION_TITLE, "",
          "Durable NameNode mutations on a nameservice of three NameNodes (`cairn up --ha`: one Raft group; the "
          "leader is the active NameNode and answers an edit once a majority of the three has it on disk) beside "
          "one NameNode (`cairn up`, its edit log group-committed to its own disk), both on this machine, each "
          "with 3 DataNodes, measured one after the other in every repetition. The clients run against the active "
          "NameNode's address. NameNode CPU is utime + stime of all of the system's NameNode processes over the "
          "client's whole run (its preparation included), per operation. Measured %s at commit `%s`%s; %s "
          "operations per run." % (r.span(), data.get("commit", "?"), " (uncommitted changes)" if data.get("dirty")
                                   else "", f(r.p["nn_files"])),
          "", r.reps_sentence(), "",
          "| client | op | threads | one NameNode (ops/s) | three NameNodes (ops/s) | three / one | NameNode CPU "
          "µs/op, one | NameNode CPU µs/op, three (all members) |",
          "|---|---|---|---|---|---|---|---|"]
    short = []
    cpu_ratios = []
    for client in CLIENTS:
        for op in OPS:
            for t in THREADS:
                one, three = r.g("ha", "one", client, op, t), r.g("ha", "three", client, op, t)
                if one is None and three is None:
                    continue
                rt = ratio(three, one)
                c1, c3 = r.g("hacpu", "one", client, op, t), r.g("hacpu", "three", client, op, t)
                if c1 and c3 and c1[0]:
                    cpu_ratios.append(c3[0] / c1[0])
                if one and three and one[0] and three[0] / one[0] < GOAL:
                    short.append("%s %s at %d threads (%s)" % (client, op, t, rt))
                md.append("| %s | %s | %d | %s | %s | %s | %s | %s |" % (
                    client, op, t, f(one), f(three), rt, f(r.g("hacpu", "one", client, op, t), 1),
                    f(r.g("hacpu", "three", client, op, t), 1)))
    md += ["", "Goal (issue 15): three NameNodes at ≥ %d%% of one NameNode's durable ops/s at 16 threads and more. %s"
           % (GOAL * 100, "Below it: " + "; ".join(short) + "." if short else "Met in every row above.")]
    if cpu_ratios:
        cpu_ratios.sort()
        mid = cpu_ratios[len(cpu_ratios) // 2]
        md += ["", "Where the rest goes: the three NameNodes together spent %.1f× one NameNode's CPU per operation "
               "(median over the rows; %.1f× to %.1f×): every member applies every edit and the group exchanges "
               "it over TCP, while here all three, the DataNodes and the client share %s CPU cores, so the CPU "
               "is the limit. On three machines each member pays about a third of that." % (
                   mid, cpu_ratios[0], cpu_ratios[-1], data.get("params", {}).get("cpus", "the same"))]
    fl = r.failures()
    md += (["", "Failed runs of this mode:", ""] + fl) if fl else ["", "Failed runs of this mode: none."]
    return "\n".join(md) + "\n"
