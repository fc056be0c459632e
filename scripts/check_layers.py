#!/usr/bin/env python3
"""A library folder's subfolders include each other in one direction only.

Reads every .h and .cpp under ROOT (default trainer/, run from the repository root or given a path) and
counts its `#include "ROOT/..."` lines by folder: each folder is its own node, a nested one (step/graph/)
apart from its parent. It exits 1 naming the files behind each violation of the layering
docs/design.md states for trainer/:
  - two subfolders that include each other, directly or round a longer loop;
  - a file at ROOT's top, other than the run itself (ROOT/trainer.h, ROOT/trainer.cpp), that includes a
    subfolder: the top's configuration, world and signals sit below every subfolder;
  - more than 20 sources at ROOT's top.
With -v it prints the include graph between folders (each arrow with its count of include lines).

usage: check_layers.py [-v] [ROOT]
       check_layers.py --self-test   (the check on hand-made trees: it names a loop, and keeps quiet
                                      about a tree that has none)
"""
import collections
import os
import pathlib
import re
import shutil
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
TOP_LIMIT = 20
RUN_FILES = {"trainer.h", "trainer.cpp"}


def include_lines(root):
    """(folder of the including file, folder of the included file, file, included path) for every include
    of a file under `root` from a file under `root`; folders relative to root's parent, as includes are."""
    root = pathlib.Path(root)
    base = root.parent
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".h", ".cpp") or not path.is_file():
            continue
        source = path.relative_to(base)
        for included in INCLUDE.findall(path.read_text(errors="replace")):
            if included.startswith(root.name + "/"):
                yield str(source.parent), os.path.dirname(included), str(source), included


def loops(edges):
    """The strongly connected components of more than one folder (Tarjan's algorithm)."""
    graph = collections.defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def check(root, verbose=False, out=sys.stdout):
    """The violations under `root`, as lines of text; prints the graph when verbose."""
    root = pathlib.Path(root)
    top = root.name
    counts = collections.Counter()
    files = collections.defaultdict(list)
    problems = []
    for src, dst, source, included in include_lines(root):
        if src == dst:
            continue
        if src == top:
            if os.path.basename(source) not in RUN_FILES:
                problems.append(f"{source} (at the top) includes the subfolder file {included}")
            continue
        if dst == top:
            continue  # every subfolder may use the top's configuration, world and signals
        counts[(src, dst)] += 1
        files[(src, dst)].append(f"{source} -> {included}")
    if verbose:
        for (a, b), n in sorted(counts.items()):
            print(f"{a} -> {b}: {n}", file=out)
    for component in loops(counts):
        members = set(component)
        problems.append("these folders include each other: " + ", ".join(component))
        for edge in sorted(e for e in counts if e[0] in members and e[1] in members):
            problems.extend("  " + line for line in files[edge])
    sources = [p for p in root.iterdir() if p.is_file() and p.suffix in (".h", ".cpp")]
    if verbose:
        print(f"{top}/ top: {len(sources)} sources", file=out)
    if len(sources) > TOP_LIMIT:
        problems.append(f"{top}/ has {len(sources)} sources at its top, more than {TOP_LIMIT}: move some into a subfolder")
    return problems


def self_test():
    made = []

    def tree(files):
        made.append(tempfile.mkdtemp())
        folder = pathlib.Path(made[-1]) / "trainer"
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        return folder

    good = tree({"config.h": "", "trainer.cpp": '#include "trainer/step/a.h"\n',
                 "step/a.h": '#include "trainer/config.h"\n#include "trainer/step/graph/b.h"\n',
                 "step/graph/b.h": '#include "trainer/sync/c.h"\n', "sync/c.h": ""})
    assert check(good) == [], check(good)
    loop = tree({"step/a.h": '#include "trainer/step/graph/b.h"\n', "step/graph/b.h": '#include "trainer/sync/c.h"\n',
                 "sync/c.h": '#include "trainer/step/a.h"\n'})
    found = check(loop)
    assert found and "trainer/step, trainer/step/graph, trainer/sync" in found[0], found
    assert any("trainer/sync/c.h -> trainer/step/a.h" in line for line in found), found
    upward = tree({"config.cpp": '#include "trainer/record/e.h"\n', "record/e.h": ""})
    assert any("trainer/config.cpp (at the top)" in line for line in check(upward)), check(upward)
    crowded = tree({f"f{i}.h": "" for i in range(TOP_LIMIT + 1)})
    assert any("more than" in line for line in check(crowded)), check(crowded)
    for folder in made:
        shutil.rmtree(folder)
    print("check_layers.py: self-test passed")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    verbose = "-v" in argv[1:]
    roots = [a for a in argv[1:] if a != "-v"] or ["trainer"]
    problems = []
    for root in roots:
        if not pathlib.Path(root).is_dir():
            print(f"check_layers.py: no folder {root}", file=sys.stderr)
            return 2
        problems += check(root, verbose)
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
