"""Splitting code that a web page squashed onto one line back into its statements."""

from __future__ import annotations

import ast
import re
from functools import lru_cache

from rnnlab.flaxapi.migrate.parsing import PARSE_ERRORS, parse_code, parses
from rnnlab.flaxapi.migrate.syntax import KEYWORDS

_ASSIGN_START = re.compile(
    r"[A-Za-z_][\w.]*(\[[^\]]*\])?(\s*,\s*[A-Za-z_][\w.]*)*\s*(=|\+=|-=|\*=|/=|\|=|&=)(?!=)"
    r"|\(\s*[A-Za-z_]\w*(\s*,\s*[A-Za-z_]\w*)*\s*,?\s*\)(\s*,\s*[A-Za-z_]\w*)*\s*=(?!=)"
)
KEYWORD_START = re.compile(
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
        if parses(prefix + seg):
            return "clause"
        return "clause-header" if parses(prefix + seg + "\n    pass") else None
    if parses(seg):
        return "stmt"
    if first == "@":
        return "decorator" if parses(seg + "\ndef _f(): pass") else None
    return "header" if parses(seg + "\n    pass") else None


def _is_candidate(line: str, p: int, in_comment: bool) -> bool:
    rest = line[p:]
    if rest.startswith("@") or rest.startswith('"""') or rest.startswith("'''"):
        return True
    if rest.startswith("...") and (len(rest) == 3 or rest[3].isspace()):
        return True
    kw = KEYWORD_START.match(rest)
    if kw:
        return True
    assign = _ASSIGN_START.match(rest)
    if assign and assign.group().split(".")[0].split("[")[0].strip("( ") not in KEYWORDS:
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
    if not parses(code):
        return None
    return [(lvl, text, col) for lvl, (text, _, col) in zip(levels, pieces)]


def _holds_code(seg: str) -> bool:
    for text in (seg, seg + "\n    pass", seg + "\ndef _f(): pass"):
        try:
            tree = parse_code(text)
        except PARSE_ERRORS:
            continue
        return any(
            isinstance(n, (ast.Call, ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)) for n in ast.walk(tree)
        )
    return False


def maybe_unsquash(line: str, code_part: str, comment_at: int, hidden: bool) -> list[tuple[int, str, int]] | None:
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
