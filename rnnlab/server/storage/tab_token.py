"""The name of a tab's reload token in the page's URL (:mod:`rnnlab.server.storage.session_store` keeps the runs under
it).

A module of its own, importing nothing: a fresh server's first script run reads the URL before JAX is imported, so
that the page can say what it is loading from its first second.
"""

TOKEN_PARAM = "sid"  # the URL query parameter holding the token
