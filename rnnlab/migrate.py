"""Migration checker: old flax (<= 0.6) recurrent-API code and RNN pitfalls in pasted text, and a codemod.

The pasted text is parsed with :mod:`ast`; it is never executed, compiled to run, or imported.

- :func:`extract_code` pulls the Python out of a document: a plain .py, markdown fences, or prose with lines
  of code between it (also code squashed onto one line by a web page, and over-indented first lines).
- :func:`check` reports findings with their line in the pasted text, a rule id (see :data:`RULES`) and a
  message that explains the pitfall and the fix.
- :func:`rewrite` applies the mechanical fixes as precise text edits at AST node positions, keeping every
  other character as it was, checks that the result still parses, and returns it with a unified diff.

No function here raises for any ``str`` input; problems with the input come back as :class:`Problem` s.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import keyword
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

__all__ = [
    "MAX_CHARS",
    "MAX_LINES",
    "RULES",
    "Change",
    "CheckResult",
    "CodeBlock",
    "Finding",
    "Problem",
    "RewriteResult",
    "check",
    "decode_upload",
    "extract_code",
    "rewrite",
]

MAX_CHARS = 200_000
MAX_LINES = 5_000
UPLOAD_TYPES = ("py", "txt", "md")
MAX_ATTEMPTS = 10_000  # parses tried while looking for code in a text that does not parse as a whole

# Rule id -> short title, in the order findings on one line are listed.
RULES: dict[str, str] = {
    "static-initialize-carry": "initialize_carry called on the cell class with batch dims and size (flax <= 0.6)",
    "init-fn": "init_fn= passed to initialize_carry (now carry_init= on the cell)",
    "cell-without-features": "Linen cell built without features",
    "rnn-positional-size": "nn.RNN(cell, <size>): the second positional field is time_major now",
    "rnn-cell-size": "cell_size= passed to nn.RNN",
    "convlstm-old-name": "ConvLSTM under its old name",
    "carry-shape-array": "initialize_carry given an array instead of a shape",
    "cell-in-loop": "cell constructed inside the loop over time steps",
    "learnable-carry-batch": "learnable initial carry created with a batch dimension",
    "moveaxis-loop": "loop over np.moveaxis(x, 0, -1) steps over the wrong axis",
}
_RULE_ORDER = {rule: i for i, rule in enumerate(RULES)}

_CELLS = frozenset({"LSTMCell", "OptimizedLSTMCell", "GRUCell", "MGUCell", "SimpleCell", "ConvLSTMCell", "ConvLSTM"})
_FEATURE_CELLS = frozenset({"LSTMCell", "OptimizedLSTMCell", "GRUCell", "MGUCell", "SimpleCell"})
_LSTM_LIKE = frozenset({"LSTMCell", "OptimizedLSTMCell"})
_CONV_CELLS = frozenset({"ConvLSTMCell", "ConvLSTM"})
_DEFAULT_ROOTS = {"nn": "flax.linen", "linen": "flax.linen", "flax": "flax"}
_ARRAY_MAKERS = frozenset(
    {"ones", "zeros", "empty", "ones_like", "zeros_like", "empty_like", "full", "array", "asarray"}
)
_CARRY_NAME = re.compile(r"carry|hidden|state|initial|^h_?0$|^c_?0$|^h$|^c$|^(h|c)_?init$|^init_?(h|c)$", re.I)
_SIZE_NAME = re.compile(r"size|units|features|hidden|dim", re.I)
_KEYWORDS = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
_NEWLINE = re.compile(r"\r\n|\r|\n")
_PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)
_Edit = tuple[int, int, str]  # start, end (character offsets), replacement
_R = TypeVar("_R")


# ---------------------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class CodeBlock:
    """A piece of Python found in a document.

    ``code`` is normalised Python: common indentation removed, lines squashed together split again, and a
    ``...`` body added after a trailing ``def ...:`` header. ``lines[i]`` is the document line (1-based) of
    line ``i + 1`` of ``code``, 0 for a line the extractor added. ``error`` says why the block does not parse
    (None when it does).
    """

    code: str
    first_line: int
    lines: tuple[int, ...]
    error: str | None = None
    # (column in the code line, column in the document line) where each code line's verbatim text starts.
    columns: tuple[tuple[int, int], ...] = field(default=(), repr=False, compare=False)

    @property
    def last_line(self) -> int:
        """The last document line the block covers."""
        return max(self.lines, default=self.first_line)

    @property
    def ok(self) -> bool:
        """Whether the block parses."""
        return self.error is None


@dataclass(frozen=True)
class Finding:
    """One pitfall: where it is, which rule, what is wrong and how to fix it."""

    line: int
    rule: str
    message: str
    code: str
    fixable: bool = False


@dataclass(frozen=True)
class Problem:
    """Why (part of) the input was not checked: empty, too large, or not valid Python."""

    line: int | None
    message: str


@dataclass(frozen=True)
class CheckResult:
    """What :func:`check` found. ``mode``: python, document, markdown, code (with syntax errors) or ''."""

    findings: tuple[Finding, ...] = ()
    problems: tuple[Problem, ...] = ()
    blocks: tuple[CodeBlock, ...] = ()
    mode: str = ""

    @property
    def checked(self) -> bool:
        """Whether any code was analysed."""
        return any(b.ok for b in self.blocks)

    @property
    def clean(self) -> bool:
        """Code was analysed and nothing was found."""
        return self.checked and not self.findings and not self.problems


@dataclass(frozen=True)
class Change:
    """One mechanical rewrite: the line, the rule, the text before and after, and why."""

    line: int
    rule: str
    before: str
    after: str
    note: str


@dataclass(frozen=True)
class RewriteResult:
    """The rewritten text, a unified diff (empty when unchanged), the changes and what is left to do by hand."""

    source: str
    diff: str = ""
    changes: tuple[Change, ...] = ()
    remaining: tuple[Finding, ...] = ()
    problems: tuple[Problem, ...] = ()

    @property
    def changed(self) -> bool:
        """Whether any edit was made."""
        return bool(self.changes)


# ---------------------------------------------------------------------------------------------------- helpers


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


def _parse(text: str) -> ast.Module:
    """``ast.parse`` without the warnings that odd pasted text triggers, and without touching global state.

    Never runs, compiles to bytecode or imports anything. A SyntaxError carries the original line's text.
    """
    quiet = _without_bad_escapes(text)
    try:
        return ast.parse(quiet)
    except SyntaxError as err:
        if quiet is not text and err.lineno:
            lines = text.splitlines()
            if 0 < err.lineno <= len(lines):
                err.text = lines[err.lineno - 1]
        raise


def _parses(text: str) -> bool:
    try:
        _parse(text)
    except _PARSE_ERRORS:
        return False
    return True


def _short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in _NEWLINE.finditer(text)]


def _count_lines(text: str) -> int:
    starts = _line_starts(text)
    return len(starts) - (1 if starts[-1] == len(text) and len(starts) > 1 else 0)


def _validate(source: object) -> Problem | None:
    if not isinstance(source, str):
        return Problem(None, f"Expected text, got {type(source).__name__}.")
    if not source.strip():
        return Problem(None, "Paste some Python code (or a document with code in it, like a forum answer) to check.")
    lines = _count_lines(source)
    if len(source) > MAX_CHARS or lines > MAX_LINES:
        return Problem(
            None,
            f"The text is {len(source):,} characters and {lines:,} line{'s' if lines != 1 else ''} long; the checker "
            f"reads at most {MAX_CHARS:,} characters and {MAX_LINES:,} lines. Paste only the part with the "
            "recurrent code.",
        )
    if "\x00" in source:
        line = _count_lines(source[: source.index("\x00") + 1])
        return Problem(line, f"Line {line} contains a null byte; remove it (the text is probably not source code).")
    try:
        source.encode("utf-8")
    except UnicodeEncodeError as exc:
        line = _count_lines(source[: exc.start + 1])
        return Problem(line, f"Line {line} contains characters that are not valid Unicode (lone surrogates).")
    return None


def _syntax_message(err: BaseException) -> str:
    if isinstance(err, SyntaxError):
        text = (err.text or "").strip()
        return f"{err.msg}" + (f" (`{_short(text, 60)}`)" if text else "")
    if isinstance(err, (RecursionError, MemoryError)):
        return "the code is nested too deeply to analyse"
    return str(err) or type(err).__name__


def decode_upload(name: str, data: bytes) -> tuple[str | None, str | None]:
    """An uploaded file's text, or why it is refused: (text, None) or (None, message). Never raises.

    Refused: a name not ending in .py/.txt/.md, an empty file, more than 4 bytes per allowed character, null
    bytes (a binary file), text that is not UTF-8, and text over :data:`MAX_CHARS` or :data:`MAX_LINES`.
    """
    shown = _short(str(name), 60)
    if not str(name).lower().endswith(tuple(f".{t}" for t in UPLOAD_TYPES)):
        types = ", ".join("." + t for t in UPLOAD_TYPES)
        return None, f"{shown}: only {types} files can be checked; nothing was loaded."
    if not data:
        return None, f"{shown} is empty; nothing was loaded."
    if len(data) > 4 * MAX_CHARS:
        return None, (f"{shown} is {len(data):,} bytes; the checker reads at most {MAX_CHARS:,} characters. "
                      "Nothing was loaded.")
    if b"\x00" in data:
        return None, f"{shown} contains null bytes: it is a binary file, not source code. Nothing was loaded."
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        return None, f"{shown} is not UTF-8 text ({e.reason} at byte {e.start:,}); nothing was loaded."
    problem = _validate(text)
    if problem is not None:
        return None, f"{shown}: {problem.message} Nothing was loaded."
    return text, None


# ------------------------------------------------------------------------------------ scanning document lines


def _scan(line: str, state: str | None) -> tuple[str, int, str | None]:
    """The line with strings replaced by '""' and the comment cut, where the comment starts (-1), the state.

    ``state`` is the triple quote of a string still open at the start of the line (None when none).
    """
    out: list[str] = []
    i, n = 0, len(line)
    if state:
        end = line.find(state)
        if end < 0:
            return "", -1, state
        out.append('""')
        i = end + 3
    while i < n:
        ch = line[i]
        if ch == "#":
            return "".join(out), i, None
        if ch in "\"'":
            k = 0
            while k < 2 and len(out) > k and out[-1 - k] in "rRbBuUfF":
                k += 1
            if k and "".join(out[-k:]).lower() in {"r", "b", "u", "f", "rb", "br", "fr", "rf"}:
                if len(out) == k or not (out[-1 - k].isalnum() or out[-1 - k] == "_"):
                    del out[-k:]
            quote = line[i : i + 3] if line[i : i + 3] in ('"""', "'''") else ch
            j = i + len(quote)
            while j < n:
                if line[j] == "\\":
                    j += 2
                    continue
                if line.startswith(quote, j):
                    break
                j += 1
            out.append('""')
            if j >= n:
                return "".join(out), -1, quote if len(quote) == 3 else None
            i = j + len(quote)
            continue
        out.append(ch)
        i += 1
    return "".join(out), -1, None


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d[\w.]*|\S")
_HEADING = re.compile(r"^\s*[A-Za-z_]\w*\s*:\s*$")


def _strong_prose(code_part: str) -> bool:
    """Text outside strings and comments that cannot be Python: letters of other scripts, backticks, ..."""
    if any(ord(ch) > 127 and not ch.isspace() for ch in code_part):
        return True
    if any(ch in code_part for ch in "`$?") or re.search(r"!(?!=)", code_part):
        return True
    match = _HEADING.match(code_part)
    return bool(match) and code_part.split(":")[0].strip() not in _KEYWORDS


def _weak_prose(code_part: str) -> bool:
    """Two words side by side (``Answer 1``, ``Use this``): prose, or statements squashed onto one line."""
    prev = None
    for match in _TOKEN.finditer(code_part):
        tok = match.group()
        atom = (tok[0].isalpha() or tok[0] == "_" or tok[0].isdigit()) and tok not in _KEYWORDS
        if atom and prev:
            return True
        prev = atom
    return False


# --------------------------------------------------------------------------------- splitting squashed lines

_ASSIGN_START = re.compile(
    r"[A-Za-z_][\w.]*(\[[^\]]*\])?(\s*,\s*[A-Za-z_][\w.]*)*\s*(=|\+=|-=|\*=|/=|\|=|&=)(?!=)"
    r"|\(\s*[A-Za-z_]\w*(\s*,\s*[A-Za-z_]\w*)*\s*,?\s*\)(\s*,\s*[A-Za-z_]\w*)*\s*=(?!=)"
)
_KEYWORD_START = re.compile(
    r"(def|class|return|raise|import|from|if|elif|else|for|while|with|try|except|finally|assert|del|pass|break"
    r"|continue|global|nonlocal|yield|async|await)\b"
)
_CALL_START = re.compile(r"[A-Za-z_][\w.]*\(")
_BARE = frozenset({"return", "raise", "yield", "del", "assert", "await", "import", "from", "global", "nonlocal"})


@lru_cache(maxsize=8192)
def _segment_kind(seg: str) -> str | None:
    """stmt, header (needs a body), decorator, clause (else: x), clause-header (else:), or None."""
    word = re.match(r"[A-Za-z_]\w*|@", seg)
    first = word.group() if word else ""
    if not seg or seg in _BARE:
        return None
    if first in {"else", "elif", "except", "finally"}:
        prefix = "try:\n    pass\n" if first in {"except", "finally"} else "if 1:\n    pass\n"
        if _parses(prefix + seg):
            return "clause"
        return "clause-header" if _parses(prefix + seg + "\n    pass") else None
    if _parses(seg):
        return "stmt"
    if first == "@":
        return "decorator" if _parses(seg + "\ndef _f(): pass") else None
    return "header" if _parses(seg + "\n    pass") else None


def _is_candidate(line: str, p: int, in_comment: bool) -> bool:
    rest = line[p:]
    if rest.startswith("@") or rest.startswith('"""') or rest.startswith("'''"):
        return True
    if rest.startswith("...") and (len(rest) == 3 or rest[3].isspace()):
        return True
    kw = _KEYWORD_START.match(rest)
    if kw:
        return True
    assign = _ASSIGN_START.match(rest)
    if assign and assign.group().split(".")[0].split("[")[0].strip("( ") not in _KEYWORDS:
        return True
    return in_comment and bool(_CALL_START.match(rest))


def _levels(segs: list[tuple[str, str]]) -> list[int]:
    """Indentation levels for statements that were squashed onto one line (a heuristic)."""
    frames: list[tuple[str, int]] = []
    cur, prev_kind, out = 0, None, []
    wants = {"else": ("if", "for", "while", "try"), "elif": ("if",), "except": ("try",), "finally": ("try",)}
    for seg, kind in segs:
        word = re.match(r"[A-Za-z_]\w*|@", seg)
        first = word.group() if word else ""
        if first == "async":
            first = seg.split()[1] if len(seg.split()) > 1 else first
        if kind == "decorator" or first in {"def", "class"}:
            if prev_kind != "decorator":
                while frames and frames[-1][0] != "class":
                    frames.pop()
                cur = frames[-1][1] + 1 if frames else 0
            level = cur
        elif kind in {"clause", "clause-header"}:
            while frames and frames[-1][0] not in wants.get(first, ()):
                frames.pop()
            level = frames[-1][1] if frames else cur
            cur = level
        else:
            level = cur
        out.append(level)
        if kind in {"header", "clause-header"}:
            if kind == "header":
                frames.append((first if first in {"def", "class", "if", "for", "while", "try", "with"} else "", level))
            cur = level + 1
        elif kind == "stmt" and first in {"if", "for", "while", "try", "with"}:
            frames.append((first, level))
        prev_kind = kind
    return out


def _unsquash(line: str, comment_at: int) -> list[tuple[int, str, int]] | None:
    """Split a line holding several statements into (level, statement, column), or None."""
    start = len(line) - len(line.lstrip())
    strings: list[tuple[int, int]] = []
    # Positions inside string literals (before the comment) are not statement starts.
    i = start
    limit = comment_at if comment_at >= 0 else len(line)
    while i < limit:
        ch = line[i]
        if ch in "\"'":
            quote = line[i : i + 3] if line[i : i + 3] in ('"""', "'''") else ch
            j = i + len(quote)
            while j < limit and not line.startswith(quote, j):
                j += 2 if line[j] == "\\" else 1
            strings.append((i + 1, j + len(quote) - 1))
            i = j + len(quote)
            continue
        i += 1
    cands = [start]
    for p in range(start + 1, len(line)):
        if not line[p - 1].isspace() or line[p].isspace():
            continue
        if any(a <= p < b for a, b in strings):
            continue
        before = line[:p].rstrip()[-1:]
        if comment_at >= 0 and p > comment_at:
            if before in ",=([{+*/%&|<>^~":
                continue  # inside the comment: still not right after a comma or an operator
        elif not (before.isalnum() or before in "_)]}\"':."):
            continue  # after a comma or an operator a statement cannot start
        if _is_candidate(line, p, comment_at >= 0 and p > comment_at):
            cands.append(p)
    if len(cands) < 2 or len(cands) > 40:
        return None
    m = len(cands)
    best = [-1] * (m + 1)
    prev: list[tuple[int, str] | None] = [None] * (m + 1)
    best[0] = 0
    for b in range(1, m + 1):
        end = cands[b] if b < m else len(line)
        for a in range(b):
            if best[a] < 0 or best[a] + 1 <= best[b]:
                continue
            kind = _segment_kind(line[cands[a] : end].strip())
            if kind is not None:
                best[b], prev[b] = best[a] + 1, (a, kind)
    if best[m] < 2:
        return None
    segs: list[tuple[int, str]] = []
    b = m
    while b > 0:
        a, kind = prev[b]  # type: ignore[misc]
        segs.append((a, kind))
        b = a
    segs.reverse()
    pieces = []
    for idx, (a, kind) in enumerate(segs):
        end = cands[segs[idx + 1][0]] if idx + 1 < len(segs) else len(line)
        pieces.append((line[cands[a] : end].strip(), kind, cands[a]))
    levels = _levels([(text, kind) for text, kind, _ in pieces])
    code = "\n".join("    " * lvl + text for lvl, (text, _, _) in zip(levels, pieces))
    if pieces[-1][1] in {"header", "clause-header"}:
        code += "\n" + "    " * (levels[-1] + 1) + "..."
    if not _parses(code):
        return None
    return [(lvl, text, col) for lvl, (text, _, col) in zip(levels, pieces)]


def _holds_code(seg: str) -> bool:
    for text in (seg, seg + "\n    pass", seg + "\ndef _f(): pass"):
        try:
            tree = _parse(text)
        except _PARSE_ERRORS:
            continue
        return any(
            isinstance(n, (ast.Call, ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)) for n in ast.walk(tree)
        )
    return False


def _maybe_unsquash(line: str, code_part: str, comment_at: int, hidden: bool) -> list[tuple[int, str, int]] | None:
    """Split a squashed line when it does not parse alone, or (``hidden``) when code hides in its comment."""
    if not code_part.strip() or len(line) > 2000:
        return None
    alone = _segment_kind(line.strip()) is not None
    if alone and (comment_at < 0 or not hidden):
        return None
    pieces = _unsquash(line, comment_at)
    if pieces is None or not alone:
        return pieces
    after = [text for _, text, col in pieces if col > comment_at]
    return pieces if any(_holds_code(text) for text in after) else None


# ------------------------------------------------------------------------------------------ extracting code


@dataclass
class _CL:
    """A line of code: its text, its document line (0: added), and where its verbatim text starts."""

    text: str
    doc_line: int
    code_col: int = 0
    doc_col: int = 0


@dataclass
class _Unit:
    """One document line: blank, comment, string (inside a multi-line string), code; its code lines."""

    doc_line: int
    kind: str
    lines: list[_CL]
    code_part: str = ""


class _Budget:
    """How much parsing the search for code in a document may do: characters and attempts (each attempt also
    costs Python work per line, so a long text of lines that never parse is bounded by the attempts)."""

    def __init__(self, chars: int, attempts: int = MAX_ATTEMPTS) -> None:
        self.left = chars
        self.attempts = attempts

    def spend(self, chars: int) -> bool:
        self.left -= chars
        self.attempts -= 1
        return self.left >= 0 and self.attempts >= 0


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _strip(cl: _CL, k: int) -> _CL:
    k = min(k, _indent(cl.text))
    if k <= cl.code_col:
        return _CL(cl.text[k:], cl.doc_line, cl.code_col - k, cl.doc_col)
    return _CL(cl.text[k:], cl.doc_line, 0, cl.doc_col + k - cl.code_col)


def _assemble(units: list[_Unit]) -> tuple[list[_CL], list[int]]:
    """Dedent the units (fixing an over-indented first line) into code lines, and each line's unit index."""
    sig = [i for i, u in enumerate(units) if u.kind == "code"]
    strip = {i: 0 for i in range(len(units))}
    if sig:
        first, rest = sig[0], sig[1:]
        indents = {i: _indent(units[i].lines[0].text) for i in sig}
        rest_min = min((indents[i] for i in rest), default=indents[first])
        if indents[first] > rest_min:
            strip[first] = indents[first] - rest_min
            indents[first] = rest_min
        common = min(indents.values())
        for i in range(len(units)):
            strip[i] = strip[i] + common if i == first else common
    out: list[_CL] = []
    owner: list[int] = []
    for i, unit in enumerate(units):
        for cl in unit.lines:
            out.append(_strip(cl, strip[i]) if unit.kind != "string" else cl)
            owner.append(i)
    return out, owner


@dataclass
class _Attempt:
    ok: bool
    lines: list[_CL]
    owner: list[int]
    tree: ast.Module | None = None
    err_unit: int | None = None
    message: str = ""


def _try_units(units: list[_Unit], budget: _Budget) -> _Attempt:
    while len(units) > 1 and units[-1].kind == "blank":
        units = units[:-1]
    lines, owner = _assemble(units)
    code = "\n".join(cl.text for cl in lines)
    if not budget.spend(len(code) + 1):
        return _Attempt(False, lines, owner, err_unit=0, message="too much text that does not parse; not analysed")
    try:
        return _Attempt(True, lines, owner, tree=_parse(code))
    except SyntaxError as err:
        last = next((cl for cl in reversed(lines) if cl.text.strip()), None)
        if last is not None and _scan(last.text, None)[0].rstrip().endswith(":") and "indented block" in err.msg:
            pad = _CL(" " * (_indent(last.text) + 4) + "...", 0)
            try:
                tree = _parse(code + "\n" + pad.text)
                return _Attempt(True, [*lines, pad], [*owner, owner[-1]], tree=tree)
            except _PARSE_ERRORS:
                pass
        lineno = err.lineno or 0
        unit = owner[min(max(lineno, 1), len(owner)) - 1] if owner else 0
        return _Attempt(False, lines, owner, err_unit=unit, message=_syntax_message(err))
    except _PARSE_ERRORS as err:
        return _Attempt(False, lines, owner, err_unit=0, message=_syntax_message(err))


def _trivial(tree: ast.Module) -> bool:
    """A lone word or two (a heading that happens to be a valid expression) is not code worth checking."""

    def plain(node: ast.AST) -> bool:
        if isinstance(node, ast.UnaryOp):
            node = node.operand
        return isinstance(node, (ast.Name, ast.Constant, ast.Attribute))

    for stmt in tree.body:
        if isinstance(stmt, ast.Pass) or isinstance(stmt, ast.Expr) and plain(stmt.value):
            continue
        if isinstance(stmt, ast.AnnAssign) and stmt.value is None and isinstance(stmt.annotation, ast.Name):
            continue
        return False
    return True


def _block(lines: list[_CL], error: str | None = None) -> CodeBlock:
    docs = tuple(cl.doc_line for cl in lines)
    first = next((d for d in docs if d), 0)
    return CodeBlock(
        code="\n".join(cl.text for cl in lines),
        first_line=first,
        lines=docs,
        error=error,
        columns=tuple((cl.code_col, cl.doc_col) if cl.doc_line else (-1, -1) for cl in lines),
    )


def _looks_like_code(units: list[_Unit]) -> bool:
    for unit in units:
        part = unit.code_part.strip()
        if any(ch in part for ch in "=()[]{}:") or _KEYWORD_START.match(part):
            return True
    return False


def _split_run(units: list[_Unit], budget: _Budget) -> list[CodeBlock]:
    """Cut a run of code-like lines into the longest pieces that parse; report code-like pieces that do not."""
    blocks: list[CodeBlock] = []
    failed: list[int] = []
    failed_msg = ""

    def flush() -> None:
        nonlocal failed, failed_msg
        if failed and _looks_like_code([units[k] for k in failed]):
            lines, _ = _assemble([units[k] for k in failed])
            first = next(cl.doc_line for cl in lines if cl.doc_line)
            blocks.append(_block(lines, f"line {first}: {failed_msg}" if failed_msg else "does not parse"))
        failed, failed_msg = [], ""

    i, n = 0, len(units)
    while i < n:
        if units[i].kind == "blank":
            i += 1
            continue
        found = _longest(units, i, n, budget)
        if found is None:
            if not failed:
                attempt = _try_units(units[i : i + 1], budget)
                failed_msg = attempt.message
            failed.append(i)
            i += 1
            continue
        j, attempt = found
        flush()
        if attempt.tree is not None and not _trivial(attempt.tree):
            lines = attempt.lines
            while lines and not lines[-1].text.strip():
                lines = lines[:-1]
            blocks.append(_block(lines))
        i = j
    flush()
    return blocks


def _longest(units: list[_Unit], i: int, n: int, budget: _Budget) -> tuple[int, _Attempt] | None:
    """The longest units[i:j] that parses (growing windows, then shrinking to the first error)."""
    width, best = 32, None
    j = min(n, i + width)
    for _ in range(40):
        attempt = _try_units(units[i:j], budget)
        if attempt.ok:
            best = (j, attempt)
            if j >= n:
                return best
            width *= 4
            j = min(n, i + width)
            continue
        err = attempt.err_unit
        if err is None or err <= 0:
            return best
        if best is not None and i + err <= best[0]:
            return best
        j = i + err
    return best


def _depth_change(code_part: str) -> int:
    return sum(code_part.count(ch) for ch in "([{") - sum(code_part.count(ch) for ch in ")]}")


def _units_from_lines(doc_lines: list[str], start: int, detect: bool) -> list[list[_Unit]]:
    """Classify lines (from document line ``start``) and group them into runs separated by prose."""
    runs: list[list[_Unit]] = [[]]
    state: str | None = None
    depth = 0  # brackets left open by the lines before: a continuation line is never split
    for k, raw in enumerate(doc_lines):
        doc_line = start + k
        text = raw.replace("\xa0", " ")
        if not text.strip():
            runs[-1].append(_Unit(doc_line, "blank" if state is None else "string", [_CL(text, doc_line)]))
            continue
        if state is not None:
            part, _, state = _scan(text, state)
            runs[-1].append(_Unit(doc_line, "string", [_CL(text, doc_line)], part))
            depth = max(0, depth + _depth_change(part))
            continue
        part, comment_at, new_state = _scan(text, None)
        if not part.strip():
            runs[-1].append(_Unit(doc_line, "comment", [_CL(text, doc_line)], part))
            continue
        pieces = None
        if detect:
            if _strong_prose(part):
                runs.append([])
                depth = 0
                continue
            weak = _weak_prose(part)
            if depth == 0 and (not weak or "=" in part or "(" in part):
                pieces = _maybe_unsquash(text, part, comment_at, hidden=False)
            if weak and pieces is None:
                runs.append([])
                depth = 0
                continue
        if pieces:
            ws = text[: _indent(text)]
            lines = [_CL(ws + "    " * lvl + seg, doc_line, len(ws) + 4 * lvl, col) for lvl, seg, col in pieces]
            runs[-1].append(_Unit(doc_line, "code", lines, part))
            state = None
        else:
            runs[-1].append(_Unit(doc_line, "code", [_CL(text, doc_line)], part))
            state = new_state
            depth = max(0, depth + _depth_change(part))
    runs = [run for run in runs if any(u.kind == "code" for u in run)]
    if detect:
        # A lone line of code between prose, with more code in its comment: a web page squashed a snippet onto
        # one line. Inside a real multi-line block such a comment is left alone.
        for run in runs:
            (unit, *more) = [u for u in run if u.kind != "blank"]
            if not more and len(unit.lines) == 1:
                text = unit.lines[0].text
                part, comment_at, _ = _scan(text, None)
                pieces = _maybe_unsquash(text, part, comment_at, hidden=True)
                if pieces:
                    ws = text[: _indent(text)]
                    unit.lines = [
                        _CL(ws + "    " * lvl + seg, unit.doc_line, len(ws) + 4 * lvl, col) for lvl, seg, col in pieces
                    ]
    return runs


_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([\w+.-]*)")
_PY_LANGS = frozenset({"", "python", "py", "python3", "py3", "pycon", "ipython", "ipython3", "jupyter"})


def _fenced(doc_lines: list[str]) -> list[tuple[int, list[str]]] | None:
    """(first line, lines) of each Python fence, or None when the text has no fences."""
    found, i, seen = [], 0, False
    while i < len(doc_lines):
        match = _FENCE.match(doc_lines[i])
        if not match:
            i += 1
            continue
        seen = True
        fence, lang = match.group(1), match.group(2).lower()
        j = i + 1
        while j < len(doc_lines) and not doc_lines[j].lstrip().startswith(fence[0] * len(fence)):
            j += 1
        if lang in _PY_LANGS:
            found.append((i + 2, doc_lines[i + 1 : j]))
        i = j + 1
    return found if seen else None


def _pycon(first: int, lines: list[str]) -> list[_Unit] | None:
    """Units for a doctest-style fence (>>> prompts), None when it has none."""
    if not any(line.lstrip().startswith(">>>") for line in lines):
        return None
    units = []
    for k, line in enumerate(lines):
        stripped = line.lstrip()
        lead = len(line) - len(stripped)
        if stripped.startswith((">>> ", "... ")) or stripped in {">>>", "..."}:
            text = stripped[4:]
            units.append(
                _Unit(first + k, "code" if text.strip() else "blank", [_CL(text, first + k, 0, lead + 4)], text)
            )
        else:
            units.append(_Unit(first + k, "blank", [_CL("", first + k, 0, len(line))]))
    return units


def _extract(document: str) -> tuple[list[CodeBlock], str, BaseException | None]:
    """The blocks, the mode (python, markdown, document, code), and the error of parsing the whole text."""
    doc_lines = _NEWLINE.split(document)
    whole_err: BaseException | None = None
    try:
        _parse(document)
        n = len(doc_lines)
        return [CodeBlock(document, 1, tuple(range(1, n + 1)), None, tuple((0, 0) for _ in range(n)))], "python", None
    except _PARSE_ERRORS as err:
        whole_err = err
    if isinstance(whole_err, (RecursionError, MemoryError)):
        lines = [_CL(text, k + 1) for k, text in enumerate(doc_lines)]
        return [_block(lines, _syntax_message(whole_err))], "code", whole_err
    budget = _Budget(8_000_000)
    fences = _fenced(doc_lines)
    blocks: list[CodeBlock] = []
    if fences is not None:
        for first, lines in fences:
            units = _pycon(first, lines)
            for run in [units] if units is not None else _units_from_lines(lines, first, detect=False):
                blocks.extend(_split_run(run, budget))
        return blocks, "markdown", whole_err
    runs = _units_from_lines(doc_lines, 1, detect=True)
    covered = sum(1 for run in runs for u in run if u.kind != "blank")
    prose = sum(1 for text in doc_lines if text.strip()) - covered
    for run in runs:
        blocks.extend(_split_run(run, budget))
    return blocks, ("document" if prose else "code"), whole_err


def extract_code(document: str) -> list[CodeBlock]:
    """The Python in a document (a plain .py gives one block); blocks that look like code but do not parse
    come back with ``error`` set."""
    if not isinstance(document, str) or not document.strip():
        return []
    try:
        return _extract(document)[0]
    except (RecursionError, MemoryError):
        return []


# ----------------------------------------------------------------------------------------------- the rules


class _Src:
    """Offsets in a block's code: (lineno, byte column) from ast -> character offset."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.starts = _line_starts(code)
        self.lines = _NEWLINE.split(code)

    def offset(self, lineno: int, col: int) -> int:
        line = self.lines[lineno - 1]
        if not line.isascii():
            col = len(line.encode("utf-8")[:col].decode("utf-8", "ignore"))
        return self.starts[lineno - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (
            self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self.offset(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def text(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.code[start:end]


@dataclass(eq=False)
class _Issue:
    rule: str
    block: CodeBlock
    src: _Src
    node: ast.AST
    message: str
    edits: list[_Edit] = field(default_factory=list)
    note: str = ""
    covered_by: _Issue | None = None
    cell: ast.Call | None = None  # rnn-positional-size: the cell constructor the size is moved into

    @property
    def fixable(self) -> bool:
        return bool(self.edits) or (self.covered_by is not None and bool(self.covered_by.edits))

    def position(self) -> tuple[int, int]:
        lineno = self.node.lineno  # type: ignore[attr-defined]
        line = self.block.lines[lineno - 1] if lineno <= len(self.block.lines) else 0
        k = lineno - 1
        while not line and k > 0:
            k -= 1
            line = self.block.lines[k]
        return line or self.block.first_line, self.node.col_offset  # type: ignore[attr-defined]

    def finding(self) -> Finding:
        line, _ = self.position()
        code = self.src.lines[self.node.lineno - 1].strip()  # type: ignore[attr-defined]
        return Finding(line, self.rule, self.message, _short(code, 160), self.fixable)


def _imports(trees: list[ast.Module]) -> dict[str, str]:
    """Name -> what it refers to (dotted), from the imports and class definitions in the code."""
    table: dict[str, str] = {}
    local: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        table[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".")[0]
                        table[root] = root
            elif isinstance(node, ast.ImportFrom):
                module = "." * node.level + (node.module or "")
                for alias in node.names:
                    if alias.name != "*":
                        table[alias.asname or alias.name] = f"{module}.{alias.name}" if module else alias.name
            elif isinstance(node, ast.ClassDef):
                local.add(node.name)
    for name in local:
        table[name] = f"<local>.{name}"
    return table


def _dotted(node: ast.AST) -> tuple[str, list[str]] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return node.id, parts[::-1]


def _linen(node: ast.AST, table: dict[str, str]) -> str | None:
    """The flax.linen member an expression names (``nn.LSTMCell`` -> 'LSTMCell'), else None."""
    dotted = _dotted(node)
    if dotted is None:
        return None
    root, parts = dotted
    full = ".".join([table.get(root) or _DEFAULT_ROOTS.get(root) or root, *parts])
    if not full.startswith("flax.linen."):
        return None
    rest = full[len("flax.linen.") :].removeprefix("recurrent.")
    return rest if "." not in rest else None


def _int_literal(node: ast.AST | None) -> int | None:
    sign = 1
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        sign, node = -sign, node.operand
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return sign * node.value
    return None


def _simple(node: ast.AST) -> bool:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and _int_literal(node.slice) is None:
            return False
        node = node.value
    return isinstance(node, ast.Name)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _has_features(call: ast.Call) -> bool:
    return bool(call.args) or any(k.arg in {"features", None} for k in call.keywords)


def _args_in_order(call: ast.Call) -> list[ast.AST]:
    return sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]


def _remove_arg(src: _Src, call: ast.Call, node: ast.AST) -> _Edit:
    """An edit that deletes one argument of a call with its comma."""
    args = _args_in_order(call)
    idx = next(k for k, a in enumerate(args) if a is node)
    start, end = src.span(node)
    if idx > 0:
        return src.span(args[idx - 1])[1], end, ""
    if idx + 1 < len(args):
        return start, src.span(args[idx + 1])[0], ""
    return start, end, ""


def _insert_kwarg(src: _Src, call: ast.Call, text: str, first: bool = False) -> _Edit:
    """An edit that adds ``text`` (``name=value``) to a call: first among the keywords, or last."""
    args = _args_in_order(call)
    if not args:
        end = src.span(call)[1] - 1
        return end, end, text
    if first and call.keywords:
        pos = src.span(call.keywords[0])[0]
        return pos, pos, text + ", "
    pos = src.span(args[-1])[1]
    return pos, pos, ", " + text


class _Analyser:
    """Walks the parsed blocks once and collects issues."""

    def __init__(self, blocks: list[CodeBlock], trees: list[ast.Module]) -> None:
        self.blocks = blocks
        self.trees = trees
        self.table = _imports(trees)
        self.issues: list[_Issue] = []

    def run(self) -> list[_Issue]:
        for block, tree in zip(self.blocks, self.trees):
            self.block, self.src = block, _Src(block.code)
            self.parents: dict[ast.AST, ast.AST] = {}
            for node in ast.walk(tree):
                for child in ast.iter_child_nodes(node):
                    self.parents[child] = node
            for node in ast.walk(tree):
                self.visit(node)
        moved = {id(i.cell): i for i in self.issues if i.rule == "rnn-positional-size" and i.cell is not None}
        for issue in self.issues:  # a cell that gets nn.RNN's size as features= is fixed by that rewrite
            if issue.rule == "cell-without-features" and not issue.edits and id(issue.node) in moved:
                issue.covered_by = moved[id(issue.node)]
        return self.issues

    def add(
        self,
        rule: str,
        node: ast.AST,
        message: str,
        edits: list[_Edit] | None = None,
        note: str = "",
        covered_by: _Issue | None = None,
    ) -> _Issue:
        issue = _Issue(rule, self.block, self.src, node, message, list(edits or []), note, covered_by)
        self.issues.append(issue)
        return issue

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Call):
            self.call(node)
        elif isinstance(node, ast.Attribute) and node.attr == "ConvLSTM":
            if _linen(node, self.table) == "ConvLSTM":
                self.old_name(node)
        elif isinstance(node, ast.Name) and node.id == "ConvLSTM" and isinstance(node.ctx, ast.Load):
            if self.table.get("ConvLSTM", "").removeprefix("flax.linen.").removeprefix("recurrent.") == "ConvLSTM":
                self.old_name(node)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            if node.module in {"flax.linen", "flax.linen.recurrent"}:
                for alias in node.names:
                    if alias.name == "ConvLSTM":
                        self.old_name(alias)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.moveaxis(node.iter)
        elif isinstance(node, ast.comprehension):
            self.moveaxis(node.iter)

    # -- calls

    def call(self, node: ast.Call) -> None:
        func = node.func
        member = _linen(func, self.table)
        if isinstance(func, ast.Attribute) and func.attr == "initialize_carry":
            self.initialize_carry(node, func)
        elif member in _FEATURE_CELLS:
            self.features(node, member)
        elif member == "RNN":
            self.rnn(node)
        elif isinstance(func, ast.Attribute) and func.attr == "param" and isinstance(func.value, ast.Name):
            if func.value.id == "self":
                self.learnable_carry(node)
        self.cell_in_loop(node)

    def initialize_carry(self, node: ast.Call, func: ast.Attribute) -> None:
        src = self.src
        init_fn = next((k for k in node.keywords if k.arg == "init_fn"), None)
        cls = _linen(func.value, self.table) if not isinstance(func.value, ast.Call) else None
        static = None
        if cls in _CELLS:
            static = self.static(node, func, cls, init_fn)
        else:
            shape = (
                node.args[1]
                if len(node.args) >= 2
                else next((k.value for k in node.keywords if k.arg == "input_shape"), None)
            )
            if shape is not None and self.array_like(shape):
                text = _short(src.text(shape), 40)
                end = src.span(shape)[1]
                self.add(
                    "carry-shape-array",
                    shape,
                    f"`{_short(src.text(node))}` passes the array `{text}` where flax >= 0.7 expects its shape "
                    f"(input_shape): it fails with TypeError: unsupported operand type(s) for +. Pass "
                    f"`{text}.shape`: the shape of one input time step, batch dims then input features.",
                    [(end, end, ".shape")],
                    f"Passed `{text}.shape` (a shape) instead of the array `{text}`.",
                )
        if init_fn is None:
            return
        init = _short(src.text(init_fn.value), 50)
        message = (
            f"`init_fn={init}`: initialize_carry no longer takes init_fn (TypeError: unexpected keyword "
            f"argument 'init_fn' since flax 0.7). The initializer is the cell's `carry_init` field: "
            f"`nn.GRUCell(features=..., carry_init={init})`; it is called as init(key, shape, param_dtype)."
        )
        if static is not None:
            self.add("init-fn", init_fn, message, covered_by=static)
            return
        receiver = func.value
        edits = []
        if isinstance(receiver, ast.Call) and _linen(receiver.func, self.table) in _CELLS:
            if not any(k.arg in {"carry_init", None} for k in receiver.keywords):
                edits = [
                    _insert_kwarg(src, receiver, f"carry_init={src.text(init_fn.value)}"),
                    _remove_arg(src, node, init_fn),
                ]
        self.add("init-fn", init_fn, message, edits, f"Moved `init_fn={init}` to `carry_init={init}` on the cell.")

    def static(self, node: ast.Call, func: ast.Attribute, cls: str, init_fn: ast.keyword | None) -> _Issue:
        src = self.src
        name = _short(src.text(func.value), 40)
        params = ("rng", "batch_dims", "size", "init_fn")
        bound: dict[str, ast.AST] = {}
        ok = len(node.args) <= 4 and not any(isinstance(a, ast.Starred) for a in node.args)
        for key, arg in zip(params, node.args):
            bound[key] = arg
        for kw in node.keywords:
            if kw.arg in params and kw.arg not in bound:
                bound[kw.arg] = kw
            else:
                ok = False
        value = {k: (v.value if isinstance(v, ast.keyword) else v) for k, v in bound.items()}
        text = {k: src.text(v) for k, v in value.items()}
        if cls in _CONV_CELLS:
            size = value.get("size")
            batch = text.get("batch_dims", "batch_dims")
            if isinstance(size, ast.Tuple) and size.elts:
                feats = src.text(size.elts[-1])
                spatial = [src.text(e) for e in size.elts[:-1]]
                shape = (
                    "("
                    + ", ".join(
                        [*(self.tuple_items(value.get("batch_dims")) or [f"*{batch}"]), *spatial, "<input channels>"]
                    )
                    + ")"
                )
                what = f"size {src.text(size)} is the spatial shape plus the output features {feats}"
            else:
                feats, shape = "<features>", f"(*{batch}, *<spatial dims>, <input channels>)"
                what = "size is the spatial shape plus the output features"
            message = (
                f"`{_short(src.text(node))}` is the flax <= 0.6 static method (rng, batch_dims, size); {what}. "
                f"Since flax 0.7 the cell holds features and kernel_size and initialize_carry takes the shape of "
                f"one input step (batch dims, spatial dims, input channels): `nn.ConvLSTMCell(features={feats}, "
                f"kernel_size=<your kernel>, parent=None).initialize_carry({text.get('rng', 'rng')}, {shape})`, "
                f"or pass `x_t.shape` for an input step. Not rewritten: the old call has no kernel size."
            )
            return self.add("static-initialize-carry", node, message)
        size_text = text.get("size", "size")
        shape = self.shape_text(value.get("batch_dims"), text.get("batch_dims", "batch_dims"), size_text)
        extra = f", carry_init={text['init_fn']}" if "init_fn" in text else ""
        message = (
            f"`{_short(src.text(node))}` is the flax <= 0.6 static method (rng, batch_dims, size). Since flax 0.7 "
            f"initialize_carry is an instance method that takes the shape of one input time step, and calling it "
            f"on the class fails (TypeError: 'int' object is not subscriptable). Build the cell with its size: "
            f"`{name}(features={_short(size_text, 30)}, parent=None{_short(extra, 40)}).initialize_carry("
            f"{_short(text.get('rng', 'rng'), 30)}, {_short(shape, 40)})`. Only the batch dims of that shape are "
            f"used (its last entry stands for the input features), so the carry keeps shape batch_dims + "
            f"(features,); with an input step at hand, pass `x_t.shape`."
        )
        edits: list[_Edit] = []
        if ok and {"rng", "batch_dims", "size"} <= bound.keys():
            edits = self.static_edits(node, func, bound, text, shape)
        note = (
            f"Built the cell with features={size_text} and parent=None and called initialize_carry on it with "
            f"{shape}, the guide's pattern: the last entry of that shape stands for the input features and only the "
            f"batch dims before it are used, so the carry is the same as before; pass `x_t.shape` if you have an "
            f"input step." + (f" init_fn became carry_init={text['init_fn']} on the cell." if "init_fn" in text else "")
        )
        return self.add("static-initialize-carry", node, message, edits, note)

    def tuple_items(self, node: ast.AST | None) -> list[str] | None:
        if isinstance(node, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in node.elts):
            return [self.src.text(e) for e in node.elts]
        return None

    def shape_text(self, batch: ast.AST | None, batch_text: str, size_text: str) -> str:
        items = self.tuple_items(batch)
        if items is None:
            return f"(*{batch_text}, {size_text})"
        items.append(size_text)
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

    def static_edits(
        self, node: ast.Call, func: ast.Attribute, bound: dict[str, ast.AST], text: dict[str, str], shape: str
    ) -> list[_Edit]:
        src = self.src
        if any("\n" in text[k] for k in ("batch_dims", "size")) or "\n" in text.get("init_fn", ""):
            return []
        ctor = f"(features={text['size']}, parent=None" + (
            f", carry_init={text['init_fn']})" if "init_fn" in text else ")"
        )
        cls_end = src.span(func.value)[1]
        spans = {k: src.span(v) for k, v in bound.items()}
        start = min(spans["batch_dims"][0], spans["size"][0])
        end = max(spans["batch_dims"][1], spans["size"][1])
        for key, (a, b) in spans.items():
            if key not in {"batch_dims", "size", "init_fn"} and a < end and b > start:
                return []
        positional = not isinstance(bound["rng"], ast.keyword) and not isinstance(bound["batch_dims"], ast.keyword)
        edits = [(cls_end, cls_end, ctor), (start, end, shape if positional else f"input_shape={shape}")]
        if "init_fn" in bound:
            a, b = spans["init_fn"]
            if not (start <= a and b <= end):
                edits.append(_remove_arg(src, node, bound["init_fn"]))
        return edits

    @staticmethod
    def array_like(node: ast.AST) -> bool:
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            return any(isinstance(e, ast.Slice) for e in node.slice.elts)
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            return name in _ARRAY_MAKERS
        return False

    def features(self, node: ast.Call, cls: str) -> None:
        if node.args or any(k.arg in {"features", None} for k in node.keywords):
            return
        src = self.src
        call = _short(src.text(node), 50)
        parent = self.parents.get(node)
        edits, note, hint = [], "", ""
        if isinstance(parent, ast.Call) and parent.func is node and parent.args:
            carry = parent.args[0]
            expr = None
            if cls in _LSTM_LIKE and isinstance(carry, ast.Tuple) and len(carry.elts) == 2 and _simple(carry.elts[0]):
                expr = f"{src.text(carry.elts[0])}.shape[-1]"
            elif _simple(carry):
                expr = f"{src.text(carry)}[0].shape[-1]" if cls in _LSTM_LIKE else f"{src.text(carry)}.shape[-1]"
            if expr and "\n" not in expr:
                edits = [_insert_kwarg(src, node, f"features={expr}", first=True)]
                hint = f" Here it can be read off the carry, as the old cell did: `features={expr}`."
                note = (
                    f"Added features={expr}: flax <= 0.6 read the hidden size off the carry, so this keeps the "
                    f"model the same; a features field on your module is the cleaner fix."
                )
        message = (
            f"`{call}` has no `features`: flax <= 0.6 read the hidden size off the carry, flax >= 0.7 requires it "
            f"(TypeError: missing 1 required positional argument: 'features'). Pass the hidden size: "
            f"`nn.{cls}(features=<hidden size>)`." + hint
        )
        self.add("cell-without-features", node, message, edits, note)

    def rnn(self, node: ast.Call) -> None:
        src = self.src
        if len(node.args) >= 2 and not any(isinstance(a, ast.Starred) for a in node.args[:2]):
            second = node.args[1]
            dotted = _dotted(second)
            sizey = _int_literal(second) is not None or (
                dotted is not None and bool(_SIZE_NAME.search((dotted[1] or [dotted[0]])[-1]))
            )
            if sizey:
                value = _short(src.text(second), 30)
                edits: list[_Edit] = []
                note = (f"Removed `{value}`: it was the flax 0.6 cell_size, which today would be read as time_major. "
                        f"The hidden size is the cell's features.")
                ctor = None
                if len(node.args) == 2:
                    edits = [(src.span(node.args[0])[1], src.span(second)[1], "")]
                    ctor, inline = self.cell_constructor(node.args[0], node)
                    if ctor is not None and not _has_features(ctor):
                        movable = _int_literal(second) is not None or (
                            inline and dotted is not None and "\n" not in src.text(second)
                        ) or (dotted is not None and dotted[0] == "self")
                        if movable:
                            edits.append(_insert_kwarg(src, ctor, f"features={src.text(second)}", first=True))
                            note = (f"Moved `{value}` into the cell as features={value}: it was the flax 0.6 "
                                    f"cell_size, which today would be read as time_major.")
                        else:
                            edits, ctor = [], None
                    else:
                        if ctor is None:
                            note += f" Make sure `{_short(src.text(node.args[0]), 30)}` is built with features={value}."
                        ctor = None
                issue = self.add(
                    "rnn-positional-size",
                    second,
                    f"`{_short(src.text(node))}`: the second positional field of nn.RNN was cell_size in flax 0.6 "
                    f"but is time_major since 0.7, so this silently sets time_major={value} (true) and scans over "
                    f"axis 0, the batch axis of batch-major input. The size belongs to the cell (features={value}); "
                    f"move it there, and pass time_major=True by keyword only if your input is time-major.",
                    edits,
                    note,
                )
                issue.cell = ctor
        for kw in node.keywords:
            if kw.arg == "cell_size":
                value = _short(src.text(kw.value), 30)
                self.add(
                    "rnn-cell-size",
                    kw,
                    f"`cell_size={value}` was removed from nn.RNN in flax 0.7 (TypeError: unexpected keyword argument "
                    f"'cell_size'); the hidden size is the cell's features. Remove it and build the cell with "
                    f"features={value}.",
                    [_remove_arg(src, node, kw)],
                    f"Removed `cell_size={value}`: nn.RNN reads the size from the cell (make sure it has "
                    f"features={value}).",
                )

    def cell_constructor(self, arg: ast.AST, at: ast.AST) -> tuple[ast.Call | None, bool]:
        """The Linen cell constructor call ``arg`` is (inline: True), or the one assignment of the name ``arg``
        to such a call earlier in the same function (or module) scope (inline: False); (None, False) if unknown.
        """
        if isinstance(arg, ast.Call):
            return (arg, True) if _linen(arg.func, self.table) in _FEATURE_CELLS else (None, False)
        if not isinstance(arg, ast.Name):
            return None, False
        scope = self.scope_of(at)
        found = []
        for sub in ast.walk(scope):
            stores = isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr))
            if stores and self.scope_of(sub) is scope:
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
                if any(arg.id in _names(t) for t in targets):
                    found.append(sub)
        if len(found) != 1 or not isinstance(found[0], ast.Assign) or len(found[0].targets) != 1:
            return None, False
        assign = found[0]
        value = assign.value
        if (not isinstance(assign.targets[0], ast.Name) or not isinstance(value, ast.Call)
                or _linen(value.func, self.table) not in _FEATURE_CELLS or assign.lineno >= at.lineno):  # type: ignore[attr-defined]
            return None, False
        return value, False

    def scope_of(self, node: ast.AST) -> ast.AST:
        scope = self.parents.get(node)
        while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                                            ast.ClassDef, ast.Module)):
            scope = self.parents.get(scope)
        return scope if scope is not None else node

    def old_name(self, node: ast.AST) -> None:
        src = self.src
        start, end = src.span(node)
        if isinstance(node, ast.alias):
            end = start + len("ConvLSTM")
        else:
            start = end - len("ConvLSTM")
        edits = [(start, end, "ConvLSTMCell")] if src.code[start:end] == "ConvLSTM" else []
        self.add(
            "convlstm-old-name",
            node,
            "`ConvLSTM` is the cell's name before flax 0.6.4; it is `ConvLSTMCell` now (AttributeError: module "
            "'flax.linen' has no attribute 'ConvLSTM'). It also needs features and kernel_size, and its "
            "initialize_carry takes the input shape.",
            edits,
            "Renamed ConvLSTM to ConvLSTMCell.",
        )

    def learnable_carry(self, node: ast.Call) -> None:
        if len(node.args) < 3 or not isinstance(node.args[2], (ast.Tuple, ast.List)):
            return
        src = self.src
        shape = node.args[2]
        idents = set()
        for sub in ast.walk(shape):
            if isinstance(sub, ast.Name):
                idents.add(sub.id.lower())
            elif isinstance(sub, ast.Attribute):
                idents.add(sub.attr.lower())
        batchy = any("batch" in ident for ident in idents)
        first = node.args[0]
        pname = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""
        parent = self.parents.get(node)
        target = ""
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            target = parent.targets[0].id
        carry_like = bool(_CARRY_NAME.search(pname) or (target and _CARRY_NAME.search(target)))
        carry_like = carry_like or bool(target and self.used_as_carry(node, target))
        if not (batchy or (carry_like and len(shape.elts) >= 2 and not self.conv_context(node))):
            return
        feats = src.text(shape.elts[-1]) if shape.elts else "features"
        var = target or "h0"
        self.add(
            "learnable-carry-batch",
            node,
            f"The learnable initial carry `{pname or var}` is created with shape {_short(src.text(shape), 40)}, which "
            f"has a batch dimension: a parameter must not depend on the batch (init and apply with another batch "
            f"size fail, and every batch row learns its own start state). Create it as ({feats},) and broadcast it: "
            f"`jnp.broadcast_to({var}, batch_dims + ({feats},))`, passed as the initial carry (for an LSTM one "
            f"parameter per leaf, c and h).",
        )

    def used_as_carry(self, node: ast.AST, name: str) -> bool:
        """Whether ``name`` goes into ``initial_carry=`` or is the carry of a cell call in the same function."""
        scope = node
        while scope in self.parents and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope = self.parents[scope]
        for sub in ast.walk(scope):
            if not isinstance(sub, ast.Call):
                continue
            if any(k.arg == "initial_carry" and name in _names(k.value) for k in sub.keywords):
                return True
            func = sub.func
            cellish = isinstance(func, ast.Call) and self.is_cell(func)
            cellish = cellish or (isinstance(func, ast.Name) and "cell" in func.id.lower())
            if cellish and sub.args and name in _names(sub.args[0]):
                return True
        return False

    def conv_context(self, node: ast.AST) -> bool:
        scope = node
        while scope in self.parents and not isinstance(scope, ast.ClassDef):
            scope = self.parents[scope]
        for sub in ast.walk(scope):
            name = sub.id if isinstance(sub, ast.Name) else sub.attr if isinstance(sub, ast.Attribute) else ""
            if "Conv" in name:
                return True
        return False

    def moveaxis(self, it: ast.AST) -> None:
        if not isinstance(it, ast.Call) or len(it.args) < 3:
            return
        func = it.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        source, dest = _int_literal(it.args[1]), _int_literal(it.args[2])
        if name != "moveaxis" or source != 0 or dest in (None, 0):
            return
        src = self.src
        arr = _short(src.text(it.args[0]), 30)
        self.add(
            "moveaxis-loop",
            it,
            f"Looping over `{_short(src.text(it), 50)}` moves axis 0 to position {dest} and then steps over the new "
            f"first axis, which is axis 1 of `{arr}`: the feature axis for (time, features) input, and for (batch, "
            f"time, features) input every step comes out transposed as (features, batch). To step over time, loop "
            f"over `{arr}` itself when it is time-major or over `jnp.moveaxis({arr}, 1, 0)` when it is batch-major; "
            f"or let nn.RNN scan (it finds the time axis).",
        )

    # -- cells built inside loops

    def loop_of(self, node: ast.AST) -> ast.AST | None:
        child, parent = node, self.parents.get(node)
        while parent is not None:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return None
            if isinstance(parent, (ast.For, ast.AsyncFor, ast.While)) and any(child is s for s in parent.body):
                return parent
            if isinstance(parent, (ast.ListComp, ast.SetComp, ast.GeneratorExp)) and child is parent.elt:
                return parent
            if isinstance(parent, ast.DictComp) and (child is parent.key or child is parent.value):
                return parent
            child, parent = parent, self.parents.get(parent)
        return None

    def cell_in_loop(self, app: ast.Call) -> None:
        """Flag ``Cell(...)(carry, x)`` (or ``cell = Cell(...)`` then ``cell(carry, x)``) inside a time loop."""
        loop = self.loop_of(app)
        if loop is None or not app.args:
            return
        ctor = app.func if isinstance(app.func, ast.Call) and self.is_cell(app.func) else None
        body: list[ast.AST] = list(loop.body) if isinstance(loop, (ast.For, ast.AsyncFor, ast.While)) else [loop]
        if ctor is None and isinstance(app.func, ast.Name):
            for stmt in body:
                for sub in ast.walk(stmt):
                    if (
                        isinstance(sub, ast.Assign)
                        and any(isinstance(t, ast.Name) and t.id == app.func.id for t in sub.targets)
                        and isinstance(sub.value, ast.Call)
                        and self.is_cell(sub.value)
                        and self.loop_of(sub) is loop
                    ):
                        ctor = sub.value
        if ctor is None:
            return
        if isinstance(loop, (ast.For, ast.AsyncFor)):
            targets = _names(loop.target)
        elif isinstance(loop, ast.While):
            targets = set()
        else:
            targets = set().union(*(_names(g.target) for g in loop.generators))  # type: ignore[attr-defined]
        stored = {
            n.id for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        stored -= targets if isinstance(loop, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) else set()
        carry = app.args[0]
        if isinstance(carry, ast.Name):
            carry_names = {carry.id}
        elif isinstance(carry, ast.Tuple) and all(isinstance(e, ast.Name) for e in carry.elts):
            carry_names = _names(carry)
        else:
            carry_names = set()
        threaded = bool(carry_names) and not (carry_names & targets) and bool(carry_names & stored)
        stepwise = len(app.args) > 1 and bool(_names(app.args[1]) & targets) and not (_names(carry) & targets)
        if not (threaded or stepwise):
            return
        if any(i.rule == "cell-in-loop" and i.node is ctor for i in self.issues):
            return
        cls = _linen(ctor.func, self.table)
        self.add(
            "cell-in-loop",
            ctor,
            f"`{_short(self.src.text(ctor), 40)}` is constructed inside the loop over time steps (line "
            f"{self.doc_line(loop)}): in a compact module every construction is a new submodule ({cls}_0, {cls}_1, "
            f"...) with its own weights, so each time step gets different parameters and the parameter count grows "
            f"with the sequence length. Construct the cell once before the loop (`cell = nn.{cls}(features=...)`) "
            f"and call `cell(carry, x)` in it, or let `nn.RNN(cell)` run the loop.",
        )

    def is_cell(self, call: ast.Call) -> bool:
        return _linen(call.func, self.table) in _CELLS

    def doc_line(self, node: ast.AST) -> int:
        lineno = node.lineno  # type: ignore[attr-defined]
        return self.block.lines[lineno - 1] if lineno <= len(self.block.lines) else self.block.first_line


# ------------------------------------------------------------------------------------------------- check


def _analyse(source: str) -> tuple[list[CodeBlock], str, list[Problem], list[_Issue]]:
    blocks, mode, whole_err = _extract(source)
    problems: list[Problem] = []
    if mode == "code" and whole_err is not None:
        line = getattr(whole_err, "lineno", None)
        if isinstance(whole_err, (RecursionError, MemoryError)):
            message = "The code is nested too deeply for Python's parser; simplify it or paste a smaller part."
        else:
            message = _syntax_message(whole_err)
            failed = [b for b in blocks if not b.ok and b.error]
            if failed and (line is None or failed[0].first_line < line):  # the parser may report a later symptom
                line, message = failed[0].first_line, failed[0].error.split(": ", 1)[-1]
            message = (f"Line {line}: " if line else "") + message + ". The code is not valid Python"
            message += ", so only the parts that parse were checked." if any(b.ok for b in blocks) else "."
        problems.append(Problem(line, message))
    else:
        for block in blocks:
            if not block.ok:
                one = block.first_line == block.last_line
                span = f"Line {block.first_line} looks" if one else f"Lines {block.first_line}-{block.last_line} look"
                problems.append(
                    Problem(block.first_line, f"{span} like code but cannot be parsed ({block.error}); not checked.")
                )
    parsed = [b for b in blocks if b.ok]
    if not blocks:
        problems.append(Problem(None, "No Python code found in the text."))
    trees = [_parse(b.code) for b in parsed]
    issues = _Analyser(parsed, trees).run()
    issues.sort(key=lambda i: (*i.position(), _RULE_ORDER[i.rule]))
    return blocks, mode, problems, issues


def _guarded(func: Callable[[str], _R], source: str, fallback: Callable[[Problem], _R]) -> _R:
    """Run ``func(source)``; on any exception return ``fallback(problem)`` instead of raising."""
    try:
        return func(source)
    except (RecursionError, MemoryError):
        return fallback(Problem(None, "The code is nested too deeply to analyse; simplify it or paste a smaller part."))
    except Exception as exc:  # never raise on user input; say what happened instead
        return fallback(Problem(None, f"Internal error while checking ({type(exc).__name__}: {exc}); please report."))


def check(source: str) -> CheckResult:
    """Find old flax recurrent-API code and RNN pitfalls in ``source`` (code, or a document with code in it)."""

    def run(text: str) -> CheckResult:
        problem = _validate(text)
        if problem is not None:
            return CheckResult(problems=(problem,))
        blocks, mode, problems, issues = _analyse(text)
        return CheckResult(tuple(i.finding() for i in issues), tuple(problems), tuple(blocks), mode)

    return _guarded(run, source, lambda p: CheckResult(problems=(p,)))


# ------------------------------------------------------------------------------------------------ rewrite


def _to_doc(block: CodeBlock, src: _Src, offset: int, doc_starts: list[int]) -> int | None:
    """A character offset in a block's code -> the same place in the document (None: not verbatim text)."""
    k = bisect.bisect_right(src.starts, offset) - 1
    col = offset - src.starts[k]
    code_col, doc_col = block.columns[k] if k < len(block.columns) else (-1, -1)
    doc_line = block.lines[k] if k < len(block.lines) else 0
    if not doc_line or code_col < 0 or col < code_col:
        return None
    return doc_starts[doc_line - 1] + doc_col + col - code_col


def _apply(text: str, edits: list[_Edit]) -> str:
    out, pos = [], 0
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1])):
        out.append(text[pos:start])
        out.append(new)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _conflict(a1: int, b1: int, a2: int, b2: int) -> bool:
    if a1 == b1 and a2 == b2:
        return a1 == a2
    if a1 == b1:
        return a2 < a1 < b2
    if a2 == b2:
        return a1 < a2 < b1
    return a1 < b2 and a2 < b1


class _Taken:
    """Spans of the text already edited, kept sorted, so that checking a new edit costs O(log n), not O(n)."""

    def __init__(self) -> None:
        self.spans: list[tuple[int, int]] = []

    def add(self, edits: list[_Edit]) -> None:
        for start, end, _ in edits:
            bisect.insort(self.spans, (start, end))

    def overlaps(self, edits: list[_Edit]) -> bool:
        spans = self.spans
        for start, end, _ in edits:
            k = bisect.bisect_left(spans, (start, -1))
            j = k - 1  # earlier spans: accepted spans do not overlap, so their ends grow with their starts
            while j >= 0 and spans[j][1] >= start:
                if _conflict(start, end, *spans[j]):
                    return True
                j -= 1
            j = k
            while j < len(spans) and spans[j][0] <= end:
                if _conflict(start, end, *spans[j]):
                    return True
                j += 1
        return False


def _diff_lines(text: str) -> list[str]:
    starts = _line_starts(text)
    pieces = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)])]
    return [piece.rstrip("\r\n") + "\n" for piece in pieces if piece]


def _diff(before: str, after: str) -> str:
    if before == after:
        return ""
    return "".join(difflib.unified_diff(_diff_lines(before), _diff_lines(after), "before.py", "after.py"))


def rewrite(source: str) -> RewriteResult:
    """Apply the mechanical fixes to ``source`` (code or a document) and return the new text with a diff."""

    def run(text: str) -> RewriteResult:
        problem = _validate(text)
        if problem is not None:
            return RewriteResult(text if isinstance(text, str) else "", problems=(problem,))
        _, _, problems, issues = _analyse(text)
        doc_starts = _line_starts(text)
        taken = _Taken()
        doc_edits: list[_Edit] = []
        done: list[tuple[_Issue, list[_Edit]]] = []
        by_block: dict[int, list[_Issue]] = {}
        for issue in issues:
            if issue.edits:
                by_block.setdefault(id(issue.block), []).append(issue)
        for group in by_block.values():
            block, src = group[0].block, group[0].src
            candidates: list[tuple[_Issue, list[_Edit]]] = []
            claimed = _Taken()
            for issue in group:
                mapped = [
                    (_to_doc(block, src, a, doc_starts), _to_doc(block, src, b, doc_starts), t)
                    for a, b, t in issue.edits
                ]
                if any(a is None or b is None for a, b, _ in mapped):
                    continue
                mapped_edits = [(a, b, t) for a, b, t in mapped]  # type: ignore[misc]
                if taken.overlaps(mapped_edits) or claimed.overlaps(mapped_edits):
                    continue
                claimed.add(mapped_edits)
                candidates.append((issue, mapped_edits))
            if _parses(_apply(block.code, [e for i, _ in candidates for e in i.edits])):
                for issue, mapped_edits in candidates:  # the usual case: all of them together parse
                    taken.add(mapped_edits)
                    doc_edits.extend(mapped_edits)
                    done.append((issue, mapped_edits))
                continue
            accepted: list[_Issue] = []
            for issue, mapped_edits in candidates:  # else one by one, leaving out those that break the code
                trial = [e for i in [*accepted, issue] for e in i.edits]
                if not _parses(_apply(block.code, trial)):
                    problems.append(
                        Problem(
                            issue.position()[0],
                            f"Line {issue.position()[0]}: the {issue.rule} "
                            "rewrite would not parse, so it was left out.",
                        )
                    )
                    continue
                accepted.append(issue)
                taken.add(mapped_edits)
                doc_edits.extend(mapped_edits)
                done.append((issue, mapped_edits))
        new = _apply(text, doc_edits)
        changes = []
        for issue, edits in sorted(done, key=lambda d: (*d[0].position(), _RULE_ORDER[d[0].rule])):
            first = bisect.bisect_right(doc_starts, min(a for a, _, _ in edits)) - 1
            last = bisect.bisect_right(doc_starts, max(b for _, b, _ in edits)) - 1
            lo = doc_starts[first]
            hi = doc_starts[last + 1] if last + 1 < len(doc_starts) else len(text)
            region = text[lo:hi]
            after = _apply(region, [(a - lo, b - lo, t) for a, b, t in edits])
            changes.append(
                Change(
                    issue.position()[0],
                    issue.rule,
                    textwrap.dedent(region).strip("\r\n"),
                    textwrap.dedent(after).strip("\r\n"),
                    issue.note,
                )
            )
        fixed = {id(i) for i, _ in done}
        remaining = tuple(
            i.finding() for i in issues if id(i) not in fixed and not (i.covered_by and id(i.covered_by) in fixed)
        )
        return RewriteResult(new, _diff(text, new), tuple(changes), remaining, tuple(problems))

    return _guarded(run, source, lambda p: RewriteResult(source if isinstance(source, str) else "", problems=(p,)))


EXAMPLE = '''\
import flax.linen as nn
from jax import random
from jax.nn import initializers


class RNN(nn.Module):
    n_units: int

    @nn.compact
    def __call__(self, carry, inputs):
        outputs = []
        for x in inputs:  # one step at a time
            carry, y = nn.GRUCell()(carry, x)
            outputs.append(y)
        return carry, outputs

    def init_state(self):
        return nn.GRUCell.initialize_carry((), (), self.n_units, init_fn=initializers.zeros)


rnn = nn.RNN(nn.LSTMCell(), 64)
'''
"""Flax 0.6-era code with several of the pitfalls the checker knows (shown on the page as a starting point)."""
