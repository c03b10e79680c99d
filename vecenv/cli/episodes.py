"""Playing episodes of a gymnasium.Env with an agent, as ``vecenv train random`` and ``vecenv
train eval`` do: rendering to the terminal or a file, each episode's return and length printed.

An agent is a callable ``agent(observation, action_space, np_random) -> action``.
"""

import time

import numpy as np

from vecenv.render.frames import RenderError, TerminalView, recorder_for
from vecenv.stats import mean_interval

from .common import CliError, Progress, check_output_file, positive_int
from .common import seed as seed_number

DEFAULT_FPS = 30


# -- environments --------------------------------------------------------------------------------


def render_modes(env_id):
    """The render modes an environment's class declares (as gymnasium.make reads them)."""
    import gymnasium
    from gymnasium.envs.registration import load_env_creator

    entry = gymnasium.spec(env_id).entry_point
    creator = load_env_creator(entry) if isinstance(entry, str) else entry
    metadata = getattr(creator, "metadata", None)
    return list(metadata.get("render_modes", ())) if isinstance(metadata, dict) else []


def make_env(env_id, render_mode=None, env_kwargs=None):
    """``gymnasium.make(env_id, **env_kwargs)``; a render mode passed here was checked by
    render_modes, and the game checks the keyword arguments (a bad one is a CliError)."""
    import gymnasium

    try:
        return gymnasium.make(env_id, render_mode=render_mode, **(env_kwargs or {}))
    except (gymnasium.error.Error, TypeError, ValueError) as e:
        raise CliError(f"cannot make {env_id!r}: {e}") from None


def choose_render_mode(env_id, terminal, to_file):
    """rgb_array when the env has it (frames for both); ansi text as the terminal's fallback."""
    if not (terminal or to_file):
        return None
    import gymnasium

    try:
        modes = render_modes(env_id)
    except gymnasium.error.Error as e:
        raise CliError(f"cannot make {env_id!r}: {e}") from None
    if "rgb_array" in modes:
        return "rgb_array"
    if to_file:
        raise CliError(f"{env_id} has no rgb_array renderer to write frames from")
    if "ansi" in modes:
        return "ansi"
    raise CliError(f"{env_id} has neither an rgb_array nor an ansi renderer")


# -- the loop ------------------------------------------------------------------------------------


def fmt(x):
    return f"{x:.2f}"


def play_episodes(args, out, agent, agent_name, env_id, whose, env_kwargs=None):
    """Play ``args.episodes`` episodes of ``env_id`` (made with ``env_kwargs``, the game's own
    fields) with ``agent`` (rendering them as asked) and print each episode's return and length,
    then their mean."""
    seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**32)
    try:
        recorder = recorder_for(args.render_to) if args.render_to else None
    except RenderError as e:
        raise CliError(f"--render-to: {e}") from None
    if args.render_to:
        check_output_file(args.render_to, "--render-to")
    mode = choose_render_mode(env_id, args.render, args.render_to)
    env = make_env(env_id, mode, env_kwargs)
    try:
        fps = env.metadata.get("render_fps") or DEFAULT_FPS
        view = TerminalView(out, fps) if args.render else None
        rng = np.random.default_rng(seed)
        played = ", ".join(f"{k}={v!r}" for k, v in (env_kwargs or {}).items())
        played = f" with {played}" if played else ""
        print(f"{env_id} ({whose}){played}, agent {agent_name}, seed {seed}", file=out)
        progress = Progress(args.episodes, "episodes", enabled=None if view is None else False)
        returns, lengths = [], []
        busy, timed = 0.0, -1  # the first step is warm-up (it may compile), not timed
        for episode in range(args.episodes):
            record = recorder is not None and episode == 0
            draw = view is not None or record
            obs, _ = env.reset(seed=seed if episode == 0 else None)
            total, steps, done = 0.0, 0, False
            while True:
                if draw:
                    frame = env.render()
                    if view is not None:
                        view.show(frame)
                    if record:
                        recorder.add(frame)
                if done:
                    break
                t0 = time.perf_counter()
                action = agent(obs, env.action_space, rng)
                obs, reward, terminated, truncated, _ = env.step(action)
                if timed >= 0:
                    busy += time.perf_counter() - t0
                timed += 1
                total += float(reward)
                steps += 1
                done = terminated or truncated
                if not draw and done:
                    break
                progress.update(episode, f"{steps} steps")
            returns.append(total)
            lengths.append(steps)
            progress.clear()
            print(f"episode {episode + 1}: return {fmt(total)}, length {steps}", file=out)
            if view is not None:
                view.detach()
            progress.update(episode + 1, force=True)
        progress.clear()
        rate = f"{timed / busy:,.0f}" if busy > 0 else "-"
        noun = "episode" if len(returns) == 1 else "episodes"
        mean, low, high = mean_interval(returns)
        spread = f"95% interval [{fmt(low)}, {fmt(high)}], " if len(returns) > 1 else ""
        print(
            f"{len(returns)} {noun}: mean return {fmt(mean)} ({spread}std "
            f"{fmt(np.std(returns))}), mean length {np.mean(lengths):.1f}, {rate} steps/s",
            file=out,
        )
        if recorder is not None:
            try:
                count = recorder.save(fps)
            except RenderError as e:
                raise CliError(str(e)) from None
            print(f"wrote {args.render_to} ({count} frames of episode 1)", file=out)
    finally:
        env.close()
    return 0


def episode_options(parser, env_help=None):
    """The options of commands that play episodes through a gymnasium.Env; ``--env`` is
    required unless ``env_help`` says what it defaults to."""
    parser.add_argument(
        "--env",
        required=env_help is None,
        help=env_help or "CartPole-v1, cartpole, or gym.<Id> for Gymnasium's own",
    )
    parser.add_argument(
        "--episodes", type=positive_int, default=10, help="episodes to play (default 10)"
    )
    parser.add_argument(
        "--seed", type=seed_number, default=None, help="seed of the env and the agent"
    )
    parser.add_argument("--render", action="store_true", help="show frames in the terminal")
    parser.add_argument(
        "--render-to", metavar="FILE", help="FILE.gif (animation) or FILE.png (contact sheet)"
    )
