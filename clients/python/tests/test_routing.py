"""Unit tests of the router (subsetting.Router, from routing_layout(parent)).

The documents and the routes marked "extension" were computed by the extension
itself (subsetting 1.2 on PostgreSQL 18: routing_layout, jumpbackhash and
jumpbackanchorhash in psql), once, when these tests were written; the routes of
random keys on tables of every method and key type are checked against where
the database puts rows by test/check-clients ("route").
"""

import copy
import json
import os
import sys
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import subsetting as S  # noqa: E402
from subsetting import (KeyOutOfRangeError, KeySyntaxError, LayoutError, NoPartitionError, Route,  # noqa: E402
                        Router, SubsettingError)

# extension: CREATE TABLE orders (id bigint) PARTITION BY HASH (id jumpbackhash4_int8_ops), 4 partitions;
# SELECT routing_layout('orders')::text
ORDERS = ('{"key": "id", "table": "public.orders", "method": "hash_operator_class", "buckets": 4, "removed": [], '
          '"servers": {}, "version": "df10b318e3494e63", "key_hash": "value", "key_type": "bigint", '
          '"key_column": "id", "partitions": [{"bucket": 0, "server": null, "partition": "public.orders_0", '
          '"remote_table": null}, {"bucket": 1, "server": null, "partition": "public.orders_1", "remote_table": '
          'null}, {"bucket": 2, "server": null, "partition": "public.orders_2", "remote_table": null}, {"bucket": '
          '3, "server": null, "partition": "public.orders_3", "remote_table": null}], "in_progress": null, '
          '"hash_function": "public.jumpbackhash"}')

# extension: CREATE TABLE by_uuid (u uuid) PARTITION BY LIST (jumpbackanchorhash(u, 5, '{1,3}')),
# partitions of buckets 0 and 2 only (none of bucket 4)
BY_UUID = ('{"key": "u", "table": "public.by_uuid", "method": "jumpbackanchorhash", "buckets": 5, "removed": '
           '[1, 3], "servers": {}, "version": "a9caebd77913a465", "key_hash": "xxh3_64", "key_type": "uuid", '
           '"key_column": "u", "partitions": [{"bucket": 0, "server": null, "partition": "public.by_uuid_0", '
           '"remote_table": null}, {"bucket": 2, "server": null, "partition": "public.by_uuid_2", '
           '"remote_table": null}], "in_progress": null, "hash_function": "public.jumpbackanchorhash"}')


def doc(text=ORDERS, **changes):
    """A layout document (a dict) with members changed (None-valued keys in `drop` removed)."""
    d = json.loads(text)
    for k, v in changes.items():
        d[k] = v
    return d


def without(d, member):
    d = copy.deepcopy(d)
    del d[member]
    return d


def moving(text=ORDERS, buckets=(1,), operation="move"):
    """ORDERS with partition 1 on a server and an operation in progress."""
    d = doc(text)
    d["partitions"][1].update(server="shard_a", remote_table="public.orders_1")
    d["servers"] = {"shard_a": {"host": "10.0.0.5", "port": "5432", "dbname": "shards"}}
    d["in_progress"] = {"operation": operation, "phase": "copy", "interrupted": False,
                        "buckets": None if buckets is None else list(buckets)}
    d["version"] = "0123456789abcdef"
    return d


class RouterStructureTest(unittest.TestCase):
    def test_members(self):
        r = Router(ORDERS)
        self.assertEqual((r.table, r.method, r.key, r.key_column, r.key_type, r.buckets, r.removed),
                         ("public.orders", "hash_operator_class", "id", "id", "bigint", 4, ()))
        self.assertEqual(r.version, "df10b318e3494e63")
        self.assertIsNone(r.in_progress)
        self.assertEqual(r.servers, {})
        self.assertEqual([p.partition for p in r.partitions], [f"public.orders_{b}" for b in range(4)])
        u = Router(BY_UUID)
        self.assertEqual((u.method, u.key_type, u.buckets, u.removed), ("jumpbackanchorhash", "uuid", 5, (1, 3)))

    def test_text_bytes_and_dict_alike(self):
        for layout in (ORDERS, ORDERS.encode(), bytearray(ORDERS.encode()), json.loads(ORDERS)):
            r = Router(layout)
            self.assertEqual(r.version, "df10b318e3494e63")
            self.assertEqual(r.route(42), Route(3, "public.orders_3", None, None))

    def test_route_is_an_immutable_tuple(self):
        route = Router(ORDERS).route(42)
        self.assertIsInstance(route, tuple)
        self.assertEqual(route._asdict(), {"bucket": 3, "partition": "public.orders_3", "server": None,
                                           "remote_table": None})
        with self.assertRaises(AttributeError):
            route.bucket = 1

    def test_router_is_immutable(self):
        d = moving()
        r = Router(d)
        with self.assertRaises(AttributeError):
            r.version = "x"
        with self.assertRaises(AttributeError):
            r.anything = 1
        r.in_progress["buckets"].append(2)
        r.servers["shard_a"]["host"] = "elsewhere"
        d["partitions"][1]["server"] = "changed after"
        d["in_progress"]["buckets"].append(3)
        self.assertEqual(r.in_progress["buckets"], [1])
        self.assertEqual(r.servers["shard_a"]["host"], "10.0.0.5")
        self.assertEqual(r.route(1).server, "shard_a")
        self.assertFalse(r.through_coordinator(3))

    def test_unknown_members_are_ignored(self):
        self.assertEqual(Router(doc(comment="a member of a later release")).route(42).bucket, 3)

    def test_repr(self):
        self.assertIn("public.orders", repr(Router(ORDERS)))


class RouteTest(unittest.TestCase):
    def test_extension_values(self):
        r = Router(ORDERS)
        # extension: SELECT k, jumpbackhash(k, 4) (and each key inserted into orders)
        for key, bucket in [(42, 3), (0, 3), (-1, 2), (2**63 - 1, 3), (-2**63, 1), (1, 1), (2, 0), (3, 1)]:
            self.assertEqual(r.route(key), Route(bucket, f"public.orders_{bucket}", None, None))

    def test_uuid_is_hashed_as_its_bytes_never_its_text(self):
        r = Router(BY_UUID)
        # extension: jumpbackanchorhash(u, 5, '{1,3}') and, for the trap, jumpbackanchorhash(u::text, 5, '{1,3}')
        zero = "00000000-0000-0000-0000-000000000000"
        for key in (uuid.UUID(zero), zero, zero.upper(), "{" + zero + "}", zero.replace("-", "")):
            self.assertEqual(r.route(key), Route(2, "public.by_uuid_2", None, None))   # as text: bucket 4
        self.assertEqual(r.route("00000000-0000-0000-0000-000000000001").bucket, 0)
        self.assertEqual(r.route("123e4567-e89b-12d3-a456-426614174000").bucket, 2)   # as text: 0
        # 0e4f0c5a-...: bucket 4, which no partition holds (as text: 2)
        with self.assertRaises(NoPartitionError):
            r.route("0e4f0c5a-6b1c-4b34-9f8e-2a3c4d5e6f70")

    def test_uuid_text_forms_of_postgresql(self):
        r = Router(BY_UUID)
        u = uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
        for text in ("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11",
                     "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}", "a0eebc999c0b4ef8bb6d6bb9bd380a11",
                     "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11"):
            self.assertEqual(r.route(text), r.route(u), text)
        # what uuid_in refuses (some of which Python's uuid.UUID would take)
        for text in ("not-a-uuid", "", "urn:uuid:a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
                     "a0eeb-c99-9c0b-4ef8-bb6d-6bb9bd380a11", " a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
                     "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-", "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
                     "a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1",
                     "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11\n"):
            with self.subTest(text=text):
                with self.assertRaisesRegex(KeySyntaxError, r"Router\.route\(\).*uuid") as cm:
                    r.route(text)
                self.assertEqual(cm.exception.sqlstate, "22P02")

    def test_plumbing_of_each_method_and_key_type(self):
        # the bucket is the library's function of the key read as key_type; its partition the layout's entry
        cases = [
            ("hash_operator_class", "public.jumpbackhash", "smallint", "value", 7, [],
             [0, 1, -1, 2**15 - 1, -2**15], lambda k: S.jumpbackhash(k, 7)),
            ("hash_operator_class", "public.jumpbackhash", "integer", "value", 7, [],
             [0, -1, 2**31 - 1, -2**31, 123456], lambda k: S.jumpbackhash(k, 7)),
            ("jumpbackhash", "public.jumpbackhash", "text", "xxh3_64", 9, [],
             ["", "a", "ключ-1", "日本語", "🙂", "42", "\\x0102"], lambda k: S.jumpbackhash(k, 9)),
            ("jumphash", "s.jumphash", "bytea", "xxh3_64", 11, [],
             [b"", b"\x00", b"abc", bytes(range(256))], lambda k: S.jumphash(k, 11)),
            ("jumphash", '"my schema".jumphash', "bigint", "value", 11, [],
             [0, -1, 2**63 - 1, -2**63], lambda k: S.jumphash(k, 11)),
            ("jumpbackanchorhash", "public.jumpbackanchorhash", "text", "xxh3_64", 10, [3, 7],
             ["", "user-42", "é"], lambda k: S.jumpbackanchorhash(k, 10, [3, 7])),
            ("jumpbackanchorhash", "public.jumpbackanchorhash", "uuid", "xxh3_64", 6, [],
             [uuid.UUID(int=i) for i in range(5)], lambda k: S.jumpbackanchorhash(k, 6)),
        ]
        for method, fn, key_type, key_hash, n, removed, keys, expected in cases:
            with self.subTest(method=method, key_type=key_type):
                parts = [{"bucket": b, "partition": f"s.t_{b}", "server": None, "remote_table": None}
                         for b in range(n) if b not in removed]
                r = Router(doc(method=method, hash_function=fn, key_type=key_type, key_hash=key_hash, buckets=n,
                               removed=removed, partitions=parts))
                for k in keys:
                    b = expected(k)
                    self.assertEqual(r.route(k), Route(b, f"s.t_{b}", None, None))
                    self.assertEqual(r.bucket(k), b)

    def test_bytes_like_keys(self):
        r = Router(doc(method="jumpbackhash", key_type="bytea", key_hash="xxh3_64", buckets=4))
        self.assertEqual(r.route(b"\x01\x02"), r.route(bytearray(b"\x01\x02")))
        self.assertEqual(r.route(b"\x01\x02"), r.route(memoryview(b"\x01\x02")))

    def test_server_and_remote_table(self):
        r = Router(moving())
        self.assertEqual(r.route(1), Route(1, "public.orders_1", "shard_a", "public.orders_1"))
        self.assertEqual(r.route(2), Route(0, "public.orders_0", None, None))
        self.assertEqual(r.servers, {"shard_a": {"host": "10.0.0.5", "port": "5432", "dbname": "shards"}})

    def test_no_partition_for_the_bucket(self):
        d = doc()
        del d["partitions"][3]
        with self.assertRaises(NoPartitionError) as cm:
            Router(d).route(42)
        e = cm.exception
        self.assertEqual(e.sqlstate, "23514")
        self.assertIsInstance(e, SubsettingError)
        self.assertIn("Router.route()", str(e))
        self.assertIn("bucket 3", str(e))
        self.assertIn("public.orders", str(e))
        self.assertEqual(Router(d).route(1).bucket, 1)
        # a partition whose bound is not one bucket (bucket null) holds no bucket
        d["partitions"].append({"bucket": None, "partition": "public.orders_default", "server": None,
                                "remote_table": None})
        with self.assertRaises(NoPartitionError):
            Router(d).route(42)
        with self.assertRaises(NoPartitionError):
            Router(doc(partitions=[])).route(1)

    def test_all_buckets_removed(self):
        # as the database: jumpbackanchorhash(k, 2, '{0,1}') refuses every key (22023)
        r = Router(doc(BY_UUID, buckets=2, removed=[0, 1], partitions=[]))
        with self.assertRaisesRegex(SubsettingError, "all 2 buckets are removed") as cm:
            r.route(uuid.UUID(int=1))
        self.assertEqual(cm.exception.sqlstate, "22023")


class InProgressTest(unittest.TestCase):
    def test_none(self):
        r = Router(ORDERS)
        self.assertFalse(any(r.through_coordinator(b) for b in range(4)))

    def test_a_move(self):
        r = Router(moving())
        self.assertEqual(r.in_progress, {"operation": "move", "phase": "copy", "interrupted": False,
                                         "buckets": [1]})
        self.assertEqual([r.through_coordinator(b) for b in range(4)], [False, True, False, False])
        self.assertTrue(r.through_coordinator(r.route(1)))
        self.assertFalse(r.through_coordinator(r.route(2)))

    def test_a_resharding_names_every_bucket(self):
        r = Router(moving(buckets=None, operation="add"))
        self.assertIsNone(r.in_progress["buckets"])
        self.assertTrue(all(r.through_coordinator(b) for b in range(4)))

    def test_bad_bucket(self):
        with self.assertRaisesRegex(TypeError, r"through_coordinator\(\)"):
            Router(ORDERS).through_coordinator("1")


class KeyErrorsTest(unittest.TestCase):
    def test_integer_ranges(self):
        for key_type, bits in (("smallint", 16), ("integer", 32), ("bigint", 64)):
            r = Router(doc(key_type=key_type))
            top = 2**(bits - 1)
            r.route(top - 1)
            r.route(-top)
            for k in (top, -top - 1, 2**64):
                with self.subTest(key_type=key_type, key=k):
                    with self.assertRaisesRegex(KeyOutOfRangeError, rf"Router\.route\(\): key {k} .*{key_type}") as cm:
                        r.route(k)
                    self.assertEqual(cm.exception.sqlstate, "22003")

    def test_smallint_and_integer_are_sign_extended(self):
        for key_type in ("smallint", "integer"):
            r = Router(doc(key_type=key_type))
            for k in (-1, -2, 5, -300):
                self.assertEqual(r.route(k), Router(ORDERS).route(k))

    def test_wrong_python_types(self):
        cases = [
            (ORDERS, ["42", 4.0, True, None, b"\x01", uuid.UUID(int=1)], "must be an int"),
            (json.dumps(doc(method="jumpbackhash", key_type="text", key_hash="xxh3_64")),
             [b"abc", 42, uuid.UUID(int=1), None], "must be a str"),
            (json.dumps(doc(method="jumpbackhash", key_type="bytea", key_hash="xxh3_64")),
             ["\\x0102", 42, None], "must be a bytes, bytearray or memoryview"),
            (BY_UUID, [uuid.UUID(int=1).bytes, 1, None], "must be a uuid.UUID or a str in uuid text form"),
        ]
        for layout, keys, message in cases:
            r = Router(layout)
            for k in keys:
                with self.subTest(key_type=r.key_type, key=k):
                    with self.assertRaisesRegex(TypeError, r"Router\.route\(\): .*" + message):
                        r.route(k)

    def test_text_that_is_not_unicode(self):
        r = Router(doc(method="jumpbackhash", key_type="text", key_hash="xxh3_64"))
        with self.assertRaisesRegex(SubsettingError, r"Router\.route\(\): text key .* not valid Unicode"):
            r.route("\ud800")


class LayoutErrorsTest(unittest.TestCase):
    def assertBad(self, layout, message):
        with self.assertRaisesRegex(LayoutError, message) as cm:
            Router(layout)
        self.assertEqual(cm.exception.sqlstate, "22023")
        self.assertIsInstance(cm.exception, SubsettingError)
        self.assertIn("Router()", str(cm.exception))

    def test_not_a_document(self):
        self.assertBad("not json", "at character 1")
        self.assertBad(ORDERS[:-1], "at character")
        self.assertBad("[1, 2]", "a layout is a JSON object")
        self.assertBad("null", "a layout is a JSON object")
        self.assertBad('{"table": "x"}', 'member "method" is missing')
        self.assertBad(b"\xff", "not UTF-8")
        self.assertBad(ORDERS.replace('"buckets": 4', '"buckets": NaN'), "NaN is not a JSON number")
        self.assertBad(ORDERS.replace('"buckets": 4,', '"buckets": 4, "buckets": 4,'),
                       'member "buckets" appears twice')
        with self.assertRaisesRegex(TypeError, r"Router\(\)"):
            Router(42)
        with self.assertRaisesRegex(TypeError, r"Router\(\)"):
            Router([json.loads(ORDERS)])

    def test_each_member_is_needed(self):
        for member in ("table", "method", "hash_function", "key", "key_column", "key_type", "key_hash",
                       "buckets", "removed", "partitions", "servers", "in_progress", "version"):
            with self.subTest(member=member):
                self.assertBad(without(doc(), member), f'member "{member}" is missing')

    def test_bad_members(self):
        bad = [
            (doc(table=None), "table must be a string"),
            (doc(method="modulo"), "unknown method"),
            (doc(hash_function="public.jumphash"), "not the function of method hash_operator_class"),
            (doc(key_type="numeric"), "unknown key_type"),
            (doc(method="jumpbackhash", key_type="integer"), "only the type of an operator class"),
            (doc(key_hash="xxh3_64"), "key_hash of a bigint key must be \"value\""),
            (doc(key_type="uuid"), "key_hash of a uuid key must be \"xxh3_64\""),
            (doc(key_column=5), "key_column must be a string or null"),
            (doc(buckets=0), "buckets must be an integer between 1 and 2147483647"),
            (doc(buckets=2**31), "buckets must be an integer"),
            (doc(buckets="4"), "buckets must be an integer"),
            (doc(buckets=4.0), "buckets must be an integer"),
            (doc(buckets=True), "buckets must be an integer"),
            (doc(removed=[1]), "removed must be empty for method hash_operator_class"),
            (doc(removed=None), "removed must be a list of integers"),
            (doc(BY_UUID, removed=[5]), "removed bucket 5 is out of range for 5 buckets"),
            (doc(BY_UUID, removed=[1, 1]), "bucket 1 is removed twice"),
            (doc(partitions={}), "partitions must be a list"),
            (doc(partitions=[1]), r"partitions\[0\] must be an object"),
            (doc(partitions=[{"bucket": 0, "partition": "p"}]), r'partitions\[0\]: member "server" is missing'),
            (doc(partitions=[{"bucket": 4, "partition": "p", "server": None, "remote_table": None}]),
             r"partitions\[0\]\.bucket 4 is not a bucket of the layout"),
            (doc(partitions=[{"bucket": -1, "partition": "p", "server": None, "remote_table": None}]),
             "is not a bucket of the layout"),
            (doc(BY_UUID, partitions=[{"bucket": 1, "partition": "p", "server": None, "remote_table": None}]),
             r"bucket 1 is not a bucket of the layout \(5 buckets, removed \[1, 3\]\)"),
            (doc(partitions=[{"bucket": "0", "partition": "p", "server": None, "remote_table": None}]),
             "bucket must be an integer or null"),
            (doc(partitions=[{"bucket": 0, "partition": None, "server": None, "remote_table": None}]),
             r"partitions\[0\]\.partition must be a string"),
            (doc(partitions=[{"bucket": 0, "partition": "p", "server": 1, "remote_table": None}]),
             r"partitions\[0\]\.server must be a string or null"),
            (doc(partitions=[{"bucket": 0, "partition": "p", "server": None, "remote_table": None},
                             {"bucket": 0, "partition": "q", "server": None, "remote_table": None}]),
             "bucket 0 is held by two partitions"),
            (doc(servers=[]), "servers must be an object"),
            (doc(servers={"s": {"port": 5432}}), "servers must be an object of objects of strings"),
            (doc(in_progress=[]), "in_progress must be an object or null"),
            (doc(in_progress={"operation": "move", "phase": "copy", "interrupted": False}),
             'in_progress: member "buckets" is missing'),
            (doc(in_progress={"operation": "move", "phase": "copy", "interrupted": False, "buckets": "1"}),
             "in_progress.buckets must be a list of integers"),
            (doc(in_progress={"operation": 1, "phase": "copy", "interrupted": False, "buckets": None}),
             "in_progress.operation must be a string"),
            (doc(version=None), "version must be 16 hexadecimal digits"),
            (doc(version="df10b318e3494e6"), "version must be 16 hexadecimal digits"),
        ]
        for layout, message in bad:
            with self.subTest(message=message):
                self.assertBad(layout, message)
                self.assertBad(json.dumps(layout), message)


if __name__ == "__main__":
    unittest.main()
