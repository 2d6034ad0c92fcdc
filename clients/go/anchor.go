package subsetting

import (
	"encoding/binary"
	"fmt"
)

// MaxRemoved is the most removed buckets an AnchorSet may hold, as the
// extension's jumpbackanchorhash.
const MaxRemoved = 1 << 20

// AnchorSet is a set of buckets for JumpBackAnchorHash (hash4j's
// ConsistentJumpBackAnchorBucketSetHasher with SplitMix64): Buckets, the
// number of buckets ever in use, less the removed ones (oldest first).  It is
// immutable: AddBucket and RemoveBucket return a new set.
type AnchorSet struct {
	buckets int32
	removed []int32
	// per removed bucket: its position in the stack
	entry map[int32]int32
	// per position: the bucket that took its place, and that bucket's position or -1
	nextBucket []int32
	nextEntry  []int32
}

// NewAnchorSet is the set of buckets 0 .. buckets-1 less removed (oldest
// first), as jumpbackanchorhash(key, buckets, removed) takes it.  It checks
// what the extension checks: 0 <= buckets <= 2147483647, every removed bucket
// in [0, buckets), none twice, at most MaxRemoved.
func NewAnchorSet(buckets int, removed []int) (*AnchorSet, error) {
	if err := int4("number of buckets", buckets); err != nil {
		return nil, err
	}
	if buckets < 0 {
		return nil, invalid("number of buckets must not be negative, got %d", buckets)
	}
	if len(removed) > MaxRemoved {
		return nil, limit("too many removed buckets: %d (at most %d)", len(removed), MaxRemoved)
	}
	r := make([]int32, len(removed))
	for i, b := range removed {
		if b < 0 || b >= buckets {
			if buckets == 0 {
				return nil, invalid("removed bucket %d is out of range for 0 buckets", b)
			}
			return nil, invalid("removed bucket %d is out of range for %d buckets (element %d of the removed buckets)", b, buckets, i+1)
		}
		r[i] = int32(b)
	}
	return newAnchorSet(int32(buckets), r)
}

func newAnchorSet(buckets int32, removed []int32) (*AnchorSet, error) {
	m := int32(len(removed))
	h := &AnchorSet{buckets: buckets, removed: removed, entry: make(map[int32]int32, m),
		nextBucket: make([]int32, m), nextEntry: make([]int32, m)}
	for i, b := range removed {
		if j, dup := h.entry[b]; dup {
			return nil, invalid("bucket %d is removed twice (elements %d and %d of the removed buckets)", b, j+1, i+1)
		}
		h.entry[b] = int32(i)
	}
	// replay the removals: removal r leaves n buckets; the bucket at place n
	// of the view n + 1 takes the removed bucket's place
	for r := int32(0); r < m; r++ {
		n := buckets - 1 - r
		b, e := h.followChain(n, h.find(n), n+1)
		h.nextBucket[r] = b
		h.nextEntry[r] = e
	}
	return h, nil
}

// AnchorSetFromState is the set whose state bytes (hash4j's getState(), the
// extension's jumpbackanchorhash_state) are state.
func AnchorSetFromState(state []byte) (*AnchorSet, error) {
	if len(state) < 4 || len(state)%4 != 0 {
		return nil, invalid("invalid jumpbackanchorhash state: length %d is not a positive multiple of 4", len(state))
	}
	buckets := int32(binary.LittleEndian.Uint32(state))
	if buckets < 0 {
		return nil, invalid("invalid jumpbackanchorhash state: number of buckets is negative, got %d", buckets)
	}
	count := (len(state) - 4) / 4
	if count > MaxRemoved {
		return nil, limit("too many removed buckets: %d (at most %d)", count, MaxRemoved)
	}
	removed := make([]int32, count)
	for i := range removed {
		b := int32(binary.LittleEndian.Uint32(state[4+4*i:]))
		if b < 0 || b >= buckets {
			if buckets == 0 {
				return nil, invalid("removed bucket %d is out of range for 0 buckets", b)
			}
			return nil, invalid("removed bucket %d is out of range for %d buckets (removed bucket %d of the state)", b, buckets, i+1)
		}
		removed[i] = b
	}
	h, err := newAnchorSet(buckets, removed)
	if err != nil {
		return nil, &Error{SQLState: "22023", Msg: fmtStateDuplicate(err)}
	}
	return h, nil
}

func fmtStateDuplicate(err error) string {
	var b, i, j int
	e := err.(*Error)
	if _, scanErr := fmt.Sscanf(e.Msg, "bucket %d is removed twice (elements %d and %d", &b, &i, &j); scanErr != nil {
		return e.Msg
	}
	return fmt.Sprintf("bucket %d is removed twice (removed buckets %d and %d of the state)", b, i, j)
}

// Buckets is the number of buckets ever in use (hash4j's historicMaxNumBuckets), removed ones included.
func (h *AnchorSet) Buckets() int { return int(h.buckets) }

// Removed is the removed buckets, oldest first.
func (h *AnchorSet) Removed() []int {
	out := make([]int, len(h.removed))
	for i, b := range h.removed {
		out[i] = int(b)
	}
	return out
}

// State is the state bytes: the number of buckets, then each removed bucket
// oldest first, as 4-byte little-endian integers (jumpbackanchorhash_state).
func (h *AnchorSet) State() []byte {
	out := make([]byte, 4+4*len(h.removed))
	binary.LittleEndian.PutUint32(out, uint32(h.buckets))
	for i, b := range h.removed {
		binary.LittleEndian.PutUint32(out[4+4*i:], uint32(b))
	}
	return out
}

func (h *AnchorSet) find(bucket int32) int32 {
	if e, ok := h.entry[bucket]; ok {
		return e
	}
	return -1
}

func (h *AnchorSet) view(e int32) int32 { return h.buckets - 1 - e }

func (h *AnchorSet) followChain(place, e, view int32) (int32, int32) {
	bucket := place
	for e >= 0 && h.view(e) >= view {
		bucket = h.nextBucket[e]
		e = h.nextEntry[e]
	}
	return bucket, e
}

// uniformBelow is hash4j's uniformInt(bound): Lemire's method with 32-bit products.
func uniformBelow(state *uint64, bound int32) int32 {
	s := uint64(uint32(bound))
	product := uint64(uint32(splitmixNext(state))) * s
	if uint32(product) < uint32(s) {
		threshold := (uint64(1) << 32) % s
		for uint64(uint32(product)) < threshold {
			product = uint64(uint32(splitmixNext(state))) * s
		}
	}
	return int32(product >> 32)
}

// Bucket is the bucket of key, as the extension's jumpbackanchorhash(bigint,
// ...) (a SQL bigint k is the key uint64(k)).  An error if no bucket is left.
func (h *AnchorSet) Bucket(key uint64) (int, error) {
	if h.buckets == 0 {
		return 0, invalid("number of buckets must be at least 1, got 0")
	}
	if int(h.buckets) <= len(h.removed) {
		return 0, invalid("all %d buckets are removed; add a bucket back with AddBucket", h.buckets)
	}
	state := key
	bucket := int32(jumpBack(&state, uint32(h.buckets)))
	e := h.find(bucket)
	for e >= 0 {
		v := h.view(e)
		if v == 0 {
			break
		}
		place := uniformBelow(&state, v)
		bucket, e = h.followChain(place, h.find(place), v)
	}
	return int(bucket), nil
}

// BucketString is jumpbackanchorhash(text, ...): Bucket(XXH3String(key)).
func (h *AnchorSet) BucketString(key string) (int, error) { return h.Bucket(XXH3String(key)) }

// BucketBytes is jumpbackanchorhash(bytea, ...) (and of a uuid's 16 bytes,
// jumpbackanchorhash(uuid, ...)): Bucket(XXH3(key)).
func (h *AnchorSet) BucketBytes(key []byte) (int, error) { return h.Bucket(XXH3(key)) }

// AddBucket is hash4j's addBucket() (jumpbackanchorhash_add_bucket): the set
// with the most recently removed bucket back, or, with none removed, one
// bucket more; and the bucket added.
func (h *AnchorSet) AddBucket() (*AnchorSet, int, error) {
	if len(h.removed) > 0 {
		m := len(h.removed) - 1
		added := h.removed[m]
		n, err := newAnchorSet(h.buckets, append([]int32(nil), h.removed[:m]...))
		return n, int(added), err
	}
	if h.buckets == maxInt32 {
		return nil, 0, limit("cannot add a bucket to %d buckets with none removed", h.buckets)
	}
	n, err := newAnchorSet(h.buckets+1, nil)
	return n, int(h.buckets), err
}

// RemoveBucket is hash4j's removeBucket(bucket)
// (jumpbackanchorhash_remove_bucket): the set without bucket; only its keys
// move.  The last bucket with none removed shrinks Buckets; the only bucket
// left empties the set.
func (h *AnchorSet) RemoveBucket(bucket int) (*AnchorSet, error) {
	if bucket >= 0 && bucket < int(h.buckets) && h.find(int32(bucket)) >= 0 {
		return nil, invalid("bucket %d is already removed", bucket)
	}
	if bucket < 0 || bucket >= int(h.buckets) {
		if h.buckets == 0 {
			return nil, invalid("bucket %d is out of range for 0 buckets", bucket)
		}
		return nil, invalid("bucket %d is out of range for %d buckets", bucket, h.buckets)
	}
	switch {
	case int(h.buckets)-1 == len(h.removed):
		return newAnchorSet(0, nil)
	case bucket == int(h.buckets)-1 && len(h.removed) == 0:
		return newAnchorSet(h.buckets-1, nil)
	}
	if len(h.removed) >= MaxRemoved {
		return nil, limit("too many removed buckets: %d (at most %d)", len(h.removed)+1, MaxRemoved)
	}
	return newAnchorSet(h.buckets, append(append([]int32(nil), h.removed...), int32(bucket)))
}

// JumpBackAnchorHash is jumpbackanchorhash(key, buckets, removed): the bucket
// of key among buckets 0 .. buckets-1 less the removed ones.  To place many
// keys, make the set once with NewAnchorSet.
func JumpBackAnchorHash(key uint64, buckets int, removed []int) (int, error) {
	h, err := NewAnchorSet(buckets, removed)
	if err != nil {
		return 0, err
	}
	return h.Bucket(key)
}
