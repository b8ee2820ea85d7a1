"""The results store of a run: one SQLite row per design point, keyed by the point's content hash.

`<out>/points.sqlite` (the standard library's sqlite3, WAL mode): one database rather than a file per
point, which does not scale to 100,000 points (directory size, resume scans, re-reading for
reports). Each finished point is committed on its own, so an
interrupt loses nothing finished; WAL lets readers (a report, a test polling progress) read while
the run writes. Only the process that runs the experiment (the pool's or the Dask client's
parent) writes: workers return records and never open the database.

Schema: points(id TEXT PRIMARY KEY, status TEXT, record TEXT) where record is the JSON of the
point's results.json record (sorted keys).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

from accelsim.core.record import PointResult

STORE_FILE = "points.sqlite"
# Points that finished: ok, or infeasible (a result too: the same inputs give the same verdict); not errors.
_FINISHED = " WHERE status IN ('ok', 'infeasible')"
_SCHEMA = "CREATE TABLE IF NOT EXISTS points (id TEXT PRIMARY KEY, status TEXT NOT NULL, record TEXT NOT NULL)"


class ResultStore:
    """A run's design-point records in `<folder>/points.sqlite`; use as a context manager."""

    def __init__(self, folder: str | Path):
        self.path = Path(folder) / STORE_FILE
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: each statement commits by itself unless wrapped in BEGIN/COMMIT.
        self._db = sqlite3.connect(self.path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a commit survives the process being killed (only power loss can undo it).
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def put(self, record: PointResult) -> None:
        """Commit one point's record (replacing an earlier one of the same id)."""
        self.put_many([record])

    def put_many(self, records: Sequence[PointResult]) -> None:
        """Commit several records in one transaction (a batch that finished together)."""
        rows = [(r["id"], r["status"], json.dumps(r, sort_keys=True)) for r in records]
        with self._transaction():
            self._db.executemany("INSERT OR REPLACE INTO points (id, status, record) VALUES (?, ?, ?)", rows)

    def records(self, ids: Iterable[str], *, ok_only: bool = False) -> dict[str, PointResult]:
        """The stored records among `ids`, by id (with `ok_only`, only finished points: ok or infeasible)."""
        wanted = set(ids)
        query = "SELECT id, record FROM points" + (_FINISHED if ok_only else "")
        rows = self._db.execute(query).fetchall()
        return {i: json.loads(text) for i, text in rows if i in wanted}

    def ids(self, *, ok_only: bool = False, reason: str | None = None) -> set[str]:
        """Every stored point's id (with `ok_only`, of points that finished: ok or infeasible; with `reason`, of the
        infeasible ones for that reason, `accelsim.core.feasibility.REASONS`); no record is parsed."""
        if reason is not None:  # records are JSON with sorted keys and json.dumps' default separators
            query = "SELECT id FROM points WHERE status = 'infeasible' AND instr(record, ?) > 0"
            return {i for (i,) in self._db.execute(query, (json.dumps({"infeasible": reason})[1:-1],))}
        query = "SELECT id FROM points" + (_FINISHED if ok_only else "")
        return {i for (i,) in self._db.execute(query)}

    def delete(self, ids: Iterable[str]) -> None:
        """Remove the points `ids` (stale entries)."""
        with self._transaction():
            self._db.executemany("DELETE FROM points WHERE id = ?", [(i,) for i in ids])

    def _transaction(self):
        return _Transaction(self._db)


class _Transaction:
    """BEGIN ... COMMIT, or ROLLBACK when the block raises."""

    def __init__(self, db: sqlite3.Connection):
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN")

    def __exit__(self, exc_type, exc, tb) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")

