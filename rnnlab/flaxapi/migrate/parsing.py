"""Parsing pasted text with :mod:`ast` only (never compiled to run, never imported) and line offsets."""

from __future__ import annotations

import ast
import re

from rnnlab.text import PYTHON_PARSE_LOCK

NEWLINE = re.compile(r"\r\n|\r|\n")
PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)
Edit = tuple[int, int, str]  # start, end (character offsets), replacement


# A backslash escape: octal digits, a valid escape letter (or a line continuation), or anything else.
_ESCAPE = re.compile(r"\\(?:([0-7]{1,3})|([\\'\"abfnrtvxNuU\r\n])|(.))", re.S)


def _fix_escape(match: re.Match) -> str:
    octal, valid, _ = match.groups()
    if valid is not None or (octal is not None and int(octal, 8) <= 0o377):
        return match.group()
    return "\\\\" + match.group()[2:]  # same length: backslash-d -> two backslashes


def _without_bad_escapes(text: str) -> str:
    """``text`` with each invalid escape (``\\d``, ``\\777``) replaced by ``\\\\`` of the same length.

    The parser warns about invalid escapes (DeprecationWarning, SyntaxWarning from Python 3.12). Silencing
    that with ``warnings.catch_warnings`` would change the process-wide warnings filter while another session
    parses or trains, so instead the text is changed where the warning would come from. Offsets stay the
    same, so node positions still index the original text; only the values of such string constants differ,
    and the checker does not read them. Outside strings a backslash is only valid before a newline, which is
    kept; in comments the change is invisible to the parser. (The one other parser warning, a number run
    into a keyword as in ``1if``, is rare in real code and goes through the normal filters.)
    """
    return _ESCAPE.sub(_fix_escape, text) if "\\" in text else text


def parse_code(text: str) -> ast.Module:
    """``ast.parse`` without the warnings that odd pasted text triggers, and without touching global state.

    Never runs, compiles to bytecode or imports anything. A SyntaxError carries the original line's text.
    """
    quiet = _without_bad_escapes(text)
    try:
        with PYTHON_PARSE_LOCK:
            return ast.parse(quiet)
    except SyntaxError as err:
        if quiet is not text and err.lineno:
            lines = text.splitlines()
            if 0 < err.lineno <= len(lines):
                err.text = lines[err.lineno - 1]
        raise


def parses(text: str) -> bool:
    try:
        parse_code(text)
    except PARSE_ERRORS:
        return False
    return True


def line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in NEWLINE.finditer(text)]


def count_lines(text: str) -> int:
    starts = line_starts(text)
    return len(starts) - (1 if starts[-1] == len(text) and len(starts) > 1 else 0)
