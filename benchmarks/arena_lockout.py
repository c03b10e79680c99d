"""How many idle TCP connections lock honest clients out of ``vecenv arena serve``.

    PYTHONPATH=. python benchmarks/arena_lockout.py [--max 1500] [--step 5]

Starts the server on 127.0.0.1 (a throwaway database), opens idle connections ``--step`` at a
time up to ``--max`` and after each step sends ``GET /`` on a fresh connection with a 3 s
timeout; prints the first count at which that request gets no answer (or none up to --max).
"""

import argparse
import http.client
import socket
import tempfile
import urllib.parse

from vecenv.arena.launch import ServerProcess


def answers(url, timeout=3.0):
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        conn.request("GET", "/")
        return conn.getresponse().status == 200
    except OSError:
        return False
    finally:
        conn.close()


def lockout(url, most, step):
    parts = urllib.parse.urlsplit(url)
    idle = []
    try:
        while len(idle) < most:
            for _ in range(step):
                idle.append(socket.create_connection((parts.hostname, parts.port), timeout=3))
            if not answers(url):
                return len(idle)
        return None
    finally:
        for sock in idle:
            sock.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, default=1500, help="idle connections at most")
    parser.add_argument("--step", type=int, default=5, help="opened between two checks")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ServerProcess(f"{tmp}/arena.sqlite") as server:
        found = lockout(server.url, args.max, args.step)
    if found is None:
        print(f"GET / answered with up to {args.max} idle connections open")
    else:
        print(f"GET / got no answer with {found} idle connections open")


if __name__ == "__main__":
    main()
