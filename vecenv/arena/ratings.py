"""Ratings as AISysProj computes them.

An agent's current rating is the mean of its last ``MIN_RUNS_FOR_FULLY_EVALUATED`` outcomes; it is
fully evaluated once it has finished that many runs, and from then on its best rating follows the
current one in the direction of ``RATING_OBJECTIVE`` (starting from ``INITIAL_RATING``).
"""

import json


def rate(agent, outcome, settings):
    """Count one finished run's ``outcome`` in ``agent``'s row (an ``AgentRow``)."""
    if settings.RATING_STRATEGY != "average":
        raise ValueError(f"unsupported RATING_STRATEGY {settings.RATING_STRATEGY!r}")
    window = settings.MIN_RUNS_FOR_FULLY_EVALUATED
    agent.total_runs += 1
    if agent.total_runs >= window:
        agent.fully_evaluated = True
    results = (json.loads(agent.recent_results) + [outcome])[-window:]
    agent.recent_results = json.dumps(results)
    agent.current_rating = sum(results) / len(results)
    if agent.fully_evaluated:
        better = max if settings.RATING_OBJECTIVE == "max" else min
        agent.best_rating = better(agent.best_rating, agent.current_rating)
