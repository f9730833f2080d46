"""Run each snippet of the real-code corpus and report the shapes it makes (on whichever Flax is installed).

The same harness runs the original snippets on flax 0.6.11 (``old_flax/record.py``, which stores the results)
and the checker's rewrites on the pinned Flax (``test_corpus.py``, which compares them). A snippet that is a
test method from Flax's own suite is run as that test (its assertions check the shapes); a model snippet is
initialised and applied on small inputs by the code in ``HARNESS``. This module imports nothing from rnnlab.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "corpus"

HARNESS: dict[str, str] = {
    "flax_seq2seq_example": """
model = Seq2seq(teacher_force=True, hidden_size=8, vocab_size=4)
enc = jax.nn.one_hot(jnp.array([[2, 3, 1, 0, 0], [3, 1, 0, 0, 0]]), 4)
dec = jax.nn.one_hot(jnp.array([[0, 2, 3, 1], [0, 3, 1, 1]]), 4)
variables = model.init({'params': random.PRNGKey(0), 'lstm': random.PRNGKey(1)}, enc, dec)
logits, predictions = model.apply(variables, enc, dec, rngs={'lstm': random.PRNGKey(2)})
result = {'params': variables, 'logits': logits, 'predictions': predictions}
""",
    "flax_sst2_example": """
model = SimpleBiLSTM(hidden_size=6)
x = jnp.ones((2, 5, 3))
lengths = jnp.array([5, 3])
variables = model.init(random.PRNGKey(0), x, lengths)
result = {'params': variables, 'outputs': model.apply(variables, x, lengths)}
""",
    "evojax_seq2seq": """
model = Seq2seq(teacher_force=True, hidden_size=8)
enc = jnp.ones((1, 7, char_table.vocab_size))
dec = jnp.ones((1, 6, char_table.vocab_size))
variables = model.init({'params': random.PRNGKey(0), 'lstm': random.PRNGKey(0)}, enc, dec)
result = {'params': variables, 'outputs': model.apply(variables, enc, dec)}
""",
    "evojax_mlp_pi": """
model = AttentionNeuronMLP(act_dim=2, msg_dim=4, hidden_dim=5, pos_em_dim=3, pos_em=np.ones((5, 3)))
obs, prev_act = jnp.ones((6,)), jnp.ones((2,))
carry = (jnp.zeros((6, 3)), jnp.zeros((6, 3)))
variables = model.init(random.PRNGKey(0), obs, prev_act, carry)
result = {'params': variables, 'outputs': model.apply(variables, obs, prev_act, carry)}
""",
    "evosax_lstm": """
model = LSTM(num_hidden_units=8, num_output_units=2)
carry = model.initialize_carry()
x = jnp.ones((4,))
variables = model.init(random.PRNGKey(0), x, carry)
result = {'carry': carry, 'params': variables, 'outputs': model.apply(variables, x, carry)}
""",
    "d2l_gru": """
model = GRU(num_hiddens=8, num_layers=2)
X = jnp.ones((5, 3, 4))
variables = model.init(random.PRNGKey(0), X)
result = {'params': variables, 'outputs': model.apply(variables, X)}
""",
    "flax_linen_intro_doc": """
result = {'params': init_variables, 'outputs': y}
""",
    "flax_scan_docstring_0_3_6": """
result = {'init_carry': init_carry, 'params': variables, 'out_carry': out_carry, 'outputs': out_val}
""",
}
"""Model snippets: code run after the snippet, in its namespace, that sets ``result`` (a tree of arrays)."""

NOT_RUN: dict[str, str] = {
    "flax_extra_lstm": "imports flax_extra's combinators, which are not installed",
    "qdax_seq2seq": "written for flax >= 0.7 already (no old-API site): it is in the corpus to catch false alarms",
}
"""Snippets the harness does not run, and why."""

TEST_METHOD = re.compile(r"^  def (test_\w+)\(self\)", re.M)
TEST_CLASS = re.compile(r"^class (\w+)\(absltest\.TestCase\)", re.M)


def snippet_ids() -> list[str]:
    return sorted(p.stem for p in CORPUS.glob("*.py"))


def read(snippet: str) -> str:
    return (CORPUS / f"{snippet}.py").read_text()


def shapes(tree: Any, prefix: str = "") -> dict[str, list[int]]:
    """``{'path/to/leaf': shape}`` for every array in a tree of mappings, tuples and lists."""
    if isinstance(tree, Mapping):
        out: dict[str, list[int]] = {}
        for key in sorted(tree, key=str):
            out.update(shapes(tree[key], f"{prefix}/{key}"))
        return out
    if isinstance(tree, (tuple, list)):
        out = {}
        for i, item in enumerate(tree):
            out.update(shapes(item, f"{prefix}/{i}"))
        return out
    if hasattr(tree, "shape"):
        return {prefix or "/": [int(d) for d in tree.shape]}
    return {}


def run_snippet(snippet: str, code: str) -> dict[str, Any]:
    """Run one snippet's code and its harness: ``{"ok": True, "shapes": ...}`` or ``{"ok": False, "error": ...}``."""
    import numpy

    numpy_before = dict(vars(numpy))  # a snippet may patch numpy (np.bool); the rest of the process must not see it
    module = types.ModuleType(f"corpus_{snippet}")  # dataclasses (Flax modules) look their module up
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, f"<corpus {snippet}>", "exec"), namespace)  # noqa: S102 - the test corpus itself
            if snippet in HARNESS:
                exec(compile(HARNESS[snippet], f"<harness {snippet}>", "exec"), namespace)  # noqa: S102
                return {"ok": True, "shapes": shapes(namespace["result"])}
            cls = namespace[TEST_CLASS.search(code).group(1)]  # type: ignore[union-attr]
            for method in TEST_METHOD.findall(code):
                getattr(cls(method), method)()
            return {"ok": True, "shapes": {}}
    except Exception as e:  # noqa: BLE001 - the failure is the result
        return {"ok": False, "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
    finally:
        sys.modules.pop(module.__name__, None)
        for name in set(vars(numpy)) - set(numpy_before):  # what a snippet added, but for submodules it imported
            if not isinstance(vars(numpy)[name], types.ModuleType):  # (numpy.testing: importing it again finds it)
                delattr(numpy, name)
        for name, value in numpy_before.items():
            if vars(numpy).get(name) is not value:
                setattr(numpy, name, value)


def runnable(snippet: str) -> bool:
    return snippet not in NOT_RUN and (snippet in HARNESS or bool(TEST_CLASS.search(read(snippet))))


def run_all(transform: Callable[[str], str] | None = None) -> dict[str, dict[str, Any]]:
    """Every runnable snippet, each first passed through ``transform`` (e.g. the checker's rewrite)."""
    return {s: run_snippet(s, transform(read(s)) if transform else read(s)) for s in snippet_ids() if runnable(s)}
