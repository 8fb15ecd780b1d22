"""Course content files: load, export, round trip, and errors that say where and what."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from courses import contentfiles
from courses.models import Chapter, Choice, CodeListing, Course, Question, Symbol
from platform.frontmatter import read_markdown

pytestmark = pytest.mark.django_db

COURSE = "reading-ml-papers"


def files_under(directory: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


@pytest.fixture
def content(tmp_path, demo_notes) -> Path:
    """A copy of courses/content/ to break, with the notes its chapters link to."""
    copy = tmp_path / "content"
    shutil.copytree(contentfiles.DEFAULT_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def edit(path: Path, old: str, new: str) -> int:
    """Replace ``old`` (which must be there once) by ``new``; the line number where it was."""
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))
    return text[: text.index(old)].count("\n") + 1


def line_of(path: Path, start: str) -> int:
    """The number of the one line of ``path`` that starts with ``start``."""
    lines = path.read_text().splitlines()
    found = [number for number, line in enumerate(lines, start=1) if line.startswith(start)]
    assert len(found) == 1, (start, found)
    return found[0]


def load_error(*paths: Path) -> str:
    with pytest.raises(CommandError) as caught:
        call_command("load_content", "--no-check", *paths)
    return str(caught.value)


# --- round trip -------------------------------------------------------------------------------


def test_export_of_the_shipped_demo_is_the_repository_files(tmp_path, demo_course):
    contentfiles.export_course(slug=COURSE, directory=tmp_path)
    assert files_under(tmp_path) == files_under(contentfiles.DEFAULT_DIR)


def test_export_load_export_round_trip_is_byte_identical(tmp_path, demo_course):
    first, second = tmp_path / "first", tmp_path / "second"
    contentfiles.export_course(slug=COURSE, directory=first)
    Course.objects.all().delete()
    Symbol.objects.all().delete()
    assert Chapter.objects.count() == Question.objects.count() == 0

    assert contentfiles.load(paths=[first]).course_slugs == [COURSE]
    contentfiles.export_course(slug=COURSE, directory=second)
    assert files_under(first) == files_under(second)
    assert len(files_under(second)) == 24  # the glossary, course.toml, 11 chapters, 11 listings


def test_export_removes_files_the_course_no_longer_has(tmp_path, demo_course):
    contentfiles.export_course(slug=COURSE, directory=tmp_path)
    stale = tmp_path / COURSE / "rope" / "old_listing.py"
    stale.write_text("print(1)\n")
    contentfiles.export_course(slug=COURSE, directory=tmp_path)
    assert not stale.exists()
    assert files_under(tmp_path) == files_under(contentfiles.DEFAULT_DIR)


def test_export_writes_edits_made_in_the_database(tmp_path, demo_course):
    chapter = Chapter.objects.get(slug="rope")
    chapter.questions.get(order=3).delete()
    chapter.equations.get(order=1).parts.filter(order=1).update(reason="Edited in admin.")
    Chapter.objects.filter(slug="rope").update(published=False)
    contentfiles.export_course(slug=COURSE, directory=tmp_path)

    meta, _ = read_markdown(tmp_path / COURSE / "rope.md")
    assert meta["published"] is False
    assert len(meta["questions"]) == 3
    assert meta["equations"][0]["parts"][0]["reason"] == "Edited in admin."


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text())
def test_toml_string_reads_back_as_written(value):
    written = contentfiles.toml_string(value)
    expected = value.replace("\r\n", "\n").replace("\r", "\n")
    assert tomllib.loads(f"key = {written}")["key"] == expected


def test_toml_string_keeps_latex_backslashes_single():
    assert contentfiles.toml_string(r"\sqrt{d_k}") == r"'\sqrt{d_k}'"
    assert contentfiles.toml_string(r"Adam's $\epsilon$") == r"'''Adam's $\epsilon$'''"
    assert contentfiles.toml_string("plain") == '"plain"'
    assert contentfiles.toml_string("two\nlines\n") == '"""\ntwo\nlines\n"""'


# --- loading ----------------------------------------------------------------------------------


def test_load_twice_changes_nothing(demo_course):
    def state():
        return (
            list(Chapter.objects.values_list("id", "updated_at", "order")),
            list(Course.objects.values_list("id", "updated_at")),
            list(Choice.objects.values_list("id", "text", "is_correct")),
            list(Symbol.objects.values_list("id", "kind", "extremes")),
        )

    before = state()
    assert contentfiles.load(paths=[contentfiles.DEFAULT_DIR]).summaries == demo_course
    assert state() == before


def test_load_keeps_listing_check_results_when_the_listing_is_unchanged(demo_course):
    CodeListing.objects.update(check_status="passed")
    contentfiles.load(paths=[contentfiles.DEFAULT_DIR])
    assert set(CodeListing.objects.values_list("check_status", flat=True)) == {"passed"}


def test_load_removing_a_question_from_the_file_removes_it(content, demo_course):
    chapter_file = content / COURSE / "rope.md"
    text = chapter_file.read_text()
    last = text.rindex("[[questions]]")
    chapter_file.write_text(text[:last] + text[text.index("+++\n", last) :])
    contentfiles.load(paths=[content / COURSE])

    prompts = list(Chapter.objects.get(slug="rope").questions.values_list("prompt", flat=True))
    assert len(prompts) == 3
    assert "Which pairs of features rotate fastest?" in prompts
    assert "In a model with several heads, where is RoPE applied?" not in prompts


def test_load_removing_a_chapter_from_course_toml_removes_it(content, demo_course):
    edit(content / COURSE / "course.toml", '    "rope",\n', "")
    (content / COURSE / "rope.md").unlink()
    edit(content / COURSE / "attention-and-masks.md", '"rope", ', "")
    edit(content / COURSE / "multi-head-attention.md", '"rope", ', "")
    contentfiles.load(paths=[content / COURSE])
    assert list(Chapter.objects.values_list("slug", "order")) == [
        ("shapes-and-indices", 1),
        ("transpose-and-products", 2),
        ("softmax-temperature", 3),
        ("log-softmax-cross-entropy", 4),
        ("rmsnorm-vs-layernorm", 5),
        ("attention-and-masks", 6),
        ("multi-head-attention", 7),
        ("residual-streams", 8),
        ("adam-and-adamw", 9),
        ("capstone-three-equations", 10),
    ]


def test_load_a_glossary_file_alone(content):
    assert contentfiles.load(paths=[content / "glossary.toml"]).summaries == [
        "glossary: 98 symbols"
    ]
    softmax = Symbol.objects.get(slug="softmax")
    assert (softmax.latex, softmax.kind) == (r"\operatorname{softmax}", "operation")
    assert Symbol.objects.get(slug="tau").extremes == "τ → 0: ?  τ → ∞: ?"


def test_load_links_to_a_chapter_of_another_course(content, demo_course):
    other = content / "other-course"
    other.mkdir()
    (other / "course.toml").write_text('slug = "other"\ntitle = "Other"\nchapters = ["next"]\n')
    (other / "next.md").write_text(
        '+++\ntitle = "Next"\nprerequisites = ["reading-ml-papers/rope"]\n+++\n\nBody.\n'
    )
    call_command("load_content", "--no-check", other)
    chapter = Chapter.objects.get(course__slug="other", slug="next")
    assert list(chapter.prerequisites.values_list("slug", flat=True)) == ["rope"]
    assert (chapter.idea, chapter.order, chapter.published) == ("Body.", 1, True)


# --- errors -----------------------------------------------------------------------------------


def test_error_bad_toml_names_file_and_line(content):
    path = content / COURSE / "rope.md"
    line = edit(path, 'title = "Rotary', "title = Rotary")
    assert load_error(content) == (f"{path}:{line}: TOML does not parse: Invalid value")


def test_error_missing_key_names_file_and_key(content):
    path = content / COURSE / "rope.md"
    edit(path, 'title = "Rotary position embeddings (RoPE)"\n', "")
    assert load_error(content) == f"{path} [title]: missing required key 'title'"


def test_error_missing_key_in_a_table_names_its_line(content):
    path = content / COURSE / "rope.md"
    line = edit(path, '[[questions.choices]]\ntext = "No."\n', "[[questions.choices]]\n")
    assert load_error(content) == (
        f"{path}:{line} [questions[2].choices[1].text]: missing required key 'text'"
    )


def test_error_wrong_type_names_line_and_key(content):
    path = content / COURSE / "softmax-temperature.md"
    line = edit(
        path,
        'correct = true\nexplanation = "Right: the gaps',
        'correct = "yes"\nexplanation = "Right: the gaps',
    )
    assert load_error(content) == (
        f"{path}:{line} [questions[1].choices[1].correct]: "
        "must be a boolean (true or false), not string"
    )


def test_error_unknown_role_names_line_and_key(content):
    path = content / COURSE / "softmax-temperature.md"
    line = edit(path, 'role = "constant"', 'role = "hyper"')
    assert load_error(content) == (
        f"{path}:{line} [equations[1].parts[3].role]: unknown value 'hyper' "
        "(expected one of: output, input, learned, constant, operation)"
    )


def test_error_unknown_widget_names_line_and_key(content):
    path = content / COURSE / "rope.md"
    line = edit(path, 'widget = "rope"', 'widget = "clock"')
    assert load_error(content) == (
        f"{path}:{line} [equations[2].widget]: unknown value 'clock' "
        "(expected one of: attention, softmax, norms, adam, rope, cross-entropy, multi-head, "
        "adamw)"
    )


def test_error_unknown_kind_in_the_glossary(content):
    path = content / "glossary.toml"
    slugs = [line for line in path.read_text().splitlines() if line.startswith("slug = ")]
    index = slugs.index('slug = "tau"') + 1
    line = line_of(path, 'slug = "tau"') + 5
    lines = path.read_text().split("\n")
    assert lines[line - 1] == 'kind = "constant"'
    lines[line - 1] = 'kind = "knob"'
    path.write_text("\n".join(lines))
    assert load_error(path) == (
        f"{path}:{line} [symbol[{index}].kind]: unknown value 'knob' "
        "(expected one of: quantity, learned, constant, operation, notation)"
    )


def test_error_unknown_key_is_a_typo_not_ignored(content):
    path = content / COURSE / "rope.md"
    line = edit(path, "try_it_intro = ", "try_it = ")
    assert load_error(content) == (
        f"{path}:{line} [try_it]: unknown key 'try_it' (expected one of: title, summary, "
        "published, prerequisites, prerequisites_note, symbols, related_chapters, "
        "related_notes, try_it_intro, equations, listings, questions)"
    )


def test_error_question_with_no_correct_choice(content):
    path = content / COURSE / "rope.md"
    edit(path, 'text = "No."\ncorrect = true\n', 'text = "No."\n')
    line = line_of(path, 'prompt = "Does RoPE change') - 1
    assert load_error(content) == (
        f"{path}:{line} [questions[2]]: no choice is marked 'correct = true'"
    )


def test_error_unknown_prerequisite(content):
    path = content / COURSE / "capstone-three-equations.md"
    line = edit(path, 'prerequisites = ["rmsnorm-vs-layernorm"', 'prerequisites = ["softmax"')
    assert load_error(content) == (f"{path}:{line} [prerequisites]: unknown chapter 'softmax'")


def test_error_unknown_symbol(content):
    path = content / COURSE / "rope.md"
    line = edit(path, 'symbols = ["rope"', 'symbols = ["ropes"')
    assert load_error(content) == (
        f"{path}:{line} [symbols]: unknown symbol 'ropes' (not in the glossary)"
    )


def test_error_unknown_note(content):
    path = content / COURSE / "capstone-three-equations.md"
    line = edit(path, '"pre-norm-vs-post-norm"', '"post-norm"')
    assert load_error(content) == f"{path}:{line} [related_notes]: unknown note 'post-norm'"


def test_error_listing_file_missing(content):
    path = content / COURSE / "rope.md"
    (content / COURSE / "rope" / "rope_offsets.py").unlink()
    line = line_of(path, 'file = "rope/rope_offsets.py"')
    assert load_error(content) == (
        f"{path}:{line} [listings[1].file]: no such file: rope/rope_offsets.py"
    )


def test_error_listing_outside_the_course_folder(content):
    path = content / COURSE / "rope.md"
    line = edit(path, 'file = "rope/rope_offsets.py"', 'file = "../glossary.toml"')
    assert load_error(content) == (
        f"{path}:{line} [listings[1].file]: the listing must be a file inside the course folder"
    )


def test_error_chapter_listed_without_a_file(content):
    path = content / COURSE / "course.toml"
    (content / COURSE / "rope.md").unlink()
    assert load_error(content) == (
        f"{path}:4 [chapters]: chapter 'rope' has no file rope.md beside it"
    )


def test_error_chapter_file_not_listed(content):
    path = content / COURSE / "course.toml"
    (content / COURSE / "draft.md").write_text('+++\ntitle = "Draft"\n+++\n')
    assert load_error(content) == f"{path}:4 [chapters]: draft.md is not listed in 'chapters'"


def test_error_front_matter_not_closed(content):
    path = content / COURSE / "rope.md"
    path.write_text('+++\ntitle = "RoPE"\n')
    assert load_error(content) == (
        f"{path}:1: the front matter is not closed: add a line '+++' after it"
    )


def test_error_path_that_is_not_content(tmp_path):
    assert load_error(tmp_path).startswith(f"{tmp_path}: not content: expected glossary.toml")
    assert load_error(tmp_path / "nothing") == f"{tmp_path / 'nothing'}: no such file or folder"


def test_error_loads_nothing_at_all(content):
    """The glossary is fine and comes first, but the course is bad: no symbol is written."""
    edit(content / COURSE / "softmax-temperature.md", 'role = "constant"', 'role = "hyper"')
    load_error(content / "glossary.toml", content / COURSE)
    assert Symbol.objects.count() == Course.objects.count() == Chapter.objects.count() == 0


# --- commands ---------------------------------------------------------------------------------


def test_load_content_command_loads_a_folder_and_reports(content, capsys):
    call_command("load_content", "--no-check", content)
    assert capsys.readouterr().out == (
        "glossary: 98 symbols\n"
        "course reading-ml-papers: 11 chapters, 33 equations, 44 questions, 11 listings\n"
    )
    assert CodeListing.objects.filter(checked_at__isnull=True).count() == 11


def test_load_content_command_checks_new_listings(content, capsys):
    call_command("load_content", content / "glossary.toml", content / COURSE)
    out = capsys.readouterr().out
    assert "listing read_three.py: passed\n" in out
    assert set(CodeListing.objects.values_list("check_status", flat=True)) == {"passed"}


def test_export_content_command_writes_the_files(tmp_path, demo_course, capsys):
    call_command("export_content", COURSE, tmp_path)
    assert capsys.readouterr().out == f"wrote 24 files under {tmp_path}\n"
    assert files_under(tmp_path) == files_under(contentfiles.DEFAULT_DIR)


def test_export_content_command_unknown_course(tmp_path):
    with pytest.raises(CommandError, match=r"^no course with the slug 'nope'$"):
        call_command("export_content", "nope", tmp_path)


# --- the listing files ------------------------------------------------------------------------


def listing_files() -> list[tuple[Path, str]]:
    found = []
    for course in sorted(contentfiles.DEFAULT_DIR.glob(f"*/{contentfiles.COURSE_FILE}")):
        for chapter in contentfiles.parse_course(course.parent).chapters:
            meta, _ = read_markdown(chapter.path)
            for listing in meta.get("listings", []):
                found.append((course.parent / listing["file"], listing["expected_output"]))
    return found


LISTINGS = listing_files()


@pytest.mark.parametrize(("path", "expected"), LISTINGS, ids=[path.name for path, _ in LISTINGS])
def test_listing_file_prints_its_expected_output(path, expected):
    result = subprocess.run(
        [sys.executable, path.name],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=path.parent,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == expected


def test_readme_example_chapter_parses(tmp_path):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    example = re.search(r"```\n(\+\+\+\n.*?)```", readme, re.S).group(1)
    (tmp_path / "course.toml").write_text('slug = "c"\ntitle = "C"\nchapters = ["rope"]\n')
    (tmp_path / "rope.md").write_text(example)
    (tmp_path / "rope").mkdir()
    (tmp_path / "rope" / "rope_offsets.py").write_text("print(1)\n")

    chapter = contentfiles.parse_course(tmp_path).chapters[0]
    assert chapter.fields["title"] == "Rotary position embeddings (RoPE)"
    assert chapter.equations[0][0]["latex"] == r"\theta_i = b^{-2i/d}"
    assert chapter.questions[0][1][0]["is_correct"] is True


def test_error_required_text_left_empty(content):
    path = content / COURSE / "rope.md"
    line = edit(path, 'text = "No."', 'text = "  "')
    assert load_error(content) == (
        f"{path}:{line} [questions[2].choices[1].text]: must not be empty"
    )


def test_error_text_longer_than_its_column(content):
    path = content / COURSE / "rope.md"
    line = edit(path, '"The base, often 10000, fixed before training."', f'"{"x" * 301}"')
    assert load_error(content) == (
        f"{path}:{line} [equations[1].parts[2].reason]: is 301 characters long; at most 300 fit"
    )


def test_error_chapter_slug_that_is_not_a_slug(content):
    path = content / COURSE / "course.toml"
    edit(path, '"rope"', '"rope chapter"')
    assert load_error(content) == (
        f"{path}:4 [chapters]: 'rope chapter' is not a slug (up to 100 letters, digits, "
        "dashes, underscores)"
    )


def test_load_invalidates_cached_pages_once_not_per_row(content, demo_course, client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    chapter = Chapter.objects.get(slug="rope")
    assert client.get(chapter.get_absolute_url()).status_code == 200  # cached now
    chapter_file = content / COURSE / "rope.md"
    text = chapter_file.read_text()
    old = "Does RoPE change the length of a query vector?"
    assert old in text
    chapter_file.write_text(text.replace(old, "Does RoPE alter how long a query vector is?"))

    with CaptureQueriesContext(connection) as queries:
        contentfiles.load(paths=[content / COURSE])
    touches = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith('UPDATE "courses_chapter" SET "updated_at"')
    ]
    assert len(touches) == 1
    page = client.get(chapter.get_absolute_url()).content.decode()
    assert "Does RoPE alter how long a query vector is?" in page
    assert old not in page


# --- the tutor's model answers ------------------------------------------------------------------


def test_load_tutor_answers_and_export_writes_them_back(content, tmp_path):
    from courses.models import EquationAnswer

    call_command("load_content", "--no-check", content)
    attention = EquationAnswer.objects.filter(equation__title="Scaled dot-product attention")
    assert sorted(attention.values_list("question", flat=True)) == sorted(
        ["output", "inputs", "learned", "shapes", "operations", "extremes", "ablations"]
    )
    assert attention.get(question="shapes").text.startswith("$Q$ and $K$ are tokens × $d_k$")
    path = content / COURSE / "capstone-three-equations.md"
    edit(path, 'extremes = "Scores divided', '# extremes = "Scores divided')
    call_command("load_content", "--no-check", content)  # a question left out is deleted
    assert not attention.filter(question="extremes").exists()
    course = Course.objects.get(slug=COURSE)
    text = contentfiles.render_course(course=course)["capstone-three-equations.md"]
    assert "\n[equations.answers]\noutput = " in text and "\nextremes = " not in text


def test_error_unknown_tutor_question_names_line_and_key(content):
    path = content / COURSE / "capstone-three-equations.md"
    line = edit(path, "\nablations = ", "\nablation = ") + 1
    assert load_error(content) == (
        f"{path}:{line} [equations[1].answers.ablation]: unknown key 'ablation' (expected one "
        "of: output, inputs, learned, shapes, operations, extremes, ablations)"
    )
