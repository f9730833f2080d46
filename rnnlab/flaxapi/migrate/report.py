"""What the migration checker reports: limits, rule ids, found code blocks, findings and rewrites,
and the checks on the pasted text before anything is parsed.

Every sentence of the report is a kept message (:class:`~rnnlab.i18n.Msg`, made by :func:`said`), rendered in the
reader's language when shown (``str()``). So a report, built once and cached for every reader whatever their
language, reads in the language of whoever looks at it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from rnnlab.flaxapi.migrate.parsing import count_lines
from rnnlab.i18n import N_, Msg, MsgN, sentences
from rnnlab.text import shorten

R = TypeVar("R")

MAX_CHARS = 200_000
MAX_LINES = 5_000
UPLOAD_TYPES = ("py", "txt", "md")
MAX_ATTEMPTS = 10_000  # parses tried while looking for code in a text that does not parse as a whole



def said(text: Msg | str | None, *more: Msg | str) -> Msg:
    """``text`` (a message, or text kept as it is: code, Python's own error) followed by ``more`` sentences, kept as
    one message (:func:`~rnnlab.i18n.sentences`): built once and cached for every reader, it reads in the language
    of whoever looks at it (``str()``)."""
    return sentences(text, *more)


def block_error(line: int, error: Msg | str) -> Msg:
    """Why a block that looks like code does not parse: the line, and Python's words (or the checker's)."""
    return said(Msg("line {line}: {error}", line=line, error=error))


def parse_error_of(error: Msg | str) -> Msg | str:
    """The reason in a :func:`block_error`, without its line."""
    if isinstance(error, Msg):
        reason = error.value("error")
        return reason if reason is not None else error
    return error.split(": ", 1)[-1]


# Rule id -> short title, in the order findings on one line are listed (each renders in the reader's language).
_RULE_TITLES: dict[str, str] = {
    "static-initialize-carry": N_("initialize_carry called on the cell class with batch dims and size (flax <= 0.6)"),
    "instance-initialize-carry": N_("initialize_carry called on a cell with flax 0.6's (rng, batch_dims, size)"),
    "init-fn": N_("init_fn= passed to initialize_carry (now carry_init= on the cell)"),
    "cell-without-features": N_("Linen cell built without features"),
    "rnn-positional-size": N_("nn.RNN(cell, <size>): the second positional field is time_major since flax 0.7.5"),
    "custom-cell": N_("custom nn.RNNCellBase subclass without the flax >= 0.7 interface"),
    "rnn-cell-size": N_("cell_size= passed to nn.RNN"),
    "convlstm-old-name": N_("ConvLSTM under its old name"),
    "jax-tree-alias": N_("jax.tree_map and its siblings, removed from jax (now in jax.tree_util)"),
    "carry-shape-array": N_("initialize_carry given an array instead of a shape"),
    "cell-in-loop": N_("cell constructed inside the loop over time steps"),
    "learnable-carry-batch": N_("learnable initial carry created with a batch dimension"),
    "moveaxis-loop": N_("loop over np.moveaxis(x, 0, -1) steps over the wrong axis"),
}
RULES: dict[str, Msg] = {rule: Msg(title) for rule, title in _RULE_TITLES.items()}
RULE_ORDER = {rule: i for i, rule in enumerate(RULES)}
VERIFIED_REWRITES = frozenset({
    "static-initialize-carry",
    "static-initialize-carry+conv",
    "instance-initialize-carry",
    "cell-without-features",
    "rnn-positional-size",
    "rnn-cell-size",
    "jax-tree-alias",
})
"""Kinds of rewrite applied for the user: each was run on real old code (the test corpus) and gave flax 0.6.11's
shapes. Every other finding is left to a person, with the change it needs in its message."""

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
    error: Msg | str | None = None
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
    message: Msg
    code: str
    fixable: bool = False


@dataclass(frozen=True)
class Problem:
    """Why (part of) the input was not checked: empty, too large, or not valid Python."""

    line: int | None
    message: Msg


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
    note: Msg | str


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


def validate_text(source: object) -> Problem | None:
    if not isinstance(source, str):
        return Problem(None, said(Msg("Expected text, got {type}.", type=type(source).__name__)))
    if not source.strip():
        return Problem(None, said(Msg("Paste some Python code (or a document with code in it, like a forum answer) "
                                      "to check.")))
    lines = count_lines(source)
    if len(source) > MAX_CHARS or lines > MAX_LINES:
        return Problem(
            None,
            said(MsgN(
                "The text is {chars:,} characters and {n:,} line long; the checker reads at most {max_chars:,} "
                "characters and {max_lines:,} lines. Paste only the part with the recurrent code.",
                "The text is {chars:,} characters and {n:,} lines long; the checker reads at most {max_chars:,} "
                "characters and {max_lines:,} lines. Paste only the part with the recurrent code.",
                lines, chars=len(source), max_chars=MAX_CHARS, max_lines=MAX_LINES,
            )),
        )
    if "\x00" in source:
        line = count_lines(source[: source.index("\x00") + 1])
        return Problem(line, said(Msg("Line {line} contains a null byte; remove it (the text is probably not source "
                                      "code).", line=line)))
    try:
        source.encode("utf-8")
    except UnicodeEncodeError as exc:
        line = count_lines(source[: exc.start + 1])
        return Problem(line, said(Msg("Line {line} contains characters that are not valid Unicode (lone "
                                      "surrogates).", line=line)))
    return None


def syntax_message(err: BaseException) -> Msg | str:
    """Python's own words for a parse error (kept in English, as Python says it), with the line it quotes."""
    if isinstance(err, SyntaxError):
        text = (err.text or "").strip()
        return f"{err.msg}" + (f" (`{shorten(text, 60)}`)" if text else "")
    if isinstance(err, (RecursionError, MemoryError)):
        return said(Msg("the code is nested too deeply to analyse"))
    return str(err) or type(err).__name__


def decode_upload(name: str, data: bytes) -> tuple[str | None, Msg | None]:
    """An uploaded file's text, or why it is refused: (text, None) or (None, message). Never raises.

    Refused: a name not ending in .py/.txt/.md, an empty file, more than 4 bytes per allowed character, null
    bytes (a binary file), text that is not UTF-8, and text over :data:`MAX_CHARS` or :data:`MAX_LINES`.
    The message is a kept message (:func:`said`): keep it (in session state) and it reads in the language of each rerun.
    """
    shown = shorten(str(name), 60)
    if not str(name).lower().endswith(tuple(f".{t}" for t in UPLOAD_TYPES)):
        types = ", ".join("." + t for t in UPLOAD_TYPES)
        # TRANSLATORS: {name} is the uploaded file's name; {types} is ".py, .txt, .md".
        return None, said(Msg("{name}: only {types} files can be checked; nothing was loaded.", name=shown,
                              types=types))
    if not data:
        return None, said(Msg("{name} is empty; nothing was loaded.", name=shown))
    if len(data) > 4 * MAX_CHARS:
        return None, said(Msg("{name} is {size:,} bytes; the checker reads at most {max_chars:,} characters. "
                              "Nothing was loaded.", name=shown, size=len(data), max_chars=MAX_CHARS))
    if b"\x00" in data:
        return None, said(Msg("{name} contains null bytes: it is a binary file, not source code. Nothing was loaded.",
                              name=shown))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        # TRANSLATORS: {reason} is Python's own reason, in English (e.g. "invalid start byte").
        return None, said(Msg("{name} is not UTF-8 text ({reason} at byte {byte:,}); nothing was loaded.",
                              name=shown, reason=e.reason, byte=e.start))
    problem = validate_text(text)
    if problem is not None:
        # TRANSLATORS: {problem} is one of the checker's sentences about the text (too long, a null byte, ...).
        return None, said(Msg("{name}: {problem} Nothing was loaded.", name=shown, problem=problem.message))
    return text, None


def guarded(func: Callable[[str], R], source: str, fallback: Callable[[Problem], R]) -> R:
    """Run ``func(source)``; on any exception return ``fallback(problem)`` instead of raising."""
    try:
        return func(source)
    except (RecursionError, MemoryError):
        return fallback(Problem(None, said(Msg("The code is nested too deeply to analyse; simplify it or paste a "
                                               "smaller part."))))
    except Exception as exc:  # noqa: BLE001 - never raise on user input; say what happened instead
        # TRANSLATORS: {error} is the exception's type and text, as Python gives them (kept in English).
        return fallback(Problem(None, said(Msg("Internal error while checking ({error}); please report.",
                                               error=f"{type(exc).__name__}: {exc}"))))
