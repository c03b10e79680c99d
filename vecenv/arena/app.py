"""The arena over HTTP (Flask): protocol v1 at ``/act/<env>``, and the pages.

Routes, as AISysProj names them: ``GET|PUT /act/<env>`` (an agent's request), ``/`` (the
environments), ``/env/<env>`` (the leaderboard), ``/agent/<env>/<agent>`` and
``/run/<env>/<run>``; ``/openapi.json`` describes them (OpenAPI 3). A refused request is
answered with its status and ``{"errorcode", "errorname", "description"}``, as AISysProj's are.
"""

import json
from importlib import resources

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException
from werkzeug.http import HTTP_STATUS_CODES

from .protocol import MAX_BODY, ArenaError

OPENAPI = resources.files(__package__) / "openapi.json"  # the routes below, described


def _error(status, name, description):
    body = {"errorcode": status, "errorname": name, "description": description}
    return Response(json.dumps(body), status=status, mimetype="application/json")


def create_app(arena):
    app = Flask("vecenv.arena")
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY

    @app.errorhandler(ArenaError)
    def _refused(exc):
        response = _error(exc.status, HTTP_STATUS_CODES.get(exc.status, "Error"), exc.message)
        if exc.retry_after is not None:
            response.headers["Retry-After"] = str(int(exc.retry_after))
        return response

    @app.errorhandler(HTTPException)
    def _http(exc):
        return _error(exc.code, exc.name, exc.description)

    @app.route("/act/<env>", methods=["GET", "PUT"])
    def act(env):
        data = request.get_data(cache=False)  # over MAX_CONTENT_LENGTH: 413
        try:
            body = json.loads(data)
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
            raise ArenaError(400, f"the body is not JSON: {exc}") from None
        answer = arena.act(env, body, client=request.remote_addr)
        return Response(json.dumps(answer), mimetype="application/json")

    def page(text):
        return Response(text, mimetype="text/html")

    @app.route("/openapi.json")
    def openapi():
        return Response(OPENAPI.read_bytes(), mimetype="application/json")

    @app.route("/")
    def index():
        return page(arena.index_page())

    @app.route("/env/<env>")
    def env_page(env):
        return page(arena.view_env(env))

    @app.route("/agent/<env>/<agent>")
    def agent_page(env, agent):
        return page(arena.view_agent(env, agent))

    @app.route("/run/<env>/<run>")
    def run_page(env, run):
        return page(arena.view_run(env, run))

    return app


# Waitress stops accepting at its connection limit (100 by default), so that many idle sockets
# lock every client out until they time out (120 s by default). Connections cost a socket and a
# few KiB each and wait in poll() (select() fails past 1024 descriptors), so the limit is raised
# tenfold and idle ones are closed sooner; past that, a proxy in front must cap them
# (docs/faces/arena.md).
CONNECTION_LIMIT = 1000  # open connections
CHANNEL_TIMEOUT = 30  # seconds a connection may stay idle (between or inside requests)
MAX_HEADER = 64 * 1024  # bytes of a request's line and headers (waitress: 256 KiB)


def _allow_descriptors(connections):
    """Raise this process's open-file limit toward its hard limit, for ``connections`` sockets
    and some to spare; the connection limit that fits."""
    import resource

    spare = 64  # the database, logs, the listening socket
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = connections + spare if hard == resource.RLIM_INFINITY else min(hard, connections + spare)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        soft = want
    return connections if soft == resource.RLIM_INFINITY else min(connections, soft - spare)


def serve(
    arena,
    host="127.0.0.1",
    port=8000,
    threads=8,
    ready=None,
    connection_limit=CONNECTION_LIMIT,
    channel_timeout=CHANNEL_TIMEOUT,
):
    """Serve the arena with waitress (a production WSGI server) until interrupted; ``ready``,
    when given, is called with the bound port once the server listens. Flask answers bodies over
    MAX_BODY with a JSON 413; waitress refuses far larger ones before reading them. At most
    ``connection_limit`` connections are open at once, each closed after ``channel_timeout``
    seconds without a byte (bounded by the process's open-file limit, raised where it can be)."""
    from waitress import create_server

    if connection_limit < 1 or channel_timeout <= 0:
        raise ValueError("the connection limit and the channel timeout must be positive")
    server = create_server(
        create_app(arena),
        host=host,
        port=port,
        threads=threads,
        max_request_body_size=4 * MAX_BODY,
        max_request_header_size=MAX_HEADER,
        connection_limit=_allow_descriptors(connection_limit),
        channel_timeout=channel_timeout,
        cleanup_interval=max(1, min(10, channel_timeout // 3)),  # idle ones checked this often
        asyncore_use_poll=True,
    )
    if ready is not None:
        ready(server.effective_port)
    try:
        server.run()
    finally:
        server.close()
