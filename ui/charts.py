"""Drawing rnnlab's Plotly figures and tables: one place for how every chart behaves in the browser, and for how a
table writes its numbers."""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Real

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rnnlab.i18n import number

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


def shown_number(value: object, spec: str) -> str:
    """A table's number written the reader's way with ``spec`` (a decimal comma in Russian, ×10ⁿ in Chinese); a
    missing one (NaN) as an empty cell, anything else as it is."""
    if isinstance(value, Real) and not isinstance(value, (bool, np.bool_)):  # numpy's numbers too
        return "" if math.isnan(float(value)) else number(float(value), spec)
    return str(value)


def number_table(container, table: pd.DataFrame, formats: Mapping[str, str], **kwargs) -> None:
    """``table`` in ``container`` (``st``, a column) with the numbers of each column of ``formats`` written with its
    spec the reader's way, still sorted as numbers (a pandas Styler's display values; give those columns no format
    in ``column_config``, which would take precedence)."""
    shown = {column: (lambda value, spec=spec: shown_number(value, spec)) for column, spec in formats.items()
             if column in table}
    container.dataframe(table.style.format(shown), **kwargs)
