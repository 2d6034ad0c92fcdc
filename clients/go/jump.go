package subsetting

import "math/bits"

const splitmixGamma = 0x9E3779B97F4A7C15

func splitmixMix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// splitmixNext is the next draw of SplitMix64 (Java's SplittableRandom,
// hash4j's splitMix64_V1) whose state is *state.
func splitmixNext(state *uint64) uint64 {
	*state += splitmixGamma
	return splitmixMix(*state)
}

func checkBuckets(buckets int) error {
	if buckets < 1 {
		return invalid("number of buckets must be at least 1, got %d", buckets)
	}
	if buckets > maxInt32 {
		return invalid("number of buckets must be at most 2147483647, got %d", buckets)
	}
	return nil
}

// jumpBack is JumpBackHash (Ertl 2024, hash4j's Algorithm 6) drawing from
// the SplitMix64 generator whose state is *state; buckets >= 1.
func jumpBack(state *uint64, buckets uint32) uint32 {
	if buckets == 1 {
		return 0
	}
	n := buckets
	v := splitmixNext(state)
	u := uint32(v^(v>>32)) & (^uint32(0) >> bits.LeadingZeros32(n-1))
	for u != 0 {
		q := uint32(1) << (31 - bits.LeadingZeros32(u))
		parity := uint(bits.OnesCount32(u) & 1)
		b := q + (uint32(v>>(parity<<5)) & (q - 1))
		for {
			if b < n {
				return b
			}
			w := splitmixNext(state)
			b = uint32(w) & ((q << 1) - 1)
			if b < q {
				break
			}
			if b < n {
				return b
			}
			b = uint32(w>>32) & ((q << 1) - 1)
			if b < q {
				break
			}
		}
		u ^= q
	}
	return 0
}

// JumpBackHash is the bucket in [0, buckets) of a 64-bit key by JumpBackHash
// with SplitMix64, as the extension's jumpbackhash(bigint, int) and hash4j's
// ConsistentHashing.jumpBackHash(splitMix64_V1()).  A SQL bigint k is the key
// uint64(k).  buckets must be in [1, 2147483647].
func JumpBackHash(key uint64, buckets int) (int, error) {
	if err := checkBuckets(buckets); err != nil {
		return 0, err
	}
	state := key
	return int(jumpBack(&state, uint32(buckets))), nil
}

// JumpBackHashString is jumpbackhash(text, int): JumpBackHash(XXH3String(key), buckets).
func JumpBackHashString(key string, buckets int) (int, error) {
	if err := checkBuckets(buckets); err != nil {
		return 0, err
	}
	return JumpBackHash(XXH3String(key), buckets)
}

// JumpBackHashBytes is jumpbackhash(bytea, int) (and, of a uuid's 16 bytes,
// jumpbackhash(uuid, int)): JumpBackHash(XXH3(key), buckets).
func JumpBackHashBytes(key []byte, buckets int) (int, error) {
	if err := checkBuckets(buckets); err != nil {
		return 0, err
	}
	return JumpBackHash(XXH3(key), buckets)
}

// JumpHash is the bucket in [0, buckets) of a 64-bit key by jump consistent
// hash (Lamping and Veach 2014), the paper's C++ code with its double
// roundings, as the extension's jumphash(bigint, int) and ClickHouse's
// jumpConsistentHash.  buckets must be in [1, 2147483647].
func JumpHash(key uint64, buckets int) (int, error) {
	if err := checkBuckets(buckets); err != nil {
		return 0, err
	}
	b, j := int64(-1), int64(0)
	for j < int64(buckets) {
		b = j
		key = key*2862933555777941757 + 1
		// float64() rounds each operation, as C without excess precision
		j = int64(float64(float64(b+1) * float64(float64(int64(1)<<31)/float64((key>>33)+1))))
	}
	return int(b), nil
}

// JumpHashString is jumphash(text, int): JumpHash(XXH3String(key), buckets).
func JumpHashString(key string, buckets int) (int, error) {
	if err := checkBuckets(buckets); err != nil {
		return 0, err
	}
	return JumpHash(XXH3String(key), buckets)
}

// JumpHashBytes is jumphash(bytea, int) (and of a uuid's 16 bytes,
// jumphash(uuid, int)): JumpHash(XXH3(key), buckets).
func JumpHashBytes(key []byte, buckets int) (int, error) {
	if err := checkBuckets(buckets); err != nil {
		return 0, err
	}
	return JumpHash(XXH3(key), buckets)
}
