"""Small text helpers shared by every module that reads or shows user-facing text.

Parsing numbers typed by a person (URL values, sweep fields, environment variables), shortening text for a
message, and turning an exception into one readable line.
"""

from __future__ import annotations

import math
import threading

from rnnlab.i18n import language, localize_number

# CPython 3.11 keeps the syntax tree builder's recursion counter per interpreter, not per thread: two threads parsing
# Python source at once (two readers opening the Old vs new API page) can fail with "SystemError: AST constructor
# recursion depth mismatch" (CPython gh-106905). Every parse of Python source a page asks for holds this lock.
PYTHON_PARSE_LOCK = threading.Lock()


def parse_int(text: str) -> int:
    """'12' or '-3' -> int; ValueError for anything else (no '1.0', '1_0' or '²'; Python refuses 5000 digits)."""
    raw = str(text).strip()
    digits = raw[1:] if raw[:1] in "+-" else raw
    if not digits or not digits.isascii() or not digits.isdigit():
        raise ValueError(raw)
    return int(raw)


def parse_float(text: str) -> float:
    """'0.01' or '1e-3' -> float; ValueError for text that is not a finite number."""
    value = float(str(text).strip())
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def whole(part: str, max_digits: int = 9) -> int | None:
    """'12' -> 12; None for anything but 1-``max_digits`` ASCII digits (no signs, '1_0', '²')."""
    part = str(part)
    return int(part) if part.isascii() and part.isdigit() and len(part) <= max_digits else None


def shorten(text: object, limit: int = 40) -> str:
    """``text`` on one line, cut to ``limit`` characters (with '...') so a message about it stays readable."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def error_text(e: BaseException, limit: int = 500) -> str:
    """'TypeError: first line of the message' (the type alone when there is no message), at most ``limit``."""
    lines = str(e).strip().splitlines()
    return (f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__)[:limit]


BYTE_UNITS = {"ru": ("Б", "КБ", "МБ", "ГБ", "ТБ")}  # each language's units where they differ from English


def format_bytes(n: float, lang: str | None = None) -> str:
    """1234567 -> '1.2 MB' in the reader's language (Russian: '1,2 МБ'; Chinese: '1.2 MB')."""
    lang = lang or language()
    units = BYTE_UNITS.get(lang, ("B", "KB", "MB", "GB", "TB"))
    for i, unit in enumerate(units):
        if n < 1000 or i == len(units) - 1:
            written = f"{n:.0f}" if i == 0 else f"{n:.1f}"
            return f"{localize_number(written, lang)} {unit}"
        n /= 1000
    raise AssertionError


_MARKDOWN_SPECIAL = set("\\`*_{}[]()<>#+-.!|~$:=^&\"'")
_JOINER = "\u2060"  # an invisible word joiner: breaks automatic links and :shortcodes: without changing the text


def escape_markdown(text: str) -> str:
    """``text`` shown literally where Streamlit renders Markdown: links, images, emphasis, HTML, LaTeX ($), colour
    and icon directives (:red[...], :material/...:), emoji shortcodes and bare URLs are written out as characters.

    Every ASCII punctuation character is backslash-escaped; an invisible word joiner follows each ':' and '@'
    and splits 'www.', which Streamlit would otherwise turn into icons or links after unescaping."""
    out = []
    for ch in str(text).replace("\n", " "):
        out.append(f"\\{ch}" if ch in _MARKDOWN_SPECIAL else ch)
        if ch in ":@":
            out.append(_JOINER)
    return "".join(out).replace("www\\.", f"www{_JOINER}\\.")
