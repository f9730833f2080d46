"""Rules about ``initialize_carry`` calls: flax 0.6's static ``Cell.initialize_carry(rng, batch_dims, size)`` and
``init_fn=``, an array passed where a shape is expected, and their rewrites. Mixed into
:class:`rnnlab.flaxapi.migrate.rules.SiteFinder`."""

from __future__ import annotations

import ast

from rnnlab.flaxapi.migrate.cellrules import CellRules, old_call_error
from rnnlab.flaxapi.migrate.parsing import Edit
from rnnlab.flaxapi.migrate.report import (
    said,
)
from rnnlab.flaxapi.migrate.syntax import (
    ARRAY_MAKERS,
    CELLS,
    CONV_CELLS,
    Issue,
    insert_kwarg,
    linen_member,
    remove_arg,
)
from rnnlab.i18n import Msg, MsgN
from rnnlab.text import shorten


class CarryCallRules(CellRules):
    """``initialize_carry`` rules; the host class provides what :class:`CellRules` lists."""

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
            message = said(message, MsgN(
                "This one takes {n} argument: as carry_init it fails with TypeError (flax 0.6 called "
                "init_fn(key, shape), flax >= 0.7 passes the dtype too); give it a third parameter, e.g. "
                "`lambda key, shape, dtype=None: ...`.",
                "This one takes {n} arguments: as carry_init it fails with TypeError (flax 0.6 called "
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
            note = said(note, Msg("init_fn became carry_init={init} on the cell.", init=text["init_fn"]))
        kind = "static-initialize-carry+init_fn" if "init_fn" in text else None
        return self.add("static-initialize-carry", node, message, edits, note, kind=kind)

    def conv_static_message(self, node: ast.Call, value: dict[str, ast.AST], text: dict[str, str],
                            error: Msg | str) -> Msg:
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
    ) -> tuple[list[Edit], Msg | str]:
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
