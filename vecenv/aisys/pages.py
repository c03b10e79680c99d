"""The HTML pages every AISysProj environment here serves: the environment's leaderboard with its
recent runs, and an agent's page. Everything shown is escaped (agent names come from users)."""

import html
import urllib.parse


def number(value):
    """A rating or outcome for a table cell."""
    if value is None:
        return ""
    try:
        return html.escape(f"{float(value):.3f}")
    except (TypeError, ValueError):
        return html.escape(str(value))


def _href(*parts):
    """A site path at AISysProj's addresses (/env/E, /agent/E/A, /run/E/R), each part quoted."""
    return html.escape("/" + "/".join(urllib.parse.quote(str(p), safe="") for p in parts))


def _link(text, *parts):
    return f'<a href="{_href(*parts)}">{html.escape(str(text))}</a>'


def runs_table(runs, env, table_id="recent-runs"):
    """Finished runs (the newest first) with links to their replays and agents."""
    rows = "".join(
        f'<tr data-run="{html.escape(str(r.run_id))}"><td>{_link(r.run_id, "run", env, r.run_id)}'
        f"</td><td>{_link(r.agent_name, 'agent', env, r.agent_name)}</td>"
        f"<td>{'running' if r.outcome is None else html.escape(str(r.outcome))}</td></tr>"
        for r in runs
    )
    return (
        f'<table id="{table_id}"><tr><th>Run</th><th>Agent</th><th>Outcome</th></tr>{rows}</table>'
    )


def page(title, body):
    """A complete page; ``title`` and ``body`` are HTML (escaped by the caller)."""
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title></head>'
        f"<body><h1>{title}</h1>{body}</body></html>"
    )


class Pages:
    """``view_env`` and ``view_agent`` for an environment with ``settings`` and ``game``, linking
    agents and runs at AISysProj's addresses; ``page_summary()`` adds the environment's own line
    (its opponent, its configuration, ...)."""

    def page_title(self):
        info = getattr(self, "env_info", None)
        name = getattr(info, "display_name", None) or self.game
        return html.escape(str(name))

    def page_env(self):
        """The environment's identifier in the server's addresses."""
        info = getattr(self, "env_info", None)
        return getattr(info, "identifier", None) or self.game

    def page_summary(self):
        """HTML about this environment, shown above its leaderboard."""
        return ""

    def view_env(self, env_data):
        """The leaderboard: fully evaluated agents by their (best) rating, then the others by
        name with their estimated (current) rating, then the recent runs."""
        env, settings = self.page_env(), self.settings
        sign = -1 if settings.RATING_OBJECTIVE == "max" else 1
        ranked = sorted(
            (a for a in env_data.agents if a.fully_evaluated),
            key=lambda a: (sign * a.agent_rating, a.agent_name),
        )
        pending = sorted(
            (a for a in env_data.agents if not a.fully_evaluated), key=lambda a: a.agent_name
        )

        def row(cells, agent):
            return f'<tr data-agent="{html.escape(str(agent.agent_name))}">{cells}</tr>'

        ranked_rows = "".join(
            row(
                f"<td>{rank}</td><td>{_link(a.agent_name, 'agent', env, a.agent_name)}</td>"
                f"<td>{number(a.agent_rating)}</td><td>{number(a.current_agent_rating)}</td>",
                a,
            )
            for rank, a in enumerate(ranked, start=1)
        )
        pending_rows = "".join(
            row(
                f"<td>{_link(a.agent_name, 'agent', env, a.agent_name)}</td>"
                f"<td>{a.total_number_of_runs}</td><td>{number(a.current_agent_rating)}</td>",
                a,
            )
            for a in pending
        )
        runs = settings.MIN_RUNS_FOR_FULLY_EVALUATED
        return page(
            self.page_title(),
            f"{self.page_summary()}{settings.DESCRIPTION}"
            f"<h2>Leaderboard (fully evaluated: {runs} runs)</h2>"
            '<table id="evaluated"><tr><th>#</th><th>Agent</th><th>Rating</th>'
            f"<th>Current rating</th></tr>{ranked_rows}</table>"
            "<p>The rating is the best the current rating (the mean outcome of the last "
            f"{runs} runs) has been.</p>"
            "<h2>Not fully evaluated</h2>"
            '<table id="unevaluated"><tr><th>Agent</th><th>Runs</th>'
            f"<th>Estimated rating</th></tr>{pending_rows}</table>"
            f"<h2>Recent runs</h2>{runs_table(env_data.recent_runs, env)}",
        )

    def view_agent(self, agent_data):
        env = self.page_env()
        name = html.escape(str(agent_data.agent_name))
        return page(
            f"{self.page_title()}: {name}",
            f"<p>{_link('Leaderboard', 'env', env)}</p>"
            f'<table id="agent"><tr><th>Agent</th><td>{name}</td></tr>'
            f"<tr><th>Rating</th><td>{number(agent_data.agent_rating)}</td></tr>"
            f"<tr><th>Current rating</th><td>{number(agent_data.current_agent_rating)}</td></tr>"
            f"<tr><th>Runs</th><td>{agent_data.total_number_of_runs}</td></tr>"
            "<tr><th>Fully evaluated</th>"
            f"<td>{'yes' if agent_data.fully_evaluated else 'no'}</td></tr></table>"
            f"<h2>Recent runs</h2>{runs_table(agent_data.recent_runs, env, 'agent-runs')}",
        )
