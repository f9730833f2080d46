"""Drawing rnnlab's Plotly figures: one place for how every chart behaves in the browser."""

from __future__ import annotations

import plotly.graph_objects as go

# No floating toolbar: on a phone it covers titles and legends. Dragging still zooms, a double click resets.
# No tips either: Plotly's "Double-click to zoom back out" would be in English whatever the reader's language.
CHART_CONFIG = {"displayModeBar": False, "displaylogo": False, "showTips": False}


def chart(container, figure: go.Figure, key: str) -> None:
    """Draw ``figure`` in ``container`` (``st``, a column or a placeholder) under a stable element ``key``."""
    container.plotly_chart(figure, key=key, config=CHART_CONFIG)
