"""Maps the top-level folders onto the ``vecenv`` namespace.

``kernels/`` installs as ``vecenv.kernels`` and ``envs/`` as ``vecenv.envs``; every game folder
and every face package under ``vecenv/`` with an ``__init__.py`` is picked up, so adding a game or
a face touches only its own folder.
"""

from pathlib import Path

from setuptools import setup

HERE = Path(__file__).parent
GAMES = sorted(p.parent.name for p in (HERE / "envs").glob("*/__init__.py"))
FACES = sorted(p.parent.name for p in (HERE / "vecenv").glob("*/__init__.py"))

setup(
    packages=["vecenv", "vecenv.kernels", "vecenv.envs"]
    + [f"vecenv.{face}" for face in FACES]
    + [f"vecenv.envs.{game}" for game in GAMES],
    package_dir={"vecenv": "vecenv", "vecenv.kernels": "kernels", "vecenv.envs": "envs"},
)
