// Command bench times two heavy calls of the package, for comparison with the
// extension's SQL time for the same call: RocksteadierSubset(5, 2147483647,
// 300, 65536) and parsing a partition ring's text (the file named by its one
// argument, e.g. the output of SELECT ring_build(...)::text).  It prints two
// JSON lines {"case": ..., "seconds": S} on stdout, S the best of 3 runs
// (wall clock), and asserts nothing about time.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	sub "subsetting"
)

const runs = 3

func best(f func() error) (float64, error) {
	b := -1.0
	for i := 0; i < runs; i++ {
		t0 := time.Now()
		if err := f(); err != nil {
			return 0, err
		}
		s := time.Since(t0).Seconds()
		if b < 0 || s < b {
			b = s
		}
	}
	return b, nil
}

// emit prints {"case": NAME, "seconds": S}, spaced as the other clients'
// benchmark programs print it (and without escaping NAME's '>').
func emit(name string, seconds float64) {
	var quoted bytes.Buffer
	enc := json.NewEncoder(&quoted)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(name)
	fmt.Printf("{\"case\": %s, \"seconds\": %s}\n",
		bytes.TrimSpace(quoted.Bytes()), strconv.FormatFloat(seconds, 'g', -1, 64))
}

func die(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 2 {
		die("usage: bench RINGFILE (a file holding a ring's text, e.g. SELECT ring_build(...)::text)")
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		die("%v", err)
	}
	text := string(data)

	s, err := best(func() error {
		_, err := sub.RocksteadierSubset(5, 2147483647, 300, 65536)
		return err
	})
	if err != nil {
		die("rocksteadier_subset: %v", err)
	}
	emit("rocksteadier_subset(5, 2147483647, 300, lot_size => 65536)", s)

	var ring *sub.Ring
	s, err = best(func() error {
		r, err := sub.ParseRingString(text)
		ring = r
		return err
	})
	if err != nil {
		die("%s: %v", os.Args[1], err)
	}
	emit(fmt.Sprintf("ring text of part power %d", ring.PartPower), s)
}
