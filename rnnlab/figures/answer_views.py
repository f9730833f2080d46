"""A class's answers as a chart: how many picked each choice, a bar per round (the first answers and, after a
discussion, the second beside them), the choice the run confirms marked once it is revealed. Built for a projector
(1280x720): large type, the counts and shares written on the bars."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from rnnlab.figures.plots import COLORS, style_figure, wrap_title
from rnnlab.i18n import _, t

ROUND_COLORS = ("#56B4E9", "#0072B2")  # first answers light, second dark (Okabe and Ito's blues)
ANSWER_COLOR = "#009E73"
LABEL_WIDTH = 30  # a choice's label wraps beyond this width (a wide character counts 2)
CHECK = "✓"


def choice_label(text: str, is_answer: bool) -> str:
    """A choice as the chart's axis shows it: wrapped, and marked (bold, a check mark) when it is the answer."""
    wrapped = wrap_title(text, LABEL_WIDTH)
    return f"<b>{CHECK} {wrapped}</b>" if is_answer else wrapped


def bar_text(n: int, total: int) -> str:
    """What a bar says: the count and its share of the round."""
    share = round(100 * n / total) if total else 0
    # TRANSLATORS: on a bar of the class's answers: {n} students picked it, {percent} percent of those who answered
    return t("{n} ({percent}%)", n=n, percent=share)


def spread_figure(choices: Sequence[str], counts: Sequence[Sequence[int]], round_names: Sequence[str],
                  answer: int | None, title: str, height: int = 330) -> go.Figure:
    """Horizontal bars: one row per choice (in the reader's language, top to bottom as the students read them), one
    bar per round of ``counts`` (``counts[r][i]``: choice i in round r), named ``round_names``; the choice at
    ``answer`` marked when given (after the reveal)."""
    labels = [choice_label(c, i == answer) for i, c in enumerate(choices)]
    fig = go.Figure()
    top = max([1, *(max(row, default=0) for row in counts)])
    for r, (row, name) in enumerate(zip(counts, round_names)):
        total = sum(row)
        color = ROUND_COLORS[r % len(ROUND_COLORS)] if len(counts) > 1 else COLORS[0]
        fig.add_trace(go.Bar(y=labels, x=list(row), orientation="h", name=name, marker_color=color,
                             text=[bar_text(n, total) for n in row], textposition="outside", cliponaxis=False,
                             textfont=dict(size=16), hoverinfo="skip"))
    style_figure(fig, title, _("students"), "")
    fig.update_layout(barmode="group", height=height, bargap=0.25, showlegend=len(counts) > 1,
                      margin=dict(l=10, r=30, t=50, b=10), font=dict(size=15))
    fig.update_yaxes(autorange="reversed", automargin=True, tickfont=dict(size=15))
    fig.update_xaxes(range=[0, top * 1.3], dtick=max(1, round(top / 5)), rangemode="tozero", fixedrange=True)
    fig.update_yaxes(fixedrange=True)
    if answer is not None:
        fig.update_yaxes(tickfont=dict(size=15))
        fig.add_shape(type="rect", xref="paper", x0=0, x1=1, yref="y", y0=answer - 0.5, y1=answer + 0.5,
                      fillcolor=ANSWER_COLOR, opacity=0.12, line_width=0, layer="below")
    return fig
