"""Content files: Markdown with a TOML front-matter block, and plain TOML files.

A content file starts with a line ``+++``, then TOML (the structured parts: title, equations,
questions …), then another ``+++``, then the Markdown body::

    +++
    title = "Softmax with temperature"
    slug = "softmax-temperature"
    +++
    The body, in Markdown with $math$.

Reading never guesses: a file that does not parse raises :class:`ContentError` naming the file,
the line (counted in the whole file, fences included) or the key, and what is wrong. Writing
gives back the same bytes that reading took in, so content can round-trip through the database.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tomli_w

FENCE = "+++"
_TOML_LINE = re.compile(r"at line (\d+)")


class ContentError(Exception):
    """A content file that cannot be loaded: where, and what is wrong."""

    def __init__(self, path: Path | str, message: str, *, line: int | None = None, key: str = ""):
        self.path = str(path)
        self.line = line
        self.key = key
        self.message = message
        where = self.path + (f":{line}" if line else "") + (f" [{key}]" if key else "")
        super().__init__(f"{where}: {message}")


def _parse_toml(path: Path | str, text: str, first_line: int = 1) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_LINE.search(str(exc))
        # tomllib names a line, or says "at end of document" (then the last line is at fault).
        line = int(found.group(1)) + first_line - 1 if found else first_line + text.count("\n")
        reason = _TOML_LINE.split(str(exc))[0].rstrip(" (")
        raise ContentError(path, f"TOML does not parse: {reason}", line=line) from None


def read_toml(path: Path) -> dict[str, Any]:
    """A whole TOML file as a dict, or ContentError with its line."""
    return _parse_toml(path, _read_text(path))


def read_markdown(path: Path) -> tuple[dict[str, Any], str]:
    """The front matter (as a dict) and the Markdown body of a content file."""
    text = _read_text(path)
    lines = text.split("\n")
    if not lines or lines[0].strip() != FENCE:
        raise ContentError(path, f"a content file starts with a line '{FENCE}'", line=1)
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == FENCE)
    except StopIteration:
        raise ContentError(
            path, f"the front matter is not closed: add a line '{FENCE}' after it", line=1
        ) from None
    meta = _parse_toml(path, "\n".join(lines[1:end]), first_line=2)
    body = "\n".join(lines[end + 1 :]).strip("\n")
    return meta, body


def write_markdown(meta: dict[str, Any], body: str) -> str:
    """The text of a content file: front matter, then body, ending in one newline."""
    return f"{FENCE}\n{dump_toml(meta)}{FENCE}\n\n{body.strip()}\n"


def dump_toml(data: dict[str, Any]) -> str:
    """TOML with multi-line strings where they read better (explanations, bodies)."""
    return tomli_w.dumps(data, multiline_strings=True)


def require(path: Path | str, data: dict[str, Any], key: str, kind: type, where: str = "") -> Any:
    """``data[key]`` if present and of ``kind``; otherwise a ContentError naming the key."""
    name = f"{where}.{key}" if where else key
    if key not in data:
        raise ContentError(path, f"missing required key '{name}'", key=name)
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ContentError(
            path, f"'{name}' must be a {kind.__name__}, not {type(value).__name__}", key=name
        )
    return value


def _read_text(path: Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ContentError(path, "no such file") from None
    except UnicodeDecodeError as exc:
        raise ContentError(path, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


class KeyLines:
    """Finds the line of a key in TOML text, for error messages (tomllib gives no positions).

    Both content loaders use it, so a file's errors point at the same line whichever app reads
    it.

    A key path is a tuple such as ``("questions", 1, "choices", 0, "correct")``: the second
    ``[[questions]]`` table, its first ``[[questions.choices]]``, the line ``correct = …``.
    """

    _HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")

    def __init__(self, text: str, first_line: int = 1):
        self.first_line = first_line
        self.lines = text.split("\n")
        self.tables: list[tuple[tuple, int]] = [((), 0)]  # (table path, index of its header)
        counts: dict[str, int] = {}
        self.quoted: set[int] = set()  # lines inside a multi-line string: never keys or headers
        open_string = ""  # the delimiter of a multi-line string that is still open
        for number, line in enumerate(self.lines):
            if open_string:
                self.quoted.add(number)
                if open_string in line:
                    open_string = ""
                continue
            for delimiter in ('"""', "'''"):
                if line.count(delimiter) % 2:
                    open_string = delimiter
            header = self._HEADER.match(line)
            if not header:
                continue
            name = header.group(2)
            if header.group(1) == "[[":
                counts[name] = counts.get(name, 0) + 1
                for other in [k for k in counts if k.startswith(name + ".")]:
                    del counts[other]
            path: list[Any] = []
            segments = name.split(".")
            for i, segment in enumerate(segments):
                path.append(segment.strip())
                dotted = ".".join(segments[: i + 1])
                if dotted in counts and (i < len(segments) - 1 or header.group(1) == "[["):
                    path.append(counts[dotted] - 1)
            self.tables.append((tuple(path), number))

    def line(self, keys: Sequence[Any]) -> int | None:
        keys = tuple(keys)
        for cut in range(len(keys), -1, -1):
            table, rest = keys[:cut], keys[cut:]
            starts = [start for path, start in self.tables if path == table]
            if not starts:
                continue
            start = starts[0]
            if rest and isinstance(rest[0], str):
                end = next((s for _, s in self.tables if s > start), len(self.lines))
                pattern = re.compile(rf"^\s*[\"']?{re.escape(rest[0])}[\"']?\s*=")
                found = [
                    n
                    for n in range(start, end)
                    if n not in self.quoted and pattern.match(self.lines[n])
                ]
                if found:
                    return found[0] + self.first_line
            if table:
                return start + self.first_line
            return None
        return None
