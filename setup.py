"""Maps the top-level folders onto the ``vecenv`` namespace.

``kernels/`` installs as ``vecenv.kernels`` and ``envs/`` as ``vecenv.envs``; every game folder
with an ``__init__.py`` is picked up, so adding a game touches only its own folder.
"""

from pathlib import Path

from setuptools import setup

HERE = Path(__file__).parent
GAMES = sorted(p.parent.name for p in (HERE / "envs").glob("*/__init__.py"))

setup(
    packages=["vecenv", "vecenv.gym", "vecenv.kernels", "vecenv.envs"]
    + [f"vecenv.envs.{game}" for game in GAMES],
    package_dir={"vecenv": "vecenv", "vecenv.kernels": "kernels", "vecenv.envs": "envs"},
)
