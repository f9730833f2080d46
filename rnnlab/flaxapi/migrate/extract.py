"""Finding the Python in a document: a plain .py, markdown fences, or prose with lines of code between it
(also code squashed onto one line by a web page, and over-indented first lines)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from rnnlab.flaxapi.migrate.parsing import NEWLINE, PARSE_ERRORS, parse_code
from rnnlab.flaxapi.migrate.report import MAX_ATTEMPTS, CodeBlock, block_error, said, syntax_message
from rnnlab.flaxapi.migrate.syntax import KEYWORDS
from rnnlab.flaxapi.migrate.unsquash import KEYWORD_START, maybe_unsquash
from rnnlab.i18n import Msg


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
    return bool(match) and code_part.split(":")[0].strip() not in KEYWORDS


def _weak_prose(code_part: str) -> bool:
    """Two words side by side (``Answer 1``, ``Use this``): prose, or statements squashed onto one line."""
    prev = None
    for match in _TOKEN.finditer(code_part):
        tok = match.group()
        atom = (tok[0].isalpha() or tok[0] == "_" or tok[0].isdigit()) and tok not in KEYWORDS
        if atom and prev:
            return True
        prev = atom
    return False


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


class Budget:
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
    message: Msg | str = ""


def _try_units(units: list[_Unit], budget: Budget) -> _Attempt:
    while len(units) > 1 and units[-1].kind == "blank":
        units = units[:-1]
    lines, owner = _assemble(units)
    code = "\n".join(cl.text for cl in lines)
    if not budget.spend(len(code) + 1):
        return _Attempt(False, lines, owner, err_unit=0,
                        message=said(Msg("too much text that does not parse; not analysed")))
    try:
        return _Attempt(True, lines, owner, tree=parse_code(code))
    except SyntaxError as err:
        last = next((cl for cl in reversed(lines) if cl.text.strip()), None)
        if last is not None and _scan(last.text, None)[0].rstrip().endswith(":") and "indented block" in err.msg:
            pad = _CL(" " * (_indent(last.text) + 4) + "...", 0)
            try:
                tree = parse_code(code + "\n" + pad.text)
                return _Attempt(True, [*lines, pad], [*owner, owner[-1]], tree=tree)
            except PARSE_ERRORS:
                pass
        lineno = err.lineno or 0
        unit = owner[min(max(lineno, 1), len(owner)) - 1] if owner else 0
        return _Attempt(False, lines, owner, err_unit=unit, message=syntax_message(err))
    except PARSE_ERRORS as err:
        return _Attempt(False, lines, owner, err_unit=0, message=syntax_message(err))


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


def _block(lines: list[_CL], error: Msg | str | None = None) -> CodeBlock:
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
        if any(ch in part for ch in "=()[]{}:") or KEYWORD_START.match(part):
            return True
    return False


def _split_run(units: list[_Unit], budget: Budget) -> list[CodeBlock]:
    """Cut a run of code-like lines into the longest pieces that parse; report code-like pieces that do not."""
    blocks: list[CodeBlock] = []
    failed: list[int] = []
    failed_msg: Msg | str = ""

    def flush() -> None:
        nonlocal failed, failed_msg
        if failed and _looks_like_code([units[k] for k in failed]):
            lines, _ = _assemble([units[k] for k in failed])
            first = next(cl.doc_line for cl in lines if cl.doc_line)
            error = block_error(first, failed_msg) if failed_msg else said(Msg("does not parse"))
            blocks.append(_block(lines, error))
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


def _longest(units: list[_Unit], i: int, n: int, budget: Budget) -> tuple[int, _Attempt] | None:
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
                pieces = maybe_unsquash(text, part, comment_at, hidden=False)
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
                pieces = maybe_unsquash(text, part, comment_at, hidden=True)
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


def extract_blocks(document: str) -> tuple[list[CodeBlock], str, BaseException | None]:
    """The blocks, the mode (python, markdown, document, code), and the error of parsing the whole text."""
    doc_lines = NEWLINE.split(document)
    whole_err: BaseException | None = None
    try:
        parse_code(document)
        n = len(doc_lines)
        return [CodeBlock(document, 1, tuple(range(1, n + 1)), None, tuple((0, 0) for _ in range(n)))], "python", None
    except PARSE_ERRORS as err:
        whole_err = err
    if isinstance(whole_err, (RecursionError, MemoryError)):
        numbered = [_CL(text, k + 1) for k, text in enumerate(doc_lines)]
        return [_block(numbered, syntax_message(whole_err))], "code", whole_err
    budget = Budget(8_000_000)
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
        return extract_blocks(document)[0]
    except (RecursionError, MemoryError):
        return []
