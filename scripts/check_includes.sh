#!/usr/bin/env bash
# Checks that every dtbench source file includes what it uses, with include-what-you-use (Debian's
# `iwyu`, installed here when missing). A file that uses std::map, std::min or snprintf must include
# <map>, <algorithm>, <cstdio> itself, not get them through LibTorch's headers or the precompiled
# header; the same for dtbench's own headers.
#
#   scripts/check_includes.sh [-j JOBS] [FILE...]     (default: every .cpp of the project and tests)
#
# It configures build-iwyu/ without precompiled headers (compile commands only: nothing is built)
# and runs iwyu on each file with scripts/iwyu/dtbench.imp. It reports, and fails on, the headers
# iwyu says a file should add from the standard library or from dtbench itself. Suggestions about
# third-party headers (LibTorch, c10d, Gloo, nlohmann/json, cxxopts, Catch2) are left out: those
# libraries declare their API in internal headers behind umbrella headers, and dtbench includes the
# public header of each part it uses. Removals are printed with --removals, as advice only.
# Not part of CI: it parses LibTorch's headers once per file (about 20 s each on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
removals=0
files=()
while (($#)); do
  case "$1" in
    -j) jobs=$2; shift 2 ;;
    --removals) removals=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
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

log=$(mktemp)
trap 'rm -f "$log"' EXIT
iwyu_tool -p "$build" -j "$jobs" "${files[@]}" -- \
  -Xiwyu --mapping_file="$PWD/scripts/iwyu/dtbench.imp" -Xiwyu --no_fwd_decls -Xiwyu --cxx17ns >"$log" 2>&1 || true

# "<file> should add these lines:" blocks, kept when the header is the standard library's (<name>
# with no '/' and no '.', or a C header <name.h> of libc) or dtbench's own ("folder/file.h").
/usr/bin/python3 - "$log" "$removals" <<'PY'
import re, sys
log, show_removals = open(sys.argv[1]).read(), sys.argv[2] == "1"
own = re.compile(r'#include "(common|comm|compat|data|models|trainer|experiments|tests|dtbench)/')
std = re.compile(r'#include <([a-z_0-9]+|(sys/)?[a-z_0-9]+\.h)>')
missing, removable = {}, {}
for block in log.split("\n\n"):
    lines = block.strip().split("\n")
    if not lines or not lines[0].endswith((" should add these lines:", " should remove these lines:")):
        continue
    path = lines[0].rsplit(" should ", 1)[0]
    if path.startswith("/usr/") or "/build-iwyu/" in path:
        continue
    adds = lines[0].endswith("add these lines:")
    for line in lines[1:]:
        if adds and (own.search(line) or std.search(line)):
            missing.setdefault(path, []).append(line.strip())
        if not adds and line.startswith("- #include"):
            removable.setdefault(path, []).append(line[2:].strip())
for path, lines in sorted(missing.items()):
    print(f"{path} should add:")
    for line in lines:
        print(f"    {line}")
if show_removals:
    for path, lines in sorted(removable.items()):
        print(f"{path} may remove:")
        for line in lines:
            print(f"    {line}")
errors = [l for l in log.split("\n") if " error: " in l]
if errors:
    print("check_includes: iwyu could not parse some files:\n  " + "\n  ".join(errors[:20]), file=sys.stderr)
n = sum(len(v) for v in missing.values())
print(f"check_includes: {n} missing include(s) in {len(missing)} file(s)")
sys.exit(1 if n or errors else 0)
PY
