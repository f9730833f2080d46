"""The pseudo-language sweep: a page opened in ``qps``, where every translated message reads ⟦...⟧, shows any text
that did not pass through the catalog as words outside the brackets."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from streamlit.testing.v1 import AppTest

from rnnlab.i18n import PSEUDO_CLOSE, PSEUDO_OPEN
from ui.language import SELECTOR_LABEL

APP = str(Path(__file__).resolve().parents[2] / "app.py")

# Words that stay as they are in every language: names of libraries, cells, functions and notation.
KEEP = {
    "ABC",  # a class code's form in its box's placeholder ("ABC 234"), not a word
    "rnnlab", "Flax", "flax", "Linen", "linen", "NNX", "nnx", "JAX", "jax", "jaxlib", "XLA", "Optax", "optax", "Ray",
    "LSTM", "GRU", "MGU", "RNN", "ConvLSTM", "LSTMCell", "GRUCell", "MGUCell", "SimpleCell", "ConvLSTMCell",
    "OptimizedLSTMCell", "RNNCellBase", "CPU", "GPU", "TPU", "CUDA", "cuda", "cpu", "gpu", "tanh", "sigmoid", "Adam",
    "adam", "sgd", "SGD", "adamw", "rmsprop", "RMSprop", "PCA", "CSV", "csv", "URL", "QR", "msgpack", "float32",
    "float64", "float16", "bfloat16", "log10", "log", "exp", "max", "min", "sid", "lang", "inf", "nan", "NaN",
    "PyTorch", "cuDNN", "Streamlit", "Plotly", "Python", "numpy", "MSE", "BPTT", "dtype", "ones", "zeros", "normal",
    "uniform", "constant", "stddev", "scale", "value", "carry_init", "initialize_carry", "kernel_init",
    "HAProxy", "true", "false", "True", "False", "None", "self", "param", "params", "key", "rng", "PRNGKey", "vmap",
    "jit", "scan", "lax", "Bidirectional", "nn", "hide", "cmp", "npz",
}
WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:'s)?")
# A marked message, innermost first (a message's placeholder may hold another marked message: ⟦a ⟦b⟧ c⟧).
MARKED = re.compile(re.escape(PSEUDO_OPEN) + f"[^{PSEUDO_OPEN}{PSEUDO_CLOSE}]*" + re.escape(PSEUDO_CLOSE))
QUOTED_ERROR = re.compile(r"\b[A-Z]\w*(?:Error|Exception): [^\n⟦⟧]*")
CODE = re.compile(r"`[^`]*`|%\{[^}]*\}|<[^>]*>|:material/[a-z_]+:|https?://\S+|\b[\w.]+\([^)]*\)|\b\w+(?:[._]\w+)+\b")


def open_pseudo(page: str, monkeypatch, **query: str) -> AppTest:
    """``page`` run in the pseudo-language (``lang=qps``)."""
    monkeypatch.setenv("RNNLAB_PSEUDO_LANGUAGE", "1")
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in {**query, "lang": "qps"}.items():
        at.query_params[key] = value
    at.switch_page(f"app_pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _figure_texts(spec: dict) -> Iterator[str]:
    layout = spec.get("layout", {})
    for key, value in layout.items():
        if key.startswith(("xaxis", "yaxis", "coloraxis")) or key in ("title", "legend"):
            title = value.get("title") if isinstance(value, dict) else None
            if isinstance(title, dict) and "text" in title:
                yield str(title["text"])
            elif isinstance(title, str):
                yield title
    for note in layout.get("annotations", []) or []:
        yield str(note.get("text", ""))
    for shape in layout.get("shapes", []) or []:
        label = shape.get("label", {}) if isinstance(shape, dict) else {}
        if label.get("text"):
            yield str(label["text"])
    for slider in layout.get("sliders", []) or []:
        yield str(slider.get("currentvalue", {}).get("prefix", ""))
    for trace in spec.get("data", []):
        if trace.get("showlegend", True) is not False and trace.get("name"):
            yield str(trace["name"])
        for key in ("hovertemplate",):
            if isinstance(trace.get(key), str):
                yield trace[key]
        bar = trace.get("colorbar") or (trace.get("marker") or {}).get("colorbar")
        if isinstance(bar, dict) and isinstance(bar.get("title"), dict):
            yield str(bar["title"].get("text", ""))


def shown_texts(at: AppTest) -> Iterator[tuple[str, str]]:
    """(where, text) for every piece of text the page shows a reader (code blocks aside)."""
    for kind in ("title", "header", "subheader", "markdown", "caption", "text", "info", "warning", "error",
                 "success", "toast"):
        for element in getattr(at, kind, []):
            yield kind, str(element.value)
    for kind in ("button", "checkbox", "toggle", "radio", "selectbox", "multiselect", "number_input",
                 "text_input", "text_area", "slider", "select_slider", "color_picker", "date_input"):
        for widget in getattr(at, kind, []):
            if widget.label == SELECTOR_LABEL:
                continue  # the language selector speaks every language by design: its label, each language's name
            yield f"{kind} label", str(widget.label)
            if getattr(widget, "help", None):
                yield f"{kind} help", str(widget.help)
            if kind in ("radio", "selectbox", "multiselect", "select_slider"):
                for option in widget.options:
                    yield f"{kind} option", str(option)
            if getattr(widget, "placeholder", None):
                yield f"{kind} placeholder", str(widget.placeholder)
    for kind in ("expander", "tab", "status"):
        for element in at.get(kind):
            label = getattr(element, "label", None) or getattr(element.proto, "label", "")
            yield kind, str(label)
    for metric in at.get("metric"):
        yield "metric", str(metric.label)
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        for text in _figure_texts(spec):
            yield "chart", text
    for element in at.get("page_link"):
        yield "page_link", str(element.proto.label)
    for element in at.get("download_button"):
        yield "download_button", str(element.proto.label)


def english_left(text: str) -> list[str]:
    """The words of ``text`` outside the pseudo-language's brackets, less names, code and notation."""
    rest, inner = text, None
    while rest != inner:  # the innermost messages first, then those that held them
        inner, rest = rest, MARKED.sub(" ", rest)
    rest = CODE.sub(" ", rest)
    rest = QUOTED_ERROR.sub(" ", rest)  # Python's and Flax's own errors are quoted verbatim, in English
    words = (w.removesuffix("'s") for w in WORD.findall(rest))
    return [w for w in words if len(w) >= 3 and w not in KEEP and not w[0].isdigit()]


def unmarked(at: AppTest) -> list[tuple[str, str, list[str]]]:
    """(where, text, words) for every text on the page with words that did not go through the catalog."""
    found = []
    for where, text in shown_texts(at):
        words = english_left(text)
        if words:
            found.append((where, text[:160], words))
    return found
