"""A place on the page that stays one element in every script run, so nothing of the last run stays faded."""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator


class LazyContainer:
    """An ``st.empty()`` that becomes a container when first used (call it); left empty otherwise.

    Streamlit shows the last script run's elements faded until the new run writes their place: an empty element
    there replaces them at once, where a container would keep its old children until the run ends.
    """

    def __init__(self) -> None:
        self._slot = st.empty()
        self._container: DeltaGenerator | None = None

    def __call__(self):
        if self._container is None:
            self._container = self._slot.container()
        return self._container
