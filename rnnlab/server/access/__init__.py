"""Who is asking and what a tab may send: the client key every per-person and per-address bound counts
(:mod:`.clients`), the bounds at a web process's ASGI boundary and the notice a bounded page shows
(:mod:`.tab_bounds`), and page runs taking turns (:mod:`.turns`). The door's names (``DOOR``) are what the layers
above take."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rnnlab.server.doors import opener

if TYPE_CHECKING:
    from rnnlab.server.access.clients import client_key, header_trust_problem
    from rnnlab.server.access.tab_bounds import SessionBounds, notice
    from rnnlab.server.access.turns import PAGE_TURNS

DOOR = {
    "client_key": "rnnlab.server.access.clients",
    "header_trust_problem": "rnnlab.server.access.clients",
    "SessionBounds": "rnnlab.server.access.tab_bounds",
    "notice": "rnnlab.server.access.tab_bounds",
    "PAGE_TURNS": "rnnlab.server.access.turns",
}
__all__ = [
    "PAGE_TURNS", "SessionBounds", "client_key", "header_trust_problem", "notice",
]
__getattr__ = opener(__name__, DOOR)
