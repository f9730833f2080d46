"""rnnlab's server: ``streamlit run serve.py`` serves the app of ``app.py`` through Streamlit's ASGI entry
(``st.App``), with what one tab may send and which pages may open it bounded before Streamlit reads a byte
(:class:`rnnlab.server.access.tab_bounds.SessionBounds`), and the server's settings checked once at start.

``streamlit run app.py`` still serves the same pages, without those bounds (for development).
"""

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import streamlit as st
from starlette.middleware import Middleware
from streamlit.proto.BackMsg_pb2 import BackMsg

from rnnlab.server.access import SessionBounds, header_trust_problem


def message_kind(data: bytes) -> str | None:
    """The type of a message a tab sent (``rerun_script``, ``stop_script``, ...)."""
    return BackMsg.FromString(data).WhichOneof("type")


@asynccontextmanager
async def checked_at_start(_app: st.App) -> AsyncIterator[None]:
    """Say once, in the server's log, what is wrong with its settings (e.g. proxy headers without the secret)."""
    problem = header_trust_problem()
    if problem:
        logging.getLogger("rnnlab").warning(problem)
    yield


bounds = Middleware(SessionBounds, kind=message_kind,
                    allowed_origins=frozenset(o.strip() for o in st.get_option("server.corsAllowedOrigins")),
                    any_origin=not st.get_option("server.enableCORS"))
app = st.App("app.py", middleware=[bounds], lifespan=checked_at_start)
