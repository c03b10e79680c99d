"""Rendering in one place, for the games, the faces and the command line.

- ``draw``: drawing primitives on numpy canvases, which the games' ``render.py`` use;
- ``pieces``: chess pieces as shapes, which the chess games draw;
- ``frames``: RGB frames as PNG, GIF, contact sheets and terminal text (``TerminalView``).

A game's own frames (``rgb_array``, ``ansi``, ``ansi_episode``) stay in its folder's ``render.py``
(``vecenv.protocol``); the engine and the faces call them through ``Engine.render``.
"""
