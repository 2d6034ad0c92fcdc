// Command crosscheck is the Go client's cross-check program: it reads JSON
// lines {"fn": NAME, "args": [...], "types": [...]} on stdin and writes one
// JSON value per line on stdout, the result of the extension's function NAME
// computed by this package, or {"error": SQLSTATE, "message": ...}.  The
// format, shared with the Python and JavaScript clients, is
// clients/CROSSCHECK.md; test/check-clients drives it.
package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	sub "subsetting"
)

const safe = 1<<53 - 1

var (
	hexRe     = regexp.MustCompile(`^\\x((?:[0-9a-fA-F]{2})*)$`)
	uuidRe    = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	decimalRe = regexp.MustCompile(`^-?[0-9]+$`)
)

// callError is what SQL refuses before the function runs.
type callError struct{ code, msg string }

func (e *callError) Error() string { return e.msg }

func fail(code, format string, args ...interface{}) error {
	return &callError{code, fmt.Sprintf(format, args...)}
}

func show(v interface{}) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

// integer reads a JSON integer (or a decimal string) in [lo, hi]; wide is
// true for 64-bit arguments, which JSON numbers beyond 2^53 cannot carry.
func integer(v interface{}, what string, lo, hi int64) (int64, error) {
	typeName := "integer"
	if hi > math.MaxInt32 {
		typeName = "bigint"
	}
	return integerOf(v, what, typeName, lo, hi)
}

// integerOf is integer, for a value of SQL type typeName.
func integerOf(v interface{}, what, typeName string, lo, hi int64) (int64, error) {
	wide := hi > math.MaxInt32
	outOfRange := func(s string) error {
		return fail("22003", "%s %s is out of range for type %s", what, s, typeName)
	}
	switch x := v.(type) {
	case string:
		if !decimalRe.MatchString(x) {
			return 0, fail("22P02", "invalid input syntax for an integer %s: %q", what, x)
		}
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil || n < lo || n > hi {
			return 0, outOfRange(x)
		}
		return n, nil
	case json.Number:
		s := string(x)
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
				if wide {
					return 0, fail("22P02", "%s %s is beyond 2^53: give it as a decimal string", what, s)
				}
				return 0, outOfRange(s)
			}
			f, ferr := strconv.ParseFloat(s, 64)
			if ferr != nil || math.IsInf(f, 0) || f != math.Trunc(f) {
				return 0, fail("22P02", "%s must be an integer, got %s", what, s)
			}
			if math.Abs(f) > safe {
				if wide {
					return 0, fail("22P02", "%s %s is beyond 2^53: give it as a decimal string", what, s)
				}
				return 0, outOfRange(s)
			}
			n = int64(f)
		} else if wide && (n > safe || n < -safe) {
			return 0, fail("22P02", "%s %d is beyond 2^53: give it as a decimal string", what, n)
		}
		if n < lo || n > hi {
			return 0, outOfRange(s)
		}
		return n, nil
	}
	return 0, fail("42883", "%s must be an integer, got %s", what, show(v))
}

func int4(v interface{}, what string) (int, error) {
	n, err := integer(v, what, math.MinInt32, math.MaxInt32)
	return int(n), err
}

func int4List(v interface{}, what string) ([]int, error) {
	list, ok := v.([]interface{})
	if !ok {
		return nil, fail("42883", "%s must be a list of integers, got %s", what, show(v))
	}
	out := make([]int, len(list))
	for i, x := range list {
		n, err := int4(x, "element of "+what)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func bytea(v interface{}, what string) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fail("42883", "%s must be a \\x... string, got %s", what, show(v))
	}
	m := hexRe.FindStringSubmatch(s)
	if m == nil {
		return nil, fail("22023", "invalid input syntax for type bytea: %q", s)
	}
	b, _ := hex.DecodeString(m[1])
	return b, nil
}

func boolean(v interface{}, what string) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, fail("42883", "%s must be true or false, got %s", what, show(v))
	}
	return b, nil
}

// key is a key as the package takes it: an integer (bigint), a text, or
// bytes (bytea, or a uuid's 16 bytes).
type key struct {
	kind  string // "bigint", "text", "bytes"
	n     int64
	text  string
	bytes []byte
}

func readKey(v interface{}, t string) (key, error) {
	if t == "" {
		switch x := v.(type) {
		case string:
			if strings.HasPrefix(x, `\x`) {
				t = "bytea"
			} else {
				t = "text"
			}
		case json.Number:
			t = "bigint"
		default:
			return key{}, fail("42883", "a key must be an integer or a string, got %s", show(v))
		}
	}
	switch t {
	case "bigint":
		n, err := integer(v, "key", math.MinInt64, math.MaxInt64)
		return key{kind: "bigint", n: n}, err
	case "bytea":
		b, err := bytea(v, "key")
		return key{kind: "bytes", bytes: b}, err
	case "text", "uuid":
		s, ok := v.(string)
		if !ok {
			return key{}, fail("42883", "a %s key must be a string, got %s", t, show(v))
		}
		if t == "text" {
			return key{kind: "text", text: s}, nil
		}
		if !uuidRe.MatchString(s) {
			return key{}, fail("22P02", "invalid input syntax for type uuid: %q", s)
		}
		b, _ := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
		return key{kind: "bytes", bytes: b}, nil
	}
	return key{}, fail("42883", "unknown key type %q", t)
}

var lastRingText *string
var lastRing *sub.Ring

func ring(v interface{}) (*sub.Ring, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fail("42883", "a ring must be its text form, a string")
	}
	if lastRingText == nil || *lastRingText != s {
		lastRingText, lastRing = nil, nil
		r, err := sub.ParseRingString(s)
		if err != nil {
			return nil, err
		}
		lastRingText, lastRing = &s, r
	}
	return lastRing, nil
}

var lastLayoutText *string
var lastRouter *sub.Router

// router is the router of a layout's text, parsed once for the same text.
func router(v interface{}) (*sub.Router, error) {
	s, ok := v.(string)
	if !ok {
		return nil, fail("42883", "a layout must be the text of routing_layout(parent), a string, got %s", show(v))
	}
	if lastLayoutText == nil || *lastLayoutText != s {
		lastLayoutText, lastRouter = nil, nil
		r, err := sub.NewRouter([]byte(s))
		if err != nil {
			return nil, err
		}
		lastLayoutText, lastRouter = &s, r
	}
	return lastRouter, nil
}

// routeKey reads a key of route as the layout's key type says, whatever its
// JSON type and the line's types say, as the Go value Router.Route takes.
func routeKey(v interface{}, keyType string) (interface{}, error) {
	switch keyType {
	case "smallint":
		return integerOf(v, "key", keyType, math.MinInt16, math.MaxInt16)
	case "integer":
		return integerOf(v, "key", keyType, math.MinInt32, math.MaxInt32)
	case "bigint":
		return integerOf(v, "key", keyType, math.MinInt64, math.MaxInt64)
	case "bytea":
		return bytea(v, "key")
	case "text", "uuid":
		s, ok := v.(string)
		if !ok {
			return nil, fail("42883", "a %s key must be a string, got %s", keyType, show(v))
		}
		return s, nil // a uuid string: Route reads it as a uuid, never as text
	}
	return nil, fail("42883", "unknown key type %q", keyType)
}

func arity(fn string, args []interface{}, lo, hi int) error {
	if len(args) < lo || len(args) > hi {
		return fail("42883", "function %s does not exist for these arguments: %d arguments, it takes %d to %d", fn, len(args), lo, hi)
	}
	return nil
}

func hexa(b []byte) string { return `\x` + hex.EncodeToString(b) }

// ordered is a JSON object with its keys in the SQL's OUT order.
type ordered struct {
	keys   []string
	values []interface{}
}

func anchorOf(args []interface{}, withRemoved bool) (*sub.AnchorSet, error) {
	b, err := int4(args[0], "buckets")
	if err != nil {
		return nil, err
	}
	var rm []int
	if withRemoved {
		if rm, err = int4List(args[1], "removed"); err != nil {
			return nil, err
		}
	}
	return sub.NewAnchorSet(b, rm)
}

func stateOf(v interface{}) (*sub.AnchorSet, error) {
	b, err := bytea(v, "state")
	if err != nil {
		return nil, err
	}
	return sub.AnchorSetFromState(b)
}

func call(fn string, args []interface{}, types []string) (interface{}, error) {
	kt := func(i int) string {
		if i < len(types) {
			return types[i]
		}
		return ""
	}
	ints := func(names ...string) ([]int, error) {
		out := make([]int, len(names))
		for i, name := range names {
			n, err := int4(args[i], name)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	}
	switch fn {
	case "jumpbackhash", "jumphash":
		if err := arity(fn, args, 2, 2); err != nil {
			return nil, err
		}
		k, err := readKey(args[0], kt(0))
		if err != nil {
			return nil, err
		}
		n, err := int4(args[1], "buckets")
		if err != nil {
			return nil, err
		}
		back := fn == "jumpbackhash"
		switch {
		case k.kind == "bigint" && back:
			return sub.JumpBackHash(uint64(k.n), n)
		case k.kind == "bigint":
			return sub.JumpHash(uint64(k.n), n)
		case k.kind == "text" && back:
			return sub.JumpBackHashString(k.text, n)
		case k.kind == "text":
			return sub.JumpHashString(k.text, n)
		case back:
			return sub.JumpBackHashBytes(k.bytes, n)
		default:
			return sub.JumpHashBytes(k.bytes, n)
		}
	case "xxh3_64":
		if err := arity(fn, args, 1, 1); err != nil {
			return nil, err
		}
		k, err := readKey(args[0], kt(0))
		if err != nil {
			return nil, err
		}
		switch k.kind {
		case "bigint":
			return int64(sub.XXH3Int64(k.n)), nil
		case "text":
			return int64(sub.XXH3String(k.text)), nil
		}
		return int64(sub.XXH3(k.bytes)), nil
	case "jumpbackanchorhash":
		if err := arity(fn, args, 2, 3); err != nil {
			return nil, err
		}
		k, err := readKey(args[0], kt(0))
		if err != nil {
			return nil, err
		}
		var h *sub.AnchorSet
		if _, isState := args[1].(string); isState {
			if err := arity(fn, args, 2, 2); err != nil {
				return nil, err
			}
			h, err = stateOf(args[1])
		} else {
			h, err = anchorOf(args[1:], len(args) > 2)
		}
		if err != nil {
			return nil, err
		}
		switch k.kind {
		case "bigint":
			return h.Bucket(uint64(k.n))
		case "text":
			return h.BucketString(k.text)
		}
		return h.BucketBytes(k.bytes)
	case "jumpbackanchorhash_state":
		if err := arity(fn, args, 1, 2); err != nil {
			return nil, err
		}
		h, err := anchorOf(args, len(args) > 1)
		if err != nil {
			return nil, err
		}
		return h.State(), nil
	case "jumpbackanchorhash_buckets", "jumpbackanchorhash_removed":
		if err := arity(fn, args, 1, 1); err != nil {
			return nil, err
		}
		h, err := stateOf(args[0])
		if err != nil {
			return nil, err
		}
		if fn == "jumpbackanchorhash_buckets" {
			return h.Buckets(), nil
		}
		return h.Removed(), nil
	case "jumpbackanchorhash_add_bucket":
		if err := arity(fn, args, 1, 2); err != nil {
			return nil, err
		}
		if _, isState := args[0].(string); isState {
			if err := arity(fn, args, 1, 1); err != nil {
				return nil, err
			}
			h, err := stateOf(args[0])
			if err != nil {
				return nil, err
			}
			h2, added, err := h.AddBucket()
			if err != nil {
				return nil, err
			}
			return ordered{[]string{"state", "bucket"}, []interface{}{h2.State(), added}}, nil
		}
		h, err := anchorOf(args, len(args) > 1)
		if err != nil {
			return nil, err
		}
		h2, added, err := h.AddBucket()
		if err != nil {
			return nil, err
		}
		return ordered{[]string{"buckets", "removed", "bucket"}, []interface{}{h2.Buckets(), h2.Removed(), added}}, nil
	case "jumpbackanchorhash_remove_bucket":
		if err := arity(fn, args, 2, 3); err != nil {
			return nil, err
		}
		if _, isState := args[0].(string); isState {
			if err := arity(fn, args, 2, 2); err != nil {
				return nil, err
			}
			h, err := stateOf(args[0])
			if err != nil {
				return nil, err
			}
			x, err := int4(args[1], "bucket")
			if err != nil {
				return nil, err
			}
			h2, err := h.RemoveBucket(x)
			if err != nil {
				return nil, err
			}
			return h2.State(), nil
		}
		if err := arity(fn, args, 3, 3); err != nil {
			return nil, err
		}
		h, err := anchorOf(args, true)
		if err != nil {
			return nil, err
		}
		x, err := int4(args[2], "bucket")
		if err != nil {
			return nil, err
		}
		h2, err := h.RemoveBucket(x)
		if err != nil {
			return nil, err
		}
		return ordered{[]string{"buckets", "removed"}, []interface{}{h2.Buckets(), h2.Removed()}}, nil
	case "ringsteady_subset", "rocksteadier_subset":
		if err := arity(fn, args, 3, 4); err != nil {
			return nil, err
		}
		v, err := ints("frontend", "backends", "subset_size")
		if err != nil {
			return nil, err
		}
		if fn == "ringsteady_subset" {
			scaling := true
			if len(args) > 3 {
				if scaling, err = boolean(args[3], "backend_scaling"); err != nil {
					return nil, err
				}
			}
			return sub.RingsteadySubset(v[0], v[1], v[2], scaling)
		}
		lot := 10
		if len(args) > 3 {
			if lot, err = int4(args[3], "lot_size"); err != nil {
				return nil, err
			}
		}
		return sub.RocksteadierSubset(v[0], v[1], v[2], lot)
	case "ring_partition", "ring_nodes", "ring_handoff_nodes":
		most := 2
		if fn == "ring_handoff_nodes" {
			most = 3
		}
		if err := arity(fn, args, 2, most); err != nil {
			return nil, err
		}
		k, err := readKey(args[1], kt(1))
		if err != nil {
			return nil, err
		}
		count := 3
		if len(args) > 2 {
			if count, err = int4(args[2], "count"); err != nil {
				return nil, err
			}
		}
		r, err := ring(args[0])
		if err != nil {
			return nil, err
		}
		switch {
		case fn == "ring_partition" && k.kind == "bigint":
			return r.Partition(uint64(k.n)), nil
		case fn == "ring_partition" && k.kind == "text":
			return r.PartitionString(k.text), nil
		case fn == "ring_partition":
			return r.PartitionBytes(k.bytes), nil
		case fn == "ring_nodes" && k.kind == "bigint":
			return r.NodesOf(uint64(k.n)), nil
		case fn == "ring_nodes" && k.kind == "text":
			return r.NodesOfString(k.text), nil
		case fn == "ring_nodes":
			return r.NodesOfBytes(k.bytes), nil
		case k.kind == "bigint":
			return r.HandoffNodes(uint64(k.n), count)
		case k.kind == "text":
			return r.HandoffNodesString(k.text, count)
		}
		return r.HandoffNodesBytes(k.bytes, count)
	case "route":
		if err := arity(fn, args, 2, 2); err != nil {
			return nil, err
		}
		r, err := router(args[0])
		if err != nil {
			return nil, err
		}
		k, err := routeKey(args[1], r.KeyType())
		if err != nil {
			return nil, err
		}
		rt, err := r.Route(k)
		if err != nil {
			return nil, err
		}
		var server interface{}
		if rt.Server != "" {
			server = rt.Server
		}
		return ordered{[]string{"bucket", "partition", "server"}, []interface{}{rt.Bucket, rt.Partition, server}}, nil
	case "ring_partition_nodes", "ring_partition_handoff_nodes":
		most := 2
		if fn == "ring_partition_handoff_nodes" {
			most = 3
		}
		if err := arity(fn, args, 2, most); err != nil {
			return nil, err
		}
		x, err := int4(args[1], "partition")
		if err != nil {
			return nil, err
		}
		count := 3
		if len(args) > 2 {
			if count, err = int4(args[2], "count"); err != nil {
				return nil, err
			}
		}
		r, err := ring(args[0])
		if err != nil {
			return nil, err
		}
		if fn == "ring_partition_nodes" {
			return r.PartitionNodes(x)
		}
		return r.PartitionHandoffNodes(x, count)
	}
	return nil, fail("42883", "function %s does not exist (or is not in the clients)", show(fn))
}

// write writes a result as JSON: integers beyond 2^53 as decimal strings.
func write(w *bytes.Buffer, v interface{}) {
	switch x := v.(type) {
	case int:
		write(w, int64(x))
	case int64:
		if x > safe || x < -safe {
			w.WriteString(`"` + strconv.FormatInt(x, 10) + `"`)
		} else {
			w.WriteString(strconv.FormatInt(x, 10))
		}
	case []int:
		w.WriteByte('[')
		for i, n := range x {
			if i > 0 {
				w.WriteByte(',')
			}
			write(w, n)
		}
		w.WriteByte(']')
	case []byte:
		write(w, hexa(x))
	case ordered:
		w.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				w.WriteByte(',')
			}
			write(w, k)
			w.WriteByte(':')
			write(w, x.values[i])
		}
		w.WriteByte('}')
	default:
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(x)
		w.Write(bytes.TrimRight(b.Bytes(), "\n"))
	}
}

func errorValue(code, msg string) ordered {
	return ordered{[]string{"error", "message"}, []interface{}{code, msg}}
}

func answer(line string) (result interface{}) {
	defer func() {
		if p := recover(); p != nil { // a bug of the package: this line's answer, not the end of the program
			result = errorValue("XX000", fmt.Sprintf("panic: %v", p))
		}
	}()
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	var req map[string]interface{}
	if err := dec.Decode(&req); err != nil || dec.More() {
		return errorValue("08P01", fmt.Sprintf("not a JSON line: %v", err))
	}
	fn, ok1 := req["fn"].(string)
	args, ok2 := req["args"].([]interface{})
	if !ok1 || !ok2 {
		return errorValue("08P01", `a line is {"fn": NAME, "args": [...]}`)
	}
	var types []string
	if t, present := req["types"]; present && t != nil {
		list, ok := t.([]interface{})
		if !ok {
			return errorValue("08P01", `"types" must be a list`)
		}
		for _, x := range list {
			s, ok := x.(string)
			if !ok && x != nil {
				s = show(x) // not a type name: refused where a key reads it
			}
			types = append(types, s)
		}
	}
	v, err := call(fn, args, types)
	if err != nil {
		var ce *callError
		var se *sub.Error
		switch {
		case errors.As(err, &ce):
			return errorValue(ce.code, ce.msg)
		case errors.As(err, &se):
			return errorValue(se.SQLState, se.Msg)
		}
		return errorValue("XX000", err.Error())
	}
	return v
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	defer out.Flush()
	var buf bytes.Buffer
	for {
		line, err := in.ReadString('\n')
		if strings.TrimSpace(line) != "" {
			buf.Reset()
			write(&buf, answer(line))
			buf.WriteByte('\n')
			out.Write(buf.Bytes())
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "crosscheck:", err)
			os.Exit(1)
		}
	}
}
