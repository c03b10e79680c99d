"""A protocol-v1 client: an agent plays runs on an arena (vecenv's or AISysProj's) in parallel.

``play(config, policy, runs)`` sends the agent's actions for every action request it got and
gets the next requests, on one kept-alive connection, until ``runs`` runs have finished. A
``policy`` maps a percept to an action. ``make_policy(name, game)`` makes one: "random" (a uniform
legal move, or a uniform action of the percept's action space), a built-in Kaggle agent of the
game (e.g. "negamax"), the search agent "mcts" or "mcts:N" (N simulations a move) of a two-agent
game, "path/to/file.py" / "package.module:function" naming a function, or "path/to/policy.pt", a
policy saved by ``vecenv train ppo``.
"""

import http.client
import importlib
import importlib.util
import json
import os
import random as _random
import urllib.parse

from .protocol import PROTOCOL_VERSION

CLIENT_NAME = "vecenv-arena-client"


class ClientError(Exception):
    """The arena refused a request (its status and description) or could not be reached."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def load_config(path):
    with open(path, encoding="utf-8") as f:
        config = json.load(f)
    missing = [k for k in ("url", "env", "agent", "pwd") if not isinstance(config.get(k), str)]
    if missing:
        raise ValueError(f"{path}: the agent config lacks {', '.join(missing)}")
    return config


class Connection:
    """One agent's kept-alive HTTP connection to ``/act/<env>``."""

    def __init__(self, config, timeout=60):
        url = urllib.parse.urlsplit(config["url"])
        if url.scheme not in ("http", "https"):
            raise ValueError(f"the arena's url must be http(s)://..., got {config['url']!r}")
        kind = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
        self._connect = lambda: kind(url.hostname, url.port, timeout=timeout)
        self._conn = self._connect()
        self.path = f"{url.path.rstrip('/')}/act/{urllib.parse.quote(config['env'])}"
        self.config = config

    def close(self):
        self._conn.close()

    def send(self, actions=(), parallel_runs=True, to_abandon=()):
        """One request; the arena's answer (a ``ClientError`` where it refuses)."""
        body = json.dumps(
            {
                "protocol_version": PROTOCOL_VERSION,
                "agent": self.config["agent"],
                "pwd": self.config["pwd"],
                "actions": list(actions),
                "parallel_runs": parallel_runs,
                "to_abandon": list(to_abandon),
                "client": CLIENT_NAME,
            }
        )
        headers = {"Content-Type": "application/json"}
        for attempt in (0, 1):  # a kept-alive connection the server closed is opened again
            try:
                self._conn.request("PUT", self.path, body, headers)
                response = self._conn.getresponse()
                data = response.read()
                break
            except (ConnectionError, http.client.HTTPException) as exc:
                self._conn.close()
                self._conn = self._connect()
                if attempt:
                    raise ClientError(f"cannot reach the arena: {exc}") from None
        try:
            answer = json.loads(data)
        except ValueError:
            answer = None
        if response.status != 200:
            description = answer.get("description") if isinstance(answer, dict) else None
            raise ClientError(
                f"{response.status}: {description or data[:200].decode(errors='replace')}",
                response.status,
            )
        return answer


def play(config, policy, runs, parallel_runs=True, progress=None, on_message=None, on_answer=None):
    """Play until ``runs`` runs have finished; their outcomes, by run identifier.

    Runs still open at the end stay open on the arena (the next ``play`` answers them first). A
    request refused as stale (409: the arena already has those actions, e.g. after a lost
    answer) is followed by one without actions, which fetches the current requests.
    ``on_answer(actions, answer)``, when given, sees every answer and the actions it
    acknowledged (stored by the arena).
    """
    connection = Connection(config)
    outcomes, actions = {}, []
    try:
        while len(outcomes) < runs:
            try:
                answer = connection.send(actions, parallel_runs)
            except ClientError as exc:
                if exc.status != 409 or not actions:
                    raise
                actions = []
                continue
            if on_answer is not None:
                on_answer(actions, answer)
            for message in answer["messages"]:
                if on_message is not None:
                    on_message(message)
            outcomes.update(answer["finished_runs"])
            if progress is not None:
                progress(min(len(outcomes), runs), runs)
            if len(outcomes) >= runs:
                break
            actions = [
                {"run": r["run"], "act_no": r["act_no"], "action": policy(r["percept"])}
                for r in answer["action_requests"]
            ]
    finally:
        connection.close()
    return outcomes


# -- policies --------------------------------------------------------------------------------


def random_policy(seed=None):
    """A uniform legal move where the percept lists them ("legal"), else a uniform action of its
    action space (``{"discrete", "low", "high", "shape"}``)."""
    rng = _random.Random(seed)

    def policy(percept):
        if isinstance(percept, dict) and percept.get("legal"):
            return rng.choice(percept["legal"])
        space = percept.get("action_space") if isinstance(percept, dict) else None
        if not space:
            raise ValueError("the percept has neither legal moves nor an action space")
        if space.get("discrete"):
            return rng.randint(int(space["low"]), int(space["high"]))
        return _uniform(rng, space["low"], space["high"])

    return policy


def _uniform(rng, low, high):
    if isinstance(low, list):
        return [_uniform(rng, lo, hi) for lo, hi in zip(low, high, strict=True)]
    return rng.uniform(float(low), float(high))


def kaggle_policy(game, name):
    """A built-in Kaggle agent of ``game`` (or the search agent), fed the percept's observation
    and configuration."""
    from vecenv.kaggle.agents import builtin_callables, search_callable

    if name == "mcts" or name.startswith("mcts:"):
        agent = search_callable(game, name)
        return lambda percept: agent(percept["observation"], percept["configuration"])
    agents = builtin_callables(game)
    if name not in agents:
        known = ", ".join(agents) or "none"
        raise ValueError(f"{name!r} is no built-in agent of {game} (agents: {known})")
    agent = agents[name]
    return lambda percept: agent(percept["observation"], percept["configuration"])


def function_policy(reference):
    """The function ``path/to/file.py`` (its ``get_action``) or ``package.module:function``."""
    if reference.endswith(".py"):
        if not os.path.isfile(reference):
            raise ValueError(f"no file {reference!r}")
        spec = importlib.util.spec_from_file_location("arena_agent", reference)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        name = "get_action"
    else:
        module_name, _, name = reference.partition(":")
        module = importlib.import_module(module_name)
    function = getattr(module, name, None)
    if not callable(function):
        raise ValueError(f"{reference!r} has no function {name!r}")
    return function


def trained_policy(path, game=None):
    """A policy saved by ``vecenv train ppo`` (needs PyTorch), playing greedily; one trained on
    another game than ``game`` (where known) is a ValueError naming both."""
    from vecenv import ppo

    return ppo.load(path, game=game).percept


def make_policy(name, game=None, seed=None):
    """The policy ``name`` stands for (see the module)."""
    if name == "random":
        return random_policy(seed)
    search = name == "mcts" or name.startswith("mcts:")
    if name.endswith(".py") or (":" in name and not search):
        return function_policy(name)
    if name.endswith(".pt"):
        return trained_policy(name, game)
    if game is None:
        raise ValueError(
            f"agent {name!r}: a built-in agent needs the game (--game), or use 'random', "
            "'file.py' or 'module:function'"
        )
    return kaggle_policy(game, name)
