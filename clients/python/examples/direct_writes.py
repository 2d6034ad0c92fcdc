#!/usr/bin/python3
"""clients/python/examples/direct_writes.py: an application that writes each key straight to its server.

    direct_writes.py COORDINATOR_CONNINFO TABLE USER STOP_FILE

Inserts the rows (id, 'direct') for id = 1, 2, ... into TABLE (a table partitioned by the extension on a bigint
key, its partitions here or moved to postgres_fdw servers), each straight into its partition's table on the server
that holds it, as routing_layout(TABLE) says, and reads it back the same way, until STOP_FILE exists; connects to
the servers as USER. Prints each id once its insert has committed ("# read back ID: [...]" if the read did not find
it once), and at the end a line "# direct N, coordinator N, stale routes N, reloads N; reader: ..." (the same counts of
a second reader, below).

A write to a table that is no longer its key's, or not yet, fails: the table of a partition that moves refuses
direct writes (55006, object_in_use) and the one it left is dropped at the end (42P01, undefined_table). The writer
then reloads the layout and writes again, by the new route; while the layout says the key's bucket is being moved,
through the coordinator (the partitioned table), which always puts a row where it belongs. So each row is written
once, and where the database would put it. A second reader, with its own layout, reloaded only when a server says its
route is stale, reads each row too ("# reader read back ID: [...]" if it did not find it once): a move renames the
table it leaves away at its cutover, so a read by a route older than the move fails (42P01) rather than finding the
rows as they were then. docs/scaling-out.md, "Routing keys in the application".
"""

import os
import sys

import psycopg
from psycopg import sql

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "src"))
from subsetting import Router  # noqa: E402

#: What a server answers a write by a route that is no longer right.
STALE_ROUTE = {"55006", "42P01"}


class DirectWriter:
    """Writes rows of a table straight to the server of their key, by its routing layout."""

    def __init__(self, coordinator_conninfo: str, table: str, user: str) -> None:
        self.coordinator = psycopg.connect(coordinator_conninfo, autocommit=True)
        self.table = table
        self.user = user
        self.servers: dict[str, psycopg.Connection] = {}
        self.counts = {"direct": 0, "coordinator": 0, "stale routes": 0, "reloads": 0}
        self.reload()

    def reload(self) -> None:
        """The table's current routing layout."""
        layout = self.coordinator.execute("SELECT routing_layout(%s::regclass)::text", (self.table,)).fetchone()[0]
        self.router = Router(layout)
        self.counts["reloads"] += 1

    def target(self, key: int) -> tuple[psycopg.Connection, sql.Composable, str]:
        """The connection and table a row of key is written to, and which of the two ways that is."""
        route = self.router.route(key)
        if route.server is None or self.router.through_coordinator(route):
            return self.coordinator, sql.SQL(self.table), "coordinator"
        connection = self.servers.get(route.server)
        if connection is None:
            options = self.router.servers[route.server]
            connection = psycopg.connect(**options, user=self.user, autocommit=True)
            self.servers[route.server] = connection
        # (remote_table is schema-qualified and quoted as an identifier already)
        return connection, sql.SQL(route.remote_table), "direct"

    def by_route(self, key: int, statement: str, params: tuple) -> tuple[psycopg.Cursor, str]:
        """Runs statement ({}: the table) on key's route, by a new route after each stale one; its cursor and
        which way it went."""
        while True:
            connection, table, way = self.target(key)
            try:
                return connection.execute(sql.SQL(statement).format(table), params), way
            except psycopg.Error as error:
                if error.sqlstate not in STALE_ROUTE:
                    raise
                self.counts["stale routes"] += 1
                self.reload()

    def insert(self, key: int, value: str) -> None:
        """Inserts (key, value)."""
        _, way = self.by_route(key, "INSERT INTO {} VALUES (%s, %s)", (key, value))
        self.counts[way] += 1

    def values(self, key: int) -> list[str]:
        """The values of key's rows."""
        cursor, _ = self.by_route(key, "SELECT v FROM {} WHERE id = %s", (key,))
        return [v for (v,) in cursor.fetchall()]


def main() -> None:
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    conninfo, table, user, stop_file = sys.argv[1:]
    writer = DirectWriter(conninfo, table, user)
    reader = DirectWriter(conninfo, table, user)
    key = 0
    while not os.path.exists(stop_file):
        key += 1
        writer.insert(key, "direct")
        print(key, flush=True)
        # (read back by its route, and by the reader's: the row, once)
        if writer.values(key) != ["direct"]:
            print(f"# read back {key}: {writer.values(key)}", flush=True)
        if reader.values(key) != ["direct"]:
            print(f"# reader read back {key}: {reader.values(key)}", flush=True)
    print("# " + ", ".join(f"{what} {n}" for what, n in writer.counts.items())
          + "; reader: " + ", ".join(f"{what} {n}" for what, n in reader.counts.items()), flush=True)


if __name__ == "__main__":
    main()
