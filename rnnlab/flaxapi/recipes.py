"""Learnable-carry recipes: code as people wrote it next to fixed versions, each checked live."""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from jax.nn import initializers

from rnnlab.flaxapi.trees import Initializer, attempt, output, param_count, shapes
from rnnlab.i18n import N_, _, t, tn
from rnnlab.text import PYTHON_PARSE_LOCK

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
        for t in range(inputs.shape[-2]):  # the time axis (np.moveaxis(inputs, 0, -1) walked the features)  # noqa: F402
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
    return jnp.mean(model.apply(params, x, initial_carry=carry) ** 2)  # type: ignore[operator]  # Linen ignores the extra entry


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
    """A piece of the published code (a substring of it) and what is wrong with it on current Flax."""

    code: str
    problem: str


@dataclass(frozen=True)
class Recipe:
    """A learnable-carry pattern: the published code with its defects, the fixed code, and checks run on both."""

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


def grad_text(name: str, norm: float) -> str:
    """The size of the loss's gradient with respect to the parameter ``name``, e.g. ``|dL/dh0| = 0.0693``."""
    # TRANSLATORS: notation: {name} a parameter's name (code), {norm} the gradient's size
    return t("|dL/d{name}| = {norm:.3g}", name=name, norm=norm)


def _standard_checks(init_fn: Callable[[jax.Array], Any], loss_fn: Callable[[Any, jax.Array], jax.Array],
                     name: str) -> tuple[Check, ...]:
    """The three checks: the carry parameter is in params, gets a non-zero gradient, params do not grow with T."""
    params3 = init_fn(_seq(3))
    in_params = name in params3["params"]
    g = jax.grad(loss_fn)(params3, _seq(3))
    norm = _grad_norm(g, name) if in_params else 0.0
    n3 = param_count(_split_carry(params3["params"])[1])
    n7 = param_count(_split_carry(init_fn(_seq(7))["params"])[1])
    return (
        # TRANSLATORS: {name} the carry's parameter name (code)
        Check(t("'{name}' is in params", name=name), in_params,
              t("params keys: {keys}", keys=sorted(params3["params"]))),
        # TRANSLATORS: {name} the carry's parameter name (code)
        Check(t("'{name}' gets a non-zero gradient", name=name), norm > 0, grad_text(name, norm)),
        Check(_("cell parameters do not grow with sequence length"), n3 == n7,
              # TRANSLATORS: {short}, {long}: parameter counts for sequences of length 3 and 7
              t("cell parameters: {short} for T=3, {long} for T=7", short=n3, long=n7)),
    )


def _mean_square_output(model: nn.Module, params: Any, x: jax.Array) -> jax.Array:
    return jnp.mean(output(model, params, x) ** 2)


def _source(*objs: Any) -> str:
    """The source of ``objs`` as shown, without the type checker's and the linter's comments."""
    with PYTHON_PARSE_LOCK:  # inspect.getsource parses the module
        text = "\n\n".join(textwrap.dedent(inspect.getsource(o)).strip() for o in objs) + "\n"
    return re.sub(r"  # (type: ignore\[[\w-]+\]|noqa: [A-Z0-9]+)", "", text)


def _recipe_param() -> Recipe:
    key = jax.random.key(0)
    checks: list[Check] = []
    for cls in (LearnedCarryRNN, LearnedCarryLoop):
        model = cls(F)
        for c in _standard_checks(partial(model.init, key), partial(_mean_square_output, model), "h0"):
            # TRANSLATORS: {model} a class name, {check} what was checked on it
            checks.append(Check(t("{model}: {check}", model=cls.__name__, check=c.name), c.passed, c.detail))
    x = _seq(7)
    params = LearnedCarryRNN(F).init(key, x)
    same_tree = shapes(params) == shapes(LearnedCarryLoop(F).init(key, x))
    diff = float(jnp.max(jnp.abs(output(LearnedCarryRNN(F), params, x) - output(LearnedCarryLoop(F), params, x))))
    checks.append(Check(_("nn.RNN and the one-cell loop are the same model"), same_tree and diff < 1e-5,
                        # TRANSLATORS: {same} True or False; {diff} the largest difference between the outputs
                        t("same parameter tree: {same}; with nn.RNN's parameters the loop's outputs differ by at "
                          "most {diff:.2g}", same=repr(same_tree), diff=diff)))

    seed = SeedLoopGRU(F)
    seed_checks: list[Check] = []
    counts = {}
    for length in (3, 7):
        params = seed.init(jax.random.PRNGKey(1), jax.random.normal(jax.random.key(length), (length, D)))["params"]
        cells = [k for k in params if k.startswith("GRUCell_")]
        counts[length] = (param_count(_split_carry(params)[1]), len(cells),
                     tuple(params[cells[0]]["ir"]["kernel"].shape))
    x3 = jax.random.normal(jax.random.key(3), (3, D))
    p3 = seed.init(jax.random.PRNGKey(1), x3)
    g = jax.grad(lambda p: jnp.mean(output(seed, p, x3)[1] ** 2))(p3)
    seed_checks += [
        Check(t("'{name}' is in params", name="initial_carry"), "initial_carry" in p3["params"],
              t("keys: {keys}", keys=sorted(p3["params"]))),
        Check(t("'{name}' gets a non-zero gradient", name="initial_carry"), _grad_norm(g, "initial_carry") > 0,
              grad_text("initial_carry", _grad_norm(g, "initial_carry"))),
        Check(_("cell parameters do not grow with sequence length"), counts[3][0] == counts[7][0],
              # TRANSLATORS: {short}, {long}: parameter counts for T=3 and T=7; {short_kernel}, {long_kernel}: the
              # input kernel's shapes
              t("cell parameters: {short} for T=3, {long} for T=7 (input kernel {short_kernel} vs {long_kernel}: "
                "each step's input is a column of length T)", short=counts[3][0], long=counts[7][0],
                short_kernel=counts[3][2], long_kernel=counts[7][2])),
        Check(_("one cell shared by all steps"), counts[3][1] == 1,
              # TRANSLATORS: {n} cells made (one per loop step); {last} = {n} - 1; {d} input features
              tn("{n} separate GRUCell (GRUCell_0..GRUCell_{last}) for input (T, {d}): one per loop step, and the "
                 "loop ran {n} time = the {d} features, not the T time steps",
                 "{n} separate GRUCells (GRUCell_0..GRUCell_{last}) for input (T, {d}): one per loop step, and the "
                 "loop ran {n} times = the {d} features, not the T time steps", counts[3][1],
                 last=counts[3][1] - 1, d=D)),
    ]
    return Recipe(
        "param", _("A self.param inside the module"),
        _("Register the initial carry with self.param (no batch axis), broadcast it over the batch, and run ONE cell "
          "over time: with nn.RNN, or with a Python loop around a cell created once."),
        _("a Q&A answer on making GRUCell's carry learnable (first recipe)"), SEED_LOOP_CODE,
        (Defect("nn.GRUCell()", _("no features: TypeError on flax >= 0.7")),
         Defect("for x in np.moveaxis(inputs, 0, -1):", _(MOVEAXIS_DEFECT)),
         Defect("carry, out = nn.GRUCell()(carry, x)", _("a new cell (new weights) on every loop step"))),
        _source(LearnedCarryRNN, LearnedCarryLoop), tuple(checks), _source(SeedLoopGRU), tuple(seed_checks))


MOVEAXIS_DEFECT = N_("moves axis 0 to the end, so the loop walks the old axis 1: for (T, D) input the feature "
                   "axis (D steps of T numbers), for (batch, T, D) input the time axis but with every step "
                   "transposed to (D, batch)")


def moveaxis_steps(shape: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    """The number and shape of the steps ``for x in np.moveaxis(inputs, 0, -1)`` makes on ``inputs`` of ``shape``."""
    steps = list(np.moveaxis(np.zeros(shape), 0, -1))
    return len(steps), tuple(steps[0].shape)


def _recipe_default() -> Recipe:
    key = jax.random.key(0)
    model = CarryDefaultRNN(F)
    checks = list(_standard_checks(lambda x: model.init(key, x),
                                   lambda p, x: jnp.mean(output(model, p, x)[1] ** 2), "carry_init"))
    x = _seq(3)
    params = model.init(key, x)
    carry = model.apply(params, x)[0]
    g = jax.grad(lambda p: jnp.mean(output(model, p, x, carry)[1] ** 2))(params)
    with_carry = model.init(key, x, carry)
    checks += [
        Check(_("a passed carry is used instead (no gradient to the learned one)"), _grad_norm(g, "carry_init") == 0.0,
              # TRANSLATORS: {norm} the gradient's size
              t("|dL/dcarry_init| = {norm:.3g} when the previous chunk's carry is passed",
                norm=_grad_norm(g, "carry_init"))),
        Check(_("init with a carry still creates the parameter"), "carry_init" in with_carry["params"],
              t("keys: {keys}", keys=sorted(with_carry["params"]))),
    ]

    seed = SeedCarryDefaultGRU(F)
    xs = jax.random.normal(jax.random.key(3), (2, D))
    p_none = seed.init(jax.random.PRNGKey(1), xs, None)
    g = jax.grad(lambda p: jnp.mean(output(seed, p, xs)[1] ** 2))(p_none)
    p_carry = seed.init(jax.random.PRNGKey(1), xs, jnp.zeros((F,)))
    err = attempt(lambda: seed.apply(p_carry, xs))[1]
    seq_counts = {t: param_count(_split_carry(seed.init(jax.random.PRNGKey(1), _seq(t)[:, 0], None)["params"])[1])
                  for t in (3, 7)}
    seed_checks = (
        Check(_("'carry_init' is in params after model.init(rng, inputs, None)"), "carry_init" in p_none["params"],
              t("keys: {keys}", keys=sorted(p_none["params"]))),
        Check(t("'{name}' gets a non-zero gradient", name="carry_init"), _grad_norm(g, "carry_init") > 0,
              grad_text("carry_init", _grad_norm(g, "carry_init"))),
        Check(_("cell parameters do not grow with sequence length"), seq_counts[3] == seq_counts[7],
              # TRANSLATORS: {n} parameters of one step
              tn("one step per apply: {n} parameter whatever T", "one step per apply: {n} parameters whatever T",
                 seq_counts[3])),
        Check(_("init with a carry creates the parameter"), "carry_init" in p_carry["params"],
              # TRANSLATORS: {keys} the parameter names; {error} Flax's own error message (English)
              t("model.init(rng, inputs, carry) gives keys {keys}; apply(params, inputs) then fails: {error}",
                keys=sorted(p_carry["params"]), error=err)),
    )
    return Recipe(
        "default", _("A carry=None default that falls back to the learned carry"),
        _("Create the parameter on every call and use it only when no carry is passed: the first chunk starts from "
          "the learned carry, later chunks pass the carry returned by the previous one."),
        _("a Q&A answer on a trainable GRUCell carry"), SEED_CARRY_NONE_CODE,
        (Defect("nn.GRUCell()", _("no features: TypeError on flax >= 0.7")),
         Defect("if carry is None:\n        # Learnable initial carry\n        carry = self.param(",
                _("the parameter exists only if model.init was called with carry=None")),
         Defect("jnp.zeros(shape)", _("the question imported jax.numpy as np, so jnp is undefined there"))),
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
    step_counts = {t: param_count(seed.init(jax.random.PRNGKey(1), jnp.zeros((F,)), _seq(t, ())[0])) for t in (3, 7)}
    outside = params["params"]["initial_carry"]
    g_out = jax.grad(lambda p: jnp.mean(output(seed, p, outside, xs)[1] ** 2))(params)
    g_in = jax.grad(lambda p: jnp.mean(output(seed, p, p["params"]["initial_carry"], xs)[1] ** 2))(params)
    seed_checks = (
        Check(t("'{name}' is in params", name="initial_carry"), "initial_carry" in params["params"],
              t("keys: {keys}", keys=sorted(params["params"]))),
        Check(_("'initial_carry' gets a non-zero gradient when read outside the loss (as the seed does)"),
              _grad_norm(g_out, "initial_carry") > 0,
              # TRANSLATORS: {outside}, {inside}: the gradient's size with the carry read outside / inside the loss
              t("|dL/dinitial_carry| = {outside:.3g}; read inside the loss: {inside:.3g}",
                outside=_grad_norm(g_out, "initial_carry"), inside=_grad_norm(g_in, "initial_carry"))),
        Check(_("cell parameters do not grow with sequence length"), len(set(step_counts.values())) == 1,
              # TRANSLATORS: {short}, {long}: parameter counts for T=3 and T=7
              t("one step per apply: {short} parameters for T=3, {long} for T=7", short=step_counts[3],
                long=step_counts[7])),
    )
    return Recipe(
        "merge", _("Merging a hand-made carry into the params dict"),
        _("Initialise the cell with model.init, make the carry with an initializer, and put it next to the cell's "
          "parameters under 'params'; read it from params inside the loss so the gradient reaches it."),
        _("a Q&A answer on making GRUCell's carry learnable (second recipe)"), SEED_MERGE_CODE,
        (Defect("nn.GRUCell()", _("no features: TypeError on flax >= 0.7")),
         Defect("initial_carry = params['params']['initial_carry']",
                _("read outside the differentiated function, the carry gets no gradient"))),
        _source(merged_carry_model, merged_carry_params, merged_carry_loss), checks, _source(SeedStepGRU), seed_checks)


def learnable_recipes() -> list[Recipe]:
    """The three learnable-carry patterns people published, with live checks on the published and fixed code."""
    return [_recipe_param(), _recipe_default(), _recipe_merge()]
