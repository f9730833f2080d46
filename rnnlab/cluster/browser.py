"""Who is asking, per browser: a lecture hall behind one NAT (or every browser behind one reverse proxy) arrives
from one address, and fair shares by address would make the whole hall one client.

The proxy in front of the web processes gives each browser a random id in a cookie of its own
(:data:`BROWSER_COOKIE`) the first time it comes, and passes it on every request in a header it writes itself,
dropping any copy the browser sent: ``$RNNLAB_BROWSER_HEADER`` names that header (the HAProxy configuration of
:mod:`.web` writes :data:`BROWSER_HEADER`). Set it only behind such a proxy. A browser that clears its cookies,
or refuses them, counts as a new one: the id is a fair-share key, not a login. Without the header (or with a
malformed value) the client is :func:`rnnlab.server.gate.client_of`'s: the browser's machine.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

ENV_BROWSER_HEADER = "RNNLAB_BROWSER_HEADER"
BROWSER_HEADER = "X-Rnnlab-Browser"
BROWSER_COOKIE = "rnnlab_browser"
BROWSER_ID = re.compile(r"^[A-Za-z0-9-]{16,64}$")  # a UUID as HAProxy's uuid fetch writes it fits
ID_PATTERN = "^[A-Za-z0-9-]+$"  # the same, without the length, as the proxy's regex (HAProxy checks the length apart)


def browser_of(headers: Mapping[str, str] | None) -> str | None:
    """The browser's id from the header ``$RNNLAB_BROWSER_HEADER`` names, or None (not configured, absent, or not
    of the id's form)."""
    name = os.environ.get(ENV_BROWSER_HEADER, "").strip().lower()
    if not name or not headers:
        return None
    given = next((v for k, v in headers.items() if k.lower() == name), "").strip()
    return given if BROWSER_ID.match(given) else None


def browser_client(headers: Mapping[str, str] | None) -> str | None:
    """The fair-share key of the browser the proxy names (``browser:<id>``), or None."""
    browser = browser_of(headers)
    return f"browser:{browser}" if browser else None
