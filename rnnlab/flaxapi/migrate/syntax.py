"""Reading the AST of pasted code: source offsets, what names refer to, and text edits at node positions."""

from __future__ import annotations

import ast
import keyword
import re
from dataclasses import dataclass, field

from rnnlab.flaxapi.migrate.parsing import Edit, line_starts
from rnnlab.flaxapi.migrate.report import CodeBlock, Finding
from rnnlab.i18n import Msg
from rnnlab.text import shorten

CELLS = frozenset({"LSTMCell", "OptimizedLSTMCell", "GRUCell", "MGUCell", "SimpleCell", "ConvLSTMCell", "ConvLSTM"})
FEATURE_CELLS = frozenset({"LSTMCell", "OptimizedLSTMCell", "GRUCell", "MGUCell", "SimpleCell"})
LSTM_LIKE = frozenset({"LSTMCell", "OptimizedLSTMCell"})
CONV_CELLS = frozenset({"ConvLSTMCell", "ConvLSTM"})
DEFAULT_ROOTS = {"nn": "flax.linen", "linen": "flax.linen", "flax": "flax"}
ARRAY_MAKERS = frozenset(
    {"ones", "zeros", "empty", "ones_like", "zeros_like", "empty_like", "full", "array", "asarray"}
)
CARRY_NAME = re.compile(r"carry|hidden|state|initial|^h_?0$|^c_?0$|^h$|^c$|^(h|c)_?init$|^init_?(h|c)$", re.I)
KEYWORDS = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)
NEWLINE = re.compile(r"\r\n|\r|\n")
PARSE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError)


OLD_TREE_ALIASES = {  # jax.<old name> -> its name in jax.tree_util
    "tree_map": "tree_map", "tree_multimap": "tree_map", "tree_leaves": "tree_leaves", "tree_flatten": "tree_flatten",
    "tree_unflatten": "tree_unflatten", "tree_structure": "tree_structure", "tree_transpose": "tree_transpose",
}


class Source:
    """Offsets in a block's code: (lineno, byte column) from ast -> character offset."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.starts = line_starts(code)
        self.lines = NEWLINE.split(code)

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
class Issue:
    rule: str
    block: CodeBlock
    src: Source
    node: ast.AST
    message: Msg
    edits: list[Edit] = field(default_factory=list)
    note: Msg | str = ""
    covered_by: Issue | None = None
    cell: ast.Call | None = None  # the cell constructor this issue can give features to
    features: str | None = None  # the features expression it would give that cell
    features_edit: Edit | None = None  # the edit that gives it (kept only for one issue per cell)

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
        return Finding(line, self.rule, self.message, shorten(code, 160), self.fixable)


def import_table(trees: list[ast.Module]) -> dict[str, str]:
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


def dotted_name(node: ast.AST) -> tuple[str, list[str]] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return node.id, parts[::-1]


def linen_member(node: ast.AST, table: dict[str, str]) -> str | None:
    """The flax.linen member an expression names (``nn.LSTMCell`` -> 'LSTMCell'), else None."""
    dotted = dotted_name(node)
    if dotted is None:
        return None
    root, parts = dotted
    full = ".".join([table.get(root) or DEFAULT_ROOTS.get(root) or root, *parts])
    if not full.startswith("flax.linen."):
        return None
    rest = full[len("flax.linen.") :].removeprefix("recurrent.")
    return rest if "." not in rest else None


def int_literal(node: ast.AST | None) -> int | None:
    sign = 1
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        sign, node = -sign, node.operand
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return sign * node.value
    return None


def is_simple(node: ast.AST) -> bool:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and int_literal(node.slice) is None:
            return False
        node = node.value
    return isinstance(node, ast.Name)


def names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def has_features(call: ast.Call) -> bool:
    return bool(call.args) or any(k.arg in {"features", None} for k in call.keywords)


def args_in_order(call: ast.Call) -> list[ast.AST]:
    return sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]


def remove_arg(src: Source, call: ast.Call, node: ast.AST) -> Edit:
    """An edit that deletes one argument of a call with its comma."""
    args = args_in_order(call)
    idx = next(k for k, a in enumerate(args) if a is node)
    start, end = src.span(node)
    if idx > 0:
        return src.span(args[idx - 1])[1], end, ""
    if idx + 1 < len(args):
        return start, src.span(args[idx + 1])[0], ""
    return start, end, ""


def insert_kwarg(src: Source, call: ast.Call, text: str, first: bool = False) -> Edit:
    """An edit that adds ``text`` (``name=value``) to a call: first among the keywords, or last."""
    args = args_in_order(call)
    if not args:
        end = src.span(call)[1] - 1
        return end, end, text
    if first and call.keywords:
        pos = src.span(call.keywords[0])[0]
        return pos, pos, text + ", "
    pos = src.span(args[-1])[1]
    return pos, pos, ", " + text
