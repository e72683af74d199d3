"""A tiny OAuth2 issuer for the tests: HTTPS (http.server + ssl) with a test certificate,
serving /.well-known/openid-configuration and a client-credentials token endpoint that
hands out HS256 JWTs signed with the secured broker's token secret key (the broker then
accepts them like any token of its own). Standard library only.

    with OAuth2Issuer(cert, key, secret_key_file, client_id, client_secret) as iss:
        iss.url          https://localhost:<port>
        iss.requests     [(method, path, form dict)] as they came
        iss.tokens       the access tokens handed out, iss.token_times when (time.monotonic())

A token's JWT "exp" is the first whole second at or after now + expires_in, so the token
lives at least as long as the expires_in the answer announces (a client that refreshes
shortly before expires_in never holds a token the broker already finds expired).
"""

from __future__ import annotations

import json
import math
import ssl
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pulsar_helpers as ph


class OAuth2Issuer:
    def __init__(self, cert_file: str, key_file: str, token_key_file: str, client_id: str,
                 client_secret: str, role: str = "producer", expires_in: int = 3600):
        self.client_id, self.client_secret = client_id, client_secret
        self.role, self.expires_in, self.token_key_file = role, expires_in, token_key_file
        self.requests: list[tuple[str, str, dict]] = []
        self.tokens: list[str] = []
        self.token_times: list[float] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert_file, key_file)
        self._server.socket = ctx.wrap_socket(self._server.socket, server_side=True)
        self.url = f"https://localhost:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "OAuth2Issuer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def count(self, path: str) -> int:
        return sum(1 for _, p, _ in self.requests if p == path)

    def _token_answer(self, form: dict) -> tuple[int, dict]:
        if form.get("grant_type") != "client_credentials":
            return 400, {"error": "unsupported_grant_type"}
        if form.get("client_id") != self.client_id or form.get("client_secret") != self.client_secret:
            return 401, {"error": "invalid_client"}
        now = time.time()
        # mint_token truncates now + expires_in_s to whole seconds: round up instead.
        token = ph.mint_token(self.role, math.ceil(now + self.expires_in) - now + 0.001,
                              self.token_key_file)
        self.tokens.append(token)
        self.token_times.append(time.monotonic())
        return 200, {"access_token": token, "token_type": "Bearer", "expires_in": self.expires_in}

    def _handler(self):
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet: the form holds the secret
                pass

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                issuer.requests.append(("GET", self.path, {}))
                if self.path != "/.well-known/openid-configuration":
                    self._send(404, {"error": "not_found"})
                    return
                self._send(200, {"issuer": issuer.url, "token_endpoint": issuer.url + "/oauth/token"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length).decode()
                form = {k: v[0] for k, v in urllib.parse.parse_qs(raw, keep_blank_values=True).items()}
                form["_content_type"] = self.headers.get("Content-Type", "")
                issuer.requests.append(("POST", self.path, form))
                if self.path != "/oauth/token":
                    self._send(404, {"error": "not_found"})
                    return
                self._send(*issuer._token_answer(form))

        return Handler
