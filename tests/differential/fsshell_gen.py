#!/usr/bin/env python3
"""Random `hadoop fs` scripts for tests/differential/run.sh (HDFS beside Cairn).

fsshell_gen.py SEED N LOCALDIR > script.txt   (N random commands under /fz)
Writes local input files into LOCALDIR (same content for every seed).
"""
import os
import random
import sys

seed, n, local = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
r = random.Random(seed)
os.makedirs(local, exist_ok=True)
LOCALS = []
for i, size in enumerate([0, 1, 511, 512, 513, 4096, 70000, 1 << 20]):
    p = os.path.join(local, f"in{i}")
    if not os.path.exists(p):
        rr = random.Random(i)
        with open(p, "wb") as f:
            f.write(bytes(rr.getrandbits(8) for _ in range(size)) if size < 5000
                    else bytes((j * 7 + i) % 251 for j in range(size)))
    LOCALS.append(p)

ROOT = "/fz"
names = ["a", "b", "x y", "d.txt"]


def path(depth=None):
    depth = r.choice([1, 1, 1, 2, 2, 3]) if depth is None else depth
    parts = [r.choice(names) for _ in range(depth)]
    p = ROOT + "/" + "/".join(parts)
    return q(p)


def q(p):
    return f"'{p}'" if " " in p else p


def glob():
    return r.choice([ROOT + "/*", ROOT + "/a/*", ROOT + "/?", ROOT + "/[ab]*", ROOT + "/*/*"])


def mode():
    return r.choice(["755", "700", "644", "1777", "000", "777", "u+w", "go-rx", "a+x", "o=r", "+t", "u=rwx,g=rx"])


USERS = ["alice", "bob"]
XVALS = ["v", "0x1234", "\"quoted\"", "0sAAEC"]
STAT = ["%n %b %r %u:%g %a %F", "%A %o %F", "%b %F %n", "%u %g %a"]


def cmd():
    k = r.choices(
        ["mkdir", "touchz", "put", "append", "cat", "head", "tail", "cp", "mv", "rm", "rmdir",
         "ls", "stat", "chmod", "chown", "chgrp", "setrep", "test", "count", "du", "truncate",
         "setfattr", "getfattr", "setfacl", "getfacl", "checksum", "find", "concat", "touch",
         "text", "as_user"],
        weights=[8, 6, 6, 3, 4, 2, 2, 4, 6, 5, 2, 6, 5, 3, 2, 1, 2, 4, 3, 3, 3, 2, 2, 2, 2, 3, 2, 2, 2, 1, 6],
    )[0]
    if k == "mkdir":
        return f"-mkdir {r.choice(['', '-p '])}{path()}"
    if k == "touchz":
        return f"-touchz {path()}"
    if k == "put":
        return f"-put {r.choice(['', '-f ', '-f ', '-p '])}{r.choice(LOCALS)} {path()}"
    if k == "append":
        return f"-appendToFile {r.choice(LOCALS)} {path()}"
    if k == "cat":
        return f"-checksum {path()}" if r.random() < 0.3 else f"-cat {path()}"
    if k == "head":
        return f"-head {path()}"
    if k == "tail":
        return f"-tail {path()}"
    if k == "cp":
        return f"-cp {r.choice(['', '-f ', '-p '])}{path()} {path()}"
    if k == "mv":
        return f"-mv {path()} {path()}"
    if k == "rm":
        return f"-rm {r.choice(['', '-r ', '-f ', '-r -f ', '-skipTrash ', '-R '])}{path()}"
    if k == "rmdir":
        return f"-rmdir {r.choice(['', '--ignore-fail-on-non-empty '])}{path()}"
    if k == "ls":
        return f"-ls {r.choice(['', '-R ', '-d ', '-S ', '-r ', '-C ', '-h ', '-R -S '])}{r.choice([path(), glob(), ROOT])}"
    if k == "stat":
        return f"-stat '{r.choice(STAT)}' {r.choice([path(), glob()])}"
    if k == "chmod":
        return f"-chmod {r.choice(['', '-R '])}{mode()} {path()}"
    if k == "chown":
        return f"-chown {r.choice(['', '-R '])}{r.choice(['alice', 'bob:staff', ':grp', 'alice:'])} {path()}"
    if k == "chgrp":
        return f"-chgrp {r.choice(['staff', 'supergroup'])} {path()}"
    if k == "setrep":
        return f"-setrep {r.choice(['1', '2', '3'])} {path()}"
    if k == "test":
        return f"-test {r.choice(['-e', '-d', '-f', '-s', '-z', '-w', '-r'])} {path()}"
    if k == "count":
        return f"-count {r.choice(['', '-q ', '-h ', '-v ', '-q -v ', '-u '])}{r.choice([path(), ROOT])}"
    if k == "du":
        return f"-du {r.choice(['', '-s ', '-h ', '-s -h ', '-v '])}{r.choice([path(), ROOT, glob()])}"
    if k == "truncate":
        return f"-truncate -w {r.choice(['0', '1', '100', '512', '513', '5000', '99999999'])} {path()}"
    if k == "setfattr":
        if r.random() < 0.3:
            return f"-setfattr -x user.k{r.randint(0, 2)} {path()}"
        return f"-setfattr -n {r.choice(['user.k0', 'user.k1', 'trusted.t', 'bad.ns', 'user.k2'])} -v {r.choice(XVALS)} {path()}"
    if k == "getfattr":
        return f"-getfattr {r.choice(['-d ', '-n user.k0 ', '-d -e hex ', '-R -d '])}{path()}"
    if k == "setfacl":
        return f"-setfacl {r.choice(['-m user:alice:rwx', '-m group:staff:r-x', '-m default:user:bob:r--', '-b', '-k', '-x user:alice', '--set user::rwx,group::r-x,other::---', '-R -m user:bob:rw-', '-m mask::r--'])} {path()}"
    if k == "getfacl":
        return f"-getfacl {r.choice(['', '-R '])}{path()}"
    if k == "checksum":
        return f"-checksum {path()}"
    if k == "find":
        return f"-find {r.choice([ROOT, path()])} {r.choice(['-name a', '-iname D*', '-name *.txt', '-print', '-name x* -print'])}"
    if k == "concat":
        return f"-concat {path()} {path()} {path()}"
    if k == "touch":
        return f"-touch {r.choice(['', '-c ', '-m -t 20200101:000000 ', '-a -t 20210203:040506 ', '-t 20190101:120000 '])}{path()}"
    if k == "text":
        return f"-text {path()}"
    if k == "as_user":
        inner = cmd()
        while inner.startswith("@"):
            inner = cmd()
        return f"@{r.choice(USERS)} {inner}"
    raise AssertionError(k)


print("-rm -r -f -skipTrash /fz")
print("-mkdir -p /fz/a/b /fz/c")
print("-chmod 777 /fz")
print("-put " + LOCALS[3] + " /fz/d.txt")
for _ in range(n):
    print(cmd())
print("-ls -R /fz")
print("-count -q /fz")
print("-rm -r -f -skipTrash /fz")
