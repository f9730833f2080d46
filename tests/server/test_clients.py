"""Who is asking (rnnlab.server.access.clients): a machine, a tab on the server's own machine, or behind the proxy the
browser it names on the machine it saw; the proxy's headers count only with its secret (never without one set,
which the server says once at start), and a browser id only within its term."""

from __future__ import annotations

import time

import pytest

from rnnlab.server.access.clients import (
    BROWSER_HEADER,
    BROWSER_ID_TERM_S,
    ENV_BROWSER_HEADER,
    ENV_CLIENT_HEADER,
    ENV_PROXY_SECRET,
    PROXY_HEADER,
    address_of,
    at_address,
    browser_of,
    client_key,
    header_trust_problem,
    vouched_address,
)

UUID = "0b9d3e4a-5f6c-4d7e-8f90-a1b2c3d4e5f6"


def browser_id(age_s: float = 0.0) -> str:
    return f"{int(time.time() - age_s)}-{UUID}"


@pytest.fixture
def behind_proxy(monkeypatch):
    monkeypatch.setenv(ENV_CLIENT_HEADER, "X-Forwarded-For")
    monkeypatch.setenv(ENV_BROWSER_HEADER, BROWSER_HEADER)
    monkeypatch.setenv(ENV_PROXY_SECRET, "s3cret")


def test_a_client_is_a_machine_and_on_the_servers_own_machine_a_tab(monkeypatch):
    for name in (ENV_CLIENT_HEADER, ENV_BROWSER_HEADER, ENV_PROXY_SECRET):
        monkeypatch.delenv(name, raising=False)
    assert client_key("10.0.0.7", "tab-1", {}) == client_key("10.0.0.7", "tab-2", {}) == "ip:10.0.0.7"
    assert client_key("127.0.0.1", "tab-1", {}) == "session:tab-1" != client_key("127.0.0.1", "tab-2", {})
    assert client_key(None, "", {}) == ""
    assert address_of(at_address("browser:x", "10.0.0.66")) == address_of("ip:10.0.0.66") == "10.0.0.66"
    assert address_of("session:tab-1") == ""


def test_the_proxys_headers_count_only_with_its_secret(behind_proxy):
    proxied = {BROWSER_HEADER: browser_id(), "X-Forwarded-For": "6.6.6.6, 10.0.0.7", PROXY_HEADER: "s3cret"}
    assert client_key("127.0.0.1", "tab-1", proxied) == f"browser:{browser_id()}@10.0.0.7"  # the proxy's hop
    assert vouched_address("127.0.0.1", proxied) == "10.0.0.7"
    no_id = {k: v for k, v in proxied.items() if k != BROWSER_HEADER}
    assert client_key("127.0.0.1", "tab-1", no_id) == client_key("127.0.0.1", "tab-2", no_id) == "ip:10.0.0.7"
    for forged in ({**proxied, PROXY_HEADER: "guess"}, {k: v for k, v in proxied.items() if k != PROXY_HEADER}):
        # around the proxy: the sender's machine, one person for all its tabs and made-up ids
        assert vouched_address("127.0.0.1", forged) == "127.0.0.1"
        assert client_key("10.0.0.9", "tab-1", forged) == "ip:10.0.0.9"
    guessed = {**proxied, PROXY_HEADER: "guess"}
    assert client_key("127.0.0.1", "tab-1", guessed) == client_key("127.0.0.1", "tab-2", guessed) == "ip:127.0.0.1"
    assert client_key("127.0.0.1", "tab-1", {}) == "session:tab-1"  # the teacher's laptop: per tab, as before


def test_without_a_secret_the_proxys_headers_never_count_and_the_server_says_so(behind_proxy, monkeypatch):
    assert header_trust_problem() is None
    monkeypatch.delenv(ENV_PROXY_SECRET)
    problem = header_trust_problem()
    assert problem and ENV_CLIENT_HEADER in problem and ENV_BROWSER_HEADER in problem and ENV_PROXY_SECRET in problem
    proxied = {BROWSER_HEADER: browser_id(), "X-Forwarded-For": "10.0.0.7", PROXY_HEADER: ""}
    assert client_key("10.0.0.9", "tab-1", proxied) == "ip:10.0.0.9"  # fail closed: the connection's machine
    assert client_key("127.0.0.1", "tab-1", {"X-Forwarded-For": "10.0.0.7"}) == "session:tab-1"
    monkeypatch.delenv(ENV_CLIENT_HEADER)
    monkeypatch.delenv(ENV_BROWSER_HEADER)
    assert header_trust_problem() is None  # no proxy named: nothing to say


def test_a_browser_id_carries_its_age_and_expires(behind_proxy):
    assert browser_of({BROWSER_HEADER: browser_id(60)}) == browser_id(60)
    assert browser_of({BROWSER_HEADER: browser_id(BROWSER_ID_TERM_S - 60)}) is not None
    assert browser_of({BROWSER_HEADER: browser_id(BROWSER_ID_TERM_S + 60)}) is None  # past its term
    assert browser_of({BROWSER_HEADER: browser_id(-3600)}) is None  # made an hour in the future: not the proxy's
    for bad in ("", UUID, "short", "x" * 65, "a;b=c" + "0" * 20, "../../etc/passwd-0123456789", f"12-{UUID}"):
        assert browser_of({BROWSER_HEADER: bad}) is None, bad
    expired = {BROWSER_HEADER: browser_id(BROWSER_ID_TERM_S + 60), "X-Forwarded-For": "10.0.0.7",
               PROXY_HEADER: "s3cret"}
    assert client_key("127.0.0.1", "tab-1", expired) == "ip:10.0.0.7"  # its machine's share until a new id
