"""The rules: one walk over the parsed blocks that finds old-API sites and pitfalls, with their fixes. Each family of
rules is a mixin of its own module (:mod:`.cellrules`, :mod:`.carryrules`, :mod:`.renames`, :mod:`.pitfalls`);
:class:`SiteFinder` visits the nodes and hands each to its rule."""

from __future__ import annotations

import ast

from rnnlab.flaxapi.migrate.carryrules import CarryCallRules
from rnnlab.flaxapi.migrate.extract import extract_blocks
from rnnlab.flaxapi.migrate.parsing import Edit, parse_code
from rnnlab.flaxapi.migrate.pitfalls import PitfallRules
from rnnlab.flaxapi.migrate.renames import RenameRules
from rnnlab.flaxapi.migrate.report import (
    RULE_ORDER,
    VERIFIED_REWRITES,
    CodeBlock,
    Problem,
    parse_error_of,
    said,
    syntax_message,
)
from rnnlab.flaxapi.migrate.syntax import (
    OLD_TREE_ALIASES,
    Issue,
    Source,
    import_table,
    linen_member,
)
from rnnlab.i18n import Msg


class SiteFinder(CarryCallRules, RenameRules, PitfallRules):
    """Walks the parsed blocks once and collects issues."""

    def __init__(self, blocks: list[CodeBlock], trees: list[ast.Module]) -> None:
        self.blocks = blocks
        self.trees = trees
        self.table = import_table(trees)
        self.issues: list[Issue] = []
        self.find_local_classes(trees)

    def run(self) -> list[Issue]:
        for block, tree in zip(self.blocks, self.trees):
            self.block, self.src = block, Source(block.code)
            self.parents: dict[ast.AST, ast.AST] = {}
            for node in ast.walk(tree):
                for child in ast.iter_child_nodes(node):
                    self.parents[child] = node
            for node in ast.walk(tree):
                self.visit(node)
        self.settle_features()
        return self.issues

    def add(
        self,
        rule: str,
        node: ast.AST,
        message: Msg,
        edits: list[Edit] | None = None,
        note: Msg | str = "",
        covered_by: Issue | None = None,
        kind: str | None = None,
    ) -> Issue:
        """Record an issue; its edits are kept only if its kind of rewrite is in :data:`VERIFIED_REWRITES`."""
        edits = list(edits or [])
        if edits and (kind or rule) not in VERIFIED_REWRITES:
            message = said(message, Msg("This change is not made for you: the checker only rewrites what it has "
                                       "verified on real code, so make it by hand."))
            edits = []
        issue = Issue(rule, self.block, self.src, node, message, edits, note, covered_by)
        self.issues.append(issue)
        return issue

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Call):
            self.visit_call(node)
        elif isinstance(node, ast.ClassDef):
            self.custom_cell(node)
        elif isinstance(node, ast.Attribute) and node.attr in OLD_TREE_ALIASES:
            self.old_tree_alias(node)
        elif isinstance(node, ast.Attribute) and node.attr == "ConvLSTM":
            if linen_member(node, self.table) == "ConvLSTM":
                self.old_convlstm_name(node)
        elif isinstance(node, ast.Name) and node.id == "ConvLSTM" and isinstance(node.ctx, ast.Load):
            if self.table.get("ConvLSTM", "").removeprefix("flax.linen.").removeprefix("recurrent.") == "ConvLSTM":
                self.old_convlstm_name(node)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            if node.module in {"flax.linen", "flax.linen.recurrent"}:
                for alias in node.names:
                    if alias.name == "ConvLSTM":
                        self.old_convlstm_name(alias)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.moveaxis_loop(node.iter)
        elif isinstance(node, ast.comprehension):
            self.moveaxis_loop(node.iter)

    # -- calls

    def visit_call(self, node: ast.Call) -> None:
        func = node.func
        member = linen_member(func, self.table)
        if isinstance(func, ast.Attribute) and func.attr == "initialize_carry":
            self.initialize_carry_call(node, func)
        elif member == "RNN":
            self.rnn_call(node)
        elif isinstance(func, ast.Attribute) and func.attr == "param" and isinstance(func.value, ast.Name):
            if func.value.id == "self":
                self.learnable_carry(node)
        cls = self.ctor_cell(node)
        if cls is not None:
            self.cell_features(node, cls)
        self.cell_in_loop(node)


def analyse(source: str) -> tuple[list[CodeBlock], str, list[Problem], list[Issue]]:
    blocks, mode, whole_err = extract_blocks(source)
    problems: list[Problem] = []
    if mode == "code" and whole_err is not None:
        line = getattr(whole_err, "lineno", None)
        message: Msg
        if isinstance(whole_err, (RecursionError, MemoryError)):
            message = said(Msg("The code is nested too deeply for Python's parser; simplify it or paste a smaller "
                               "part."))
        else:
            error = syntax_message(whole_err)
            failed = [b for b in blocks if not b.ok and b.error]
            if failed and (line is None or failed[0].first_line < line):  # the parser may report a later symptom
                line, error = failed[0].first_line, parse_error_of(failed[0].error or "")
            partly = any(b.ok for b in blocks)
            if line and partly:
                # TRANSLATORS: {error} is Python's own message for the syntax error (kept in English), with the code.
                message = said(Msg("Line {line}: {error}. The code is not valid Python, so only the parts that parse "
                                   "were checked.", line=line, error=error))
            elif line:
                message = said(Msg("Line {line}: {error}. The code is not valid Python.", line=line, error=error))
            elif partly:
                message = said(Msg("{error}. The code is not valid Python, so only the parts that parse were "
                                   "checked.", error=error))
            else:
                message = said(Msg("{error}. The code is not valid Python.", error=error))
        problems.append(Problem(line, message))
    else:
        for block in blocks:
            if not block.ok:
                one = block.first_line == block.last_line
                # TRANSLATORS: {error} says where and why the code does not parse (Python's words, in English).
                message = (said(Msg("Line {line} looks like code but cannot be parsed ({error}); not checked.",
                                    line=block.first_line, error=block.error)) if one else
                           said(Msg("Lines {first}-{last} look like code but cannot be parsed ({error}); not "
                                    "checked.", first=block.first_line, last=block.last_line, error=block.error)))
                problems.append(Problem(block.first_line, message))
    parsed = [b for b in blocks if b.ok]
    if not blocks:
        problems.append(Problem(None, said(Msg("No Python code found in the text."))))
    trees = [parse_code(b.code) for b in parsed]
    issues = SiteFinder(parsed, trees).run()
    issues.sort(key=lambda i: (*i.position(), RULE_ORDER[i.rule]))
    return blocks, mode, problems, issues
