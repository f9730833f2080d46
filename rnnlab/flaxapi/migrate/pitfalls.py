"""Pitfalls that run but compute the wrong thing: a learnable initial carry with a batch dimension, a loop over
``np.moveaxis(x, 0, -1)``, a cell constructed inside the loop over time steps. Mixed into
:class:`rnnlab.flaxapi.migrate.rules.SiteFinder`."""

from __future__ import annotations

import ast

from rnnlab.flaxapi.migrate.cellrules import CellRules
from rnnlab.flaxapi.migrate.report import (
    said,
)
from rnnlab.flaxapi.migrate.syntax import (
    CARRY_NAME,
    CELLS,
    int_literal,
    linen_member,
    names_in,
)
from rnnlab.i18n import Msg
from rnnlab.text import shorten


class PitfallRules(CellRules):
    """Pitfall rules; the host class provides what :class:`CellRules` lists."""

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
        carry_like = bool(CARRY_NAME.search(pname) or (target and CARRY_NAME.search(target)))
        carry_like = carry_like or bool(target and self.used_as_carry(node, target))
        if not (batchy or (carry_like and len(shape.elts) >= 2 and not self.conv_context(node))):
            return
        feats = src.text(shape.elts[-1]) if shape.elts else "features"
        var = target or "h0"
        self.add(
            "learnable-carry-batch",
            node,
            # TRANSLATORS: {name} is the parameter's name, {shape} its shape as written, {feats} the hidden size
            # and {var} the variable that holds it (all code).
            said(Msg("The learnable initial carry `{name}` is created with shape {shape}, which has a batch "
                     "dimension: a parameter must not depend on the batch (init and apply with another batch size "
                     "fail, and every batch row learns its own start state). Create it as ({feats},) and broadcast "
                     "it: `jnp.broadcast_to({var}, batch_dims + ({feats},))`, passed as the initial carry (for an "
                     "LSTM one parameter per leaf, c and h).",
                     name=pname or var, shape=shorten(src.text(shape), 40), feats=feats, var=var)),
        )

    def used_as_carry(self, node: ast.AST, name: str) -> bool:
        """Whether ``name`` goes into ``initial_carry=`` or is the carry of a cell call in the same function."""
        scope = node
        while scope in self.parents and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope = self.parents[scope]
        for sub in ast.walk(scope):
            if not isinstance(sub, ast.Call):
                continue
            if any(k.arg == "initial_carry" and name in names_in(k.value) for k in sub.keywords):
                return True
            func = sub.func
            cellish = isinstance(func, ast.Call) and self.is_cell(func)
            cellish = cellish or (isinstance(func, ast.Name) and "cell" in func.id.lower())
            if cellish and sub.args and name in names_in(sub.args[0]):
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

    def moveaxis_loop(self, it: ast.AST) -> None:
        if not isinstance(it, ast.Call) or len(it.args) < 3:
            return
        func = it.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        source, dest = int_literal(it.args[1]), int_literal(it.args[2])
        if name != "moveaxis" or source != 0 or dest in (None, 0):
            return
        src = self.src
        arr = shorten(src.text(it.args[0]), 30)
        self.add(
            "moveaxis-loop",
            it,
            # TRANSLATORS: {loop} is the loop's iterable as written, {array} the array it moves axes of (code).
            said(Msg("Looping over `{loop}` moves axis 0 to position {dest} and then steps over the new first axis, "
                     "which is axis 1 of `{array}`: the feature axis for (time, features) input, and for (batch, "
                     "time, features) input every step comes out transposed as (features, batch). To step over time, "
                     "loop over `{array}` itself when it is time-major or over `jnp.moveaxis({array}, 1, 0)` when it "
                     "is batch-major; or let nn.RNN scan (it finds the time axis).",
                     loop=shorten(src.text(it), 50), dest=dest, array=arr)),
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
            targets = names_in(loop.target)
        elif isinstance(loop, ast.While):
            targets = set()
        else:
            targets = set().union(*(names_in(g.target) for g in loop.generators))  # type: ignore[attr-defined]
        stored = {
            n.id for stmt in body for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        stored -= targets if isinstance(loop, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) else set()
        carry = app.args[0]
        if isinstance(carry, ast.Name):
            carry_names = {carry.id}
        elif isinstance(carry, ast.Tuple) and all(isinstance(e, ast.Name) for e in carry.elts):
            carry_names = names_in(carry)
        else:
            carry_names = set()
        threaded = bool(carry_names) and not (carry_names & targets) and bool(carry_names & stored)
        stepwise = len(app.args) > 1 and bool(names_in(app.args[1]) & targets) and not (names_in(carry) & targets)
        if not (threaded or stepwise):
            return
        if any(i.rule == "cell-in-loop" and i.node is ctor for i in self.issues):
            return
        cls = linen_member(ctor.func, self.table)
        self.add(
            "cell-in-loop",
            ctor,
            # TRANSLATORS: {ctor} is the cell's construction as written; {line} the loop's line; {cls} the cell class.
            said(Msg("`{ctor}` is constructed inside the loop over time steps (line {line}): in a compact module "
                     "every construction is a new submodule ({cls}_0, {cls}_1, ...) with its own weights, so each "
                     "time step gets different parameters and the parameter count grows with the sequence length. "
                     "Construct the cell once before the loop (`cell = nn.{cls}(features=...)`) and call "
                     "`cell(carry, x)` in it, or let `nn.RNN(cell)` run the loop.",
                     ctor=shorten(self.src.text(ctor), 40), line=self.doc_line(loop), cls=cls)),
        )

    def is_cell(self, call: ast.Call) -> bool:
        return linen_member(call.func, self.table) in CELLS
