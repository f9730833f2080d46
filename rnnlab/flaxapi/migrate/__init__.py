"""Migration checker: old flax (<= 0.6) recurrent-API code and RNN pitfalls in pasted text, and a codemod.

The pasted text is parsed with :mod:`ast`; it is never executed, compiled to run, or imported.

- :func:`extract_code` pulls the Python out of a document: a plain .py, markdown fences, or prose with lines
  of code between it (also code squashed onto one line by a web page, and over-indented first lines).
- :func:`check` reports findings with their line in the pasted text, a rule id (see :data:`RULES`) and a
  message that explains the pitfall and the fix.
- :func:`rewrite` applies the mechanical fixes as precise text edits at AST node positions, keeping every
  other character as it was, checks that the result still parses, and returns it with a unified diff.

No function here raises for any ``str`` input; problems with the input come back as :class:`Problem` s.

- :mod:`.extract`: the Python in a document (with :mod:`.unsquash` for code squashed onto one line).
- :mod:`.parsing`: parsing with :mod:`ast` only, and line offsets; :mod:`.syntax`: reading the parsed code
  (source offsets, what names refer to, edits at node positions).
- :mod:`.rules`: the walk that finds old-API sites and pitfalls, with one module per family of rules:
  :mod:`.cellrules` (the cells, nn.RNN), :mod:`.carryrules` (``initialize_carry`` calls), :mod:`.renames` (names
  that moved) and :mod:`.pitfalls` (code that runs but computes the wrong thing).
- :mod:`.rewrite`: the codemod; :mod:`.report`: what the checker reports (limits, rule ids, findings).
"""

from __future__ import annotations

from rnnlab.flaxapi.migrate.extract import extract_code
from rnnlab.flaxapi.migrate.report import (
    MAX_CHARS,
    MAX_LINES,
    RULES,
    UPLOAD_TYPES,
    Change,
    CheckResult,
    CodeBlock,
    Finding,
    Problem,
    RewriteResult,
    decode_upload,
    guarded,
    validate_text,
)
from rnnlab.flaxapi.migrate.rewrite import rewrite
from rnnlab.flaxapi.migrate.rules import analyse

__all__ = [
    "EXAMPLE",
    "MAX_CHARS",
    "MAX_LINES",
    "RULES",
    "UPLOAD_TYPES",
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


def check(source: str) -> CheckResult:
    """Find old flax recurrent-API code and RNN pitfalls in ``source`` (code, or a document with code in it)."""

    def run(text: str) -> CheckResult:
        problem = validate_text(text)
        if problem is not None:
            return CheckResult(problems=(problem,))
        blocks, mode, problems, issues = analyse(text)
        return CheckResult(tuple(i.finding() for i in issues), tuple(problems), tuple(blocks), mode)

    return guarded(run, source, lambda p: CheckResult(problems=(p,)))


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
