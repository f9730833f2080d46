"""A reverse proxy for browser tests that writes ``X-Forwarded-For`` and its secret (``X-Rnnlab-Proxy``:
:data:`SECRET`, which the server must know as ``RNNLAB_PROXY_SECRET``) into every request, WebSocket upgrades
included, as a real proxy in front of the app does. Browsers' own extra headers do not reach the WebSocket
handshake in every Chromium (150 sends none), and Streamlit reads a session's headers from that handshake."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlparse

HEADER = b"X-Forwarded-For"
SECRET = "e2e-proxy-secret"
VOUCH = b"X-Rnnlab-Proxy: " + SECRET.encode()


def _pipe(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
    except OSError:
        pass
    finally:
        for s in (source, target):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


def _forward_requests(client: socket.socket, upstream: socket.socket, address: bytes) -> None:
    """Each request's head gets the header (any the browser sent is dropped); a body of Content-Length bytes
    follows as it is; after a WebSocket upgrade, the bytes pass untouched."""
    buffer = b""
    try:
        while True:
            while b"\r\n\r\n" not in buffer:
                data = client.recv(65536)
                if not data:
                    return
                buffer += data
            head, buffer = buffer.split(b"\r\n\r\n", 1)
            lines = head.split(b"\r\n")
            kept = [line for line in lines[1:] if not line.lower().startswith((HEADER.lower() + b":",
                                                                                  b"x-rnnlab-proxy:"))]
            upstream.sendall(b"\r\n".join([lines[0], *kept, HEADER + b": " + address, VOUCH]) + b"\r\n\r\n")
            fields = {k.strip().lower(): v.strip() for k, _, v in (line.partition(b":") for line in kept)}
            length = int(fields.get(b"content-length", b"0") or 0)
            while len(buffer) < length:
                data = client.recv(65536)
                if not data:
                    return
                buffer += data
            upstream.sendall(buffer[:length])
            buffer = buffer[length:]
            if fields.get(b"upgrade", b"").lower() == b"websocket":
                if buffer:
                    upstream.sendall(buffer)
                _pipe(client, upstream)
                return
    except OSError:
        pass
    finally:
        try:
            upstream.shutdown(socket.SHUT_WR)
        except OSError:
            pass


@contextmanager
def forwarding_proxy(base: str, address: str) -> Iterator[str]:
    """A proxy on a free localhost port in front of ``base`` (``http://host:port``) that says every request
    comes from ``address``; yields the proxy's base URL."""
    target = urlparse(base)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)

    def serve() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:  # the listener is closed
                return
            upstream = socket.create_connection((target.hostname, target.port))
            threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
            threading.Thread(target=_forward_requests, args=(client, upstream, address.encode()),
                             daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()
