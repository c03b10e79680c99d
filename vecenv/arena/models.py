"""The arena's tables: environments, agents (account and rating in one row) and runs."""

from sqlalchemy import Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class EnvironmentRow(Base):
    """An environment agents play: a ``GenericEnvironment`` class and its ``config_json``."""

    __tablename__ = "environments"

    identifier: Mapped[str] = mapped_column(String(64), primary_key=True)
    display_name: Mapped[str] = mapped_column(String(200))
    env_class: Mapped[str] = mapped_column(String(300))  # "package.module:Class"
    config: Mapped[str] = mapped_column(Text)  # JSON


class AgentRow(Base):
    """An agent of one environment: its credentials and its rating."""

    __tablename__ = "agents"
    __table_args__ = (UniqueConstraint("environment", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    environment: Mapped[str] = mapped_column(ForeignKey("environments.identifier"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    password_hash: Mapped[str] = mapped_column(String(200))
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    total_runs: Mapped[int] = mapped_column(Integer, default=0)  # finished runs
    fully_evaluated: Mapped[bool] = mapped_column(Boolean, default=False)
    recent_results: Mapped[str] = mapped_column(Text, default="[]")  # JSON: the rated outcomes
    current_rating: Mapped[float] = mapped_column(Float)
    best_rating: Mapped[float] = mapped_column(Float)


class RunRow(Base):
    """One run of an agent: the environment's JSON state and the actions taken so far."""

    __tablename__ = "runs"
    __table_args__ = (
        Index("runs_open", "agent_id", "finished"),
        Index("runs_recent", "environment", "finished", "finished_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    environment: Mapped[str] = mapped_column(ForeignKey("environments.identifier"))
    agent_id: Mapped[int] = mapped_column(ForeignKey("agents.id"))
    finished: Mapped[bool] = mapped_column(Boolean, default=False)
    # An action was requested and not answered yet: the same run is requested again until it
    # is, so an agent cannot skip runs it is losing.
    outstanding: Mapped[bool] = mapped_column(Boolean, default=False)
    state: Mapped[str] = mapped_column(Text)  # JSON
    history: Mapped[str] = mapped_column(Text, default="[]")  # JSON: [[action, extra_info], ...]
    outcome: Mapped[str] = mapped_column(Text, default="null")  # JSON
    finish_no: Mapped[int | None] = mapped_column(Integer, nullable=True)  # the agent's n-th
    finished_at: Mapped[float | None] = mapped_column(Float, nullable=True)  # unix time
