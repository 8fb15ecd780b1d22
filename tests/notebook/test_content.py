"""Notebook content files: the shipped demo, the round trip, idempotency and malformed files."""

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest

from notebook import contentfiles
from notebook.models import Correction, Note, SnippetCheck, SnippetRun, Topic
from platform.frontmatter import ContentError, read_markdown
from tests.notebook.factories import (
    CorrectionFactory,
    NoteFactory,
    SnippetCheckFactory,
    TopicFactory,
)

DEMO_NOTES = sorted((contentfiles.DEFAULT_DIR / "notes").glob("*.md"))


def tree(directory: Path) -> dict[str, bytes]:
    """Every file under ``directory`` by relative path, with its bytes."""
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


def history_rows() -> tuple[int, int]:
    return Note.history.count(), SnippetCheck.history.count()


@pytest.mark.django_db
def test_demo_load_is_idempotent_and_exports_the_shipped_files(tmp_path):
    summary = contentfiles.load(contentfiles.DEFAULT_DIR)
    assert summary == "16 notes, 6 topics, 11 check run(s), 11 verified"
    assert Note.objects.published().count() == 16
    assert Topic.objects.count() == 6
    assert Correction.objects.filter(note__slug="kv-cache").count() == 1
    assert SnippetCheck.objects.filter(packages="numpy").count() == 10
    assert SnippetCheck.objects.get(note__slug="swiglu-parameter-budget").packages == ""
    history = history_rows()
    rows = Note.objects.count(), SnippetCheck.objects.count(), Correction.objects.count()

    summary = contentfiles.load(contentfiles.DEFAULT_DIR)

    assert summary == "16 notes, 6 topics, 0 check run(s), 11 verified"
    assert history_rows() == history
    assert (Note.objects.count(), SnippetCheck.objects.count(), Correction.objects.count()) == rows
    assert SnippetRun.objects.count() == 11
    # files -> database -> files: the shipped demo is exactly what an export writes
    contentfiles.export(tmp_path)
    assert tree(tmp_path) == tree(contentfiles.DEFAULT_DIR)


@pytest.mark.django_db
def test_export_load_export_round_trip_is_identical(tmp_path):
    rope = TopicFactory(slug="rope", name="RoPE", description="Rotary positions.")
    bare = TopicFactory(slug="bare", name="Bare", description="")
    note = NoteFactory(
        slug="two-checks",
        title="Two checks",
        kind=Note.Kind.DEBUGGING,
        topics=[rope, bare],
        body="First line\r\n\r\n$$x^2$$\r\n",
        written_up_in="https://example.org/a",
        part_of="A series",
        part_of_url="https://example.org/series",
    )
    SnippetCheckFactory(note=note, name="first", code="print(6 * 7)\n", expected_output="42")
    SnippetCheckFactory(
        note=note,
        name="second",
        code="import numpy as np\r\nprint(np.zeros(2))",
        expected_output="[0. 0.]",
        packages="numpy, json",
    )
    CorrectionFactory(note=note, date=dt.date(2026, 3, 1), what_was_wrong="A", what_changed="B")
    CorrectionFactory(note=note, date=dt.date(2026, 3, 1), what_was_wrong="C", what_changed="D")
    NoteFactory(slug="draft", published=False, summary="Not yet.")
    first, second = tmp_path / "first", tmp_path / "second"
    contentfiles.export(first)

    Note.objects.all().delete()
    Topic.objects.all().delete()
    assert contentfiles.load(first) == "2 notes, 2 topics, 2 check run(s), 1 verified"
    contentfiles.export(second)

    assert tree(second) == tree(first)
    assert sorted(tree(first)) == [
        "notes/draft.md",
        "notes/two-checks.md",
        "notes/two-checks/check.py",
        "notes/two-checks/check_2.py",
        "topics.toml",
    ]
    assert (first / "notes/two-checks/check_2.py").read_text() == (
        "import numpy as np\nprint(np.zeros(2))"
    )
    loaded = Note.objects.get(slug="two-checks")
    assert loaded.body == "First line\n\n$$x^2$$"
    assert (loaded.part_of, loaded.part_of_url) == ("A series", "https://example.org/series")
    assert [c.what_was_wrong for c in loaded.corrections.all()] == ["A", "C"]
    assert Note.objects.get(slug="draft").published is False


@pytest.mark.parametrize("note_file", DEMO_NOTES, ids=lambda path: path.stem)
def test_demo_snippet_files_print_their_expected_output(note_file, tmp_path):
    meta, _ = read_markdown(note_file)
    for check in meta.get("checks", []):
        script = note_file.parent / check["file"]
        result = subprocess.run(
            [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60
        )
        assert result.stderr == ""
        assert result.stdout == check["expected_output"] + "\n"


# Malformed files: each error names the file and the line or key, and says what is wrong.

TOPICS = """\
[[topic]]
slug = "math"
name = "Math"
"""

NOTE = """\
+++
title = "A note"
slug = "a-note"
date = 2026-05-02
kind = "code"
topics = ["math"]
why_it_matters = "It matters."
published = true

[written_up_in]
title = "Elsewhere"
url = "https://example.org/elsewhere"

[[checks]]
name = "prints 42"
file = "a-note/check.py"
expected_output = "42"
+++

The body.
"""


@pytest.fixture
def notebook_dir(tmp_path) -> Path:
    (tmp_path / "notes/a-note").mkdir(parents=True)
    (tmp_path / "topics.toml").write_text(TOPICS)
    (tmp_path / "notes/a-note.md").write_text(NOTE)
    (tmp_path / "notes/a-note/check.py").write_text("print(6 * 7)\n")
    return tmp_path


@pytest.mark.django_db
def test_load_of_a_valid_directory_creates_the_note(notebook_dir):
    assert contentfiles.load(notebook_dir) == "1 notes, 1 topics, 1 check run(s), 1 verified"
    note = Note.objects.get(slug="a-note")
    assert (note.written_up_in_title, note.body) == ("Elsewhere", "The body.")
    assert note.checks.get().code == "print(6 * 7)\n"


@pytest.mark.django_db
def test_reload_saves_only_what_changed(notebook_dir):
    contentfiles.load(notebook_dir)
    history = history_rows()
    note_file = notebook_dir / "notes/a-note.md"
    note_file.write_text(NOTE.replace('title = "A note"', 'title = "A better note"'))
    (notebook_dir / "notes/a-note/check.py").write_text("print(42)\n")

    assert contentfiles.load(notebook_dir) == "1 notes, 1 topics, 1 check run(s), 1 verified"

    assert history_rows() == (history[0] + 1, history[1] + 1)
    assert Note.objects.get().title == "A better note"
    assert SnippetRun.objects.count() == 2


MALFORMED = [
    # (what the note's text becomes, error message, line, key)
    ("", "a content file starts with a line '+++'", 1, ""),
    (NOTE.replace("+++\n\nThe", "\nThe"), "the front matter is not closed", 1, ""),
    (NOTE.replace('kind = "code"', 'kind = "code'), "TOML does not parse", 5, ""),
    (NOTE.replace("2026-05-02", "2026-13-02"), "TOML does not parse", 4, ""),
    (NOTE.replace("2026-05-02", '"2026-05-02"'), "must be a TOML date without quotes", 4, "date"),
    (NOTE.replace("2026-05-02", "2026-05-02T10:00:00"), "date without a time", 4, "date"),
    (NOTE.replace('title = "A note"\n', ""), "missing required key 'title'", None, "title"),
    (NOTE.replace("published = true", 'published = "yes"'), "must be a bool", 8, "published"),
    (NOTE.replace('kind = "code"', 'kind = "essay"'), "unknown kind 'essay'", 5, "kind"),
    (NOTE.replace('["math"]', '["maths"]'), "unknown topic 'maths'", 6, "topics"),
    (NOTE.replace('slug = "a-note"', 'slug = "b-note"'), "differs from the file name", 3, "slug"),
    (NOTE.replace("published = true", "published = true\nauthor = 1"), "unknown key", 9, "author"),
    (NOTE.replace('"a-note/check.py"', '"a-note/gone.py"'), "'a-note/gone.py' does not exist", 16,
     "checks[0].file"),
    (NOTE.replace('"a-note/check.py"', '"../../x.py"'), "must name a .py file inside", 16,
     "checks[0].file"),
    (NOTE.replace('expected_output = "42"', "expected_output = 42"), "must be a str", 17,
     "checks[0].expected_output"),
    (NOTE.replace('name = "prints 42"\n', ""), "missing required key 'checks[0].name'", 14,
     "checks[0].name"),
    (NOTE.replace('expected_output = "42"', 'expected_output = """\npackages = []\n42"""\n'
                  'packages = "numpy"'), "must be a list", 20, "checks[0].packages"),
    (NOTE.replace("https://example.org/elsewhere", "not a url"), "Enter a valid URL.", 12,
     "written_up_in.url"),
]  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("text", "message", "line", "key"), MALFORMED, ids=[case[1] for case in MALFORMED]
)
def test_load_of_a_malformed_note_names_file_line_and_key(notebook_dir, text, message, line, key):
    note_file = notebook_dir / "notes/a-note.md"
    note_file.write_text(text)
    with pytest.raises(ContentError) as excinfo:
        contentfiles.load(notebook_dir)
    error = excinfo.value
    assert error.path == str(note_file)
    assert message in error.message
    assert (error.line, error.key) == (line, key)
    assert Note.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("text", "message", "line", "key"),
    [
        (TOPICS.replace('"Math"', '"Math'), "TOML does not parse", 3, ""),
        (TOPICS.replace('name = "Math"\n', ""), "missing required key", 1, "topic[0].name"),
        (TOPICS + "\n" + TOPICS, "the topic slug 'math' is used twice", 6, "topic[1].slug"),
        (TOPICS.replace('"math"', '"no spaces"'), "Enter a valid “slug”", 2, "topic[0].slug"),
    ],
)
def test_load_of_a_malformed_topics_file_names_line_and_key(notebook_dir, text, message, line, key):
    (notebook_dir / "topics.toml").write_text(text)
    with pytest.raises(ContentError) as excinfo:
        contentfiles.load(notebook_dir)
    error = excinfo.value
    assert error.path == str(notebook_dir / "topics.toml")
    assert message in error.message
    assert (error.line, error.key) == (line, key)
    assert Topic.objects.count() == 0


@pytest.mark.django_db
def test_load_of_a_bad_second_note_writes_nothing(notebook_dir):
    (notebook_dir / "notes/z-note.md").write_text(
        NOTE.replace('slug = "a-note"', 'slug = "z-note"').replace('["math"]', '["nope"]')
    )
    with pytest.raises(ContentError, match=r"z-note\.md:6 \[topics\]: unknown topic 'nope'"):
        contentfiles.load(notebook_dir)
    assert (Note.objects.count(), Topic.objects.count(), SnippetCheck.objects.count()) == (0, 0, 0)


@pytest.mark.django_db
def test_load_of_a_directory_without_notebook_files_says_so(tmp_path):
    with pytest.raises(ContentError, match="not a notebook directory"):
        contentfiles.load(tmp_path)
