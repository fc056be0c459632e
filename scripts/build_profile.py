#!/usr/bin/env python3
"""Where a build's time went, from ninja's own records: compiler-seconds per object, per folder and in
total, the links, and the critical path (the chain of dependent steps that no number of cores shortens).

Usage: scripts/build_profile.py BUILD_DIR [TARGET ...] [--top N] [--json FILE]

BUILD_DIR/.ninja_log holds each output's start and end (milliseconds from the start of the ninja run
that last built it); `ninja -t graph TARGET` gives what each output waits for. Profile a build made from
a clean build directory (a rebuild records only what it redid), with the targets it built (default
`dtbench`; `all` for the test suite too). The seconds are each step's wall time as it ran, beside the
other steps of the build (-j), so they are what the machine spent, not what one core would.
"""

import argparse
import json
import os
import re
import subprocess
import sys
from collections import defaultdict


def read_log(build_dir):
    """Output path -> (start_ms, end_ms) of its last build, from .ninja_log (format v5 or v6)."""
    path = os.path.join(build_dir, ".ninja_log")
    if not os.path.isfile(path):
        sys.exit(f"build_profile: {path} does not exist: build {build_dir} with ninja first (cmake -G Ninja)")
    steps = {}
    with open(path) as log:
        header = log.readline()
        if not header.startswith("# ninja log v"):
            sys.exit(f"build_profile: {path} is not a ninja log (first line {header.strip()!r})")
        for line in log:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 5:
                continue
            start, end, output = int(fields[0]), int(fields[1]), fields[3]
            steps[output] = (start, end)  # a later line is a later build of the output
    return steps


def read_graph(build_dir, targets):
    """(label of every node, the inputs of every output) from `ninja -t graph`."""
    try:
        dot = subprocess.run(["ninja", "-C", build_dir, "-t", "graph", *targets], check=True, capture_output=True,
                             text=True).stdout
    except FileNotFoundError:
        sys.exit("build_profile: ninja is not on the PATH")
    except subprocess.CalledProcessError as error:
        sys.exit(f"build_profile: ninja -t graph {' '.join(targets)} failed: {error.stderr.strip()}")
    labels, rule_outputs, rule_inputs = {}, defaultdict(list), defaultdict(list)
    rules = set()
    for line in dot.splitlines():
        node = re.match(r'^"(0x[0-9a-f]+)" \[label="((?:[^"\\]|\\.)*)"(, shape=ellipse)?', line)
        if node:
            labels[node.group(1)] = node.group(2)
            if node.group(3):
                rules.add(node.group(1))
            continue
        edge = re.match(r'^"(0x[0-9a-f]+)" -> "(0x[0-9a-f]+)"( \[label="([^"]*)"\])?( \[arrowhead=none\])?', line)
        if not edge:
            continue
        source, target = edge.group(1), edge.group(2)
        if target in rules or edge.group(5):  # an input of a rule
            rule_inputs[target].append(source)
        elif source in rules:  # a rule's output
            rule_outputs[source].append(target)
        else:  # one input, one output, the rule named on the edge
            rule_inputs[(source, target)].append(source)
            rule_outputs[(source, target)].append(target)
    inputs = defaultdict(set)
    for rule, outputs in rule_outputs.items():
        for output in outputs:
            if output in labels:
                inputs[labels[output]].update(labels[i] for i in rule_inputs.get(rule, []) if i in labels)
    return inputs


def folder_of(output):
    """The source folder an object was compiled from: trainer/CMakeFiles/dtbench_trainer.dir/step/x.cpp.o ->
    trainer/step; the precompiled header's object -> its library's folder; a unity unit -> "trainer (unity)"."""
    match = re.match(r"^(.*?)/?CMakeFiles/[^/]+\.dir/(.*)$", output)
    if not match:
        return os.path.dirname(output) or "."
    top, rest = match.group(1), os.path.dirname(match.group(2))
    if rest.startswith("__/"):  # a source outside the library's folder
        rest = ""
    if rest == "cmake_pch.hxx" or "cmake_pch" in os.path.basename(output):
        rest = ""
    if rest == "Unity":  # a unity unit of the library's sources (cmake/BuildSpeed.cmake)
        return (top or ".") + " (unity)"
    return "/".join(p for p in (top, rest) if p) or "."


def is_compile(output):
    return output.endswith((".o", ".gch", ".pch")) and "CMakeFiles" in output


def critical_path(steps, inputs, targets):
    """The longest chain, in seconds of the steps on it, ending at one of `targets`."""
    memo = {}

    def longest(node, depth=0):
        if node in memo:
            return memo[node]
        if depth > 5000:
            sys.exit("build_profile: the graph is deeper than 5000 steps")
        own = (steps[node][1] - steps[node][0]) / 1000 if node in steps else 0.0
        best, chain = 0.0, []
        for child in inputs.get(node, ()):
            length, path = longest(child, depth + 1)
            if length > best:
                best, chain = length, path
        memo[node] = (own + best, chain + ([node] if node in steps else []))
        return memo[node]

    return max((longest(t) for t in targets), key=lambda x: x[0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build_dir")
    parser.add_argument("targets", nargs="*", default=["dtbench"])
    parser.add_argument("--top", type=int, default=15, help="objects listed, slowest first (default 15)")
    parser.add_argument("--json", help="also write the figures to FILE")
    args = parser.parse_args()
    if args.top < 0:
        sys.exit("build_profile: --top takes a count >= 0")
    steps = read_log(args.build_dir)
    inputs = read_graph(args.build_dir, args.targets)
    # The steps of these targets: every output the graph reaches that the log timed.
    wanted, stack = set(), list(args.targets)
    while stack:
        node = stack.pop()
        if node in wanted:
            continue
        wanted.add(node)
        stack.extend(inputs.get(node, ()))
    timed = {o: (e - s) / 1000 for o, (s, e) in steps.items() if o in wanted}
    if not timed:
        sys.exit(f"build_profile: the log times none of the steps of {' '.join(args.targets)}: build them first")
    compiles = {o: t for o, t in timed.items() if is_compile(o)}
    links = {o: t for o, t in timed.items() if not is_compile(o)}
    folders = defaultdict(lambda: [0, 0.0])
    for output, seconds in compiles.items():
        folders[folder_of(output)][0] += 1
        folders[folder_of(output)][1] += seconds
    span = [steps[o] for o in timed]
    wall = (max(e for _, e in span) - min(s for s, _ in span)) / 1000
    length, chain = critical_path(steps, inputs, args.targets)
    total = sum(compiles.values())

    print(f"build profile of {' '.join(args.targets)} in {args.build_dir}")
    print(f"  compiler-seconds {total:.1f} over {len(compiles)} objects (over 10 s: "
          f"{sum(1 for t in compiles.values() if t > 10)} objects, {sum(t for t in compiles.values() if t > 10):.1f} s); "
          f"other steps (links, archives, generators) {sum(links.values()):.1f} s over {len(links)}")
    print(f"  wall time of the logged build {wall:.1f} s; critical path {length:.1f} s over {len(chain)} steps")
    print("\nper folder (objects, compiler-seconds, share):")
    for folder, (count, seconds) in sorted(folders.items(), key=lambda x: -x[1][1]):
        print(f"  {folder:<40} {count:4d} {seconds:9.1f} {seconds / total:6.1%}")
    print(f"\nslowest {min(args.top, len(compiles))} objects:")
    for output, seconds in sorted(compiles.items(), key=lambda x: -x[1])[: args.top]:
        print(f"  {seconds:7.1f}  {output}")
    print("\ncritical path (first step first):")
    for output in chain:
        print(f"  {timed.get(output, 0):7.1f}  {output}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"targets": args.targets, "compiler_seconds": total, "objects": len(compiles),
                       "other_seconds": sum(links.values()), "wall_s": wall, "critical_path_s": length,
                       "critical_path": chain, "folders": {f: {"objects": c, "seconds": s} for f, (c, s) in folders.items()},
                       "per_object": compiles}, out, indent=1)


if __name__ == "__main__":
    main()
