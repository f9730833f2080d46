"""Class mode: the link a teacher projects (settings fixed, controls hidden, training started on opening) and its
QR code, so that a class opens the same experiment from their phones."""

from __future__ import annotations

import io
from dataclasses import replace
from urllib.parse import urlencode

import segno

from rnnlab.config import SETTINGS
from rnnlab.sharing.urlstate import UrlState, to_query

HIDEABLE = tuple(s.name for s in SETTINGS)  # every experiment control can be hidden from the class


def class_link(base: str, state: UrlState, hide: frozenset[str] | set[str], autorun: bool) -> str:
    """``base`` (the page's address) with the experiment, the controls to ``hide`` and whether it starts
    training as soon as it opens."""
    unknown = set(hide) - set(HIDEABLE)
    if unknown:
        raise ValueError(f"unknown controls: {sorted(unknown)}")
    query = urlencode(to_query(replace(state, hidden=frozenset(hide), autorun=autorun)))
    return f"{base}?{query}" if query else base


def qr_png(text: str, scale: int = 8) -> bytes:
    """A QR code of ``text`` as a PNG (black on white, a quiet zone of four modules), sized to be projected."""
    buffer = io.BytesIO()
    segno.make(text, error="m").save(buffer, kind="png", scale=scale, border=4)
    return buffer.getvalue()
