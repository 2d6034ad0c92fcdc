"""Partition ring lookups on a ring read from the extension's text form
(the output of the ``partition_ring`` type: ``SELECT ring::text``).

A key's partition is the top ``part_power`` bits of its 64-bit key hash: an
int key is taken as it is (already hashed: hash integer ids with
:func:`subsetting.xxh3_64` first), a text, bytes or UUID key by its XXH3-64,
exactly as ``ring_partition`` and ``ring_nodes`` do in SQL.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import operator
from dataclasses import dataclass
from typing import Any

from ._args import INT32_MAX, INT32_MIN, INT64_MIN, Key, check_int
from ._errors import RingFormatError, SubsettingError
from .hashing import key_hash

__all__ = ["RingNode", "PartitionRing", "ring_partition", "ring_nodes", "ring_partition_nodes",
           "ring_handoff_nodes", "ring_partition_handoff_nodes", "MAX_NODES"]

MIN_PART_POWER = 1
MAX_PART_POWER = 24
#: The most nodes a ring may have.
MAX_NODES = 65535
MAX_SLOTS = 1 << 26


@dataclass(frozen=True)
class RingNode:
    """A node of a ring: its id, zone, region and weight."""

    id: int
    zone: int
    region: int
    weight: float


def _invalid(message: str, **kw: Any) -> RingFormatError:
    return RingFormatError("invalid ring: " + message, **kw)


def _reject_constant(name: str) -> float:
    raise _invalid(f"{name} is not a JSON number")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d: dict[str, Any] = {}
    for k, v in pairs:
        if k in d:
            raise _invalid(f'key "{k}" appears twice')
        d[k] = v
    return d


def _integer(value: Any, field: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid(f"{field} must be an integer, got {json.dumps(value)[:40]}")
    if value < lo or value > hi:
        raise _invalid(f"{field} {value} is out of range ({lo} to {hi})")
    return value


class PartitionRing:
    """A partition ring: 2^part_power partitions, each with ``replicas`` node ids, primary first.

    Read one with :meth:`from_text` from ``SELECT ring::text`` and keep it: parsing
    costs about a tenth of a second per million assignment entries, lookups microseconds.
    """

    def __init__(self, part_power: int, replicas: int, seed: int, nodes: list[RingNode],
                 assignment: list[list[int]]) -> None:
        """A ring from its parts (``assignment[r][x]``: the node id of replica r of partition x),
        validated as the extension validates a ring value."""
        if not isinstance(nodes, list) or not all(isinstance(n, RingNode) for n in nodes):
            raise TypeError("nodes must be a list of RingNode")
        pp, reps = part_power, replicas
        if pp < MIN_PART_POWER or pp > MAX_PART_POWER:
            raise _invalid(f"part power must be between {MIN_PART_POWER} and {MAX_PART_POWER}, got {pp}")
        if reps < 1:
            raise _invalid(f"replicas must be at least 1, got {reps}")
        if not nodes:
            raise _invalid("a ring needs at least one node")
        if len(nodes) > MAX_NODES:
            raise _invalid(f"{len(nodes)} nodes exceed the limit of {MAX_NODES}")
        if reps > (MAX_SLOTS >> pp):
            raise _invalid(f"{reps} replicas of 2^{pp} partitions exceed the limit of {MAX_SLOTS} slots")
        parts = 1 << pp
        if (not isinstance(assignment, list) or len(assignment) != reps
                or any(not isinstance(row, list) or len(row) != parts for row in assignment)):
            rows = len(assignment) if isinstance(assignment, list) else 0
            raise _invalid(f"the assignment must have {reps} rows (replicas) of {parts} node ids "
                           f"(2^part_power), got {rows} rows")
        nodes = sorted(nodes, key=lambda n: n.id)
        positive = 0
        for i, n in enumerate(nodes):
            if i and nodes[i - 1].id == n.id:
                raise _invalid(f"node id {n.id} appears twice")
            w = n.weight
            if math.isnan(w):
                raise _invalid(f"weight of node {n.id} is NaN")
            if math.isinf(w):
                raise _invalid(f"weight of node {n.id} is infinite")
            if w < 0:
                raise _invalid(f"weight of node {n.id} is negative: {w}")
            if w > 0:
                positive += 1
        if positive == 0:
            raise _invalid("all weights are zero")
        if reps > positive:
            raise _invalid(f"{reps} replicas need at least {reps} nodes of positive weight, got {positive}")
        index = {n.id: i for i, n in enumerate(nodes)}
        ids = [n.id for n in nodes]
        rows = _index_rows(assignment, index, reps)
        if rows is None:        # entry by entry: the first bad one raises the extension's error
            rows = _index_rows_slowly(assignment, index, ids, reps, parts)
        self.part_power = pp
        self.replicas = reps
        self.seed = seed
        self.nodes: tuple[RingNode, ...] = tuple(nodes)
        self._ids = ids
        self._rows = rows       # _rows[r][x]: the node index of replica r of partition x (primary: r = 0)
        # failure domains: a zone is a (region, zone) pair
        self._zone_of = [(n.region, n.zone) for n in nodes]
        self._region_of = [n.region for n in nodes]
        # The handoff passes stop when every region (zone, node) of the assignment is used: the
        # extension stops when every one of the node table is, but a node of no partition
        # (weight 0) is never found, so both give the same nodes; this walks less.
        present = set().union(*rows)
        self._node_count_present = len(present)
        self._zone_count = len({self._zone_of[i] for i in present})
        self._region_count = len({self._region_of[i] for i in present})

    @classmethod
    def from_text(cls, text: str | bytes) -> "PartitionRing":
        """The ring of the extension's text form (JSON), validated as ``'...'::partition_ring`` is."""
        if isinstance(text, (bytes, bytearray)):
            text = text.decode("utf-8")
        if not isinstance(text, str):
            raise TypeError(f"ring text must be a str, got {type(text).__name__}")
        try:
            obj = json.loads(text, object_pairs_hook=_pairs, parse_constant=_reject_constant)
        except json.JSONDecodeError as e:
            raise _invalid(f"{e.msg} at character {e.pos + 1}") from None
        if not isinstance(obj, dict):
            raise _invalid("a ring is a JSON object")
        unknown = set(obj) - {"part_power", "replicas", "seed", "nodes", "assignment"}
        if unknown:
            raise _invalid(f'unknown key "{sorted(unknown)[0]}"')
        missing = {"part_power", "replicas", "nodes", "assignment"} - set(obj)
        if missing:
            raise _invalid(f'key "{sorted(missing)[0]}" is missing',
                           detail='A ring has the keys "part_power", "replicas", "nodes" and "assignment".')
        pp = _integer(obj["part_power"], "part_power", 0, INT32_MAX)
        reps = _integer(obj["replicas"], "replicas", 0, INT32_MAX)
        seed = _integer(obj.get("seed", 0), "seed", INT64_MIN, 2**63 - 1)
        if not isinstance(obj["nodes"], list):
            raise _invalid('"nodes" must be an array')
        nodes = []
        for nd in obj["nodes"]:
            if not isinstance(nd, dict):
                raise _invalid("a node must be an object")
            bad = set(nd) - {"id", "zone", "region", "weight"}
            if bad:
                raise _invalid(f'unknown key "{sorted(bad)[0]}" in a node')
            if not {"id", "zone", "weight"} <= set(nd):
                raise _invalid('a node needs "id", "zone" and "weight"')
            w = nd["weight"]
            if isinstance(w, bool) or not isinstance(w, (int, float)):
                raise _invalid(f"weight must be a number, got {json.dumps(w)[:40]}")
            nodes.append(RingNode(_integer(nd["id"], "node id", INT32_MIN, INT32_MAX),
                                  _integer(nd["zone"], "zone", INT32_MIN, INT32_MAX),
                                  _integer(nd.get("region", 0), "region", INT32_MIN, INT32_MAX),
                                  float(w) if w != 0 else 0.0))    # "-0" reads as zero
        assignment = obj["assignment"]
        if not isinstance(assignment, list):
            raise _invalid('"assignment" must be an array of arrays')
        return cls(pp, reps, seed, nodes, assignment)

    def __repr__(self) -> str:
        return (f"<PartitionRing part_power={self.part_power} replicas={self.replicas} "
                f"nodes={len(self.nodes)}>")

    @property
    def partitions(self) -> int:
        """The number of partitions, 2^part_power."""
        return 1 << self.part_power

    def partition(self, key: Key) -> int:
        """The partition of a key, as ``ring_partition(ring, key)``."""
        return key_hash(key) >> (64 - self.part_power)

    def nodes_of(self, key: Key) -> list[int]:
        """The node ids of a key's replicas, primary first, as ``ring_nodes(ring, key)``."""
        x = self.partition(key)
        ids = self._ids
        return [ids[row[x]] for row in self._rows]

    def _check_partition(self, partition: object) -> int:
        x = check_int(partition, "partition")
        if x < 0 or x >= self.partitions:
            raise SubsettingError(f"partition must be between 0 and {self.partitions - 1}, got {x}")
        return x

    def partition_nodes(self, partition: int) -> list[int]:
        """The node ids of a partition's replicas, primary first, as ``ring_partition_nodes``."""
        x = self._check_partition(partition)
        ids = self._ids
        return [ids[row[x]] for row in self._rows]

    def handoff_nodes(self, key: Key, count: int = 3) -> list[int]:
        """The first ``count`` handoff nodes of a key's partition, as ``ring_handoff_nodes(ring, key, count)``."""
        x = self.partition(key)
        return self._handoff(x, _check_count(count))

    def partition_handoff_nodes(self, partition: int, count: int = 3) -> list[int]:
        """The first ``count`` handoff nodes of a partition, as ``ring_partition_handoff_nodes``."""
        c = _check_count(count)
        return self._handoff(self._check_partition(partition), c)

    def _handoff(self, partition: int, count: int) -> list[int]:
        """Swift's ``Ring.get_more_nodes``: nodes in new regions, then new zones, then any node."""
        count = min(count, len(self.nodes))
        parts = self.partitions
        inc = parts // 65536 if parts > 65536 else 1
        start = _handoff_start(self.part_power, partition)
        zone_of, region_of = self._zone_of, self._region_of
        used: set[int] = set()
        used_zones: set[tuple[int, int]] = set()
        used_regions: set[int] = set()
        rows = self._rows
        for row in rows:
            node = row[partition]
            used.add(node)
            used_zones.add(zone_of[node])
            used_regions.add(region_of[node])
        out: list[int] = []
        if count == 0:
            return out
        totals = (self._region_count, self._zone_count, self._node_count_present)
        ids = self._ids
        for p in range(3):
            # the pass ends when every region (zone, node) is used: no node is left to find
            used_set = (used_regions, used_zones, used)[p]
            total = totals[p]
            if len(used_set) == total:
                continue
            # Swift's walk: range(start, parts, inc), then range(inc - ((parts - start) % inc), start, inc)
            for hp in itertools.chain(range(start, parts, inc),
                                      range(inc - ((parts - start) % inc), start, inc)):
                for row in rows:
                    node = row[hp]
                    if node in used:
                        continue
                    if p == 0 and region_of[node] in used_regions:
                        continue
                    if p == 1 and zone_of[node] in used_zones:
                        continue
                    out.append(ids[node])
                    used.add(node)
                    if p <= 1:
                        used_zones.add(zone_of[node])
                    if p == 0:
                        used_regions.add(region_of[node])
                    if len(out) == count:
                        return out
                    if len(used_set) == total:
                        break
                if len(used_set) == total:
                    break
        return out


def _index_rows(assignment: list[list[int]], index: dict[int, int], reps: int) -> list[list[int]] | None:
    """The assignment's rows as node indexes, or None if an entry is not an int of the nodes' ids (or
    is of a subclass of int) or a partition has two replicas on one node.  Each row in a few passes of C
    loops (map): a ring of 2^20 partitions is checked in about a tenth of a second, where a Python loop
    over its entries took seconds."""
    rows = []
    for row in assignment:
        if not set(map(type, row)) <= {int}:        # bool and float ids are not ids (True == 1 == 1.0)
            return None
        try:
            rows.append(list(map(index.__getitem__, row)))
        except KeyError:
            return None
    for r in range(reps):
        for r2 in range(r + 1, reps):
            if any(map(operator.eq, rows[r], rows[r2])):
                return None
    return rows


def _index_rows_slowly(assignment: list[list[int]], index: dict[int, int], ids: list[int], reps: int,
                       parts: int) -> list[list[int]]:
    """The rows as node indexes, partition by partition: the first bad entry raises its error."""
    rows: list[list[int]] = [[] for _ in range(reps)]
    for x in range(parts):
        row = []
        for r in range(reps):
            node_id = assignment[r][x]
            i = index.get(node_id) if isinstance(node_id, int) and not isinstance(node_id, bool) else None
            if i is None:
                raise _invalid(f"replica {r} of partition {x} is on node {node_id!r}, "
                               f"which is not in the nodes")
            row.append(i)
        if len(set(row)) != reps:
            dup = next(ids[i] for i in row if row.count(i) > 1)
            raise _invalid(f"partition {x} has two replicas on node {dup}")
        for r in range(reps):
            rows[r].append(row[r])
    return rows


def _check_count(count: object) -> int:
    c = check_int(count, "count")
    if c < 0 or c > MAX_NODES:
        raise SubsettingError(f"count must be between 0 and {MAX_NODES}, got {c}",
                              detail=f"A ring has at most {MAX_NODES} nodes.")
    return c


def _handoff_start(part_power: int, partition: int) -> int:
    digest = hashlib.md5(str(partition).encode("ascii"), usedforsecurity=False).digest()
    return int.from_bytes(digest[:4], "big") >> (32 - part_power)


def _ring(ring: object) -> PartitionRing:
    if not isinstance(ring, PartitionRing):
        raise TypeError(f"ring must be a PartitionRing (read it once with PartitionRing.from_text), "
                        f"got {type(ring).__name__}")
    return ring


def ring_partition(ring: PartitionRing, key: Key) -> int:
    """The partition of a key, as ``ring_partition(ring, key)``."""
    return _ring(ring).partition(key)


def ring_nodes(ring: PartitionRing, key: Key) -> list[int]:
    """The node ids of a key's replicas, primary first, as ``ring_nodes(ring, key)``."""
    return _ring(ring).nodes_of(key)


def ring_partition_nodes(ring: PartitionRing, partition: int) -> list[int]:
    """The node ids of a partition's replicas, as ``ring_partition_nodes(ring, partition)``."""
    return _ring(ring).partition_nodes(partition)


def ring_handoff_nodes(ring: PartitionRing, key: Key, count: int = 3) -> list[int]:
    """The handoff nodes of a key, as ``ring_handoff_nodes(ring, key, count)``."""
    return _ring(ring).handoff_nodes(key, count)


def ring_partition_handoff_nodes(ring: PartitionRing, partition: int, count: int = 3) -> list[int]:
    """The handoff nodes of a partition, as ``ring_partition_handoff_nodes(ring, partition, count)``."""
    return _ring(ring).partition_handoff_nodes(partition, count)
