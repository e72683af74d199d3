"""Small HTTP(S) servers that stand in for a broker's web service in the HTTP-lookup tests
(standard library only):

    RecordingService(broker_url, broker_url_tls)   answers partition metadata ({"partitions":
        0}) and lookups (the given broker URLs), and keeps each request's method, path and
        headers in .requests
    Redirector(target)                              answers every GET with 307 to target +
        the same path and query, and keeps the requests it got

Either takes an ssl.SSLContext (tls=...) to serve HTTPS. Use them as context managers;
.port and .url tell where they listen (127.0.0.1).
"""

from __future__ import annotations

import json
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Server:
    def __init__(self, tls: ssl.SSLContext | None = None, host_name: str = "127.0.0.1"):
        self.requests: list[tuple[str, str, dict]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        self.url = f"{'https' if tls else 'http'}://{host_name}:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, path: str) -> tuple[int, dict, bytes]:
        raise NotImplementedError

    def with_header(self, name: str) -> list[str]:
        """The values of header `name` in the requests so far (None where absent)."""
        return [h.get(name) for _, _, h in self.requests]

    def _handler(self):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet: headers may hold credentials
                pass

            def do_GET(self) -> None:
                outer.requests.append(("GET", self.path, dict(self.headers)))
                status, headers, body = outer.answer(self.path)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


class RecordingService(_Server):
    def __init__(self, broker_url: str, broker_url_tls: str, **kw):
        super().__init__(**kw)
        self.broker_url, self.broker_url_tls = broker_url, broker_url_tls

    def answer(self, path: str):
        if "/partitions" in path:
            body = {"partitions": 0}
        else:
            body = {"brokerUrl": self.broker_url, "brokerUrlTls": self.broker_url_tls}
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()


class Redirector(_Server):
    def __init__(self, target: str, **kw):
        super().__init__(**kw)
        self.target = target.rstrip("/")

    def answer(self, path: str):
        return 307, {"Location": self.target + path}, b""
