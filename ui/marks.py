"""The time step marked in every per-step chart of a session (Explore and Gradient flow): set by the slider
of the unrolled example or by clicking a point of any of these charts, drawn as a line in all of them."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from rnnlab.figures.plots import marked_figure
from ui.charts import CHART_CONFIG, copied_once

MARK = "marked_t"  # the session's marked step t (step t reads input t; t = 0 is the initial carry)
SLIDER = "w_example_mark"
DEFAULT_MARK = 1


def marked() -> int:
    """The marked time step."""
    return int(st.session_state.get(MARK, DEFAULT_MARK))


def set_mark(t: int) -> None:
    st.session_state[MARK] = int(t)
    st.session_state[SLIDER] = int(t)


def _from_click(key: str, offset: float) -> None:
    """Mark the step of the point clicked in chart ``key`` (its x minus ``offset``: 1 on a log time axis)."""
    points = (st.session_state.get(key) or {}).get("selection", {}).get("points") or []
    xs = [p.get("x") for p in points if isinstance(p.get("x"), int | float)]
    if xs:
        set_mark(round(xs[0] - offset))


def clickable_chart(container, figure: go.Figure, key: str, offset: float = 0.0) -> None:
    """Draw a per-step ``figure`` (x = step + ``offset``, made clickable by :func:`rnnlab.figures.plots.clickable`)
    whose points mark their step when clicked. The figure is not changed: it may be shared between sessions."""
    container.plotly_chart(copied_once(figure), key=key, config=CHART_CONFIG,
                           on_select=lambda: _from_click(key, offset), selection_mode="points")


def marked_chart(container, figure: go.Figure, key: str, first: int, last: int, offset: float = 0.0) -> None:
    """Draw a per-step ``figure`` built for this session alone (x = step + ``offset``, steps ``first``..``last``)
    with the marked step as a line; clicking one of its points marks that step everywhere."""
    clickable_chart(container, marked_figure(figure, marked(), first, last, offset), key, offset)
