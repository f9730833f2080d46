"""Text shown where Markdown is rendered stays the text it was."""

import re

import pytest

from rnnlab.text import escape_markdown

JOINER = "\u2060"


@pytest.mark.parametrize("text", [
    "[click](http://evil.example/)", "![x](http://127.0.0.1:9/t.png)", "<img src=x onerror=alert(1)>",
    ":red[big] :material/home: :smile:", "$x^2$ **bold** _it_ `code` ~~s~~", "# heading\n- item", "www.a.com a@b.c",
])
def test_every_markdown_character_is_escaped_and_nothing_else_changes(text):
    escaped = escape_markdown(text)
    assert re.sub(r"\\(.)", r"\1", escaped.replace(JOINER, "")) == text.replace("\n", " ")  # what a reader sees
    assert all(escaped[i - 1] == "\\" for i, ch in enumerate(escaped) if ch in "[]()!<>*_`$~#-:")
    assert "://" not in escaped and "www." not in escaped and ":m" not in escaped  # no bare links or shortcodes
