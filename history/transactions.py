"""Transactions that hold schema changes (DDL) on every backend."""

from __future__ import annotations

from sqlalchemy import Connection


def begin_writing(conn: Connection) -> None:
    """Call first in an ``engine.begin()`` block that changes the schema. pysqlite begins
    a transaction only before INSERT, UPDATE or DELETE, so on SQLite a CREATE or ALTER
    would commit on its own, whatever happens after it; this begins the transaction at
    once and takes the write lock, so that the block commits whole or not at all and
    writers wait for each other. PostgreSQL's DDL is transactional already."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN IMMEDIATE")
