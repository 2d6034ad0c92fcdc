// Command check-against-extension compares the Go client with the subsetting extension on
// random inputs: the extension, reached with psql (PGHOST, PGPORT, PGUSER,
// PGDATABASE as usual), computes the expected values.  The seed is printed
// and can be set with CLIENT_CROSSCHECK_SEED.  The last line says
// "N passed, M failed"; the exit status is 1 on any failure.
package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	sub "subsetting/clients/go"
)

type testCase struct {
	expr string // SQL expression giving a text
	want string
}

type family struct {
	name  string
	with  string // optional WITH clause (e.g. the ring)
	from  string // optional FROM item the expressions use
	cases []testCase
}

var (
	rng            *rand.Rand
	passed, failed int
	errorCases     []testCase
	ringStandIn    string
)

func main() {
	seed := time.Now().UnixNano() % 1000000000
	if s := os.Getenv("CLIENT_CROSSCHECK_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			fatal("CLIENT_CROSSCHECK_SEED must be an integer, got %q", s)
		}
		seed = v
	}
	fmt.Printf("crosscheck of the Go client, seed %d (CLIENT_CROSSCHECK_SEED=%d repeats it)\n", seed, seed)
	rng = rand.New(rand.NewSource(seed))
	if _, err := psql("SET client_min_messages = warning; CREATE EXTENSION IF NOT EXISTS subsetting;"); err != nil {
		fatal("cannot create the extension: %v", err)
	}
	run(xxh3Family())
	run(jumpFamily())
	run(keyedJumpFamily())
	run(anchorFamily())
	run(ringsteadyFamily())
	run(rocksteadierFamily())
	for _, f := range ringFamilies() {
		run(f)
	}
	run(family{name: "errors (SQLSTATE of bad arguments)", cases: errorCases})
	fmt.Printf("%d passed, %d failed\n", passed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}

func fatal(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "check-against-extension: "+format+"\n", args...)
	fmt.Printf("%d passed, %d failed\n", passed, failed+1)
	os.Exit(1)
}

func psql(script string) ([]string, error) {
	cmd := exec.Command("psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	s := strings.TrimSuffix(out.String(), "\n")
	if s == "" {
		return nil, nil
	}
	return strings.Split(s, "\n"), nil
}

const tryFunction = `CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $f$
DECLARE r text;
BEGIN
	EXECUTE 'SELECT (' || q || ')::text' INTO r;
	RETURN r;
EXCEPTION WHEN OTHERS THEN
	RETURN 'ERROR ' || SQLSTATE;
END $f$;
`

// run has the extension compute every case of f in one query and compares.
func run(f family) {
	if len(f.cases) == 0 {
		return
	}
	start := time.Now()
	var q strings.Builder
	q.WriteString(tryFunction)
	if f.with != "" {
		q.WriteString("WITH " + f.with + " ")
	}
	q.WriteString("SELECT v FROM ")
	if f.from != "" {
		q.WriteString(f.from + ", ")
	}
	q.WriteString("LATERAL (VALUES ")
	for i, c := range f.cases {
		if i > 0 {
			q.WriteString(",\n")
		}
		expr := c.expr
		if strings.HasPrefix(c.want, "ERROR ") {
			expr = "pg_temp.try(" + dollar(c.expr) + ")"
		}
		fmt.Fprintf(&q, "(%d, (%s)::text)", i, expr)
	}
	q.WriteString(") AS t(i, v) ORDER BY i;\n")
	rows, err := psql(q.String())
	if err != nil {
		failed += len(f.cases)
		fmt.Printf("%-40s %d cases: the query failed: %v\n", f.name, len(f.cases), err)
		return
	}
	if len(rows) != len(f.cases) {
		failed += len(f.cases)
		fmt.Printf("%-40s %d cases: %d rows came back\n", f.name, len(f.cases), len(rows))
		return
	}
	bad := 0
	for i, c := range f.cases {
		if rows[i] == c.want {
			passed++
			continue
		}
		failed++
		bad++
		if bad <= 10 {
			fmt.Printf("  MISMATCH %s: %s\n    extension: %s\n    Go client: %s\n", f.name, short(c.expr), short(rows[i]), short(c.want))
		}
	}
	fmt.Printf("%-40s %5d cases, %d failed (%.1f s)\n", f.name, len(f.cases), bad, time.Since(start).Seconds())
}

func short(s string) string {
	if len(s) > 300 {
		return s[:300] + fmt.Sprintf("... (%d characters)", len(s))
	}
	return s
}

func dollar(s string) string {
	tag := "$q$"
	for i := 0; strings.Contains(s, tag); i++ {
		tag = fmt.Sprintf("$q%d$", i)
	}
	return tag + s + tag
}

// add appends a case: want from the client's value, or, on an error, an
// error case whose SQLSTATE must match.
func add(cases []testCase, expr string, want string, err error) []testCase {
	if err != nil {
		var e *sub.Error
		if !errors.As(err, &e) {
			fatal("unexpected error type %T: %v", err, err)
		}
		// the error's own query has no rr: a ring of the same part power stands in
		expr = strings.ReplaceAll(expr, "rr.ring", ringStandIn)
		errorCases = append(errorCases, testCase{expr: expr, want: "ERROR " + e.SQLState})
		return cases
	}
	return append(cases, testCase{expr: expr, want: want})
}

// ---- random inputs ----

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rng.Read(b)
	return b
}

func byteaLit(b []byte) string { return `'\x` + hex.EncodeToString(b) + `'::bytea` }

func textLit(s string) string { return "convert_from(" + byteaLit([]byte(s)) + ", 'UTF8')" }

func uuidLit(b []byte) string {
	h := hex.EncodeToString(b)
	return "'" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:] + "'::uuid"
}

func bigintLit(k uint64) string { return fmt.Sprintf("'%d'::bigint", int64(k)) }

var runeSets = [][2]rune{{0x20, 0x7e}, {0xa0, 0xff}, {0x370, 0x3ff}, {0x4e00, 0x9fff}, {0x1f300, 0x1f64f}, {0x300, 0x36f}, {0x1, 0x1f}}

func randomText() string {
	n := rng.Intn(40)
	if rng.Intn(10) == 0 {
		n = rng.Intn(400)
	}
	var sb strings.Builder
	set := runeSets[rng.Intn(len(runeSets))]
	for i := 0; i < n; i++ {
		if rng.Intn(4) == 0 {
			set = runeSets[rng.Intn(len(runeSets))]
		}
		sb.WriteRune(set[0] + rune(rng.Intn(int(set[1]-set[0]+1))))
	}
	return sb.String()
}

func randomKey() uint64 {
	switch rng.Intn(10) {
	case 0:
		return []uint64{0, 1, math.MaxUint64, 1 << 63, 1<<63 - 1, 2}[rng.Intn(6)]
	case 1:
		return uint64(rng.Intn(1000))
	case 2:
		return uint64(-int64(rng.Intn(1000)))
	}
	return rng.Uint64()
}

func randomBuckets() int {
	switch rng.Intn(8) {
	case 0:
		return []int{1, 2, 3, math.MaxInt32, math.MaxInt32 - 1, 1 << 30, 1<<30 + 1}[rng.Intn(7)]
	case 1:
		return 1 + rng.Intn(16)
	}
	return 1 + rng.Intn(1<<uint(1+rng.Intn(31))-1)
}

func itoa(v int) string { return strconv.Itoa(v) }

func arrayText(a []int) string {
	s := make([]string, len(a))
	for i, v := range a {
		s[i] = strconv.Itoa(v)
	}
	return "{" + strings.Join(s, ",") + "}"
}

// ---- families ----

func xxh3Family() family {
	f := family{name: "xxh3_64 (bytea, text, uuid)"}
	var lengths []int
	for n := 0; n <= 300; n++ {
		lengths = append(lengths, n)
	}
	lengths = append(lengths, 1023, 1024, 1025, 1087, 1088, 1089, 2048, 4095, 4096, 4097, 8192)
	for i := 0; i < 3000; i++ {
		switch rng.Intn(4) {
		case 0:
			lengths = append(lengths, rng.Intn(17))
		case 1:
			lengths = append(lengths, 17+rng.Intn(112))
		case 2:
			lengths = append(lengths, 129+rng.Intn(112))
		default:
			lengths = append(lengths, 241+rng.Intn(6000))
		}
	}
	for _, n := range lengths {
		b := randomBytes(n)
		f.cases = append(f.cases, testCase{"xxh3_64(" + byteaLit(b) + ")", strconv.FormatInt(int64(sub.XXH3(b)), 10)})
	}
	for i := 0; i < 2000; i++ {
		s := randomText()
		if i == 0 {
			s = ""
		}
		f.cases = append(f.cases, testCase{"xxh3_64(" + textLit(s) + ")", strconv.FormatInt(int64(sub.XXH3String(s)), 10)})
	}
	for i := 0; i < 500; i++ {
		b := randomBytes(16)
		f.cases = append(f.cases, testCase{"xxh3_64(" + uuidLit(b) + ")", strconv.FormatInt(int64(sub.XXH3(b)), 10)})
	}
	return f
}

func jumpFamily() family {
	f := family{name: "jumpbackhash, jumphash (bigint)"}
	for i := 0; i < 10000; i++ {
		k, n := randomKey(), randomBuckets()
		if i < 40 {
			n = []int{0, -1, math.MinInt32, -5}[i%4]
		}
		if i%2 == 0 {
			v, err := sub.JumpBackHash(k, n)
			f.cases = add(f.cases, fmt.Sprintf("jumpbackhash(%s, %d)", bigintLit(k), n), itoa(v), err)
		} else {
			v, err := sub.JumpHash(k, n)
			f.cases = add(f.cases, fmt.Sprintf("jumphash(%s, %d)", bigintLit(k), n), itoa(v), err)
		}
	}
	return f
}

func keyedJumpFamily() family {
	f := family{name: "jumpbackhash, jumphash (text, bytea, uuid)"}
	for i := 0; i < 6000; i++ {
		n := randomBuckets()
		if i < 12 {
			n = []int{0, -3}[i%2]
		}
		var lit string
		var v int
		var err error
		back := i%2 == 0
		switch (i / 2) % 3 {
		case 0:
			s := randomText()
			lit = textLit(s)
			if back {
				v, err = sub.JumpBackHashString(s, n)
			} else {
				v, err = sub.JumpHashString(s, n)
			}
		case 1:
			b := randomBytes(rng.Intn(300))
			lit = byteaLit(b)
			if back {
				v, err = sub.JumpBackHashBytes(b, n)
			} else {
				v, err = sub.JumpHashBytes(b, n)
			}
		default:
			b := randomBytes(16)
			lit = uuidLit(b)
			if back {
				v, err = sub.JumpBackHashBytes(b, n)
			} else {
				v, err = sub.JumpHashBytes(b, n)
			}
		}
		fn := "jumphash"
		if back {
			fn = "jumpbackhash"
		}
		f.cases = add(f.cases, fmt.Sprintf("%s(%s, %d)", fn, lit, n), itoa(v), err)
	}
	return f
}

func anchorFamily() family {
	f := family{name: "jumpbackanchorhash and its states"}
	for set := 0; set < 300; set++ {
		var buckets int
		switch rng.Intn(4) {
		case 0:
			buckets = 1 + rng.Intn(8)
		case 1:
			buckets = 1 + rng.Intn(200)
		case 2:
			buckets = randomBuckets()
		default:
			buckets = 1 + rng.Intn(5000)
		}
		if set == 0 {
			buckets = 0
		}
		count := 0
		if buckets > 0 {
			limit := buckets
			if limit > 80 {
				limit = 80
			}
			count = rng.Intn(limit + 1)
			if rng.Intn(10) == 0 && buckets <= 80 {
				count = buckets - 1 // one bucket left
			}
		}
		seen := map[int]bool{}
		var removed []int
		for len(removed) < count {
			b := rng.Intn(buckets)
			if buckets > 200 && rng.Intn(2) == 0 {
				b = buckets - 1 - rng.Intn(20) // near the top: long chains
				if b < 0 {
					b = 0
				}
			}
			if !seen[b] {
				seen[b] = true
				removed = append(removed, b)
			}
		}
		// keys whose JumpBackHash bucket is removed: in a large set they
		// draw again in a large view (the rejection loop of uniformInt)
		keys := make([]uint64, 18)
		for i := range keys {
			keys[i] = randomKey()
			if b, err := sub.JumpBackHash(keys[i], buckets); err == nil && buckets > 100 && i%2 == 0 && !seen[b] {
				seen[b] = true
				removed = append(removed, b)
			}
		}
		if set%50 == 7 && count > 0 {
			removed = append(removed, removed[0]) // removed twice: an error
		}
		if set%50 == 9 {
			removed = append(removed, buckets) // out of range
		}
		h, err := sub.NewAnchorSet(buckets, removed)
		list := fmt.Sprintf("%d, '%s'::int[]", buckets, arrayText(removed))
		if err != nil {
			f.cases = add(f.cases, "jumpbackanchorhash(0::bigint, "+list+")", "", err)
			continue
		}
		state := h.State()
		f.cases = add(f.cases, "jumpbackanchorhash_state("+list+")", `\x`+hex.EncodeToString(state), nil)
		for i, k := range keys {
			v, err := h.Bucket(k)
			if i%3 == 0 {
				f.cases = add(f.cases, fmt.Sprintf("jumpbackanchorhash(%s, %s)", bigintLit(k), byteaLit(state)), itoa(v), err)
			} else {
				f.cases = add(f.cases, fmt.Sprintf("jumpbackanchorhash(%s, %s)", bigintLit(k), list), itoa(v), err)
			}
		}
		s := randomText()
		v, err := h.BucketString(s)
		f.cases = add(f.cases, fmt.Sprintf("jumpbackanchorhash(%s, %s)", textLit(s), list), itoa(v), err)
		// add a bucket, remove one (present, removed or out of range)
		h2, added, err := h.AddBucket()
		want := ""
		if err == nil {
			want = fmt.Sprintf(`\x%s %d`, hex.EncodeToString(h2.State()), added)
		}
		f.cases = add(f.cases, fmt.Sprintf("(SELECT state::text || ' ' || bucket FROM jumpbackanchorhash_add_bucket(%s))", byteaLit(state)), want, err)
		for j := 0; j < 2; j++ {
			b := rng.Intn(buckets + 2)
			if j == 1 && len(removed) > 0 {
				b = removed[rng.Intn(len(removed))]
			}
			h3, err := h.RemoveBucket(b)
			want = ""
			if err == nil {
				want = `\x` + hex.EncodeToString(h3.State())
			}
			f.cases = add(f.cases, fmt.Sprintf("jumpbackanchorhash_remove_bucket(%s, %d)", byteaLit(state), b), want, err)
		}
	}
	return f
}

func randomSubsetArgs() (frontend, backends, k int) {
	frontend = randomBuckets() - 1
	backends = randomBuckets()
	switch rng.Intn(10) {
	case 0:
		k = 0
	case 1: // every backend
		if backends > 5000 {
			backends = 1 + rng.Intn(5000)
		}
		k = backends + rng.Intn(5)
	case 2:
		k = rng.Intn(3000)
	default:
		k = 1 + rng.Intn(50)
	}
	if k > 1<<31-1 {
		k = 1<<31 - 1
	}
	return
}

func ringsteadyFamily() family {
	f := family{name: "ringsteady_subset"}
	for i := 0; i < 4000; i++ {
		frontend, backends, k := randomSubsetArgs()
		if i < 6 {
			k = 100000 + rng.Intn(200000) // large subsets
			backends = k + rng.Intn(1000000)
		}
		if i >= 6 && i < 12 {
			frontend, backends, k = []int{-1, 0, 0}[i%3], []int{5, 0, 5}[i%3], []int{1, 1, -1}[i%3]
		}
		scaling := rng.Intn(2) == 0
		v, err := sub.RingsteadySubset(frontend, backends, k, scaling)
		f.cases = add(f.cases, fmt.Sprintf("ringsteady_subset(%d, %d, %d, %t)", frontend, backends, k, scaling), arrayText(v), err)
	}
	return f
}

func rocksteadierFamily() family {
	f := family{name: "rocksteadier_subset"}
	for i := 0; i < 3000; i++ {
		frontend, backends, k := randomSubsetArgs()
		var lot int
		switch rng.Intn(6) {
		case 0:
			lot = 10
		case 1:
			lot = []int{1, 2, 65536, 65535, 0, 65537}[rng.Intn(6)]
		case 2:
			lot = 1 + rng.Intn(65536)
		default:
			lot = 1 + rng.Intn(100)
		}
		if lot > 100 && k > 20 && rng.Intn(20) != 0 {
			k = rng.Intn(21) // keep the shuffles (about k * lot steps) small
		}
		if backends > 1<<20 && rng.Intn(2) == 0 {
			backends = 1 + rng.Intn(1<<20)
		}
		if i < 4 {
			k = 20000 + rng.Intn(50000)
			backends = k + rng.Intn(100000)
			lot = 1 + rng.Intn(50)
		}
		v, err := sub.RocksteadierSubset(frontend, backends, k, lot)
		f.cases = add(f.cases, fmt.Sprintf("rocksteadier_subset(%d, %d, %d, %d)", frontend, backends, k, lot), arrayText(v), err)
	}
	return f
}
