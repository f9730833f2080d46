"""Rules about the cells: their features, nn.RNN's old cell_size, old-signature calls on cell instances, scanned
cells and custom ``RNNCellBase`` subclasses. Mixed into :class:`rnnlab.flaxapi.migrate.rules.SiteFinder`."""

from __future__ import annotations

import ast
import functools

from rnnlab.flaxapi.migrate.parsing import Edit
from rnnlab.flaxapi.migrate.report import CodeBlock, said
from rnnlab.flaxapi.migrate.syntax import (
    CELLS,
    CONV_CELLS,
    FEATURE_CELLS,
    LSTM_LIKE,
    Issue,
    Source,
    has_features,
    insert_kwarg,
    int_literal,
    is_simple,
    linen_member,
    names_in,
    remove_arg,
)
from rnnlab.i18n import Msg
from rnnlab.text import error_text, shorten

APPLY_METHODS = frozenset({"apply", "init", "init_with_output"})  # cell.<method>(variables or key, carry, x)
OLD_PARAMS = ("rng", "batch_dims", "size", "init_fn")
FEATURE_PRIORITY = {"rnn-positional-size": 0, "instance-initialize-carry": 1, "cell-without-features": 2}


@functools.lru_cache(maxsize=64)
def old_call_error(cls: str, n_positional: int, keywords: tuple[str, ...], on_instance: bool) -> Msg | str:
    """The error the installed Flax gives for ``nn.<cls>.initialize_carry`` called the flax 0.6 way, run live.

    The call is rebuilt from its shape only (how many positional arguments, which keywords) with stand-in
    values: a key, batch dims ``(2,)``, size 4 (ConvLSTM: ``(4, 4, 4)``) and a zeros initializer.
    """
    import flax.linen as nn
    import jax
    from jax.nn import initializers

    conv = cls in CONV_CELLS
    values = {"rng": jax.random.PRNGKey(0), "batch_dims": (2,), "size": (4, 4, 4) if conv else 4,
              "init_fn": initializers.zeros}
    args = [values[k] for k in OLD_PARAMS[:n_positional]]
    kwargs = {k: values[k] for k in keywords if k in values}
    target = getattr(nn, cls, None)
    if target is None:
        return f"AttributeError: module 'flax.linen' has no attribute '{cls}'"
    if on_instance:
        target = target(features=4, kernel_size=(3, 3)) if conv else target(features=4)
    try:
        target.initialize_carry(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - the error is what the finding quotes
        return error_text(e)
    return said(Msg("no error"))


def plain_reference(node: ast.AST) -> bool:
    """A name with attributes and subscripts by names or constants (``state[i]``, ``self.h[0]``): no calls."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and not all(
                isinstance(n, (ast.Name, ast.Constant, ast.UnaryOp, ast.USub, ast.Load)) for n in ast.walk(node.slice)):
            return False
        node = node.value
    return isinstance(node, ast.Name)


class CellRules:
    """Cell-related rules; the host class provides ``src``, ``table``, ``parents``, ``issues`` and ``add``."""

    src: Source
    table: dict[str, str]
    parents: dict[ast.AST, ast.AST]
    issues: list[Issue]
    trees: list[ast.Module]
    block: CodeBlock
    local_cells: dict[str, str]  # local subclass of a Linen cell -> the Linen cell
    custom_cells: set[str]  # local subclasses of nn.RNNCellBase

    def add(self, rule: str, node: ast.AST, message: Msg, edits: list[Edit] | None = None,
            note: Msg | str = "",
            covered_by: Issue | None = None, kind: str | None = None) -> Issue:
        raise NotImplementedError  # SiteFinder.add

    def doc_line(self, node: ast.AST) -> int:
        """The document line of ``node`` (a line of the block being walked)."""
        lineno = node.lineno  # type: ignore[attr-defined]
        return self.block.lines[lineno - 1] if lineno <= len(self.block.lines) else self.block.first_line

    # -- what names refer to

    def find_local_classes(self, trees: list[ast.Module]) -> None:
        self.local_cells, self.custom_cells = {}, set()
        for tree in trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    for base in node.bases:
                        member = linen_member(base, self.table)
                        if member in CELLS:
                            self.local_cells[node.name] = member
                        elif member == "RNNCellBase":
                            self.custom_cells.add(node.name)

    def cell_class(self, node: ast.AST) -> str | None:
        """The Linen cell a class expression names (``nn.LSTMCell``, or a local subclass of one), else None."""
        member = linen_member(node, self.table)
        if member in CELLS:
            return member
        if isinstance(node, ast.Name):
            return self.local_cells.get(node.id)
        return None

    def scanned_cell(self, node: ast.AST) -> str | None:
        """The cell of ``nn.scan(<cell class>, ...)`` (or ``nn.transforms.scan``), else None."""
        if not isinstance(node, ast.Call) or not node.args:
            return None
        if linen_member(node.func, self.table) not in {"scan", "transforms.scan"}:
            return None
        return self.cell_class(node.args[0])

    def ctor_cell(self, call: ast.Call) -> str | None:
        """The cell a constructor call builds: ``nn.GRUCell(...)``, ``nn.scan(nn.GRUCell, ...)(...)``, or ``GRU()``
        where ``GRU = nn.scan(nn.GRUCell, ...)`` in the same scope."""
        func = call.func
        cls = self.cell_class(func) or self.scanned_cell(func)
        if cls is None and isinstance(func, ast.Name):
            assign = self.single_assignment(func.id, call)
            if assign is not None:
                cls = self.scanned_cell(assign.value)
        return cls

    def scope_of(self, node: ast.AST) -> ast.AST:
        scope = self.parents.get(node)
        while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                                            ast.ClassDef, ast.Module)):
            scope = self.parents.get(scope)
        return scope if scope is not None else node

    def stores_in_scope(self, name: str, scope: ast.AST) -> list[ast.AST]:
        found = []
        for sub in ast.walk(scope):
            stores = isinstance(sub, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For))
            if stores and self.scope_of(sub) is scope:
                targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]  # type: ignore[attr-defined]
                if any(name in names_in(t) for t in targets):
                    found.append(sub)
        return found

    def single_assignment(self, name: str, at: ast.AST) -> ast.Assign | None:
        """``name = <value>``, the only store of ``name`` in the scope of ``at``, made before ``at``."""
        found = self.stores_in_scope(name, self.scope_of(at))
        if len(found) != 1 or not isinstance(found[0], ast.Assign) or len(found[0].targets) != 1:
            return None
        assign = found[0]
        if not isinstance(assign.targets[0], ast.Name) or assign.lineno >= at.lineno:  # type: ignore[attr-defined]
            return None
        return assign

    def cell_constructor(self, arg: ast.AST, at: ast.AST) -> tuple[ast.Call | None, bool]:
        """The cell constructor call ``arg`` is (inline: True), or the one assignment of the name ``arg`` to such
        a call earlier in the same scope (inline: False); (None, False) if unknown."""
        if isinstance(arg, ast.Call):
            return (arg, True) if self.ctor_cell(arg) is not None else (None, False)
        if isinstance(arg, ast.Name):
            assign = self.single_assignment(arg.id, at)
            if assign is not None and isinstance(assign.value, ast.Call) and self.ctor_cell(assign.value):
                return assign.value, False
        elif isinstance(arg, ast.Attribute) and arg.attr == "cell" and isinstance(arg.value, ast.Name):
            assign = self.single_assignment(arg.value.id, at)  # rnn.cell, with rnn = nn.RNN(<cell>, ...)
            value = assign.value if assign is not None else None
            if isinstance(value, ast.Call) and linen_member(value.func, self.table) == "RNN" and value.args:
                ctor, _ = self.cell_constructor(value.args[0], value)
                return ctor, False
        return None, False

    def defined_before(self, expr: ast.AST, at: ast.AST, use: ast.AST | None = None) -> bool:
        """Whether every name in ``expr`` already has its value where ``at`` is, and keeps it until ``use`` (where
        ``expr`` stands now), so that ``expr`` can move to ``at``."""
        if int_literal(expr) is not None:
            return True
        until = (use or at).lineno  # type: ignore[attr-defined]
        scope = self.scope_of(at)
        params: set[str] = set()
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            params = {a.arg for a in [*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs]}
        for name in names_in(expr):
            if name in params:
                continue
            lines = [s.lineno for s in self.stores_in_scope(name, scope)]  # type: ignore[attr-defined]
            if not any(line < at.lineno for line in lines):  # type: ignore[attr-defined]
                return False
            if any(at.lineno <= line <= until for line in lines):  # type: ignore[attr-defined]
                return False
        return True

    # -- features

    def offer_features(self, issue: Issue, ctor: ast.Call | None, expr: str | None) -> None:
        """Let ``issue`` give ``ctor`` its features (one issue per cell does; see :meth:`settle_features`)."""
        if ctor is None or expr is None or "\n" in expr or has_features(ctor):
            return
        issue.cell, issue.features = ctor, expr
        issue.features_edit = insert_kwarg(self.src, ctor, f"features={expr}", first=True)

    def settle_features(self) -> None:
        """Give each featureless cell its features from one issue, and mark its own finding as covered by it."""
        offers: dict[int, list[Issue]] = {}
        featureless: dict[int, list[Issue]] = {}  # each cell's own cell-without-features issues
        for issue in self.issues:
            if issue.features_edit is not None and issue.cell is not None:
                offers.setdefault(id(issue.cell), []).append(issue)
            if issue.rule == "cell-without-features":
                featureless.setdefault(id(issue.node), []).append(issue)
        for group in offers.values():
            chosen = min(group, key=lambda i: (FEATURE_PRIORITY.get(i.rule, 9), i.node.lineno))  # type: ignore[attr-defined]
            chosen.edits.append(chosen.features_edit)  # type: ignore[arg-type]
            value = shorten(chosen.features or "", 30)
            if chosen.rule == "rnn-positional-size":
                chosen.note = said(Msg("Moved `{value}` into the cell as features={value}: it was the flax 0.6 "
                                       "cell_size, which today is read as time_major.", value=value))
            elif chosen.rule != "cell-without-features":
                chosen.note = said(chosen.note, Msg("The cell gets features={value}.", value=value))
            for issue in featureless.get(id(chosen.cell), []):
                if issue.node is chosen.cell and issue is not chosen:
                    issue.covered_by, issue.edits = chosen, []

    def carry_features(self, carry: ast.AST, cls: str, moved: bool = False) -> str | None:
        """The hidden size read off a carry expression, as flax <= 0.6 did (LSTM: the first leaf's last axis).

        ``moved``: the expression will be evaluated at the cell's construction, not where the carry is used, so
        only plain names and constant subscripts qualify."""
        simple = is_simple if moved else plain_reference
        if cls in LSTM_LIKE and isinstance(carry, ast.Tuple) and len(carry.elts) == 2 and simple(carry.elts[0]):
            return f"{self.src.text(carry.elts[0])}.shape[-1]"
        if simple(carry):
            return f"{self.src.text(carry)}[0].shape[-1]" if cls in LSTM_LIKE else f"{self.src.text(carry)}.shape[-1]"
        return None

    def carry_of_use(self, node: ast.AST) -> ast.AST | None:
        """The carry a cell gets where ``node`` (the cell, or its name) is used: ``node(carry, x)`` or
        ``node.apply(variables, carry, x)`` (also init and init_with_output)."""
        parent = self.parents.get(node)
        if isinstance(parent, ast.Call) and parent.func is node and parent.args:
            return parent.args[0]
        if isinstance(parent, ast.Attribute) and parent.attr in APPLY_METHODS:
            call = self.parents.get(parent)
            if isinstance(call, ast.Call) and call.func is parent and len(call.args) >= 2:
                return call.args[1]
        return None

    def cell_features(self, node: ast.Call, cls: str) -> None:
        if has_features(node) or cls not in FEATURE_CELLS:
            return
        src = self.src
        call = shorten(src.text(node), 50)
        expr = None
        carry = self.carry_of_use(node)
        if carry is not None:
            expr = self.carry_features(carry, cls)
        else:
            parent = self.parents.get(node)
            if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
                name = parent.targets[0].id
                for sub in ast.walk(self.scope_of(node)):
                    if isinstance(sub, ast.Name) and sub.id == name and isinstance(sub.ctx, ast.Load):
                        used = self.carry_of_use(sub)
                        if used is not None and self.defined_before(used, node, sub):
                            expr = self.carry_features(used, cls, moved=True)
                            break
        # TRANSLATORS: {call} is the cell's construction as written, {cls} the cell class.
        message = said(Msg(
            "`{call}` has no `features`: flax <= 0.6 read the hidden size off the carry, flax >= 0.7 requires it "
            "(TypeError: missing 1 required positional argument: 'features'). Pass the hidden size: "
            "`nn.{cls}(features=<hidden size>)`.", call=call, cls=cls))
        if expr:
            # TRANSLATORS: {expr} is code that reads the hidden size off the carry, e.g. carry.shape[-1].
            message = said(message, Msg("Here it can be read off the carry, as the old cell did: `features={expr}`.",
                                       expr=expr))
        issue = self.add("cell-without-features", node, message, [],
                         said(Msg("Added features={expr}: flax <= 0.6 read the hidden size off the carry, so this "
                                  "keeps the model the same; a features field on your module is the cleaner fix.",
                                  expr=expr)))
        self.offer_features(issue, node, expr)

    # -- nn.RNN

    def rnn_call(self, node: ast.Call) -> None:
        src = self.src
        if len(node.args) >= 2 and not any(isinstance(a, ast.Starred) for a in node.args[:2]):
            second = node.args[1]
            if not (isinstance(second, ast.Constant) and isinstance(second.value, bool)):
                self.rnn_positional(node, second)
        for kw in node.keywords:
            if kw.arg == "cell_size":
                value = shorten(src.text(kw.value), 30)
                issue = self.add(
                    "rnn-cell-size",
                    kw,
                    said(Msg("`cell_size={value}` was removed from nn.RNN in flax 0.7 (today: TypeError: unexpected "
                             "keyword argument 'cell_size'); the hidden size is the cell's features. Remove it and "
                             "build the cell with features={value}.", value=value)),
                    [remove_arg(src, node, kw)],
                    said(Msg("Removed `cell_size={value}`: nn.RNN reads the size from the cell.", value=value)),
                )
                if node.args:
                    ctor, inline = self.cell_constructor(node.args[0], node)
                    if ctor is not None and (inline or self.defined_before(kw.value, ctor)):
                        cls = self.ctor_cell(ctor)
                        if cls in FEATURE_CELLS:
                            self.offer_features(issue, ctor, src.text(kw.value))

    def rnn_positional(self, node: ast.Call, second: ast.AST) -> None:
        src = self.src
        value = shorten(src.text(second), 30)
        from rnnlab.flaxapi.legacy import TIME_MAJOR_VERSION

        edits: list[Edit] = [(src.span(node.args[0])[1], src.span(second)[1], "")]
        note = said(Msg("Removed `{value}`: it was the flax 0.6 cell_size, which today is read as time_major. The "
                        "hidden size is the cell's features.", value=value))
        ctor, inline = self.cell_constructor(node.args[0], node)
        cls = self.ctor_cell(ctor) if ctor is not None else None
        first = node.args[0]
        if isinstance(first, ast.Call) and getattr(first.func, "id", None) in self.custom_cells:
            # TRANSLATORS: {cell} is the custom cell class's name. "custom-cell" is a rule id: keep it.
            note = said(note, Msg("`{cell}` is a custom cell: flax 0.6 passed this size to its initialize_carry; see "
                                 "the custom-cell finding.", cell=shorten(src.text(first.func), 30)))
        elif ctor is None or cls is None:
            built = shorten(src.text(node.args[0]), 30)
            # TRANSLATORS: {cell} is the cell expression passed to nn.RNN, {value} the size (code).
            note = said(note, Msg("Make sure `{cell}` is built with features={value}.", cell=built, value=value))
        issue = self.add(
            "rnn-positional-size",
            second,
            # TRANSLATORS: {call} is the nn.RNN call as written, {version} a flax version, {value} the size (code).
            said(Msg("`{call}`: the second positional field of nn.RNN was cell_size in flax 0.6 and is time_major "
                     "since flax {version} (0.7.0-0.7.4 refused it with an error), so today this silently sets "
                     "time_major={value}: any truthy value scans axis 0, the batch axis of batch-major input, as "
                     "time. The size belongs to the cell (features={value}); move it there, and pass time_major=True "
                     "by keyword only if your input is time-major.",
                     call=shorten(src.text(node)), version=TIME_MAJOR_VERSION, value=value)),
            edits,
            note,
        )
        if ctor is not None and cls in FEATURE_CELLS and "\n" not in src.text(second):
            if (inline and len(node.args) == 2) or self.defined_before(second, ctor):
                self.offer_features(issue, ctor, src.text(second))

    # -- initialize_carry on a cell instance, with the old arguments

    def instance_call(self, node: ast.Call, func: ast.Attribute) -> None:
        """``cell.initialize_carry(rng, batch_dims, size)`` on a cell instance: the 0.6 arguments, 0.7's method."""
        keywords = tuple(k.arg for k in node.keywords if k.arg)
        old_shape = len(node.args) >= 3 or any(k in {"batch_dims", "size"} for k in keywords)
        if not old_shape or any(isinstance(a, ast.Starred) for a in node.args):
            return
        ctor, _ = self.cell_constructor(func.value, node)
        cls = self.ctor_cell(ctor) if ctor is not None else None
        if cls is None:
            return
        src = self.src
        error = old_call_error(cls, min(len(node.args), 4), keywords, True)
        bound = dict(zip(OLD_PARAMS, node.args))
        bound.update({k.arg: k.value for k in node.keywords if k.arg in OLD_PARAMS})
        # TRANSLATORS: {call} is the call as written; {error} the error the installed Flax gives (kept in English).
        message = said(Msg(
            "`{call}` passes flax 0.6's (rng, batch_dims, size) to a cell instance; since flax 0.7 initialize_carry "
            "takes (rng, input_shape), the shape of one input step, and the carry's size is the cell's features "
            "(here: {error}).", call=shorten(src.text(node)), error=error))
        edits: list[Edit] = []
        note: Msg | str = ""
        if cls not in CONV_CELLS and set(bound) <= {"rng", "batch_dims", "size"} and len(node.args) == 3:
            batch, size = node.args[1], node.args[2]
            if "\n" not in src.text(batch) + src.text(size):
                shape = self.shape_text(batch, src.text(batch), src.text(size))  # type: ignore[attr-defined]
                edits = [(src.span(batch)[0], src.span(size)[1], shape)]
                note = said(Msg("Passed the shape {shape}: its last entry stands for the input features and only the "
                                "batch dims before it are used, so the carry keeps shape batch_dims + (features,).",
                                shape=shape))
        issue = self.add("instance-initialize-carry", node, message, edits, note)
        size_arg = bound.get("size")
        if edits and size_arg is not None and ctor is not None and self.defined_before(size_arg, ctor):
            self.offer_features(issue, ctor, src.text(size_arg))

    # -- custom cells

    def custom_cell(self, node: ast.ClassDef) -> None:
        if node.name not in self.custom_cells:
            return
        defined = set()
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defined.add(stmt.name)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                defined |= set().union(*(names_in(t) for t in targets))
        static = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "initialize_carry"
                       and any(getattr(d, "id", "") == "staticmethod" for d in s.decorator_list)), None)
        axes = "num_feature_axes" not in defined
        method = static is not None or "initialize_carry" not in defined
        if axes and method:
            # TRANSLATORS: {cls} is the name of the pasted code's cell class.
            message = Msg(
                "`{cls}` subclasses nn.RNNCellBase, whose interface changed in flax 0.7: it needs a "
                "`num_feature_axes` property (nn.RNN reads it to find the time axis; RNNCellBase raises "
                "NotImplementedError) and an instance method `initialize_carry(self, rng, input_shape)` (nn.RNN calls "
                "it on the cell when no initial_carry is given). Add them by hand; for a cell whose carry is (c, h) "
                "of an LSTM, `num_feature_axes` is 1.", cls=node.name)
        elif axes:
            message = Msg(
                "`{cls}` subclasses nn.RNNCellBase, whose interface changed in flax 0.7: it needs a "
                "`num_feature_axes` property (nn.RNN reads it to find the time axis; RNNCellBase raises "
                "NotImplementedError). Add them by hand; for a cell whose carry is (c, h) of an LSTM, "
                "`num_feature_axes` is 1.", cls=node.name)
        elif method:
            message = Msg(
                "`{cls}` subclasses nn.RNNCellBase, whose interface changed in flax 0.7: it needs an instance method "
                "`initialize_carry(self, rng, input_shape)` (nn.RNN calls it on the cell when no initial_carry is "
                "given). Add them by hand; for a cell whose carry is (c, h) of an LSTM, `num_feature_axes` is 1.",
                cls=node.name)
        else:
            return
        self.add("custom-cell", node, said(message))
