"""What is kept for a reload: a tab's runs under its token (:mod:`.session_store`), written to files that outlive
the web process (:mod:`.run_files`), the token's name in a page's URL (:mod:`.tab_token`), and the checks a
folder of private files passes (:mod:`.folders`). The door's names (``DOOR``) are what the layers above take."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rnnlab.server.doors import opener

if TYPE_CHECKING:
    from rnnlab.server.storage import session_store
    from rnnlab.server.storage.folders import ownership_problem
    from rnnlab.server.storage.tab_token import TOKEN_PARAM

DOOR = {
    "session_store": "rnnlab.server.storage.session_store",
    "ownership_problem": "rnnlab.server.storage.folders",
    "TOKEN_PARAM": "rnnlab.server.storage.tab_token",
}
__all__ = [
    "TOKEN_PARAM", "ownership_problem", "session_store",
]
__getattr__ = opener(__name__, DOOR)
