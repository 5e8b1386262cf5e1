#!/usr/bin/env python3
"""Lists the functions of labrun's C++ sources longer than N lines (default 80), longest first.

Outside kernels: src/, include/, experiments/ and examples/ host sources (*.cpp, *.hpp), not *.cu/*.cuh and not
tests/. A function is a brace block whose opening line reads as a definition (a name and a parameter list before the
brace, not a control statement, class or namespace), counted from its first line to its closing brace; a lambda inside
a function counts toward its function. A heuristic over text (no compiler), good enough to count and to point at.
Usage: scripts/long_functions.py [N] (from the repository root)
"""
import pathlib
import re
import sys

LIMIT = int(sys.argv[1]) if len(sys.argv) > 1 else 80
ROOTS = ["src", "include", "experiments", "examples"]
CONTROL = re.compile(r"^\s*(if|for|while|switch|catch|do|else|try|return)\b")
SCOPE = re.compile(r"^\s*(namespace|class|struct|enum|union|extern)\b|^\s*(template\s*<.*>\s*)?(class|struct)\b")


def strip(text):
    """The text with comments and string/char literals blanked (line structure kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * max(0, j - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    lines = strip(path.read_text(errors="replace")).split("\n")
    depth, stack, found = 0, [], []  # stack: (kind, start line, depth at open)
    header = ""
    for number, line in enumerate(lines, 1):
        header = (header + " " + line).strip()[-400:]
        for ch in line:
            if ch == "{":
                in_function = any(k == "f" for k, _, _ in stack)
                head = header[: header.rfind("{")] if "{" in header else header
                last = re.split(r"[;{}]", head)[-1]
                kind = "b"
                if not in_function and "(" in last and not CONTROL.match(last) and not SCOPE.match(last) \
                        and not re.search(r"=\s*$", last.strip()) and re.search(r"\w\s*\([^()]*(\([^()]*\)[^()]*)*\)", last):
                    kind = "f"
                stack.append((kind, number, depth))
                depth += 1
                header = ""
            elif ch == "}":
                depth -= 1
                if stack:
                    kind, start, _ = stack.pop()
                    if kind == "f":
                        found.append((number - start + 1, start, re.sub(r"\s+", " ", last_name(lines, start))))
                header = ""
            elif ch == ";":
                header = ""
    return found


def last_name(lines, start):
    text = lines[start - 1].strip()
    return text[:100]


def main():
    rows = []
    for root in ROOTS:
        for path in sorted(pathlib.Path(root).rglob("*")):
            if path.suffix in (".cpp", ".hpp") and path.is_file():
                for length, start, name in functions(path):
                    if length > LIMIT:
                        rows.append((length, f"{path}:{start}", name))
    rows.sort(reverse=True)
    for length, where, name in rows:
        print(f"{length:5d}  {where}  {name}")
    print(f"{len(rows)} functions over {LIMIT} lines")


if __name__ == "__main__":
    main()
