"""Drawing rnnlab's Plotly figures: one place for how every chart behaves in the browser."""

from __future__ import annotations

import plotly.graph_objects as go

# No floating toolbar: on a phone it covers titles and legends. Dragging still zooms, a double click resets.
# No tips either: Plotly's "Double-click to zoom back out" would be in English whatever the reader's language.
CHART_CONFIG = {"displayModeBar": False, "displaylogo": False, "showTips": False}


def chart(container, figure: go.Figure, key: str) -> None:
    """Draw ``figure`` in ``container`` (``st``, a column or a placeholder) under a stable element ``key``."""
    container.plotly_chart(copied_once(figure), key=key, config=CHART_CONFIG)


def copied_once(figure: go.Figure) -> go.Figure:
    """``figure``, copied into the dict Streamlit sends (``to_dict``) only the first time it is drawn.

    The figures of a pristine run are built once for a whole class (:mod:`rnnlab.figures.shared`), but Streamlit
    copies a figure whole, every array of it, for each page that draws it: most of what one more student cost on
    Explore. No figure is changed once built (it may be shared), so its first copy stays true; drawing reads it.
    """
    if "to_dict" not in vars(figure):
        copy = figure.to_dict()
        figure.to_dict = lambda: copy  # an attribute of this figure only: the method stays as it is
    return figure
