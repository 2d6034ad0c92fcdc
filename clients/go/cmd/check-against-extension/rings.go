package main

import (
	"fmt"
	"strconv"
	"strings"

	sub "subsetting/clients/go"
)

// Rings of several part powers, replica counts, zones and regions, built by
// the extension (ring_build); the client reads their text form and looks up
// keys, partitions and handoff nodes.

func intArray(a []int) string {
	return "ARRAY[" + strings.Trim(strings.Join(strings.Fields(fmt.Sprint(a)), ","), "[]") + "]"
}

func ringFamilies() []family {
	var out []family
	powers := []int{1, 2, 3, 4, 6, 8, 10, 12, 17}
	for i, pp := range powers {
		nodes := 1 + rng.Intn(40)
		replicas := 1 + rng.Intn(4)
		if replicas > nodes {
			replicas = nodes
		}
		if pp == 17 {
			replicas = 1 + rng.Intn(2)
		}
		zonesN, regionsN := 1+rng.Intn(6), 1+rng.Intn(3)
		var ids, zones, regions []int
		var weights []string
		used := map[int]bool{}
		for len(ids) < nodes {
			id := rng.Intn(100000) - 1000
			if used[id] {
				continue
			}
			used[id] = true
			ids = append(ids, id)
			zones = append(zones, rng.Intn(zonesN)-1)
			regions = append(regions, rng.Intn(regionsN))
			w := "1"
			switch rng.Intn(5) {
			case 0:
				w = strconv.FormatFloat(0.1+rng.Float64()*10, 'g', -1, 64)
			case 1:
				w = strconv.Itoa(1 + rng.Intn(5))
			case 2:
				if len(ids) > replicas {
					w = "0"
				}
			}
			weights = append(weights, w)
		}
		seed := rng.Int63() - rng.Int63()
		build := fmt.Sprintf("ring_build(%s, ARRAY[%s]::float8[], %s, %s, part_power => %d, replicas => %d, seed => %d)",
			intArray(ids), strings.Join(weights, ","), intArray(zones), intArray(regions), pp, replicas, seed)
		ringStandIn = fmt.Sprintf("ring_build(ARRAY[1,2,3,4], ARRAY[1,1,1,1]::float8[], ARRAY[0,1,2,3], part_power => %d, replicas => 1)", pp)
		rows, err := psql("SELECT " + build + "::text;")
		name := fmt.Sprintf("ring %d (2^%d partitions, %d replicas, %d nodes)", i, pp, replicas, nodes)
		if err != nil || len(rows) != 1 {
			fmt.Printf("%s: ring_build failed (%v), skipped\n", name, err)
			continue
		}
		r, err := sub.ParseRingString(rows[0])
		f := family{name: name, with: "rr AS MATERIALIZED (SELECT " + build + " AS ring)", from: "rr"}
		if err != nil {
			f.cases = append(f.cases, testCase{"'parsed'", "parse error: " + err.Error()})
			out = append(out, f)
			continue
		}
		for j := 0; j < 700; j++ {
			k := randomKey()
			switch j % 7 {
			case 0:
				f.cases = add(f.cases, fmt.Sprintf("ring_partition(rr.ring, %s)", bigintLit(k)), itoa(r.Partition(k)), nil)
			case 1:
				f.cases = add(f.cases, fmt.Sprintf("ring_nodes(rr.ring, %s)", bigintLit(k)), arrayText(r.NodesOf(k)), nil)
			case 2:
				s := randomText()
				f.cases = add(f.cases, fmt.Sprintf("ring_nodes(rr.ring, %s)", textLit(s)), arrayText(r.NodesOfString(s)), nil)
			case 3:
				x := rng.Intn(1<<pp + 2)
				if j%5 == 0 {
					x = -1
				}
				v, err := r.PartitionNodes(x)
				f.cases = add(f.cases, fmt.Sprintf("ring_partition_nodes(rr.ring, %d)", x), arrayText(v), err)
			case 4, 5:
				x := rng.Intn(1 << pp)
				c := rng.Intn(nodes + 3)
				if j%35 == 4 {
					c = -1
				}
				v, err := r.PartitionHandoffNodes(x, c)
				f.cases = add(f.cases, fmt.Sprintf("ring_partition_handoff_nodes(rr.ring, %d, %d)", x, c), arrayText(v), err)
			default:
				b := randomBytes(rng.Intn(40))
				c := rng.Intn(nodes + 1)
				v, err := r.HandoffNodesBytes(b, c)
				f.cases = add(f.cases, fmt.Sprintf("ring_handoff_nodes(rr.ring, %s, %d)", byteaLit(b), c), arrayText(v), err)
			}
		}
		out = append(out, f)
	}
	return out
}
