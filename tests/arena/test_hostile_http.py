"""Hostile clients against a real server on 127.0.0.1: odd paths and bodies are 4xx, never 500,
and idle connections past waitress's default limit do not lock an honest client out."""

import http.client
import json
import socket
import urllib.parse

from .helpers import RPS, SHORT_RPS

IDLE = 150  # waitress's default connection limit is 100
HONEST_TIMEOUT = 30  # seconds: an answer comes at once, or (over the limit) not for minutes


def _get(url, path, method="GET", body=None, timeout=60):
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.putrequest(method, path, skip_accept_encoding=True)  # the path sent as it is
        conn.putheader("Content-Length", str(len(body or b"")))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def test_odd_paths_and_bodies_are_4xx(arena_db, start_server):
    db, arena = arena_db
    arena.add_environment("rps", env_class=RPS, config=SHORT_RPS)
    alice = arena.add_agent("rps", "alice")
    server = start_server(db)
    ok = {"agent": "alice", "pwd": alice["pwd"]}
    assert _get(server.url, "/act/rps", "PUT", json.dumps(ok).encode())[0] == 200
    paths = ["/run/rps/" + "9" * 30, "/run/rps/" + "9" * 5000, "/run/rps/%C2%B2", "/%C2%B2"]
    paths += ["/run/rps/01", "/run/rps/%D9%A1", "/agent/rps/%ED%A0%80", "/env/%00", "/act/%00"]
    for path in paths:
        status, _ = _get(server.url, path)
        assert 400 <= status < 500, (path[:40], status)
    bodies = [dict(ok, actions=[{"run": run, "act_no": 0, "action": 1}]) for run in ("9" * 30,)]
    bodies += [dict(ok, actions=[{"run": "9" * 5000, "act_no": 0, "action": 1}])]
    bodies += [dict(ok, to_abandon=["\u00b2"]), dict(ok, to_abandon=["1", "01"])]
    raw = [json.dumps(b).encode() for b in bodies]
    raw += [b'{"agent": "\\ud800", "pwd": "x"}', b'{"agent": "alice", "pwd": "\\ud800"}']
    for body in raw:
        status, answer = _get(server.url, "/act/rps", "PUT", body)
        assert 400 <= status < 500, (body[:60], status, answer[:200])
        assert json.loads(answer)["errorcode"] == status
    assert arena.agents("rps")[0]["runs"] == 0  # nothing was played or abandoned


def test_idle_connections_past_the_default_limit_leave_honest_clients_served(
    arena_db, start_server
):
    db, _ = arena_db
    server = start_server(db)
    parts = urllib.parse.urlsplit(server.url)
    idle = []
    try:
        for _ in range(IDLE):  # connected, never a byte sent
            idle.append(socket.create_connection((parts.hostname, parts.port), timeout=10))
        status, page = _get(server.url, "/", timeout=HONEST_TIMEOUT)
        assert status == 200 and b"vecenv arena" in page
    finally:
        for sock in idle:
            sock.close()
