package subsetting

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Golden XXH3-64 values of bytes i*7+3 (mod 256), i = 0 .. n-1, computed by
// the reference implementation, not by this package: `xxhsum -H3` of xxHash
// 0.8.1 (Debian 12's xxhash package), one file per length.  They cover every
// length class: 0, 1-3, 4-8, 9-16, 17-128, 129-240 and the long loop (one
// stripe, one block of 1024 bytes, several blocks).  test/check-clients compares
// random inputs of every class with the extension's xxh3_64.
var xxh3Golden = []struct {
	n    int
	want uint64
}{
	{0, 0x2d06800538d394c2}, {1, 0x13e608bc156defed}, {2, 0x1c9074b93943b86c},
	{3, 0xa9088dda485b481c}, {4, 0x6d9253b16c8b1ed3}, {5, 0x998620e10e3a4b37},
	{8, 0x60539db630471163}, {9, 0xfeff668361d723a8}, {16, 0xb8c859b0f030b585},
	{17, 0x714a04408e79b80f}, {32, 0x19ff4ee1d6ba1a55}, {33, 0x3e44983ad21679c8},
	{64, 0x287eb1fa9e4be2c1}, {65, 0x829218de4d798646}, {96, 0xf084e7cfbc624743},
	{97, 0x1daa83271a8e7b7c}, {128, 0x67425a03650261bf}, {129, 0xc664bf3311c6abc4},
	{200, 0x746cd0025327bf5b}, {240, 0x64556dc6b462a6cf}, {241, 0x8beadd3a8874fe17},
	{500, 0xb8bc3e5683ce226a}, {1024, 0x9b81661c641c72b1}, {1025, 0x806c2072ed713576},
	{2048, 0xabe604813ba62ed1}, {3000, 0xc89178bb873c6b3d}, {5000, 0x799aaddd7339581d},
}

func TestXXH3Golden(t *testing.T) {
	for _, g := range xxh3Golden {
		b := make([]byte, g.n)
		for i := range b {
			b[i] = byte(i*7 + 3)
		}
		if got := XXH3(b); got != g.want {
			t.Errorf("XXH3 of %d bytes = %#016x, want %#016x", g.n, got, g.want)
		}
	}
	if XXH3String("") != XXH3(nil) {
		t.Error("XXH3String(\"\") differs from XXH3(nil)")
	}
}

func wantError(t *testing.T, err error, state, text string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want an error %s containing %q, got %v", state, text, err)
	}
	if e.SQLState != state || !strings.Contains(e.Msg, text) {
		t.Errorf("want SQLSTATE %s and %q, got %s %q", state, text, e.SQLState, e.Msg)
	}
}

func TestJumpArguments(t *testing.T) {
	_, err := JumpBackHash(1, 0)
	wantError(t, err, "22023", "number of buckets must be at least 1, got 0")
	_, err = JumpHash(1, -7)
	wantError(t, err, "22023", "got -7")
	_, err = JumpBackHashString("x", 1<<31)
	wantError(t, err, "22023", "at most 2147483647, got 2147483648")
	for _, n := range []int{1, 2, 3, 1000, 1<<31 - 1} {
		for k := uint64(0); k < 200; k++ {
			a, err1 := JumpBackHash(k*0x9E3779B97F4A7C15, n)
			b, err2 := JumpHash(k*0x9E3779B97F4A7C15, n)
			if err1 != nil || err2 != nil || a < 0 || a >= n || b < 0 || b >= n {
				t.Fatalf("bucket out of range for %d buckets: %d %d %v %v", n, a, b, err1, err2)
			}
		}
	}
}

// Consistency: when buckets grow by one, a key stays or moves to the new bucket.
func TestJumpConsistency(t *testing.T) {
	for k := uint64(1); k < 3000; k++ {
		key := k * 0xBF58476D1CE4E5B9
		prevBack, _ := JumpBackHash(key, 1)
		prevJump, _ := JumpHash(key, 1)
		for n := 2; n <= 70; n++ {
			b, _ := JumpBackHash(key, n)
			j, _ := JumpHash(key, n)
			if (b != prevBack && b != n-1) || (j != prevJump && j != n-1) {
				t.Fatalf("key %d moved between old buckets at %d buckets", key, n)
			}
			prevBack, prevJump = b, j
		}
	}
}

func TestAnchorSet(t *testing.T) {
	h, err := NewAnchorSet(10, []int{3, 7})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(h.State(), []byte{10, 0, 0, 0, 3, 0, 0, 0, 7, 0, 0, 0}) {
		t.Errorf("State() = %v", h.State())
	}
	h2, err := AnchorSetFromState(h.State())
	if err != nil || h2.Buckets() != 10 || fmt.Sprint(h2.Removed()) != "[3 7]" {
		t.Fatalf("state round trip: %v %v", h2, err)
	}
	// with nothing removed, JumpBackHash; removing a bucket moves only its keys
	full, _ := NewAnchorSet(10, nil)
	for k := uint64(0); k < 5000; k++ {
		key := k * 0x94D049BB133111EB
		a, _ := full.Bucket(key)
		j, _ := JumpBackHash(key, 10)
		b, _ := h.Bucket(key)
		if a != j {
			t.Fatalf("key %d: %d, JumpBackHash %d", key, a, j)
		}
		if b == 3 || b == 7 || (a != 3 && a != 7 && a != b) {
			t.Fatalf("key %d: bucket %d without removals, %d with 3 and 7 removed", key, a, b)
		}
	}
	h3, added, err := h.AddBucket()
	if err != nil || added != 7 || fmt.Sprint(h3.Removed()) != "[3]" {
		t.Errorf("AddBucket: %v %d %v", h3, added, err)
	}
	_, err = NewAnchorSet(10, []int{3, 3})
	wantError(t, err, "22023", "bucket 3 is removed twice")
	_, err = NewAnchorSet(10, []int{10})
	wantError(t, err, "22023", "removed bucket 10 is out of range for 10 buckets")
	_, err = h.RemoveBucket(7)
	wantError(t, err, "22023", "bucket 7 is already removed")
	_, err = AnchorSetFromState([]byte{1, 0, 0})
	wantError(t, err, "22023", "length 3 is not a positive multiple of 4")
	_, err = AnchorSetFromState([]byte{2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0})
	wantError(t, err, "22023", "removed buckets 1 and 2 of the state")
	one, _ := NewAnchorSet(2, []int{0})
	empty, err := one.RemoveBucket(1)
	if err != nil || empty.Buckets() != 0 {
		t.Fatalf("removing the last bucket: %v %v", empty, err)
	}
	_, err = empty.Bucket(1)
	wantError(t, err, "22023", "at least 1, got 0")
}

func TestSubsets(t *testing.T) {
	for _, scaling := range []bool{true, false} {
		// every frontend's subset: distinct backends in range; all backends
		// when the subset size is at least their number
		for frontend := 0; frontend < 50; frontend++ {
			for _, n := range []int{1, 2, 7, 64, 100} {
				s, err := RingsteadySubset(frontend, n, n+3, scaling)
				if err != nil || len(s) != n || !distinctBelow(s, n) {
					t.Fatalf("RingsteadySubset(%d, %d, %d, %v) = %v, %v", frontend, n, n+3, scaling, s, err)
				}
			}
		}
	}
	for frontend := 0; frontend < 50; frontend++ {
		for _, lot := range []int{1, 3, 10} {
			s, err := RocksteadierSubset(frontend, 37, 37, lot)
			if err != nil || len(s) != 37 || !distinctBelow(s, 37) {
				t.Fatalf("RocksteadierSubset(%d, 37, 37, %d) = %v, %v", frontend, lot, s, err)
			}
		}
	}
	_, err := RingsteadySubset(-1, 10, 2, true)
	wantError(t, err, "22023", "frontend must be at least 0, got -1")
	_, err = RocksteadierSubset(0, 0, 2, 10)
	wantError(t, err, "22023", "number of backends must be at least 1, got 0")
	_, err = RocksteadierSubset(0, 10, 2, 0)
	wantError(t, err, "22023", "lot size must be between 1 and 65536, got 0")
	_, err = RingsteadySubset(0, 1<<25, 1<<25, true)
	wantError(t, err, "54000", "subset of 33554432 backends is too large")
	_, err = RocksteadierSubset(0, 1<<30, 1<<20, 65536)
	wantError(t, err, "54000", "use a smaller lot size")
}

func distinctBelow(s []int, n int) bool {
	seen := map[int]bool{}
	for _, v := range s {
		if v < 0 || v >= n || seen[v] {
			return false
		}
		seen[v] = true
	}
	return true
}

const smallRing = `{"part_power": 2, "replicas": 2, "seed": 0,
 "nodes": [{"id": 2, "zone": 1, "region": 0, "weight": 1}, {"id": 1, "zone": 0, "region": 0, "weight": 1},
           {"id": 3, "zone": 2, "weight": 1}],
 "assignment": [[1, 2, 3, 1], [2, 3, 1, 3]]}`

func TestRing(t *testing.T) {
	r, err := ParseRingString(smallRing)
	if err != nil {
		t.Fatal(err)
	}
	if r.Nodes[0].ID != 1 || r.Partition(0) != 0 || r.Partition(1<<63) != 2 || r.Partition(^uint64(0)) != 3 {
		t.Errorf("nodes %v, partitions %d %d %d", r.Nodes, r.Partition(0), r.Partition(1<<63), r.Partition(^uint64(0)))
	}
	if got := fmt.Sprint(r.NodesOf(1 << 63)); got != "[3 1]" {
		t.Errorf("NodesOf = %s", got)
	}
	if got := fmt.Sprint(r.NodesOfString("k")); got != fmt.Sprint(r.NodesOf(XXH3String("k"))) {
		t.Errorf("NodesOfString = %s", got)
	}
	// handoffs: never a primary, never twice, at most the other nodes
	for x := 0; x < 4; x++ {
		h, err := r.PartitionHandoffNodes(x, 5)
		p, _ := r.PartitionNodes(x)
		if err != nil || len(h) != 1 || h[0] == p[0] || h[0] == p[1] {
			t.Errorf("partition %d: primaries %v, handoffs %v, %v", x, p, h, err)
		}
	}
	_, err = r.PartitionNodes(4)
	wantError(t, err, "22023", "partition must be between 0 and 3, got 4")
	_, err = r.HandoffNodes(0, -1)
	wantError(t, err, "22023", "count must be between 0 and 65535, got -1")
	for _, bad := range []struct{ text, state, msg string }{
		{strings.Replace(smallRing, `[2, 3, 1, 3]`, `[2, 3, 1, 1]`, 1), "22P02", "partition 3 has two replicas on node 1"},
		{strings.Replace(smallRing, `[2, 3, 1, 3]`, `[2, 3, 1, 9]`, 1), "22P02", "node 9, which is not in the ring"},
		{strings.Replace(smallRing, `[2, 3, 1, 3]`, `[2, 3, 1]`, 1), "22P02", "row 1 of the assignment has 3 node ids"},
		{strings.Replace(smallRing, `"part_power": 2`, `"part_power": 25`, 1), "22P02", "part power must be between 1 and 24, got 25"},
		{strings.Replace(smallRing, `"id": 3`, `"id": 2`, 1), "22P02", "node id 2 appears twice"},
		{strings.Replace(smallRing, `"id": 3, "zone": 2, "weight": 1`, `"id": 3, "zone": 2, "weight": -1`, 1), "22P02", "weight of node 3 must not be negative"},
		{strings.Replace(smallRing, `"seed": 0`, `"seed": 0.5`, 1), "22P02", "invalid input syntax"},
		{smallRing + " x", "22P02", "text after the ring"},
	} {
		_, err := ParseRingString(bad.text)
		wantError(t, err, bad.state, bad.msg)
	}
}

// Published vectors: LLVM's unit test of its XXH3 port
// (llvm/unittests/Support/xxhashTest.cpp, test xxh3): prefixes of a
// 2243-byte xorshift buffer, seed 0.  The values agree with xxhsum -H3 too.
func TestXXH3PublishedVectors(t *testing.T) {
	a := make([]byte, 2243)
	x := uint64(1)
	for i := range a {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		a[i] = byte(x)
	}
	for _, v := range []struct {
		n    int
		want uint64
	}{
		{0, 0x2d06800538d394c2}, {1, 0xd0d496e05c553485}, {2, 0x84d625edb7055eac},
		{3, 0x6ea2d59aca5c3778}, {4, 0xbf65290914e80242}, {5, 0xc01fd099ad4fc8e4},
		{6, 0x9e3ea8187399caa5}, {7, 0x9da8b60540644f5a}, {8, 0xabc1413da6cd0209},
		{9, 0x8bc89400bfed51f6}, {16, 0x7e46916754d7c9b8}, {17, 0xed4be912ba5f836d},
		{32, 0xf59b59b58c304fd1}, {33, 0x9013fb74ca603e0c}, {64, 0xfa5271fcce0db1c3},
		{65, 0x79c42431727f1012}, {96, 0x591ee0ddf9c9ccd1}, {97, 0x8ffc6a3111fe19da},
		{128, 0x06a146ee9a2da378}, {129, 0xbc7138129bf065da}, {403, 0xcefeb3ffa532ad8c},
		{512, 0xcdfa6b6268e3650f}, {513, 0x4bb5d42742f9765f}, {2048, 0x330ce110cbb79eae},
		{2049, 0x3ba6afa0249fef9a}, {2240, 0xd61d4d2a94e926a8}, {2243, 0x0979f786a24edde7},
	} {
		if got := XXH3(a[:v.n]); got != v.want {
			t.Errorf("XXH3 of the first %d bytes = %#016x, want %#016x", v.n, got, v.want)
		}
	}
}

// XXH3Int64 against the reference: XXH3-64 of the value's 8 little-endian
// bytes as computed by `xxhsum -H3` (xxHash 0.8.1, Debian 12) and Debian's
// python3-xxhash (xxhash.xxh3_64_intdigest(struct.pack('<q', v))), which
// agree; hash4j's hashLongToLong(v) is the same value.
func TestXXH3Int64(t *testing.T) {
	for _, v := range []struct {
		in   int64
		want uint64
	}{
		{0, 0xc77b3abb6f87acd9}, {1, 0x2fbc593564db792e}, {-1, 0x5111c7e47d784413},
		{42, 0xd5a6f8c838df27c8}, {math.MaxInt64, 0xa233cf376558df46}, {math.MinInt64, 0x828f2476789a0e5f},
		{1<<53 + 1, 0x0ff84143ab99dcd0}, {-123456789012345, 0x15b0b82581adf205},
	} {
		if got := XXH3Int64(v.in); got != v.want {
			t.Errorf("XXH3Int64(%d) = %#016x, want %#016x", v.in, got, v.want)
		}
	}
}

// XXH3Int64 of random values against python3-xxhash, run now (skipped where
// /usr/bin/python3 has no xxhash module).
func TestXXH3Int64AgainstPythonXXHash(t *testing.T) {
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	values := make([]string, 500)
	ints := make([]int64, len(values))
	for i := range values {
		ints[i] = int64(rng.Uint64())
		if i%5 == 0 {
			ints[i] = rng.Int63n(2000) - 1000
		}
		values[i] = strconv.FormatInt(ints[i], 10)
	}
	cmd := exec.Command("/usr/bin/python3", "-c", `import struct, sys, xxhash
for line in sys.stdin:
    print(xxhash.xxh3_64_intdigest(struct.pack('<q', int(line))))`)
	cmd.Stdin = strings.NewReader(strings.Join(values, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("no reference: /usr/bin/python3 with python3-xxhash: %v", err)
	}
	lines := strings.Fields(string(out))
	if len(lines) != len(ints) {
		t.Fatalf("the reference gave %d values for %d", len(lines), len(ints))
	}
	for i, v := range ints {
		want, _ := strconv.ParseUint(lines[i], 10, 64)
		if got := XXH3Int64(v); got != want {
			t.Errorf("XXH3Int64(%d) = %d, python3-xxhash says %d", v, got, want)
		}
	}
}

// Every problem of a ring's text is 22P02, as the extension's input raises
// it for a problem found in a value (a 22023 here once; test/check-clients
// found it).
func TestRingValueErrors(t *testing.T) {
	for _, text := range []string{
		`{"part_power": 0, "replicas": 1, "nodes": [{"id": 1, "zone": 0, "weight": 1}], "assignment": [[1]]}`,
		`{"part_power": 1, "replicas": 0, "nodes": [{"id": 1, "zone": 0, "weight": 1}], "assignment": []}`,
		`{"part_power": 1, "replicas": 1, "nodes": [], "assignment": [[1, 1]]}`,
		`{"part_power": 1, "replicas": 1, "nodes": [{"id": 1, "zone": 0, "weight": -1}], "assignment": [[1, 1]]}`,
		`{"part_power": 1, "replicas": 1, "nodes": [{"id": 1, "zone": 0, "weight": 0}], "assignment": [[1, 1]]}`,
		`{"part_power": 24, "replicas": 5, "nodes": [{"id": 1, "zone": 0, "weight": 1}], "assignment": []}`,
	} {
		_, err := ParseRingString(text)
		var e *Error
		if !errors.As(err, &e) || e.SQLState != "22P02" {
			t.Errorf("ParseRingString(%s): want a 22P02 error, got %v", text, err)
		}
	}
}
