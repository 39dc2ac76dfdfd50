#!/usr/bin/env python3
"""Where one function's time goes, from a `perf record -g` file.

Reads `perf script` of PERF_DATA (the samples of threads named COMM), takes
the samples whose stack holds a frame containing ANCHOR (its outermost one),
and prints the tree of what that frame called, DEPTH calls deep, each node
with its share of all of COMM's samples (inlined frames and future-poll
plumbing left out); nodes under MIN_PERCENT are not shown.

usage: perf_tree.py PERF_DATA COMM ANCHOR [DEPTH] [MIN_PERCENT]
  e.g. perf_tree.py /tmp/del.data tokio-rt-worker \\
         'NameNodeState>::delete::{{closure}}' 4 1.0
"""
import collections
import re
import subprocess
import sys

# Frames that only pass a poll down: not shown as nodes of the tree.
PLUMBING = ("(inlined)", "poll_fn::PollFn", "Pin<P> as core::future")


def stacks(data, comm):
    """Each sample's frames, leaf first."""
    out = subprocess.run(
        ["perf", "script", "-i", data, "--comm", comm, "-F", "comm,ip,sym"],
        capture_output=True, text=True, check=True).stdout
    cur = None
    for line in out.splitlines():
        if not line.strip():
            if cur is not None:
                yield cur
            cur = None
        elif not line[0].isspace():
            cur = []
        elif cur is not None:
            parts = line.strip().split(" ", 1)
            cur.append(re.sub(r"\+0x[0-9a-f]+$", "", parts[1] if len(parts) > 1 else "?"))
    if cur:
        yield cur


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    data, comm, anchor = sys.argv[1:4]
    depth = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    min_pct = float(sys.argv[5]) if len(sys.argv) > 5 else 1.0
    total = 0
    tree = collections.Counter()
    for frames in stacks(data, comm):
        total += 1
        at = [i for i, f in enumerate(frames) if anchor in f]
        if not at:
            continue
        tree[()] += 1
        chain = [f for f in reversed(frames[:max(at)])
                 if not any(p in f for p in PLUMBING)]
        for d in range(1, min(depth, len(chain)) + 1):
            tree[tuple(chain[:d])] += 1
    if total == 0:
        sys.exit(f"no samples of {comm} in {data}")
    print(f"{total} samples of {comm}; {100 * tree[()] / total:.1f}% under {anchor}")
    for node in sorted(k for k in tree if k):
        share = 100 * tree[node] / total
        if share >= min_pct:
            print(f"{share:5.1f}% {'  ' * (len(node) - 1)}{node[-1][:110]}")


if __name__ == "__main__":
    main()
