#!/usr/bin/env bash
# Checks that every dtbench source file includes what it uses, with include-what-you-use (Debian's
# `iwyu`, installed here when missing). A file that uses std::map, std::min or snprintf must include
# <map>, <algorithm>, <cstdio> itself, not get them through LibTorch's headers or the precompiled
# header; the same for dtbench's own headers.
#
#   scripts/check_includes.sh [-j JOBS] [--fix] [--removals] [FILE...]
#       (default: every .cpp of the project and its tests)
#
# It configures build-iwyu/ without precompiled headers (compile commands only: nothing is built),
# runs iwyu on each file with scripts/iwyu/dtbench.imp (iwyu's raw output: build-iwyu/iwyu.out), and
# reports, and fails on, the headers iwyu says a file should add from the standard library (C
# headers as their <cxxx> form) or from dtbench itself. --fix inserts them: standard headers in the
# file's block of standard includes, dtbench's in its block of project includes, in order. Left out:
# suggestions about third-party headers (LibTorch, c10d, Gloo, nlohmann/json, cxxopts, Catch2),
# which declare their API in internal headers behind umbrella headers (dtbench includes the public
# header of each part it uses), and removals (printed with --removals, as advice only). Errors that
# iwyu meets inside LibTorch's headers when it instantiates every member of a template (TORCH_MODULE
# holders' default constructors) are iwyu's own and are listed as notes; an error in dtbench's code
# fails the check. Not part of CI: it parses LibTorch's headers once per file (about 15 s each).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
fix=0
removals=0
files=()
while (($#)); do
  case "$1" in
    -j) jobs=$2; shift 2 ;;
    --fix) fix=1; shift ;;
    --removals) removals=1; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) files+=("$1"); shift ;;
  esac
done

if ! command -v include-what-you-use >/dev/null; then
  echo "check_includes: installing Debian's iwyu" >&2
  sudo=""; [[ $(id -u) -eq 0 ]] || sudo=sudo
  $sudo apt-get install -y -qq --no-install-recommends iwyu >/dev/null
fi
build=build-iwyu
cmake -S . -B "$build" -G Ninja -DDTBENCH_PCH=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
if ((${#files[@]} == 0)); then
  mapfile -t files < <(git ls-files '*.cpp' | grep -v '^cmake/')
fi

iwyu_tool -p "$build" -j "$jobs" "${files[@]}" -- \
  -Xiwyu --mapping_file="$PWD/scripts/iwyu/dtbench.imp" -Xiwyu --no_fwd_decls -Xiwyu --cxx17ns \
  >"$build/iwyu.out" 2>&1 || true

/usr/bin/python3 - "$build/iwyu.out" "$fix" "$removals" "$PWD" <<'PY'
import os, re, sys
log, fix, show_removals, root = open(sys.argv[1]).read(), sys.argv[2] == "1", sys.argv[3] == "1", sys.argv[4]
OWN = re.compile(r'^#include "((common|comm|compat|data|models|trainer|experiments|dtbench)/[^"]+|[a-z_]+\.h)"')
STD = re.compile(r'^#include <([a-z_0-9]+|[a-z_0-9]+\.h|sys/[a-z_0-9]+\.h)>')
C_TO_CXX = {f"{h}.h": f"c{h}" for h in ("assert", "ctype", "errno", "float", "limits", "math", "stddef", "stdint",
                                         "stdio", "stdlib", "string", "time", "inttypes")}

def wanted(line):
    """The #include line to add, or None when the suggestion is left out."""
    line = line.split("//")[0].strip()
    if OWN.match(line):
        return line
    m = STD.match(line)
    if not m:
        return None
    header = C_TO_CXX.get(m.group(1), m.group(1))
    return f"#include <{header}>"

def includes_of(path):
    return {l.strip() for l in open(path) if l.startswith("#include")}

missing, removable = {}, {}
for block in log.split("\n\n"):
    lines = block.strip().split("\n")
    if not lines or not lines[0].endswith((" should add these lines:", " should remove these lines:")):
        continue
    path = lines[0].rsplit(" should ", 1)[0]
    if not path.startswith(root + "/") or "/build-iwyu/" in path:
        continue
    if lines[0].endswith("add these lines:"):
        present = includes_of(path)
        for line in lines[1:]:
            include = wanted(line)
            if include and include not in present and include not in missing.get(path, []):
                missing.setdefault(path, []).append(include)
    else:
        removable.setdefault(path, []).extend(l[2:].strip() for l in lines[1:] if l.startswith("- #include"))

CXX_LINE = re.compile(r"#include <[a-z_0-9]+>$")
C_LINE = re.compile(r"#include <(sys/)?[a-z_0-9]+\.h>$")

def insert(path, new):
    """Puts each include of `new` in the block of its kind, in sorted position."""
    text = open(path).read().split("\n")
    own = '#include "' + os.path.splitext(os.path.relpath(path, root))[0] + '.h"'
    for include in sorted(new):
        kind = CXX_LINE if CXX_LINE.match(include) else C_LINE if C_LINE.match(include) else None
        if kind:
            block = [i for i, l in enumerate(text) if kind.match(l)]
        else:
            block = [i for i, l in enumerate(text) if l.startswith('#include "') and l != own]
        if block:
            first = block[0]
            block = [i for i in block if i - first == block.index(i)]  # the first contiguous run
            at = next((i for i in block if text[i] > include), block[-1] + 1)
            text.insert(at, include)
        else:  # a block of its own after the last #include (or after #pragma once)
            last = max([i for i, l in enumerate(text) if l.startswith("#include")] or
                       [i for i, l in enumerate(text) if l.startswith("#pragma once")] or [0])
            text[last + 1:last + 1] = ["", include]
    open(path, "w").write("\n".join(text))

for path, lines in sorted(missing.items()):
    print(f"{os.path.relpath(path, root)} should add:")
    for line in lines:
        print(f"    {line}")
    if fix:
        insert(path, lines)
if show_removals:
    for path, lines in sorted(removable.items()):
        print(f"{os.path.relpath(path, root)} may remove:")
        for line in lines:
            print(f"    {line}")
errors = [l.strip() for l in log.split("\n") if " error: " in l]
ours = [e for e in errors if e.startswith(root + "/")]
theirs = [e for e in errors if not e.startswith(root + "/")]
if theirs:
    print(f"check_includes: note: {len(theirs)} error(s) inside third-party headers from iwyu's own template "
          f"instantiation (see {sys.argv[1]})", file=sys.stderr)
if ours:
    print("check_includes: iwyu could not parse dtbench's code:\n  " + "\n  ".join(ours[:20]), file=sys.stderr)
n = sum(len(v) for v in missing.values())
print(f"check_includes: {n} missing include(s) in {len(missing)} file(s)" + (" (inserted)" if fix and n else ""))
sys.exit(1 if (n and not fix) or ours else 0)
PY
