"""Routing a key of a sharded table to its partition and server, from the document
of the extension's ``routing_layout(parent)`` (docs/reference.md, "Routing layout").

>>> router = Router(layout_text)          # SELECT routing_layout('orders')  # doctest: +SKIP
>>> router.route(42)                                                          # doctest: +SKIP
Route(bucket=3, partition='public.orders_3', server=None, remote_table=None)

A key's bucket is the layout's hash function of the key, read as the layout's
``key_type`` says, exactly as the database computes it (the library's
:func:`jumpbackhash`, :func:`jumphash` and :class:`JumpBackAnchorHash`); its
partition, server and table there are the layout's entry for that bucket.
"""

from __future__ import annotations

import copy
import json
import re
import uuid
from typing import Any, NamedTuple, Optional, Union

from ._args import INT32_MAX
from ._errors import (KeyOutOfRangeError, KeySyntaxError, LayoutError, NoPartitionError,
                      SubsettingError)
from .anchor import JumpBackAnchorHash
from .hashing import jumpbackhash, jumphash

__all__ = ["Route", "Router"]

#: key_type -> (its range, for the integer types; how it is hashed)
_KEY_TYPES = {
    "smallint": ((-(2**15), 2**15 - 1), "value"),
    "integer": ((-(2**31), 2**31 - 1), "value"),
    "bigint": ((-(2**63), 2**63 - 1), "value"),
    "text": (None, "xxh3_64"),
    "bytea": (None, "xxh3_64"),
    "uuid": (None, "xxh3_64"),
}

#: method -> the name of the function that places a key
_METHODS = {
    "jumpbackhash": "jumpbackhash",
    "jumphash": "jumphash",
    "jumpbackanchorhash": "jumpbackanchorhash",
    "hash_operator_class": "jumpbackhash",
}

#: What each key type takes, for the messages of route().
_EXPECTED = {
    "smallint": "an int",
    "integer": "an int",
    "bigint": "an int",
    "text": "a str",
    "bytea": "a bytes, bytearray or memoryview",
    "uuid": "a uuid.UUID or a str in uuid text form",
}

_MEMBERS = ("table", "method", "hash_function", "key", "key_column", "key_type", "key_hash", "buckets",
            "removed", "partitions", "servers", "in_progress", "version")

# PostgreSQL's uuid input: 32 hexadecimal digits, a hyphen allowed after each group of four
# (but the last), all optionally in braces.
_UUID_DIGITS = r"[0-9a-fA-F]{4}(?:-?[0-9a-fA-F]{4}){7}"
_UUID_TEXT = re.compile(rf"(?:\{{{_UUID_DIGITS}\}}|{_UUID_DIGITS})\Z")
_VERSION = re.compile(r"[0-9a-f]{16}\Z")


class Route(NamedTuple):
    """Where a key goes: its bucket, the partition that holds the bucket (schema-qualified, as
    the layout names it), the server the partition is on (``None``: the database the layout was
    read from) and the table there (``None`` when the partition is not on a server)."""

    bucket: int
    partition: str
    server: Optional[str]
    remote_table: Optional[str]


def _bad(message: str) -> LayoutError:
    return LayoutError(f"Router(): invalid routing layout: {message}",
                       hint="Pass the document of SELECT routing_layout('table'), as text or parsed.")


def _show(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)[:60]
    except (TypeError, ValueError):
        return repr(value)[:60]


def _reject_constant(name: str) -> Any:
    raise _bad(f"{name} is not a JSON number")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d: dict[str, Any] = {}
    for k, v in pairs:
        if k in d:
            raise _bad(f'member "{k}" appears twice')
        d[k] = v
    return d


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value: Any, member: str, nullable: bool = False) -> Optional[str]:
    if value is None and nullable:
        return None
    if not isinstance(value, str):
        raise _bad(f"{member} must be a string{' or null' if nullable else ''}, got {_show(value)}")
    return value


def _bucket_list(value: Any, member: str) -> list[int]:
    if not isinstance(value, list) or not all(_is_int(b) for b in value):
        raise _bad(f"{member} must be a list of integers, got {_show(value)}")
    return list(value)


KeyValue = Union[int, str, bytes, bytearray, memoryview, uuid.UUID]


class Router:
    """The router of one table: built from the document of ``routing_layout(parent)``,
    as JSON text (``str`` or ``bytes``) or already parsed (a ``dict``, as psycopg returns
    a ``jsonb``), and validated; immutable. Build it once per version, route many keys.

    ``route(key)`` gives a key's :class:`Route`; ``version`` the document's version (reload the
    document when the database shows another); ``in_progress`` the operation that has not ended
    and ``through_coordinator(bucket)`` whether the keys of a bucket must meanwhile go through
    the database the layout was read from.
    """

    __slots__ = ("_table", "_method", "_key", "_key_column", "_key_type", "_range", "_buckets", "_removed",
                 "_anchor", "_routes", "_partitions", "_servers", "_in_progress", "_coordinator_buckets",
                 "_version")

    def __init__(self, layout: Union[str, bytes, bytearray, dict]) -> None:
        doc = self._parse(layout)
        for member in _MEMBERS:
            if member not in doc:
                raise _bad(f'member "{member}" is missing')
        self._table = _text(doc["table"], "table")
        method = _text(doc["method"], "method")
        if method not in _METHODS:
            raise _bad(f"unknown method {_show(method)} (known: {', '.join(_METHODS)})")
        self._method = method
        fn = _text(doc["hash_function"], "hash_function")
        if fn != _METHODS[method] and not fn.endswith("." + _METHODS[method]):
            raise _bad(f"hash_function {_show(fn)} is not the function of method {method} "
                       f"({_METHODS[method]})")
        self._key = _text(doc["key"], "key")
        self._key_column = _text(doc["key_column"], "key_column", nullable=True)
        key_type = _text(doc["key_type"], "key_type")
        if key_type not in _KEY_TYPES:
            raise _bad(f"unknown key_type {_show(key_type)} (known: {', '.join(_KEY_TYPES)})")
        if key_type in ("smallint", "integer") and method != "hash_operator_class":
            raise _bad(f"key_type {key_type} is only the type of an operator class, not of method {method}")
        self._key_type = key_type
        self._range, key_hash = _KEY_TYPES[key_type]
        if doc["key_hash"] != key_hash:
            raise _bad(f"key_hash of a {key_type} key must be {_show(key_hash)}, got {_show(doc['key_hash'])}")

        buckets = doc["buckets"]
        if not _is_int(buckets) or not 1 <= buckets <= INT32_MAX:
            raise _bad(f"buckets must be an integer between 1 and {INT32_MAX}, got {_show(buckets)}")
        self._buckets = buckets
        removed = _bucket_list(doc["removed"], "removed")
        if removed and method != "jumpbackanchorhash":
            raise _bad(f"removed must be empty for method {method}, got {_show(removed)}")
        self._removed = tuple(removed)
        self._anchor: Optional[JumpBackAnchorHash] = None
        if method == "jumpbackanchorhash":
            try:
                self._anchor = JumpBackAnchorHash(buckets, removed)
            except SubsettingError as e:
                raise _bad(f"removed: {e.message}") from None

        partitions = doc["partitions"]
        if not isinstance(partitions, list):
            raise _bad(f"partitions must be a list, got {_show(partitions)}")
        routes: dict[int, Route] = {}
        entries: list[Route] = []
        for i, p in enumerate(partitions):
            where = f"partitions[{i}]"
            if not isinstance(p, dict):
                raise _bad(f"{where} must be an object, got {_show(p)}")
            for member in ("bucket", "partition", "server", "remote_table"):
                if member not in p:
                    raise _bad(f'{where}: member "{member}" is missing')
            b = p["bucket"]
            if b is not None:
                if not _is_int(b):
                    raise _bad(f"{where}.bucket must be an integer or null, got {_show(b)}")
                if not 0 <= b < buckets or b in self._removed:
                    raise _bad(f"{where}.bucket {b} is not a bucket of the layout "
                               f"({buckets} buckets{', removed ' + str(removed) if removed else ''})")
                if b in routes:
                    raise _bad(f"bucket {b} is held by two partitions, {routes[b].partition} and "
                               f"{_show(p['partition'])}")
            route = Route(b, _text(p["partition"], where + ".partition"),
                          _text(p["server"], where + ".server", nullable=True),
                          _text(p["remote_table"], where + ".remote_table", nullable=True))
            entries.append(route)
            if b is not None:
                routes[b] = route
        self._routes = routes
        self._partitions = tuple(entries)

        servers = doc["servers"]
        if not isinstance(servers, dict) or not all(
                isinstance(o, dict) and all(isinstance(v, str) for v in o.values()) for o in servers.values()):
            raise _bad(f"servers must be an object of objects of strings, got {_show(servers)}")
        self._servers = copy.deepcopy(servers)

        progress = doc["in_progress"]
        self._coordinator_buckets: Optional[frozenset[int]] = frozenset()
        if progress is not None:
            if not isinstance(progress, dict):
                raise _bad(f"in_progress must be an object or null, got {_show(progress)}")
            for member in ("operation", "phase", "interrupted", "buckets"):
                if member not in progress:
                    raise _bad(f'in_progress: member "{member}" is missing')
            _text(progress["operation"], "in_progress.operation")
            _text(progress["phase"], "in_progress.phase")
            if progress["interrupted"] is not None and not isinstance(progress["interrupted"], bool):
                raise _bad(f"in_progress.interrupted must be true, false or null, got {_show(progress['interrupted'])}")
            if progress["buckets"] is None:
                self._coordinator_buckets = None        # every bucket
            else:
                self._coordinator_buckets = frozenset(_bucket_list(progress["buckets"], "in_progress.buckets"))
            progress = copy.deepcopy(progress)
        self._in_progress = progress

        version = doc["version"]
        if not isinstance(version, str) or not _VERSION.match(version):
            raise _bad(f"version must be 16 hexadecimal digits, got {_show(version)}")
        self._version = version

    @staticmethod
    def _parse(layout: Any) -> dict:
        if isinstance(layout, (bytes, bytearray, memoryview)):
            try:
                layout = bytes(layout).decode("utf-8")
            except UnicodeDecodeError as e:
                raise _bad(f"the text is not UTF-8 ({e.reason} at byte {e.start})") from None
        if isinstance(layout, str):
            try:
                layout = json.loads(layout, object_pairs_hook=_pairs, parse_constant=_reject_constant)
            except json.JSONDecodeError as e:
                raise _bad(f"{e.msg} at character {e.pos + 1}") from None
            except RecursionError:
                raise _bad("nested too deeply") from None
        elif not isinstance(layout, dict):
            raise TypeError("Router() takes the document of routing_layout() as a str, bytes or dict, "
                            f"got {type(layout).__name__}")
        if not isinstance(layout, dict):
            raise _bad(f"a layout is a JSON object, got {_show(layout)}")
        return layout

    # ---- what the layout says ----

    @property
    def table(self) -> str:
        """The table, schema-qualified."""
        return self._table

    @property
    def method(self) -> str:
        """``jumpbackhash``, ``jumphash``, ``jumpbackanchorhash`` or ``hash_operator_class``."""
        return self._method

    @property
    def key(self) -> str:
        """The partition key's expression (the application computes an expression itself)."""
        return self._key

    @property
    def key_column(self) -> Optional[str]:
        """The column the partition key is, or ``None`` when it is an expression."""
        return self._key_column

    @property
    def key_type(self) -> str:
        """What :meth:`route` takes the key as: ``smallint``, ``integer``, ``bigint``, ``text``,
        ``bytea`` or ``uuid``."""
        return self._key_type

    @property
    def buckets(self) -> int:
        """The bucket count."""
        return self._buckets

    @property
    def removed(self) -> tuple[int, ...]:
        """The removed buckets (``jumpbackanchorhash``), oldest first."""
        return self._removed

    @property
    def partitions(self) -> tuple[Route, ...]:
        """Every partition of the layout as a :class:`Route` (``bucket`` ``None``: its bound is not
        one bucket of the layout)."""
        return self._partitions

    @property
    def servers(self) -> dict[str, dict[str, str]]:
        """Per server that holds a partition, its connection options (a copy)."""
        return copy.deepcopy(self._servers)

    @property
    def in_progress(self) -> Optional[dict[str, Any]]:
        """``None``, or the operation that has not ended (a copy): ``operation``, ``phase``,
        ``interrupted`` and ``buckets`` (``None``: every bucket)."""
        return copy.deepcopy(self._in_progress)

    @property
    def version(self) -> str:
        """The document's version: reload the layout and build a new Router when it changes."""
        return self._version

    def through_coordinator(self, bucket: Union[int, Route]) -> bool:
        """Whether the keys of ``bucket`` (or of a :class:`Route`'s bucket) must go through the
        database the layout was read from, reads and writes, until the version changes: while
        ``in_progress`` names the bucket (its ``buckets`` ``None``: every bucket)."""
        b = bucket.bucket if isinstance(bucket, Route) else bucket
        if not _is_int(b):
            raise TypeError(f"Router.through_coordinator() takes a bucket (an int) or a Route, "
                            f"got {type(bucket).__name__}")
        if self._coordinator_buckets is None:
            return True
        return b in self._coordinator_buckets

    # ---- routing ----

    def _type_message(self, key: Any) -> str:
        t = self._key_type
        return (f"Router.route(): a key of {self._table} (key_type {t}) must be {_EXPECTED[t]}, "
                f"got {type(key).__name__} {key!r:.60}")

    def _key_value(self, key: Any) -> Union[int, bytes, uuid.UUID]:
        t = self._key_type
        if self._range is not None:
            if not _is_int(key):
                raise TypeError(self._type_message(key))
            lo, hi = self._range
            if key < lo or key > hi:
                raise KeyOutOfRangeError(
                    f"Router.route(): key {key} is out of range for type {t} ({lo} to {hi})")
            return key
        if t == "text":
            if not isinstance(key, str):
                raise TypeError(self._type_message(key))
            try:
                return key.encode("utf-8")
            except UnicodeEncodeError as e:
                raise SubsettingError(
                    f"Router.route(): text key {key!r:.60} is not valid Unicode text: {e.reason} "
                    f"at position {e.start}") from None
        if t == "bytea":
            if not isinstance(key, (bytes, bytearray, memoryview)):
                raise TypeError(self._type_message(key))
            return bytes(key)
        # uuid: its 16 bytes, never its text
        if isinstance(key, uuid.UUID):
            return key
        if isinstance(key, str):
            if not _UUID_TEXT.match(key):
                raise KeySyntaxError(f"Router.route(): invalid input syntax for type uuid: {key!r:.60}")
            return uuid.UUID(hex=key.replace("-", "").strip("{}"))
        raise TypeError(self._type_message(key))

    def bucket(self, key: KeyValue) -> int:
        """The bucket of a key (read as :meth:`route` reads it), as the database computes it."""
        k = self._key_value(key)
        if self._anchor is not None:
            return self._anchor.bucket(k)
        if self._method == "jumphash":
            return jumphash(k, self._buckets)
        return jumpbackhash(k, self._buckets)

    def route(self, key: KeyValue) -> Route:
        """The :class:`Route` of a key: its bucket and the partition, server and table there that
        hold the bucket.

        The key is read as the layout's ``key_type``: an ``int`` for ``smallint``, ``integer`` and
        ``bigint`` (out of the type's range: :class:`KeyOutOfRangeError`, 22003), a ``str`` for
        ``text`` (hashed as UTF-8), ``bytes``-like for ``bytea``, a :class:`uuid.UUID` or a ``str`` in
        uuid text form for ``uuid`` (hashed as its 16 bytes; malformed: :class:`KeySyntaxError`,
        22P02); another type raises ``TypeError``. A bucket no partition of the layout holds
        raises :class:`NoPartitionError` (23514), as the database refuses such a row.
        """
        b = self.bucket(key)
        r = self._routes.get(b)
        if r is None:
            raise NoPartitionError(
                f"Router.route(): the key's bucket {b} is held by no partition of table {self._table}",
                detail=f"The layout (version {self._version}) has no partition for bucket {b}; "
                       "the database refuses such a row too.",
                hint="Reload the layout if the table has changed: SELECT routing_layout('table').")
        return r

    def __repr__(self) -> str:
        return (f"<Router of {self._table}: {self._method}, {self._key_type} key, {self._buckets} buckets, "
                f"{len(self._partitions)} partitions, version {self._version}>")
