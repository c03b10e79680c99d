"""The arena: environments, agents and their runs in a database, played through protocol v1.

``Arena(db)`` is everything the server does, without HTTP: the admin's operations
(``add_environment``, ``add_agent``, ``agents``), an agent's request (``act``) and the data the
pages show. Each request is one database transaction: either all it did is stored (and only then
answered), or, where it is refused or fails, nothing is.
"""

import html
import json
import threading
import time

from sqlalchemy import func, select

from vecenv.aisys.interface import (
    AbbreviatedRunData,
    ActionHistoryEntry,
    AgentDataSummary,
    EnvData,
    EnvInfo,
    GenericEnvironment,
    RunData,
)

from . import passwords
from .database import DEFAULT_DB, open_database, open_reader
from .limits import Limits, Throttle
from .models import AgentRow, EnvironmentRow, RunRow
from .protocol import MAX_NAME, ArenaError, is_name, parse_request, parse_run_id, shown
from .ratings import rate

RECENT_RUNS = 20  # finished runs listed on an environment's and an agent's page


def check_name(name, what):
    """``name`` as a new identifier: 1 to MAX_NAME letters, digits, '_', '.' or '-', beginning
    and ending with a letter or digit (so that no ``alice.`` or ``-alice`` stands beside
    ``alice`` on a leaderboard); ``add_environment`` and ``add_agent`` also refuse one that
    differs from an existing name only by case, as game names are refused."""
    if not is_name(name) or not (name[0].isalnum() and name[-1].isalnum()):
        raise ValueError(
            f"{what} {name!r} must be 1 to {MAX_NAME} letters, digits, '_', '.' or '-', "
            "beginning and ending with a letter or digit"
        )
    return name


def class_reference(env_class):
    return f"{env_class.__module__}:{env_class.__qualname__}"


def load_class(reference):
    """The class ``package.module:Class`` names."""
    module, _, name = reference.partition(":")
    if not module or not name:
        raise ValueError(f"an environment class is 'package.module:Class', got {reference!r}")
    from vecenv.seats import import_users

    target = import_users(module, reference, "a GenericEnvironment class (package.module:Class)")
    try:
        for part in name.split("."):
            target = getattr(target, part)
    except AttributeError as exc:
        raise ValueError(f"cannot load environment class {reference!r}: {exc}") from None
    return target


class LiveEnvironment:
    """An environment's plugin instance, and the lock that keeps its requests one at a time (the
    plugin keeps live matches between calls and is not thread-safe)."""

    def __init__(self, row, limits=None):
        self.identifier = row.identifier
        env_class = load_class(row.env_class)
        if not (isinstance(env_class, type) and issubclass(env_class, GenericEnvironment)):
            raise ValueError(f"{row.env_class} is no GenericEnvironment")
        self.env = env_class(EnvInfo(row.display_name, row.identifier), json.loads(row.config))
        self.settings = self.env.settings
        self.lock = threading.Lock()
        # vecenv's environments keep live runs between requests: bounded by the server's limits
        # (another plugin keeps what it keeps).
        if limits is not None and callable(getattr(self.env, "live_limits", None)):
            self.env.live_limits(**limits.live())


def _dump(value):
    return json.dumps(value, separators=(",", ":"))


class Arena:
    """The arena on the database ``db`` (a SQLite file's path or a SQLAlchemy URL)."""

    def __init__(self, db=DEFAULT_DB, limits=None):
        self.limits = Limits() if limits is None else limits
        self.throttle = Throttle(self.limits.auth_failures, self.limits.auth_window)
        self.engine, self.Session = open_database(db)
        self._reader, self.Reader = open_reader(self.engine)
        self._live = {}
        self._live_lock = threading.Lock()

    def close(self):
        self.engine.dispose()
        self._reader.dispose()

    # -- administration ------------------------------------------------------------------------

    def add_environment(self, identifier, *, game=None, env_class=None, config=None, name=None):
        """Add an environment: one of vecenv's games (``game``, by default ``identifier``) or any
        ``GenericEnvironment`` class (``env_class``, "package.module:Class"), with its
        ``config_json``. The class is instantiated once here, so a bad config is refused now."""
        check_name(identifier, "an environment's identifier")
        if env_class is None:
            from vecenv.aisys import environment_class  # ValueError for no game of vecenv's

            reference = class_reference(environment_class(game or identifier))
        else:
            reference = env_class if isinstance(env_class, str) else class_reference(env_class)
        row = EnvironmentRow(
            identifier=identifier,
            display_name=name or identifier,
            env_class=reference,
            config=_dump(config),
        )
        LiveEnvironment(row)  # refuses a class or config that does not make an environment
        with self.Session.begin() as session:
            same = func.lower(EnvironmentRow.identifier) == identifier.lower()
            other = session.scalars(select(EnvironmentRow.identifier).where(same)).first()
            if other is not None:
                raise ValueError(f"environment {other!r} exists already (case aside)")
            session.add(row)
        return self.environment(identifier)

    def environment(self, identifier):
        with self.Reader() as session:
            row = session.get(EnvironmentRow, identifier)
            if row is None:
                raise ValueError(f"no environment {identifier!r}")
            return _env_dict(row)

    def environments(self):
        with self.Reader() as session:
            rows = session.scalars(select(EnvironmentRow).order_by(EnvironmentRow.identifier))
            return [_env_dict(row) for row in rows]

    def add_agent(self, env, name, url="http://127.0.0.1:8000"):
        """A new agent of ``env``: its config (env, agent, pwd, url), the only place its password
        is ever shown."""
        check_name(name, "an agent's name")
        live = self._environment(env, ValueError)
        password = passwords.new_password()
        with self.Session.begin() as session:
            same = func.lower(AgentRow.name) == name.lower()
            exists = select(AgentRow.name).where(AgentRow.environment == env, same)
            other = session.scalars(exists).first()
            if other is not None:
                raise ValueError(f"agent {other!r} of {env!r} exists already (case aside)")
            initial = float(live.settings.INITIAL_RATING)
            session.add(
                AgentRow(
                    environment=env,
                    name=name,
                    password_hash=passwords.hash_password(password),
                    active=True,
                    total_runs=0,
                    fully_evaluated=False,
                    recent_results="[]",
                    current_rating=initial,
                    best_rating=initial,
                )
            )
        return {"protocol_version": 1, "env": env, "agent": name, "pwd": password, "url": url}

    def agents(self, env=None):
        """Every agent (of ``env``) with its rating: by environment, the best first."""
        query = select(AgentRow)
        if env is not None:
            self._environment(env, ValueError)
            query = query.where(AgentRow.environment == env)
        with self.Reader() as session:
            rows = list(session.scalars(query))
        signs = {}
        for row in rows:
            if row.environment not in signs:
                settings = self._environment(row.environment, ValueError).settings
                signs[row.environment] = -1 if settings.RATING_OBJECTIVE == "max" else 1
        rows.sort(key=lambda r: (r.environment, signs[r.environment] * r.best_rating, r.name))
        return [
            {
                "env": row.environment,
                "agent": row.name,
                "rating": row.best_rating,
                "current_rating": row.current_rating,
                "runs": row.total_runs,
                "fully_evaluated": row.fully_evaluated,
                "active": row.active,
            }
            for row in rows
        ]

    # -- environments --------------------------------------------------------------------------

    def _environment(self, identifier, error=None):
        """The live plugin of environment ``identifier``, made once per process (environments
        are only ever added, so one made stays right)."""
        with self._live_lock:
            live = self._live.get(identifier) if is_name(identifier) else None
            if live is None:
                row = None
                if is_name(identifier):  # anything else is no identifier: not looked up
                    with self.Reader() as session:
                        row = session.get(EnvironmentRow, identifier)
                if row is None:
                    what = shown(identifier) if isinstance(identifier, str) else repr(identifier)
                    message = f"no environment {what}"
                    raise (error(message) if error else ArenaError(404, message))
                live = self._live[identifier] = LiveEnvironment(row, self.limits)
            return live

    # -- an agent's request --------------------------------------------------------------------

    def act(self, env, body, client=None):
        """Answer one protocol-v1 request (a decoded JSON body) to ``/act/<env>``: apply its
        abandons and actions, then send the agent its action requests. Raises ``ArenaError``
        (nothing stored) where the request is refused. ``client`` (its address, where known)
        is throttled after repeated failed logins (``limits``): 429 with a retry time."""
        request = parse_request(body)
        wait = self.throttle.retry_after(client, request.agent)
        if wait:
            raise ArenaError(
                429, f"too many failed logins from this client: retry in {wait} s", wait
            )
        live = self._environment(env)
        try:  # before the environment's lock: a wrong password never waits for honest agents
            self._check_credentials(env, request)
        except ArenaError as exc:
            if exc.status == 401:
                self.throttle.failed(client, request.agent)
            raise
        with live.lock:
            try:
                with self.Session.begin() as session:
                    return Turn(live, session, request).answer()
            except ArenaError:
                raise
            except Exception as exc:  # a plugin's failure: nothing was stored
                raise ArenaError(
                    500, f"the environment failed: {type(exc).__name__}: {exc}"
                ) from exc

    def _check_credentials(self, env, request):
        """ArenaError 401 unless the request names an agent of ``env`` with its password."""
        with self.Reader() as session:
            agent = _agent_row(session, env, request.agent)
            stored = None if agent is None else agent.password_hash
        if stored is None:
            raise ArenaError(401, f"unknown agent {request.agent!r} in {env!r}")
        if not passwords.check_password(request.pwd, stored):
            raise ArenaError(401, "wrong password")

    # -- what the pages show -------------------------------------------------------------------

    def view_env(self, env):
        live = self._environment(env)
        with self.Reader() as session:
            rows = session.scalars(select(AgentRow).where(AgentRow.environment == env))
            agents = [_summary(session, row) for row in rows]
            recent = _recent(session, RunRow.environment == env)
        with live.lock:
            return live.env.view_env(EnvData(agents=agents, recent_runs=recent))

    def view_agent(self, env, name):
        live = self._environment(env)
        with self.Reader() as session:
            row = _agent_row(session, env, name) if is_name(name) else None
            if row is None:
                raise ArenaError(404, f"no agent {shown(name)} in {env!r}")
            summary = _summary(session, row)
        with live.lock:
            return live.env.view_agent(summary)

    def view_run(self, env, run_id):
        """The page of run ``run_id`` (its identifier as the URL spells it)."""
        live = self._environment(env)
        number = parse_run_id(run_id)
        with self.Reader() as session:
            run = session.get(RunRow, number) if number is not None else None
            if run is None or run.environment != env:
                raise ArenaError(404, f"no run {shown(run_id)} in {env!r}")
            if not run.finished:  # only its agent sees a run in progress (as percepts)
                raise ArenaError(403, f"run {number} is in progress")
            data = _run_data(run, session.get(AgentRow, run.agent_id).name)
        with live.lock:
            return live.env.view_run(data)

    def index_page(self):
        rows = "".join(
            f'<li><a href="/env/{html.escape(e["identifier"])}">'
            f"{html.escape(e['display_name'])}</a></li>"
            for e in self.environments()
        )
        return (
            '<!DOCTYPE html><html><head><meta charset="utf-8"><title>vecenv arena</title></head>'
            f"<body><h1>vecenv arena</h1><h2>Environments</h2><ul>{rows}</ul></body></html>"
        )


def _env_dict(row):
    return {
        "identifier": row.identifier,
        "display_name": row.display_name,
        "env_class": row.env_class,
        "config": json.loads(row.config),
    }


def _agent_row(session, env, name, lock=False):
    query = select(AgentRow).where(AgentRow.environment == env, AgentRow.name == name)
    return session.scalars(query.with_for_update() if lock else query).first()


def _run_data(run, agent_name):
    history = json.loads(run.history)
    return RunData(
        action_history=[ActionHistoryEntry(action, extra) for action, extra in history],
        state=json.loads(run.state),
        outcome=json.loads(run.outcome),
        run_id=run.id,
        agent_name=agent_name,
    )


def _recent(session, where):
    query = (
        select(RunRow, AgentRow.name)
        .join(AgentRow, RunRow.agent_id == AgentRow.id)
        .where(where, RunRow.finished.is_(True))
        .order_by(RunRow.finished_at.desc(), RunRow.id.desc())
        .limit(RECENT_RUNS)
    )
    return [
        AbbreviatedRunData(run_id=run.id, outcome=json.loads(run.outcome), agent_name=name)
        for run, name in session.execute(query)
    ]


def _summary(session, row):
    return AgentDataSummary(
        agent_name=row.name,
        agent_rating=float(row.best_rating),
        current_agent_rating=float(row.current_rating),
        recent_runs=_recent(session, RunRow.agent_id == row.id),
        total_number_of_runs=int(row.total_runs),
        fully_evaluated=bool(row.fully_evaluated),
    )


class Turn:
    """One request of an agent, inside its transaction: checks, actions, action requests."""

    def __init__(self, live, session, request):
        self.env, self.settings, self.session = live.env, live.settings, session
        self.identifier = live.identifier
        self.request = request
        self.agent = self._authenticate()
        query = select(RunRow).where(RunRow.agent_id == self.agent.id, RunRow.finished.is_(False))
        self.open_runs = {run.id: run for run in session.scalars(query.order_by(RunRow.id))}
        self.messages = []
        self.finished = {}

    def _authenticate(self):
        # The agent's row, locked: one request of an agent at a time, even across server
        # processes on a database with row locks (SQLite's transactions are serial anyway).
        agent = _agent_row(self.session, self.identifier, self.request.agent, lock=True)
        if agent is None:
            raise ArenaError(401, f"unknown agent {self.request.agent!r} in {self.identifier!r}")
        if not passwords.check_password(self.request.pwd, agent.password_hash):
            raise ArenaError(401, "wrong password")
        if not agent.active:
            raise ArenaError(403, f"agent {agent.name!r} is locked")
        return agent

    def _message(self, kind, content, run=None):
        self.messages.append({"type": kind, "content": content, "run": run})

    # -- checks: every problem refuses the whole request, before anything changes -------------

    def _run(self, run_id):
        """The agent's run ``run_id`` (an int: parse_request read it, once per request)."""
        run = self.open_runs.get(run_id)
        if run is not None:
            return run
        run = self.session.get(RunRow, run_id)
        # Another agent's run is answered as one that does not exist: a 403 would tell it does.
        if run is None or run.environment != self.identifier or run.agent_id != self.agent.id:
            raise ArenaError(404, f"no run '{run_id}' in {self.identifier!r}")
        if run.finished:
            raise ArenaError(409, f"run {run_id} is finished")
        return run

    def _check(self):
        request = self.request
        if request.to_abandon and not self.settings.CAN_ABANDON_RUNS:
            raise ArenaError(400, "this environment does not let runs be abandoned")
        abandon = [self._run(run_id) for run_id in request.to_abandon]
        actions = []
        for action in request.actions:
            run = self._run(action.run)
            history = json.loads(run.history)
            if action.act_no != len(history):
                raise ArenaError(
                    409,
                    f"run {action.run}: action number {action.act_no} is stale, the run is at "
                    f"{len(history)} (the action answers an earlier request)",
                )
            actions.append((run, history, action))
        return abandon, actions

    # -- changes ------------------------------------------------------------------------------

    def _finish(self, run, outcome):
        run.finished, run.outstanding = True, False
        run.outcome = _dump(outcome)
        rate(self.agent, outcome, self.settings)
        run.finish_no = self.agent.total_runs
        run.finished_at = time.time()
        self.finished[str(run.id)] = outcome

    def _abandon(self, run):
        outcome = self.env.get_abandon_outcome(_run_data(run, self.agent.name))
        self._message("warning", "run abandoned (as the client asked)", str(run.id))
        self._finish(run, outcome)

    def _act(self, run, history, action):
        data = RunData(
            action_history=[ActionHistoryEntry(a, e) for a, e in history],
            state=json.loads(run.state),
            outcome=None,
            run_id=run.id,
            agent_name=self.agent.name,
        )
        result = self.env.act(action.action, data)
        if result.new_state is None:  # refused by the environment: the run stays as it was
            self._message("error", result.message or "the action was refused", str(run.id))
            return
        if result.message:
            self._message("info", result.message, str(run.id))
        history.append([action.action, result.action_extra_info])
        run.state, run.history = _dump(result.new_state), _dump(history)
        run.outstanding = False
        if result.outcome is not None:
            self._finish(run, result.outcome)

    def _action_requests(self):
        """Up to NUMBER_OF_ACTION_REQUESTS of the agent's open runs (1 without parallel runs),
        those already asked for first, new runs started to fill up."""
        limit = self.settings.NUMBER_OF_ACTION_REQUESTS if self.request.parallel_runs else 1
        runs = [run for run in self.open_runs.values() if not run.finished]
        asked = [run for run in runs if run.outstanding]
        if asked:
            chosen = asked[:limit]
        else:
            while len(runs) < limit:
                run = RunRow(
                    environment=self.identifier,
                    agent_id=self.agent.id,
                    finished=False,
                    outstanding=False,
                    state=_dump(self.env.new_run()),
                    history="[]",
                    outcome="null",
                )
                self.session.add(run)
                runs.append(run)
            self.session.flush()  # the new runs' identifiers
            chosen = runs[:limit]
        requests = []
        for run in chosen:
            run.outstanding = True
            data = _run_data(run, self.agent.name)
            requests.append(
                {
                    "run": str(run.id),
                    "act_no": len(data.action_history),
                    "percept": self.env.get_action_request(data).content,
                }
            )
        return requests, [str(run.id) for run in runs]

    def answer(self):
        abandon, actions = self._check()
        for run in abandon:
            self._abandon(run)
        for run, history, action in actions:
            self._act(run, history, action)
        requests, active = self._action_requests()
        return {
            "action_requests": requests,
            "active_runs": active,
            "messages": self.messages,
            "finished_runs": self.finished,
        }
