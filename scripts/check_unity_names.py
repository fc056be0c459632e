#!/usr/bin/env python3
"""Names local to a source must be unique within its target when the target compiles as unity units.

With DTBENCH_UNITY (cmake/BuildSpeed.cmake) CMake concatenates a target's sources into a few translation
units. Two sources that each define a type or a variable of one name in their anonymous namespaces then
fail to compile, which is loud. Two sources that each define a *function* of one name with different
parameter types compile silently: the functions become overloads, and a call in one source may pick the
other source's function (an int argument prefers `f(int)` over `f(int64_t)`). This check reads the unity
units CMake generated in a build directory and, for every target, lists the functions that two of its
sources define locally (in an anonymous namespace, or `static` at namespace scope). It exits 1 naming each
one and its files; rename one of them.

usage: check_unity_names.py BUILD_DIR
"""
import collections
import pathlib
import re
import sys

TOKEN = re.compile(r"[A-Za-z_]\w*|::|\S")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "decltype", "alignof", "static_assert",
            "noexcept", "operator", "catch", "defined"}


def strip_code(text):
    """The source without comments, string and character literals, or preprocessor lines."""
    text = re.sub(r'R"(\w*)\((?:.|\n)*?\)\1"', '""', text)  # raw strings
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append('""' if c == '"' else "' '")
            i = j + 1
        else:
            out.append(c)
            i += 1
    lines = []
    continued = False
    for line in "".join(out).split("\n"):
        if continued or line.lstrip().startswith("#"):
            continued = line.rstrip().endswith("\\")
            continue
        lines.append(line)
    return "\n".join(lines)


def local_functions(path):
    """Names of the functions `path` defines with internal linkage at namespace scope."""
    tokens = TOKEN.findall(strip_code(path.read_text(errors="replace")))
    stack = []  # one entry per open brace: "anon", "ns" or "other"
    statement = []
    names = set()
    for tok in tokens:
        at_namespace_scope = all(kind != "other" for kind in stack)
        if tok == "{":
            kind = "other"
            if at_namespace_scope:
                if statement[:1] == ["namespace"]:
                    kind = "anon" if len(statement) == 1 else "ns"
                elif statement[:2] == ["extern", '""']:
                    kind = "ns"
                else:
                    name = function_name(statement)
                    internal = "anon" in stack or "static" in statement[:statement.index("(")] if name else False
                    if name and internal:
                        names.add(name)
            stack.append(kind)
            statement = []
        elif tok == "}":
            if stack:
                stack.pop()
            statement = []
        elif tok == ";":
            statement = []
        elif at_namespace_scope:
            statement.append(tok)
    return names


def function_name(statement):
    """The name a namespace-scope statement defines as a function, or None."""
    if "(" not in statement or statement[0] in ("struct", "class", "union", "enum", "using", "typedef"):
        return None
    first = statement.index("(")
    if "=" in statement[:first] or first == 0:
        return None
    name = statement[first - 1]
    if not re.fullmatch(r"[A-Za-z_]\w*", name) or name in KEYWORDS or name.isupper():
        return None  # an expression, an operator, or a macro such as TEST_CASE
    if first >= 2 and statement[first - 2] in ("::", "operator", "~"):
        return None  # a member defined out of line, or an operator
    return name


def unity_targets(build_dir):
    """{target directory: [sources]} from the unity units CMake generated."""
    targets = collections.defaultdict(list)
    for unit in sorted(build_dir.rglob("CMakeFiles/*.dir/Unity/unity_*.cxx")):
        for m in re.finditer(r'#include "([^"]+)"', unit.read_text()):
            targets[unit.parent.parent].append(pathlib.Path(m.group(1)))
    return targets


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    build_dir = pathlib.Path(argv[1])
    targets = unity_targets(build_dir)
    if not targets:
        print(f"check_unity_names: no unity units under {build_dir} (configure with -DDTBENCH_UNITY=ON and build)",
              file=sys.stderr)
        return 2
    clashes = 0
    sources = 0
    for target, files in sorted(targets.items()):
        owners = collections.defaultdict(list)
        for f in files:
            sources += 1
            for name in local_functions(f):
                owners[name].append(f)
        for name, where in sorted(owners.items()):
            if len(where) > 1:
                clashes += 1
                print(f"{target.name.removesuffix('.dir')}: local function '{name}' defined in "
                      + ", ".join(str(w) for w in where) + " (rename one: in a unity unit they become overloads)")
    print(f"check_unity_names: {len(targets)} targets, {sources} sources, {clashes} clashing names")
    return 1 if clashes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
