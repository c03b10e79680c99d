"""Two floods against ``vecenv arena serve``: the server's memory and an honest agent's latency
during each.

    PYTHONPATH=. python benchmarks/arena_floods.py [--rows 500] [--seconds 20] [--threads 4]

Starts the server on 127.0.0.1 (a throwaway database) with an environment of connectx
``rows`` x ``rows`` and one of tictactoe, then for ``--seconds`` each:

1. open and abandon: ``--threads`` clients of one agent each ask for runs and abandon them all,
   over and over (every run a new live match of the large board);
2. wrong passwords: ``--threads`` clients send requests with a wrong password as fast as they
   are answered.

Meanwhile an honest agent plays tictactoe (a request at a time) and the server's resident memory
is sampled every 0.2 s. Prints, per flood, the requests answered by status, the server's memory
before and at its highest, and the honest agent's median and 90th percentile latency (and
before the floods, alone). To measure another checkout, point ``PYTHONPATH`` at it and run the
script from a folder outside both: the server is ``python -m vecenv``, which puts the current
folder first on the path.
"""

import argparse
import collections
import http.client
import json
import os
import statistics
import tempfile
import threading
import time
import urllib.parse

from vecenv.arena import Arena
from vecenv.arena.launch import ServerProcess

# The honest agent connects from another loopback address than the floods: another client, as
# it would be on another machine (Linux answers every 127.0.0.0/8 address).
HONEST_ADDRESS = ("127.0.0.2", 0)


def rss(pid):
    """The process's resident memory in MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Agent:
    def __init__(self, url, config, pwd=None, source=None):
        parts = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(
            parts.hostname, parts.port, timeout=60, source_address=source
        )
        self.path = f"/act/{config['env']}"
        self.config = dict(config, pwd=pwd or config["pwd"])

    def send(self, **fields):
        body = {"agent": self.config["agent"], "pwd": self.config["pwd"], **fields}
        try:
            self.conn.request("PUT", self.path, json.dumps(body))
            response = self.conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()
            return 0, None
        return response.status, json.loads(data) if response.status == 200 else None


def honest(url, config, stop, latencies):
    agent = Agent(url, config, source=HONEST_ADDRESS)
    actions = []
    while not stop.is_set():
        start = time.perf_counter()
        status, answer = agent.send(actions=actions, parallel_runs=False)
        latencies.append(time.perf_counter() - start)
        actions = []
        if status == 200:
            for r in answer["action_requests"]:
                move = r["percept"]["legal"][0]
                actions.append({"run": r["run"], "act_no": r["act_no"], "action": move})


def open_and_abandon(url, config, stop, counts):
    agent = Agent(url, config)
    runs = []
    while not stop.is_set():
        status, answer = agent.send(to_abandon=runs)
        counts[status] += 1
        runs = [r["run"] for r in answer["action_requests"]] if status == 200 else []


def wrong_password(url, config, stop, counts):
    agent = Agent(url, config, pwd="wrong")
    while not stop.is_set():
        counts[agent.send()[0]] += 1


def measure(url, pid, honest_config, seconds, flood=None, flood_config=None, threads=0):
    stop, latencies, counts = threading.Event(), [], collections.Counter()
    workers = [threading.Thread(target=honest, args=(url, honest_config, stop, latencies))]
    for _ in range(threads):
        workers.append(threading.Thread(target=flood, args=(url, flood_config, stop, counts)))
    before = rss(pid)
    peak = before
    for w in workers:
        w.start()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        time.sleep(0.2)
        peak = max(peak, rss(pid))
    stop.set()
    for w in workers:
        w.join(120)
    ms = sorted(1000 * x for x in latencies)
    p90 = ms[int(0.9 * (len(ms) - 1))] if ms else float("nan")
    return {
        "answers": dict(counts),
        "rss_before_mib": round(before, 1),
        "rss_peak_mib": round(peak, 1),
        "honest_requests": len(ms),
        "honest_median_ms": round(statistics.median(ms), 2) if ms else None,
        "honest_p90_ms": round(p90, 2),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500, help="the large board's rows and columns")
    parser.add_argument("--seconds", type=float, default=20.0, help="each flood's length")
    parser.add_argument("--threads", type=int, default=4, help="flooding clients")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "arena.sqlite")
        arena = Arena(db)
        size = {"rows": args.rows, "columns": args.rows}
        arena.add_environment("big", game="connectx", config={"configuration": size})
        arena.add_environment("ttt", game="tictactoe")
        flooder = arena.add_agent("big", "flooder")
        guesser = arena.add_agent("ttt", "victim")
        player = arena.add_agent("ttt", "honest")
        arena.close()
        server = ServerProcess(db)
        server.start()
        try:
            pid = server.process.pid
            results = {"alone": measure(server.url, pid, player, args.seconds / 2)}
            results["open_and_abandon"] = measure(
                server.url, pid, player, args.seconds, open_and_abandon, flooder, args.threads
            )
            results["wrong_passwords"] = measure(
                server.url, pid, player, args.seconds, wrong_password, guesser, args.threads
            )
        finally:
            server.stop()
    print(json.dumps({"rows": args.rows, "threads": args.threads, **results}, indent=2))


if __name__ == "__main__":
    main()
