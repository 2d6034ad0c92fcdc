package subsetting

import (
	"bytes"
	"crypto/md5"
	"encoding/json"
	"math"
	"sort"
	"strconv"
)

// Limits of a partition ring, as the extension's.
const (
	RingMinPartPower = 1
	RingMaxPartPower = 24
	RingMaxNodes     = 65535
	ringMaxSlots     = 1 << 26
)

// RingNode is a storage node of a ring.
type RingNode struct {
	ID     int
	Zone   int
	Region int
	Weight float64
}

// Ring is a partition ring read from the extension's text form (the output
// of the partition_ring type, e.g. SELECT ring::text).  It splits the 64-bit
// key space into 2^PartPower partitions, each with Replicas replicas on
// distinct nodes.  A Ring is immutable and safe for concurrent use.
type Ring struct {
	PartPower int
	Replicas  int
	Seed      int64
	// Nodes sorted by id.
	Nodes []RingNode
	// byPartition[x*Replicas+rep]: the node index of replica rep of partition x
	byPartition []uint16
	zoneOf      []uint32
	regionOf    []uint32
	zones       uint32
	regions     uint32
}

type ringJSON struct {
	PartPower  *int64 `json:"part_power"`
	Replicas   *int64 `json:"replicas"`
	Seed       int64  `json:"seed"`
	Nodes      *[]nodeJSON
	Assignment *[][]int32
}

type nodeJSON struct {
	ID     *int32   `json:"id"`
	Zone   *int32   `json:"zone"`
	Region int32    `json:"region"`
	Weight *float64 `json:"weight"`
}

func malformed(format string, args ...interface{}) error {
	e := invalid(format, args...).(*Error)
	e.SQLState = "22P02"
	return e
}

// ParseRing reads a ring from its text form and checks it as the extension's
// partition_ring input does: sizes within the limits, node ids distinct,
// weights finite and non-negative with enough positive ones, the assignment
// of Replicas rows of 2^PartPower known node ids, the replicas of each
// partition on distinct nodes.  It reads the JSON with encoding/json, which
// is laxer than the extension in two ways that never change a lookup: key
// names match case-insensitively, and a key given twice keeps its last value.
// Every problem of the text is a 22P02 error (invalid_text_representation),
// as the extension's input raises it for a problem found in a value; error
// messages and the order of the checks may differ from the extension's.
func ParseRing(text []byte) (*Ring, error) {
	var j ringJSON
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return nil, malformed("invalid input syntax for type partition_ring: %v", err)
	}
	if dec.More() {
		return nil, malformed("invalid input syntax for type partition_ring: text after the ring")
	}
	if j.PartPower == nil || j.Replicas == nil || j.Nodes == nil || j.Assignment == nil {
		return nil, malformed("invalid input syntax for type partition_ring: \"part_power\", \"replicas\", \"nodes\" and \"assignment\" are required")
	}
	pp, R, n := *j.PartPower, *j.Replicas, int64(len(*j.Nodes))
	switch {
	case pp < RingMinPartPower || pp > RingMaxPartPower:
		return nil, malformed("part power must be between %d and %d, got %d", RingMinPartPower, RingMaxPartPower, pp)
	case R < 1:
		return nil, malformed("replicas must be at least 1, got %d", R)
	case n < 1:
		return nil, malformed("a ring needs at least one node")
	case n > RingMaxNodes:
		return nil, malformed("too many nodes: %d (at most %d)", n, RingMaxNodes)
	case R > ringMaxSlots>>pp:
		return nil, malformed("%d replicas of 2^%d partitions is too many (at most %d partition-replicas)", R, pp, ringMaxSlots)
	}
	parts := 1 << pp
	if int64(len(*j.Assignment)) != R {
		return nil, malformed("the assignment has %d rows, not one per replica (%d)", len(*j.Assignment), R)
	}
	for rep, row := range *j.Assignment {
		if len(row) != parts {
			return nil, malformed("row %d of the assignment has %d node ids, not one per partition (%d)", rep, len(row), parts)
		}
	}
	r := &Ring{PartPower: int(pp), Replicas: int(R), Seed: j.Seed}
	positive := int64(0)
	for _, nd := range *j.Nodes {
		if nd.ID == nil || nd.Zone == nil || nd.Weight == nil {
			return nil, malformed("a node needs \"id\", \"zone\" and \"weight\"")
		}
		w := *nd.Weight
		switch {
		case math.IsNaN(w) || math.IsInf(w, 0):
			return nil, malformed("weight of node %d must be finite, got %v", *nd.ID, w)
		case w < 0:
			return nil, malformed("weight of node %d must not be negative, got %v", *nd.ID, w)
		case w > 0:
			positive++
		}
		r.Nodes = append(r.Nodes, RingNode{ID: int(*nd.ID), Zone: int(*nd.Zone), Region: int(nd.Region), Weight: w + 0})
	}
	sort.Slice(r.Nodes, func(a, b int) bool { return r.Nodes[a].ID < r.Nodes[b].ID })
	index := make(map[int]uint16, len(r.Nodes))
	for i, nd := range r.Nodes {
		if i > 0 && r.Nodes[i-1].ID == nd.ID {
			return nil, malformed("node id %d appears twice", nd.ID)
		}
		index[nd.ID] = uint16(i)
	}
	if positive == 0 {
		return nil, malformed("all weights are zero")
	}
	if R > positive {
		return nil, malformed("%d replicas need at least %d nodes of positive weight, got %d", R, R, positive)
	}
	r.byPartition = make([]uint16, parts*int(R))
	for rep, row := range *j.Assignment {
		for x, id := range row {
			v, ok := index[int(id)]
			if !ok {
				return nil, malformed("replica %d of partition %d is on node %d, which is not in the ring", rep, x, id)
			}
			r.byPartition[x*int(R)+rep] = v
		}
	}
	for x := 0; x < parts; x++ {
		row := r.byPartition[x*int(R) : (x+1)*int(R)]
		for a := range row {
			for b := 0; b < a; b++ {
				if row[a] == row[b] {
					return nil, malformed("partition %d has two replicas on node %d", x, r.Nodes[row[a]].ID)
				}
			}
		}
	}
	r.buildDomains()
	return r, nil
}

// ParseRingString is ParseRing of a string.
func ParseRingString(text string) (*Ring, error) { return ParseRing([]byte(text)) }

// failure domains numbered densely: (region, zone) pairs and regions, sorted
func (r *Ring) buildDomains() {
	type zk struct{ region, zone int }
	zones := map[zk]bool{}
	regions := map[int]bool{}
	for _, nd := range r.Nodes {
		zones[zk{nd.Region, nd.Zone}] = true
		regions[nd.Region] = true
	}
	zl := make([]zk, 0, len(zones))
	for z := range zones {
		zl = append(zl, z)
	}
	sort.Slice(zl, func(a, b int) bool {
		if zl[a].region != zl[b].region {
			return zl[a].region < zl[b].region
		}
		return zl[a].zone < zl[b].zone
	})
	rl := make([]int, 0, len(regions))
	for g := range regions {
		rl = append(rl, g)
	}
	sort.Ints(rl)
	zi := map[zk]uint32{}
	for i, z := range zl {
		zi[z] = uint32(i)
	}
	ri := map[int]uint32{}
	for i, g := range rl {
		ri[g] = uint32(i)
	}
	r.zoneOf = make([]uint32, len(r.Nodes))
	r.regionOf = make([]uint32, len(r.Nodes))
	for i, nd := range r.Nodes {
		r.zoneOf[i] = zi[zk{nd.Region, nd.Zone}]
		r.regionOf[i] = ri[nd.Region]
	}
	r.zones = uint32(len(zl))
	r.regions = uint32(len(rl))
}

// Partition is the partition of a 64-bit key: its top PartPower bits, as the
// extension's ring_partition(ring, bigint) (a SQL bigint k is the key
// uint64(k)).  The key is taken as already hashed: hash ids first (e.g.
// XXH3 of their bytes), or sequential ids all land in partition 0.
func (r *Ring) Partition(key uint64) int { return int(key >> (64 - r.PartPower)) }

// PartitionString is ring_partition(ring, text): Partition(XXH3String(key)).
func (r *Ring) PartitionString(key string) int { return r.Partition(XXH3String(key)) }

// PartitionBytes is ring_partition(ring, bytea) (and of a uuid's 16 bytes,
// ring_partition(ring, uuid)): Partition(XXH3(key)).
func (r *Ring) PartitionBytes(key []byte) int { return r.Partition(XXH3(key)) }

func (r *Ring) replicas(x int) []int {
	out := make([]int, r.Replicas)
	for rep := range out {
		out[rep] = r.Nodes[r.byPartition[x*r.Replicas+rep]].ID
	}
	return out
}

// NodesOf is the node ids of the replicas of a key's partition, primary first:
// ring_nodes(ring, bigint).
func (r *Ring) NodesOf(key uint64) []int { return r.replicas(r.Partition(key)) }

// NodesOfString is ring_nodes(ring, text).
func (r *Ring) NodesOfString(key string) []int { return r.NodesOf(XXH3String(key)) }

// NodesOfBytes is ring_nodes(ring, bytea) (and of a uuid's 16 bytes, ring_nodes(ring, uuid)).
func (r *Ring) NodesOfBytes(key []byte) []int { return r.NodesOf(XXH3(key)) }

func (r *Ring) checkPartition(partition int) error {
	if partition < 0 || partition >= 1<<r.PartPower {
		return invalid("partition must be between 0 and %d, got %d", 1<<r.PartPower-1, partition)
	}
	return nil
}

// PartitionNodes is ring_partition_nodes(ring, partition).
func (r *Ring) PartitionNodes(partition int) ([]int, error) {
	if err := r.checkPartition(partition); err != nil {
		return nil, err
	}
	return r.replicas(partition), nil
}

func checkHandoffCount(count int) error {
	if count < 0 || count > RingMaxNodes {
		return invalid("count must be between 0 and %d, got %d", RingMaxNodes, count)
	}
	return nil
}

// PartitionHandoffNodes is ring_partition_handoff_nodes(ring, partition,
// count): up to count further nodes to try when the partition's primaries
// are down, in the order of OpenStack Swift's get_more_nodes (nodes in new
// regions first, then in new zones, then the others; never a primary, never
// a node twice).  The extension's default count is 3.
func (r *Ring) PartitionHandoffNodes(partition, count int) ([]int, error) {
	if err := checkHandoffCount(count); err != nil {
		return nil, err
	}
	if err := r.checkPartition(partition); err != nil {
		return nil, err
	}
	return r.handoff(partition, count), nil
}

// HandoffNodes is ring_handoff_nodes(ring, bigint, count):
// PartitionHandoffNodes(Partition(key), count).
func (r *Ring) HandoffNodes(key uint64, count int) ([]int, error) {
	if err := checkHandoffCount(count); err != nil {
		return nil, err
	}
	return r.handoff(r.Partition(key), count), nil
}

// HandoffNodesString is ring_handoff_nodes(ring, text, count).
func (r *Ring) HandoffNodesString(key string, count int) ([]int, error) {
	return r.HandoffNodes(XXH3String(key), count)
}

// HandoffNodesBytes is ring_handoff_nodes(ring, bytea, count) (and of a uuid's 16 bytes).
func (r *Ring) HandoffNodesBytes(key []byte, count int) ([]int, error) {
	return r.HandoffNodes(XXH3(key), count)
}

func (r *Ring) handoff(partition, count int) []int {
	if count > len(r.Nodes) {
		count = len(r.Nodes)
	}
	out := make([]int, 0, count)
	R := r.Replicas
	parts := uint32(1) << r.PartPower
	inc := uint32(1)
	if parts > 65536 {
		inc = parts / 65536
	}
	digest := md5.Sum([]byte(strconv.Itoa(partition)))
	start := (uint32(digest[0])<<24 | uint32(digest[1])<<16 | uint32(digest[2])<<8 | uint32(digest[3])) >> (32 - r.PartPower)
	used := make([]bool, len(r.Nodes))
	usedZones := make([]bool, r.zones)
	usedRegions := make([]bool, r.regions)
	var nodesUsed, zonesUsed, regionsUsed uint32
	mark := func(set []bool, i uint32, counter *uint32) {
		if !set[i] {
			set[i] = true
			*counter++
		}
	}
	for rep := 0; rep < R; rep++ {
		nd := r.byPartition[partition*R+rep]
		mark(used, uint32(nd), &nodesUsed)
		mark(usedZones, r.zoneOf[nd], &zonesUsed)
		mark(usedRegions, r.regionOf[nd], &regionsUsed)
	}
	if count == 0 {
		return out
	}
	const (
		newRegion = iota
		newZone
		anyNode
	)
	done := func(pass int) bool {
		return (pass == newRegion && regionsUsed == r.regions) ||
			(pass == newZone && zonesUsed == r.zones) ||
			(pass == anyNode && nodesUsed == uint32(len(r.Nodes)))
	}
	for pass := newRegion; pass <= anyNode; pass++ {
		hp := start
		wrapped := false
		for {
			if !wrapped && hp >= parts {
				wrapped = true
				hp = inc - ((parts - start) % inc)
			}
			if wrapped && hp >= start {
				break
			}
			if done(pass) {
				break
			}
			for rep := 0; rep < R; rep++ {
				nd := r.byPartition[int(hp)*R+rep]
				zone, region := r.zoneOf[nd], r.regionOf[nd]
				if used[nd] || (pass == newRegion && usedRegions[region]) || (pass == newZone && usedZones[zone]) {
					continue
				}
				out = append(out, r.Nodes[nd].ID)
				mark(used, uint32(nd), &nodesUsed)
				if pass <= newZone {
					mark(usedZones, zone, &zonesUsed)
				}
				if pass == newRegion {
					mark(usedRegions, region, &regionsUsed)
				}
				if len(out) == count {
					return out
				}
				if done(pass) {
					break
				}
			}
			hp += inc
		}
	}
	return out
}
