"""Bad input, everywhere it enters the app: URL query parameters of every page, the free-text widgets (sweep
lengths, the API page's dims) and pasted or uploaded code. Each table row asserts a clear message on the page,
the last good state kept (defaults or the link's other values; the last good result on screen), no exception
element and no half-drawn page (the page's last section is there)."""

from __future__ import annotations

import sys
import uuid

import numpy as np
import pytest

from rnnlab.config import Config
from rnnlab.flaxapi import migrate
from tests.app.conftest import SMALL, figures, open_page, unescaped, values

DEFAULT = Config()
LINK = Config.from_dict(SMALL)[0]  # the good values every bad link below also carries
SWEEP_TITLE = "Gradient reaching the initial carry against sequence length"
BUDGET_GB = "0.05"  # RNNLAB_MEMORY_BUDGET_GB for the over-budget rows: 53.7 MB
HUGE = {"seq_len": "100000", "batch": "4096", "features": "1024"}

# ------------------------------------------------------------------------------------------ URL parameters

# (id, bad query parameters on top of SMALL, words of the note, the fields the page must end up with)
URL_TABLE = [
    ("empty", {"features": ""}, "Ignored features=''", {"features": DEFAULT.features}),
    ("wrong type", {"features": "abc"}, "Ignored features='abc': not a valid int", {"features": DEFAULT.features}),
    ("zero", {"features": "0"}, "features must be a whole number from 1 to 1024", {"features": DEFAULT.features}),
    ("out of range", {"features": str(10**9)}, "from 1 to 1024", {"features": DEFAULT.features}),
    ("negative", {"seq_len": "-5"}, "seq_len must be a whole number", {"seq_len": DEFAULT.seq_len}),
    ("NaN", {"lr": "nan"}, "Ignored lr='nan'", {"lr": DEFAULT.lr}),
    ("inf", {"clip": "inf"}, "Ignored clip='inf'", {"clip": DEFAULT.clip}),
    ("-inf", {"carry_init": "normal", "carry_scale": "-inf"}, "Ignored carry_scale='-inf'",
     {"carry_init": "normal", "carry_scale": DEFAULT.carry_scale}),
    ("huge float", {"lr": "1e300"}, "the control accepts 1e-06 to 1e+06", {"lr": DEFAULT.lr}),
    ("huge text", {"cell": "x" * 5000}, "its value is 5,000 characters long", {"cell": DEFAULT.cell}),
    ("null byte", {"task": "\x00"}, "Unknown task", {"task": DEFAULT.task}),
    ("unknown cell", {"cell": "foo"}, "Unknown cell 'foo'", {"cell": DEFAULT.cell}),
    ("unknown task", {"task": "bar"}, "Unknown task 'bar'", {"task": DEFAULT.task}),
    ("unknown key", {"bogus": "1"}, "Ignored unknown setting 'bogus'", {}),
    ("cell/task misfit", {"cell": "conv_lstm"}, "ConvLSTM cannot run Adding problem", {"cell": DEFAULT.cell}),
    ("sweep lengths garbage", {"sweep_lengths": "ten, -1"}, "Kept the default lengths", {}),
    ("sweep cells unknown", {"sweep_cells": "foo,conv_lstm"}, "Kept the default cells", {}),
    ("over the memory budget", {**HUGE, "run": "1"}, "the limit is 53.7 MB",
     {"seq_len": DEFAULT.seq_len, "batch": DEFAULT.batch, "features": DEFAULT.features}),
]
LAST_SECTION = {"explore": None, "gradients": "3. Connectivity: which inputs the last output depends on",
                "api": "5. Migration checker", "home": None}


def expected_config(fields: dict) -> Config:
    from dataclasses import replace

    return replace(LINK, **fields)


URL_PAGES = ["explore", "gradients", "api", "home"]
# One link reader serves every page: each bad value is tried on one page, the pages taking turns, and the one that
# would start work (over the memory budget) on every page.
URL_CASES = [pytest.param(page, *row[1:], id=f"{row[0]}-{page}")
             for i, row in enumerate(URL_TABLE)
             for page in (URL_PAGES if "run" in row[1] else [URL_PAGES[i % len(URL_PAGES)]])]


@pytest.mark.parametrize("page, query, words, fields", URL_CASES)
def test_bad_url_values(page, query, words, fields, monkeypatch):
    monkeypatch.setenv("RNNLAB_MEMORY_BUDGET_GB", BUDGET_GB)
    at = open_page(page, **{**SMALL, **query})
    assert not at.exception
    config = at.session_state.url_state.config
    assert config == expected_config(fields), config
    notes = at.session_state.url_notes
    assert any(words in n for n in notes), notes
    if "run" in query:  # the estimate and the budget, and the link's run=1 was not carried out
        assert any(f"needs about {format_size(Config(**_ints(HUGE)))}" in n for n in notes), notes
        assert any("it was not started" in n for n in notes)
        state = at.session_state
        for key in ("run", "autorun_pending", "sweep_result"):  # nothing started, nothing waiting to start
            assert key not in state or not state[key], key
    if page == "home":  # the home page does not show the notes (app_pages/home.py); they wait in the session
        assert len(at.main.get("page_link")) >= 5
        return
    shown = [unescaped(w.value) for w in at.warning
             if w.value.startswith("Some settings in the link could not be used")]
    assert shown and words in shown[0]
    assert all(len(line) < 400 for line in shown[0].splitlines())
    if page == "explore":  # the controls show the kept values
        sidebar = at.sidebar
        for name in ("cell", "task"):
            assert sidebar.selectbox(key=f"w_{name}").value == getattr(config, name)
        for name in ("features", "seq_len", "batch", "lr", "clip", "steps"):
            assert sidebar.number_input(key=f"w_{name}").value == pytest.approx(getattr(config, name))
        assert [b.label for b in at.button][:4] == ["Train", "Stop", "Step", "Reset"]
        bad = {k: v for k, v in query.items() if k in config.to_dict() and v != config.to_dict()[k]}
        assert all(at.query_params.get(k) != v for k, v in bad.items())  # the URL now holds what is used
    else:
        assert LAST_SECTION[page] in [h.value for h in (at.subheader if page == "gradients" else at.header)]
    if page == "gradients":
        assert at.text_input(key="w_sweep_lengths").value == "10, 20, 40, 80"
        assert at.multiselect(key="w_sweep_cells").value == ["gru", "lstm", "simple"]


def _ints(query: dict[str, str]) -> dict[str, int]:
    return {k: int(v) for k, v in query.items()}


def format_size(config: Config) -> str:
    from rnnlab.text import format_bytes

    return format_bytes(config.memory_bytes())


def test_over_budget_choice_in_the_controls_is_refused_with_estimate_and_budget(monkeypatch):
    monkeypatch.setenv("RNNLAB_MEMORY_BUDGET_GB", BUDGET_GB)
    at = open_page("explore", **SMALL)
    at.sidebar.number_input(key="w_seq_len").set_value(100_000).run()
    at.sidebar.number_input(key="w_batch").set_value(4096).run()
    errors = [unescaped(e.value) for e in at.error]
    assert any("needs about" in e and "the limit is 53.7 MB" in e for e in errors), errors
    assert next(b for b in at.button if b.label == "Train").disabled
    assert not at.exception


# ------------------------------------------------------------------------------ gradients: sweep lengths


@pytest.fixture(scope="module")
def swept():
    """The gradient page after a good sweep (simple cell, T = 5, 10)."""
    at = open_page("gradients", **SMALL)
    at.multiselect(key="w_sweep_cells").set_value(["simple"])
    at.text_input(key="w_sweep_lengths").input("5, 10")
    next(b for b in at.button if b.label == "Run sweep").click().run()
    assert not at.exception and SWEEP_TITLE in figures(at)
    return at


SWEEP_TABLE = [  # (id, lengths text, cells, words)
    ("empty", "", ["simple"], "Give at least one sequence length"),
    ("wrong type", "ten", ["simple"], "whole numbers separated by commas"),
    ("zero", "0", ["simple"], "from 1 to 100000"),
    ("negative", "-5", ["simple"], "from 1 to 100000"),
    ("NaN", "nan", ["simple"], "whole numbers"),
    ("inf", "inf, 10", ["simple"], "whole numbers"),
    ("float", "1e3", ["simple"], "whole numbers"),
    ("out of range", "100001", ["simple"], "from 1 to 100000"),
    ("huge", "9" * 5000, ["simple"], "from 1 to 100000"),
    ("too many", ",".join(map(str, range(1, 14))), ["simple"], "1 to 12 sequence lengths"),
    ("no cells", "5, 10", [], "Pick at least one cell"),
    ("over the memory budget", "100000", ["simple"], "the limit is 53.7 MB"),
]


@pytest.mark.parametrize("text, cells, words", [r[1:] for r in SWEEP_TABLE], ids=[r[0] for r in SWEEP_TABLE])
def test_bad_sweep_input_keeps_the_last_sweep(swept, text, cells, words, monkeypatch):
    monkeypatch.setenv("RNNLAB_MEMORY_BUDGET_GB", BUDGET_GB)
    at = swept
    at.multiselect(key="w_sweep_cells").set_value(cells)
    at.text_input(key="w_sweep_lengths").input(text)
    next(b for b in at.button if b.label == "Run sweep").click().run()
    assert not at.exception
    errors = [unescaped(e.value) for e in at.error]
    assert any(words in e for e in errors), errors
    assert all(len(e) < 600 for e in errors)
    trace = [t for t in figures(at)[SWEEP_TITLE]["data"] if "fitted" not in t.get("name", "")]  # not its fit
    assert len(trace) == 1 and list(values(trace[0], "x")) == [5, 10]  # the last good sweep is still drawn
    assert any("last sweep that worked: Simple RNN at T = 5, 10" in c.value for c in at.caption)
    assert at.query_params["sweep_lengths"] == "5,10" and at.query_params["sweep_cells"] == "simple"
    assert "3. Connectivity: which inputs the last output depends on" in [s.value for s in at.subheader]


# ------------------------------------------------------------------------------------ API page: the dims


@pytest.fixture(scope="module")
def api():
    return open_page("api")


def api_tables(at) -> list:
    """The API page's three leaf tables (st.table), then its shape table (st.dataframe), as records."""
    return [t.value.to_dict("records") for t in [*at.table[:3], *at.dataframe[:1]]]


def good_api(at):
    """Back to the good settings (LSTM, batch 4, hidden 5; shape 2, 5, 3 with 4 features) and their tables."""
    at.selectbox(key="api_cell").set_value("lstm")
    at.text_input(key="api_batch").input("4")
    at.number_input(key="api_hidden").set_value(5)
    at.text_input(key="shape_input").input("2, 5, 3")
    at.number_input(key="shape_features").set_value(4)
    at.selectbox(key="shape_cell").set_value("lstm")
    at.run()
    assert not at.error or all("Batch dims" not in e.value and "Input shape" not in e.value for e in at.error)
    return api_tables(at)


DIMS_TABLE = [  # (id, widget key, text, other widgets, words)
    ("batch wrong type", "api_batch", "x", {}, "Batch dims must be whole numbers"),
    ("batch negative", "api_batch", "2, -1", {}, "Batch dims must be whole numbers"),
    ("batch zero", "api_batch", "0", {}, "each from 1 to 4096"),
    ("batch NaN", "api_batch", "nan", {}, "whole numbers"),
    ("batch inf", "api_batch", "inf", {}, "whole numbers"),
    ("batch float", "api_batch", "1e3", {}, "whole numbers"),
    ("batch huge number", "api_batch", "9" * 5000, {}, "each from 1 to 4096"),
    ("batch too many axes", "api_batch", "1, 2, 3, 4, 5", {}, "at most 4 numbers"),
    ("batch too many elements", "api_batch", "4096, 4096", {}, "at most 65536 elements"),
    ("carry over the limit", "api_batch", "4096, 16", {"api_hidden": 32}, "numbers per leaf"),
    ("spatial empty", "api_spatial", "", {"api_cell": "conv_lstm"}, "needs at least one spatial axis"),
    ("spatial too big", "api_spatial", "65, 65", {"api_cell": "conv_lstm"}, "each from 1 to 64"),
    ("shape empty", "shape_input", "", {}, "give at least one axis"),
    ("shape wrong type", "shape_input", "2, five, 3", {}, "Input shape must be whole numbers"),
    ("shape zero", "shape_input", "0, 5", {}, "each from 1 to 1024"),
    ("shape negative", "shape_input", "-1", {}, "whole numbers"),
    ("shape NaN", "shape_input", "nan", {}, "whole numbers"),
    ("shape huge number", "shape_input", "9" * 5000, {}, "each from 1 to 1024"),
    ("shape too many axes", "shape_input", "1, 1, 1, 1, 1, 1, 1", {}, "at most 6 numbers"),
    ("shape too many elements", "shape_input", "1000, 1000, 2", {}, "at most 1000000 elements"),
    ("output over the limit", "shape_input", "1000, 999, 1", {"shape_features": 256}, "The output would have"),
]


@pytest.mark.parametrize("key, text, others, words", [r[1:] for r in DIMS_TABLE], ids=[r[0] for r in DIMS_TABLE])
def test_bad_dims_keep_the_last_good_result(api, key, text, others, words):
    at = api
    good = good_api(at)
    if others:  # e.g. ConvLSTM (its spatial dims box appears) or 1024 hidden features, still a good state
        for name, value in others.items():
            (at.selectbox if name.endswith("cell") else at.number_input)(key=name).set_value(value)
        at.run()
        assert not at.error or all("dims" not in e.value and "shape" not in e.value for e in at.error)
        good = api_tables(at)
    at.text_input(key=key).input(text).run()
    assert not at.exception
    errors = [unescaped(e.value) for e in at.error]
    assert any(words in e for e in errors), errors
    assert all(len(e) < 600 for e in errors)
    section = "comparison" if key.startswith("api_") else "shape"
    assert any(f"Showing the last {section} that worked" in c.value for c in at.caption)
    tables = api_tables(at)
    if section == "comparison":
        verdicts = [m.value for m in [*at.success, *at.info] if m.value.startswith("**Verdict:**")]
        assert tables[:3] == good[:3] and len(verdicts) == 1
    else:
        assert tables[3] == good[3]
    assert "5. Migration checker" in [h.value for h in at.header]  # the whole page is drawn


# ------------------------------------------------------------------------ the migration checker: pasted code

PASTE_TABLE = [  # (id, text, words of the warning)
    ("empty", "", "Paste some Python code"),
    ("null byte", "import flax.linen as nn\nx = 1\x00\n", "contains a null byte"),
    ("binary bytes", bytes(range(1, 256)).decode("latin-1") + "\x00", "null byte"),
    ("over MAX_CHARS", "x = 1\n" * (migrate.MAX_CHARS // 6 + 1), f"{migrate.MAX_CHARS:,} characters"),
    ("over MAX_LINES", "x\n" * (migrate.MAX_LINES + 1), f"{migrate.MAX_LINES:,} lines"),
    ("syntax error", "def f(:\n    pass\n", "invalid syntax"),
    ("10000 parentheses", "(" * 10000, "too many nested parentheses"),
    ("deep nesting", "x = " + "-" * 60000 + "1", "nested too deeply"),
    ("long sum", "x = " + "1+" * 90000 + "1", "nested too deeply"),
]


@pytest.mark.parametrize("text, words", [r[1:] for r in PASTE_TABLE], ids=[r[0] for r in PASTE_TABLE])
def test_bad_pastes_give_a_warning(api, text, words):
    at = api
    at.text_area(key="mig_code").input(text).run()
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert any(words in w for w in warnings), [w[:200] for w in warnings]
    assert not [b for b in at.get("download_button")]  # nothing rewritten from bad input
    assert not any(m.value.startswith("**Line ") for m in at.markdown)


UPLOAD_TABLE = [  # (id, file name, bytes, words of the error)
    ("empty", "empty.py", b"", "is empty"),
    ("binary", "image.py", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
    ("non-UTF-8", "latin.py", "x = 'café'\n".encode("latin-1"), "is not UTF-8 text"),
    ("null byte", "nul.py", b"x = 1\n\x00\n", "null bytes"),
    ("huge", "huge.py", b"x = 1\n" * (4 * migrate.MAX_CHARS // 6 + 1), "bytes; the checker reads at most"),
    ("over MAX_CHARS", "long.py", b"x = 1\n" * (migrate.MAX_CHARS // 6 + 1), "200,000 characters"),
    ("over MAX_LINES", "lines.py", b"x\n" * (migrate.MAX_LINES + 1), "5,000 lines"),
    ("wrong type", "tool.exe", b"MZ\x90\x00", "only .py, .txt, .md files"),
]
GOOD_UPLOAD = "import flax.linen as nn\nrnn = nn.RNN(nn.LSTMCell(), 4)\n"


@pytest.mark.parametrize("name, data, words", [r[1:] for r in UPLOAD_TABLE], ids=[r[0] for r in UPLOAD_TABLE])
def test_bad_uploads_are_refused_and_keep_the_code(api, name, data, words):
    at = api
    at.file_uploader(key="mig_upload").set_value(("good.py", GOOD_UPLOAD.encode(), "text/x-python")).run()
    assert at.text_area(key="mig_code").value == GOOD_UPLOAD
    at.file_uploader(key="mig_upload").set_value((name, data, "application/octet-stream")).run()
    assert not at.exception
    errors = [unescaped(e.value) for e in at.error]
    assert any(words in e and "loaded" in e for e in errors), [e[:200] for e in errors]
    assert at.text_area(key="mig_code").value == GOOD_UPLOAD  # the last good code stays, with its findings
    assert [m.value for m in at.markdown if m.value.startswith("**Line 2:")]


def test_txt_upload_is_read_as_a_document(api):
    at = api
    doc = "My old code:\n\nrnn = nn.RNN(nn.GRUCell(), 8)\n\nWhy does it scan over the batch?\n"
    at.file_uploader(key="mig_upload").set_value(("question.txt", doc.encode(), "text/plain")).run()
    assert not at.exception and at.text_area(key="mig_code").value == doc
    assert [m.value for m in at.markdown if m.value.startswith("**Line 3:")]
    assert [b.label for b in at.get("download_button")] == ["Download the rewritten code"]


def test_pasted_code_in_the_app_is_never_run_or_imported(api, tmp_path, monkeypatch):
    canary = tmp_path / f"ran_{uuid.uuid4().hex}"
    module = f"rnnlab_app_side_effect_{uuid.uuid4().hex}"
    (tmp_path / f"{module}.py").write_text(f"open({str(canary)!r}, 'w').write('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    write = f"open({str(canary)!r}, 'w').write('x')"
    payload = (f"import flax.linen as nn\nimport os\nimport {module}\nos.system('touch {canary}')\n{write}\n"
               f"def __getattr__(name):\n    {write}\n"
               f"def deco(f):\n    {write}\n    return f\n@deco\ndef g():\n    pass\n"
               f"class Meta(type):\n    def __new__(m, *a):\n        {write}\n        return type.__new__(m, *a)\n"
               f"class C(metaclass=Meta):\n    pass\n"
               f"rnn = nn.RNN(nn.LSTMCell(), 4)\n")
    at = api
    at.text_area(key="mig_code").input(payload).run()
    assert not at.exception
    headings = [m.value for m in at.markdown if m.value.startswith("**Line ")]
    assert any(h.startswith("**Line 20:") for h in headings), headings
    diff = [c.value for c in at.code if c.language == "diff"]
    assert diff and "+rnn = nn.RNN(nn.LSTMCell(features=4))" in diff[0]
    assert not canary.exists() and module not in sys.modules


def test_sweep_fixture_numbers_are_real(swept):
    """The last-good sweep the table keeps is the library's (a guard that the fixture is not an empty chart)."""
    y = values(figures(swept)[SWEEP_TITLE]["data"][0], "y")  # log10 of the true sizes
    assert y.shape == (2,) and np.all(np.isfinite(y)) and y[0] > y[1]
