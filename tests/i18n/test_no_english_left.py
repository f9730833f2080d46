"""Every page, every task's charts and every preset link as a Chinese or Russian reader meets them: no English word of
the app's own on a title, a caption, a control, a table or a chart (title, axes, legend, hover), outside code, names
and units. Unlike the pseudo-language sweep (tests/i18n/test_every_page.py), this reads the words the reader reads,
so English that a translated message carries inside it (a name passed in untranslated) is found too."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest

from rnnlab.model.tasks import TASKS
from rnnlab.sharing.presets import PRESETS
from tests.app.conftest import open_page
from tests.app_pages import PAGE_NAMES
from tests.i18n.pseudo import CODE, KEEP, QUOTED_ERROR, shown_texts

SMALL = {"seq_len": "20", "batch": "16", "features": "16", "steps": "20", "chunk": "10"}
# Names, notation and units a Chinese or Russian page writes as they are, beyond the pseudo-language sweep's.
NAMES = KEEP | {
    "carry",  # glossed once beside its translation: 状态（carry）, (carry)
    "adding", "copy", "temporal_order", "sine", "moving_dot",  # task ids inside an id's code form
    "tanh", "sin", "phi", "diag", "mathrm", "partial", "prod", "sum", "sqrt", "frac", "cdot", "approx", "odot", "ge",
    "le", "ldots", "tfrac", "text", "top", "lVert", "rVert", "Vert", "sigma", "quad",  # LaTeX inside $...$
    "Bengio", "Simard", "Frasconi", "Pascanu", "Mikolov", "Madsen", "Distill", "R2RT", "Hochreiter", "Schmidhuber",
    "Cho", "Zhou", "Heck", "Salem", "Okabe", "Ito", "FLIP", "Kingma", "Glorot", "Bengio's",  # authors, sources
    "Visualizing", "memorization", "RNNs", "Non", "Zero", "Initial", "States", "Recurrent", "Neural", "Networks",
    "NNX", "GRUCell", "LSTMCell", "MGUCell", "SimpleCell", "ConvLSTMCell", "OptimizedLSTMCell", "RNN", "RNNCellBase",
    "xavier", "glorot", "lecun", "orthogonal", "he", "truncated", "variance",  # initialiser names (code)
    "MiB", "GiB", "KiB", "MB", "GB", "KB", "ms",  # units
    "ABC", "ReLU", "sgd", "adam", "adamw", "Adam", "SGD", "AdamW", "RMSProp", "rmsprop", "API",
    "Gers", "Schraudolph", "RNNbow", "LearnedCarryRNN", "LearnedCarryLoop",
    # Flax's and Python's own names where the API page speaks of code in prose
    "features", "batch", "time", "size", "shape", "init", "apply", "rngs", "int", "jnp", "compact", "TypeError",
    "ValueError", "AttributeError", "ScopeParamNotFoundError", "PRNG",
    "truthy", "broadcast",  # glossed in brackets beside their translation, as carry is
}
LATEX = re.compile(r"\$[^$]*\$")
LINK_TARGET = re.compile(r"\]\([^)]*\)")  # a Markdown link's address: [words](?task=copy&features=16)
CITED = re.compile(r"[“«\"][A-Za-z0-9 ,:'-]+[”»\"]")  # a source's English title, quoted
CODE_BITS = re.compile(  # hyphenated terms of art, 'quoted' names, key=value, ['a', 'b'], (rng, batch_dims, size)
    r"\b(?:time|batch)-major\b|'[^'\s]+'|\w+=[^\s,)]*|\[['\"][^\]]*\]"
    r"|\((?:\s*[A-Za-z_][\w.]*\s*,)+\s*[A-Za-z_][\w.]*\s*\)")
HTML = re.compile(r"<[^>]*>|&\w+;")
NOTATION = re.compile(r"\|\|[^|]*\|\||\|[^|\s]*\||\b[a-zA-Z]_\{?\w+\}?|\b[A-Za-z]\(\w")  # ||dL/dh_t||, h_0, p(x)
WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def english_words(text: str) -> list[str]:
    """The English words of ``text`` outside code, notation, names and units."""
    rest = LATEX.sub(" ", str(text))
    rest = LINK_TARGET.sub("] ", rest)
    rest = CITED.sub(" ", rest)
    rest = CODE_BITS.sub(" ", rest)
    rest = HTML.sub(" ", rest)
    rest = CODE.sub(" ", rest)
    rest = QUOTED_ERROR.sub(" ", rest)
    rest = NOTATION.sub(" ", rest)
    words = WORD.findall(rest)
    return [w for w in words if len(w) >= 3 and w not in NAMES and w.lower() not in NAMES]


def chart_texts(spec: dict) -> Iterator[str]:
    """A chart's words as the reader sees them: titles, axes, legend names, annotations, hover texts."""
    layout = spec.get("layout", {})
    for key, value in layout.items():
        if isinstance(value, dict) and (key.startswith(("xaxis", "yaxis", "coloraxis")) or key in ("title", "legend")):
            title = value.get("title")
            yield str(title.get("text", "") if isinstance(title, dict) else title or "")
            yield from (str(v) for v in value.get("ticktext", []) or [])
    for note in layout.get("annotations", []) or []:
        yield str(note.get("text", ""))
    for shape in layout.get("shapes", []) or []:
        yield str((shape.get("label") or {}).get("text", ""))
    for trace in spec.get("data", []):
        yield str(trace.get("name", ""))
        for key in ("hovertemplate", "hovertext", "text"):
            value = trace.get(key)
            if isinstance(value, str):
                yield value
            elif isinstance(value, list):
                yield from (str(v) for v in value[:200] if isinstance(v, str))
        bar = trace.get("colorbar") or (trace.get("marker") or {}).get("colorbar") or {}
        if isinstance(bar.get("title"), dict):
            yield str(bar["title"].get("text", ""))


def english_on(at) -> list[tuple[str, str, list[str]]]:
    """(where, text, words) for everything on the page a reader reads that holds English words."""
    found = []
    texts = list(shown_texts(at))
    texts += [("chart", text) for chart in at.get("plotly_chart") for text in chart_texts(json.loads(chart.proto.spec))]
    for frame in at.get("dataframe"):
        table = frame.value
        texts += [("table header", str(c)) for c in table.columns]
        texts += [("table", v) for c in table.columns if table[c].dtype == object for v in table[c].astype(str)]
    for where, text in texts:
        words = english_words(text)
        if words:
            found.append((where, text[:160], words))
    return found


@pytest.mark.parametrize("lang", ["zh", "ru"])
@pytest.mark.parametrize("page", PAGE_NAMES)
def test_no_english_on_a_page_as_first_opened(page, lang):
    at = open_page(page, lang=lang, **SMALL)
    assert english_on(at) == []


PRESET_TASKS = {preset.config.task for preset in PRESETS if preset.page == "explore"}


@pytest.mark.parametrize("lang", ["zh", "ru"])
@pytest.mark.parametrize("task", sorted(set(TASKS) - PRESET_TASKS))
def test_no_english_on_a_trained_run_of_each_task_no_preset_trains(task, lang):
    at = open_page("explore", lang=lang, task=task, run="1", **SMALL)
    assert english_on(at) == []


@pytest.mark.parametrize("lang", ["zh", "ru"])
@pytest.mark.parametrize("preset", PRESETS, ids=lambda p: p.key)
def test_no_english_on_a_preset_link(preset, lang):
    query = {**preset.query(lang), **{k: v for k, v in SMALL.items() if k != "seq_len"}}
    at = open_page(preset.page, **query)
    assert english_on(at) == []
