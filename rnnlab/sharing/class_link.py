"""Class mode: the link a teacher projects (settings fixed, controls hidden, training started on opening) and its
QR code, so that a class opens the same experiment from their phones."""

from __future__ import annotations

import io
from dataclasses import replace
from urllib.parse import urlencode

import segno

from rnnlab.config import SETTINGS
from rnnlab.i18n import LANGUAGES
from rnnlab.sharing.urlstate import UrlState, to_query

HIDEABLE = tuple(s.name for s in SETTINGS)  # every experiment control can be hidden from the class
# The class's language: None (no ``lang`` in the link: each student's own browser language) or one of the app's.
CLASS_LANGUAGES: tuple[str | None, ...] = (None, *LANGUAGES)


def default_class_language(state: UrlState) -> str | None:
    """The class's language the teacher starts from: the teacher's own when their link chose one, else None."""
    return state.lang if state.lang in LANGUAGES else None


def projected_link(base: str, state: UrlState, hide: frozenset[str] | set[str], autorun: bool,
               lang: str | None = None) -> str:
    """``base`` (the page's address) with the experiment, the controls to ``hide``, whether it starts
    training as soon as it opens, and the class's language (``lang``; None: no ``lang`` in the link, so that each
    student's browser language is used)."""
    unknown = set(hide) - set(HIDEABLE)
    if unknown:
        raise ValueError(f"unknown controls: {sorted(unknown)}")
    if lang not in CLASS_LANGUAGES:
        raise ValueError(f"unknown language: {lang!r}")
    query = urlencode(to_query(replace(state, hidden=frozenset(hide), autorun=autorun, lang=lang)))
    return f"{base}?{query}" if query else base


def qr_png(text: str, scale: int = 8) -> bytes:
    """A QR code of ``text`` as a PNG (black on white, a quiet zone of four modules), sized to be projected."""
    buffer = io.BytesIO()
    segno.make(text, error="m").save(buffer, kind="png", scale=scale, border=4)
    return buffer.getvalue()
