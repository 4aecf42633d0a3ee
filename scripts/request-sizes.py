#!/usr/bin/env python3
"""Per-actor request sizes of a simulation run, seen from outside (issue #24's "request-size
histograms per actor"): the run goes under strace with `--engine sync`, so each read and write
is a system call of the actor thread that made it; the threads' names (`Random User 0`,
`Checkpoint 0`, ... : the simulation names each actor's thread) are read from /proc while the
run goes on. Prints, per actor and direction, the requests by size (bytes the call returned),
in power-of-two buckets, and the largest.

Usage: scripts/request-sizes.py BINARY CONFIG DIR [SECONDS]
"""

import collections
import os
import re
import subprocess
import sys
import time


def threads_of(pid, names):
    """Adds tid -> name of every thread of `pid` and of its children."""
    for task in os.listdir(f"/proc/{pid}/task") if os.path.isdir(f"/proc/{pid}/task") else []:
        try:
            with open(f"/proc/{pid}/task/{task}/comm") as f:
                names[task] = f.read().strip()
        except OSError:
            pass


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return f.read().split()
    except OSError:
        return []


def bucket(n):
    b = 512
    while b < n:
        b *= 2
    return b


def label(b):
    return f"{b // 1024} KB" if b >= 1024 else f"{b} B"


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    binary, config, out = sys.argv[1:4]
    secs = sys.argv[4] if len(sys.argv) > 4 else "15"
    files = os.path.join(out, "files")
    os.makedirs(files, exist_ok=True)
    trace = os.path.join(out, "trace")
    cmd = ["strace", "-f", "-qq", "-y", "-e",
           "trace=pread64,preadv,preadv2,pwrite64,pwritev,pwritev2", "-o", trace,
           binary, "run", "--config", config, "--dir", files, "--engine", "sync",
           "--duration", secs, "--no-json"]
    with open(os.path.join(out, "stdout"), "w") as so:
        st = subprocess.Popen(cmd, stdout=so, stderr=subprocess.STDOUT)
        names = {}
        while st.poll() is None:
            for child in children(st.pid):
                threads_of(child, names)
            time.sleep(0.05)
    line = re.compile(r"^(\d+)\s+(p(?:read|write)\w*)\((\d+)<([^>]*)>.*\)\s+=\s+(\d+)")
    # A call another thread interrupted is split by strace -f: its head ends `<unfinished
    # ...>`, and a later line of the same thread `<... CALL resumed> ... = N` gives its result.
    unfinished = re.compile(r"^(\d+)\s+(p(?:read|write)\w*)\((\d+)<([^>]*)>.*<unfinished \.\.\.>$")
    resumed = re.compile(r"^(\d+)\s+<\.\.\. (p(?:read|write)\w*) resumed>.*\)\s+=\s+(\d+)")
    pending = {}
    tally = collections.defaultdict(collections.Counter)
    unnamed = 0
    with open(trace) as f:
        for text in f:
            text = text.rstrip("\n")
            m = line.match(text)
            if m:
                tid, call, _, path, got = m.groups()
            elif (u := unfinished.match(text)):
                pending[u.group(1)] = (u.group(2), u.group(4))
                continue
            elif (r := resumed.match(text)) and r.group(1) in pending:
                tid, got = r.group(1), r.group(3)
                call, path = pending.pop(tid)
            else:
                continue
            if not path.endswith((".mdx", ".ldx", ".ndx", ".bak", ".partial")):
                continue
            name = names.get(tid)
            if name is None:
                unnamed += 1
                continue
            actor = re.sub(r" \d+$", "", name)
            kind = "read" if call.startswith("pread") else "write"
            what = "log" if path.endswith(".ldx") else "data"
            tally[(actor, kind, what)][bucket(int(got))] += 1
    for key in sorted(tally):
        c = tally[key]
        total = sum(c.values())
        cells = ", ".join(f"{label(b)}: {c[b]}" for b in sorted(c))
        print(f"{key[0]} {key[1]} ({key[2]}): {total} requests, largest <= {label(max(c))}; {cells}")
    if unnamed:
        print(f"({unnamed} requests from threads not seen by name: setup, start-up or shutdown)")


if __name__ == "__main__":
    main()
