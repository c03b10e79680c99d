"""The arena: runs finished per second through HTTP (protocol v1) against the same work in-process

Both sides play tictactoe against the built-in random opponent (``TicTacToe``, seat 0), answering
every action request with a uniform legal move, on a SQLite file in a fresh temporary folder:

- ``http-20``: ``vecenv arena serve`` in a subprocess on 127.0.0.1 (8 request threads), 20 client
  threads in this process, each its own agent on one kept-alive connection
  (``vecenv.arena.client.play``), each playing ``RUNS_PER_CLIENT`` runs; a round is timed from the
  first request to the last client's end, and counts every run they were told had finished;
- ``inprocess``: one agent's requests passed straight to ``Arena.act`` in a loop (the same
  database work, plugin and JSON, no HTTP, no server threads), until as many runs have finished.

The ratio ``http-20`` / ``inprocess`` tells what the protocol costs: below 1, HTTP, JSON on the
wire and the server's threads cost more than 20 parallel clients win back; above 1, the other way
round. No target. Every round uses new
agents (so the runs are new ones); server start-up is not timed. In smoke mode
(``--benchmark-disable``) 2 clients play 2 runs each and the loop 4 runs.

Keys: ("arena", "tictactoe", impl), rates in runs per second.
"""

import os
import random
import threading

import report
from harness import require_extra

require_extra("arena", "flask", "sqlalchemy", "waitress")

from vecenv.arena import Arena, client  # noqa: E402
from vecenv.arena.launch import ServerProcess  # noqa: E402

ENV_CLASS = "vecenv.aisys.environment:TicTacToe"
CONFIG = {"opponent": "random"}
CLIENTS = 20
RUNS_PER_CLIENT = 20
ROUNDS = 3
SMOKE_CLIENTS, SMOKE_RUNS = 2, 2
SECTION = "Arena: tictactoe runs finished per second, 20 HTTP clients vs an in-process loop"

report.label(("arena", "tictactoe", "http-20"), "vecenv arena serve, 20 HTTP clients")
report.label(("arena", "tictactoe", "inprocess"), "Arena.act in-process loop")
report.compare(
    SECTION,
    "HTTP, 20 clients / in-process",
    ("arena", "tictactoe", "http-20"),
    ("arena", "tictactoe", "inprocess"),
)


def uniform(seed):
    rng = random.Random(seed)
    return lambda percept: rng.choice(percept["legal"])


class Agents:
    """New agents of the environment "ttt", a batch per round."""

    def __init__(self, arena):
        self.arena, self.made = arena, 0

    def new(self, count, url="http://127.0.0.1"):
        configs = [self.arena.add_agent("ttt", f"a{self.made + k}", url=url) for k in range(count)]
        self.made += count
        return configs


def setup_arena(folder):
    db = os.path.join(folder, "arena.sqlite")
    arena = Arena(db)
    arena.add_environment("ttt", env_class=ENV_CLASS, config=CONFIG)
    return db, arena


def test_arena_http(benchmark, tmp_path):
    benchmark.group = "Arena runs/s"
    clients, runs = (
        (SMOKE_CLIENTS, SMOKE_RUNS) if benchmark.disabled else (CLIENTS, RUNS_PER_CLIENT)
    )
    db, arena = setup_arena(tmp_path)
    agents = Agents(arena)
    finished = []
    with ServerProcess(db) as server:

        def round_fn(configs):
            results = [None] * clients

            def play(k):
                results[k] = client.play(dict(configs[k], url=server.url), uniform(k), runs)

            threads = [threading.Thread(target=play, args=(k,)) for k in range(clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert all(r is not None and len(r) >= runs for r in results)
            finished.append(sum(len(r) for r in results))

        benchmark.pedantic(
            round_fn,
            setup=lambda: ((agents.new(clients),), {}),
            rounds=1 if benchmark.disabled else ROUNDS,
        )
    arena.close()
    report.record(
        benchmark,
        ("arena", "tictactoe", "http-20"),
        min(finished),
        1,
        unit="runs",
        clients=clients,
        runs_per_client=runs,
    )


def test_arena_inprocess(benchmark, tmp_path):
    benchmark.group = "Arena runs/s"
    total = SMOKE_CLIENTS * SMOKE_RUNS if benchmark.disabled else CLIENTS * RUNS_PER_CLIENT
    db, arena = setup_arena(tmp_path)
    agents = Agents(arena)
    finished = []

    def round_fn(config):
        policy = uniform(0)
        body = {"agent": config["agent"], "pwd": config["pwd"], "actions": []}
        done = {}
        while len(done) < total:
            answer = arena.act("ttt", body)
            done.update(answer["finished_runs"])
            body["actions"] = [
                {"run": r["run"], "act_no": r["act_no"], "action": policy(r["percept"])}
                for r in answer["action_requests"]
            ]
        finished.append(len(done))

    benchmark.pedantic(
        round_fn,
        setup=lambda: ((agents.new(1)[0],), {}),
        rounds=1 if benchmark.disabled else ROUNDS,
    )
    arena.close()
    report.record(benchmark, ("arena", "tictactoe", "inprocess"), min(finished), 1, unit="runs")
