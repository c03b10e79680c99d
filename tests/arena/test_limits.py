"""What one client may take of an arena (``vecenv.arena.limits``): live runs bounded in bytes and
count, in all and per agent; credentials checked before an environment's lock; failed logins
throttled with 429 and Retry-After; names unique case aside."""

import json
import threading

import pytest

from vecenv.aisys.common import LiveCache
from vecenv.arena import Arena, ArenaError
from vecenv.arena.app import create_app
from vecenv.arena.limits import Limits, Throttle
from vecenv.cli import main

from .helpers import RPS, SHORT_RPS, request

BOARD = {"configuration": {"rows": 40, "columns": 40}, "opponent": "random"}  # 116 KB a match


class Sized:
    def __init__(self, size):
        self.size = size

    def nbytes(self):
        return self.size


def test_the_live_cache_is_bounded_in_bytes_count_and_per_owner():
    cache = LiveCache(size=10, max_bytes=100, owner_runs=3, owner_bytes=60)
    for n in range(8):
        cache.keep(f"a{n}", Sized(20), owner="alice")
    assert len(cache) == 3 and cache.nbytes == 60  # alice's share: her latest three
    assert list(cache._live) == ["a5", "a6", "a7"]
    for n in range(4):
        cache.keep(f"b{n}", Sized(20), owner=f"bob{n}")
    assert cache.nbytes <= 100 and len(cache) == 5  # the byte bound evicts the oldest
    assert "a5" not in cache._live and "b3" in cache._live
    cache.keep("huge", Sized(101))
    assert "huge" not in cache._live  # larger than the bound alone: never kept
    cache.keep("alice-big", Sized(61), owner="alice")
    assert "alice-big" not in cache._live
    cache.configure(size=2)
    assert len(cache) == 2 and cache.nbytes == 40
    for key in list(cache._live):
        cache.take(key)
    assert len(cache) == 0 and cache.nbytes == 0 and cache._owners == {}
    with pytest.raises(ValueError, match="max_bytes must be a positive integer"):
        cache.configure(max_bytes=0)


def test_an_open_and_abandon_flood_leaves_the_live_runs_within_their_bounds(tmp_path):
    limits = Limits(live_bytes=2 * 2**20, agent_live_runs=6, agent_live_bytes=700_000)
    arena = Arena(str(tmp_path / "a.sqlite"), limits)
    try:
        arena.add_environment("big", game="connectx", config=BOARD)
        flooder = arena.add_agent("big", "flood")
        honest = arena.add_agent("big", "honest")
        cache = arena._environment("big").env._cache
        opened = arena.act("big", request(flooder))["action_requests"]
        first = cache.nbytes
        assert 0 < first <= limits.agent_live_bytes and len(cache) == len(opened)
        for _ in range(12):  # abandon everything, get new runs, again and again
            runs = [r["run"] for r in opened]
            opened = arena.act("big", request(flooder, to_abandon=runs))["action_requests"]
            assert cache.nbytes <= limits.agent_live_bytes and len(cache) <= 6
        assert len(cache) == len(opened)  # the abandoned runs' matches went at once
        reply = arena.act("big", request(honest, parallel_runs=False))
        run = reply["action_requests"][0]
        move = run["percept"]["legal"][0]
        reply = arena.act(
            "big", request(honest, [{"run": run["run"], "act_no": 0, "action": move}])
        )
        assert reply["action_requests"] and cache.nbytes <= limits.live_bytes
        assert arena.agents("big")[1]["runs"] + arena.agents("big")[0]["runs"] == 60
    finally:
        arena.close()


def test_credentials_are_checked_before_the_environments_lock(arena_db):
    _, arena = arena_db
    arena.add_environment("rps", env_class=RPS, config=SHORT_RPS)
    alice = arena.add_agent("rps", "alice")
    live = arena._environment("rps")
    answers = []

    def wrong():
        try:
            arena.act("rps", dict(request(alice), pwd="wrong"))
        except ArenaError as exc:
            answers.append(exc.status)

    with live.lock:  # a long request of another agent holds the environment
        worker = threading.Thread(target=wrong)
        worker.start()
        worker.join(60)
        refused_while_held = not worker.is_alive()
    worker.join(60)
    assert refused_while_held and answers == [401]


def test_repeated_failed_logins_from_one_client_are_throttled(tmp_path):
    arena = Arena(str(tmp_path / "a.sqlite"), Limits(auth_failures=3, auth_window=60))
    try:
        arena.add_environment("rps", env_class=RPS, config=SHORT_RPS)
        alice = arena.add_agent("rps", "alice")
        bad = dict(request(alice), pwd="wrong")
        for _ in range(3):
            with pytest.raises(ArenaError) as caught:
                arena.act("rps", bad, client="10.0.0.1")
            assert caught.value.status == 401
        for body in (bad, request(alice)):  # throttled without its credentials checked
            with pytest.raises(ArenaError) as caught:
                arena.act("rps", body, client="10.0.0.1")
            assert caught.value.status == 429 and 1 <= caught.value.retry_after <= 60
        assert arena.act("rps", request(alice), client="10.0.0.2")["action_requests"]
        bob = arena.add_agent("rps", "bob")  # another agent behind the same address
        assert arena.act("rps", request(bob), client="10.0.0.1")["action_requests"]
        client = create_app(arena).test_client()
        put = dict(data=json.dumps(bad), environ_base={"REMOTE_ADDR": "10.0.0.1"})
        response = client.put("/act/rps", **put)
        assert response.status_code == 429
        assert 1 <= int(response.headers["Retry-After"]) <= 60
        assert "too many failed logins" in response.get_json()["description"]
    finally:
        arena.close()


def test_the_throttle_forgets_failures_past_its_window():
    now = [0.0]
    throttle = Throttle(2, 10.0, clock=lambda: now[0])
    throttle.failed("x", "alice")
    assert throttle.retry_after("x", "alice") == 0
    now[0] = 4.0
    throttle.failed("x", "alice")
    assert throttle.retry_after("x", "alice") == 6  # until the first failure leaves the window
    assert throttle.retry_after("x", "bob") == 0 and throttle.retry_after("y", "alice") == 0
    now[0] = 10.5
    assert throttle.retry_after("x", "alice") == 0 and throttle.retry_after(None) == 0
    for k in range(20):  # ten times the failures, of names each tried once: every name held
        throttle.failed("x", f"name{k}")
    assert throttle.retry_after("x", "carol") == 10 and throttle.retry_after("y", "carol") == 0
    with pytest.raises(ValueError, match="auth_window must be a positive number"):
        Limits(auth_window=0)


def test_names_are_unique_case_aside_and_begin_and_end_with_a_letter_or_digit(arena_db):
    _, arena = arena_db
    arena.add_environment("connectx")
    arena.add_agent("connectx", "alice")
    for name, message in (
        ("Alice", "'alice' of 'connectx' exists already"),
        ("ALICE", "exists already"),
        ("alice.", "beginning and ending with a letter or digit"),
        ("-alice", "beginning and ending with a letter or digit"),
    ):
        with pytest.raises(ValueError, match=message):
            arena.add_agent("connectx", name)
    with pytest.raises(ValueError, match="'connectx' exists already"):
        arena.add_environment("CONNECTX", game="connectx")
    with pytest.raises(ValueError, match="beginning and ending"):
        arena.add_environment("connectx.", game="connectx")
    assert [a["agent"] for a in arena.agents("connectx")] == ["alice"]


@pytest.mark.parametrize(
    "args, words",
    [
        (["agent", "add", "Alice", "--env", "connectx"], "exists already"),
        (["env", "add", "CONNECTX", "--game", "connectx"], "exists already"),
        (["serve", "--port", "-1"], "--port"),
        (["serve", "--port", "99999"], "--port"),
        (["serve", "--threads", "0"], "--threads"),
        (["serve", "--live-bytes", "lots"], "--live-bytes"),
        (["serve", "--auth-window", "0"], "--auth-window"),
        (["serve", "--host", "999.1.1.1", "--port", "0"], "cannot listen on 999.1.1.1:0"),
    ],
)
def test_the_command_line_refuses_in_one_line(tmp_path, capsys, args, words):
    db = str(tmp_path / "arena.sqlite")
    assert main(["arena", "env", "add", "connectx", "--db", db]) == 0
    assert main(["arena", "agent", "add", "alice", "--db", db]) == 0
    capsys.readouterr()
    assert main(["arena", *args, "--db", db]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1, err


def test_an_agents_config_file_is_its_owners_alone_and_checked_before_the_agent_is_added(
    tmp_path, capsys
):
    import os
    import stat

    db = str(tmp_path / "arena.sqlite")
    assert main(["arena", "env", "add", "connectx", "--db", db]) == 0
    out = tmp_path / "alice.json"
    out.write_text("old, world-readable")
    out.chmod(0o644)
    assert main(["arena", "agent", "add", "alice", "--db", db, "--out", str(out)]) == 0
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    assert json.loads(out.read_text())["agent"] == "alice"
    capsys.readouterr()
    for extra, words in (
        (["--out", str(tmp_path / "nowhere" / "bob.json")], "--out"),
        (["--url", "file:///etc/passwd"], "must be http(s)"),
    ):
        assert main(["arena", "agent", "add", "bob", "--db", db, *extra]) == 2
        err = capsys.readouterr().err
        assert words in err and len(err.strip().splitlines()) == 1
    assert [a["agent"] for a in Arena(db).agents("connectx")] == ["alice"]  # no bob
