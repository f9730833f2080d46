"""Who is asking: the one place that turns a request (its address and headers) into a client key, the person fair
shares count (the gate's slots, the kept runs, a session's message bounds).

A client key is ``PERSON@ADDRESS`` (:func:`at_address`: a browser on a machine), ``ip:ADDRESS`` (a machine), or
``session:ID`` (one tab of a browser on the server's own machine: the teacher's laptop, or tests). Shares count
per key, and per address across the keys of one machine (:func:`address_of`), so that one machine making up
browser ids cannot take more than one machine's share.

Behind a reverse proxy every browser arrives from the proxy's address. The proxy then names the browser's address
(``$RNNLAB_CLIENT_HEADER``, e.g. ``X-Forwarded-For``: its last address, the one the proxy appended) and a random
id per browser (``$RNNLAB_BROWSER_HEADER``, e.g. :data:`BROWSER_HEADER`, kept in the browser's cookie
:data:`BROWSER_COOKIE` and signed by the proxy). Those headers count only on requests that carry the proxy's secret
(``$RNNLAB_PROXY_SECRET``, in :data:`PROXY_HEADER`): without the secret configured they never count
(:func:`header_trust_problem` says so once at start), and a request without it is its sender's machine, whatever it
wrote. An id carries the time it was made (``SECONDS-RANDOM``) and counts for :data:`BROWSER_ID_TERM_S` only: after
that the browser is its machine until the proxy gives it a new one.

Public functions other features use for per-person and per-address bounds: :func:`client_key`,
:func:`address_of`, :func:`at_address`, :func:`vouched_address`.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import re
import time
from collections.abc import Mapping

ENV_CLIENT_HEADER = "RNNLAB_CLIENT_HEADER"
ENV_BROWSER_HEADER = "RNNLAB_BROWSER_HEADER"
ENV_PROXY_SECRET = "RNNLAB_PROXY_SECRET"
BROWSER_HEADER = "X-Rnnlab-Browser"
BROWSER_COOKIE = "rnnlab_browser"
PROXY_HEADER = "X-Rnnlab-Proxy"
BROWSER_ID_TERM_S = 12 * 3600  # a browser id counts this long after the proxy made it (a school day)
BROWSER_ID = re.compile(r"^([0-9]{10})-[A-Za-z0-9-]{16,53}$")  # SECONDS-UUID as the proxy makes it
ID_PATTERN = "^[0-9]{10}-[A-Za-z0-9-]+$"  # the same for the proxy's regex (HAProxy checks the length apart)
CLOCK_SKEW_S = 300  # an id made this far in the future still counts (the proxy's clock may run ahead)
AT = "@"


def header(headers: Mapping[str, str] | None, name: str) -> str:
    """The value of header ``name`` (any case; several copies joined by commas), or ''."""
    name = name.strip().lower()
    return ",".join(v for k, v in (headers or {}).items() if k.lower() == name).strip()


def proxy_secret() -> str:
    return os.environ.get(ENV_PROXY_SECRET, "").strip()


def from_proxy(headers: Mapping[str, str] | None) -> bool:
    """Whether this request carries the proxy's secret (``$RNNLAB_PROXY_SECRET`` in :data:`PROXY_HEADER`,
    compared in constant time); never without a secret configured."""
    secret = proxy_secret()
    return bool(secret) and hmac.compare_digest(header(headers, PROXY_HEADER).encode(), secret.encode())


def header_trust_problem() -> str | None:
    """What is wrong with the proxy settings of this process, in one sentence for its log at start; None when
    nothing is. The proxy's headers are named but no secret is set: they are ignored (fail closed)."""
    named = [n for n in (ENV_CLIENT_HEADER, ENV_BROWSER_HEADER) if os.environ.get(n, "").strip()]
    if named and not proxy_secret():
        return (f"{' and '.join(named)} set without {ENV_PROXY_SECRET}: the proxy's headers are ignored and every "
                f"browser counts as the machine it connects from. Set {ENV_PROXY_SECRET} to the secret the proxy "
                f"writes in {PROXY_HEADER} (python -m rnnlab.cluster up makes one)")
    return None


def forwarded_address(headers: Mapping[str, str] | None) -> str | None:
    """The browser's address from the header ``$RNNLAB_CLIENT_HEADER`` names: its last address, the one the proxy
    appended (those before it are the client's own words); None when not configured, absent or malformed. Read
    it only on a request the proxy vouches for (:func:`vouched_address`)."""
    name = os.environ.get(ENV_CLIENT_HEADER, "").strip()
    if not name or not headers:
        return None
    try:
        return str(ipaddress.ip_address(header(headers, name).split(",")[-1].strip()))
    except ValueError:
        return None


def browser_of(headers: Mapping[str, str] | None, now: float | None = None) -> str | None:
    """The browser's id from the header ``$RNNLAB_BROWSER_HEADER`` names, or None: not configured, absent, not of
    the id's form, or older than :data:`BROWSER_ID_TERM_S`. Read it only on a request the proxy vouches for."""
    name = os.environ.get(ENV_BROWSER_HEADER, "").strip()
    if not name or not headers:
        return None
    given = header(headers, name)
    found = BROWSER_ID.match(given)
    if found is None:
        return None
    age = (time.time() if now is None else now) - int(found[1])
    return given if -CLOCK_SKEW_S <= age <= BROWSER_ID_TERM_S else None


def vouched_address(address: str | None, headers: Mapping[str, str] | None) -> str | None:
    """The machine a request comes from: the address the proxy names when it vouches for the request, else the
    connection's ``address``."""
    if from_proxy(headers):
        return forwarded_address(headers) or address
    return address


def at_address(person: str, address: str) -> str:
    """The client key of ``person`` (e.g. ``browser:<id>``) on the machine ``address``: shares count per person,
    and per address across the persons there."""
    return f"{person}{AT}{address}"


def address_of(client: str) -> str:
    """The machine of a client key: its address part (:func:`at_address`), or the machine a key ``ip:ADDRESS``
    is; '' when it has none (a tab on the server's own machine)."""
    if AT in client:
        return client.rpartition(AT)[2]
    return client.removeprefix("ip:") if client.startswith("ip:") else ""


def is_loopback(address: str | None) -> bool:
    """Whether ``address`` is this machine's (or unknown)."""
    if not address:
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def client_key(address: str | None, session: str, headers: Mapping[str, str] | None) -> str:
    """Who is asking, for fair shares: ``address`` is the connection's, ``session`` the tab's, ``headers`` the
    request's (for a page: its websocket handshake's).

    Through the proxy (:func:`from_proxy`): the browser it names on the machine it saw (``browser:<id>@<address>``),
    or that machine (``ip:<address>``) when it names no browser. Otherwise the sender's machine, so that more tabs
    do not get more; a tab on the server's own machine counts on its own (``session:<id>``), unless the request
    carries the proxy's secret header without the secret (it went around the proxy: its machine then)."""
    if from_proxy(headers):
        machine = forwarded_address(headers) or address or ""
        browser = browser_of(headers)
        if browser is not None:
            return at_address(f"browser:{browser}", machine)
        if machine and not is_loopback(machine):
            return f"ip:{machine}"
        return f"session:{session}" if session else (f"ip:{machine}" if machine else "")
    around = bool(header(headers, PROXY_HEADER))
    if address and (not is_loopback(address) or around):
        return f"ip:{address}"
    return f"session:{session}" if session else ""
