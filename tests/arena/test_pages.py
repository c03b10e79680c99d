"""The arena's pages in headless Chromium, served by a real server after some runs."""

import json

from sqlalchemy import select

from vecenv.arena.models import AgentRow, RunRow

from .helpers import RPS, SHORT_RPS, play_runs, random_moves


def test_leaderboard_agent_and_run_pages(arena_db, start_server, browser):
    db, arena = arena_db
    arena.add_environment("rps", env_class=RPS, config=SHORT_RPS, name="Short <rps>")
    runs = {"alice": 25, "bob": 22, "carol": 3}  # 20 runs make an agent fully evaluated
    for seed, (name, count) in enumerate(runs.items()):
        play_runs(arena, "rps", arena.add_agent("rps", name), count, random_moves(seed))
    with arena.Session() as session:
        agents = {a.name: a for a in session.scalars(select(AgentRow))}
        finished = session.scalars(
            select(RunRow).where(RunRow.finished.is_(True)).order_by(RunRow.id)
        ).all()
    server = start_server(db)
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    page.goto(server.url + "/")
    page.click("text=Short <rps>")  # the name is escaped, shown as given
    page.wait_for_url("**/env/rps")
    assert page.title() == "Short <rps>"

    # fully evaluated agents, best first, with their best and current ratings as stored
    evaluated = page.eval_on_selector_all(
        "#evaluated tr[data-agent]",
        "rows => rows.map(r => [r.dataset.agent, ...[...r.cells].map(c => c.textContent)])",
    )
    expected = sorted(("alice", "bob"), key=lambda n: -agents[n].best_rating)
    assert [row[0] for row in evaluated] == expected
    for name, _rank, shown, best, current in evaluated:
        assert shown == name
        assert float(best) == round(agents[name].best_rating, 3)
        assert float(current) == round(agents[name].current_rating, 3)
    assert [rank for _, rank, *_ in evaluated] == ["1", "2"]
    pending = page.eval_on_selector_all(
        "#unevaluated tr[data-agent]",
        "rows => rows.map(r => [...r.cells].map(c => c.textContent))",
    )
    carol = agents["carol"]
    assert pending == [["carol", str(carol.total_runs), f"{carol.current_rating:.3f}"]]
    recent = page.eval_on_selector_all("#recent-runs tr[data-run]", "rows => rows.length")
    assert recent == 20  # the latest twenty

    # the agent's page, from its link
    page.click("#evaluated >> text=alice")
    page.wait_for_url("**/agent/rps/alice")
    assert page.inner_text("#agent-runs").count("\n") >= 1
    assert f"{agents['alice'].best_rating:.3f}" in page.inner_text("body")
    alice_runs = [r for r in finished if r.agent_id == agents["alice"].id]
    latest = alice_runs[-1]
    # a run's replay, from the agent's page
    page.click(f"#agent-runs a[href$='/run/rps/{latest.id}']")
    page.wait_for_url(f"**/run/rps/{latest.id}")
    page.wait_for_selector("body[data-step]", state="attached")
    steps = page.evaluate("() => window.vecenvReplay.numSteps")
    assert steps == len(json.loads(latest.history)) + 1
    assert not errors
