"""``vecenv arena play`` against a hostile server: it bounds what it reads and how long it waits,
and reports a malformed answer in one line (``vecenv.arena.client``)."""

import json
import socket
import threading

import pytest

from vecenv.arena import client
from vecenv.cli import main

HEAD = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"


def read_request(conn):
    """Read one HTTP request whole (its headers, then as many bytes as its Content-Length), so
    that closing the connection after the answer resets nothing the client still reads."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk


class Server:
    """A server on 127.0.0.1 answering every request with ``reply(conn)`` (which writes what it
    likes to the socket), until stopped."""

    def __init__(self, reply):
        self.reply, self.stop = reply, threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                try:
                    read_request(conn)
                    self.reply(conn, self.stop)
                    conn.shutdown(socket.SHUT_WR)  # then read what is left: no reset
                    conn.settimeout(1.0)
                    while conn.recv(65536):
                        pass
                except OSError:  # the client gave up and closed
                    pass

    def close(self):
        self.stop.set()
        self.thread.join(30)
        self.sock.close()

    def config(self):
        return {"url": f"http://127.0.0.1:{self.port}", "env": "e", "agent": "a", "pwd": "p"}


@pytest.fixture
def serve():
    servers = []

    def start(reply):
        servers.append(Server(reply))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def body(text):
    data = text.encode() if isinstance(text, str) else text

    def reply(conn, stop):
        conn.sendall(f"{HEAD}Content-Length: {len(data)}\r\n\r\n".encode() + data)

    return reply


def drip(conn, stop):
    """Headers, then a byte of a never-ending body every 50 ms (each read succeeds in time)."""
    conn.sendall(f"{HEAD}Content-Length: 1000000\r\n\r\n".encode())
    while not stop.wait(0.05):
        conn.sendall(b" ")


def claims_huge(conn, stop):
    conn.sendall(f"{HEAD}Content-Length: 1500000000\r\n\r\n{{}}".encode())


def unbounded(conn, stop):
    """An answer without a length: 2 MB and then the connection closed."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + b"[" * 10 + b" " * 2_000_000)


DEEP = "[" * 100_000 + "]" * 100_000
CASES = [
    (drip, "did not answer within 1 s"),
    (claims_huge, "answer of 1,500,000,000 bytes is over the client's limit"),
    (unbounded, "over the client's limit of 1,048,576 bytes"),
    (body(DEEP), "malformed: nested over 64 deep"),
    (body('{"action_requests": [{"run": "1"}]}'), "malformed: an action request lacks"),
    (body('{"action_requests": "x"}'), "malformed: action_requests is not a list"),
    (body("[1, 2]"), "malformed: not a JSON object"),
    (body(b"\xff\xfe not json"), "malformed: not a JSON object"),
    (body("{}"), "10 answers in a row requested no action"),
    (body('{"action_requests": [{"run": "1", "act_no": 0, "percept": 5}]}'), "policy failed"),
]


@pytest.mark.parametrize("reply, message", CASES)
def test_a_hostile_answer_is_refused_in_one_line(serve, reply, message):
    server = serve(reply)
    policy = client.random_policy(0)
    with pytest.raises(client.ClientError, match=message) as caught:
        client.play(server.config(), policy, 1, timeout=1.0, max_answer=2**20)
    assert "\n" not in str(caught.value)


def test_the_command_line_says_it_in_one_line(serve, tmp_path, capsys):
    for reply, message in CASES[:5]:
        server = serve(reply)
        config = tmp_path / "agent.json"
        config.write_text(json.dumps(server.config()))
        argv = ["arena", "play", "--config", str(config), "--runs", "1"]
        code = main([*argv, "--timeout", "1", "--max-answer", "1M"])
        err = capsys.readouterr().err
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "ftp://x/", "http://", "http://h:99999/", "javascript:alert(1)", 7],
)
def test_an_agent_config_with_no_http_url_is_refused_at_once(tmp_path, capsys, url):
    config = tmp_path / "agent.json"
    config.write_text(json.dumps({"url": url, "env": "e", "agent": "a", "pwd": "p"}))
    code = main(["arena", "play", "--config", str(config), "--runs", "1"])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    assert main(["arena", "play", "--config", str(deep)]) == 2
    assert "nested too deep" in capsys.readouterr().err
