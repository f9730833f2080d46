"""The rules: one walk over the parsed blocks that finds old-API sites and pitfalls, with their fixes."""

from __future__ import annotations

import ast

from rnnlab.flaxapi.migrate.cellrules import CellRules, old_call_error
from rnnlab.flaxapi.migrate.extract import extract_blocks
from rnnlab.flaxapi.migrate.parsing import Edit, parse_code
from rnnlab.flaxapi.migrate.report import (
    RULE_ORDER,
    VERIFIED_REWRITES,
    CodeBlock,
    Message,
    Problem,
    parse_error_of,
    said,
    syntax_message,
)
from rnnlab.flaxapi.migrate.syntax import (
    ARRAY_MAKERS,
    CARRY_NAME,
    CELLS,
    CONV_CELLS,
    OLD_TREE_ALIASES,
    Issue,
    Source,
    dotted_name,
    import_table,
    insert_kwarg,
    int_literal,
    linen_member,
    names_in,
    remove_arg,
)
from rnnlab.i18n import Msg, MsgN
from rnnlab.text import shorten


class SiteFinder(CellRules):
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
        message: Message,
        edits: list[Edit] | None = None,
        note: Message | str = "",
        covered_by: Issue | None = None,
        kind: str | None = None,
    ) -> Issue:
        """Record an issue; its edits are kept only if its kind of rewrite is in :data:`VERIFIED_REWRITES`."""
        edits = list(edits or [])
        if edits and (kind or rule) not in VERIFIED_REWRITES:
            message = message.plus(Msg("This change is not made for you: the checker only rewrites what it has "
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

    def initialize_carry_call(self, node: ast.Call, func: ast.Attribute) -> None:
        src = self.src
        init_fn = next((k for k in node.keywords if k.arg == "init_fn"), None)
        cls = self.cell_class(func.value) if not isinstance(func.value, ast.Call) else None
        static = None
        if cls in CELLS:
            static = self.static_call(node, func, cls, init_fn)
        else:
            self.instance_call(node, func)
            shape = (
                node.args[1]
                if len(node.args) >= 2
                else next((k.value for k in node.keywords if k.arg == "input_shape"), None)
            )
            if shape is not None and self.array_like(shape):
                text = shorten(src.text(shape), 40)
                end = src.span(shape)[1]
                self.add(
                    "carry-shape-array",
                    shape,
                    # TRANSLATORS: {call} is the call as written, {array} the array expression passed to it.
                    said(Msg("`{call}` passes the array `{array}` where flax >= 0.7 expects its shape (input_shape): "
                             "it fails with TypeError: unsupported operand type(s) for +. Pass `{array}.shape`: the "
                             "shape of one input time step, batch dims then input features.",
                             call=shorten(src.text(node)), array=text)),
                    [(end, end, ".shape")],
                    said(Msg("Passed `{array}.shape` (a shape) instead of the array `{array}`.", array=text)),
                )
        if init_fn is None:
            return
        init = shorten(src.text(init_fn.value), 50)
        # TRANSLATORS: {init} is the initializer as written in the pasted code.
        message = said(Msg(
            "`init_fn={init}`: initialize_carry no longer takes init_fn (TypeError: unexpected keyword argument "
            "'init_fn' since flax 0.7). The initializer is the cell's `carry_init` field: "
            "`nn.GRUCell(features=..., carry_init={init})`; it is called as init(key, shape, param_dtype).",
            init=init))
        takes = self.positional_params(init_fn.value)
        if takes is not None and takes < 3:
            message = message.plus(MsgN(
                "This one takes {n} argument(s): as carry_init it fails with TypeError (flax 0.6 called "
                "init_fn(key, shape), flax >= 0.7 passes the dtype too); give it a third parameter, e.g. "
                "`lambda key, shape, dtype=None: ...`.",
                "This one takes {n} argument(s): as carry_init it fails with TypeError (flax 0.6 called "
                "init_fn(key, shape), flax >= 0.7 passes the dtype too); give it a third parameter, e.g. "
                "`lambda key, shape, dtype=None: ...`.",
                takes))
        if static is not None:
            self.add("init-fn", init_fn, message, covered_by=static)
            return
        receiver = func.value
        edits = []
        if isinstance(receiver, ast.Call) and linen_member(receiver.func, self.table) in CELLS:
            if not any(k.arg in {"carry_init", None} for k in receiver.keywords):
                edits = [
                    insert_kwarg(src, receiver, f"carry_init={src.text(init_fn.value)}"),
                    remove_arg(src, node, init_fn),
                ]
        self.add("init-fn", init_fn, message, edits,
                 said(Msg("Moved `init_fn={init}` to `carry_init={init}` on the cell.", init=init)))

    def positional_params(self, value: ast.AST) -> int | None:
        """How many positional arguments a lambda or a function defined in the pasted code takes (None: any)."""
        args = None
        if isinstance(value, ast.Lambda):
            args = value.args
        elif isinstance(value, ast.Name):
            for tree in self.trees:
                for sub in ast.walk(tree):
                    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name == value.id:
                        args = sub.args
        if args is None or args.vararg is not None:
            return None
        return len(args.posonlyargs) + len(args.args)

    def static_call(self, node: ast.Call, func: ast.Attribute, cls: str, init_fn: ast.keyword | None) -> Issue:
        src = self.src
        name = shorten(src.text(func.value), 40)
        params = ("rng", "batch_dims", "size", "init_fn")
        bound: dict[str, ast.AST] = {}
        ok = len(node.args) <= 4 and not any(isinstance(a, ast.Starred) for a in node.args)
        for key, arg in zip(params, node.args):
            bound[key] = arg
        for kw in node.keywords:
            if kw.arg in params and kw.arg not in bound:
                bound[kw.arg] = kw
            else:
                ok = False
        value = {k: (v.value if isinstance(v, ast.keyword) else v) for k, v in bound.items()}
        error = old_call_error(cls, min(len(node.args), 4), tuple(k.arg for k in node.keywords if k.arg), False)
        text = {k: src.text(v) for k, v in value.items()}
        if cls in CONV_CELLS:
            message = self.conv_static_message(node, value, text, error)
            edits, note = self.conv_static_edits(node, func, value)
            return self.add("static-initialize-carry", node, message, edits, note, kind="static-initialize-carry+conv")
        size_text = text.get("size", "size")
        shape = self.shape_text(value.get("batch_dims"), text.get("batch_dims", "batch_dims"), size_text)
        extra = f", carry_init={text['init_fn']}" if "init_fn" in text else ""
        # TRANSLATORS: {call} is the call as written; {error} is the error the installed Flax gives (kept in
        # English); {fixed} is the corrected call (code).
        message = said(Msg(
            "`{call}` is the flax <= 0.6 static method (rng, batch_dims, size). Since flax 0.7 initialize_carry is an "
            "instance method that takes the shape of one input time step, and calling it on the class fails (today: "
            "{error}). Build the cell with its size: `{fixed}`. Only the batch dims of that shape are used (its last "
            "entry stands for the input features), so the carry keeps shape batch_dims + (features,); with an input "
            "step at hand, pass `x_t.shape`.",
            call=shorten(src.text(node)), error=error,
            fixed=f"{name}(features={shorten(size_text, 30)}, parent=None{shorten(extra, 40)}).initialize_carry("
                  f"{shorten(text.get('rng', 'rng'), 30)}, {shorten(shape, 40)})"))
        edits = []
        if ok and {"rng", "batch_dims", "size"} <= bound.keys():
            edits = self.static_edits(node, func, bound, text, shape)
        # TRANSLATORS: {size} and {shape} are code (the hidden size and the shape passed to initialize_carry).
        note = said(Msg(
            "Built the cell with features={size} and parent=None and called initialize_carry on it with {shape}, the "
            "guide's pattern: the last entry of that shape stands for the input features and only the batch dims "
            "before it are used, so the carry is the same as before; pass `x_t.shape` if you have an input step.",
            size=size_text, shape=shape))
        if "init_fn" in text:
            note = note.plus(Msg("init_fn became carry_init={init} on the cell.", init=text["init_fn"]))
        kind = "static-initialize-carry+init_fn" if "init_fn" in text else None
        return self.add("static-initialize-carry", node, message, edits, note, kind=kind)

    def conv_static_message(self, node: ast.Call, value: dict[str, ast.AST], text: dict[str, str],
                            error: str) -> Message:
        """What a ConvLSTM's flax <= 0.6 static ``initialize_carry`` call means today, in the reader's language."""
        src = self.src
        size = value.get("size")
        batch = text.get("batch_dims", "batch_dims")
        if isinstance(size, ast.Tuple) and size.elts:
            feats = src.text(size.elts[-1])
            spatial = [src.text(e) for e in size.elts[:-1]]
            dims = [*(self.tuple_items(value.get("batch_dims")) or [f"*{batch}"]), *spatial, "<input channels>"]
            shape = "(" + ", ".join(dims) + ")"
            # TRANSLATORS: {call} is the call as written; {size} its size tuple; {feats} the output features;
            # {rng} and {shape} are code. {error} is the error the installed Flax gives (kept in English).
            message = said(Msg(
                "`{call}` is the flax <= 0.6 static method (rng, batch_dims, size); size {size} is the spatial "
                "shape plus the output features {feats}. Since flax 0.7 the cell holds features and kernel_size "
                "and initialize_carry takes the shape of one input step (batch dims, spatial dims, input "
                "channels): `nn.ConvLSTMCell(features={feats}, kernel_size=<your kernel>, "
                "parent=None).initialize_carry({rng}, {shape})`, or pass `x_t.shape` for an input step. Called "
                "the old way today: {error}.",
                call=shorten(src.text(node)), size=src.text(size), feats=feats, rng=text.get("rng", "rng"),
                shape=shape, error=error))
        else:
            feats, shape = "<features>", f"(*{batch}, *<spatial dims>, <input channels>)"
            # TRANSLATORS: {call} is the call as written; {feats}, {rng} and {shape} are code. {error} is the
            # error the installed Flax gives (kept in English).
            message = said(Msg(
                "`{call}` is the flax <= 0.6 static method (rng, batch_dims, size); size is the spatial shape "
                "plus the output features. Since flax 0.7 the cell holds features and kernel_size and "
                "initialize_carry takes the shape of one input step (batch dims, spatial dims, input channels): "
                "`nn.ConvLSTMCell(features={feats}, kernel_size=<your kernel>, "
                "parent=None).initialize_carry({rng}, {shape})`, or pass `x_t.shape` for an input step. Called "
                "the old way today: {error}.",
                call=shorten(src.text(node)), feats=feats, rng=text.get("rng", "rng"), shape=shape, error=error))
        return message

    def conv_static_edits(
        self, node: ast.Call, func: ast.Attribute, value: dict[str, ast.AST]
    ) -> tuple[list[Edit], Message | str]:
        """Edits for ``nn.ConvLSTMCell.initialize_carry(rng, (b,), (h, w, f))`` with literal tuples, else none."""
        src = self.src
        size, batch = value.get("size"), value.get("batch_dims")
        items = self.tuple_items(batch)
        if (len(node.args) != 3 or node.keywords or items is None or batch is None or not isinstance(size, ast.Tuple)
                or len(size.elts) < 2 or any(isinstance(e, ast.Starred) for e in size.elts)
                or "\n" in src.text(size) + src.text(batch)):
            return [], ""
        spatial = [src.text(e) for e in size.elts[:-1]]
        feats = src.text(size.elts[-1])
        kernel = "(" + ", ".join(["1"] * len(spatial)) + ("," if len(spatial) == 1 else "") + ")"
        shape = "(" + ", ".join([*items, *spatial, feats]) + ")"
        cls_end = src.span(func.value)[1]
        start, end = src.span(node.args[1])[0], src.span(size)[1]
        edits = [(cls_end, cls_end, f"(features={feats}, kernel_size={kernel}, parent=None)"), (start, end, shape)]
        note = said(Msg("Built the cell with features={feats} and kernel_size={kernel} and passed {shape}: the "
                        "kernel only tells initialize_carry how many spatial axes there are (the carry does not "
                        "depend on it), and the last entry of the shape stands for the input channels and is not "
                        "used, so the carry is the same.", feats=feats, kernel=kernel, shape=shape))
        return edits, note

    def tuple_items(self, node: ast.AST | None) -> list[str] | None:
        if isinstance(node, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in node.elts):
            return [self.src.text(e) for e in node.elts]
        return None

    def shape_text(self, batch: ast.AST | None, batch_text: str, size_text: str) -> str:
        items = self.tuple_items(batch)
        if items is None:
            return f"(*{batch_text}, {size_text})"
        items.append(size_text)
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

    def static_edits(
        self, node: ast.Call, func: ast.Attribute, bound: dict[str, ast.AST], text: dict[str, str], shape: str
    ) -> list[Edit]:
        src = self.src
        if any("\n" in text[k] for k in ("batch_dims", "size")) or "\n" in text.get("init_fn", ""):
            return []
        ctor = f"(features={text['size']}, parent=None" + (
            f", carry_init={text['init_fn']})" if "init_fn" in text else ")"
        )
        cls_end = src.span(func.value)[1]
        spans = {k: src.span(v) for k, v in bound.items()}
        start = min(spans["batch_dims"][0], spans["size"][0])
        end = max(spans["batch_dims"][1], spans["size"][1])
        for key, (a, b) in spans.items():
            if key not in {"batch_dims", "size", "init_fn"} and a < end and b > start:
                return []
        positional = not isinstance(bound["rng"], ast.keyword) and not isinstance(bound["batch_dims"], ast.keyword)
        edits = [(cls_end, cls_end, ctor), (start, end, shape if positional else f"input_shape={shape}")]
        if "init_fn" in bound:
            a, b = spans["init_fn"]
            if not (start <= a and b <= end):
                edits.append(remove_arg(src, node, bound["init_fn"]))
        return edits

    @staticmethod
    def array_like(node: ast.AST) -> bool:
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            return any(isinstance(e, ast.Slice) for e in node.slice.elts)
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            return name in ARRAY_MAKERS
        return False

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

    def doc_line(self, node: ast.AST) -> int:
        lineno = node.lineno  # type: ignore[attr-defined]
        return self.block.lines[lineno - 1] if lineno <= len(self.block.lines) else self.block.first_line


def analyse(source: str) -> tuple[list[CodeBlock], str, list[Problem], list[Issue]]:
    blocks, mode, whole_err = extract_blocks(source)
    problems: list[Problem] = []
    if mode == "code" and whole_err is not None:
        line = getattr(whole_err, "lineno", None)
        message: Message
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
