"""subsetting: the routing of the ``subsetting`` PostgreSQL extension, in Python.

An application computes the same bucket, subset or replica nodes as the
database: the same algorithms, bit for bit, checked against the extension
(``test/check-clients``, through ``clients/python/crosscheck``).

>>> from subsetting import jumpbackhash, rocksteadier_subset, PartitionRing, Router
>>> jumpbackhash("user-42", 16)          # as SELECT jumpbackhash('user-42', 16)
... # doctest: +SKIP
"""

from ._errors import (KeyOutOfRangeError, KeySyntaxError, LayoutError, LimitExceededError, NoPartitionError,
                      RingFormatError, SubsettingError)
from .anchor import (MAX_REMOVED, JumpBackAnchorHash, jumpbackanchorhash, jumpbackanchorhash_buckets,
                     jumpbackanchorhash_removed, jumpbackanchorhash_state)
from .hashing import jumpbackhash, jumphash, key_hash, xxh3_64
from .ring import (PartitionRing, RingNode, ring_handoff_nodes, ring_nodes, ring_partition,
                   ring_partition_handoff_nodes, ring_partition_nodes)
from .routing import Route, Router
from .subsets import ringsteady_subset, rocksteadier_subset

__version__ = "1.2.0"

__all__ = [
    "SubsettingError", "LimitExceededError", "RingFormatError",
    "LayoutError", "KeyOutOfRangeError", "KeySyntaxError", "NoPartitionError",
    "xxh3_64", "key_hash", "jumpbackhash", "jumphash",
    "JumpBackAnchorHash", "jumpbackanchorhash", "jumpbackanchorhash_state",
    "jumpbackanchorhash_buckets", "jumpbackanchorhash_removed", "MAX_REMOVED",
    "ringsteady_subset", "rocksteadier_subset",
    "PartitionRing", "RingNode", "ring_partition", "ring_nodes", "ring_partition_nodes",
    "ring_handoff_nodes", "ring_partition_handoff_nodes",
    "Router", "Route",
]
