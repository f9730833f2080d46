"""Old Linen (<= 0.6) vs new Linen (>= 0.7) vs NNX, computed live: carries, upgrade breakages, shapes, recipes.

Everything here runs the real APIs (the old one through :mod:`rnnlab.legacy`) and returns dataclasses that a
page renders; nothing is a copied formula or a canned message. No Streamlit, no user code is executed.
"""

from __future__ import annotations

import inspect
import math
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jax.nn import initializers

from rnnlab.cells import CARRY_INITS, CELLS, CarryInitSpec, CellSpec
from rnnlab.legacy import LAST_OLD_VERSION, LATER_CELLS, NEW_API_VERSION, legacy_initialize_carry

Initializer = Callable[..., jax.Array]
N_VALUES = 6  # first values shown per carry leaf
MAX_ELEMENTS = 1_000_000  # largest input (and output) the shape explorer will build
MAX_CARRY_ELEMENTS = 1_000_000  # largest carry leaf (batch x spatial x hidden) the comparison will build


def compare_size_error(cell: str, batch_dims: tuple[int, ...], in_features: int, hidden: int,
                       spatial: tuple[int, ...] = (8, 8)) -> str | None:
    """Why :func:`compare` refuses these sizes (each column builds carries of this size), or None."""
    spec = resolve_cell(cell)
    sizes = [*batch_dims, *(spatial if spec.spatial else ()), in_features, hidden]
    if any(not isinstance(d, int) or isinstance(d, bool) or d < 1 for d in sizes):
        return f"Every size must be a whole number of at least 1 (got {tuple(sizes)})."
    leaf = math.prod(batch_dims) * math.prod(spatial if spec.spatial else ()) * hidden
    if leaf > MAX_CARRY_ELEMENTS:
        what = "batch x spatial x hidden" if spec.spatial else "batch x hidden"
        return (f"The carry would have {leaf:,} numbers per leaf ({what}); the comparison builds at most "
                f"{MAX_CARRY_ELEMENTS:,}. Use fewer batch dims or hidden features.")
    return None

# --------------------------------------------------------------------------------------------------------------
# Three columns: old Linen, new Linen, NNX


@dataclass(frozen=True)
class InitCall:
    """One call the API made to the carry initializer: the key's raw bits, the shape, the dtype it passed."""

    key: tuple[int, ...]
    shape: tuple[int, ...]
    dtype: str | None  # None: called without a dtype (the initializer's float32 default applies)


@dataclass(frozen=True)
class Leaf:
    """One carry leaf as the page shows it."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    first_values: tuple[float, ...]


@dataclass(frozen=True)
class Column:
    """One API's code for the chosen numbers and what running it gave (leaves, or the error it met)."""

    key: str  # "old_linen" | "new_linen" | "nnx"
    title: str
    code: str
    structure: str | None = None  # "tuple (c, h)" or "array h"; None on error
    leaves: tuple[Leaf, ...] = ()
    error: str | None = None  # why this API cannot do it
    notes: tuple[str, ...] = ()
    caveats: tuple[str, ...] = ()  # differences beyond the arrays that the verdict repeats
    calls: tuple[InitCall, ...] = ()
    arrays: tuple[np.ndarray, ...] = field(default=(), repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class PairVerdict:
    """Two columns compared array by array: "identical", "different" or "not comparable", and why."""

    left: str
    right: str
    status: str
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Comparison:
    """The three columns for one choice of cell, shapes and initializer, and the verdict computed from them."""

    cell: str  # registry name (rnnlab.cells.CELLS)
    flax_name: str
    input_shape: tuple[int, ...]  # one time step of input: batch_dims (+ spatial) + (in_features,)
    carry_init: str
    columns: tuple[Column, ...]
    pairs: tuple[PairVerdict, ...]
    verdict: str

    def column(self, key: str) -> Column:
        return next(c for c in self.columns if c.key == key)

    def pair(self, left: str, right: str) -> PairVerdict:
        return next(p for p in self.pairs if {p.left, p.right} == {left, right})


TITLES = {
    "old_linen": f"Old Linen (flax <= {LAST_OLD_VERSION})",
    "new_linen": f"New Linen (flax >= {NEW_API_VERSION})",
    "nnx": "NNX (flax.nnx)",
}


def resolve_cell(cell: str) -> CellSpec:
    """The registry entry for a registry name ("lstm") or a Flax class name ("LSTMCell", "ConvLSTM")."""
    if cell in CELLS:
        return CELLS[cell]
    name = "ConvLSTMCell" if cell == "ConvLSTM" else cell
    for spec in CELLS.values():
        if spec.cls.__name__ == name:
            return spec
    known = ", ".join([*CELLS, *(s.cls.__name__ for s in CELLS.values())])
    raise ValueError(f"unknown cell {cell!r}; known: {known}")


def _key_bits(key: jax.Array) -> tuple[int, ...]:
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        key = jax.random.key_data(key)
    return tuple(int(v) for v in np.asarray(key).ravel())


def _spy(init: Initializer, calls: list[InitCall]) -> Initializer:
    """``init`` that records each call's key, shape and dtype (or that no dtype was passed)."""

    def spy(key, shape, *args, **kwargs):
        dtype = args[0] if args else kwargs.get("dtype")
        calls.append(InitCall(_key_bits(key), tuple(shape), None if dtype is None else jnp.dtype(dtype).name))
        return init(key, shape, *args, **kwargs)

    return spy


def _init_expr(spec: CarryInitSpec, value: float) -> str:
    return f"initializers.{spec.name}" if spec.param is None else f"initializers.{spec.name}({spec.param}={value!r})"


def _leaves(spec: CellSpec, carry: Any) -> tuple[Leaf, ...]:
    return tuple(
        Leaf(name, tuple(a.shape), jnp.dtype(a.dtype).name,
             tuple(float(v) for v in np.asarray(a, dtype=np.float32).ravel()[:N_VALUES]))
        for name, a in zip(spec.leaves, spec.carry_as_tuple(carry), strict=True)
    )


def _structure(spec: CellSpec) -> str:
    return f"tuple ({', '.join(spec.leaves)})" if len(spec.leaves) > 1 else f"array {spec.leaves[0]}"


def _error(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:500]


describe_error = _error  # "TypeError: first line of the message", at most 500 characters


def _done(key: str, code: str, spec: CellSpec, carry: Any, calls: list[InitCall], notes=(), caveats=()) -> Column:
    arrays = tuple(np.asarray(a) for a in spec.carry_as_tuple(carry))
    return Column(key, TITLES[key], code, _structure(spec), _leaves(spec, carry), None, tuple(notes),
                  tuple(caveats), tuple(calls), arrays)


def _old_column(spec, batch_dims, hidden, spatial, kernel, init_spec, value, seed, param_dtype) -> Column:
    name = spec.cls.__name__
    size = tuple(spatial) + (hidden,) if spec.spatial else hidden
    init_arg = "" if init_spec.name == "zeros" else f", init_fn={_init_expr(init_spec, value)}"
    head = (f"# flax <= {LAST_OLD_VERSION}: a static method; you pass batch_dims and size yourself\n"
            "import jax\nimport flax.linen as nn\nfrom jax.nn import initializers\n\n")
    if name in LATER_CELLS:
        code = f"# nn.{name} did not exist in flax 0.6.x (added in flax {LATER_CELLS[name]})\n"
        return Column("old_linen", TITLES["old_linen"], head + code,
                      error=f"{name} did not exist in flax 0.6.x: it was added in flax {LATER_CELLS[name]}")
    code = head + (f"key = jax.random.PRNGKey({seed})\n"
                   f"carry = nn.{name}.initialize_carry(key, {tuple(batch_dims)!r}, {size!r}{init_arg})\n")
    if spec.spatial:
        code += f"# size = spatial + (features,); the cell itself: nn.{name}(features={hidden}, kernel_size={kernel})\n"
    calls: list[InitCall] = []
    init = init_spec.build(value)
    carry = legacy_initialize_carry(name, jax.random.PRNGKey(seed), tuple(batch_dims), size, _spy(init, calls))
    notes = ["init_fn is called without a dtype: the carry is float32 whatever the cell's param_dtype"]
    if param_dtype != "float32":
        notes.append(f"param_dtype={param_dtype} cannot reach the carry in 0.6.x; cast it yourself")
    return _done("old_linen", code, spec, carry, calls, notes)


def _kernel(kernel_size: int | tuple[int, ...], n_spatial: int) -> tuple[int, ...]:
    """A kernel size as a tuple: an int is repeated over the ``n_spatial`` spatial axes."""
    if isinstance(kernel_size, tuple | list):
        return tuple(int(k) for k in kernel_size)
    return (int(kernel_size),) * n_spatial


def _new_column(spec, batch_dims, input_shape, hidden, kernel, init_spec, value, seed, param_dtype) -> Column:
    name = spec.cls.__name__
    args = [f"features={hidden}"]
    if spec.spatial:
        args.append(f"kernel_size={kernel!r}")
    if init_spec.name != "zeros":
        args.append(f"carry_init={_init_expr(init_spec, value)}")
    if param_dtype != "float32":
        args.append(f"param_dtype=jnp.{param_dtype}")
    code = (f"# flax >= {NEW_API_VERSION}: the cell holds features and carry_init; "
            "initialize_carry is an instance method\n"
            "import jax\n" + ("import jax.numpy as jnp\n" if param_dtype != "float32" else "")
            + "import flax.linen as nn\nfrom jax.nn import initializers\n\n"
            f"key = jax.random.key({seed})\n"
            f"cell = nn.{name}({', '.join(args)})\n"
            f"carry = cell.initialize_carry(key, {tuple(input_shape)!r})  # input_shape: one time step of input\n")
    calls: list[InitCall] = []
    kwargs: dict[str, Any] = {"carry_init": _spy(init_spec.build(value), calls), "param_dtype": jnp.dtype(param_dtype)}
    if spec.spatial:
        kwargs["kernel_size"] = kernel
    cell = spec.cls(features=hidden, **kwargs)
    carry = cell.initialize_carry(jax.random.key(seed), tuple(input_shape))
    notes = [f"input_shape {tuple(input_shape)}: batch_dims = input_shape[:-{cell.num_feature_axes}] = "
             f"{tuple(input_shape)[:-cell.num_feature_axes]}; num_feature_axes = {cell.num_feature_axes}",
             f"the cell passes param_dtype={jnp.dtype(param_dtype).name} to carry_init"]
    return _done("new_linen", code, spec, carry, calls, notes)


def _param_count(tree: Any) -> int:
    return int(sum(np.size(x) for x in jax.tree_util.tree_leaves(tree)))


def _gru_bias_note(in_features: int, hidden: int, nnx_cell: Any) -> str:
    """Compare the Linen and NNX GRU parameters live (Linen has a b_hn bias in 'hn', NNX's dense_h has none)."""
    linen = nn.GRUCell(hidden).init(jax.random.key(0), jnp.zeros((hidden,)), jnp.zeros((in_features,)))["params"]
    n_linen, n_nnx = _param_count(linen), _param_count(nnx.state(nnx_cell, nnx.Param))
    has_b_hn = "bias" in linen.get("hn", {})
    nnx_h_bias = getattr(nnx_cell.dense_h, "bias", None) is not None
    text = f"parameters: Linen GRUCell {n_linen}, NNX GRUCell {n_nnx}"
    if has_b_hn and not nnx_h_bias:
        text += (f"; NNX has no b_hn (Linen's 'hn' bias, {hidden} numbers): "
                 "the two GRUs compute different functions even with equal weights")
    return text


def _nnx_column(spec, input_shape, in_features, hidden, init_spec, value, seed, param_dtype) -> Column:
    name = spec.cls.__name__
    head = "from flax import nnx\nfrom jax.nn import initializers\n\n"
    nnx_cls = getattr(nnx, name, None)
    if nnx_cls is None:
        have = ", ".join(n for n in ("LSTMCell", "OptimizedLSTMCell", "GRUCell", "MGUCell", "SimpleCell",
                                     "ConvLSTMCell") if hasattr(nnx, n))
        return Column("nnx", TITLES["nnx"], head + f"# flax.nnx has no {name}\n",
                      error=f"flax.nnx has no {name} (NNX cells: {have})")
    dtype_arg = f", param_dtype=jnp.{param_dtype}" if param_dtype != "float32" else ""
    init_arg = "" if init_spec.name == "zeros" else f", carry_init={_init_expr(init_spec, value)}"
    code = ("# flax.nnx: the cell is built eagerly (in_features, hidden_features, rngs); "
            "the carry draws its keys from an Rngs stream\n"
            + ("import jax.numpy as jnp\n" if param_dtype != "float32" else "") + head
            + f"cell = nnx.{name}({in_features}, {hidden}, rngs=nnx.Rngs({seed}){dtype_arg})\n"
            f"carry = cell.initialize_carry({tuple(input_shape)!r}, rngs=nnx.Rngs({seed}){init_arg})\n")
    cell = nnx_cls(in_features, hidden, rngs=nnx.Rngs(seed), param_dtype=jnp.dtype(param_dtype))
    notes, caveats = [], []
    try:  # NNX needs an RNG even for zeros: reproduce it live
        cell.initialize_carry(tuple(input_shape), carry_init=initializers.zeros)
        notes.append("cell.initialize_carry(input_shape) without rngs worked")
    except ValueError as e:
        caveats.append(f"NNX needs an RNG even for zeros: cell.initialize_carry({tuple(input_shape)!r}) without rngs "
                       f"-> {_error(e)}")
    calls: list[InitCall] = []
    carry = cell.initialize_carry(tuple(input_shape), rngs=nnx.Rngs(seed), carry_init=_spy(init_spec.build(value),
                                                                                            calls))
    if name == "GRUCell":
        caveats.append(_gru_bias_note(in_features, hidden, cell))
    return _done("nnx", code, spec, carry, calls, notes, caveats)


def _key_names(bits: tuple[int, ...], seed: int) -> str:
    """Names of a recorded key in terms of key(seed): the key itself, split(key)[i], fold_in(key, i)."""
    key = jax.random.key(seed)
    names = []
    if bits == _key_bits(key):
        names.append(f"key({seed})")
    for i, k in enumerate(jax.random.split(key)):
        if bits == _key_bits(k):
            names.append(f"split(key({seed}))[{i}]")
    for i in range(4):
        if bits == _key_bits(jax.random.fold_in(key, i)):
            names.append(f"fold_in(key({seed}), {i})")
    return " = ".join(names) or f"key bits {list(bits)}"


def _compare(a: Column, b: Column, seed: int, random_init: bool) -> PairVerdict:
    if not (a.ok and b.ok):
        return PairVerdict(a.key, b.key, "not comparable", tuple(f"{c.title}: {c.error}" for c in (a, b) if c.error))
    reasons: list[str] = []
    if a.structure != b.structure:
        reasons.append(f"structure: {a.structure} vs {b.structure}")
    shapes_a, shapes_b = [x.shape for x in a.arrays], [x.shape for x in b.arrays]
    if shapes_a != shapes_b:
        reasons.append(f"shapes: {shapes_a} vs {shapes_b}")
    dtypes_a, dtypes_b = {x.dtype.name for x in a.arrays}, {x.dtype.name for x in b.arrays}
    if dtypes_a != dtypes_b:
        passed = {c.key: sorted({call.dtype or "no dtype (float32)" for call in c.calls}) for c in (a, b)}
        reasons.append(f"dtype: {sorted(dtypes_a)} vs {sorted(dtypes_b)}; the initializer got {passed[a.key]} from "
                       f"{a.title} and {passed[b.key]} from {b.title} (0.6.x passed no dtype, from 0.7 the cell "
                       "passes param_dtype)")
    keys_a, keys_b = [c.key for c in a.calls], [c.key for c in b.calls]
    keys_text = (f"{a.title} used {', '.join(_key_names(k, seed) for k in keys_a)}; "
                 f"{b.title} used {', '.join(_key_names(k, seed) for k in keys_b)}")
    same_values = shapes_a == shapes_b and all(
        np.array_equal(x.astype(np.float32), y.astype(np.float32)) for x, y in zip(a.arrays, b.arrays, strict=True))
    if not same_values and shapes_a == shapes_b:
        diff = max(float(np.max(np.abs(x.astype(np.float32) - y.astype(np.float32)), initial=0.0))
                   for x, y in zip(a.arrays, b.arrays, strict=True))
        if keys_a != keys_b:
            cause = "different keys"
        elif dtypes_a != dtypes_b:
            low = min((x.dtype for x in (*a.arrays, *b.arrays)), key=lambda d: d.itemsize)
            rounded = all(np.array_equal(x.astype(low), y.astype(low)) for x, y in zip(a.arrays, b.arrays, strict=True))
            cause = ("same keys; only rounding to " + low.name if rounded else
                     f"same keys, but the initializer draws in {low.name} directly (not a rounded float32)")
        else:
            cause = "same keys"
        reasons.append(f"values differ (max |difference| {diff:.3g}), {cause}: {keys_text}")
    elif keys_a != keys_b:
        why = "the initializer ignores the key" if not random_init else "the keys drew the same numbers"
        reasons.append(f"same values although the keys differ ({why}): {keys_text}")
    else:
        reasons.append(f"same keys: {keys_text}")
    status = "identical" if same_values and dtypes_a == dtypes_b and a.structure == b.structure else "different"
    return PairVerdict(a.key, b.key, status, tuple(reasons))


def _verdict(columns: tuple[Column, ...], pairs: tuple[PairVerdict, ...]) -> str:
    """First line "identical: ..." when every pair is identical; then each pair with its reasons, then caveats."""
    lines = []
    if all(c.ok for c in columns) and all(p.status == "identical" for p in pairs):
        lines.append("identical: all three APIs give the same arrays")
    for p in pairs:
        lines.append(f"{TITLES[p.left]} vs {TITLES[p.right]}: {p.status}: " + "; ".join(p.reasons))
    lines += [caveat for c in columns for caveat in c.caveats]
    return "\n".join(lines)


def compare(
    cell: str,
    batch_dims: tuple[int, ...],
    in_features: int,
    hidden: int,
    carry_init: str = "zeros",
    carry_param: float | None = None,
    seed: int = 0,
    spatial: tuple[int, ...] = (8, 8),
    kernel_size: int | tuple[int, ...] = 3,
    param_dtype: str = "float32",
) -> Comparison:
    """Build the same carry with the old Linen, new Linen and NNX APIs and compare the arrays.

    ``cell`` is a registry name (``rnnlab.cells.CELLS``) or a Flax class name; ``carry_init`` a name of
    ``CARRY_INITS`` with ``carry_param`` its parameter (None: the registry default); ``spatial`` and
    ``kernel_size`` are used by ConvLSTM only; ``param_dtype`` (e.g. "bfloat16") goes to the new APIs.
    """
    spec = resolve_cell(cell)
    init_spec = CARRY_INITS[carry_init]
    value = init_spec.default if carry_param is None else float(carry_param)
    if not math.isfinite(value):
        raise ValueError(f"the carry_init parameter must be a finite number (got {value})")
    batch_dims = tuple(int(d) for d in batch_dims)
    size_error = compare_size_error(spec.name, batch_dims, int(in_features), int(hidden), tuple(spatial))
    if size_error:
        raise ValueError(size_error)
    input_shape = batch_dims + (tuple(spatial) if spec.spatial else ()) + (int(in_features),)
    kernel = _kernel(kernel_size, len(spatial))
    columns = (
        _old_column(spec, batch_dims, hidden, spatial, kernel, init_spec, value, seed, param_dtype),
        _new_column(spec, batch_dims, input_shape, hidden, kernel, init_spec, value, seed, param_dtype),
        _nnx_column(spec, input_shape, in_features, hidden, init_spec, value, seed, param_dtype),
    )
    old, new, nnx_col = columns
    pairs = tuple(_compare(a, b, seed, init_spec.random) for a, b in ((old, new), (new, nnx_col), (old, nnx_col)))
    return Comparison(spec.name, spec.cls.__name__, input_shape, init_spec.describe(value), columns, pairs,
                      _verdict(columns, pairs))


# --------------------------------------------------------------------------------------------------------------
# What breaks if I upgrade


@dataclass(frozen=True)
class Breakage:
    """Old code run on current Flax: the error it meets (or what silently happens), the fix and its result."""

    title: str
    old_code: str
    error: str  # "TypeError: ..." or "no error: <what silently happened>"
    fix_code: str
    fix_result: str
    silent: bool
    explanation: str = ""


def _attempt(fn: Callable[[], Any]) -> tuple[Any, str | None]:
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - the error is the result we show
        return None, _error(e)


def _shapes(tree: Any) -> Any:
    return jax.tree_util.tree_map(lambda a: tuple(a.shape), tree)


def _recorder(seen: dict[str, Any]) -> type[nn.RNNCellBase]:
    """A cell wrapper class that records what nn.RNN hands the cell (init input shape, carry, step input)."""

    class RecordingCell(nn.RNNCellBase):
        cell: nn.RNNCellBase

        @nn.compact
        def __call__(self, carry, inputs):
            seen["step_input"] = tuple(inputs.shape)
            return self.cell(carry, inputs)

        @nn.nowrap
        def initialize_carry(self, rng, input_shape):
            seen["init_input_shape"] = tuple(input_shape)
            carry = self.cell.initialize_carry(rng, input_shape)
            seen["carry_shapes"] = _shapes(carry)
            return carry

        @property
        def num_feature_axes(self) -> int:
            return self.cell.num_feature_axes

    return RecordingCell


def _silent_time_major() -> tuple[str, str]:
    """Run ``nn.RNN(nn.LSTMCell(4), 4)`` next to ``nn.RNN(nn.LSTMCell(4))`` on (batch=2, time=5, features=3)."""
    x = jax.random.normal(jax.random.key(1), (2, 5, 3))
    seen_bad: dict[str, Any] = {}
    seen_good: dict[str, Any] = {}
    bad = nn.RNN(_recorder(seen_bad)(nn.LSTMCell(4)), 4, return_carry=True)
    good = nn.RNN(_recorder(seen_good)(nn.LSTMCell(4)), return_carry=True)
    params = good.init(jax.random.key(0), x)
    carry_bad, y_bad = bad.apply(params, x)
    carry_good, y_good = good.apply(params, x)
    x2 = x.at[0].add(1.0)  # change sample 0 only
    leak_bad = float(jnp.max(jnp.abs(bad.apply(params, x2)[1][1] - y_bad[1])))
    leak_good = float(jnp.max(jnp.abs(good.apply(params, x2)[1][1] - y_good[1])))
    error = (f"no error: nn.RNN's second field is now time_major, so time_major={bad.time_major!r}. On x of shape "
             f"(batch=2, time=5, features=3) axis 0 is scanned as time: initialize_carry got "
             f"{seen_bad['init_input_shape']} (should be {seen_good['init_input_shape']}), the final carry has shapes "
             f"{_shapes(carry_bad)} instead of {_shapes(carry_good)}, the output keeps shape {tuple(y_bad.shape)} "
             f"so nothing looks wrong, but changing sample 0's input changes sample 1's output by {leak_bad:.3g}: "
             "the two samples are chained as two time steps")
    fix = (f"initialize_carry got {seen_good['init_input_shape']}, final carry {_shapes(carry_good)}, output "
           f"{tuple(y_good.shape)}; changing sample 0 changes sample 1's output by {leak_good:.3g} (independent)")
    return error, fix


def upgrade_breakages() -> list[Breakage]:
    """The errors flax 0.6.x code meets on current Flax, each reproduced live, with the fix run live too."""
    key = jax.random.key(0)
    x = jnp.ones((2, 5, 3))  # (batch, time, in_features)
    out: list[Breakage] = []

    _, err = _attempt(lambda: nn.LSTMCell())
    cell = nn.LSTMCell(features=4)
    params = cell.init(key, cell.initialize_carry(key, (2, 3)), jnp.ones((2, 3)))
    out.append(Breakage(
        "Cells need features", "cell = nn.LSTMCell()", err or "no error", "cell = nn.LSTMCell(features=4)",
        f"builds; init on a (2, 3) step gives {_param_count(params)} parameters, num_feature_axes = "
        f"{cell.num_feature_axes}", False,
        "0.6.x cells read the hidden size off the carry; from 0.7 the cell holds it, so features is required."))

    _, err = _attempt(lambda: nn.LSTMCell.initialize_carry(jax.random.PRNGKey(0), (2,), 4))
    carry = nn.LSTMCell(features=4).initialize_carry(key, (2, 3))
    out.append(Breakage(
        "initialize_carry is an instance method",
        "carry = nn.LSTMCell.initialize_carry(jax.random.PRNGKey(0), (2,), 4)  # (rng, batch_dims, size)",
        err or "no error",
        "carry = nn.LSTMCell(features=4).initialize_carry(jax.random.key(0), (2, 3))  # (batch, in_features)",
        f"carry: tuple (c, h) with shapes {_shapes(carry)}, dtype {carry[0].dtype.name}", False,
        "Called on the class, the key lands in self, (2,) in rng and 4 in input_shape; input_shape[:-1] then "
        "fails on the int. The new call takes the shape of one time step of input."))

    _, err = _attempt(lambda: nn.RNN(nn.LSTMCell(features=4), cell_size=4))
    rnn = nn.RNN(nn.LSTMCell(features=4))
    y = rnn.apply(rnn.init(key, x), x)
    out.append(Breakage(
        "nn.RNN no longer takes cell_size",
        "rnn = nn.RNN(nn.LSTMCell(features=4), cell_size=4)", err or "no error",
        "rnn = nn.RNN(nn.LSTMCell(features=4))  # the cell knows its size",
        f"on x of shape {tuple(x.shape)} the output has shape {tuple(y.shape)}", False,
        "cell_size fed the old static initialize_carry; the cell's features replace it."))

    error, fix = _silent_time_major()
    out.append(Breakage(
        "nn.RNN(cell, 4) now sets time_major=4",
        "rnn = nn.RNN(nn.LSTMCell(features=4), 4)  # 0.6.x: nn.RNN(cell, cell_size)", error,
        "rnn = nn.RNN(nn.LSTMCell(features=4))", fix, True,
        "In 0.6.x the second field of nn.RNN was cell_size; now it is time_major, and any truthy int is accepted."))
    return out


# --------------------------------------------------------------------------------------------------------------
# Shape explorer


@dataclass(frozen=True)
class ShapeReport:
    """What nn.RNN inferred for one input shape, read off a real run (or the error the run met)."""

    input_shape: tuple[int, ...]
    time_major: bool
    cell: str
    code: str
    num_feature_axes: int | None = None
    time_axis: int | None = None
    time_steps: int | None = None
    batch_dims: tuple[int, ...] | None = None
    carry_input_shape: tuple[int, ...] | None = None  # what nn.RNN passed to cell.initialize_carry
    step_input_shape: tuple[int, ...] | None = None  # what the cell saw at each step
    carry_shapes: Any = None  # same structure as the carry, shapes as tuples
    output_shape: tuple[int, ...] | None = None
    error: str | None = None
    notes: tuple[str, ...] = ()


def shape_size_error(input_shape: tuple[int, ...], features: int) -> str | None:
    """Why :func:`explore_shapes` refuses to build this input (or its output), or None."""
    if not input_shape:
        return "Input shape: give at least one axis, e.g. (batch, time, features) = 2, 5, 3."
    if any(d < 1 for d in input_shape) or math.prod(input_shape) > MAX_ELEMENTS:
        return f"Input shape: every axis needs at least 1 element and at most {MAX_ELEMENTS:,} in all."
    out = math.prod(input_shape[:-1]) * features
    if out > MAX_ELEMENTS:
        return (f"The output would have {out:,} numbers (every axis but the last, times {features} features); "
                f"the explorer builds at most {MAX_ELEMENTS:,}. Use a smaller shape or fewer features.")
    return None


def _build_cell(spec: CellSpec, features: int, kernel: tuple[int, ...]) -> nn.RNNCellBase:
    if spec.spatial:
        return spec.cls(features=features, kernel_size=kernel)
    return spec.cls(features=features)


def _time_axis(run: Callable[[jax.Array], jax.Array], x: jax.Array, candidates: list[int]) -> int:
    """Among axes whose removal gives the step shape, the one along which the output is causal.

    Perturbing index 0 along the time axis changes index 1 of the output, and perturbing index 1 leaves index 0
    alone; a batch axis fails the first test, a spatial (convolved) axis the second.
    """
    y = run(x)
    for axis in candidates:
        if x.shape[axis] < 2:
            continue
        others = tuple(d for d in range(x.ndim) if d != axis)
        bump = [jnp.expand_dims(jnp.arange(x.shape[axis]) == i, others).astype(x.dtype) for i in (0, 1)]
        forward, backward = run(x + bump[0]), run(x + bump[1])
        if (not jnp.array_equal(jnp.take(forward, 1, axis=axis), jnp.take(y, 1, axis=axis))
                and jnp.array_equal(jnp.take(backward, 0, axis=axis), jnp.take(y, 0, axis=axis))):
            return axis
    return candidates[0]


def explore_shapes(
    input_shape: tuple[int, ...], time_major: bool, cell: str, features: int, kernel_size: int | tuple[int, ...] = 3
) -> ShapeReport:
    """Run ``nn.RNN(cell, time_major=...)`` on zeros of ``input_shape`` and report what it inferred.

    The shape passed to ``initialize_carry``, the carry and the per-step input are recorded by a wrapper cell;
    the time axis is the axis whose removal gives that shape (ties broken by a causality probe). Bad shapes
    give a report with ``error`` set, never an exception.
    """
    spec = resolve_cell(cell)
    shape = tuple(int(d) for d in input_shape)
    kernel = _kernel(kernel_size, 2)
    name = spec.cls.__name__
    cell_code = f"nn.{name}(features={features}" + (
        f", kernel_size={kernel!r})" if spec.spatial else ")")
    code = (f"x = jnp.zeros({shape!r})\n"
            f"rnn = nn.RNN({cell_code}, time_major={bool(time_major)}, return_carry=True)\n"
            "variables = rnn.init(jax.random.key(0), x)\n"
            "carry, y = rnn.apply(variables, x)\n")
    base = {"input_shape": shape, "time_major": bool(time_major), "cell": spec.name, "code": code}
    inner = _build_cell(spec, features, kernel)
    nfa = inner.num_feature_axes
    base["num_feature_axes"] = nfa
    size_error = shape_size_error(shape, features)
    if size_error:
        return ShapeReport(**base, error=size_error)
    seen: dict[str, Any] = {}
    rnn = nn.RNN(_recorder(seen)(inner), time_major=bool(time_major), return_carry=True)
    x = jnp.zeros(shape)
    try:
        params = rnn.init(jax.random.key(0), x)
        carry, y = rnn.apply(params, x)
    except Exception as e:  # noqa: BLE001 - the error is the report
        failed: tuple[str, ...] = ()
        if "init_input_shape" in seen:
            failed += (f"nn.RNN passed {seen['init_input_shape']} to initialize_carry before the cell failed",)
        if len(shape) < nfa + 1:
            failed += (f"the input has {len(shape)} axes; with num_feature_axes = {nfa} the cell needs at least "
                       f"{nfa + 1}: (time, *features)",)
        return ShapeReport(**base, carry_input_shape=seen.get("init_input_shape"), error=_error(e), notes=failed)
    step = seen["init_input_shape"]
    candidates = [a for a in range(len(shape)) if shape[:a] + shape[a + 1:] == step]
    notes: list[str] = []
    if len(candidates) == 1:
        axis = candidates[0]
    else:
        axis = _time_axis(lambda v: rnn.apply(params, v)[1], jax.random.normal(jax.random.key(2), shape), candidates)
        notes.append(f"axes {candidates} all leave {step}; a causality probe picked axis {axis}")
    batch_dims = step[: len(step) - nfa]
    notes.append(f"num_feature_axes = {nfa}: the last {nfa} axis(es) of each step are features"
                 + (" (spatial dims + channels)" if spec.spatial else "") + f", the rest {batch_dims} are batch")
    return ShapeReport(**base, time_axis=axis, time_steps=shape[axis], batch_dims=batch_dims,
                       carry_input_shape=step, step_input_shape=seen.get("step_input"),
                       carry_shapes=_shapes(carry), output_shape=tuple(y.shape), notes=tuple(notes))


# --------------------------------------------------------------------------------------------------------------
# Learnable-carry recipes: the seed answers' code (text) next to fixed versions (real code, checked live)

SEED_LOOP_CODE = """\
class RNN(nn.Module):
    n_RNN_units: int
    # 可选：允许传入初始状态的自定义初始化函数
    carry_init_fn: callable = initializers.zeros

    @nn.compact
    def __call__(self, inputs):
        # 将初始隐藏状态注册为可学习参数
        initial_carry = self.param('initial_carry', self.carry_init_fn, (self.n_RNN_units,))
        carry = initial_carry
        outputs = []
        # 遍历输入序列（适配(seq_len, data_dim)或(batch, seq_len, data_dim)格式）
        for x in np.moveaxis(inputs, 0, -1):
            carry, out = nn.GRUCell()(carry, x)
            outputs.append(out)
        return carry, np.stack(outputs, axis=0)

model = RNN(n_RNN_units=n_RNN_units, carry_init_fn=initializers.normal(stddev=0.1))
dummy_inputs = np.empty((10, data_dim))  # 示例序列长度为10
params = model.init(random.PRNGKey(1), dummy_inputs)
"""

SEED_CARRY_NONE_CODE = """\
@nn.compact
def __call__(self, inputs, carry=None):
    if carry is None:
        # Learnable initial carry
        carry = self.param('carry_init', lambda rng, shape: jnp.zeros(shape), (self.n_RNN_units,))
    carry, outputs = nn.GRUCell()(carry, inputs)
    return carry, outputs
"""

SEED_MERGE_CODE = """\
class RNN(nn.Module):
    n_RNN_units: int

    @nn.compact
    def __call__(self, carry, inputs):
        carry, outputs = nn.GRUCell()(carry, inputs)
        return carry, outputs

# 1. 初始化GRU的权重参数
dummy_carry = np.empty((n_RNN_units,))
dummy_inputs = np.empty((data_dim,))
gru_params = model.init(random.PRNGKey(1), dummy_carry, dummy_inputs)

# 2. 手动初始化可学习的初始隐藏状态
rng = random.PRNGKey(2)
carry_init_fn = initializers.normal(stddev=0.1)
initial_carry = carry_init_fn(rng, (n_RNN_units,))

# 3. 合并参数字典，保持Flax参数结构格式
params = {
    'params': {
        **gru_params['params'],
        'initial_carry': initial_carry
    }
}

# 使用时取出初始carry并运行模型
initial_carry = params['params']['initial_carry']
carry, outputs = model.apply(params, initial_carry, dummy_inputs)
"""


class LearnedCarryRNN(nn.Module):
    """Recipe (a): the initial carry is a parameter, broadcast over the batch and handed to ``nn.RNN``."""

    features: int
    carry_init: Initializer = initializers.normal(0.1)

    @nn.compact
    def __call__(self, inputs):  # (*batch, time, in_features)
        h0 = self.param("h0", self.carry_init, (self.features,))  # no batch axis: one carry for every sample
        carry = jnp.broadcast_to(h0, inputs.shape[:-2] + (self.features,))
        return nn.RNN(nn.GRUCell(self.features))(inputs, initial_carry=carry)


class LearnedCarryLoop(nn.Module):
    """Recipe (a) as the seed's Python loop, fixed: ONE cell made before the loop, stepping along time."""

    features: int
    carry_init: Initializer = initializers.normal(0.1)

    @nn.compact
    def __call__(self, inputs):  # (*batch, time, in_features)
        h0 = self.param("h0", self.carry_init, (self.features,))
        carry = jnp.broadcast_to(h0, inputs.shape[:-2] + (self.features,))
        cell = nn.GRUCell(self.features)  # one cell, so every step shares the same weights
        outputs = []
        for t in range(inputs.shape[-2]):  # the time axis (np.moveaxis(inputs, 0, -1) walked the features)
            carry, y = cell(carry, inputs[..., t, :])
            outputs.append(y)
        return jnp.stack(outputs, axis=-2)


class CarryDefaultRNN(nn.Module):
    """Recipe (b): ``carry=None`` falls back to the learned carry; pass the returned carry to continue."""

    features: int
    carry_init: Initializer = initializers.normal(0.1)

    @nn.compact
    def __call__(self, inputs, carry=None):  # inputs (*batch, time, in_features)
        h0 = self.param("carry_init", self.carry_init, (self.features,))  # always created: init(x, carry) has it
        if carry is None:
            carry = jnp.broadcast_to(h0, inputs.shape[:-2] + (self.features,))
        carry, outputs = nn.RNN(nn.GRUCell(self.features), return_carry=True)(inputs, initial_carry=carry)
        return carry, outputs


def merged_carry_model(features: int) -> nn.RNN:
    """Recipe (c)'s model: ONE cell scanned over time; the carry lives in the params dict, not in the module."""
    return nn.RNN(nn.GRUCell(features))


def merged_carry_params(model: nn.Module, features: int, x: jax.Array, key: jax.Array,
                        carry_init: Initializer = initializers.normal(0.1)) -> dict:  # noqa: B008
    """Recipe (c): the cell's parameters from ``model.init`` with a hand-made initial carry merged in."""
    key_params, key_carry = jax.random.split(key)
    variables = model.init(key_params, x)
    return {"params": {**variables["params"], "initial_carry": carry_init(key_carry, (features,))}}


def merged_carry_loss(params: dict, model: nn.Module, x: jax.Array) -> jax.Array:
    """Read the carry from ``params`` INSIDE the loss, so ``jax.grad(merged_carry_loss)`` reaches it."""
    h0 = params["params"]["initial_carry"]
    carry = jnp.broadcast_to(h0, x.shape[:-2] + h0.shape)
    return jnp.mean(model.apply(params, x, initial_carry=carry) ** 2)  # Linen ignores the extra entry


class SeedLoopGRU(nn.Module):
    """The seed's loop answer with ``features`` added so it runs; its other defects are kept on purpose."""

    n_RNN_units: int
    carry_init_fn: Initializer = initializers.normal(0.1)

    @nn.compact
    def __call__(self, inputs):
        initial_carry = self.param("initial_carry", self.carry_init_fn, (self.n_RNN_units,))
        carry = initial_carry
        outputs = []
        for x in jnp.moveaxis(inputs, 0, -1):
            carry, out = nn.GRUCell(self.n_RNN_units)(carry, x)
            outputs.append(out)
        return carry, jnp.stack(outputs, axis=0)


class SeedCarryDefaultGRU(nn.Module):
    """The seed's ``carry=None`` answer with ``features`` added so it runs."""

    n_RNN_units: int

    @nn.compact
    def __call__(self, inputs, carry=None):
        if carry is None:
            carry = self.param("carry_init", lambda rng, shape: jnp.zeros(shape), (self.n_RNN_units,))
        carry, outputs = nn.GRUCell(self.n_RNN_units)(carry, inputs)
        return carry, outputs


class SeedStepGRU(nn.Module):
    """The seed's one-step module of the params-merging answer, with ``features`` added so it runs."""

    n_RNN_units: int

    @nn.compact
    def __call__(self, carry, inputs):
        carry, outputs = nn.GRUCell(self.n_RNN_units)(carry, inputs)
        return carry, outputs


@dataclass(frozen=True)
class Check:
    """One live check of a recipe: what was tested, whether it holds, and the numbers behind it."""

    name: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class Defect:
    """A piece of the seed's code (a substring of it) and what is wrong with it on current Flax."""

    code: str
    problem: str


@dataclass(frozen=True)
class Recipe:
    """A learnable-carry pattern: the seed's code with its defects, the fixed code, and checks run on both."""

    key: str
    title: str
    summary: str
    seed_ref: str
    seed_code: str
    defects: tuple[Defect, ...]
    fixed_code: str
    checks: tuple[Check, ...]
    seed_runnable_code: str  # the seed code with features added so it runs on current Flax
    seed_checks: tuple[Check, ...]


F, D = 4, 3  # hidden features and input features of the recipe checks
CARRY_NAMES = ("h0", "initial_carry", "carry_init")


def _split_carry(params: dict) -> tuple[dict, dict]:
    carry = {k: v for k, v in params.items() if k in CARRY_NAMES}
    rest = {k: v for k, v in params.items() if k not in CARRY_NAMES}
    return carry, rest


def _grad_norm(grads: dict, name: str) -> float:
    return float(jnp.linalg.norm(grads["params"][name]))


def _seq(t: int, batch: tuple[int, ...] = (2,)) -> jax.Array:
    return jax.random.normal(jax.random.key(t), batch + (t, D))


def _standard_checks(init_fn: Callable[[jax.Array], dict], loss_fn: Callable[[dict, jax.Array], jax.Array],
                     name: str) -> tuple[Check, ...]:
    """The three checks: the carry parameter is in params, gets a non-zero gradient, params do not grow with T."""
    params3 = init_fn(_seq(3))
    in_params = name in params3["params"]
    g = jax.grad(loss_fn)(params3, _seq(3))
    norm = _grad_norm(g, name) if in_params else 0.0
    n3 = _param_count(_split_carry(params3["params"])[1])
    n7 = _param_count(_split_carry(init_fn(_seq(7))["params"])[1])
    return (
        Check(f"'{name}' is in params", in_params, f"params keys: {sorted(params3['params'])}"),
        Check(f"'{name}' gets a non-zero gradient", norm > 0, f"|dL/d{name}| = {norm:.3g}"),
        Check("cell parameters do not grow with sequence length", n3 == n7,
              f"cell parameters: {n3} for T=3, {n7} for T=7"),
    )


def _source(*objs: Any) -> str:
    return "\n\n".join(textwrap.dedent(inspect.getsource(o)).strip() for o in objs) + "\n"


def _recipe_param() -> Recipe:
    key = jax.random.key(0)
    checks: list[Check] = []
    for cls in (LearnedCarryRNN, LearnedCarryLoop):
        model = cls(F)
        for c in _standard_checks(lambda x, m=model: m.init(key, x),
                                  lambda p, x, m=model: jnp.mean(m.apply(p, x) ** 2), "h0"):
            checks.append(Check(f"{cls.__name__}: {c.name}", c.passed, c.detail))
    x = _seq(7)
    params = LearnedCarryRNN(F).init(key, x)
    same_tree = _shapes(params) == _shapes(LearnedCarryLoop(F).init(key, x))
    diff = float(jnp.max(jnp.abs(LearnedCarryRNN(F).apply(params, x) - LearnedCarryLoop(F).apply(params, x))))
    checks.append(Check("nn.RNN and the one-cell loop are the same model", same_tree and diff < 1e-5,
                        f"same parameter tree: {same_tree}; with nn.RNN's parameters the loop's outputs differ by "
                        f"at most {diff:.2g}"))

    seed = SeedLoopGRU(F)
    seed_checks: list[Check] = []
    counts = {}
    for t in (3, 7):
        params = seed.init(jax.random.PRNGKey(1), jax.random.normal(jax.random.key(t), (t, D)))["params"]
        cells = [k for k in params if k.startswith("GRUCell_")]
        counts[t] = (_param_count(_split_carry(params)[1]), len(cells),
                     tuple(params[cells[0]]["ir"]["kernel"].shape))
    x3 = jax.random.normal(jax.random.key(3), (3, D))
    p3 = seed.init(jax.random.PRNGKey(1), x3)
    g = jax.grad(lambda p: jnp.mean(seed.apply(p, x3)[1] ** 2))(p3)
    seed_checks += [
        Check("'initial_carry' is in params", "initial_carry" in p3["params"], f"keys: {sorted(p3['params'])}"),
        Check("'initial_carry' gets a non-zero gradient", _grad_norm(g, "initial_carry") > 0,
              f"|dL/dinitial_carry| = {_grad_norm(g, 'initial_carry'):.3g}"),
        Check("cell parameters do not grow with sequence length", counts[3][0] == counts[7][0],
              f"cell parameters: {counts[3][0]} for T=3, {counts[7][0]} for T=7 (input kernel {counts[3][2]} vs "
              f"{counts[7][2]}: each step's input is a column of length T)"),
        Check("one cell shared by all steps", counts[3][1] == 1,
              f"{counts[3][1]} separate GRUCells (GRUCell_0..GRUCell_{counts[3][1] - 1}) for input (T, {D}): one "
              f"per loop step, and the loop ran {counts[3][1]} times = the {D} features, not the T time steps"),
    ]
    return Recipe(
        "param", "A self.param inside the module",
        "Register the initial carry with self.param (no batch axis), broadcast it over the batch, and run ONE cell "
        "over time: with nn.RNN, or with a Python loop around a cell created once.",
        "shared/seeds/000 (first answer)", SEED_LOOP_CODE,
        (Defect("nn.GRUCell()", "no features: TypeError on flax >= 0.7"),
         Defect("for x in np.moveaxis(inputs, 0, -1):", "moves time to the end, so the loop walks the feature axis"),
         Defect("carry, out = nn.GRUCell()(carry, x)", "a new cell (new weights) on every loop step")),
        _source(LearnedCarryRNN, LearnedCarryLoop), tuple(checks), _source(SeedLoopGRU), tuple(seed_checks))


def _recipe_default() -> Recipe:
    key = jax.random.key(0)
    model = CarryDefaultRNN(F)
    checks = list(_standard_checks(lambda x: model.init(key, x),
                                   lambda p, x: jnp.mean(model.apply(p, x)[1] ** 2), "carry_init"))
    x = _seq(3)
    params = model.init(key, x)
    carry, _ = model.apply(params, x)
    g = jax.grad(lambda p: jnp.mean(model.apply(p, x, carry)[1] ** 2))(params)
    with_carry = model.init(key, x, carry)
    checks += [
        Check("a passed carry is used instead (no gradient to the learned one)", _grad_norm(g, "carry_init") == 0.0,
              f"|dL/dcarry_init| = {_grad_norm(g, 'carry_init'):.3g} when the previous chunk's carry is passed"),
        Check("init with a carry still creates the parameter", "carry_init" in with_carry["params"],
              f"keys: {sorted(with_carry['params'])}"),
    ]

    seed = SeedCarryDefaultGRU(F)
    xs = jax.random.normal(jax.random.key(3), (2, D))
    p_none = seed.init(jax.random.PRNGKey(1), xs, None)
    g = jax.grad(lambda p: jnp.mean(seed.apply(p, xs)[1] ** 2))(p_none)
    p_carry = seed.init(jax.random.PRNGKey(1), xs, jnp.zeros((F,)))
    _, err = _attempt(lambda: seed.apply(p_carry, xs))
    seq_counts = {t: _param_count(_split_carry(seed.init(jax.random.PRNGKey(1), _seq(t)[:, 0], None)["params"])[1])
                  for t in (3, 7)}
    seed_checks = (
        Check("'carry_init' is in params after model.init(rng, inputs, None)", "carry_init" in p_none["params"],
              f"keys: {sorted(p_none['params'])}"),
        Check("'carry_init' gets a non-zero gradient", _grad_norm(g, "carry_init") > 0,
              f"|dL/dcarry_init| = {_grad_norm(g, 'carry_init'):.3g}"),
        Check("cell parameters do not grow with sequence length", seq_counts[3] == seq_counts[7],
              f"one step per apply: {seq_counts[3]} parameters whatever T"),
        Check("init with a carry creates the parameter", "carry_init" in p_carry["params"],
              f"model.init(rng, inputs, carry) gives keys {sorted(p_carry['params'])}; apply(params, inputs) "
              f"then fails: {err}"),
    )
    return Recipe(
        "default", "A carry=None default that falls back to the learned carry",
        "Create the parameter on every call and use it only when no carry is passed: the first chunk starts from "
        "the learned carry, later chunks pass the carry returned by the previous one.",
        "shared/seeds/001 (answer 1)", SEED_CARRY_NONE_CODE,
        (Defect("nn.GRUCell()", "no features: TypeError on flax >= 0.7"),
         Defect("if carry is None:\n        # Learnable initial carry\n        carry = self.param(",
                "the parameter exists only if model.init was called with carry=None"),
         Defect("jnp.zeros(shape)", "the question imported jax.numpy as np, so jnp is undefined there")),
        _source(CarryDefaultRNN), tuple(checks), _source(SeedCarryDefaultGRU), seed_checks)


def _recipe_merge() -> Recipe:
    key = jax.random.key(0)
    model = merged_carry_model(F)
    checks = _standard_checks(lambda x: merged_carry_params(model, F, x, key),
                              lambda p, x: merged_carry_loss(p, model, x), "initial_carry")

    seed = SeedStepGRU(F)
    xs = jax.random.normal(jax.random.key(3), (D,))
    gru_params = seed.init(jax.random.PRNGKey(1), jnp.zeros((F,)), xs)
    params = {"params": {**gru_params["params"],
                         "initial_carry": initializers.normal(0.1)(jax.random.PRNGKey(2), (F,))}}
    step_counts = {t: _param_count(seed.init(jax.random.PRNGKey(1), jnp.zeros((F,)), _seq(t, ())[0])) for t in (3, 7)}
    outside = params["params"]["initial_carry"]
    g_out = jax.grad(lambda p: jnp.mean(seed.apply(p, outside, xs)[1] ** 2))(params)
    g_in = jax.grad(lambda p: jnp.mean(seed.apply(p, p["params"]["initial_carry"], xs)[1] ** 2))(params)
    seed_checks = (
        Check("'initial_carry' is in params", "initial_carry" in params["params"],
              f"keys: {sorted(params['params'])}"),
        Check("'initial_carry' gets a non-zero gradient when read outside the loss (as the seed does)",
              _grad_norm(g_out, "initial_carry") > 0,
              f"|dL/dinitial_carry| = {_grad_norm(g_out, 'initial_carry'):.3g}; read inside the loss: "
              f"{_grad_norm(g_in, 'initial_carry'):.3g}"),
        Check("cell parameters do not grow with sequence length", len(set(step_counts.values())) == 1,
              f"one step per apply: {step_counts[3]} parameters for T=3, {step_counts[7]} for T=7"),
    )
    return Recipe(
        "merge", "Merging a hand-made carry into the params dict",
        "Initialise the cell with model.init, make the carry with an initializer, and put it next to the cell's "
        "parameters under 'params'; read it from params inside the loss so the gradient reaches it.",
        "shared/seeds/000 (second answer)", SEED_MERGE_CODE,
        (Defect("nn.GRUCell()", "no features: TypeError on flax >= 0.7"),
         Defect("initial_carry = params['params']['initial_carry']",
                "read outside the differentiated function, the carry gets no gradient")),
        _source(merged_carry_model, merged_carry_params, merged_carry_loss), checks, _source(SeedStepGRU), seed_checks)


def learnable_recipes() -> list[Recipe]:
    """The three learnable-carry patterns of the seed answers, each with live checks on the fixed and seed code."""
    return [_recipe_param(), _recipe_default(), _recipe_merge()]
