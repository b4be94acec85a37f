"""The one way this library downloads something itself: a guarded HTTP(S) GET.

Used for text documents given by URL (Anthropic fetches only PDFs and images by URL, so
a text document is downloaded here, on send). Every download:

- refuses private, loopback, link-local, shared (CGNAT), multicast and reserved
  addresses unless ``allow_private=True``: an IP written in the URL is refused before
  any lookup, a name is resolved first and refused when any of its addresses is one of
  those, and the connection goes to the address that was checked (a second lookup
  cannot swap in another one);
- follows at most :data:`MAX_REDIRECTS` redirects, to the same host only (and never
  from ``https`` down to ``http``);
- reads at most :data:`MAX_BYTES` (a larger ``Content-Length`` is refused before the
  body is read);
- ends within :data:`DEADLINE` seconds all told: lookup, connection, headers and body
  (a server that drips its answer cannot hold the caller longer).

Failures are :class:`DownloadError` (a ``ValueError``) naming the URL and the reason.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import threading
from contextlib import suppress
from typing import Any
from urllib.parse import urljoin, urlsplit

__all__ = ["DEADLINE", "MAX_BYTES", "MAX_REDIRECTS", "DownloadError", "download", "resolve"]

DEADLINE = 30.0
MAX_BYTES = 10_000_000  # far more text than a context window holds
MAX_REDIRECTS = 5
_CHUNK = 64 * 1024
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_PORTS = {"http": 80, "https": 443}


class DownloadError(ValueError):
    """A download was refused or failed; the message names the URL and why."""


def resolve(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to (a seam: tests resolve names their own way)."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def download(url: str, *, allow_private: bool = False) -> bytes:
    """The body of ``url`` (see the module docstring for what is refused).

    Raises
    ------
    DownloadError
        The URL is not http(s), its address is refused, it redirects elsewhere, its
        body is too large, it does not finish in time, or the server fails.
    """
    job = _Download(url, allow_private)
    worker = threading.Thread(target=job.run, name="chatlas-like-download", daemon=True)
    worker.start()
    worker.join(DEADLINE)
    if worker.is_alive():
        job.abandon()  # closes its socket: the thread ends at its next read
        raise DownloadError(f"could not download {url}: not done within {DEADLINE:g} s")
    return job.result()


class _Download:
    """One download, run in a worker thread that the caller stops waiting for at the
    deadline (a lookup or a dripping server cannot be interrupted any other way)."""

    def __init__(self, url: str, allow_private: bool) -> None:
        self.url = url
        self.allow_private = allow_private
        self._lock = threading.Lock()
        self._connection: http.client.HTTPConnection | None = None
        self._socket: socket.socket | None = None
        self._response: http.client.HTTPResponse | None = None
        self._abandoned = False
        self._body: bytes | None = None
        self._error: BaseException | None = None

    def run(self) -> None:
        try:
            self._body = self._fetch()
        except BaseException as e:  # handed to the caller, which raises it
            self._error = e
        finally:
            self._close()

    def result(self) -> bytes:
        if self._error is not None:
            if isinstance(self._error, DownloadError):
                raise self._error
            raise DownloadError(f"could not download {self.url}: {_why(self._error)}")
        assert self._body is not None
        return self._body

    def abandon(self) -> None:
        with self._lock:
            self._abandoned = True
        self._close()

    def _fetch(self) -> bytes:
        origin = urlsplit(self.url)
        url = self.url
        for _ in range(MAX_REDIRECTS + 1):
            response = self._get(url)
            if response.status not in _REDIRECTS:
                return self._body_of(response)
            target = urljoin(url, response.getheader("Location") or "")
            self._refuse_redirect(origin, urlsplit(url), urlsplit(target))
            self._close()
            url = target
        raise self._refused(f"more than {MAX_REDIRECTS} redirects")

    def _get(self, url: str) -> http.client.HTTPResponse:
        parts = urlsplit(url)
        if parts.scheme not in _PORTS or not parts.hostname:
            raise self._refused(f"only http(s) URLs are downloaded, not {url!r}")
        host = parts.hostname
        port = parts.port or _PORTS[parts.scheme]
        address = self._checked_address(host, port)
        connection = _connection(parts.scheme, host, port, address)
        with self._lock:
            if self._abandoned:
                raise self._refused("abandoned")
            self._connection = connection
        target = parts.path or "/"
        if parts.query:
            target += f"?{parts.query}"
        connection.request("GET", target, headers={"Accept-Encoding": "identity"})
        with self._lock:  # kept: the connection forgets it once a response closes it
            self._socket = connection.sock
        response = connection.getresponse()
        with self._lock:
            self._response = response
        return response

    def _checked_address(self, host: str, port: int) -> str:
        try:
            literal: Any = ipaddress.ip_address(host)
        except ValueError:
            literal = None
        addresses = [host] if literal is not None else resolve(host, port)
        if not addresses:
            raise self._refused(f"{host} has no address")
        if not self.allow_private:
            for address in addresses:
                kind = _private_kind(ipaddress.ip_address(address.split("%", 1)[0]))
                if kind is not None:
                    named = host if address == host else f"{host} ({address})"
                    raise self._refused(
                        f"{named} is {kind} address; pass allow_private=True to download "
                        "from your own network"
                    )
        return addresses[0]

    def _refuse_redirect(self, origin: Any, current: Any, target: Any) -> None:
        if (target.hostname or "").lower() != (origin.hostname or "").lower():
            raise self._refused(f"it redirects to another host ({target.hostname})")
        if current.scheme == "https" and target.scheme != "https":
            raise self._refused("it redirects from https to http")

    def _body_of(self, response: http.client.HTTPResponse) -> bytes:
        if response.status != 200:
            raise self._refused(f"HTTP {response.status} {response.reason}")
        declared = response.getheader("Content-Length")
        if declared is not None and declared.isdigit() and int(declared) > MAX_BYTES:
            raise self._refused(f"it is {int(declared):,} bytes, over {MAX_BYTES:,}")
        pieces: list[bytes] = []
        size = 0
        while piece := response.read(_CHUNK):
            size += len(piece)
            if size > MAX_BYTES:
                raise self._refused(f"it is over {MAX_BYTES:,} bytes")
            pieces.append(piece)
        return b"".join(pieces)

    def _refused(self, why: str) -> DownloadError:
        return DownloadError(f"could not download {self.url}: {why}")

    def _close(self) -> None:
        with self._lock:
            connection, self._connection = self._connection, None
            sock, self._socket = self._socket, None
            response, self._response = self._response, None
        if sock is not None:  # wakes a read blocked in the worker
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        if response is not None:  # its file holds the socket open until closed
            response.close()
        if connection is not None:
            connection.close()


def _connection(scheme: str, host: str, port: int, address: str) -> http.client.HTTPConnection:
    """A connection to ``address`` that speaks to ``host`` (Host header, TLS name)."""
    if scheme == "https":
        import ssl

        connection: http.client.HTTPConnection = http.client.HTTPSConnection(
            host, port, timeout=DEADLINE, context=ssl.create_default_context()
        )
    else:
        connection = http.client.HTTPConnection(host, port, timeout=DEADLINE)

    def connect(
        _where: tuple[str, int], timeout: float | None, source: tuple[str, int] | None = None
    ) -> socket.socket:
        return socket.create_connection((address, port), timeout, source)

    this: Any = connection
    this._create_connection = connect  # to the checked address, never a second lookup
    return connection


def _private_kind(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """What kind of non-public address ``ip`` is ("a loopback"...), or None if public."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return "a loopback"
    if ip.is_link_local:
        return "a link-local"
    if ip.is_multicast:
        return "a multicast"
    if not ip.is_global:
        return "a private"
    return None


def _why(error: BaseException) -> str:
    message = str(error).strip()
    return f"{type(error).__name__}: {message}" if message else type(error).__name__
