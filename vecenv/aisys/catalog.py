"""Every game's AISysProj environment class, by game and by class name.

A two-agent Kaggle game is played against a built-in opponent (``GameEnvironment``), a one-agent
game one episode per run (``EpisodeEnvironment``). A game's class is named after its Gymnasium id
without the version (``CartPole``, ``MountainCarContinuous``, ``ConnectX``), or after its folder in
CamelCase where it has no id, and is a module attribute of ``vecenv.aisys``, so the server loads it
as the plugin ``vecenv.aisys:CartPole``.
"""

import re
import threading

from vecenv import registry

from .environment import ConnectX, RockPaperScissors, TicTacToe, game_environment
from .episodes import episode_environment

_BUILT = {cls.game: cls for cls in (ConnectX, TicTacToe, RockPaperScissors)}
_classes = {}
_lock = threading.Lock()


def playable(spec):
    """Whether a game (its spec) has an AISysProj environment."""
    return spec.num_agents == 1 or (spec.num_agents == 2 and spec.kaggle is not None)


def games():
    """The games (folder names) that have an AISysProj environment class, in name order."""
    return [name for name, spec in registry.specs().items() if playable(spec)]


def class_name(game):
    """The name of a game's environment class (``"cartpole"`` -> ``"CartPole"``)."""
    spec = registry.get_spec(game)
    gym_id = spec.gym.get("id")
    if gym_id:
        return re.sub(r"-v\d+$", "", gym_id).replace("-", "").replace("/", "")
    return "".join(part[:1].upper() + part[1:] for part in spec.name.split("_"))


def class_names():
    """Every environment class name and its game (games registered later included)."""
    return {class_name(game): game for game in games()}


def environment_class(game):
    """The AISysProj environment class of ``game`` (a folder name or Gymnasium id); the same
    class every time. ValueError for a game without one."""
    name = registry.resolve(game)
    with _lock:
        cls = _classes.get(name)
        if cls is None:
            spec = registry.get_spec(name)
            if name in _BUILT:
                cls = _BUILT[name]
            elif spec.num_agents > 2:
                raise ValueError(
                    f"{name} has {spec.num_agents} agents: an AISysProj environment is one agent, "
                    "or one against a built-in opponent in a two-agent Kaggle game"
                )
            elif not playable(spec):
                raise ValueError(f"{name} has no AISysProj environment (games: {games()})")
            elif spec.num_agents == 1:
                cls = episode_environment(name, class_name(name))
            else:
                cls = game_environment(name, class_name(name))
            _classes[name] = cls
    return cls


__all__ = ["class_name", "class_names", "environment_class", "games"]
