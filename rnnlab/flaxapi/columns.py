"""Old Linen (<= 0.6) vs new Linen (>= 0.7) vs NNX, computed live: the carries each API makes.

The old column runs :mod:`rnnlab.flaxapi.legacy`; the other two the installed Flax. No Streamlit, no user code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jax.nn import initializers

from rnnlab.flaxapi.legacy import (
    LAST_OLD_VERSION,
    LATER_CELLS,
    NEW_API_VERSION,
    OLD_JAX_VERSION,
    OLD_MISSING_INIT_MESSAGES,
    legacy_initialize_carry,
    old_missing_init,
    old_prng,
)
from rnnlab.flaxapi.trees import Initializer, kernel_shape, param_count, resolve_cell
from rnnlab.i18n import N_, _, join_clauses, t, tn, tp
from rnnlab.model.cell_spec import CellSpec
from rnnlab.model.cells import CARRY_INITS, CELLS, CarryInitSpec
from rnnlab.text import error_text

N_VALUES = 6  # first values shown per carry leaf
MAX_CARRY_ELEMENTS = 1_000_000  # largest carry leaf (batch x spatial x hidden) the comparison will build


def compare_size_error(cell: str, batch_dims: tuple[int, ...], in_features: int, hidden: int,
                       spatial: tuple[int, ...] = (8, 8)) -> str | None:
    """Why :func:`compare` refuses these sizes (each column builds carries of this size), or None."""
    spec = resolve_cell(cell)
    sizes = [*batch_dims, *(spatial if spec.spatial else ()), in_features, hidden]
    if any(not isinstance(d, int) or isinstance(d, bool) or d < 1 for d in sizes):
        return t("Every size must be a whole number of at least 1 (got {sizes}).", sizes=tuple(sizes))
    leaf = math.prod(batch_dims) * math.prod(spatial if spec.spatial else ()) * hidden
    if leaf > MAX_CARRY_ELEMENTS and spec.spatial:
        # TRANSLATORS: {n} numbers in one carry leaf; {max} the largest the page builds
        return tn("The carry would have {n:,} number per leaf (batch x spatial x hidden); the comparison builds at "
                  "most {max:,}. Use fewer batch dims or hidden features.",
                  "The carry would have {n:,} numbers per leaf (batch x spatial x hidden); the comparison builds at "
                  "most {max:,}. Use fewer batch dims or hidden features.", leaf, max=MAX_CARRY_ELEMENTS)
    if leaf > MAX_CARRY_ELEMENTS:
        # TRANSLATORS: {n} numbers in one carry leaf; {max} the largest the page builds
        return tn("The carry would have {n:,} number per leaf (batch x hidden); the comparison builds at most "
                  "{max:,}. Use fewer batch dims or hidden features.",
                  "The carry would have {n:,} numbers per leaf (batch x hidden); the comparison builds at most "
                  "{max:,}. Use fewer batch dims or hidden features.", leaf, max=MAX_CARRY_ELEMENTS)
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

    cell: str  # registry name (rnnlab.model.cells.CELLS)
    flax_name: str
    input_shape: tuple[int, ...]  # one time step of input: batch_dims (+ spatial) + (in_features,)
    carry_init: str
    columns: tuple[Column, ...]
    pairs: tuple[PairVerdict, ...]
    verdict: str

    @property
    def identical(self) -> bool:
        """Every column worked and every pair gave the same arrays."""
        return all(c.ok for c in self.columns) and all(p.status == "identical" for p in self.pairs)

    def column(self, key: str) -> Column:
        return next(c for c in self.columns if c.key == key)

    def pair(self, left: str, right: str) -> PairVerdict:
        return next(p for p in self.pairs if {p.left, p.right} == {left, right})


TITLES = {  # {version}: a Flax version; translated by title()
    "old_linen": N_("Old Linen (flax <= {version})"),
    "new_linen": N_("New Linen (flax >= {version})"),
    "nnx": N_("NNX (flax.nnx)"),
}
VERSIONS = {"old_linen": LAST_OLD_VERSION, "new_linen": NEW_API_VERSION, "nnx": ""}


def title(key: str) -> str:
    """The column ``key``'s title in the reader's language."""
    return t(TITLES[key], version=VERSIONS[key])


def status_label(status: str) -> str:
    """A pair verdict's status ("identical", "different", "not comparable") in the reader's language."""
    if status == "identical":
        return tp("verdict", "identical")
    if status == "different":
        return tp("verdict", "different")
    return tp("verdict", "not comparable")


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
    if len(spec.leaves) > 1:
        # TRANSLATORS: a Python tuple of carry arrays, e.g. "tuple (c, h)"
        return t("tuple ({leaves})", leaves=", ".join(spec.leaves))
    # TRANSLATORS: one carry array, e.g. "array h"
    return t("array {leaf}", leaf=spec.leaves[0])


def comment(text: str) -> str:
    """A line's comment in a code snippet, in the reader's language: '# text' and the line's end."""
    return f"# {text}\n"


def _done(key: str, code: str, spec: CellSpec, carry: Any, calls: list[InitCall], notes=(), caveats=()) -> Column:
    arrays = tuple(np.asarray(a) for a in spec.carry_as_tuple(carry))
    return Column(key, title(key), code, _structure(spec), _leaves(spec, carry), None, tuple(notes),
                  tuple(caveats), tuple(calls), arrays)


def _old_column(spec, batch_dims, hidden, spatial, kernel, init_spec, value, seed, param_dtype) -> Column:
    name = spec.cls.__name__
    size = tuple(spatial) + (hidden,) if spec.spatial else hidden
    init_arg = "" if init_spec.name == "zeros" else f", init_fn={_init_expr(init_spec, value)}"
    # TRANSLATORS: a comment in a code snippet (after "# "): keep the code words (batch_dims, size) as they are
    head = (comment(t("flax <= {version}: a static method; you pass batch_dims and size yourself",
                      version=LAST_OLD_VERSION))
            + "import jax\nimport flax.linen as nn\nfrom jax.nn import initializers\n\n")
    if name in LATER_CELLS:
        # TRANSLATORS: a comment in a code snippet: {cell} (nn.MGUCell) was added to Flax in version {version}
        code = comment(t("{cell} did not exist in flax 0.6.x (added in flax {version})", cell=f"nn.{name}",
                         version=LATER_CELLS[name]))
        return Column("old_linen", title("old_linen"), head + code,
                      error=t("{cell} did not exist in flax 0.6.x: it was added in flax {version}", cell=name,
                              version=LATER_CELLS[name]))
    if init_spec.name in OLD_MISSING_INIT_MESSAGES:
        return Column("old_linen", title("old_linen"), head + comment(old_missing_init(init_spec.name)),
                      # TRANSLATORS: {missing} says which initializer jax lacked; {version} is a flax version
                      error=t("{missing}, so flax {version} code could not use it",
                              missing=old_missing_init(init_spec.name), version=LAST_OLD_VERSION))
    code = head + (f"key = jax.random.PRNGKey({seed})\n"
                   f"carry = nn.{name}.initialize_carry(key, {tuple(batch_dims)!r}, {size!r}{init_arg})\n")
    if spec.spatial:
        # TRANSLATORS: a comment in a code snippet; {cell} is code (nn.ConvLSTMCell(features=4, kernel_size=(3, 3)))
        code += comment(t("size = spatial + (features,); the cell itself: {cell}",
                          cell=f"nn.{name}(features={hidden}, kernel_size={kernel})"))
    calls: list[InitCall] = []
    init = init_spec.build(value)
    carry = legacy_initialize_carry(name, jax.random.PRNGKey(seed), tuple(batch_dims), size, _spy(init, calls))
    notes = [_("init_fn is called without a dtype: the carry is float32 whatever the cell's param_dtype"),
             # TRANSLATORS: {version} the last flax 0.6 release, {jax} the jax it ran on
             t("the numbers are flax {version}'s: drawn with jax < 0.5 random numbers "
               "(jax_threefry_partitionable=False, as on jax {jax}); today's jax draws other numbers from the same "
               "key", version=LAST_OLD_VERSION, jax=OLD_JAX_VERSION)]
    if param_dtype != "float32":
        notes.append(t("param_dtype={dtype} cannot reach the carry in 0.6.x; cast it yourself", dtype=param_dtype))
    return _done("old_linen", code, spec, carry, calls, notes)


def _new_column(spec, batch_dims, input_shape, hidden, kernel, init_spec, value, seed, param_dtype) -> Column:
    name = spec.cls.__name__
    args = [f"features={hidden}"]
    if spec.spatial:
        args.append(f"kernel_size={kernel!r}")
    if init_spec.name != "zeros":
        args.append(f"carry_init={_init_expr(init_spec, value)}")
    if param_dtype != "float32":
        args.append(f"param_dtype=jnp.{param_dtype}")
    # TRANSLATORS: a comment in a code snippet: keep the code words (features, carry_init, initialize_carry)
    code = (comment(t("flax >= {version}: the cell holds features and carry_init; initialize_carry is an instance "
                      "method", version=NEW_API_VERSION))
            + "import jax\n" + ("import jax.numpy as jnp\n" if param_dtype != "float32" else "")
            + "import flax.linen as nn\nfrom jax.nn import initializers\n\n"
            f"key = jax.random.key({seed})\n"
            f"cell = nn.{name}({', '.join(args)})\n"
            f"carry = cell.initialize_carry(key, {tuple(input_shape)!r})  "
            # TRANSLATORS: a comment at the end of a line of code: what initialize_carry's argument input_shape is
            + comment(_("input_shape: one time step of input")))
    calls: list[InitCall] = []
    kwargs: dict[str, Any] = {"carry_init": _spy(init_spec.build(value), calls), "param_dtype": jnp.dtype(param_dtype)}
    if spec.spatial:
        kwargs["kernel_size"] = kernel
    cell = spec.cls(features=hidden, **kwargs)
    carry = cell.initialize_carry(jax.random.key(seed), tuple(input_shape))
    notes = [f"input_shape {tuple(input_shape)}: batch_dims = input_shape[:-{cell.num_feature_axes}] = "
             f"{tuple(input_shape)[:-cell.num_feature_axes]}; num_feature_axes = {cell.num_feature_axes}",
             t("the cell passes param_dtype={dtype} to carry_init", dtype=jnp.dtype(param_dtype).name)]
    return _done("new_linen", code, spec, carry, calls, notes)


def gru_linen_to_nnx(linen: Any, nnx_cell: Any) -> None:
    """Copy a Linen GRUCell's parameters into an NNX GRUCell (which has no place for Linen's ``hn`` bias)."""
    nnx_cell.dense_i.kernel.value = jnp.concatenate([linen[k]["kernel"] for k in ("ir", "iz", "in")], axis=-1)
    nnx_cell.dense_i.bias.value = jnp.concatenate([linen[k]["bias"] for k in ("ir", "iz", "in")], axis=-1)
    nnx_cell.dense_h.kernel.value = jnp.concatenate([linen[k]["kernel"] for k in ("hr", "hz", "hn")], axis=-1)


def gru_output_gap(in_features: int, hidden: int, b_hn: float) -> float:
    """Max |Linen GRU - NNX GRU| on one random step, with Linen's weights copied and Linen's b_hn set to ``b_hn``."""
    x = jax.random.normal(jax.random.key(1), (4, in_features))
    h = jax.random.normal(jax.random.key(2), (4, hidden))
    params = nn.GRUCell(hidden).init(jax.random.key(0), h, x)["params"]
    params = {**params, "hn": {**params["hn"], "bias": jnp.full((hidden,), b_hn)}}
    cell = nnx.GRUCell(in_features, hidden, rngs=nnx.Rngs(0))
    gru_linen_to_nnx(params, cell)
    linen_h = nn.GRUCell(hidden).apply({"params": params}, h, x)[0]
    return float(jnp.max(jnp.abs(linen_h - cell(h, x)[0])))


def _gru_bias_note(in_features: int, hidden: int, nnx_cell: Any) -> str:
    """Compare the Linen and NNX GRUs live: parameter counts, and outputs with Linen's weights copied into NNX."""
    linen = nn.GRUCell(hidden).init(jax.random.key(0), jnp.zeros((hidden,)), jnp.zeros((in_features,)))["params"]
    n_linen, n_nnx = param_count(linen), param_count(nnx.state(nnx_cell, nnx.Param))
    has_b_hn = "bias" in linen.get("hn", {})
    nnx_h_bias = getattr(nnx_cell.dense_h, "bias", None) is not None
    if has_b_hn and not nnx_h_bias:
        same, apart = gru_output_gap(in_features, hidden, 0.0), gru_output_gap(in_features, hidden, 0.5)
        # TRANSLATORS: {linen}, {nnx}: parameter counts; {n}: the size of Linen's b_hn bias; {same}, {apart}: the
        # largest output difference with b_hn = 0 and b_hn = 0.5
        return tn("parameters: Linen GRUCell {linen}, NNX GRUCell {nnx}; NNX has no b_hn (Linen's 'hn' bias, {n} "
                  "number). With Linen's weights copied into NNX the two give the same step while b_hn = 0 (max "
                  "|difference| {same:.2g}), as it starts; once b_hn is not 0 they differ (b_hn = 0.5: {apart:.2g}), "
                  "so a trained Linen GRU may have no NNX twin",
                  "parameters: Linen GRUCell {linen}, NNX GRUCell {nnx}; NNX has no b_hn (Linen's 'hn' bias, {n} "
                  "numbers). With Linen's weights copied into NNX the two give the same step while b_hn = 0 (max "
                  "|difference| {same:.2g}), as it starts; once b_hn is not 0 they differ (b_hn = 0.5: {apart:.2g}), "
                  "so a trained Linen GRU may have no NNX twin", hidden, linen=n_linen, nnx=n_nnx, same=same,
                  apart=apart)
    # TRANSLATORS: {linen}, {nnx}: parameter counts of the two GRU cells
    return t("parameters: Linen GRUCell {linen}, NNX GRUCell {nnx}", linen=n_linen, nnx=n_nnx)


def _nnx_column(spec, input_shape, in_features, hidden, init_spec, value, seed, param_dtype) -> Column:
    name = spec.cls.__name__
    head = "from flax import nnx\nfrom jax.nn import initializers\n\n"
    nnx_cls = getattr(nnx, name, None)
    if nnx_cls is None:
        have = ", ".join(s.cls.__name__ for s in CELLS.values() if hasattr(nnx, s.cls.__name__))
        return Column("nnx", title("nnx"), head + comment(t("flax.nnx has no {cell}", cell=name)),
                      error=t("flax.nnx has no {cell} (NNX cells: {cells})", cell=name, cells=have))
    dtype_arg = f", param_dtype=jnp.{param_dtype}" if param_dtype != "float32" else ""
    init_arg = "" if init_spec.name == "zeros" else f", carry_init={_init_expr(init_spec, value)}"
    # TRANSLATORS: a comment in a code snippet: keep the code words (in_features, hidden_features, rngs, Rngs)
    code = (comment(_("flax.nnx: the cell is built eagerly (in_features, hidden_features, rngs); the carry draws its "
                      "keys from an Rngs stream"))
            + ("import jax.numpy as jnp\n" if param_dtype != "float32" else "") + head
            + f"cell = nnx.{name}({in_features}, {hidden}, rngs=nnx.Rngs({seed}){dtype_arg})\n"
            f"carry = cell.initialize_carry({tuple(input_shape)!r}, rngs=nnx.Rngs({seed}){init_arg})\n")
    cell = nnx_cls(in_features, hidden, rngs=nnx.Rngs(seed), param_dtype=jnp.dtype(param_dtype))
    notes, caveats = [], []
    try:  # NNX needs an RNG even for zeros: reproduce it live
        cell.initialize_carry(tuple(input_shape), carry_init=initializers.zeros)
        notes.append(_("cell.initialize_carry(input_shape) without rngs worked"))
    except ValueError as e:
        # TRANSLATORS: {shape} an input shape, {error} Flax's own error message (English)
        caveats.append(t("NNX needs an RNG even for zeros: cell.initialize_carry({shape}) without rngs -> {error}",
                         shape=repr(tuple(input_shape)), error=error_text(e)))
    calls: list[InitCall] = []
    carry = cell.initialize_carry(tuple(input_shape), rngs=nnx.Rngs(seed), carry_init=_spy(init_spec.build(value),
                                                                                            calls))
    if name == "GRUCell":
        caveats.append(_gru_bias_note(in_features, hidden, cell))
    return _done("nnx", code, spec, carry, calls, notes, caveats)


def _key_names(bits: tuple[int, ...], seed: int, old: bool = False) -> str:
    """Names of a recorded key in terms of key(seed): the key itself, split(key)[i], fold_in(key, i).

    ``old``: the key was made under :func:`old_prng` (jax 0.4.x's split), so it is named under that PRNG.
    """
    if old:
        with old_prng():
            # TRANSLATORS: {names} names of a random key, made by jax 0.4.x's split
            return t("{names} (jax 0.4.x split)", names=_key_names(bits, seed))
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
    return " = ".join(names) or t("key bits {bits}", bits=list(bits))


def _compare(a: Column, b: Column, seed: int, random_init: bool) -> PairVerdict:
    if not (a.ok and b.ok):
        # TRANSLATORS: {title} a column's title, {error} why that API cannot build the carry
        return PairVerdict(a.key, b.key, "not comparable", tuple(t("{title}: {error}", title=c.title, error=c.error)
                                                                 for c in (a, b) if c.error))
    reasons: list[str] = []
    if a.structure != b.structure:
        reasons.append(t("structure: {left} vs {right}", left=a.structure, right=b.structure))
    shapes_a, shapes_b = [x.shape for x in a.arrays], [x.shape for x in b.arrays]
    if shapes_a != shapes_b:
        reasons.append(t("shapes: {left} vs {right}", left=shapes_a, right=shapes_b))
    dtypes_a, dtypes_b = {x.dtype.name for x in a.arrays}, {x.dtype.name for x in b.arrays}
    if dtypes_a != dtypes_b:
        passed = {c.key: sorted({call.dtype or _("no dtype (float32)") for call in c.calls}) for c in (a, b)}
        # TRANSLATORS: {left}, {right}: lists of dtypes; {left_got}, {right_got}: the dtypes the initializer was
        # called with by the columns {left_title} and {right_title}
        reasons.append(t("dtype: {left} vs {right}; the initializer got {left_got} from {left_title} and {right_got} "
                         "from {right_title} (0.6.x passed no dtype, from 0.7 the cell passes param_dtype)",
                         left=sorted(dtypes_a), right=sorted(dtypes_b), left_got=passed[a.key], left_title=a.title,
                         right_got=passed[b.key], right_title=b.title))
    keys_a, keys_b = [c.key for c in a.calls], [c.key for c in b.calls]
    # TRANSLATORS: {left}, {right}: column titles; {left_keys}, {right_keys}: the random keys each one used
    keys_text = t("{left} used {left_keys}; {right} used {right_keys}",
                  left=a.title, left_keys=", ".join(_key_names(k, seed, a.key == "old_linen") for k in keys_a),
                  right=b.title, right_keys=", ".join(_key_names(k, seed, b.key == "old_linen") for k in keys_b))
    same_values = shapes_a == shapes_b and all(
        np.array_equal(x.astype(np.float32), y.astype(np.float32)) for x, y in zip(a.arrays, b.arrays, strict=True))
    if not same_values and shapes_a == shapes_b:
        diff = max(float(np.max(np.abs(x.astype(np.float32) - y.astype(np.float32)), initial=0.0))
                   for x, y in zip(a.arrays, b.arrays, strict=True))
        if {a.key, b.key} == {"old_linen", "new_linen"} and dtypes_a == dtypes_b:
            cause = _("flax 0.6 ran on jax 0.4.x, whose PRNG splits keys and draws numbers differently from today's "
                      "(jax_threefry_partitionable); under one PRNG the two compute the same arrays")
        elif keys_a != keys_b:
            cause = _("different keys")
        elif dtypes_a != dtypes_b:
            low = min((x.dtype for x in (*a.arrays, *b.arrays)), key=lambda d: d.itemsize)
            rounded = all(np.array_equal(x.astype(low), y.astype(low)) for x, y in zip(a.arrays, b.arrays, strict=True))
            cause = (t("same keys; only rounding to {dtype}", dtype=low.name) if rounded else
                     t("same keys, but the initializer draws in {dtype} directly (not a rounded float32)",
                       dtype=low.name))
        else:
            cause = _("same keys")
        # TRANSLATORS: {diff} the largest difference; {cause} why the values differ; {keys} which keys each used
        reasons.append(t("values differ (max |difference| {diff:.3g}), {cause}: {keys}", diff=diff, cause=cause,
                         keys=keys_text))
    elif keys_a != keys_b:
        if not random_init:
            reasons.append(t("same values although the keys differ (the initializer ignores the key): {keys}",
                             keys=keys_text))
        else:
            reasons.append(t("same values although the keys differ (the keys drew the same numbers): {keys}",
                             keys=keys_text))
    else:
        reasons.append(t("same keys: {keys}", keys=keys_text))
    status = "identical" if same_values and dtypes_a == dtypes_b and a.structure == b.structure else "different"
    return PairVerdict(a.key, b.key, status, tuple(reasons))


def _verdict(columns: tuple[Column, ...], pairs: tuple[PairVerdict, ...]) -> str:
    """First line "identical: ..." when every pair is identical; then each pair with its reasons, then caveats."""
    lines = []
    if all(c.ok for c in columns) and all(p.status == "identical" for p in pairs):
        lines.append(_("identical: all three APIs give the same arrays"))
    for p in pairs:
        # TRANSLATORS: {left}, {right}: column titles; {status}: identical / different / not comparable;
        # {reasons}: why, clauses joined by semicolons
        lines.append(t("{left} vs {right}: {status}: {reasons}", left=title(p.left), right=title(p.right),
                       status=status_label(p.status), reasons=join_clauses(p.reasons)))
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

    ``cell`` is a registry name (``rnnlab.model.cells.CELLS``) or a Flax class name; ``carry_init`` a name of
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
    kernel = kernel_shape(kernel_size, len(spatial))
    columns = (
        _old_column(spec, batch_dims, hidden, spatial, kernel, init_spec, value, seed, param_dtype),
        _new_column(spec, batch_dims, input_shape, hidden, kernel, init_spec, value, seed, param_dtype),
        _nnx_column(spec, input_shape, in_features, hidden, init_spec, value, seed, param_dtype),
    )
    old, new, nnx_col = columns
    pairs = tuple(_compare(a, b, seed, init_spec.random) for a, b in ((old, new), (new, nnx_col), (old, nnx_col)))
    return Comparison(spec.name, spec.cls.__name__, input_shape, init_spec.describe(value), columns, pairs,
                      _verdict(columns, pairs))
