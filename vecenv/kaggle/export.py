"""A vecenv game as a kaggle-environments environment module.

``export(name)`` returns what ``kaggle_environments.register(name, ...)`` takes: the
specification, an interpreter, a text renderer, an HTML renderer and the built-in agents. The
interpreter keeps, per Kaggle environment, one of this face's environments in step with Kaggle's:
Kaggle's reset starts it (a Kaggle environment made from steps has ours replay them), each of
Kaggle's steps plays the actions Kaggle passes (a failed agent's status as the failure), and the
result is written back into Kaggle's agent states.
"""

import weakref

from vecenv import registry

from .agents import builtin_callables
from .environment import Environment, _failed_action
from .errors import InvalidArgument
from .html import game_js, replay_page
from .schema import kaggle_specification


def _plain(o):
    if isinstance(o, dict):
        return {k: _plain(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_plain(v) for v in o]
    return o


def export(name):
    """``{specification, interpreter, renderer, html_renderer, agents}`` for Kaggle's register."""
    spec = registry.get_spec(name)
    if spec.kaggle is None:
        raise InvalidArgument(f"{name} is not a Kaggle game")
    name = registry.resolve(name)
    specification = _plain(kaggle_specification(spec))
    specification["status"] = spec.raw.get("status", {})
    mirrors = weakref.WeakKeyDictionary()  # Kaggle environment -> ours

    def write_back(theirs, ours):
        for agent, mine in zip(theirs, ours.state, strict=True):
            agent.status = mine.status
            agent.reward = mine.reward
            for key, value in mine.observation.items():
                if key not in ("remainingOverageTime", "step"):
                    agent.observation[key] = value
        return theirs

    def config_of(env):
        return {k: v for k, v in env.configuration.items() if k in spec.configuration}

    def mirror(env):
        """Ours for Kaggle's ``env``; for one made from steps (a clone, too), ours replays them."""
        mine = mirrors.get(env)
        if mine is None or len(mine.steps) != len(env.steps):
            mine = Environment(name, configuration=config_of(env), steps=_plain(env.steps))
            mirrors[env] = mine
        return mine

    def interpreter(state, env):
        if env.done:  # Kaggle's reset: every agent INACTIVE before it starts
            mine = Environment(name, configuration=config_of(env))
            mine.reset(len(state))
            mirrors[env] = mine
            return write_back(state, mine)
        mine = mirror(env)
        mine.step([_failed_action(agent) for agent in state])
        return write_back(state, mine)

    def renderer(state, env):
        return mirror(env).render(mode="ansi")

    def html_renderer():
        return replay_page(game_js(name))

    return {
        "specification": specification,
        "interpreter": interpreter,
        "renderer": renderer,
        "html_renderer": html_renderer,
        "agents": dict(builtin_callables(name)),
    }
