"""kaggle-environments' ``Environment``, over the engine.

The per-step work Kaggle does in Python (schema validation, deep copies, interpreters over dicts)
is one engine step on a one-episode table here; the face keeps only what Kaggle's interface shows:
the states of every step, logs, statuses, rewards and each agent's banked overage time.
"""

import copy
import json
import uuid
from time import perf_counter

import vecenv
from vecenv import registry
from vecenv.kernels.position import PositionError

from .agents import Agent, builtin_callables, shared_observation
from .errors import DeadlineExceeded, FailedPrecondition, InvalidArgument
from .schema import agent_state, kaggle_specification
from .schema import configuration as check_configuration
from .structs import Struct, structify
from .table import Table


def kaggle_games():
    """The games the Kaggle face plays (their spec has a ``kaggle`` section)."""
    return [name for name, spec in registry.specs().items() if spec.kaggle is not None]


class Environment:
    """One Kaggle environment: ``make(name)`` builds it."""

    def __init__(self, name, configuration=None, info=None, steps=None, logs=None, debug=False):
        self.name = name
        self.spec = registry.get_spec(name)
        self.id = str(uuid.uuid1())
        self.debug = bool(debug)
        self.info = {} if info is None else info
        self.logs = [] if logs is None else logs
        self.pool = None
        spec = kaggle_specification(self.spec)
        self.specification = spec
        config, engine_config = check_configuration(self.spec, configuration)
        self.configuration = structify(config)
        seed = self.info.get("seed") if isinstance(self.info, dict) else None
        try:
            self._table = Table(name, engine_config, seed=seed)
        except OverflowError as exc:  # a value past what the engine's configuration record holds
            raise InvalidArgument(f"Configuration Invalid: {exc}") from None
        self.agents = structify(builtin_callables(name))
        self._builtin_names = tuple(self.agents)
        observation = spec["observation"]
        self._shared = [k for k, v in observation.items() if v.get("shared", False)]
        self._hidden = [k for k, v in observation.items() if v.get("hidden", False)]
        default_overage = observation["remainingOverageTime"]["default"]
        self._default_overage = default_overage
        self._overage = [default_overage] * self._table.num_agents
        self.state = None
        self.steps = []
        if steps:
            self._start(steps)
        else:
            self.reset()

    # -- Kaggle's properties -------------------------------------------------------------------

    @property
    def version(self):
        return self.specification.get("version", "")

    @property
    def done(self):
        """No agent is ACTIVE."""
        return self._table.done

    # -- stepping ------------------------------------------------------------------------------

    def reset(self, num_agents=None):
        """Start a new episode; returns the agents' states."""
        if num_agents is None:
            num_agents = self.specification["agents"][0]
        if num_agents not in self.specification["agents"]:
            raise InvalidArgument(f"{num_agents} is not a valid number of agent(s).")
        self._table.reset()
        self._overage = [self._default_overage] * num_agents
        default = copy.deepcopy(self.specification["action"].get("default", 0))
        self.state = self._table.state([default] * num_agents, self._overage)
        self.steps = [self.state]
        self.logs.append([])
        return self.state

    def start_record(self, record):
        """Start a new episode from ``record``, one of the game's engine records
        (``Engine.get_state``), its random stream included: a game's chance (cards dealt face
        down, dice to come) goes on as in the episode the record was taken from, which no
        observation could tell (``make(steps=...)`` starts from observations). Returns the
        agents' states; ``step`` goes on from there (``run`` would start a new episode, as
        Kaggle's does after one step)."""
        if len(self.steps) > 1:  # else the episode just begun is the one restarted
            self.reset(self._table.num_agents)
        self._table.engine.set_state(record, 0)
        default = copy.deepcopy(self.specification["action"].get("default", 0))
        self.state = self._table.state([default] * self._table.num_agents, self._overage)
        self.steps = [self.state]
        return self.state

    def step(self, actions, logs=None):
        """Apply one action per agent; returns the agents' states after the step."""
        if self.done:
            raise FailedPrecondition("Environment done, reset required.")
        if not actions or len(actions) != len(self.state):
            raise InvalidArgument(f"{len(self.state)} actions required.")
        if logs is None:
            logs = []
        recorded = self._table.play(list(actions))
        for k, log in enumerate(logs[: len(self._overage)]):
            if isinstance(log, dict) and "duration" in log:
                used = max(0, log["duration"] - self.configuration.actTimeout)
                self._overage[k] = self._overage[k] - used
        previous, self.state = self.state, self._table.state(recorded, self._overage)
        _carry_over(previous, self.state)
        self.steps.append(self.state)
        self.logs.append(logs)
        return self.state

    def _runner(self, agents):
        seats = [None if a is None else Agent(a, self, k) for k, a in enumerate(agents)]

        def act(none_action=None):
            if len(seats) != len(self.state):
                raise InvalidArgument("Number of agents must match the state length")
            actions, logs = [], []
            for k, agent in enumerate(seats):
                if self.state[k].status != "ACTIVE":
                    actions.append(None)
                    logs.append({})
                elif agent is None:
                    actions.append(none_action)
                    logs.append({})
                else:
                    action, log = agent.act(
                        lambda k=k: shared_observation(self.state, k, self._hidden, self._shared)
                    )
                    actions.append(action)
                    logs.append(log)
            return actions, logs

        return act

    def run(self, agents):
        """Play until the episode is done (or runTimeout passes); returns every step's states."""
        if not isinstance(agents, (list, tuple)):
            raise InvalidArgument("agents must be a list, one per seat")
        if self.state is None or len(self.steps) == 1 or self.done:
            self.reset(len(agents))
        if len(self.state) != len(agents):
            raise InvalidArgument(
                f"{len(self.state)} agents were expected, but {len(agents)} was given."
            )
        act = self._runner(agents)
        start = perf_counter()
        limit = self.configuration.runTimeout
        while not self.done and perf_counter() - start < limit:
            actions, logs = act()
            self.step(actions, logs)
        if not self.done:
            raise DeadlineExceeded(
                f"runtime of {perf_counter() - start} exceeded the runTimeout of {limit}"
            )
        return self.steps

    def train(self, agents):
        """Kaggle's single-agent loop: the seat marked None is trained, the others play; returns
        a Struct with ``reset()`` -> observation and ``step(action)`` -> [observation, reward
        (the change since the last step), done, info]."""
        if not isinstance(agents, (list, tuple)):
            raise InvalidArgument("agents must be a list, one per seat")
        positions = [k for k, a in enumerate(agents) if a is None]
        if len(positions) > 1:
            raise InvalidArgument("Only one agent can be marked 'None'")
        if not positions:
            raise InvalidArgument("One agent must be marked 'None' to train.")
        position = positions[0]
        act = None

        def advance():
            while not self.done and self.state[position].status == "INACTIVE":
                self.step(*act())

        def observation():
            return shared_observation(self.state, position, self._hidden, self._shared)

        def reset():
            nonlocal act
            self.reset(len(agents))
            act = self._runner(agents)
            advance()
            return observation()

        def step(action):
            self.step(*act(action))
            advance()
            agent = self.state[position]
            reward = agent.reward
            if len(self.steps) > 1 and reward is not None:
                previous = self.steps[-2][position].reward
                reward = reward - (previous or 0)
            return [observation(), reward, agent.status != "ACTIVE", agent.info]

        reset()
        return structify({"step": step, "reset": reset})

    def _start(self, steps):
        """Start from a history, as kaggle-environments does: its last step is the position the
        game goes on from (each agent's state filled in and checked by Kaggle's state schema),
        the steps before it are kept as given. A position the rules cannot represent (a board of
        the wrong size, a mark no agent plays, a connectx checker floating above an empty cell)
        is refused with ``InvalidArgument`` naming the agent, the field and the reason."""
        if not isinstance(steps, list) or not all(isinstance(s, list) for s in steps):
            raise InvalidArgument("steps must be a list of steps, each a list of agent states")
        last, index = steps[-1], len(steps) - 1
        if len(last) not in self.specification["agents"]:
            raise InvalidArgument(f"{len(last)} is not a valid number of agent(s).")
        states = []
        for k, given in enumerate(last):
            err, state = agent_state(self.spec, k, given)
            if err:
                raise InvalidArgument(f"Default state generation failed for #{k}: {err}")
            states.append(state)
        shown = states[0]["observation"].get("step")
        if shown != index:
            raise InvalidArgument(
                f"step {index}: agent 0's observation.step is {shown!r}, not the step's index "
                f"{index} in steps (the rules count steps as the history does)"
            )
        try:
            self._table.start(states, index)
        except PositionError as exc:
            raise InvalidArgument(f"step {index} is no position of {self.name}: {exc}") from None
        self._overage = [s["observation"]["remainingOverageTime"] for s in states]
        self.state = structify(states)
        self.steps = structify(copy.deepcopy(steps[:-1])) + [self.state]

    # -- output --------------------------------------------------------------------------------

    def toJSON(self):  # noqa: N802 (Kaggle's name)
        """The specification and every step, with Kaggle's keys."""
        spec = self.specification
        return copy.deepcopy(
            {
                "id": self.id,
                "name": spec["name"],
                "title": spec["title"],
                "description": spec["description"],
                "version": spec["version"],
                "module_version": vecenv.__version__,
                "configuration": self.configuration,
                "specification": {
                    key: spec[key]
                    for key in ("action", "agents", "configuration", "info", "observation")
                }
                | {"reward": spec["reward"]},
                "steps": self.steps,
                "rewards": [s.reward for s in self.steps[-1]],
                "statuses": [s.status for s in self.steps[-1]],
                "schema_version": 1,
                "info": self.info,
            }
        )

    def render(self, **kwargs):
        """mode "human" prints text, "ansi" returns it, "html" returns a page replaying the
        episode, "ipython" displays that page in a notebook, "json" returns ``toJSON`` as JSON."""
        mode = kwargs.get("mode", "human")
        if mode in ("ansi", "human"):
            # A game whose text tells the whole episode (rps: every round) renders the steps.
            episode = getattr(registry.game_module(self.name, "render"), "ansi_episode", None)
            if episode is not None:
                out = episode(self.steps, self.configuration)
            else:
                out = self._table.engine.render(0, mode="ansi")
            if mode == "ansi":
                return out
            print(out)
            return None
        if mode in ("html", "ipython"):
            from .html import episode_page

            page = episode_page(self, **kwargs)
            if mode == "html":
                return page
            from IPython.display import HTML, display

            width = kwargs.get("width", 300)
            height = kwargs.get("height", 300)
            quoted = page.replace('"', "&quot;")
            display(
                HTML(
                    f'<iframe srcdoc="{quoted}" width="{width}" height="{height}" '
                    'frameborder="0"></iframe>'
                )
            )
            return None
        if mode == "json":
            return json.dumps(self.toJSON(), sort_keys=True, indent=2 if self.debug else None)
        raise InvalidArgument("Available render modes: human, ansi, html, ipython, json")

    def clone(self):
        return Environment(
            self.name,
            configuration=dict(self.configuration),
            info=copy.deepcopy(self.info),
            steps=copy.deepcopy(self.steps),
            debug=self.debug,
        )

    def __repr__(self):
        return f"Environment({self.name!r}, steps={len(self.steps)}, done={self.done})"


def _carry_over(previous, state):
    """What a given starting state holds beyond the game's fields (an ``info``, an observation
    key the game does not write) stays in every later state, as Kaggle's interpreters edit the
    previous states in place."""
    for before, after in zip(previous, state, strict=True):
        if before.info:
            after.info = copy.deepcopy(before.info)
        for key, value in before.observation.items():
            if key not in after.observation:
                setattr(after.observation, key, copy.deepcopy(value))


def _failed_action(agent_state):
    """The action a recorded agent state replays: an exception for a status Kaggle sets on a
    failed agent (so the replay fails it the same way), else its recorded action."""
    status = agent_state["status"]
    if status == "TIMEOUT":
        return DeadlineExceeded("replayed")
    if status == "ERROR":
        return RuntimeError("replayed")
    if status == "INVALID" and agent_state["action"] is None:
        return "invalid"  # fails every action schema, as the recorded action did
    return agent_state["action"]


def position_steps(environment, position, configuration=None):
    """An engine position (``vecenv.positions``, at step 0) as the one-step history that
    ``make(steps=...)`` starts the Kaggle game from."""
    if isinstance(position, dict) and position.get("step", 0) != 0:
        raise InvalidArgument("a Kaggle history starts from a position at step 0")
    env = make(environment, configuration)
    try:
        env._table.start_position(position)
    except ValueError as exc:
        raise InvalidArgument(f"no position of {env.name}: {exc}") from None
    default = copy.deepcopy(env.specification["action"].get("default", 0))
    return [env._table.state([default] * env._table.num_agents, env._overage)]


def make(environment, configuration=None, info=None, steps=None, logs=None, debug=False):
    """A Kaggle environment of one of vecenv's Kaggle games, as ``kaggle_environments.make``."""
    if isinstance(environment, Environment):
        environment = environment.name
    if not isinstance(environment, str):
        raise InvalidArgument("Unknown Environment Specification")
    try:
        name = registry.resolve(environment)
    except ValueError:
        name = None
    if name is None or registry.get_spec(name).kaggle is None:
        raise InvalidArgument(
            f"Unknown Environment Specification: {environment!r}; "
            f"available: {', '.join(kaggle_games())}"
        )
    return Environment(
        name, configuration=configuration, info=info, steps=steps, logs=logs, debug=debug
    )


def evaluate(environment, agents=None, configuration=None, steps=None, num_episodes=1, debug=False):
    """Final rewards of ``num_episodes`` episodes of ``agents``, one list per episode."""
    env = make(environment, configuration, steps=steps, debug=debug)
    return [[s.reward for s in env.run(agents or [])[-1]] for _ in range(num_episodes)]


__all__ = ["Environment", "Struct", "evaluate", "kaggle_games", "make", "position_steps"]
