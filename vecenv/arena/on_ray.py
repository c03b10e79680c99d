"""Several arena servers behind one database, on a Ray cluster: the arena's scale-out.

The arena keeps everything in its database and serialises each agent's requests by its locked
row, so any number of servers can share one PostgreSQL database (``tests/arena/test_postgres.py``
runs two server processes on one). ``serve(db, servers=K)`` starts K of them as Ray actors, spread
over the nodes, each running ``vecenv arena serve --db DB`` on its node; clients may use any of
their URLs (behind a load balancer, or one per client).
"""

from vecenv.ray.cluster import connect

from .launch import ServerProcess


class ArenaServer:
    """One ``vecenv arena serve`` process on this actor's node."""

    def __init__(self, db, threads, host):
        if host == "node":  # the node's own address, reachable from the other nodes
            import ray

            host = ray.util.get_node_ip_address()
        self.server = ServerProcess(db, threads=threads, host=host).start()

    def url(self):
        return self.server.url

    def stop(self):
        self.server.stop()


class Servers:
    """The running servers: ``urls``, and ``stop()`` (also on leaving a ``with`` block)."""

    def __init__(self, actors, urls):
        self.actors, self.urls = actors, urls

    def stop(self):
        import ray

        for actor in self.actors:
            try:
                ray.get(actor.stop.remote(), timeout=60)
            finally:
                ray.kill(actor)
        self.actors = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def serve(db, servers=2, threads=8, host="node", address=None):
    """Start ``servers`` arena servers on database ``db`` (a PostgreSQL URL: SQLite is one
    machine's file) as Ray actors spread over the cluster; returns ``Servers``. ``host``: the
    address they listen on ("node": each node's own, "127.0.0.1" for one machine)."""
    ray = connect(address)
    actor = ray.remote(ArenaServer).options(num_cpus=0, scheduling_strategy="SPREAD")
    actors = [actor.remote(db, threads, host) for _ in range(servers)]
    try:
        urls = ray.get([a.url.remote() for a in actors], timeout=300)
    except Exception:
        for a in actors:
            ray.kill(a)
        raise
    return Servers(actors, urls)
