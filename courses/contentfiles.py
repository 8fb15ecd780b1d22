"""Courses and the symbol glossary as files: read, validate, load into the database, export.

The layout (``courses/content/`` holds the demo in this form)::

    glossary.toml                    one [[symbol]] table per piece of notation
    <course-slug>/course.toml        the course's fields and its chapters, in order
    <course-slug>/<chapter-slug>.md  TOML front matter (equations, parts, listings, questions,
                                     links) between +++ lines, then "The idea" in Markdown
    <course-slug>/<chapter-slug>/*.py  the chapter's code listings, as runnable files

Loading upserts by slug (courses, chapters, symbols) and by position (an equation's parts, a
question's choices …), so rows that stay keep their ids and learners' attempts survive; rows the
files no longer mention are deleted. Files are parsed and checked before anything is written,
and everything is written in one transaction: a bad file changes nothing. Every problem is a
:class:`~platform.frontmatter.ContentError` naming the file, the line or key, and what is wrong.

Exporting writes the same layout from the database in one canonical form (fixed key order,
LaTeX in literal strings, defaults left out), so export → load → export gives the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.db import models, transaction

from notebook import contentfiles as notebook_content
from platform.frontmatter import FENCE, ContentError, KeyLines, read_markdown, read_toml
from platform.rendering import latex_problem, markdown_math_problem, part_occurs

from .models import (
    FILENAME_VALIDATOR,
    SEVEN_QUESTIONS,
    Chapter,
    ChapterSymbol,
    Choice,
    CodeListing,
    Course,
    Equation,
    EquationAnswer,
    EquationPart,
    Question,
    Symbol,
)
from .signals import one_invalidation

DEFAULT_DIR = Path(__file__).resolve().parent / "content"
GLOSSARY_FILE = "glossary.toml"
COURSE_FILE = "course.toml"

_SLUG = re.compile(r"^[-a-zA-Z0-9_]+\Z")
_SLUG_LENGTH = 100  # Course, Chapter and Symbol slugs
_KINDS = [value for value, _ in Symbol.Kind.choices]
_ROLES = [value for value, _ in EquationPart.Role.choices]
_WIDGETS = [value for value, _ in Equation.Widget.choices if value]

_Spec = Mapping[str, tuple[type, bool]]  # key -> (type, required)

# Each file's keys: name -> (type, required). Order here is the order export writes them in.
_SYMBOL_KEYS: _Spec = {
    "slug": (str, True),
    "name": (str, True),
    "glyph": (str, True),
    "latex": (str, False),
    "tokens": (list, False),
    "kind": (str, False),
    "extremes": (str, False),
    "explanation": (str, True),
}
_COURSE_KEYS: _Spec = {
    "slug": (str, True),
    "title": (str, True),
    "summary": (str, False),
    "order": (int, False),
    "published": (bool, False),
    "chapters": (list, True),
}
_CHAPTER_KEYS: _Spec = {
    "title": (str, True),
    "summary": (str, False),
    "published": (bool, False),
    "prerequisites": (list, False),
    "prerequisites_note": (str, False),
    "symbols": (list, False),
    "related_chapters": (list, False),
    "related_notes": (list, False),
    "try_it_intro": (str, False),
    "equations": (list, False),
    "listings": (list, False),
    "questions": (list, False),
}
_EQUATION_KEYS: _Spec = {
    "title": (str, True),
    "latex": (str, True),
    "shape_note": (str, False),
    "explanation": (str, False),
    "widget": (str, False),
    "answers": (dict, False),
    "parts": (list, False),
}
# The tutor's model answers: [equations.answers] with one optional key per question.
_ANSWER_KEYS: _Spec = {key: (str, False) for key, _question in SEVEN_QUESTIONS}
_PART_KEYS: _Spec = {"latex": (str, True), "role": (str, True), "reason": (str, True)}
_LISTING_KEYS: _Spec = {
    "file": (str, True),
    "language": (str, False),
    "expected_output": (str, False),
}
_QUESTION_KEYS: _Spec = {"prompt": (str, True), "explanation": (str, True), "choices": (list, True)}
_CHOICE_KEYS: _Spec = {"text": (str, True), "correct": (bool, False), "explanation": (str, True)}
_DEFAULTS: dict[type, Any] = {str: "", list: [], bool: False, int: 0, dict: {}}


# --- specs: what the files say, checked, in the models' terms ---------------------------------


@dataclass
class ChapterSpec:
    path: Path
    slug: str
    fields: dict[str, Any]  # Chapter columns
    symbols: list[str]
    prerequisites: list[str]
    related_chapters: list[str]
    related_notes: list[str]
    # (columns, parts, the tutor's answers by question key)
    equations: list[tuple[dict[str, Any], list[dict[str, Any]], dict[str, str]]]
    listings: list[dict[str, Any]]
    questions: list[tuple[dict[str, Any], list[dict[str, Any]]]]  # (columns, choices)
    lines: KeyLines = field(repr=False)


@dataclass
class CourseSpec:
    path: Path  # the course.toml file
    slug: str
    fields: dict[str, Any]  # Course columns
    chapters: list[ChapterSpec]


@dataclass
class Loaded:
    """What a load wrote: one summary line per part, and the courses it touched."""

    summaries: list[str] = field(default_factory=list)
    course_slugs: list[str] = field(default_factory=list)


def _key_name(keys: Sequence[Any]) -> str:
    name = ""
    for key in keys:
        name += f"[{key + 1}]" if isinstance(key, int) else (f".{key}" if name else key)
    return name


class _File:
    """One content file being read: raises ContentError with its path and line."""

    def __init__(self, path: Path, lines: KeyLines):
        self.path = path
        self.lines = lines

    def error(self, message: str, keys: Sequence[Any] = (), at: Sequence[Any] | None = None):
        """A ContentError for ``keys``, on the line of ``at`` (default: of ``keys``)."""
        line = self.lines.line(keys if at is None else at)
        return ContentError(self.path, message, line=line, key=_key_name(keys))

    def table(
        self,
        data: Any,
        spec: _Spec,
        keys: tuple = (),
        model: type[models.Model] | None = None,
    ) -> dict:
        """The keys of ``data`` checked against ``spec`` (types; required strings not blank;
        no longer than the ``model`` field of the same name allows); defaults filled in."""
        if not isinstance(data, dict):
            raise self.error(f"must be a table, not {type(data).__name__}", keys)
        for key in data:
            if key not in spec:
                known = ", ".join(spec)
                raise self.error(f"unknown key '{key}' (expected one of: {known})", (*keys, key))
        result = {}
        for key, (kind, required) in spec.items():
            if key not in data:
                if required:
                    raise self.error(f"missing required key '{key}'", (*keys, key), at=keys)
                result[key] = [] if kind is list else _DEFAULTS[kind]
                continue
            value = data[key]
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise self.error(
                    f"must be a {_TYPE_NAMES[kind]}, not {_TYPE_NAMES.get(type(value), 'that')}",
                    (*keys, key),
                )
            if isinstance(value, str) and required and not value.strip():
                raise self.error("must not be empty", (*keys, key))
            limit = _max_length(model, key)
            if isinstance(value, str) and limit and len(value) > limit:
                raise self.error(
                    f"is {len(value)} characters long; at most {limit} fit", (*keys, key)
                )
            result[key] = value
        self.typesettable(result, model, keys)
        return result

    def typesettable(self, row: dict, model: type[models.Model] | None, keys: tuple) -> None:
        """The model's maths fields in ``row`` can be typeset (as its ``clean()`` demands)."""
        for name in getattr(model, "LATEX_FIELDS", ()):
            value = row.get(name)
            problem = latex_problem(value) if isinstance(value, str) and value.strip() else None
            if problem:
                raise self.error(f"this LaTeX cannot be typeset: {problem}", (*keys, name))
        for name in getattr(model, "MARKDOWN_FIELDS", ()):
            value = row.get(name)
            problem = markdown_math_problem(value) if isinstance(value, str) else None
            if problem:
                raise self.error(f"a formula cannot be typeset: {problem}", (*keys, name))

    def strings(self, values: list, keys: tuple) -> list[str]:
        for i, value in enumerate(values):
            if not isinstance(value, str):
                raise self.error(f"item {i + 1} must be a string", keys)
        if len(set(values)) != len(values):
            repeated = next(v for v in values if values.count(v) > 1)
            raise self.error(f"'{repeated}' is listed twice", keys)
        return values

    def tables(self, values: list, keys: tuple) -> list[dict]:
        for i, value in enumerate(values):
            if not isinstance(value, dict):
                raise self.error(f"item {i + 1} must be a table ([[{keys[-1]}]])", keys)
        return values

    def choice(self, value: str, allowed: list[str], keys: tuple) -> str:
        if value not in allowed:
            raise self.error(
                f"unknown value '{value}' (expected one of: {', '.join(allowed)})", keys
            )
        return value

    def slug(self, value: str, keys: tuple) -> str:
        if not _SLUG.match(value) or len(value) > _SLUG_LENGTH:
            raise self.error(
                f"'{value}' is not a slug (up to {_SLUG_LENGTH} letters, digits, dashes, "
                "underscores)",
                keys,
            )
        return value


def _max_length(model: type[models.Model] | None, name: str) -> int | None:
    try:
        return getattr(model._meta.get_field(name), "max_length", None) if model else None
    except FieldDoesNotExist:
        return None


_TYPE_NAMES = {str: "string", list: "list", bool: "boolean (true or false)", int: "integer"}
_TYPE_NAMES.update({dict: "table", float: "number"})


# --- parsing ----------------------------------------------------------------------------------


def parse_glossary(path: Path) -> list[dict[str, Any]]:
    """The symbols of a glossary file, each a dict of Symbol fields, in file order.

    Raises ContentError for anything that is not a well-formed, complete entry. No side effects.
    """
    path = Path(path)
    data = read_toml(path)
    file = _File(path, KeyLines(path.read_text(encoding="utf-8")))
    data = file.table(data, {"symbol": (list, True)})
    entries = []
    seen: set[str] = set()
    for i, raw in enumerate(file.tables(data["symbol"], ("symbol",))):
        keys = ("symbol", i)
        entry = file.table(raw, _SYMBOL_KEYS, keys, Symbol)
        file.slug(entry["slug"], (*keys, "slug"))
        if entry["slug"] in seen:
            raise file.error(f"symbol '{entry['slug']}' appears twice", (*keys, "slug"))
        seen.add(entry["slug"])
        file.strings(entry["tokens"], (*keys, "tokens"))
        entry["kind"] = file.choice(entry["kind"] or "quantity", _KINDS, (*keys, "kind"))
        entries.append(entry)
    return entries


def parse_course(directory: Path) -> CourseSpec:
    """The course in ``directory`` (its course.toml and chapter files), checked.

    Checks everything a file can say on its own; slugs that point at other rows (symbols,
    prerequisites, notes) are checked when loading. No side effects.
    """
    directory = Path(directory)
    path = directory / COURSE_FILE
    data = read_toml(path)
    file = _File(path, KeyLines(path.read_text(encoding="utf-8")))
    course = file.table(data, _COURSE_KEYS, model=Course)
    file.slug(course["slug"], ("slug",))
    slugs = file.strings(course["chapters"], ("chapters",))
    for slug in slugs:
        file.slug(slug, ("chapters",))
        if not (directory / f"{slug}.md").is_file():
            raise file.error(f"chapter '{slug}' has no file {slug}.md beside it", ("chapters",))
    for stray in sorted(directory.glob("*.md")):
        if stray.stem not in slugs:
            raise file.error(f"{stray.name} is not listed in 'chapters'", ("chapters",))
    chapters = [
        _parse_chapter(directory / f"{slug}.md", directory, slug, order)
        for order, slug in enumerate(slugs, start=1)
    ]
    fields = {
        "title": course["title"],
        "summary": course["summary"],
        "order": course["order"],
        "published": data.get("published", True),
    }
    return CourseSpec(path=path, slug=course["slug"], fields=fields, chapters=chapters)


def _parse_chapter(path: Path, directory: Path, slug: str, order: int) -> ChapterSpec:
    meta, body = read_markdown(path)
    lines = KeyLines(path.read_text(encoding="utf-8").split("\n+++", 1)[0], first_line=1)
    file = _File(path, lines)
    chapter = file.table(meta, _CHAPTER_KEYS, model=Chapter)
    problem = markdown_math_problem(body)
    if problem:
        raise ContentError(path, f"a formula in the text cannot be typeset: {problem}")
    for key in ("prerequisites", "symbols", "related_chapters", "related_notes"):
        file.strings(chapter[key], (key,))
    fields = {
        "title": chapter["title"],
        "summary": chapter["summary"],
        "order": order,
        "published": meta.get("published", True),
        "prerequisites_note": chapter["prerequisites_note"],
        "idea": body,
        "try_it_intro": chapter["try_it_intro"],
    }
    return ChapterSpec(
        path=path,
        slug=slug,
        fields=fields,
        symbols=chapter["symbols"],
        prerequisites=chapter["prerequisites"],
        related_chapters=chapter["related_chapters"],
        related_notes=chapter["related_notes"],
        equations=_parse_equations(file, chapter["equations"]),
        listings=_parse_listings(file, chapter["listings"], directory),
        questions=_parse_questions(file, chapter["questions"]),
        lines=lines,
    )


def _parse_equations(file: _File, rows: list) -> list[tuple[dict, list[dict], dict[str, str]]]:
    equations = []
    for i, raw in enumerate(file.tables(rows, ("equations",))):
        keys = ("equations", i)
        equation = file.table(raw, _EQUATION_KEYS, keys, Equation)
        if equation["widget"]:
            file.choice(equation["widget"], _WIDGETS, (*keys, "widget"))
        parts = []
        for j, raw_part in enumerate(file.tables(equation.pop("parts"), (*keys, "parts"))):
            part = file.table(raw_part, _PART_KEYS, (*keys, "parts", j), EquationPart)
            file.choice(part["role"], _ROLES, (*keys, "parts", j, "role"))
            if not part_occurs(part["latex"], equation["latex"]):
                raise file.error(
                    f"the part '{part['latex']}' does not occur in its equation",
                    (*keys, "parts", j, "latex"),
                )
            parts.append(part)
        answers = file.table(equation.pop("answers"), _ANSWER_KEYS, (*keys, "answers"))
        answers = {key: text for key, text in answers.items() if text.strip()}
        equations.append((equation, parts, answers))
    return equations


def _parse_listings(file: _File, rows: list, directory: Path) -> list[dict]:
    """Each listing's columns, its source read from the file it names (inside ``directory``)."""
    listings = []
    for i, raw in enumerate(file.tables(rows, ("listings",))):
        keys = ("listings", i, "file")
        listing = file.table(raw, _LISTING_KEYS, keys[:2], CodeListing)
        source_path = (directory / listing["file"]).resolve()
        if not source_path.is_relative_to(directory.resolve()):
            raise file.error("the listing must be a file inside the course folder", keys)
        if not source_path.is_file():
            raise file.error(f"no such file: {listing['file']}", keys)
        if len(source_path.name) > (_max_length(CodeListing, "filename") or 0):
            raise file.error("the file name is too long for a listing", keys)
        if not re.match(FILENAME_VALIDATOR.regex, source_path.name):
            raise file.error("file names use letters, digits, dots, dashes and underscores", keys)
        try:
            source = source_path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise file.error(f"{listing['file']} is not UTF-8 text", keys) from None
        listings.append(
            {
                "filename": source_path.name,
                "language": listing["language"] or "python",
                "source": source,
                "expected_output": listing["expected_output"],
            }
        )
    if len({listing["filename"] for listing in listings}) != len(listings):
        raise file.error("two listings have the same file name", ("listings",))
    return listings


def _parse_questions(file: _File, rows: list) -> list[tuple[dict, list[dict]]]:
    questions = []
    for i, raw in enumerate(file.tables(rows, ("questions",))):
        keys = ("questions", i)
        question = file.table(raw, _QUESTION_KEYS, keys, Question)
        raw_choices = file.tables(question.pop("choices"), (*keys, "choices"))
        if len(raw_choices) < 2:
            raise file.error("a question needs at least two choices", keys)
        choices = []
        for j, raw_choice in enumerate(raw_choices):
            choice = file.table(raw_choice, _CHOICE_KEYS, (*keys, "choices", j), Choice)
            choices.append(
                {
                    "text": choice["text"],
                    "is_correct": choice["correct"],
                    "explanation": choice["explanation"],
                }
            )
        if not any(choice["is_correct"] for choice in choices):
            raise file.error("no choice is marked 'correct = true'", keys)
        questions.append((question, choices))
    return questions


# --- loading ----------------------------------------------------------------------------------


def load(*, paths: Sequence[Path]) -> Loaded:
    """Load content paths, in order, in one transaction.

    A path may be a course folder (has course.toml), a glossary file, a folder holding
    glossary.toml and course folders (all of them load: glossary first), or a notebook content
    folder (has topics.toml or notes/), which the notebook's loader reads.

    Side effects: creates, updates and deletes Symbol, Course, Chapter and their child rows (and
    notebook rows, through the notebook's loader); nothing at all if any file is bad
    (ContentError). Every chapter's cached page is invalidated once, at the end.
    """
    loaded = Loaded()
    paths = [Path(path) for path in paths]
    # Cached chapter pages are invalidated once at the end, not once per saved row.
    with one_invalidation():
        # Notebook folders first, each in the notebook loader's own transaction: it runs the
        # notes' snippet checks after committing, which must not hold this transaction (and
        # SQLite's write lock) open for seconds. Chapters may then link the notes by slug.
        for path in paths:
            if _is_notebook(path):
                loaded.summaries.append(notebook_content.load(path))
        with transaction.atomic():
            for path in paths:
                if not _is_notebook(path):
                    _load_path(path, loaded)
    return loaded


def load_demo() -> Loaded:
    """The whole demo: the notebook's notes first (chapters link to them), then the glossary and
    every course under ``courses/content/``. Side effects: as :func:`load`."""
    return load(paths=[notebook_content.DEFAULT_DIR, DEFAULT_DIR])


def _load_path(path: Path, loaded: Loaded) -> None:
    if path.is_file() and path.name == GLOSSARY_FILE:
        loaded.summaries.append(_load_glossary(path))
    elif path.is_dir() and (path / COURSE_FILE).is_file():
        _load_courses([parse_course(path)], loaded)
    elif path.is_dir() and (path / GLOSSARY_FILE).is_file():
        courses = [parse_course(d) for d in sorted(path.iterdir()) if (d / COURSE_FILE).is_file()]
        loaded.summaries.append(_load_glossary(path / GLOSSARY_FILE))
        _load_courses(courses, loaded)
    elif _is_notebook(path):
        loaded.summaries.append(notebook_content.load(path))
    elif not path.exists():
        raise ContentError(path, "no such file or folder")
    else:
        raise ContentError(
            path,
            f"not content: expected {GLOSSARY_FILE}, a folder with {COURSE_FILE}, a folder "
            f"with {GLOSSARY_FILE} and course folders, or a notebook folder (topics.toml, notes/)",
        )


def _is_notebook(path: Path) -> bool:
    return path.is_dir() and ((path / "topics.toml").is_file() or (path / "notes").is_dir())


def _load_glossary(path: Path) -> str:
    entries = parse_glossary(path)
    existing = {symbol.slug: symbol for symbol in Symbol.objects.all()}
    for entry in entries:
        values = {k: v for k, v in entry.items() if k != "slug"}
        _save(Symbol, existing.pop(entry["slug"], None), {"slug": entry["slug"]}, values)
    if existing:
        Symbol.objects.filter(pk__in=[symbol.pk for symbol in existing.values()]).delete()
    return f"glossary: {len(entries)} symbols"


def _load_courses(courses: list[CourseSpec], loaded: Loaded) -> None:
    """Rows first, then the links between them (which may point at any course in the load)."""
    chapters: dict[tuple[str, str], Chapter] = {}
    for spec in courses:
        course = _upsert(Course, {"slug": spec.slug}, spec.fields)
        for chapter_spec in spec.chapters:
            chapters[spec.slug, chapter_spec.slug] = _load_chapter(course, chapter_spec)
        course.chapters.exclude(slug__in=[c.slug for c in spec.chapters]).delete()
    for spec in courses:
        for chapter_spec in spec.chapters:
            _link_chapter(chapters[spec.slug, chapter_spec.slug], spec.slug, chapter_spec)
        equations, questions, listings = (
            sum(len(getattr(c, key)) for c in spec.chapters)
            for key in ("equations", "questions", "listings")
        )
        loaded.summaries.append(
            f"course {spec.slug}: {len(spec.chapters)} chapters, {equations} equations, "
            f"{questions} questions, {listings} listings"
        )
        loaded.course_slugs.append(spec.slug)


def _load_chapter(course: Course, spec: ChapterSpec) -> Chapter:
    chapter = _upsert(Chapter, {"course": course, "slug": spec.slug}, spec.fields)
    equations = _upsert_children(Equation, chapter, [row[0] for row in spec.equations])
    for equation, (_, parts, answers) in zip(equations, spec.equations, strict=True):
        _upsert_children(EquationPart, equation, parts)
        _upsert_answers(equation, answers)
    _upsert_children(CodeListing, chapter, spec.listings)
    questions = _upsert_children(Question, chapter, [columns for columns, _ in spec.questions])
    for question, (_, choices) in zip(questions, spec.questions, strict=True):
        _upsert_children(Choice, question, choices)
    return chapter


def _upsert_answers(equation: Equation, answers: dict[str, str]) -> None:
    """The tutor's model answers by question key; questions the file leaves out are deleted."""
    existing = {a.question: a for a in EquationAnswer.objects.filter(equation=equation)}
    for key, text in answers.items():
        lookup = {"equation": equation, "question": key}
        _save(EquationAnswer, existing.pop(key, None), lookup, {"text": text})
    if existing:
        EquationAnswer.objects.filter(pk__in=[a.pk for a in existing.values()]).delete()


def _link_chapter(chapter: Chapter, course_slug: str, spec: ChapterSpec) -> None:
    from notebook.models import Note

    file = _File(spec.path, spec.lines)
    symbols = {s.slug: s for s in Symbol.objects.filter(slug__in=spec.symbols)}
    missing = [slug for slug in spec.symbols if slug not in symbols]
    if missing:
        raise file.error(f"unknown symbol '{missing[0]}' (not in the glossary)", ("symbols",))
    shown = {row.symbol_id: row for row in ChapterSymbol.objects.filter(chapter=chapter)}
    for position, slug in enumerate(spec.symbols, start=1):
        symbol = symbols[slug]
        lookup = {"chapter": chapter, "symbol": symbol}
        _save(ChapterSymbol, shown.pop(symbol.pk, None), lookup, {"order": position})
    if shown:
        ChapterSymbol.objects.filter(pk__in=[row.pk for row in shown.values()]).delete()
    for key in ("prerequisites", "related_chapters"):
        targets = [_find_chapter(file, key, course_slug, ref) for ref in getattr(spec, key)]
        _set_links(getattr(chapter, key), targets)
    notes = {n.slug: n for n in Note.objects.filter(slug__in=spec.related_notes)}
    missing = [slug for slug in spec.related_notes if slug not in notes]
    if missing:
        raise file.error(f"unknown note '{missing[0]}'", ("related_notes",))
    _set_links(chapter.related_notes, list(notes.values()))


def _find_chapter(file: _File, key: str, course_slug: str, ref: str) -> Chapter:
    """``slug`` is a chapter of the same course; ``course-slug/slug`` one of another course."""
    course, _, slug = ref.rpartition("/")
    found = Chapter.objects.filter(course__slug=course or course_slug, slug=slug).first()
    if found is None:
        raise file.error(f"unknown chapter '{ref}'", (key,))
    return found


def _set_links(manager: Any, targets: Sequence[models.Model]) -> None:
    """Set a many-to-many only when it changes (each change moves cached pages' versions)."""
    if {t.pk for t in manager.all()} != {t.pk for t in targets}:
        manager.set(targets)


def _upsert(model: type[models.Model], lookup: dict, values: dict) -> Any:
    """The row matching ``lookup`` with ``values``, saved only if something differs."""
    return _save(model, model._default_manager.filter(**lookup).first(), lookup, values)


def _save(model: type[models.Model], obj: Any, lookup: dict, values: dict) -> Any:
    """``obj`` (or, if None, a new row of ``lookup``) with ``values``, saved only if changed."""
    if obj is None:
        return model._default_manager.create(**lookup, **values)
    changed = [name for name, value in values.items() if getattr(obj, name) != value]
    if changed:
        for name in changed:
            setattr(obj, name, values[name])
        obj.save()
    return obj


def _upsert_children(model: type[models.Model], parent: models.Model, rows: list[dict]) -> list:
    """Children by position (``order`` from 1), surplus rows deleted."""
    parent_field = {Choice: "question", EquationPart: "equation"}.get(model, "chapter")
    fetched: list[Any] = list(
        model._default_manager.filter(**{parent_field: parent}).order_by("order", "id")
    )
    existing: dict[int, Any] = {}
    for obj in fetched:
        existing.setdefault(obj.order, obj)
    objects = [
        _save(model, existing.get(order), {parent_field: parent, "order": order}, values)
        for order, values in enumerate(rows, start=1)
    ]
    kept = {obj.pk for obj in objects}
    surplus = [obj.pk for obj in fetched if obj.pk not in kept]
    if surplus:
        model._default_manager.filter(pk__in=surplus).delete()
    return objects


# --- exporting --------------------------------------------------------------------------------


def export_course(*, slug: str, directory: Path) -> list[Path]:
    """Write the course ``slug`` and the whole glossary under ``directory`` as content files.

    Writes ``directory/glossary.toml`` and ``directory/<slug>/`` (course.toml, one Markdown file
    per chapter, each listing as a file in a folder named after its chapter); files of that
    course folder that the export does not write are removed, so the folder mirrors the
    database. Returns the paths written. Raises Course.DoesNotExist for an unknown slug.
    """
    course = Course.objects.get(slug=slug)
    directory = Path(directory)
    files = {directory / GLOSSARY_FILE: render_glossary(Symbol.objects.all())}
    files.update(
        {directory / slug / name: text for name, text in render_course(course=course).items()}
    )
    course_dir = directory / slug
    if course_dir.is_dir():
        for old in sorted(course_dir.rglob("*"), reverse=True):
            if old.is_file() and old not in files:
                old.unlink()
            elif old.is_dir() and not any(old.iterdir()):
                old.rmdir()
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)


def render_glossary(symbols: Iterable[Symbol]) -> str:
    """The text of glossary.toml: symbols grouped by kind, then by slug."""
    order = {kind: i for i, kind in enumerate(_KINDS)}
    rows = sorted(symbols, key=lambda s: (order.get(s.kind, len(order)), s.slug))
    out = [
        "# The symbol glossary: one [[symbol]] table per piece of notation. `tokens` are the",
        "# ways it is written in an equation (LaTeX or Unicode); `kind` is one of",
        "# " + ", ".join(_KINDS) + ".",
    ]
    kind = None
    for symbol in rows:
        if symbol.kind != kind:
            kind = symbol.kind
            out += ["", f"# --- {dict(Symbol.Kind.choices).get(kind, kind)} " + "-" * 40]
        out += ["", "[[symbol]]"]
        out += _pairs(
            [
                ("slug", symbol.slug),
                ("name", symbol.name),
                ("glyph", symbol.glyph),
                ("latex", symbol.latex),
                ("tokens", list(symbol.tokens)),
                ("kind", symbol.kind),
                ("extremes", symbol.extremes),
                ("explanation", symbol.explanation),
            ],
            keep={"slug", "name", "glyph", "kind", "explanation"},
        )
    return "\n".join(out) + "\n"


def render_course(*, course: Course) -> dict[str, str]:
    """The files of one course, by path relative to its folder. No side effects."""
    chapters = list(
        course.chapters.order_by("order", "id").prefetch_related(
            "equations__parts",
            "equations__answers",
            "listings",
            "questions__choices",
            "chapter_symbols__symbol",
            "prerequisites__course",
            "related_chapters__course",
            "related_notes",
        )
    )
    head = _pairs(
        [
            ("slug", course.slug),
            ("title", course.title),
            ("summary", course.summary),
            ("order", course.order),
            ("published", course.published),
            ("chapters", [chapter.slug for chapter in chapters]),
        ],
        keep={"slug", "title", "chapters"},
        defaults={"published": True},
    )
    files = {COURSE_FILE: "\n".join(head) + "\n"}
    for chapter in chapters:
        meta, listings = _render_chapter(chapter, course)
        files[f"{chapter.slug}.md"] = (
            f"{FENCE}\n" + "\n".join(meta) + f"\n{FENCE}\n\n{_normalise(chapter.idea).strip()}\n"
        )
        for listing in listings:
            files[f"{chapter.slug}/{listing.filename}"] = listing.source
    return files


def _render_chapter(chapter: Chapter, course: Course) -> tuple[list[str], list[CodeListing]]:
    def ref(other: Chapter) -> str:
        same = other.course_id == course.pk
        return other.slug if same else f"{other.course.slug}/{other.slug}"

    def chapter_key(other: Chapter) -> tuple:
        return (other.course_id != course.pk, other.course.slug, other.order, other.slug)

    out = _pairs(
        [
            ("title", chapter.title),
            ("summary", chapter.summary),
            ("published", chapter.published),
            (
                "prerequisites",
                [ref(c) for c in sorted(chapter.prerequisites.all(), key=chapter_key)],
            ),
            ("prerequisites_note", chapter.prerequisites_note),
            ("symbols", [cs.symbol.slug for cs in chapter.chapter_symbols.all()]),
            (
                "related_chapters",
                [ref(c) for c in sorted(chapter.related_chapters.all(), key=chapter_key)],
            ),
            ("related_notes", sorted(note.slug for note in chapter.related_notes.all())),
            ("try_it_intro", chapter.try_it_intro),
        ],
        keep={"title"},
        defaults={"published": True},
    )
    for equation in chapter.equations.all():
        out += ["", "[[equations]]"]
        out += _pairs(
            [
                ("title", equation.title),
                ("latex", equation.latex),
                ("shape_note", equation.shape_note),
                ("explanation", equation.explanation),
                ("widget", equation.widget),
            ],
            keep={"title", "latex"},
        )
        answers = {a.question: a.text for a in equation.answers.all()}
        if answers:
            out += ["", "[equations.answers]"]
            out += _pairs([(key, answers[key]) for key, _q in SEVEN_QUESTIONS if key in answers])
        for part in equation.parts.all():
            out += ["", "[[equations.parts]]"]
            out += _pairs([("latex", part.latex), ("role", part.role), ("reason", part.reason)])
    listings = list(chapter.listings.all())
    for listing in listings:
        out += ["", "[[listings]]"]
        out += _pairs(
            [
                ("file", f"{chapter.slug}/{listing.filename}"),
                ("language", listing.language),
                ("expected_output", listing.expected_output),
            ],
            keep={"file"},
            defaults={"language": "python"},
        )
    for question in chapter.questions.all():
        out += ["", "[[questions]]"]
        out += _pairs([("prompt", question.prompt), ("explanation", question.explanation)])
        for choice in question.choices.all():
            out += ["", "[[questions.choices]]"]
            out += _pairs(
                [
                    ("text", choice.text),
                    ("correct", choice.is_correct),
                    ("explanation", choice.explanation),
                ],
                keep={"text", "explanation"},
            )
    return out, listings


# --- canonical TOML -----------------------------------------------------------------------------
# tomli_w writes every string as a basic string, which doubles each backslash of LaTeX; these
# helpers write the form a person would: literal strings where there are backslashes.

_LINE_WIDTH = 100
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _pairs(
    items: list[tuple[str, Any]], keep: set[str] | None = None, defaults: dict | None = None
) -> list[str]:
    """``key = value`` lines, leaving out values equal to their default (unless in ``keep``)."""
    keep = {key for key, _ in items} if keep is None else keep
    defaults = defaults or {}
    lines = []
    for key, value in items:
        default = defaults.get(key, _DEFAULTS[type(value)])
        if key not in keep and value == default:
            continue
        lines.append(f"{key} = {_toml_value(value, len(key) + 3)}")
    return lines


def _toml_value(value: Any, indent: int = 0) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        items = [_toml_value(item) for item in value]
        inline = "[" + ", ".join(items) + "]"
        if indent + len(inline) <= _LINE_WIDTH:
            return inline
        return "[\n" + "".join(f"    {item},\n" for item in items) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def toml_string(value: str) -> str:
    """A TOML string for ``value``: plain quotes, literal quotes when there are backslashes
    (LaTeX), triple quotes across lines; escapes only as a last resort."""
    value = _normalise(value)
    if "\n" in value:
        plain = "\\" not in value and '"""' not in value and not value.endswith('"')
        if plain and not _CONTROL.search(value):
            return f'"""\n{value}"""'
        if "'''" not in value and not value.endswith("'") and not _CONTROL.search(value):
            return f"'''\n{value}'''"
        return _basic_string(value)
    if "\\" not in value and '"' not in value and not _CONTROL.search(value):
        return f'"{value}"'
    if "'" not in value and not _CONTROL.search(value):
        return f"'{value}'"
    if "'''" not in value and not value.endswith("'") and not _CONTROL.search(value):
        return f"'''{value}'''"
    return _basic_string(value)


def _basic_string(value: str) -> str:
    """A double-quoted TOML string with escapes: the form of last resort."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + _CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", escaped) + '"'


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")
