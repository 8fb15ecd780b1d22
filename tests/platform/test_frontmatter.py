"""The shared content reader: front matter, TOML errors with lines, and key lines."""

from __future__ import annotations

import pytest

from platform.frontmatter import ContentError, KeyLines, read_markdown, write_markdown

FRONT = """\
title = "A chapter"

[[listings]]
expected_output = \"\"\"
file = "not a key: inside a string"
\"\"\"
file = "one.py"

[[listings]]
file = "two.py"

[[questions]]
prompt = "Why?"

[[questions.choices]]
text = "No."

[[questions.choices]]
text = "Yes."
correct = true
"""


def test_key_lines_find_keys_in_arrays_of_tables():
    lines = KeyLines(FRONT, first_line=2)
    assert lines.line(("title",)) == 2
    assert lines.line(("listings", 0, "file")) == 8
    assert lines.line(("listings", 1, "file")) == 11
    assert lines.line(("questions", 0, "choices", 1, "correct")) == 21


def test_key_lines_skip_lines_inside_multiline_strings():
    lines = KeyLines(FRONT)
    # Only the listing's own key, never the look-alike inside its expected output.
    assert lines.line(("listings", 0, "file")) == 7
    assert lines.line(("listings", 0, "missing")) == 3  # falls back to the table's header
    assert lines.line(("nowhere",)) is None


def test_read_markdown_names_the_line_of_bad_toml(tmp_path):
    path = tmp_path / "bad.md"
    path.write_text('+++\ntitle = "a"\nx = [1,\n+++\nbody\n')
    with pytest.raises(ContentError) as caught:
        read_markdown(path)
    assert caught.value.line == 3
    assert str(caught.value).startswith(f"{path}:3: TOML does not parse")


def test_write_then_read_gives_back_the_same(tmp_path):
    meta = {"title": "Ünïcode and $\\sqrt{d_k}$", "tags": ["a", "b"], "n": 3}
    path = tmp_path / "note.md"
    path.write_text(write_markdown(meta, "Body with $x$.\n\nTwo paragraphs."))
    assert read_markdown(path) == (meta, "Body with $x$.\n\nTwo paragraphs.")
