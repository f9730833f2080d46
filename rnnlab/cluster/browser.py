"""Who is asking, per browser: a lecture hall behind one NAT (or every browser behind one reverse proxy) arrives
from one address, and fair shares by address would make the whole hall one client.

The proxy in front of the web processes gives each browser a random id in a cookie of its own
(:data:`BROWSER_COOKIE`) the first time it comes, and passes it on every request in a header it writes itself,
dropping any copy the browser sent: ``$RNNLAB_BROWSER_HEADER`` names that header (the HAProxy configuration of
:mod:`.web` writes :data:`BROWSER_HEADER`). Set it only behind such a proxy. A browser that clears its cookies,
or refuses them, counts as a new one: the id is a fair-share key, not a login. Without the header (or with a
malformed value) the client is :func:`rnnlab.server.gate.client_of`'s: the browser's machine.

The proxy signs each id it makes (an HMAC with a key of its own, in the cookie beside the id) and mints a new one
for a cookie whose signature does not match, so an id made up by a browser is a new person, held with every other
id of its machine to the per-address share (:func:`client_key`). With ``$RNNLAB_PROXY_SECRET`` set, the proxy's
headers (the browser id, the forwarded address) count only on requests that carry that secret in
:data:`PROXY_HEADER`, which the proxy writes: a request sent straight to a web process, around the proxy, is its
sender's machine, whatever headers it wrote.
"""

from __future__ import annotations

import hmac
import os
import re
from collections.abc import Mapping

from rnnlab.server.gate import ENV_PROXY_SECRET, at_address, client_of, forwarded_address

ENV_BROWSER_HEADER = "RNNLAB_BROWSER_HEADER"
BROWSER_HEADER = "X-Rnnlab-Browser"
BROWSER_COOKIE = "rnnlab_browser"
BROWSER_ID = re.compile(r"^[A-Za-z0-9-]{16,64}$")  # a UUID as HAProxy's uuid fetch writes it fits
ID_PATTERN = "^[A-Za-z0-9-]+$"  # the same, without the length, as the proxy's regex (HAProxy checks the length apart)
PROXY_HEADER = "X-Rnnlab-Proxy"


def header(headers: Mapping[str, str] | None, name: str) -> str:
    """The value of header ``name`` (any case), or ''."""
    name = name.strip().lower()
    return next((v for k, v in (headers or {}).items() if k.lower() == name), "").strip()


def from_proxy(headers: Mapping[str, str] | None) -> bool:
    """Whether the proxy's headers count for this request: no ``$RNNLAB_PROXY_SECRET`` set, or the request carries
    it in :data:`PROXY_HEADER` (compared in constant time)."""
    secret = os.environ.get(ENV_PROXY_SECRET, "").strip()
    return not secret or hmac.compare_digest(header(headers, PROXY_HEADER).encode(), secret.encode())


def browser_of(headers: Mapping[str, str] | None) -> str | None:
    """The browser's id from the header ``$RNNLAB_BROWSER_HEADER`` names, or None (not configured, absent, or not
    of the id's form)."""
    name = os.environ.get(ENV_BROWSER_HEADER, "").strip()
    if not name or not headers:
        return None
    given = header(headers, name)
    return given if BROWSER_ID.match(given) else None


def browser_client(headers: Mapping[str, str] | None) -> str | None:
    """The fair-share key of the browser the proxy names (``browser:<id>``), or None."""
    browser = browser_of(headers)
    return f"browser:{browser}" if browser else None


def client_key(address: str | None, session: str, headers: Mapping[str, str] | None) -> str:
    """Who is asking, for fair shares: the browser the proxy names, on the machine the proxy saw
    (``browser:<id>@<address>``: a share per browser, and one per machine across its browsers); without a browser
    id, :func:`rnnlab.server.gate.client_of`'s machine (or tab, on the server's own machine). A request that did not
    come through the proxy (:func:`from_proxy`) is its sender's machine, a tab on loopback included."""
    if not from_proxy(headers):
        return client_of(address, "", None, per_tab_on_loopback=False) or f"session:{session}"
    browser = browser_client(headers)
    if browser is None:
        return client_of(address, session, headers)
    return at_address(browser, forwarded_address(headers) or address or "")
