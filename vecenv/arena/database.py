"""Opening the arena's database: a SQLite file by default, any SQLAlchemy URL otherwise."""

import os

from sqlalchemy import create_engine, event
from sqlalchemy.orm import sessionmaker

from .models import Base

DEFAULT_DB = "arena.sqlite"


def database_url(db):
    """A SQLAlchemy URL for ``--db``: a URL as it is, anything else a SQLite file's path."""
    if "://" in db:
        return db
    return "sqlite:///" + os.path.abspath(db)


def open_database(db=DEFAULT_DB):
    """``(engine, Session)`` for the database ``db`` (its tables created where missing)."""
    url = database_url(db)
    sqlite = url.startswith("sqlite")
    engine = create_engine(url, connect_args={"timeout": 30} if sqlite else {})
    if sqlite:
        _sqlite_transactions(engine)
    Base.metadata.create_all(engine)
    return engine, sessionmaker(engine, expire_on_commit=False)


def open_reader(engine):
    """``(engine, Session)`` for reads that never wait for a writer: on SQLite a second engine
    whose transactions begin deferred (with write-ahead logging a reader sees the last commit
    while a writer works; the writers' ``BEGIN IMMEDIATE`` would make a login check wait for
    another environment's request), elsewhere the same engine."""
    memory = engine.url.database in (None, "", ":memory:")  # a second engine: another database
    if engine.dialect.name != "sqlite" or memory:
        return engine, sessionmaker(engine, expire_on_commit=False)
    reader = create_engine(engine.url, connect_args={"timeout": 30})

    @event.listens_for(reader, "connect")
    def _connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(reader, "begin")
    def _begin(connection):
        connection.exec_driver_sql("BEGIN")

    return reader, sessionmaker(reader, expire_on_commit=False)


def _sqlite_transactions(engine):
    """SQLite as a server needs it: write-ahead logging (readers never wait for the writer), and
    each transaction taking the write lock when it begins, so two requests never both read and
    then fail to upgrade to writing."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None  # transactions begin where we say, below
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        # Commits reach the log without waiting for the disk: a killed server loses nothing it
        # acknowledged; only a power cut may lose the last commits.
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection):
        connection.exec_driver_sql("BEGIN IMMEDIATE")
