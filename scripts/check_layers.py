#!/usr/bin/env python3
"""check_layers.py -- fails on an include that runs back up the data flow.

The library's folders are stages, in this order (docs/design.md):

    common < instrument < runtime < model < latency_tables < regroup
           < pipeline < attach < report < cli

A file in a stage may include its own folder's headers, the headers of the
folders before it, and the public headers (include/threadmap/X.h) of its
own stage and the stages before it.  The umbrella threadmap.h is for the
command (cli/), tests, benchmarks and examples only.  The command (cli/) calls the
public API: besides its own headers it may include only common/base.h
(errors, buffers, files).  A public header includes only public headers of
earlier stages.  tests/, benchmarks/ and examples/ may include anything.

Usage: check_layers.py [ROOT]   (default: the repository holding this script)
Also checks that each header's include guard names its path.
Prints one line per bad include or guard, FILE:LINE: ..., and exits 1 if any.
"""
import os
import re
import sys

STAGES = ["common", "instrument", "runtime", "model", "latency_tables",
          "regroup", "pipeline", "attach", "report", "cli"]
RANK = {s: i for i, s in enumerate(STAGES)}
CLI_PRIVATE_OK = {"common/base.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def verdict(stage, target):
    """None if a file of `stage` may include `target`, else the reason."""
    head, _, rest = target.partition("/")
    if target == "threadmap.h":
        if stage == "cli":
            return None
        return "the umbrella header threadmap.h (include the stage headers)"
    if head == "threadmap":
        pub = rest[:-2] if rest.endswith(".h") else rest
        if pub not in RANK:
            return "an unknown public header"
        if RANK[pub] > RANK[stage]:
            return "the public header of a later stage (%s)" % pub
        return None
    if head not in RANK or not rest:
        return None  # a header beside the file, or a system-like path
    if stage == "cli" and head != "cli" and target not in CLI_PRIVATE_OK:
        return "a stage's private header: the command uses the public API"
    if RANK[head] > RANK[stage]:
        return "a later stage (%s)" % head
    return None


GUARD = re.compile(r"^#ifndef (\w+)\s*$", re.M)


def guard_fault(rel, text):
    """The include guard must name the header's path: include/threadmap/X.h
    is THREADMAP_X_H, DIR/X.h is TMAP_DIR_X_H."""
    m = GUARD.search(text)
    parts = rel[:-2].split("/")
    want = ("THREADMAP_" if parts[0] == "include" else "TMAP_") + "_".join(
        p.upper() for p in parts[-1 if parts[0] == "include" else 0:]) + "_H"
    if not m:
        return "no include guard (want %s)" % want
    if m.group(1) != want:
        return "include guard %s names another path (want %s)" % (m.group(1), want)
    return None


def files(root):
    for stage in STAGES:
        d = os.path.join(root, stage)
        if os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                if name.endswith((".c", ".h", ".cu", ".cuh")):
                    yield stage, os.path.join(stage, name)
    pub = os.path.join(root, "include", "threadmap")
    if os.path.isdir(pub):
        for name in sorted(os.listdir(pub)):
            if name.endswith(".h") and name[:-2] in RANK:
                yield name[:-2], os.path.join("include", "threadmap", name)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    bad = checked = 0
    for stage, rel in files(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        if rel.endswith(".h"):
            why = guard_fault(rel, text)
            if why:
                print("%s: %s" % (rel, why))
                bad += 1
        for n, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            checked += 1
            why = verdict(stage, m.group(1))
            if rel.startswith("include/") and not m.group(1).startswith("threadmap/"):
                why = why or "a private header from a public one"
            if why:
                print('%s:%d: includes "%s": %s' % (rel, n, m.group(1), why))
                bad += 1
    if checked == 0:
        print("check_layers: no includes found under %s" % root)
        return 1
    print("check_layers: %d includes checked, %d backward" % (checked, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
