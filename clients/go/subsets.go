package subsetting

import "math/bits"

// MaxSubsetMembers is the most members a subset may have, as the extension.
const MaxSubsetMembers = 1 << 24

// MaxLotSize is the largest Rocksteadier lot size.
const MaxLotSize = 65536

const maxRocksteadierSteps = 1 << 30

// checkSubsetArgs checks the arguments in the extension's order (then
// lotSize if checkLot) and gives the number of members.
func checkSubsetArgs(frontend, backends, subsetSize, lotSize int, checkLot bool) (int, error) {
	for _, a := range []struct {
		name string
		v    int
	}{{"frontend", frontend}, {"number of backends", backends}, {"subset size", subsetSize}} {
		if err := int4(a.name, a.v); err != nil {
			return 0, err
		}
	}
	if frontend < 0 {
		return 0, invalid("frontend must be at least 0, got %d", frontend)
	}
	if backends < 1 {
		return 0, invalid("number of backends must be at least 1, got %d", backends)
	}
	if subsetSize < 0 {
		return 0, invalid("subset size must be at least 0, got %d", subsetSize)
	}
	if checkLot && (lotSize < 1 || lotSize > MaxLotSize) {
		return 0, invalid("lot size must be between 1 and %d, got %d", MaxLotSize, lotSize)
	}
	members := subsetSize
	if backends < members {
		members = backends
	}
	if members > MaxSubsetMembers {
		return 0, limit("subset of %d backends is too large (a subset has at most %d members)", members, MaxSubsetMembers)
	}
	return members, nil
}

func positionWidth(backends uint64) int {
	if backends <= 1 {
		return 0
	}
	return bits.Len64(backends - 1)
}

func countCongruent(backends, residue uint64, nbits int) uint64 {
	if residue >= backends {
		return 0
	}
	return ((backends - residue - 1) >> nbits) + 1
}

func countBackendsBefore(backends uint64, width int, lim uint64) uint64 {
	if lim>>width != 0 {
		return backends
	}
	var count, residue uint64
	for s := 0; s < width; s++ {
		if (lim>>(width-1-s))&1 != 0 {
			count += countCongruent(backends, residue, s+1)
			residue |= 1 << s
		}
	}
	return count
}

func ringsteadyStartRank(frontend, backends uint32, backendScaling bool) uint32 {
	pos := bits.Reverse64(uint64(frontend))
	width := positionWidth(uint64(backends))
	var rank uint64
	if backendScaling {
		hi, lo := bits.Mul64(pos, uint64(backends))
		rank = hi
		if lo != 0 {
			rank++
		}
	} else {
		var lim uint64
		if width == 0 {
			if pos != 0 {
				lim = 1
			}
		} else {
			lim = pos >> (64 - width)
			if pos<<width != 0 {
				lim++
			}
		}
		rank = countBackendsBefore(uint64(backends), width, lim)
	}
	if rank == uint64(backends) {
		return 0
	}
	return uint32(rank)
}

// ringCursor walks the Ringsteady ring order of some number of backends.
type ringCursor struct {
	backends uint64
	width    int
	backend  uint64
}

func cursorAtRank(backends, rank uint32) ringCursor {
	width := positionWidth(uint64(backends))
	var backend uint64
	remaining := uint64(rank)
	for s := 0; s < width; s++ {
		below := countCongruent(uint64(backends), backend, s+1)
		if remaining >= below {
			remaining -= below
			backend |= 1 << s
		}
	}
	return ringCursor{backends: uint64(backends), width: width, backend: backend}
}

func reversedIncrement(index uint64, width int) uint64 {
	zeros := ^index & ((uint64(1) << width) - 1)
	if zeros == 0 {
		return 0
	}
	highest := uint64(1) << (bits.Len64(zeros) - 1)
	return (index & (highest - 1)) | highest
}

func (c *ringCursor) next() uint32 {
	b := uint32(c.backend)
	n := reversedIncrement(c.backend, c.width)
	if n >= c.backends {
		n = reversedIncrement(n, c.width)
	}
	c.backend = n
	return b
}

// RingsteadySubset is the subset of subsetSize backends (of backends, numbered
// 0 .. backends-1) that frontend task number frontend connects to, by
// Ringsteady subsetting, in ring order: the extension's ringsteady_subset.
// backendScaling true is the extension's default.
func RingsteadySubset(frontend, backends, subsetSize int, backendScaling bool) ([]int, error) {
	members, err := checkSubsetArgs(frontend, backends, subsetSize, 0, false)
	if err != nil {
		return nil, err
	}
	out := make([]int, members)
	if members == 0 {
		return out, nil
	}
	c := cursorAtRank(uint32(backends), ringsteadyStartRank(uint32(frontend), uint32(backends), backendScaling))
	for i := range out {
		out[i] = int(c.next())
	}
	return out, nil
}

func shuffleRowsFrom(frontendLot, backendLot, lotSize, lowestRow uint32, perm []uint32) {
	state := splitmixMix(uint64(frontendLot)<<32 | uint64(backendLot))
	lowestStep := lowestRow
	if lowestStep < 1 {
		lowestStep = 1
	}
	for i := uint32(0); i < lotSize; i++ {
		perm[i] = i
	}
	for i := lotSize; i > lowestStep; {
		i--
		r, _ := bits.Mul64(splitmixNext(&state), uint64(i)+1)
		perm[i], perm[r] = perm[r], perm[i]
	}
}

// RocksteadierSubset is the subset of subsetSize backends that frontend task
// number frontend connects to, by Rocksteadier subsetting with lots of
// lotSize backends (1 .. 65536; the extension's default is 10): the
// extension's rocksteadier_subset.
func RocksteadierSubset(frontend, backends, subsetSize, lotSize int) ([]int, error) {
	if err := int4("lot size", lotSize); err != nil {
		return nil, err
	}
	members, err := checkSubsetArgs(frontend, backends, subsetSize, lotSize, true)
	if err != nil {
		return nil, err
	}
	N, L, count := uint32(backends), uint32(lotSize), uint32(members)
	lots := (N-1)/L + 1
	if count > 0 {
		visits := uint64(lots)
		if uint64(count)+1 < visits {
			visits = uint64(count) + 1
		}
		if steps := (visits + 1) * uint64(L); steps > maxRocksteadierSteps {
			return nil, limit("rocksteadier subset of %d backends in lots of %d is too large: it would shuffle %d tasks, the limit is %d; use a smaller lot size or subset size",
				members, lotSize, steps, maxRocksteadierSteps)
		}
	}
	out := make([]int, members)
	if count == 0 {
		return out, nil
	}
	lastLot := lots - 1
	padding := uint32(uint64(lots)*uint64(L) - uint64(N))
	frontendLot := uint32(frontend) / L
	perm := make([]uint32, L)
	passStart := make([]uint32, L+1)
	passFilled := make([]uint32, L+1)

	c := cursorAtRank(L, uint32(frontend)%L)
	firstRow := c.next()
	var passes uint32
	if count <= lots-1 {
		passes = 1
	} else {
		last := make([]uint32, L)
		shuffleRowsFrom(frontendLot, lastLot, L, 0, last)
		for passes = 0; passStart[passes] < count; passes++ {
			row := (firstRow + passes) % L
			add := lots
			if last[row] >= L-padding {
				add--
			}
			passStart[passes+1] = passStart[passes] + add
			passFilled[passes] = 0
		}
	}
	lowestRow := uint32(0)
	if firstRow+passes <= L {
		lowestRow = firstRow
	}
	c = cursorAtRank(lots, ringsteadyStartRank(frontendLot, lots, true))
	written := uint32(0)
	for visit := uint32(0); visit < lots && written < count; visit++ {
		lot := c.next()
		shuffleRowsFrom(frontendLot, lot, L, lowestRow, perm)
		for p := uint32(0); p < passes; p++ {
			offset := perm[(firstRow+p)%L]
			if lot == lastLot && offset >= L-padding {
				continue
			}
			index := passStart[p] + passFilled[p]
			passFilled[p]++
			if index < count {
				out[index] = int(uint64(lot)*uint64(L) + uint64(offset))
				written++
			}
		}
	}
	return out, nil
}
