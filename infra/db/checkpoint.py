"""WAL checkpoints for the SQLite default, off the request path.

With transactions run on the event loop (single-process SQLite), SQLite's
automatic checkpoint (every ~1000 pages, with an fsync of the database file)
would stall every request for tens of milliseconds. Connections turn it off
and this thread checkpoints (PASSIVE: it never waits for writers) instead."""

from __future__ import annotations

import logging
import sqlite3
import threading

log = logging.getLogger("mmk.db")
INTERVAL_S = 1.0


class Checkpointer:
    """A daemon thread that checkpoints ``path``'s WAL every ``interval`` seconds."""

    def __init__(self, path: str, interval: float = INTERVAL_S) -> None:
        self._path, self._interval = path, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sqlite-checkpoint", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        conn = sqlite3.connect(self._path, timeout=5, check_same_thread=False)
        try:
            while not self._stop.wait(self._interval):
                self._checkpoint(conn, "PASSIVE")
            self._checkpoint(conn, "TRUNCATE")
        finally:
            conn.close()

    def _checkpoint(self, conn: sqlite3.Connection, mode: str) -> None:
        try:
            conn.execute(f"PRAGMA wal_checkpoint({mode})").fetchall()
        except sqlite3.Error as e:  # busy or locked: the next round tries again
            log.debug("checkpoint (%s) skipped: %s", mode, e)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)
