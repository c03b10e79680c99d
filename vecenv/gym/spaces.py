"""Gymnasium spaces derived from a game's specification."""

from gymnasium import spaces


def field_space(field):
    return spaces.Box(low=field.low, high=field.high, shape=field.shape, dtype=field.dtype)


def observation_space(engine):
    """One field gives its Box; several give a Dict of them (in the spec's order)."""
    fields = engine.observation
    if len(fields) == 1:
        return field_space(fields[0])
    return spaces.Dict({f.name: field_space(f) for f in fields})


def action_space(engine):
    action = engine.action
    if action.discrete:
        low, high = int(action.low[0]), int(action.high[0])
        return spaces.Discrete(high - low + 1, start=low)
    return spaces.Box(
        low=action.low.reshape(action.shape).astype(action.dtype),
        high=action.high.reshape(action.shape).astype(action.dtype),
        shape=action.shape,
        dtype=action.dtype,
    )


def render_metadata(game):
    """The render modes a game's render module offers, and its frame rate."""
    from vecenv import registry

    renderer = registry.game_module(game, "render")
    modes = [m for m in ("rgb_array", "ansi") if renderer is not None and hasattr(renderer, m)]
    return {"render_modes": modes, "render_fps": registry.get_spec(game).render.get("fps", 30)}


def agent_view(engine, buffers):
    """Views of the engine's observation buffers without the agent axis of one-agent games."""
    views = {}
    for field in engine.observation:
        arr = buffers[field.name]
        views[field.name] = arr if field.shared else arr.reshape((arr.shape[0],) + field.shape)
    return views if len(views) > 1 else next(iter(views.values()))


def episode_obs(obs, i):
    """A fresh copy of episode ``i``'s observation (a 0-d array, not a scalar, for shape ())."""
    if isinstance(obs, dict):
        return {k: v[i, ...].copy() for k, v in obs.items()}
    return obs[i, ...].copy()


def copy_obs(obs):
    if isinstance(obs, dict):
        return {k: v.copy() for k, v in obs.items()}
    return obs.copy()


def check_render_mode(render_mode, metadata):
    if render_mode is not None and render_mode not in metadata["render_modes"]:
        raise ValueError(
            f"render_mode must be None or one of {metadata['render_modes']}, got {render_mode!r}"
        )


def game_class(base, game, suffix):
    """A subclass of ``base`` bound to ``game``, carrying the game's metadata at class level.

    gymnasium reads ``metadata`` (render modes) from the class before making an instance, so
    each game gets its own class; they are made on demand, from the spec, not written per game.
    """
    from vecenv import registry

    spec = registry.get_spec(game)
    attrs = {
        "metadata": dict(base.metadata, **render_metadata(spec.name)),
        "game": spec.name,
        "__module__": base.__module__,
        "__doc__": f"{spec.title}: {base.__doc__}",
    }
    return type(class_name(spec, suffix), (base,), attrs)


def class_name(spec, suffix):
    """The name of a game's class (``CartPoleEnv``); the module resolves it, so that pickle finds
    the class by reference."""
    return spec.gym.get("id", spec.name).split("-v")[0].replace("/", "") + suffix


def class_lookup(base, suffix):
    """A module ``__getattr__`` resolving a game's name to its (cached) class."""
    cache = {}

    def lookup(name):
        from vecenv import registry

        if name.startswith("__"):
            raise AttributeError(name)
        specs = registry.specs()
        if name not in specs:
            # A class's own name (``CartPoleEnv``), as pickle looks classes up.
            game = next((g for g, s in specs.items() if class_name(s, suffix) == name), None)
            if game is None:
                raise AttributeError(name)
            name = game
        if name not in cache:
            cache[name] = game_class(base, name, suffix)
        return cache[name]

    return lookup


def position_option(options):
    """The ``position`` of a reset's ``options`` (None without one); other keys are the face's
    own or ignored, as gymnasium leaves options to each env."""
    if options is None:
        return None
    if not isinstance(options, dict):
        raise ValueError(f"options must be a dict, got {type(options).__name__}")
    return options.get("position")


class PicklesByGame:
    """Pickling for a face over one engine: it travels as its game's name, configuration and
    engine (states and random streams), without ``_VIEWS``, the views of the engine's buffers that
    ``_bind`` makes again where it loads; a loaded object continues bit-identically."""

    _VIEWS = ()

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k not in self._VIEWS}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._bind()

    def __reduce__(self):
        return reduce_game_object(self, self._engine.name)


def reduce_game_object(obj, game):
    """``__reduce__`` of an instance of a game's class: the class found again by the game's name
    where it loads (a game registered from a folder is registered there first), then the
    instance's ``__getstate__``."""
    from vecenv import registry

    found = registry.get_game(game)
    folder = str(found.folder) if found.origin == "registered" else None
    cls = type(obj)
    if getattr(cls, "game", None) != found.name:  # the base class itself, made with game=...
        return (_bare_instance, (cls, None, None, None), obj.__getstate__())
    return (_bare_instance, (None, cls.__module__, found.name, folder), obj.__getstate__())


def _bare_instance(cls, module, game, folder):
    if cls is None:
        import importlib

        from vecenv import registry

        if folder is not None and game not in registry.games():
            from .registration import register_all

            registry.register(folder)
            register_all()
        cls = getattr(importlib.import_module(module), game)
    return cls.__new__(cls)
