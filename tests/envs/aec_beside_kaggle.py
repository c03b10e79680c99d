"""A game's PettingZoo AEC env beside its Kaggle face: random legal moves played in both, the
boards compared after every ply."""

import random

import numpy as np
import pytest

from vecenv import kaggle, registry


def play_aec_beside_kaggle(game, seed):
    """One random game of ``game`` (picked from the AEC env's action masks, seeded by ``seed``)
    in PettingZoo's AEC face and in the Kaggle face at once; asserts after every ply that both
    show the same board and at the end that both give the same rewards. A game with chance
    (dice) has the Kaggle face start from the AEC env's record, its random stream included, so
    that both roll alike. Returns the plies."""
    pettingzoo = pytest.importorskip("vecenv.pettingzoo", reason="PettingZoo is a test extra")
    rng = random.Random(seed)
    env = pettingzoo.env(game)
    env.reset(seed=seed)
    theirs = kaggle.make(game)
    if registry.chance(game):
        theirs.start_record(env.engine.get_state(0))
    plies = 0
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        move = rng.choice(np.flatnonzero(observation["action_mask"]).tolist())
        actions = [None] * len(env.possible_agents)
        actions[env.possible_agents.index(agent)] = move
        theirs.step(actions)
        env.step(move)
        plies += 1
        for a, r in env.rewards.items():
            totals[a] += r
        board = env.observe(env.possible_agents[0])["observation"]["board"]
        np.testing.assert_array_equal(board, theirs.state[0].observation.board)
    assert theirs.done and not env.agents
    final = [-1 if s.reward is None else s.reward for s in theirs.state]
    assert list(totals.values()) == final
    return plies
