"""The Old vs new API page: the three columns, the verdict, what breaks, shapes and recipes, by value."""

from rnnlab.flaxapi import columns, migrate
from tests.app.conftest import open_page


def table(at, index: int) -> list[dict]:
    """The rows of the ``index``-th table: the three columns' leaves (st.table), then nn.RNN's shapes (a grid)."""
    return at.table[index].value.to_dict("records") if index < 3 else at.dataframe[index - 3].value.to_dict("records")


def test_columns_and_verdict_match_the_library():
    at = open_page("api")
    expected = columns.compare("lstm", (4,), 3, 5, "normal", 0.1, 0)
    assert [s.value for s in at.subheader][:3] == [c.title for c in expected.columns]
    for i, column in enumerate(expected.columns):
        rows = table(at, i)
        assert [r["shape"] for r in rows] == [str(leaf.shape) for leaf in column.leaves]
        assert rows[0]["first values"] == ", ".join(f"{v:.4g}" for v in column.leaves[0].first_values)
    assert at.info[0].value.startswith("**Verdict:** " + expected.verdict.splitlines()[0])
    assert "jax 0.4.x" in at.info[0].value  # why the old column's numbers differ
    at.selectbox(key="api_init").set_value("zeros").run()
    assert at.success[0].value.startswith("**Verdict:** identical")


def test_gru_differs_in_nnx_and_mgu_did_not_exist_in_06():
    at = open_page("api")
    at.selectbox(key="api_cell").set_value("gru").run()
    verdict = at.info[0].value
    assert "**Verdict:**" in verdict and "b_hn" in verdict
    at.selectbox(key="api_cell").set_value("mgu").run()
    assert any("did not exist in flax 0.6.x" in w.value for w in at.warning)
    assert any("no MGUCell" in w.value or "MGU" in w.value for w in at.warning[1:])


def test_bad_batch_dims_give_a_message_and_keep_the_last_columns():
    at = open_page("api")
    good = [table(at, i) for i in range(3)]
    at.text_input(key="api_batch").input("2, x").run()
    assert any("Batch dims must be whole numbers" in e.value for e in at.error)
    assert not at.exception
    assert [table(at, i) for i in range(3)] == good
    assert any("Showing the last comparison that worked: LSTMCell with input shape (4, 3)" in c.value
               for c in at.caption)
    at.text_input(key="api_batch").input("").run()  # no batch axis is fine
    assert table(at, 0)[0]["shape"] == "(5,)"


def test_breakages_are_reproduced_live():
    at = open_page("api")
    errors = [e.value for e in at.error]
    assert any("missing 1 required positional argument: 'features'" in e for e in errors)
    assert any("'int' object is not subscriptable" in e for e in errors)  # nn.LSTMCell.initialize_carry(k, (2,), 4)
    assert any("unexpected keyword argument 'cell_size'" in e for e in errors)
    assert any("time_major=4" in w.value for w in at.warning)


def test_shape_explorer_follows_time_major():
    at = open_page("api")
    rows = {r["what nn.RNN inferred"]: r["value"] for r in table(at, 3)}
    assert rows["time axis"] == "1" and rows["batch dims"] == "(2,)" and rows["output shape"] == "(2, 5, 4)"
    at.checkbox(key="shape_time_major").check().run()
    rows = {r["what nn.RNN inferred"]: r["value"] for r in table(at, 3)}
    assert rows["time axis"] == "0" and rows["batch dims"] == "(5,)"
    at.selectbox(key="shape_cell").set_value("conv_lstm").run()
    assert any(e.value.startswith("ValueError") for e in at.error)  # (2, 5, 3) has too few axes for it
    assert any("the cell needs at least 4" in c.value for c in at.caption)
    at.text_input(key="shape_input").input("2, 5, 8, 8, 3").run()
    rows = {r["what nn.RNN inferred"]: r["value"] for r in table(at, 3)}
    assert rows["num_feature_axes"] == "3" and rows["output shape"] == "(2, 5, 8, 8, 4)"


def test_recipes_pass_their_checks():
    at = open_page("api")
    text = " ".join(m.value for m in at.markdown)
    assert text.count("✅") >= 9 and "❌" in text  # the fixed recipes pass; the seed versions fail somewhere


def test_migration_checker_explains_and_rewrites_the_example():
    at = open_page("api")
    expected = migrate.check(migrate.EXAMPLE)
    headings = [m.value for m in at.markdown if m.value.startswith("**Line ")]
    assert headings == [f"**Line {f.line}: {migrate.RULES[f.rule]}** "
                        f"({'rewritten below' if f.fixable else 'needs a person'})" for f in expected.findings]
    assert len(expected.findings) >= 5
    diff = [c.value for c in at.code if c.language == "diff"]
    assert diff == [migrate.rewrite(migrate.EXAMPLE).diff.rstrip("\n")]
    assert [b.label for b in at.get("download_button")] == ["Download the rewritten code"]


def test_migration_checker_bad_input_gives_messages():
    at = open_page("api")
    at.text_area(key="mig_code").input("").run()
    assert any("Paste some Python code" in w.value for w in at.warning)
    at.text_area(key="mig_code").input("def f(:\n    pass").run()
    assert any("invalid syntax" in w.value for w in at.warning)
    at.text_area(key="mig_code").input("import flax.linen as nn\ncell = nn.LSTMCell(features=8)\n").run()
    assert any("No old-API or RNN pitfalls found." in s.value for s in at.success)
    assert not at.exception
