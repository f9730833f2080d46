"""The migration checker: exact findings in the four seed documents, every rule, no false positives on current
code, bad input, the codemod, and proof that pasted code is never run or imported."""

import ast
import random
import sys
import threading
import uuid
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rnnlab.flaxapi import migrate
from rnnlab.flaxapi.migrate import MAX_CHARS, MAX_LINES, RULES, check, extract_code, rewrite
from rnnlab.flaxapi.migrate.report import MAX_ATTEMPTS

SEEDS = Path(__file__).parents[1] / "fixtures" / "seeds"
HEADER = "import flax.linen as nn\nimport jax\nimport jax.numpy as jnp\nimport numpy as np\n"  # 4 lines

MIGRATE_MODULES = {m for m in sys.modules if m.startswith("rnnlab.flaxapi.migrate")}


def seed(prefix: str) -> str:
    (path,) = SEEDS.glob(f"{prefix}_*.txt")
    return path.read_text(encoding="utf-8")


def found(result) -> list[tuple[int, str]]:
    return [(f.line, f.rule) for f in result.findings]


# ------------------------------------------------------------------------------------------------ the seeds

SEED_FINDINGS = {
    # Chinese answer: nn.GRUCell() without features, built inside the loop over time; moveaxis over features.
    "000": [
        (24, "moveaxis-loop"),
        (25, "cell-without-features"),
        (25, "cell-in-loop"),
        (61, "cell-without-features"),
    ],
    # Russian question and answer: nn.GRUCell() twice, the static call with init_fn.
    "001": [
        (18, "cell-without-features"),
        (24, "static-initialize-carry"),
        (24, "init-fn"),
        (49, "cell-without-features"),
    ],
    # Upgrade guide: only the old half of each old/new pair is flagged.
    "002": [
        (26, "cell-without-features"),
        (32, "static-initialize-carry"),
        (56, "cell-without-features"),
        (60, "static-initialize-carry"),
        (93, "cell-without-features"),
        (97, "static-initialize-carry"),
    ],
    # FLIP article (code squashed onto single lines): the old ConvLSTM static call, and x[:, 0] (an array)
    # passed to initialize_carry where flax >= 0.7 wants a shape.
    "003": [
        (32, "static-initialize-carry"),
        (56, "carry-shape-array"),
        (64, "carry-shape-array"),
    ],
}
SEED_BLOCKS = {
    "000": [7, 51],
    "001": [7, 44],
    "002": [17, 26, 32, 38, 46, 84, 136],
    "003": [32, 42, 50, 56, 64, 74, 88, 96, 104, 108, 142],
}
SEED_REMAINING = {  # what the codemod leaves for a person
    "000": [(24, "moveaxis-loop"), (25, "cell-in-loop")],
    "001": [(24, "static-initialize-carry"), (24, "init-fn")],  # moving init_fn is not verified on real code
    "002": [(26, "cell-without-features")],
    "003": [(56, "carry-shape-array"), (64, "carry-shape-array")],
}


@pytest.mark.parametrize("prefix", sorted(SEED_FINDINGS))
def test_seed_findings_are_exact(prefix):
    result = check(seed(prefix))
    assert result.mode == "document"
    assert result.problems == ()
    assert found(result) == SEED_FINDINGS[prefix]
    assert [b.first_line for b in result.blocks] == SEED_BLOCKS[prefix]
    assert all(b.ok for b in result.blocks)
    assert all(str(f.message) and f.code for f in result.findings)


def test_seed_messages_explain_the_fix():
    by_rule = {(f.line, f.rule): f for f in check(seed("000")).findings}
    assert "features=carry.shape[-1]" in str(by_rule[(25, "cell-without-features")].message)
    assert "own weights" in str(by_rule[(25, "cell-in-loop")].message)
    assert "feature axis" in str(by_rule[(24, "moveaxis-loop")].message)
    static = {(f.line, f.rule): f for f in check(seed("001")).findings}[(24, "static-initialize-carry")]
    assert "nn.GRUCell(features=self.n_RNN_units, parent=None" in str(static.message)
    conv = check(seed("003")).findings[0]
    said = str(conv.message)
    assert "(64, 64, 16)" in said and "features=16" in said and "kernel_size" in said
    assert conv.fixable


def test_seed_new_api_code_is_not_flagged():
    lines = {line for line, _ in found(check(seed("002")))}
    text = seed("002").splitlines()
    for number in (28, 34, 38, 73, 77, 101, 112, 117, 141):  # new-API lines of the guide
        assert number not in lines, text[number - 1]


def test_squashed_lines_are_split_back_into_statements():
    block = next(b for b in extract_code(seed("003")) if b.first_line == 32)
    assert block.code.splitlines() == [
        "x = jnp.ones((2, 4, 4, 3)) # (batch, *image_shape, channels) # image shape: vvvvvvv",
        "carry = nn.ConvLSTMCell.initialize_carry(key1, (16,), (64, 64, 16)) # batch size: ^^ ^^ :output features",
        "lstm = nn.ConvLSTMCell(features=6, kernel_size=(3, 3))",
        "(carry, y), initial_params = lstm.init_with_output(key2, carry, x)",
    ]
    assert block.lines == (32, 32, 32, 32)
    compound = next(b for b in extract_code(seed("003")) if b.first_line == 74)
    assert compound.code.splitlines()[:3] == [
        "class RNNCellBase(Module):",
        '    """RNN cell base class."""',
        "    @nowrap",
    ]


def test_over_indented_first_line_is_fixed():
    first = extract_code(seed("001"))[0]
    assert first.code.startswith("import jax.numpy as np\nfrom jax import random\n")
    assert first.lines[:2] == (7, 8)


@pytest.mark.parametrize("prefix", sorted(SEED_FINDINGS))
def test_seed_rewrite_leaves_only_the_manual_findings(prefix):
    text = seed(prefix)
    result = rewrite(text)
    assert result.problems == ()
    assert [(f.line, f.rule) for f in result.remaining] == SEED_REMAINING[prefix]
    again = check(result.source)
    assert found(again) == SEED_REMAINING[prefix]
    assert all(b.ok for b in again.blocks)
    assert len(result.source.splitlines()) == len(text.splitlines())
    changed = [i + 1 for i, (a, b) in enumerate(zip(text.splitlines(), result.source.splitlines())) if a != b]
    fixed = set(SEED_FINDINGS[prefix]) - set(SEED_REMAINING[prefix])
    covered = {(line, "init-fn") for line, rule in fixed if rule == "static-initialize-carry"}  # one change for both
    assert {(c.line, c.rule) for c in result.changes} == fixed - covered
    assert set(changed) <= {line for c in result.changes for line in (c.line, c.line + 1)}


def test_code_in_a_comment_is_only_split_off_a_lone_squashed_line():
    doc = (
        "Here is how I migrated:\n"
        "\n"
        "import flax.linen as nn\n"
        "carry = cell.initialize_carry(key, x.shape)  # was: carry = nn.LSTMCell.initialize_carry(key, (b,), h)\n"
        "y = 1\n"
        "\n"
        "The same line alone, as a web page squashes a snippet:\n"
        "\n"
        "carry = cell.initialize_carry(key, x.shape)  # was: carry = nn.LSTMCell.initialize_carry(key, (b,), h)\n"
    )
    result = check(doc)
    assert [(b.first_line, b.lines) for b in result.blocks] == [(3, (3, 4, 5)), (9, (9, 9))]
    assert found(result) == [(9, "static-initialize-carry")]


def test_seed_003_rewrite_edits_inside_squashed_lines_only():
    text = seed("003")
    new = rewrite(text).source
    assert new == text.replace(
        "nn.ConvLSTMCell.initialize_carry(key1, (16,), (64, 64, 16))",
        "nn.ConvLSTMCell(features=16, kernel_size=(1, 1), parent=None).initialize_carry(key1, (16, 64, 64, 16))",
    )


def test_rewritten_guide_code_runs_on_current_flax():
    """The codemod's output for the guide's old code works on current flax (this runs trusted fixture text)."""
    import functools

    import flax.linen as nn
    import jax
    import jax.numpy as jnp

    block = next(b for b in extract_code(rewrite(seed("002")).source) if b.first_line == 46)
    old_half = block.code[: block.code.index("class SimpleLSTM", 1)]
    namespace = {"functools": functools, "jax": jax, "jnp": jnp, "nn": nn}
    exec(old_half, namespace)  # noqa: S102 - trusted fixture, not user input
    model_cls = namespace["SimpleLSTM"]
    carry = model_cls.initialize_carry((3,), 8)
    x = jnp.ones((3, 5, 4))
    variables = model_cls().init(jax.random.key(0), carry, x)
    final, ys = model_cls().apply(variables, carry, x)
    assert [c.shape for c in carry] == [(3, 8), (3, 8)]
    assert ys.shape == (3, 5, 8) and final[1].shape == (3, 8)


# ------------------------------------------------------------------------------------------ rules, one by one

RULE_CASES = {
    "static-initialize-carry": [
        "c = nn.LSTMCell.initialize_carry(key, (batch,), size)",
        "c = nn.OptimizedLSTMCell.initialize_carry(jax.random.key(0), (2, 3), 8)",
        "c = nn.ConvLSTMCell.initialize_carry(key1, (16,), (64, 64, 16))",
        "c = nn.LSTMCell.initialize_carry(rng=key, batch_dims=(2,), size=4)",
    ],
    "instance-initialize-carry": [
        "cell = nn.LSTMCell(4)\nc = cell.initialize_carry(key, (2,), 4)",
        "rnn = nn.RNN(nn.GRUCell(4))\nc = rnn.cell.initialize_carry(rng, batch_dims=(2,), size=4)",
    ],
    "init-fn": ["c = cell.initialize_carry(key, (2, 3), init_fn=nn.initializers.ones)"],
    "custom-cell": ["class MyCell(nn.RNNCellBase):\n    @staticmethod\n"
                    "    def initialize_carry(rng, batch_dims, size):\n        return None"],
    "jax-tree-alias": ["shapes = jax.tree_map(jnp.shape, carry)", "leaves = jax.tree_leaves(params)"],
    "cell-without-features": ["cell = nn.GRUCell()", "cell = nn.LSTMCell(name='lstm')", "y = nn.SimpleCell()(c, x)"],
    "rnn-positional-size": ["rnn = nn.RNN(nn.LSTMCell(8), 8)", "rnn = nn.RNN(cell, hidden_size)"],
    "rnn-cell-size": ["rnn = nn.RNN(cell, cell_size=8)"],
    "convlstm-old-name": ["cell = nn.ConvLSTM(features=4, kernel_size=(3, 3))"],
    "carry-shape-array": [
        "c = cell.initialize_carry(key, x[:, 0])",
        "c = cell.initialize_carry(key, jnp.ones((2, 3)))",
    ],
    "cell-in-loop": [
        "for x in xs:\n    carry, y = nn.GRUCell(8)(carry, x)",
        "ys = [nn.GRUCell(8)(h, x) for x in xs]",
        "while t < 3:\n    cell = nn.LSTMCell(8)\n    carry, y = cell(carry, xs[t])\n    t += 1",
    ],
    "learnable-carry-batch": [
        "h0 = self.param('h0', nn.initializers.zeros, (self.batch_size, 16))",
        "c = self.param('initial_carry', nn.initializers.zeros, (4, 16))",
        "p = self.param('p', nn.initializers.zeros, (4, 16))\ny = nn.RNN(nn.GRUCell(16))(x, initial_carry=p)",
    ],
    "moveaxis-loop": ["for x in np.moveaxis(inputs, 0, -1):\n    pass", "zs = [f(x) for x in jnp.moveaxis(a, 0, 2)]"],
}


def test_every_rule_has_cases():
    assert set(RULE_CASES) == set(RULES)


@pytest.mark.parametrize("rule,snippet", [(rule, s) for rule, snippets in RULE_CASES.items() for s in snippets])
def test_rule_finds_its_case(rule, snippet):
    result = check(HEADER + snippet + "\n")
    assert result.mode == "python"
    assert rule in {f.rule for f in result.findings}, found(result)
    finding = next(f for f in result.findings if f.rule == rule)
    assert finding.line > 4 and len(str(finding.message)) > 60


def test_rule_lines_in_a_module():
    source = HEADER + (
        "from flax.linen import ConvLSTM\n"  # 5
        "\n"
        "class M(nn.Module):\n"  # 7
        "    batch_size: int = 4\n"
        "\n"
        "    @nn.compact\n"  # 10
        "    def __call__(self, xs, key, carry):\n"
        "        c1 = nn.GRUCell.initialize_carry((), (), 8, init_fn=nn.initializers.ones)\n"  # 12
        "        r1 = nn.RNN(nn.LSTMCell(16), 16)\n"  # 13
        "        r2 = nn.RNN(nn.GRUCell(4), cell_size=4)\n"  # 14
        "        conv = ConvLSTM(4, (3, 3))\n"  # 15
        "        h0 = self.param('h0', nn.initializers.zeros, (self.batch_size, 16))\n"  # 16
        "        for x in xs:\n"  # 17
        "            carry, y = nn.GRUCell()(carry, x)\n"  # 18
        "        return carry\n"
    )
    assert found(check(source)) == [
        (5, "convlstm-old-name"),
        (12, "static-initialize-carry"),
        (12, "init-fn"),
        (13, "rnn-positional-size"),
        (14, "rnn-cell-size"),
        (15, "convlstm-old-name"),
        (16, "learnable-carry-batch"),
        (18, "cell-without-features"),
        (18, "cell-in-loop"),
    ]


MODERN = """import jax, jax.numpy as jnp
import flax.linen as nn
from flax import nnx


class Model(nn.Module):
    features: int = 32

    @nn.compact
    def __call__(self, x, carries, hidden_size=4):
        cell = nn.LSTMCell(features=self.features)
        cell2 = nn.LSTMCell(32)
        h0 = self.param("h0", nn.initializers.zeros, (self.features,))
        carry = cell.initialize_carry(jax.random.key(0), x[:, 0].shape)
        carry = jnp.broadcast_to(h0, x.shape[:1] + (self.features,))
        rnn = nn.RNN(cell, time_major=True)
        rnn2 = nn.RNN(nn.GRUCell(32), return_carry=True)
        y = nn.RNN(nn.LSTMCell(32))(x)
        for _ in range(2):
            x = nn.RNN(nn.GRUCell(self.features))(x)
        w = self.param("kernel", nn.initializers.lecun_normal(), (x.shape[-1], self.features))
        c = nn.OptimizedLSTMCell(hidden_size, parent=None).initialize_carry(jax.random.key(0), (4, 3))
        conv = nn.ConvLSTMCell(features=6, kernel_size=(3, 3))
        cc = conv.initialize_carry(jax.random.key(1), x.shape)
        stacked = [nn.LSTMCell(self.features) for _ in range(3)]
        for i, c in enumerate(carries):
            c, x = nn.LSTMCell(self.features)(c, x)
        gru = nn.GRUCell(8)
        for t in range(x.shape[1]):
            carry, y = gru(carry, x[:, t])
        ys = [gru(carry, x_t) for x_t in jnp.moveaxis(x, 1, 0)]
        mgu = nn.MGUCell(features=8, carry_init=nn.initializers.ones)
        sc = nn.SimpleCell(8).initialize_carry(jax.random.key(2), input_shape=(2, 3))
        bi = nn.Bidirectional(nn.RNN(nn.GRUCell(4)), nn.RNN(nn.GRUCell(4)))
        return y


class ConvModel(nn.Module):
    @nn.compact
    def __call__(self, x):
        h0 = self.param("carry0", nn.initializers.zeros, (8, 8, 6))
        return nn.RNN(nn.ConvLSTMCell(6, (3, 3)))(x)


class SimpleLSTM(nn.Module):
    @staticmethod
    def initialize_carry(batch_dims, hidden_size):
        return nn.OptimizedLSTMCell(hidden_size, parent=None).initialize_carry(
            jax.random.key(0), (*batch_dims, hidden_size))


carry = SimpleLSTM.initialize_carry((2,), 8)
ncell = nnx.LSTMCell(2, 3, rngs=nnx.Rngs(0))
ncarry = ncell.initialize_carry((1, 2), nnx.Rngs(1))
nrnn = nnx.RNN(nnx.GRUCell(2, 3, rngs=nnx.Rngs(0)), time_major=True)
"""


def test_no_findings_on_current_code():
    result = check(MODERN)
    assert result.mode == "python" and result.problems == () and result.findings == ()
    assert result.clean


def test_no_findings_on_other_libraries_and_local_classes():
    torch = "import torch.nn as nn\nrnn = nn.RNN(10, 20)\ncell = nn.GRUCell(10, 20)\nlstm = nn.LSTMCell(10)\n"
    assert check(torch).findings == ()
    local = "class RNN:\n    pass\n\nclass LSTMCell:\n    pass\n\n"
    local += "r = RNN(cell, 4)\nc = LSTMCell.initialize_carry(k, (2,), 4)\n"
    assert check(local).findings == ()
    aliased = "from flax import linen as L\nr = L.RNN(L.GRUCell(4), 4)\n"
    assert found(check(aliased)) == [(2, "rnn-positional-size")]


# --------------------------------------------------------------------------------------------- bad input


def test_empty_input_asks_for_code():
    for text in ("", "   \n\t\n"):
        result = check(text)
        assert result.findings == () and not result.checked
        assert str(result.problems[0].message).startswith("Paste some Python code")
        assert str(rewrite(text).problems[0].message).startswith("Paste some Python code")


def test_too_large_input_is_refused_with_the_limit():
    too_long = "x = 1\n" * (MAX_CHARS // 6 + 1)
    too_many_lines = "x\n" * (MAX_LINES + 1)
    for text, limit in ((too_long, f"{MAX_CHARS:,} characters"), (too_many_lines, f"{MAX_LINES:,} lines")):
        result = check(text)
        assert result.findings == () and result.blocks == ()
        assert limit in str(result.problems[0].message)
        assert rewrite(text).source == text and rewrite(text).problems


def test_syntax_error_in_code_names_line_and_cause():
    result = check("import flax.linen as nn\nr = nn.RNN(cell, 4)\ndef f(:\n    pass\n")
    assert result.mode == "code"
    (problem,) = result.problems
    said = str(problem.message)
    assert problem.line == 3 and said.startswith("Line 3: invalid syntax") and "def f(:" in said
    assert found(result) == [(2, "rnn-positional-size")]  # the part that parses is still checked
    unclosed = check("x = nn.GRUCell(\n")
    assert unclosed.problems[0].line == 1 and "never closed" in str(unclosed.problems[0].message)


def test_document_reports_blocks_that_do_not_parse_and_checks_the_rest():
    doc = (
        "Here is my old code:\n"
        "\n"
        "rnn = nn.RNN(nn.LSTMCell(8), 8)\n"
        "\n"
        "And this does not work either\n"
        "\n"
        "for i in range(3)\n"
        "    print(i)\n"
        "\n"
        "Thanks!\n"
    )
    result = check(doc)
    assert result.mode == "document"
    assert found(result) == [(3, "rnn-positional-size")]
    (problem,) = result.problems
    assert problem.line == 7 and "expected ':'" in str(problem.message)


def test_markdown_fences():
    doc = (
        "# Migrating\n"
        "\n"
        "```python\n"
        "import flax.linen as nn\n"
        "rnn = nn.RNN(nn.LSTMCell(), 4)\n"
        "```\n"
        "\n"
        "```bash\n"
        "pip install flax==0.6.11\n"
        "```\n"
        "\n"
        "```pycon\n"
        ">>> nn.GRUCell()\n"
        "Traceback (most recent call last):\n"
        "```\n"
    )
    result = check(doc)
    assert result.mode == "markdown"
    assert [b.first_line for b in result.blocks] == [4, 13]
    assert found(result) == [(5, "cell-without-features"), (5, "rnn-positional-size"), (13, "cell-without-features")]
    assert rewrite(doc).source == doc.replace("nn.LSTMCell(), 4)", "nn.LSTMCell(features=4))")


def test_prose_without_code():
    result = check("Question\n\nHow do I make the carry learnable? Thanks!\n")
    assert result.findings == () and not any(b.ok and b.code.strip() == "How" for b in result.blocks)


@pytest.mark.parametrize(
    "text",
    [
        "1+" * 50_000 + "1",  # RecursionError while building the AST
        "-" * 100_000 + "1",  # MemoryError in the parser
        "(" * 300 + ")" * 300,
        "x" + ".a" * 60_000,
        "x = 1\x00",
        "x = '\udcff'",
        "Some prose.\n\n" + "f(" * 150 + ")" * 150 + "\n",
    ],
)
def test_hostile_input_gets_a_message_not_an_exception(text):
    result = check(text)
    assert isinstance(result, migrate.CheckResult)
    assert all("Internal error" not in str(p.message) for p in result.problems)
    assert isinstance(rewrite(text), migrate.RewriteResult)


def test_fuzz_never_raises():
    rng = random.Random(1234)
    tokens = [
        "nn.",
        "GRUCell",
        "(",
        ")",
        ",",
        "=",
        "for x in",
        ":",
        "\n",
        "    ",
        "init_fn=",
        "carry",
        "#",
        '"',
        "'''",
        "[",
        "]",
        "nn.RNN",
        "4",
        "self.param",
        "initialize_carry",
        " ",
        "\t",
        "\\",
        "中文",
        "@",
        "...",
        "\r",
        "```",
        ">>> ",
        "cell_size=",
        "ConvLSTM",
        "moveaxis",
    ]
    texts = []
    for _ in range(150):
        raw = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
        texts += [raw.decode("utf-8", "replace"), raw.decode("latin-1"), raw.decode("utf-8", "surrogateescape")]
        texts.append("".join(rng.choice(tokens) for _ in range(rng.randrange(1, 120))))
    for text in texts:
        result, rewritten = check(text), rewrite(text)
        assert all("Internal error" not in str(p.message) for p in result.problems + rewritten.problems), text
        if rewritten.changed:
            assert all(
                b.ok for b in extract_code(rewritten.source) if b.first_line in {c.line for c in rewritten.changes}
            )


# ------------------------------------------------------------------------------------------------- rewrite


def test_rewrite_is_idempotent_and_parses_on_random_mixes():
    rng = random.Random(7)
    snippets = [s for rule, cases in RULE_CASES.items() for s in cases if rule != "cell-in-loop"]
    snippets += RULE_CASES["cell-in-loop"]
    for _ in range(40):
        body = "\n".join(rng.sample(snippets, rng.randrange(1, 8)))
        if rng.random() < 0.5:  # the same code inside a method, indented, with comments
            body = "class M(nn.Module):\n    @nn.compact\n    def __call__(self, x):  # c\n" + "".join(
                f"        {line}  # note\n" if line.strip() else "\n" for line in body.splitlines()
            )
        source = HEADER + body + "\n"
        assert check(source).mode == "python", source
        first = rewrite(source)
        assert check(first.source).mode == "python", first.source
        assert not any(f.fixable for f in check(first.source).findings), first.source
        assert not rewrite(first.source).changed
        assert {(f.line, f.rule) for f in first.remaining} == set(found(check(first.source)))


def test_rewrite_rnn_positional_size_exact_diff():
    source = "import flax.linen as nn\n\nrnn = nn.RNN(nn.LSTMCell(4), 4)\n"
    result = rewrite(source)
    assert result.source == "import flax.linen as nn\n\nrnn = nn.RNN(nn.LSTMCell(4))\n"
    assert result.diff == (
        "--- before.py\n"
        "+++ after.py\n"
        "@@ -1,3 +1,3 @@\n"
        " import flax.linen as nn\n"
        " \n"
        "-rnn = nn.RNN(nn.LSTMCell(4), 4)\n"
        "+rnn = nn.RNN(nn.LSTMCell(4))\n"
    )
    (change,) = result.changes
    assert (change.line, change.rule) == (3, "rnn-positional-size")
    assert change.before == "rnn = nn.RNN(nn.LSTMCell(4), 4)" and change.after == "rnn = nn.RNN(nn.LSTMCell(4))"
    assert "cell_size" in str(change.note) and "time_major" in str(change.note)


def test_rewrite_static_call_exact_diff():
    source = (
        "import flax.linen as nn\n"
        "c = nn.GRUCell.initialize_carry(key, (), n)\n"
        "d = nn.LSTMCell.initialize_carry(\n"
        "    key, batch_dims, 16)  # keep this comment\n"
        "e = nn.GRUCell.initialize_carry(key, (), n, init_fn=nn.initializers.zeros)\n"
    )
    result = rewrite(source)
    assert result.diff == (
        "--- before.py\n"
        "+++ after.py\n"
        "@@ -1,5 +1,5 @@\n"
        " import flax.linen as nn\n"
        "-c = nn.GRUCell.initialize_carry(key, (), n)\n"
        "-d = nn.LSTMCell.initialize_carry(\n"
        "-    key, batch_dims, 16)  # keep this comment\n"
        "+c = nn.GRUCell(features=n, parent=None).initialize_carry(key, (n,))\n"
        "+d = nn.LSTMCell(features=16, parent=None).initialize_carry(\n"
        "+    key, (*batch_dims, 16))  # keep this comment\n"
        " e = nn.GRUCell.initialize_carry(key, (), n, init_fn=nn.initializers.zeros)\n"
    )
    assert [c.rule for c in result.changes] == ["static-initialize-carry", "static-initialize-carry"]
    assert "input features" in str(result.changes[0].note)
    assert [(f.line, f.rule) for f in result.remaining] == [(5, "static-initialize-carry"), (5, "init-fn")]
    assert "carry_init=nn.initializers.zeros" in str(result.remaining[0].message)  # the change a person makes


def test_rewrite_renames_convlstm_and_drops_cell_size():
    source = (
        "from flax.linen import ConvLSTM\n"
        "import flax.linen as nn\n"
        "a = ConvLSTM(4, (3, 3))\n"
        "b = nn.ConvLSTM(features=4, kernel_size=(3, 3))\n"
        "r = nn.RNN(cell, cell_size=8, return_carry=True)\n"
        "s = nn.GRUCell(4).initialize_carry(key, (2, 3), init_fn=nn.initializers.ones)\n"
    )
    result = rewrite(source)
    assert result.source == source.replace("cell_size=8, ", "")  # renaming and moving init_fn: by a person
    assert [f.rule for f in result.remaining] == ["convlstm-old-name"] * 3 + ["init-fn"]
    assert all("make it by hand" in str(f.message) for f in result.remaining)


def test_rewrite_keeps_every_other_byte():
    source = 'x = "héllo 中文"; r = nn.RNN(c, 4)  # 注释\r\n\tif True:\r\n\t\ty = nn.GRUCell()(h, x)  # tab\r\n'
    source = "import flax.linen as nn\r\n" + source.replace("\tif", "if")
    result = rewrite(source)
    assert result.source == source.replace("nn.RNN(c, 4)", "nn.RNN(c)").replace(
        "nn.GRUCell()(h, x)", "nn.GRUCell(features=h.shape[-1])(h, x)"
    )
    assert ast.parse(result.source)


def test_rewrite_leaves_non_mechanical_findings_with_explanations():
    source = HEADER + "for x in xs:\n    carry, y = nn.GRUCell(8)(carry, x)\ncell = nn.LSTMCell()\n"
    result = rewrite(source)
    assert not result.changed and result.source == source and result.diff == ""
    assert [(f.line, f.rule) for f in result.remaining] == [(6, "cell-in-loop"), (7, "cell-without-features")]
    assert all(not f.fixable for f in result.remaining)


def test_fixable_flags_match_rewrite():
    for prefix in SEED_FINDINGS:
        text = seed(prefix)
        fixable = {(f.line, f.rule) for f in check(text).findings if f.fixable}
        remaining = {(f.line, f.rule) for f in rewrite(text).remaining}
        assert fixable == set(SEED_FINDINGS[prefix]) - remaining


# ------------------------------------------------------------------------------------------- never executed


def test_pasted_code_is_never_executed_or_imported(tmp_path, monkeypatch):
    canary = tmp_path / f"pwned_{uuid.uuid4().hex}"
    module = f"rnnlab_canary_{uuid.uuid4().hex}"
    (tmp_path / f"{module}.py").write_text(f"open({str(canary)!r}, 'w').write('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    payloads = [
        f"open({str(canary)!r}, 'w').write('x')\n",
        f"import os; os.system('touch {canary}')\n",
        f"import {module}\nr = nn.RNN(cell, 4)\n",
        f"from {module} import thing\n__import__({module!r})\n",
        f"Some text first.\n\nimport {module}\nexec(\"open({str(canary)!r}, 'w')\")\n",
        f"```python\nimport {module}\n```\n",
    ]
    before = set(sys.modules)
    for payload in payloads:
        check(payload)
        rewrite(payload)
        extract_code(payload)
    assert not canary.exists()
    assert module not in sys.modules
    assert set(sys.modules) - before <= MIGRATE_MODULES


def test_checker_source_has_no_way_to_run_code():
    package = Path(migrate.__file__).parent
    sources = [*package.glob("*.py"), package.parent.parent / "text.py"]
    for node in (n for path in sources for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in {"exec", "eval", "compile", "__import__"}, node.func.id
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            assert not {"importlib", "runpy", "subprocess", "os"} & {n.split(".")[0] for n in names}


# ------------------------------------------------------------------------- bad input: the table, and limits

BAD_PASTES = [  # (what, text, words the message must contain)
    ("empty", "", "Paste some Python code"),
    ("whitespace", " \n\t\n", "Paste some Python code"),
    ("null byte", "import flax.linen as nn\nx = 1\x00\n", "Line 2 contains a null byte"),
    ("binary bytes read as latin-1", bytes(range(256)).decode("latin-1"), "null byte"),
    ("lone surrogate", "x = '\ud800'\n", "not valid Unicode"),
    ("over MAX_CHARS", "x = 1\n" * (MAX_CHARS // 6 + 1), f"{MAX_CHARS:,} characters"),
    ("over MAX_LINES", "x\n" * (MAX_LINES + 1), f"{MAX_LINES:,} lines"),
    ("one huge line", "x = " + "1" * (MAX_CHARS + 1), f"{MAX_CHARS:,} characters"),
    ("syntax error", "def f(:\n    pass\n", "invalid syntax"),
    ("unclosed", "x = nn.GRUCell(\n", "never closed"),
    ("10000 open parentheses", "(" * 10000, "too many nested parentheses"),
    ("deep unary minus", "x = " + "-" * 60000 + "1", "nested too deeply"),
    ("deep not", "x = " + "not " * 40000 + "x", "nested too deeply"),
    ("long sum", "x = " + "1+" * 90000 + "1", "nested too deeply"),
    ("deep lambdas", "f = " + "lambda: " * 20000 + "1", "nested too deeply"),
    ("prose only", "Thanks! How do I make the carry learnable?", "No Python code found"),
]


@pytest.mark.parametrize("what, text, words", BAD_PASTES, ids=[b[0] for b in BAD_PASTES])
def test_bad_pastes_give_a_message_never_an_exception(what, text, words):
    result = check(text)
    assert result.findings == () and result.problems, what
    assert any(words in str(p.message) for p in result.problems), [str(p.message) for p in result.problems]
    assert all(len(str(p.message)) < 400 for p in result.problems)
    again = rewrite(text)
    assert again.problems and not again.changed and again.source == text


@pytest.mark.parametrize("text", [
    "x = (\n" * (MAX_LINES - 1),  # thousands of lines that never parse
    "import flax.linen as nn\n" + "r = nn.RNN(nn.LSTMCell(), 4)\n" * (MAX_LINES - 1),  # 10,000 findings
    "r = nn.RNN(nn.LSTMCell(), 4)\nx = (\n" * (MAX_LINES // 2 - 1),
], ids=["never parses", "many findings", "mixed"])
def test_largest_accepted_texts_are_checked_and_rewritten_in_bounded_work(text, monkeypatch):
    parsed = {"calls": 0, "chars": 0}
    real_parse = ast.parse

    def counting(source, *args, **kwargs):
        parsed["calls"] += 1
        parsed["chars"] += len(source)
        return real_parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    result, rewritten = check(text), rewrite(text)
    # The parses are bounded by the attempt budget (check and rewrite each search the text once), and what they
    # read by a small multiple of the text: minutes of parsing before the budget and the single trial parse.
    assert parsed["calls"] <= 3 * MAX_ATTEMPTS and parsed["chars"] <= 200 * len(text), parsed
    monkeypatch.undo()
    assert result.findings or result.problems
    assert rewritten.source == text or ast.parse(rewritten.source.replace("x = (\n", ""))


# ---------------------------------------------------------------------------------- nn.RNN(cell, size) fix


@pytest.mark.parametrize("before, after", [
    ("rnn = nn.RNN(nn.LSTMCell(), 4)\n", "rnn = nn.RNN(nn.LSTMCell(features=4))\n"),
    ("rnn = nn.RNN(nn.GRUCell(name='g'), 8, return_carry=True)\n",
     "rnn = nn.RNN(nn.GRUCell(features=8, name='g'), return_carry=True)\n"),
    ("cell = nn.GRUCell()\nrnn = nn.RNN(cell, 64)\n", "cell = nn.GRUCell(features=64)\nrnn = nn.RNN(cell)\n"),
    ("class M(nn.Module):\n    hidden_size: int\n\n    def __call__(self, x):\n        cell = nn.SimpleCell()\n"
     "        return nn.RNN(cell, self.hidden_size)(x)\n",
     "class M(nn.Module):\n    hidden_size: int\n\n    def __call__(self, x):\n"
     "        cell = nn.SimpleCell(features=self.hidden_size)\n        return nn.RNN(cell)(x)\n"),
    ("rnn = nn.RNN(nn.LSTMCell(4), 4)\n", "rnn = nn.RNN(nn.LSTMCell(4))\n"),  # the cell already has features
])
def test_rnn_positional_size_moves_into_the_cells_features(before, after):
    source = "import flax.linen as nn\n" + before
    result = rewrite(source)
    assert result.source == "import flax.linen as nn\n" + after
    assert result.remaining == () and check(result.source).findings == ()
    assert all(f.fixable for f in check(source).findings)
    moved = "features=" in after
    assert [("Moved" in str(c.note)) for c in result.changes if c.rule == "rnn-positional-size"] == [moved]


def test_rnn_positional_size_of_a_cell_built_elsewhere_says_where_the_size_goes():
    source = "import flax.linen as nn\ndef f(cell):\n    return nn.RNN(cell, 32)\n"
    result = rewrite(source)
    assert result.source == source.replace("nn.RNN(cell, 32)", "nn.RNN(cell)")
    (change,) = result.changes
    assert "features=32" in str(change.note) and "`cell`" in str(change.note)


# ------------------------------------------------------------------------------ parsing is thread-safe


def test_parsing_does_not_touch_the_warnings_filter_and_is_thread_safe(monkeypatch):
    source = HEADER + 'pattern = re.compile("\\d+\\s")\nb = b"\\q"\no = "\\777"\nrnn = nn.RNN(nn.LSTMCell(), 4)\n'
    expected = [(8, "cell-without-features"), (8, "rnn-positional-size")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        before, snapshot = warnings.filters, list(warnings.filters)

        def forbidden(*args, **kwargs):
            raise AssertionError("the checker changed the warnings filter")

        for name in ("catch_warnings", "simplefilter", "filterwarnings", "resetwarnings"):
            monkeypatch.setattr(warnings, name, forbidden)
        barrier = threading.Barrier(8)

        def work(_):
            barrier.wait()
            return [(found(check(source)), rewrite(source).source) for _ in range(5)]

        with ThreadPoolExecutor(8) as pool:
            results = [r for rs in pool.map(work, range(8)) for r in rs]
        monkeypatch.undo()
        assert warnings.filters is before and warnings.filters == snapshot
    assert not [w for w in caught if "escape" in str(w.message)], [str(w.message) for w in caught]
    assert all(f == expected for f, _ in results)
    assert {s for _, s in results} == {source.replace("nn.LSTMCell(), 4)", "nn.LSTMCell(features=4))")}


def test_syntax_error_messages_show_the_pasted_text_not_the_neutralised_one():
    result = check('x = "\\d" +\n')
    assert '\\d' in str(result.problems[0].message) and '\\\\' not in str(result.problems[0].message)


# ------------------------------------------------------------------------------- never executed, more ways


def test_tricks_that_would_run_code_on_import_or_definition_are_only_parsed(tmp_path, monkeypatch):
    canary = tmp_path / f"ran_{uuid.uuid4().hex}"
    module = f"rnnlab_side_effect_{uuid.uuid4().hex}"
    (tmp_path / f"{module}.py").write_text(f"open({str(canary)!r}, 'w').write('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    write = f"open({str(canary)!r}, 'w').write('x')"
    payload = (
        f"import flax.linen as nn\nimport os\nimport {module}\nfrom {module} import *\n"
        f"os.system('touch {canary}')\n"
        f"{write}\n"
        f"def __getattr__(name):\n    {write}\n"
        f"def deco(f):\n    {write}\n    return f\n"
        f"@deco\ndef g():\n    pass\n"
        f"class Meta(type):\n    def __new__(m, *a):\n        {write}\n        return super().__new__(m, *a)\n"
        f"class C(metaclass=Meta):\n    x = {write}\n"
        f"class D:\n    def __init_subclass__(cls):\n        {write}\n"
        f"lazy = __import__({module!r})\n"
        f"r = nn.RNN(nn.LSTMCell(), 4)\n"
    )
    before = set(sys.modules)
    result, rewritten = check(payload), rewrite(payload)
    assert found(result) == [(25, "cell-without-features"), (25, "rnn-positional-size")]
    assert rewritten.changed and f"import {module}" in rewritten.source
    assert not canary.exists()
    assert module not in sys.modules and set(sys.modules) - before <= MIGRATE_MODULES
