"""The codemod: the rules' fixes applied as text edits at AST positions, checked to parse, with a diff."""

from __future__ import annotations

import bisect
import difflib
import textwrap

from rnnlab.flaxapi.migrate.parsing import Edit, line_starts, parses
from rnnlab.flaxapi.migrate.report import (
    RULE_ORDER,
    Change,
    CodeBlock,
    Problem,
    RewriteResult,
    guarded,
    said,
    validate_text,
)
from rnnlab.flaxapi.migrate.rules import analyse
from rnnlab.flaxapi.migrate.syntax import Issue, Source
from rnnlab.i18n import Msg


def _to_doc(block: CodeBlock, src: Source, offset: int, doc_starts: list[int]) -> int | None:
    """A character offset in a block's code -> the same place in the document (None: not verbatim text)."""
    k = bisect.bisect_right(src.starts, offset) - 1
    col = offset - src.starts[k]
    code_col, doc_col = block.columns[k] if k < len(block.columns) else (-1, -1)
    doc_line = block.lines[k] if k < len(block.lines) else 0
    if not doc_line or code_col < 0 or col < code_col:
        return None
    return doc_starts[doc_line - 1] + doc_col + col - code_col


def _apply(text: str, edits: list[Edit]) -> str:
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

    def add(self, edits: list[Edit]) -> None:
        for start, end, _ in edits:
            bisect.insort(self.spans, (start, end))

    def overlaps(self, edits: list[Edit]) -> bool:
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
    starts = line_starts(text)
    pieces = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)])]
    return [piece.rstrip("\r\n") + "\n" for piece in pieces if piece]


def _diff(before: str, after: str) -> str:
    if before == after:
        return ""
    return "".join(difflib.unified_diff(_diff_lines(before), _diff_lines(after), "before.py", "after.py"))


def rewrite(source: str) -> RewriteResult:
    """Apply the mechanical fixes to ``source`` (code or a document) and return the new text with a diff."""

    def run(text: str) -> RewriteResult:
        problem = validate_text(text)
        if problem is not None:
            return RewriteResult(text if isinstance(text, str) else "", problems=(problem,))
        _, _, problems, issues = analyse(text)
        doc_starts = line_starts(text)
        taken = _Taken()
        doc_edits: list[Edit] = []
        done: list[tuple[Issue, list[Edit]]] = []
        by_block: dict[int, list[Issue]] = {}
        for issue in issues:
            if issue.edits:
                by_block.setdefault(id(issue.block), []).append(issue)
        for group in by_block.values():
            block, src = group[0].block, group[0].src
            candidates: list[tuple[Issue, list[Edit]]] = []
            claimed = _Taken()
            for issue in group:
                mapped = [
                    (_to_doc(block, src, a, doc_starts), _to_doc(block, src, b, doc_starts), t)
                    for a, b, t in issue.edits
                ]
                mapped_edits: list[Edit] = [(a, b, t) for a, b, t in mapped if a is not None and b is not None]
                if len(mapped_edits) < len(mapped):  # an edit that does not map into the document
                    continue
                if taken.overlaps(mapped_edits) or claimed.overlaps(mapped_edits):
                    continue
                claimed.add(mapped_edits)
                candidates.append((issue, mapped_edits))
            if parses(_apply(block.code, [e for i, _ in candidates for e in i.edits])):
                for issue, mapped_edits in candidates:  # the usual case: all of them together parse
                    taken.add(mapped_edits)
                    doc_edits.extend(mapped_edits)
                    done.append((issue, mapped_edits))
                continue
            accepted: list[Issue] = []
            for issue, mapped_edits in candidates:  # else one by one, leaving out those that break the code
                trial = [e for i in [*accepted, issue] for e in i.edits]
                if not parses(_apply(block.code, trial)):
                    problems.append(
                        Problem(
                            issue.position()[0],
                            # TRANSLATORS: {rule} is a rule id such as rnn-cell-size (keep it as it is).
                            said(Msg("Line {line}: the {rule} rewrite would not parse, so it was left out.",
                                     line=issue.position()[0], rule=issue.rule)),
                        )
                    )
                    continue
                accepted.append(issue)
                taken.add(mapped_edits)
                doc_edits.extend(mapped_edits)
                done.append((issue, mapped_edits))
        new = _apply(text, doc_edits)
        changes = []
        for issue, edits in sorted(done, key=lambda d: (*d[0].position(), RULE_ORDER[d[0].rule])):
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

    return guarded(run, source, lambda p: RewriteResult(source if isinstance(source, str) else "", problems=(p,)))
