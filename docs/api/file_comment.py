#!/usr/bin/env python3
"""Doxygen input filter: a header's opening comment becomes the documentation of the file.

Every public header opens with one paragraph saying what it is for: `//` lines in the C++ headers, one `/* … */`
block in the C header (bmmc/bmmc.h). Doxygen reads neither as documentation, so this filter (FILTER_PATTERNS in
docs/api/Doxyfile) prints the header with that comment turned into a `\\file` block — `//` becomes `///`, `/*`
becomes `/**` — and every other line unchanged, so that Doxygen's line numbers stay the header's own.
Usage: file_comment.py HEADER (the filtered text goes to standard output).
"""

import sys


def filtered(lines):
    """The lines of a header with its opening comment made the file's documentation."""
    out = list(lines)
    if out and out[0].startswith("/*") and not out[0].startswith("/**"):
        for i, line in enumerate(out):
            if "*/" in line:
                out[0] = "/**" + out[0][2:]
                if i == 0:
                    out[0] = out[0].replace("*/", " \\file */", 1)
                else:
                    out[i] = line.replace("*/", "\\file */", 1)
                break
        return out
    last = None
    for i, line in enumerate(out):
        if not line.startswith("//"):
            break
        if not line.startswith("///"):
            out[i] = "///" + line[2:]
        last = i
    if last is not None:
        out[last] = out[last].rstrip("\n") + " \\file\n"
    return out


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        sys.stdout.write("".join(filtered(f.readlines())))


if __name__ == "__main__":
    main()
