"""Unit tests of the subsetting client.

The golden values marked "extension" were computed by the extension itself
(subsetting 1.2 on PostgreSQL 15, psql), once, when these tests were written;
test/check-clients compares the library with the extension on fresh random inputs.
"""

import hashlib
import os
import random
import sys
import unittest
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import subsetting as S  # noqa: E402
from subsetting import LimitExceededError, RingFormatError, SubsettingError  # noqa: E402
from subsetting import _shuffle  # noqa: E402

# extension: SELECT ring_build('{1,2,3,4}', '{1,1,1,2}', '{0,1,2,2}', part_power => 2, replicas => 2)::text
RING_TEXT = ('{"part_power": 2, "replicas": 2, "seed": 0, "nodes": [{"id": 1, "zone": 0, "region": 0, '
             '"weight": 1}, {"id": 2, "zone": 1, "region": 0, "weight": 1}, {"id": 3, "zone": 2, '
             '"region": 0, "weight": 1}, {"id": 4, "zone": 2, "region": 0, "weight": 2}], '
             '"assignment": [[1, 4, 2, 4], [3, 1, 4, 2]]}')


class HashingTest(unittest.TestCase):
    def test_xxh3_64_extension_values(self):
        self.assertEqual(S.xxh3_64(""), 3244421341483603138)
        self.assertEqual(S.xxh3_64("日本語"), 1296689438140682423)
        self.assertEqual(S.xxh3_64(b"\x00\xff"), -6225377411875435533)
        self.assertEqual(S.xxh3_64(uuid.UUID(int=1)), 4706896644969173947)

    def test_xxh3_64_of_int_is_its_little_endian_bytes(self):
        self.assertEqual(S.xxh3_64(1), S.xxh3_64(b"\x01" + bytes(7)))
        self.assertEqual(S.xxh3_64(-1), S.xxh3_64(b"\xff" * 8))
        self.assertEqual(S.xxh3_64(2**64 - 1), S.xxh3_64(-1))

    def test_jump_extension_values(self):
        self.assertEqual(S.jumpbackhash(0, 10), 7)
        self.assertEqual(S.jumphash(123, 1000), 987)
        self.assertEqual(S.jumpbackhash("user-42", 16), 13)
        self.assertEqual(S.jumphash(-1, 2**31 - 1), 699554662)
        self.assertEqual(S.jumpbackhash(-2**63, 2**31 - 1), 1209974946)

    def test_text_key_is_its_hash(self):
        for key in ["", "abc", "é", b"\x00", uuid.UUID(int=7)]:
            self.assertEqual(S.jumpbackhash(key, 1000), S.jumpbackhash(S.xxh3_64(key), 1000))
            self.assertEqual(S.jumphash(key, 1000), S.jumphash(S.xxh3_64(key), 1000))

    def test_unsigned_key_is_the_same_bits(self):
        self.assertEqual(S.jumpbackhash(2**64 - 5, 77), S.jumpbackhash(-5, 77))

    def test_one_bucket_and_range(self):
        for k in range(-50, 50):
            self.assertEqual(S.jumpbackhash(k, 1), 0)
            self.assertTrue(0 <= S.jumpbackhash(k, 3) < 3)
            self.assertTrue(0 <= S.jumphash(k, 3) < 3)

    def test_consistency_when_growing(self):
        # a key stays or moves to the new bucket
        for k in range(2000):
            a, b = S.jumpbackhash(k, 10), S.jumpbackhash(k, 11)
            self.assertTrue(a == b or b == 10)

    def test_bad_arguments(self):
        with self.assertRaisesRegex(SubsettingError, "number of buckets must be at least 1, got 0"):
            S.jumpbackhash(1, 0)
        with self.assertRaisesRegex(SubsettingError, "at most 2147483647.*got 2147483648"):
            S.jumphash(1, 2**31)
        with self.assertRaisesRegex(SubsettingError, "64-bit integer"):
            S.jumpbackhash(2**64, 5)
        with self.assertRaises(TypeError):
            S.jumpbackhash(42.5, 16)
        with self.assertRaises(TypeError):
            S.jumpbackhash(True, 16)
        self.assertEqual(SubsettingError("x").sqlstate, "22023")


class AnchorTest(unittest.TestCase):
    def test_extension_values(self):
        self.assertEqual(S.jumpbackanchorhash_state(10, [3, 7]), bytes.fromhex("0a0000000300000007000000"))
        self.assertEqual(S.jumpbackanchorhash("user-42", 10, [3, 7]), 9)
        self.assertEqual(S.jumpbackanchorhash(42, bytes.fromhex("0a0000000300000007000000")), 6)
        self.assertEqual(S.jumpbackanchorhash(5, 10, [3]), 6)

    def test_nothing_removed_is_jumpbackhash(self):
        for k in range(500):
            self.assertEqual(S.jumpbackanchorhash(k, 37), S.jumpbackhash(k, 37))

    def test_removal_moves_only_its_keys(self):
        before = S.JumpBackAnchorHash(20, [4, 11])
        after = before.remove_bucket(6)
        for k in range(3000):
            b = before.bucket(k)
            self.assertNotIn(b, (4, 11))
            if b != 6:
                self.assertEqual(after.bucket(k), b)
            else:
                self.assertNotIn(after.bucket(k), (4, 6, 11))

    def test_add_and_remove(self):
        s = S.JumpBackAnchorHash(5, [2])
        t, added = s.add_bucket()
        self.assertEqual((t, added), (S.JumpBackAnchorHash(5), 2))
        self.assertEqual(t.add_bucket(), (S.JumpBackAnchorHash(6), 5))
        self.assertEqual(S.JumpBackAnchorHash(5).remove_bucket(4), S.JumpBackAnchorHash(4))
        self.assertEqual(S.JumpBackAnchorHash(3, [0, 1]).remove_bucket(2), S.JumpBackAnchorHash(0))
        self.assertEqual(S.JumpBackAnchorHash.from_state(s.state), s)
        self.assertEqual(len(s), 4)
        self.assertNotIn(2, s)
        self.assertIn(4, s)
        # a set of 2^31 - 1 buckets cannot grow: 54000, as the extension (found by test/check-clients)
        with self.assertRaises(S.LimitExceededError):
            S.JumpBackAnchorHash(2**31 - 1).add_bucket()

    def test_bad_sets(self):
        cases = [
            (lambda: S.jumpbackanchorhash(1, 5, [5]), "removed bucket 5 is out of range for 5 buckets"),
            (lambda: S.jumpbackanchorhash(1, 5, [1, 2, 1]), "bucket 1 is removed twice"),
            (lambda: S.jumpbackanchorhash(1, 3, [0, 1, 2]), "all 3 buckets are removed"),
            (lambda: S.jumpbackanchorhash(1, 0), "at least 1, got 0"),
            (lambda: S.jumpbackanchorhash(1, -3), "must not be negative, got -3"),
            (lambda: S.jumpbackanchorhash(1, b"\x05"), "length 1 is not a positive multiple of 4"),
            (lambda: S.jumpbackanchorhash(1, b"\xff\xff\xff\xff"), "number of buckets is negative, got -1"),
            (lambda: S.JumpBackAnchorHash(5, [2]).remove_bucket(2), "bucket 2 is already removed"),
            (lambda: S.JumpBackAnchorHash(5, [2]).remove_bucket(5), "bucket 5 is out of range for 5 buckets"),
        ]
        for call, message in cases:
            with self.subTest(message=message):
                with self.assertRaisesRegex(SubsettingError, message):
                    call()
        with self.assertRaises(LimitExceededError):
            S.JumpBackAnchorHash(2**31 - 1, range(S.MAX_REMOVED + 1))


class SubsetTest(unittest.TestCase):
    def test_extension_values(self):
        self.assertEqual(S.ringsteady_subset(3, 100, 5), [3, 67, 35, 99, 19])
        self.assertEqual(S.ringsteady_subset(5, 10, 4, False), [5, 3, 7, 0])
        self.assertEqual(S.rocksteadier_subset(3, 100, 12),
                         [2, 81, 46, 21, 69, 10, 91, 52, 34, 79, 5, 83])
        self.assertEqual(S.rocksteadier_subset(7, 25, 25, 4),
                         [4, 22, 12, 3, 18, 10, 6, 23, 15, 0, 19, 9, 7, 20, 14, 2, 16, 8, 5, 21, 13, 1, 17, 11, 24])

    def test_large_lot_extension_values(self):
        # extension (subsetting 1.2 on PostgreSQL 18): lots of 65536 and 4096 tasks, read by the packed
        # lanes (_shuffle.Lanes); md5 is SELECT md5(rocksteadier_subset(...)::text)
        def md5(subset):
            return hashlib.md5(("{" + ",".join(map(str, subset)) + "}").encode()).hexdigest()

        big = S.rocksteadier_subset(5, 2147483647, 300, lot_size=65536)
        self.assertEqual(big[:5], [10861, 1073748135, 536877015, 1610637325, 268464191])
        self.assertEqual(md5(big), "8af1c80cbe5edcfdf53df0e67e08fd62")
        self.assertEqual(md5(S.rocksteadier_subset(123456789, 2147483647, 100, 4096)),
                         "11200520abbff215c8e7611b442d0e5d")
        # three rows a lot, wrapping to rows 0 and 1, and the last lot's rows for the passes
        self.assertEqual(S.rocksteadier_subset(65535, 1000000, 40, 65536),
                         [57888, 584984, 266638, 834448, 147732, 662633, 397178, 942882, 114671, 603320,
                          354991, 877242, 250043, 723462, 493115, 999848, 6940, 531658, 295470, 821915,
                          169381, 687518, 408697, 958348, 78015, 623591, 364013, 906799, 204344, 731377,
                          512460, 989158, 2647, 530291, 313700, 847951, 154870, 689456, 456843, 923841])
        self.assertEqual(S.rocksteadier_subset(7, 1000000, 5, 1000), [666, 512788, 256821, 768596, 128318])
        self.assertEqual(S.rocksteadier_subset(2147483647, 2147483647, 3, 65536), [2147448766, 40355, 1073765265])

    def test_large_lot_extension_values_without_numpy(self):
        # the same, read by the pure Python lanes where NumPy is not installed
        numpy, _shuffle.numpy = _shuffle.numpy, None
        try:
            self.test_large_lot_extension_values()
        finally:
            _shuffle.numpy = numpy

    def check_rows_of_the_walk(self, reader):
        # reader(lot_size, lowest) against the step-by-step walk (the C code's loop), on every small lot and
        # some large ones, rows anywhere (row 0, the last row, several a lot)
        r = random.Random(20240601)
        sizes = list(range(1, 40)) + [r.randrange(40, 3000) for _ in range(30)] + [1024, 1025, 2049, 65536]
        for lot_size in sizes:
            for _ in range(3):
                lowest = r.choice([0, lot_size - 1, r.randrange(lot_size)])
                rows = sorted({lowest} | {r.randrange(lowest, lot_size) for _ in range(r.randrange(4))})
                seed = r.getrandbits(64)
                walk = _shuffle.shuffle_walk(seed, lot_size, 0)
                with self.subTest(lot_size=lot_size, rows=rows, seed=seed):
                    self.assertEqual(reader(lot_size, lowest).rows(seed, rows), [walk[q] for q in rows])

    def test_packed_lanes_read_the_walks_rows(self):
        self.check_rows_of_the_walk(_shuffle.Lanes)

    def test_numpy_draws_read_the_walks_rows(self):
        if _shuffle.numpy is None:
            self.skipTest("NumPy is not installed (python3-numpy)")
        self.check_rows_of_the_walk(_shuffle.Draws)

    def test_prefix_and_permutation(self):
        for f in range(30):
            full = S.rocksteadier_subset(f, 23, 23, 5)
            self.assertEqual(sorted(full), list(range(23)))
            self.assertEqual(S.rocksteadier_subset(f, 23, 7, 5), full[:7])
            ring = S.ringsteady_subset(f, 23, 100)
            self.assertEqual(sorted(ring), list(range(23)))
            self.assertEqual(S.ringsteady_subset(f, 23, 4), ring[:4])
        self.assertEqual(S.ringsteady_subset(0, 5, 0), [])

    def test_bad_arguments(self):
        with self.assertRaisesRegex(SubsettingError, "frontend must be at least 0, got -1"):
            S.ringsteady_subset(-1, 10, 3)
        with self.assertRaisesRegex(SubsettingError, "number of backends must be at least 1, got 0"):
            S.rocksteadier_subset(1, 0, 3)
        with self.assertRaisesRegex(SubsettingError, "subset size must be at least 0, got -2"):
            S.ringsteady_subset(1, 10, -2)
        with self.assertRaisesRegex(SubsettingError, "lot size must be between 1 and 65536, got 0"):
            S.rocksteadier_subset(1, 10, 3, 0)
        with self.assertRaises(LimitExceededError):
            S.ringsteady_subset(1, 2**31 - 1, 2**31 - 1)
        with self.assertRaisesRegex(LimitExceededError, "in lots of 65536 is too large"):
            S.rocksteadier_subset(1, 2**31 - 1, 20000, 65536)


class RingTest(unittest.TestCase):
    def setUp(self):
        self.ring = S.PartitionRing.from_text(RING_TEXT)

    def test_extension_values(self):
        r = self.ring
        self.assertEqual(S.ring_partition(r, "photos/cat.jpg"), 2)
        self.assertEqual(S.ring_nodes(r, "photos/cat.jpg"), [2, 4])
        # Swift's walk leaves partition 0 (the only one on node 3) out: one node only
        self.assertEqual(S.ring_handoff_nodes(r, "photos/cat.jpg", 2), [1])
        self.assertEqual(S.ring_partition(r, -1), 3)
        self.assertEqual(S.ring_partition_handoff_nodes(r, 0, 5), [2, 4])

    def test_int_keys_are_taken_as_hashed(self):
        self.assertEqual(self.ring.partition(1), 0)
        self.assertEqual(self.ring.partition(2**62), 1)
        self.assertEqual(self.ring.partition(S.xxh3_64(b"k")), self.ring.partition(b"k"))

    def test_accessors(self):
        r = self.ring
        self.assertEqual((r.part_power, r.replicas, r.partitions, len(r.nodes)), (2, 2, 4, 4))
        self.assertEqual([r.partition_nodes(x) for x in range(4)], [[1, 3], [4, 1], [2, 4], [4, 2]])
        self.assertEqual(r.handoff_nodes("x", 0), [])

    def test_bad_lookups(self):
        with self.assertRaisesRegex(SubsettingError, "partition must be between 0 and 3, got 4"):
            self.ring.partition_nodes(4)
        with self.assertRaisesRegex(SubsettingError, "count must be between 0 and 65535, got -1"):
            self.ring.handoff_nodes(1, -1)
        with self.assertRaises(TypeError):
            S.ring_nodes(RING_TEXT, 1)

    def test_bad_texts(self):
        bad = {
            "not json": "at character",
            RING_TEXT.replace('"seed": 0, ', '"seed": 0, "seed": 1, '): 'key "seed" appears twice',
            RING_TEXT.replace('"part_power": 2', '"part_power": 25'): "part power must be between 1 and 24",
            RING_TEXT.replace('"weight": 2', '"weight": -2'): "weight of node 4 is negative",
            RING_TEXT.replace('"weight": 2', '"weight": NaN'): "NaN is not a JSON number",
            RING_TEXT.replace("[3, 1, 4, 2]", "[3, 1, 4, 9]"): "partition 3 is on node 9",
            RING_TEXT.replace("[3, 1, 4, 2]", "[3, 1, 2, 2]"): "partition 2 has two replicas on node 2",
            RING_TEXT.replace("[3, 1, 4, 2]", "[3, 1, 4]"): "must have 2 rows",
            RING_TEXT.replace('"replicas": 2', '"replicas": 2.0'): "replicas must be an integer",
            RING_TEXT.replace('"id": 3', '"id": 2'): "node id 2 appears twice",
            '{"part_power": 1}': 'key "assignment" is missing',
            RING_TEXT.replace("[3, 1, 4, 2]", "[3, 1, 4, true]"): "partition 3 is on node True",
            RING_TEXT.replace("[3, 1, 4, 2]", "[3, 1.0, 4, 2]"): "partition 1 is on node 1.0",
            RING_TEXT.replace("[1, 4, 2, 4]", "[1, 4, 2, 2]"): "partition 3 has two replicas on node 2",
        }
        for text, message in bad.items():
            with self.subTest(message=message):
                with self.assertRaisesRegex(RingFormatError, message) as cm:
                    S.PartitionRing.from_text(text)
                self.assertEqual(cm.exception.sqlstate, "22P02")


if __name__ == "__main__":
    unittest.main()
