"""The notebook as files: topics in TOML, one Markdown file per note, every snippet a .py file.

A notebook directory holds::

    topics.toml                  [[topic]] tables: slug, name, description
    notes/<slug>.md              front matter between +++ lines, then the note's Markdown body
    notes/<slug>/check.py        the code of the note's first snippet check
    notes/<slug>/check_2.py      … of its second, and so on

A note's front matter (``+++`` fences, TOML)::

    title = "The KV cache in a few lines"
    slug = "kv-cache"                      # the file's name without .md
    date = 2026-04-21                      # a TOML date, no quotes
    kind = "code"                          # code, derivation or debugging
    topics = ["deep-learning"]             # slugs from topics.toml
    why_it_matters = "One line."
    published = true

    [written_up_in]                        # optional, also [part_of]: title and url
    title = "A longer write-up"
    url = "https://example.org/…"

    [[checks]]                             # optional, one table per snippet check
    name = "incremental equals full"       # unique within the note
    file = "kv-cache/check.py"             # relative to notes/
    expected_output = "what it prints"
    packages = ["numpy"]                   # importable names it needs

    [[corrections]]                        # optional, the public record of substantive fixes
    date = 2026-05-09
    what_was_wrong = "…"
    what_changed = "…"

:func:`load` upserts topics and notes by slug, checks by name within their note and corrections
by their place in date order, and saves only what differs, so loading the same files again writes
nothing and adds no history. It never deletes: notes, checks and corrections that the files do
not mention stay as they are. :func:`export` writes the database in the same format; loading an
export into an empty database and exporting again gives the same bytes.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any, NoReturn

from django.core.exceptions import ValidationError
from django.db import models, transaction

from platform.frontmatter import (
    FENCE,
    ContentError,
    KeyLines,
    dump_toml,
    read_markdown,
    read_toml,
    require,
    write_markdown,
)

from . import services
from .models import Correction, Note, SnippetCheck, Topic

DEFAULT_DIR = Path(__file__).resolve().parent / "content"

TOPIC_KEYS = {"slug", "name", "description"}
NOTE_KEYS = {
    "title",
    "slug",
    "date",
    "kind",
    "topics",
    "why_it_matters",
    "published",
    "written_up_in",
    "part_of",
    "checks",
    "corrections",
}
LINK_KEYS = {"title", "url"}
CHECK_KEYS = {"name", "file", "expected_output", "packages"}
CORRECTION_KEYS = {"date", "what_was_wrong", "what_changed"}

# Where each model field comes from in a file, for errors that the model's validation finds.
NOTE_FIELD_KEYS = {
    "summary": "why_it_matters",
    "written_up_in": "written_up_in.url",
    "written_up_in_title": "written_up_in.title",
    "part_of": "part_of.title",
    "part_of_url": "part_of.url",
}


def load(path: Path) -> str:
    """Upsert the topics and notes of the notebook directory ``path``; returns a summary line.

    Reads and checks every file before writing anything, then writes in one transaction. Side
    effects: creates or updates topics, notes (their history records each real change), snippet
    checks and corrections; afterwards runs, in this process, every loaded check whose latest
    run did not pass on its current code, so that a fresh site shows its notes as Verified.
    Raises ContentError (file, line or key, and what is wrong) for anything malformed.
    """
    path = Path(path)
    topics_file, notes_dir = path / "topics.toml", path / "notes"
    if not path.is_dir():
        raise ContentError(path, "not a directory")
    if not topics_file.is_file() and not notes_dir.is_dir():
        raise ContentError(path, "not a notebook directory: it has no topics.toml and no notes/")
    topics = _read_topics(topics_file) if topics_file.is_file() else []
    notes = [_read_note(file) for file in sorted(notes_dir.glob("*.md"))]

    with transaction.atomic():
        for spec in topics:
            _upsert(Topic, {"slug": spec["slug"]}, spec["fields"], spec["file"], spec["keys"])
        checks = [check for spec in notes for check in _save_note(spec)]

    runs = 0
    for check in checks:
        if not check.is_passing:
            services.run_check(check=check)
            runs += 1
    slugs = [spec["fields"]["slug"] for spec in notes]
    verified = Note.objects.filter(slug__in=slugs).verified().count()
    return f"{len(notes)} notes, {len(topics)} topics, {runs} check run(s), {verified} verified"


def export(directory: Path) -> None:
    """Write every topic and note in the database to ``directory`` in the format load() reads.

    Side effects: creates ``directory`` if needed and (over)writes topics.toml, notes/<slug>.md
    and the notes' snippet files; other files already there are left alone.
    """
    directory = Path(directory)
    topics = []
    for topic in Topic.objects.order_by("slug"):
        # One type for this name and the checks' entries below (their packages are a list).
        entry: dict[str, Any] = {"slug": topic.slug, "name": topic.name}
        if topic.description:
            entry["description"] = _text(topic.description)
        topics.append(entry)
    _write(directory / "topics.toml", dump_toml({"topic": topics}))

    notes = Note.objects.order_by("slug").prefetch_related(
        models.Prefetch("topics", queryset=Topic.objects.order_by("slug")),
        models.Prefetch("checks", queryset=SnippetCheck.objects.order_by("id")),
        models.Prefetch("corrections", queryset=Correction.objects.order_by("date", "id")),
    )
    for note in notes:
        meta: dict[str, Any] = {
            "title": note.title,
            "slug": note.slug,
            "date": note.date,
            "kind": note.kind,
        }
        if note.topics.all():
            meta["topics"] = [topic.slug for topic in note.topics.all()]
        meta["why_it_matters"] = _text(note.summary)
        meta["published"] = note.published
        for key, title, url in [
            ("written_up_in", note.written_up_in_title, note.written_up_in),
            ("part_of", note.part_of, note.part_of_url),
        ]:
            link = {name: value for name, value in [("title", title), ("url", url)] if value}
            if link:
                meta[key] = link
        checks = []
        for number, check in enumerate(note.checks.all(), start=1):
            file = f"{note.slug}/{snippet_name(number)}"
            _write(directory / "notes" / file, _text(check.code))
            entry = {"name": check.name, "file": file}
            if check.expected_output:
                entry["expected_output"] = _text(check.expected_output)
            if check.package_list:
                entry["packages"] = check.package_list
            checks.append(entry)
        if checks:
            meta["checks"] = checks
        corrections = [
            {
                "date": correction.date,
                "what_was_wrong": _text(correction.what_was_wrong),
                "what_changed": _text(correction.what_changed),
            }
            for correction in note.corrections.all()
        ]
        if corrections:
            meta["corrections"] = corrections
        _write(directory / "notes" / f"{note.slug}.md", write_markdown(meta, _text(note.body)))


def snippet_name(number: int) -> str:
    """The file name export gives a note's ``number``-th check (1-based): check.py, check_2.py …"""
    return "check.py" if number == 1 else f"check_{number}.py"


# Reading: every file is checked completely before anything is written.


def _read_topics(file: Path) -> list[dict[str, Any]]:
    data = read_toml(file)
    _no_unknown_keys(file, data, {"topic"})
    entries = _optional(file, data, "topic", list, [])
    topics, seen = [], set()
    for index, entry in enumerate(entries):
        where = f"topic[{index}]"
        if not isinstance(entry, dict):
            _fail(file, f"'{where}' must be a table ([[topic]])", where)
        _no_unknown_keys(file, entry, TOPIC_KEYS, where)
        slug = _require(file, entry, "slug", str, where)
        if slug in seen:
            _fail(file, f"the topic slug '{slug}' is used twice", f"{where}.slug")
        seen.add(slug)
        fields = {
            "name": _require(file, entry, "name", str, where),
            "description": _optional(file, entry, "description", str, "", where),
        }
        keys = {name: f"{where}.{name}" for name in TOPIC_KEYS}
        topics.append({"file": file, "slug": slug, "fields": fields, "keys": keys})
    return topics


def _read_note(file: Path) -> dict[str, Any]:
    meta, body = read_markdown(file)
    _no_unknown_keys(file, meta, NOTE_KEYS)
    slug = _require(file, meta, "slug", str)
    if slug != file.stem:
        _fail(file, f"the slug '{slug}' differs from the file name '{file.name}'", "slug")
    kind = _require(file, meta, "kind", str)
    if kind not in Note.Kind.values:
        known = ", ".join(Note.Kind.values)
        _fail(file, f"unknown kind '{kind}': use one of {known}", "kind")
    topics = _optional(file, meta, "topics", list, [])
    for index, topic in enumerate(topics):
        if not isinstance(topic, str):
            _fail(file, f"'topics' lists slugs (strings), not {type(topic).__name__}", "topics")
        if topics.index(topic) != index:
            _fail(file, f"the topic '{topic}' is listed twice", "topics")
    written_up_in = _link(file, meta, "written_up_in")
    part_of = _link(file, meta, "part_of")
    fields = {
        "title": _require(file, meta, "title", str),
        "slug": slug,
        "date": _date(file, meta, "date"),
        "kind": kind,
        "summary": _require(file, meta, "why_it_matters", str),
        "body": body,
        "written_up_in": written_up_in.get("url", ""),
        "written_up_in_title": written_up_in.get("title", ""),
        "part_of": part_of.get("title", ""),
        "part_of_url": part_of.get("url", ""),
        "published": _require(file, meta, "published", bool),
    }
    return {
        "file": file,
        "fields": fields,
        "topics": topics,
        "checks": _read_checks(file, meta),
        "corrections": _read_corrections(file, meta),
    }


def _link(file: Path, meta: dict[str, Any], key: str) -> dict[str, str]:
    link = _optional(file, meta, key, dict, {})
    _no_unknown_keys(file, link, LINK_KEYS, key)
    return {name: _optional(file, link, name, str, "", key) for name in LINK_KEYS}


def _read_checks(file: Path, meta: dict[str, Any]) -> list[dict[str, Any]]:
    notes_dir = file.parent.resolve()
    checks, names = [], set()
    for index, entry in enumerate(_tables(file, meta, "checks")):
        where = f"checks[{index}]"
        _no_unknown_keys(file, entry, CHECK_KEYS, where)
        name = _require(file, entry, "name", str, where)
        if name in names:
            _fail(file, f"another check of this note is already named '{name}'", f"{where}.name")
        names.add(name)
        relative = _require(file, entry, "file", str, where)
        snippet = (notes_dir / relative).resolve()
        if not snippet.is_relative_to(notes_dir) or snippet.suffix != ".py":
            message = f"'{relative}' must name a .py file inside {notes_dir}"
            _fail(file, message, f"{where}.file")
        if not snippet.is_file():
            _fail(file, f"the snippet file '{relative}' does not exist", f"{where}.file")
        try:
            code = snippet.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            _fail(
                file, f"the snippet file '{relative}' is not UTF-8 ({exc.reason})", f"{where}.file"
            )
        packages = _optional(file, entry, "packages", list, [], where)
        if not all(isinstance(name, str) and _PACKAGE.fullmatch(name) for name in packages):
            message = "'packages' lists importable names (strings such as \"numpy\")"
            _fail(file, message, f"{where}.packages")
        checks.append(
            {
                "where": where,
                "name": name,
                "code": code,
                "expected_output": _optional(file, entry, "expected_output", str, "", where),
                "packages": " ".join(packages),
            }
        )
    return checks


def _read_corrections(file: Path, meta: dict[str, Any]) -> list[dict[str, Any]]:
    corrections = []
    for index, entry in enumerate(_tables(file, meta, "corrections")):
        where = f"corrections[{index}]"
        _no_unknown_keys(file, entry, CORRECTION_KEYS, where)
        corrections.append(
            {
                "where": where,
                "date": _date(file, entry, "date", where),
                "what_was_wrong": _require(file, entry, "what_was_wrong", str, where),
                "what_changed": _require(file, entry, "what_changed", str, where),
            }
        )
    # Stored corrections are shown (and matched here) in date order; equal dates keep file order.
    return sorted(corrections, key=lambda correction: correction["date"])


# Writing: only what differs is saved, so a reload adds no history.


def _save_note(spec: dict[str, Any]) -> list[SnippetCheck]:
    """Upsert one note with its topics, checks and corrections; returns the note's checks."""
    file, fields = spec["file"], spec["fields"]
    keys = {name: NOTE_FIELD_KEYS.get(name, name) for name in fields}
    note = _upsert(Note, {"slug": fields["slug"]}, fields, file, keys)

    topics = {topic.slug: topic for topic in Topic.objects.filter(slug__in=spec["topics"])}
    for slug in spec["topics"]:
        if slug not in topics:
            _fail(file, f"unknown topic '{slug}': add it to topics.toml first", "topics")
    if set(note.topics.all()) != set(topics.values()):
        note.topics.set(topics.values())

    checks = []
    for check_spec in spec["checks"]:
        where = check_spec["where"]
        values = {
            "code": check_spec["code"],
            "expected_output": check_spec["expected_output"],
            "packages": check_spec["packages"],
        }
        # The hash is stored with the check, so saving does not also queue a run on the worker:
        # load() runs what needs running itself.
        values["code_hash"] = SnippetCheck(**values).compute_code_hash()
        check_keys = {
            "name": f"{where}.name",
            "code": f"{where}.file",
            "expected_output": f"{where}.expected_output",
            "packages": f"{where}.packages",
        }
        lookup = {"note": note, "name": check_spec["name"]}
        checks.append(_upsert(SnippetCheck, lookup, values, file, check_keys))

    stored = list(note.corrections.order_by("date", "id"))
    for index, correction in enumerate(spec["corrections"]):
        where = correction["where"]
        values = {name: correction[name] for name in CORRECTION_KEYS}
        correction_keys = {name: f"{where}.{name}" for name in CORRECTION_KEYS}
        if index < len(stored):
            _update(stored[index], values, file, correction_keys)
        else:
            _create(Correction, {"note": note, **values}, file, correction_keys)
    return checks


def _upsert(
    model: type[models.Model],
    lookup: dict[str, Any],
    values: dict[str, Any],
    file: Path,
    keys: dict[str, str],
) -> Any:
    """The row matching ``lookup``, created or updated to ``values`` (saved only if it differs)."""
    obj = model._default_manager.filter(**lookup).first()
    if obj is None:
        return _create(model, {**lookup, **values}, file, keys)
    _update(obj, values, file, keys)
    return obj


def _create(model: type[models.Model], values: dict[str, Any], file: Path, keys: dict) -> Any:
    obj = model(**values)
    _validate(obj, file, keys)
    obj.save()
    return obj


def _update(obj: models.Model, values: dict[str, Any], file: Path, keys: dict) -> None:
    changed = [name for name, value in values.items() if getattr(obj, name) != value]
    if changed:
        for name in changed:
            setattr(obj, name, values[name])
        _validate(obj, file, keys)
        obj.save()


def _validate(obj: models.Model, file: Path, keys: dict[str, str]) -> None:
    """The model's own validation (lengths, URLs, slugs, uniqueness) as a ContentError."""
    try:
        obj.full_clean()
    except ValidationError as exc:
        field, messages = next(iter(exc.message_dict.items()))
        key = keys.get(field, "")
        _fail(file, " ".join(messages) if key else f"{field}: {' '.join(messages)}", key)


# Checking values and naming what is wrong.


def _require(file: Path, data: dict, key: str, kind: type, where: str = "") -> Any:
    try:
        return require(file, data, key, kind, where)
    except ContentError as exc:
        raise _located(exc) from None


def _optional(file: Path, data: dict, key: str, kind: type, default: Any, where: str = "") -> Any:
    return _require(file, data, key, kind, where) if key in data else default


def _date(file: Path, data: dict, key: str, where: str = "") -> dt.date:
    value = data.get(key)
    name = f"{where}.{key}" if where else key
    if isinstance(value, str):
        _fail(file, f"'{name}' must be a TOML date without quotes, such as 2026-05-02", name)
    if isinstance(value, dt.datetime):
        _fail(file, f"'{name}' must be a date without a time, such as 2026-05-02", name)
    return _require(file, data, key, dt.date, where)


def _tables(file: Path, data: dict, key: str) -> list[dict[str, Any]]:
    entries = _optional(file, data, key, list, [])
    for entry in entries:
        if not isinstance(entry, dict):
            _fail(file, f"'{key}' must be tables ([[{key}]]), not {type(entry).__name__}", key)
    return entries


def _no_unknown_keys(file: Path, data: dict, allowed: set[str], where: str = "") -> None:
    for key in data:
        if key not in allowed:
            name = f"{where}.{key}" if where else key
            known = ", ".join(sorted(allowed))
            _fail(file, f"unknown key '{name}' (known keys: {known})", name)


def _fail(file: Path, message: str, key: str = "") -> NoReturn:
    raise _located(ContentError(file, message, key=key))


def _located(error: ContentError) -> ContentError:
    """The same error with the line where its key is written, when that line can be found."""
    if error.line or not error.key:
        return error
    return ContentError(
        error.path, error.message, line=_line_of(Path(error.path), error.key), key=error.key
    )


_PACKAGE = re.compile(r"[A-Za-z_][\w.]*")
_KEY = re.compile(r"(?:(\w+)(?:\[(\d+)\])?\.)?(\w+)")


def _line_of(file: Path, key: str) -> int | None:
    """The line of ``file`` that sets ``key`` (``kind``, ``part_of.url``, ``checks[1].file``),
    or of its table when the key itself is missing; None when it cannot tell."""
    parsed = _KEY.fullmatch(key)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if parsed is None:
        return None
    table, index, name = parsed.groups()
    path: tuple = (name,)
    if table:
        path = (table, int(index), name) if index is not None else (table, name)
    lines = text.split("\n")
    if lines and lines[0].strip() == FENCE:  # a note: only its front matter is TOML
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == FENCE), len(lines))
        return KeyLines("\n".join(lines[1:end]), first_line=2).line(path)
    return KeyLines(text).line(path)


def _text(value: str) -> str:
    """Text as files hold it: newlines only (admin forms submit CRLF)."""
    return value.replace("\r\n", "\n").replace("\r", "\n")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")
