"""A trained network as one self-contained Kaggle ``submission.py``.

``source(network)`` gives the text of the file: ``agent_file``'s source with its data block
holding the network (its weights as base64 of zlib-compressed float32, its layout and the game's
configuration). The network is plain data (``vecenv.alphazero.Player.kaggle_submission`` and
``vecenv.ppo.Policy.kaggle_submission`` give it from a loaded checkpoint):

- AlphaZero: ``{"kind": "alphazero", "game", "configuration", "fields", "crosses", "actions",
  "simulations", "network"}`` (``fields`` and ``crosses`` as ``vecenv.alphazero.Features`` holds
  them) and, for ``"network": "mlp"``, ``"trunk": [(weight, bias), ...], "policy": (weight,
  bias), "value": (weight, bias)``; for ``"resnet"`` (``vecenv.alphazero.ResidualNetwork``),
  ``"shape"`` (rows, columns), ``"planes"`` and ``"extras"`` (the feature columns of the board's
  planes and of the rest), ``"blocks"`` and ``"arrays"``, its state dict as (name, array) pairs;
- PPO: ``{"kind": "ppo", "game", "configuration", "fields": [[name, space], ...], "norm":
  None or (mean, var), "actor": [(weight, bias), ...], "activation", "actions"}``.

Only the games whose rules ``agent_file`` carries are exported (``GAMES``); another is an
InvalidArgument.
"""

import base64
import inspect
import textwrap
import zlib

import numpy as np

from vecenv import registry

from . import agent_file
from .errors import InvalidArgument

GAMES = ("connectx", "tictactoe")  # the games whose rules the file carries
BEGIN, END = "# >>> data\n", "# <<< data\n"
LINE = 96  # characters of a line of the weights' base64


def check_game(game):
    if game not in GAMES:
        raise InvalidArgument(
            f"a Kaggle submission is written for {', '.join(GAMES)} (their rules fit in the "
            f"file), not {game}"
        )


def source(network):
    """The text of ``submission.py`` for ``network`` (see the module)."""
    game, kind = network["game"], network["kind"]
    check_game(game)
    configuration = registry.get_spec(game).resolve_configuration(network["configuration"])
    configuration = {
        k: configuration[k] for k in ("rows", "columns", "inarow") if k in configuration
    }
    arrays = []  # (name, float32 array), in the order the file reads them
    if kind == "alphazero":
        # what both networks' files read alike: the features, the move count, the search
        layout = {
            "fields": [list(f) for f in network["fields"]],
            "crosses": [list(c) for c in network["crosses"]],
            "actions": int(network["actions"]),
        }
        simulations = int(network["simulations"])
        if network.get("network") == "resnet":
            arrays = list(network["arrays"])
            layout.update(
                network="resnet",
                shape=[int(n) for n in network["shape"]],
                planes=[int(i) for i in network["planes"]],
                extras=[int(i) for i in network["extras"]],
                blocks=int(network["blocks"]),
            )
        else:
            for k, (weight, bias) in enumerate(network["trunk"]):
                arrays += [(f"trunk.{2 * k}.weight", weight), (f"trunk.{2 * k}.bias", bias)]
            for head in ("policy", "value"):
                weight, bias = network[head]
                arrays += [(f"{head}.weight", weight), (f"{head}.bias", bias)]
            layout.update(network="mlp", trunk=len(network["trunk"]))
    elif kind == "ppo":
        if network["norm"] is not None:
            arrays += [("obs_norm.mean", network["norm"][0]), ("obs_norm.var", network["norm"][1])]
        for k, (weight, bias) in enumerate(network["actor"]):
            arrays += [(f"actor.{2 * k}.weight", weight), (f"actor.{2 * k}.bias", bias)]
        layout = {
            "fields": [[name, dict(space)] for name, space in network["fields"]],
            "norm": network["norm"] is not None,
            "actor": len(network["actor"]),
            "activation": network["activation"],
            "actions": int(network["actions"]),
        }
        simulations = 0
    else:
        raise InvalidArgument(f"a network of kind {kind!r}: alphazero or ppo")
    # float32 as the network computes, float64 where it does (a PPO policy's running statistics)
    arrays = [(name, _little(a)) for name, a in arrays]
    packed = base64.b64encode(zlib.compress(b"".join(a.tobytes() for _, a in arrays), 9))
    packed = packed.decode("ascii")
    chunks = [packed[i : i + LINE] for i in range(0, len(packed), LINE)] or [""]
    data = [
        f"GAME = {game!r}\n",
        f"KIND = {kind!r}\n",
        f"CONFIGURATION = {configuration!r}\n",
        f"LAYOUT = {layout!r}\n",
        f"SHAPES = {[(name, list(a.shape), a.dtype.str) for name, a in arrays]!r}\n",
        f"SIMULATIONS = {simulations}\n",
        "WEIGHTS = (\n",
        *(f'    "{chunk}"\n' for chunk in chunks),
        ")\n",
    ]
    template = inspect.getsource(agent_file)
    head, rest = template.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    body = head[head.index('"""', 3) + 3 :]  # the template's docstring gives way to the file's
    return _docstring(network) + body + BEGIN + "".join(data) + END + tail


def _little(array):
    array = np.asarray(array)
    return array.astype("<f8" if array.dtype == np.float64 else "<f4")


def _docstring(network):
    game, kind = network["game"], network["kind"]
    if kind == "alphazero" and network["simulations"] > 0:
        play = (
            f"searching {network['simulations']} simulations a move with vecenv's Gumbel search "
            "(noise off), as the checkpoint plays in vecenv"
        )
    elif kind == "alphazero":
        play = "playing the legal action of its largest logit (no search)"
    else:
        play = "playing its greedy legal action"
    what = "AlphaZero network" if kind == "alphazero" else "PPO policy"
    first = f"A vecenv {what} trained on {game} as a Kaggle agent, {play}."
    second = (
        "Written by ``vecenv export kaggle``: numpy and the standard library alone (the "
        "network's forward pass in numpy, the game's rules in Python); kaggle-environments runs "
        "the file's last function, ``agent(observation, configuration)``."
    )
    first, second = textwrap.fill(first, 96), textwrap.fill(second, 96)
    return f'"""{first}\n\n{second}\n"""'
