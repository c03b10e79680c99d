"""A protocol-v1 client: an agent plays runs on an arena (vecenv's or AISysProj's) in parallel.

``play(config, policy, runs)`` sends the agent's actions for every action request it got and
gets the next requests, on one kept-alive connection, until ``runs`` runs have finished. A
``policy`` maps a percept to an action. ``make_policy(name, game)`` makes one: "random" (a uniform
legal move, or a uniform action of the percept's action space), a built-in Kaggle agent of the
game (e.g. "negamax"), the search agent "mcts" or "mcts:N" (N simulations a move) of a two-agent
game, "path/to/file.py" / "package.module:function" naming a function, or a trained player's file:
"path/to/policy.pt", a policy saved by ``vecenv train ppo`` (its greedy move), or "path/to/model.pt"
/ "path/to/model.pt:N", a network saved by ``vecenv train alphazero``, searching N simulations a
move (its run's where N is not given; 0: the network alone).
"""

import contextlib
import http.client
import importlib
import importlib.util
import json
import os
import random as _random
import socket
import threading
import urllib.parse

from .protocol import PROTOCOL_VERSION

CLIENT_NAME = "vecenv-arena-client"


# What the client takes from a server: an answer of at most MAX_ANSWER bytes (a request for five
# runs of connectx 1000 x 1000 is about 15 MB), nested at most MAX_DEPTH deep, read within
# TIMEOUT seconds in all (a server sending a byte now and then cannot hold it longer).
MAX_ANSWER = 64 * 2**20
MAX_DEPTH = 64
TIMEOUT = 60.0
IDLE_ANSWERS = 10  # answers in a row with nothing to do before the client gives up


class ClientError(Exception):
    """The arena refused a request (its status and description), could not be reached, or
    answered what is no protocol-v1 answer."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def check_url(url):
    """``url`` if it is an http(s) URL with a host, else ValueError."""
    parts = urllib.parse.urlsplit(url) if isinstance(url, str) else None
    try:
        host, _ = (parts.hostname, parts.port) if parts else (None, None)
    except ValueError:  # a port out of range or not a number
        host = None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        raise ValueError(f"the arena's url must be http(s)://host[:port]/..., got {url!r}")
    return url


def load_config(path):
    try:
        with open(path, encoding="utf-8") as f:
            config = json.loads(f.read(MAX_ANSWER))
    except RecursionError:
        raise ValueError(f"{path}: nested too deep to be an agent config") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text ({e.reason})") from None
    if not isinstance(config, dict):
        raise ValueError(f"{path}: an agent config is a JSON object")
    missing = [k for k in ("url", "env", "agent", "pwd") if not isinstance(config.get(k), str)]
    if missing:
        raise ValueError(f"{path}: the agent config lacks {', '.join(missing)}")
    check_url(config["url"])
    return config


class Connection:
    """One agent's kept-alive HTTP connection to ``/act/<env>``; an answer is read within
    ``timeout`` seconds in all and ``max_answer`` bytes (see the module)."""

    def __init__(self, config, timeout=TIMEOUT, max_answer=MAX_ANSWER):
        url = urllib.parse.urlsplit(check_url(config["url"]))
        kind = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
        self._connect = lambda: kind(url.hostname, url.port, timeout=timeout)
        self._conn = self._connect()
        self.path = f"{url.path.rstrip('/')}/act/{urllib.parse.quote(config['env'])}"
        self.config = config
        self.timeout, self.max_answer = float(timeout), int(max_answer)

    def close(self):
        self._conn.close()

    def _exchange(self, body, headers):
        """One request and its answer's (status, bytes), within the timeout in all: past it a
        timer shuts the socket, so a server dripping bytes cannot hold the client."""
        expired = threading.Event()

        def expire():
            expired.set()
            sock = self._conn.sock
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

        timer = threading.Timer(self.timeout, expire)
        timer.daemon = True
        timer.start()
        try:
            self._conn.request("PUT", self.path, body, headers)
            response = self._conn.getresponse()
            length = response.getheader("Content-Length")
            if length is not None and length.isdigit() and int(length) > self.max_answer:
                raise ClientError(
                    f"the arena's answer of {int(length):,} bytes is over the "
                    f"client's limit of {self.max_answer:,}"
                )
            data = response.read(self.max_answer + 1)
            if expired.is_set():  # the socket was shut under the read: what came is partial
                raise OSError("timed out")
            if len(data) > self.max_answer:
                raise ClientError(
                    f"the arena's answer is over the client's limit of {self.max_answer:,} bytes"
                )
            return response.status, data
        except (OSError, http.client.HTTPException):
            if expired.is_set():
                raise ClientError(f"the arena did not answer within {self.timeout:g} s") from None
            raise
        finally:
            timer.cancel()

    def send(self, actions=(), parallel_runs=True, to_abandon=()):
        """One request; the arena's answer (a ``ClientError`` where it refuses, or answers
        what is no protocol-v1 answer)."""
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
                status, data = self._exchange(body, headers)
                break
            except ClientError:
                self._reopen()
                raise
            except (OSError, http.client.HTTPException) as exc:
                self._reopen()
                if attempt:
                    raise ClientError(f"cannot reach the arena: {exc}") from None
        answer = _decode(data)
        if status != 200:
            description = answer.get("description") if isinstance(answer, dict) else None
            if not isinstance(description, str):
                description = data[:200].decode(errors="replace")
            raise ClientError(f"{status}: {one_line(description)}", status)
        return check_answer(answer)

    def _reopen(self):
        self._conn.close()
        self._conn = self._connect()


def one_line(text, limit=300):
    """``text`` (anything a server sent) as one line of at most ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _decode(data):
    """An answer's JSON (None where it is none), refused past ``MAX_DEPTH`` levels of nesting
    before it is parsed (Python's parser recurses)."""
    depth = top = 0
    for byte in data.translate(None, _NOT_BRACKETS):
        depth += 1 if byte in b"[{" else -1
        top = max(top, depth)
        if top > MAX_DEPTH:
            raise ClientError(f"the arena's answer is malformed: nested over {MAX_DEPTH} deep")
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


# Every byte but brackets, for counting an answer's nesting (brackets inside strings count too:
# an over-count, never an under-count).
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def check_answer(answer):
    """``answer`` if it has protocol v1's fields, else ClientError saying what is wrong."""

    def bad(why):
        raise ClientError(f"the arena's answer is malformed: {why}")

    if not isinstance(answer, dict):
        bad("not a JSON object")
    kinds = {
        "action_requests": list,
        "messages": list,
        "finished_runs": dict,
        "active_runs": list,
    }
    for key, kind in kinds.items():
        if not isinstance(answer.get(key, kind()), kind):
            bad(f"{key} is not a {kind.__name__}")
        answer.setdefault(key, kind())
    for r in answer["action_requests"]:
        if not (isinstance(r, dict) and isinstance(r.get("run"), str) and "percept" in r):
            bad("an action request lacks its run or percept")
        if not (isinstance(r.get("act_no"), int) and not isinstance(r["act_no"], bool)):
            bad("an action request's act_no is not an integer")
    if not all(isinstance(m, dict) for m in answer["messages"]):
        bad("a message is not an object")
    return answer


def play(
    config,
    policy,
    runs,
    parallel_runs=True,
    progress=None,
    on_message=None,
    on_answer=None,
    timeout=TIMEOUT,
    max_answer=MAX_ANSWER,
):
    """Play until ``runs`` runs have finished; their outcomes, by run identifier. Each answer
    is read within ``timeout`` seconds and ``max_answer`` bytes (see the module).

    Runs still open at the end stay open on the arena (the next ``play`` answers them first). A
    request refused as stale (409: the arena already has those actions, e.g. after a lost
    answer) is followed by one without actions, which fetches the current requests.
    ``on_answer(actions, answer)``, when given, sees every answer and the actions it
    acknowledged (stored by the arena).
    """
    try:
        connection = Connection(config, timeout, max_answer)
    except ValueError as e:
        raise ClientError(str(e)) from None
    outcomes, actions, idle = {}, [], 0
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
            idle = 0 if answer["action_requests"] or answer["finished_runs"] else idle + 1
            if idle >= IDLE_ANSWERS:
                raise ClientError(
                    f"the arena's answer is malformed: {IDLE_ANSWERS} answers in a row "
                    "requested no action and finished no run"
                )
            if progress is not None:
                progress(min(len(outcomes), runs), runs)
            if len(outcomes) >= runs:
                break
            actions = [
                {"run": r["run"], "act_no": r["act_no"], "action": _act(policy, r)}
                for r in answer["action_requests"]
            ]
    finally:
        connection.close()
    return outcomes


def _act(policy, request):
    """The policy's action for an action request; ClientError where the policy fails on it
    (a percept it cannot read), naming the run."""
    try:
        action = policy(request["percept"])
        json.dumps(action, allow_nan=False)
    except Exception as exc:  # the policy is the user's: any failure is reported in one line
        raise ClientError(
            f"the agent's policy failed on run {one_line(request['run'], 40)}: "
            f"{type(exc).__name__}: {one_line(exc, 200)}"
        ) from None
    return action


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
    from vecenv.kaggle.agents import builtin_callables, host_callable, host_names, search_callable

    if name == "mcts" or name.startswith("mcts:"):
        agent = search_callable(game, name)
        return lambda percept: agent(percept["observation"], percept["configuration"])
    if name in host_names(game):
        agent = host_callable(game, name)
        return lambda percept: agent(percept["observation"], percept["configuration"])
    agents = builtin_callables(game)
    if name not in agents:
        known = ", ".join((*agents, *host_names(game))) or "none"
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
        from vecenv.seats import function_agent

        return function_agent(reference, arguments=("percept",))
    function = getattr(module, name, None)
    if not callable(function):
        raise ValueError(f"{reference!r} has no function {name!r}")
    return function


def trained_policy(path, game=None):
    """A policy saved by ``vecenv train ppo`` (needs PyTorch), playing greedily; one trained on
    another game than ``game`` (where known) is a ValueError naming both."""
    from vecenv import ppo

    return ppo.load(path, game=game).percept


def checkpoint_policy(name, game=None):
    """The player saved in the file ``name`` names (``FILE.pt`` or ``FILE.pt:N``): a PPO
    policy's greedy move, or an AlphaZero network's search (``FILE.pt:0``: its network alone)
    from the position the percept's observation gives (``vecenv.kaggle.agents``); trained on
    another game than ``game`` (where known) is a ValueError naming both."""
    from vecenv import alphazero, tournament
    from vecenv.kaggle.agents import PolicyCallable, search_callable
    from vecenv.seats import CHECKPOINT

    path, simulations = CHECKPOINT.fullmatch(name).group("path", "simulations")
    loaded = tournament.load(path, game)
    if not isinstance(loaded, alphazero.Player):
        if simulations is not None:
            tournament.refuse_simulations(name, path)
        return loaded.percept
    if simulations is not None and int(simulations) == 0:
        agent = PolicyCallable(loaded.game, loaded.policy, name=name)
    else:
        simulations = None if simulations is None else int(simulations)
        agent = search_callable(loaded.game, loaded.agent(simulations, name=name))
    return lambda percept: agent(percept["observation"], percept["configuration"])


def make_policy(name, game=None, seed=None):
    """The policy ``name`` stands for (see the module)."""
    from vecenv.seats import is_checkpoint

    if name == "random":
        return random_policy(seed)
    if is_checkpoint(name):
        return checkpoint_policy(name, game)
    search = name == "mcts" or name.startswith("mcts:")
    if name.endswith(".py") or (":" in name and not search):
        return function_policy(name)
    if game is None:
        raise ValueError(
            f"agent {name!r}: a built-in agent needs the game (--game), or use 'random', "
            "'file.py' or 'module:function'"
        )
    return kaggle_policy(game, name)
