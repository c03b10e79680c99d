"""The arena served for real on 127.0.0.1: HTTP errors, 20 concurrent clients, a killed server."""

import contextlib
import functools
import http.client
import json
import re
import subprocess
import sys
import threading
import urllib.parse

from sqlalchemy import select

from vecenv.arena import client
from vecenv.arena.models import RunRow
from vecenv.arena.protocol import MAX_BODY

from .helpers import (
    RPS,
    SHORT_RPS,
    Player,
    assert_rps_runs_and_ratings,
    assert_stored,
    random_moves,
    run_together,
)

CLIENTS = 20
RUNS = 200
CLIENT_TIMEOUT = 300  # seconds for all clients together (they finish in well under a minute)


def put(url, env, body, raw=None):
    """``PUT /act/<env>``: (status, decoded answer)."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        data = raw if raw is not None else json.dumps(body).encode()
        conn.request("PUT", f"/act/{env}", data, {"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


def test_http_refusals_are_json_4xx(arena_db, start_server):
    db, arena = arena_db
    arena.add_environment("rps", env_class=RPS, config=SHORT_RPS)
    alice = arena.add_agent("rps", "alice")
    server = start_server(db)
    ok = {"protocol_version": 1, "agent": "alice", "pwd": alice["pwd"]}
    status, first = put(server.url, "rps", ok)
    assert status == 200 and len(first["action_requests"]) == 5
    cases = [
        ("rps", None, b"{not json", 400, "not JSON"),
        ("rps", None, b"\xff\xfe", 400, "not JSON"),
        ("rps", None, b"[" * 100_000, 400, "not JSON"),  # nested past the parser's depth
        ("rps", None, b" " * (MAX_BODY + 10), 413, ""),
        ("nope", ok, None, 404, "no environment"),
        ("rps", dict(ok, pwd="guess"), None, 401, "wrong password"),
        ("rps", dict(ok, actions=[dict(run="1", act_no=7, action=0)]), None, 409, "stale"),
    ]
    before = arena.agents()
    for env, body, raw, status, words in cases:
        got, answer = put(server.url, env, body, raw)
        assert got == status, (env, body, raw and raw[:20], answer)
        assert set(answer) == {"errorcode", "errorname", "description"}
        assert answer["errorcode"] == status and words in answer["description"]
    assert arena.agents() == before
    # nothing was played or started by the refused requests: the same five runs are asked for
    assert put(server.url, "rps", ok) == (200, first)


def test_twenty_clients_play_and_every_run_and_rating_is_right(arena_db, start_server):
    db, arena = arena_db
    arena.add_environment("rps", env_class=RPS, config=SHORT_RPS)
    configs = [arena.add_agent("rps", f"agent{k}") for k in range(CLIENTS)]
    server = start_server(db)
    results = {}

    def play(k):
        results[k] = client.play(dict(configs[k], url=server.url), random_moves(k), RUNS)

    run_together([functools.partial(play, k) for k in range(CLIENTS)], CLIENT_TIMEOUT)
    assert_rps_runs_and_ratings(arena, RUNS)
    with arena.Session() as session:  # what each client was told is what the arena stored
        stored = {str(r.id): json.loads(r.outcome) for r in session.scalars(select(RunRow))}
    for k in range(CLIENTS):
        assert {run: stored[run] for run in results[k]} == results[k]


def test_a_killed_server_keeps_every_acknowledged_action(arena_db, start_server):
    db, arena = arena_db
    arena.add_environment("rps", env_class=RPS, config=SHORT_RPS)
    config = arena.add_agent("rps", "alice")
    server = start_server(db)
    enough = threading.Event()

    def watch(player):
        if len(player.acknowledged) >= 60:
            enough.set()

    player = Player(dict(config, url=server.url), random_moves(3))
    thread = threading.Thread(target=lambda: _until_gone(player, watch))
    thread.start()
    assert enough.wait(120)
    server.kill()  # while the client keeps sending
    thread.join(60)
    assert not thread.is_alive()

    restarted = start_server(db)
    assert_stored(arena, [player])
    # the restarted arena goes on where it stopped
    more = client.play(dict(config, url=restarted.url), random_moves(4), 5)
    assert len(more) >= 5


def _until_gone(player, watch):
    with contextlib.suppress(client.ClientError):  # the server is gone
        player.play(stop=watch)


def test_command_line_administers_and_plays(tmp_path, start_server):
    db = str(tmp_path / "cli.sqlite")

    def vecenv(*args):
        done = subprocess.run(
            [sys.executable, "-m", "vecenv", "arena", *args, "--db", db],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    vecenv(
        "env",
        "add",
        "ttt",
        "--class",
        "vecenv.aisys.environment:TicTacToe",
        "--opponent",
        "reaction",
        "--seat",
        "alternate",
    )
    assert "ttt" in vecenv("env", "list")
    printed = json.loads(vecenv("agent", "add", "alice"))
    assert printed["agent"] == "alice" and printed["env"] == "ttt"
    server = start_server(db)
    config_file = tmp_path / "alice.json"
    config_file.write_text(json.dumps(dict(printed, url=server.url)))
    played = subprocess.run(
        [
            sys.executable,
            "-m",
            "vecenv",
            "arena",
            "play",
            "--config",
            str(config_file),
            "--agent",
            "random",
            "--runs",
            "12",
            "--game",
            "tictactoe",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert played.returncode == 0, played.stderr
    finished = re.search(r"alice on ttt: (\d+) runs finished", played.stdout)
    assert finished and int(finished.group(1)) >= 12, played.stdout
    listing = vecenv("agents")
    row = next(line for line in listing.splitlines() if "alice" in line)
    assert int(row.split()[4]) >= 12
    # a bad password is refused with the arena's reason
    config_file.write_text(json.dumps(dict(printed, url=server.url, pwd="guess")))
    refused = subprocess.run(
        [sys.executable, "-m", "vecenv", "arena", "play", "--config", str(config_file)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert refused.returncode == 2 and "wrong password" in refused.stderr
