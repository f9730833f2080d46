"""Rules about names that moved: ``jax.tree_map`` and its siblings (now in ``jax.tree_util``) and ``ConvLSTM`` (now
``ConvLSTMCell``). Mixed into :class:`rnnlab.flaxapi.migrate.rules.SiteFinder`."""

from __future__ import annotations

import ast

from rnnlab.flaxapi.migrate.cellrules import CellRules
from rnnlab.flaxapi.migrate.report import (
    said,
)
from rnnlab.flaxapi.migrate.syntax import (
    OLD_TREE_ALIASES,
    dotted_name,
)
from rnnlab.i18n import Msg


class RenameRules(CellRules):
    """Renamed-API rules; the host class provides what :class:`CellRules` lists."""

    def old_tree_alias(self, node: ast.Attribute) -> None:
        """``jax.tree_map`` and its siblings: removed from jax, still in ``jax.tree_util``."""
        dotted = dotted_name(node)
        if dotted is None or dotted[1] != [node.attr] or self.table.get(dotted[0], dotted[0]) != "jax":
            return
        import jax

        if hasattr(jax, node.attr):
            return
        new = OLD_TREE_ALIASES[node.attr]
        start, end = self.src.span(node)
        self.add(
            "jax-tree-alias",
            node,
            # TRANSLATORS: {name} is the old function's name (tree_map), {new} its name in jax.tree_util.
            said(Msg("`jax.{name}` is gone from the installed jax {version} (AttributeError: module 'jax' has no "
                     "attribute '{name}'); old Flax code used it everywhere. It lives on as `jax.tree_util.{new}`.",
                     name=node.attr, version=jax.__version__, new=new)),
            [(end - len(node.attr), end, f"tree_util.{new}")] if self.src.code[start:end].endswith(node.attr) else [],
            said(Msg("jax.{name} became jax.tree_util.{new}.", name=node.attr, new=new)),
        )

    def old_convlstm_name(self, node: ast.AST) -> None:
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
            said(Msg("`ConvLSTM` is the cell's name before flax 0.6.4; it is `ConvLSTMCell` now (AttributeError: "
                     "module 'flax.linen' has no attribute 'ConvLSTM'). It also needs features and kernel_size, and "
                     "its initialize_carry takes the input shape.")),
            edits,
            said(Msg("Renamed ConvLSTM to ConvLSTMCell.")),
        )
