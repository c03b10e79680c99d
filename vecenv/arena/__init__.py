"""An arena in AISysProj's manner: agents play runs of environments over HTTP (protocol v1) and are
rated on a leaderboard; everything is kept in a database through SQLAlchemy.

``Arena(db)`` is the arena itself (``vecenv.arena.arena``), ``app.create_app``/``app.serve`` put it
on HTTP, ``client.play`` plays on one as an agent; ``vecenv arena ...`` is the command line. The
server needs the ``arena`` extra (Flask, SQLAlchemy, waitress); the client needs nothing more.
"""

__all__ = ["Arena", "ArenaError"]


def __getattr__(name):  # the client imports without the server's packages
    if name == "Arena":
        from .arena import Arena

        return Arena
    if name == "ArenaError":
        from .protocol import ArenaError

        return ArenaError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
