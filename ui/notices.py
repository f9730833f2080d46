"""What the server says to this tab about its own bounds (:mod:`rnnlab.server.access.tab_bounds`): it sends faster
than the server takes messages from one tab, or its earlier connection was closed for that."""

from __future__ import annotations

import streamlit as st

from rnnlab.server.access import notice


def bounds_notice() -> None:
    """A warning at the top of the page when this tab was slowed or closed for sending too fast; nothing
    otherwise (and nothing outside a running server)."""
    try:
        address, headers = st.context.ip_address, dict(st.context.headers)
    except Exception:  # noqa: BLE001 - outside a running server
        return
    said = notice(address, headers)
    if said is not None:
        st.warning(str(said), icon=":material/speed:")
