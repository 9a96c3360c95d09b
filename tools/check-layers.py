#!/usr/bin/env python3
"""Checks that includes between the folders of proxy/src (and bench/src) point only down the
layer order of the architecture:

    core <- tls, resp <- route <- config <- net <- backend <- session <- control <- main.cc
    metrics beside them (it includes core only; everyone may include it)
    bench/src includes core, resp and tls only

A file of one folder may include headers of its own folder and of the folders below it. An upward
include fails the check unless tools/layer-exceptions.txt lists it; that file is the runtime's
remaining debt, and an entry that no longer matches an include fails the check too, so the list
only shrinks. Prints every finding as file:line: include, and a summary line.

Usage: tools/check-layers.py [--root DIR] [--exceptions FILE]
  --root DIR          repository root (default: this script's parent folder)
  --exceptions FILE   the allowed upward includes (default ROOT/tools/layer-exceptions.txt)
Exit status: 0 when clean, 1 on a finding, 2 on a usage error.
"""

import argparse
import os
import re
import sys

BELOW = {
    "core": set(),
    "tls": {"core"},
    "resp": {"core"},
    "metrics": {"core"},
    "route": {"core", "tls", "resp", "metrics"},
    "config": {"core", "tls", "resp", "metrics", "route"},
    "net": {"core", "tls", "resp", "metrics", "route", "config"},
    "backend": {"core", "tls", "resp", "metrics", "route", "config", "net"},
    "session": {"core", "tls", "resp", "metrics", "route", "config", "net", "backend"},
    "control": {"core", "tls", "resp", "metrics", "route", "config", "net", "backend", "session"},
}
BENCH_MAY_INCLUDE = {"core", "resp", "tls"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"')


def load_exceptions(path):
    """Lines "proxy/src/dir/file.cc: dir/header.h"; '#' starts a comment."""
    entries = set()
    if not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.split("#", 1)[0].strip()
            if line:
                entries.add(line)
    return entries


def scan(root, src, allowed_for):
    """Yields (relative file, line number, included path, folder) for every upward include."""
    base = os.path.join(root, src)
    for folder in sorted(os.listdir(base)):
        path = os.path.join(base, folder)
        if not os.path.isdir(path):
            continue
        allowed = allowed_for(folder)
        if allowed is None:
            continue
        for name in sorted(os.listdir(path)):
            if not name.endswith((".h", ".cc", ".inc")):
                continue
            rel = os.path.join(src, folder, name)
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if m is None:
                        continue
                    target = m.group(1)
                    if target != folder and target not in allowed:
                        included = line.split('"')[1]
                        yield rel, number, included, target


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(usage=argparse.SUPPRESS, add_help=False,
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-h", "--help", action="help", help=argparse.SUPPRESS)
    parser.add_argument("--root", default=os.path.dirname(here), help=argparse.SUPPRESS)
    parser.add_argument("--exceptions", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    exceptions_path = args.exceptions or os.path.join(root, "tools", "layer-exceptions.txt")
    if not os.path.isdir(os.path.join(root, "proxy", "src")):
        print(f"check-layers: no proxy/src under {root}", file=sys.stderr)
        return 2
    exceptions = load_exceptions(exceptions_path)

    findings = list(scan(root, os.path.join("proxy", "src"), lambda d: BELOW.get(d)))
    if os.path.isdir(os.path.join(root, "bench", "src")):
        for name in sorted(os.listdir(os.path.join(root, "bench", "src"))):
            rel = os.path.join("bench", "src", name)
            if not name.endswith((".h", ".cc")):
                continue
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if m and m.group(1) not in BENCH_MAY_INCLUDE:
                        findings.append((rel, number, line.split('"')[1], m.group(1)))

    unknown_folders = sorted(
        d for d in os.listdir(os.path.join(root, "proxy", "src"))
        if os.path.isdir(os.path.join(root, "proxy", "src", d)) and d not in BELOW)
    bad = 0
    for folder in unknown_folders:
        print(f"check-layers: proxy/src/{folder}/ has no place in the layer order (add it here)")
        bad += 1

    used = set()
    for rel, number, included, target in findings:
        key = f"{rel}: {included}"
        if key in exceptions:
            used.add(key)
            continue
        print(f"{rel}:{number}: includes {included} ({target}/ is above this layer)")
        bad += 1
    for stale in sorted(exceptions - used):
        print(f"check-layers: {os.path.relpath(exceptions_path, root)} lists '{stale}', "
              "which no longer includes it: remove the line")
        bad += 1
    allowed = len(used)
    if bad:
        print(f"check-layers: {bad} finding(s); {allowed} known upward include(s) allowed")
        return 1
    print(f"check-layers: clean ({allowed} known upward include(s) still listed in "
          f"{os.path.relpath(exceptions_path, root)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
