#!/usr/bin/env python3
"""Writes Sources/TerminalText/DisplayWidthTable.swift: the terminal width of every Unicode scalar, as glibc's
`wcwidth` gives it, from glibc's own locale sources, so that `DisplayWidth` needs neither `wcwidth` nor a locale.

    Scripts/generate-width-table.py                    # rewrites the Swift file from this machine's glibc data
    Scripts/generate-width-table.py --check            # exits 1 when the committed file differs from it

Run it after a glibc upgrade (Debian's `locales` package installs the sources), then run
`swift test --filter TerminalTests`: its comparison with `wcwidth` over every scalar says whether the table still
agrees with the C library, which is what ncurses and tmux measure with.

Where the widths come from, as glibc's `localedef` builds them into a UTF-8 locale's LC_CTYPE:

- /usr/share/i18n/charmaps/UTF-8.gz: the CHARMAP section lists every assigned character; its WIDTH ... END WIDTH
  section lists the characters that take 0 columns (combining marks, format characters) or 2 (East Asian wide
  and full-width). Every other character takes 1.
- /usr/share/i18n/locales/i18n_ctype: the `print` class. `wcwidth` answers -1 for a character outside it or
  outside the charmap (controls, unassigned code points, noncharacters, U+2028 and U+2029).

The table lists the scalars whose width is not 1, as sorted, disjoint ranges; -1 marks the unprintable ones.
"""

import gzip
import re
import sys
from pathlib import Path

CHARMAP = Path("/usr/share/i18n/charmaps/UTF-8.gz")
CTYPE = Path("/usr/share/i18n/locales/i18n_ctype")
OUTPUT = Path(__file__).resolve().parent.parent / "Sources" / "TerminalText" / "DisplayWidthTable.swift"
LAST_SCALAR = 0x10FFFF

CODE = r"<U([0-9A-Fa-f]+)>"


def charmap_sections():
    """The charmap's assigned code points, its width rules and the Unicode version its comments name."""
    assigned = set()
    widths = {}
    version = None
    section = None
    with gzip.open(CHARMAP, "rt", encoding="utf-8") as lines:
        for line in lines:
            line = line.rstrip("\n")
            match = re.match(r"% Character width according to Unicode ([0-9]+(?:\.[0-9]+)*)", line)
            if match:
                version = match.group(1)
            if line.startswith("%") or not line.strip():
                continue
            if line in ("CHARMAP", "WIDTH"):
                section = line
                continue
            if line.startswith("END "):
                section = None
                continue
            if section == "CHARMAP":
                match = re.match(CODE + r"(?:\.\." + CODE + r")?\s", line)
                if match:
                    first = int(match.group(1), 16)
                    last = int(match.group(2), 16) if match.group(2) else first
                    assigned.update(range(first, last + 1))
            elif section == "WIDTH":
                match = re.match(CODE + r"(?:\.\.\." + CODE + r")?\s+(\d+)$", line)
                if not match:
                    sys.exit(f"unexpected WIDTH line in {CHARMAP}: {line}")
                first = int(match.group(1), 16)
                last = int(match.group(2), 16) if match.group(2) else first
                for code in range(first, last + 1):
                    widths[code] = int(match.group(3))
    if not assigned or not widths or version is None:
        sys.exit(f"{CHARMAP}: no CHARMAP or WIDTH section, or no Unicode version")
    return assigned, widths, version


def print_class():
    """The code points of i18n_ctype's `print` class."""
    text = CTYPE.read_text(encoding="utf-8")
    match = re.search(r"^print /\n(.*?)(?<!/)\n", text, re.MULTILINE | re.DOTALL)
    if not match:
        sys.exit(f"{CTYPE}: no print class")
    printable = set()
    for item in match.group(1).replace("/\n", "").replace(" ", "").split(";"):
        bounds = re.fullmatch(CODE + r"(?:\.\." + CODE + r")?", item.strip())
        if not bounds:
            sys.exit(f"{CTYPE}: unexpected item in the print class: {item!r}")
        first = int(bounds.group(1), 16)
        last = int(bounds.group(2), 16) if bounds.group(2) else first
        printable.update(range(first, last + 1))
    return printable


def glibc_version():
    try:
        import platform
        name, version = platform.libc_ver()
        return f"{name} {version}" if name == "glibc" else "glibc"
    except Exception:
        return "glibc"


def ranges():
    """(first, last, columns) for every run of scalars whose width is not 1, in order."""
    assigned, widths, version = charmap_sections()
    printable = print_class()
    result = []
    for code in range(LAST_SCALAR + 1):
        if 0xD800 <= code <= 0xDFFF:
            continue  # surrogates are not scalars; runs may still span them
        columns = widths.get(code, 1) if code in assigned and code in printable else -1
        if columns == 1:
            continue
        if result and result[-1][2] == columns and all(
            0xD800 <= skipped <= 0xDFFF for skipped in range(result[-1][1] + 1, code)
        ):
            result[-1][1] = code
        else:
            result.append([code, code, columns])
    return result, version


def swift_source():
    table, version = ranges()
    rows = "\n".join(f"        (0x{first:04X}, 0x{last:04X}, {columns})," for first, last, columns in table)
    return f"""// Generated by Scripts/generate-width-table.py from {glibc_version()}'s locale sources (Unicode {version}):
// /usr/share/i18n/charmaps/UTF-8.gz and /usr/share/i18n/locales/i18n_ctype. Do not edit; run the script again.

extension DisplayWidth {{
    /// Every scalar whose width is not 1 column, as sorted, disjoint, inclusive ranges: 0 for combining marks and
    /// format characters, 2 for wide ones, -1 for those `wcwidth` calls unprintable (controls, unassigned code
    /// points, noncharacters). Runs may span the surrogates, which are not scalars.
    static let exceptions: [(first: UInt32, last: UInt32, columns: Int8)] = [
{rows}
    ]
}}
"""


def main():
    source = swift_source()
    if sys.argv[1:] == ["--check"]:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != source:
            print(f"{OUTPUT} differs from this machine's glibc data", file=sys.stderr)
            sys.exit(1)
        return
    if sys.argv[1:]:
        sys.exit(__doc__)
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(source, encoding="utf-8")
    print(f"wrote {OUTPUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
