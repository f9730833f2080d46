"""Record what real flax 0.6.11 on jax 0.4.13 computes, for the tests to compare against (CI only reads the file).

Run ``python tests/flaxapi/old_flax/record.py``. Under any other Flax it first builds a throwaway venv with
flax 0.6.11 and jax 0.4.13 (``--venv``, default ``~/.cache/rnnlab/flax-0.6.11``; numpy < 2, flax installed
without its dependencies plus the few packages it imports) and runs itself there. It writes
``flax_0_6_11.json`` next to this file:

- ``carries``: ``nn.<Cell>.initialize_carry(PRNGKey(seed), batch_dims, size, init_fn)`` for the four 0.6 cells,
  several batch dims, sizes, initializers and seeds, every value of every leaf;
- ``facts``: the behaviour of jax 0.4.13 and flax 0.6.11 that the page's claims describe, and nn.RNN's fields
  in flax 0.6.11 to 0.7.5 (read from the released wheels);
- ``corpus``: for each snippet of real old code in ``tests/flaxapi/corpus``, the carry, output and parameter
  shapes its harness gives (see ``corpus_harness.py``).

This file imports nothing from rnnlab: it must run on the old Flax.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "flax_0_6_11.json"
FLAX, JAX = "0.6.11", "0.4.13"
PACKAGES = [
    ["numpy<2", f"jax=={JAX}", f"jaxlib=={JAX}", "msgpack", "typing_extensions", "PyYAML", "rich",
     "optax==0.1.7", "chex==0.1.82", "toolz", "dm-tree", "etils", "absl-py", "orbax-checkpoint==0.2.7",
     "tensorstore", "nest_asyncio"],
    ["--no-deps", f"flax=={FLAX}"],
]

INITS = {  # name -> (expression, builder)
    "zeros": "initializers.zeros",
    "ones": "initializers.ones",
    "constant(0.5)": "initializers.constant(0.5)",
    "normal(0.1)": "initializers.normal(stddev=0.1)",
    "normal(1.0)": "initializers.normal(stddev=1.0)",
    "uniform(0.1)": "initializers.uniform(scale=0.1)",
}
CELLS = ("LSTMCell", "OptimizedLSTMCell", "GRUCell", "ConvLSTMCell")
SHAPES = (  # (batch_dims, hidden, spatial for ConvLSTM, seed)
    ((), 4, (3,), 0),
    ((4,), 5, (2, 2), 0),
    ((2,), 3, (2, 3), 1),
    ((3, 2), 5, (2,), 42),
    ((1,), 2, (1, 1), 7),
)


def ensure_old_python(venv: Path) -> None:
    """Re-run this script under flax 0.6.11, building the venv first if needed."""
    try:
        import flax

        if flax.__version__ == FLAX:
            return
    except ImportError:
        pass
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        for group in PACKAGES:
            subprocess.run([str(python), "-m", "pip", "install", "-q", *group], check=True)
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    sys.exit(subprocess.run([str(python), __file__, *sys.argv[1:]], env=env).returncode)


def record_carries() -> list[dict]:
    import flax.linen as nn
    import jax
    import numpy as np
    from jax.nn import initializers  # noqa: F401 (used by eval)

    cases = []
    for cell in CELLS:
        for init_name, expr in INITS.items():
            for batch_dims, hidden, spatial, seed in SHAPES:
                size = tuple(spatial) + (hidden,) if cell == "ConvLSTMCell" else hidden
                carry = getattr(nn, cell).initialize_carry(jax.random.PRNGKey(seed), batch_dims, size, eval(expr))
                leaves = carry if isinstance(carry, tuple) else (carry,)
                cases.append({
                    "cell": cell, "init": init_name, "batch_dims": list(batch_dims), "hidden": hidden,
                    "spatial": list(spatial) if cell == "ConvLSTMCell" else None, "seed": seed,
                    "leaves": [{"shape": list(a.shape), "dtype": str(a.dtype),
                                "values": [float(v) for v in np.asarray(a).ravel()]} for a in leaves],
                })
    return cases


def record_facts() -> dict:
    import dataclasses

    import flax
    import flax.linen as nn
    import jax
    import numpy as np

    key = jax.random.PRNGKey(0)
    split0 = np.asarray(jax.random.split(key)[0])
    return {
        "jax": jax.__version__,
        "flax": flax.__version__,
        "threefry_partitionable": bool(jax.config.jax_threefry_partitionable),
        "split0_equals_fold_in0": bool(np.array_equal(split0, np.asarray(jax.random.fold_in(key, 0)))),
        "rnn_fields": [f.name for f in dataclasses.fields(nn.RNN) if f.name not in ("parent", "name")],
        "has_truncated_normal": hasattr(jax.nn.initializers, "truncated_normal"),
    }


RNN_FIELD_VERSIONS = ("0.6.11", "0.7.0", "0.7.4", "0.7.5")


def record_rnn_fields() -> dict[str, list[str]]:
    """nn.RNN's dataclass fields in several releases, read from their wheels' source (downloaded, not installed)."""
    import ast
    import tempfile
    import zipfile

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for version in RNN_FIELD_VERSIONS:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", f"flax=={version}", "-d", tmp],
                           check=True)
            wheel = next(Path(tmp).glob(f"flax-{version}-*.whl"))
            source = zipfile.ZipFile(wheel).read("flax/linen/recurrent.py").decode()
            rnn = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef) and n.name == "RNN")
            out[version] = [n.target.id for n in rnn.body if isinstance(n, ast.AnnAssign)
                            and isinstance(n.target, ast.Name)]
    return out


def record_corpus() -> dict:
    sys.path.insert(0, str(HERE.parent))
    from corpus_harness import run_all  # the same harness the tests run on the new Flax

    return run_all()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path, default=Path.home() / ".cache" / "rnnlab" / "flax-0.6.11")
    args = parser.parse_args()
    ensure_old_python(args.venv)
    facts = {**record_facts(), "rnn_fields_by_version": record_rnn_fields()}
    data = {"facts": facts, "carries": record_carries(), "corpus": record_corpus()}
    OUT.write_text(json.dumps(data, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {OUT}: {len(data['carries'])} carries, {len(data['corpus'])} corpus snippets")


if __name__ == "__main__":
    main()
