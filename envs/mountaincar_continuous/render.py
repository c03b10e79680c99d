"""MountainCarContinuous frames: the discrete game's scene, with the flag at this game's goal."""

from vecenv.envs.mountaincar.render import scene, track_line

from .rules import GOAL_POSITION


def rgb_array(state, config):
    return scene(float(state["position"]), GOAL_POSITION)


def ansi(state, config):
    position, velocity = float(state["position"]), float(state["velocity"])
    return (
        f"[{track_line(position, GOAL_POSITION)}] position={position:+.4f} "
        f"velocity={velocity:+.5f} step={int(state['step'])}"
    )
