package subsetting

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Router routes a key of a table partitioned by the extension as the
// database does, from the table's routing layout: the jsonb document of the
// extension's routing_layout(parent) (docs/reference.md, "Routing layout").
// It computes the key's bucket with the layout's hash function, bucket count
// and removed buckets (JumpBackHash, JumpHash or JumpBackAnchorHash, as the
// database does), and looks the bucket up in the layout's partitions.  A
// Router is immutable and safe for concurrent use; make a new one when the
// layout's Version changes.
type Router struct {
	table, method, hashFunction string
	key, keyColumn              string
	keyType, keyHash            string
	buckets                     int
	removed                     []int
	anchor                      *AnchorSet // jumpbackanchorhash only
	partitions                  []Partition
	byBucket                    map[int]int // bucket -> index in partitions
	servers                     map[string]map[string]string
	inProgress                  *InProgress
	version                     string
}

// Route is where a key goes: its bucket, the partition that holds the bucket
// (schema-qualified, as the layout names it: the table to use through the
// coordinator, the server routing_layout was called on), and the partition's
// server.  Server is "" when the partition is a table of the coordinator
// itself (the layout's server null; a foreign server's name is never
// empty); otherwise it is the foreign server's name, a key of
// Router.Servers, and RemoteTable the table there (schema-qualified, quoted
// as SQL needs).
type Route struct {
	Bucket      int
	Partition   string
	Server      string
	RemoteTable string
}

// Partition is an entry of the layout's partitions.  HasBucket is false when
// the partition's bound is not one bucket of the layout (the layout's bucket
// null): no key is routed to it.
type Partition struct {
	Bucket      int
	HasBucket   bool
	Partition   string
	Server      string // "": the coordinator itself
	RemoteTable string // "" when Server is ""
}

// InProgress is the operation on the table that has not ended (a resharding
// or a move), as the layout's in_progress says.  While it runs, the keys of
// its buckets must be read and written through the coordinator (the table
// Route.Partition, on the server routing_layout was called on), never
// directly on a partition's server: see Router.ThroughCoordinator.
type InProgress struct {
	Operation   string // as reshard_progress: "move", or a resharding's operation
	Phase       string
	Interrupted bool
	// AllBuckets is true when the operation concerns every bucket (the
	// layout's buckets null: a resharding); otherwise Buckets lists them
	// (a move: the bucket it moves).
	AllBuckets bool
	Buckets    []int
}

func badLayout(format string, args ...interface{}) error {
	return invalid("NewRouter: not a routing layout (routing_layout's document): "+format, args...)
}

// NewRouter reads a routing layout: the text of routing_layout(parent), as
// the database returns it (SELECT routing_layout('t') as a jsonb's text, or
// its bytes as a driver scans them).  A document that is not such a layout
// (not a JSON object, a member missing or of another type, an unknown method
// or key type, a bucket count outside 1 to 2147483647, removed buckets the
// method does not take, a partition's bucket out of range or twice) is an
// *Error with SQLState 22023.  Members the router does not know are ignored.
func NewRouter(layout []byte) (*Router, error) {
	dec := json.NewDecoder(bytes.NewReader(layout))
	dec.UseNumber()
	var doc map[string]json.RawMessage
	if err := dec.Decode(&doc); err != nil {
		return nil, badLayout("%v", err)
	}
	if dec.More() {
		return nil, badLayout("text after the JSON object")
	}
	if doc == nil {
		return nil, badLayout("null, not a JSON object")
	}
	r := &Router{}
	var err error
	str := func(name string, nullable bool) string {
		if err != nil {
			return ""
		}
		raw, ok := doc[name]
		if !ok {
			err = badLayout("member %q is missing", name)
			return ""
		}
		var s *string
		if e := json.Unmarshal(raw, &s); e != nil || (s == nil && !nullable) {
			err = badLayout("member %q must be a string, got %s", name, clip(raw))
			return ""
		}
		if s == nil {
			return ""
		}
		return *s
	}
	r.table = str("table", false)
	r.method = str("method", false)
	r.hashFunction = str("hash_function", false)
	r.keyType = str("key_type", false)
	r.keyHash = str("key_hash", false)
	r.version = str("version", false)
	if err != nil {
		return nil, err
	}
	if _, ok := doc["key"]; ok {
		r.key = str("key", true)
	}
	if _, ok := doc["key_column"]; ok {
		r.keyColumn = str("key_column", true)
	}
	if err != nil {
		return nil, err
	}
	if r.table == "" {
		return nil, badLayout("member \"table\" is empty")
	}
	if r.version == "" {
		return nil, badLayout("member \"version\" is empty")
	}

	// the method, its hash function and the key type it takes
	fn := r.method
	switch r.method {
	case "hash_operator_class":
		fn = "jumpbackhash"
		switch r.keyType {
		case "smallint", "integer", "bigint", "text", "bytea", "uuid":
		default:
			return nil, badLayout("key_type %q is not one of smallint, integer, bigint, text, bytea, uuid", r.keyType)
		}
	case "jumpbackhash", "jumphash", "jumpbackanchorhash":
		switch r.keyType {
		case "bigint", "text", "bytea", "uuid":
		default:
			return nil, badLayout("key_type %q is not one of bigint, text, bytea, uuid (method %s)", r.keyType, r.method)
		}
	default:
		return nil, badLayout("method %q is not one of jumpbackhash, jumphash, jumpbackanchorhash, hash_operator_class", r.method)
	}
	if r.hashFunction != fn && !strings.HasSuffix(r.hashFunction, "."+fn) {
		return nil, badLayout("hash_function %q is not %s, as method %s places keys", r.hashFunction, fn, r.method)
	}
	wantHash := "xxh3_64"
	if r.keyType == "smallint" || r.keyType == "integer" || r.keyType == "bigint" {
		wantHash = "value"
	}
	if r.keyHash != wantHash {
		return nil, badLayout("key_hash %q is not %q, as a %s key is hashed", r.keyHash, wantHash, r.keyType)
	}

	// buckets and removed buckets
	raw, ok := doc["buckets"]
	if !ok {
		return nil, badLayout("member \"buckets\" is missing")
	}
	n, isInt := jsonInteger(raw)
	if !isInt || n < 1 || n > maxInt32 {
		return nil, badLayout("buckets must be an integer from 1 to 2147483647, got %s", clip(raw))
	}
	r.buckets = int(n)
	r.removed = []int{}
	if raw, ok := doc["removed"]; ok && !isNull(raw) {
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil {
			return nil, badLayout("removed must be a list of buckets, got %s", clip(raw))
		}
		for _, x := range list {
			b, isInt := jsonInteger(x)
			if !isInt || b < math.MinInt32 || b > maxInt32 {
				return nil, badLayout("removed must be a list of buckets, got %s", clip(raw))
			}
			r.removed = append(r.removed, int(b))
		}
	}
	if r.method == "jumpbackanchorhash" {
		a, e := NewAnchorSet(r.buckets, r.removed)
		if e != nil {
			return nil, badLayout("removed: %s", e.(*Error).Msg)
		}
		if len(r.removed) >= r.buckets {
			return nil, badLayout("all %d buckets are removed", r.buckets)
		}
		r.anchor = a
	} else if len(r.removed) > 0 {
		return nil, badLayout("removed buckets %v, but method %s removes none", r.removed, r.method)
	}

	// partitions
	raw, ok = doc["partitions"]
	if !ok {
		return nil, badLayout("member \"partitions\" is missing")
	}
	var parts []map[string]json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return nil, badLayout("partitions must be a list of objects, got %s", clip(raw))
	}
	r.byBucket = make(map[int]int, len(parts))
	for i, p := range parts {
		if p == nil {
			return nil, badLayout("partitions[%d] is null, not an object", i)
		}
		var e Partition
		if raw, ok := p["bucket"]; ok && !isNull(raw) {
			b, isInt := jsonInteger(raw)
			if !isInt || b < 0 || b >= n {
				return nil, badLayout("partitions[%d]: bucket must be null or an integer from 0 to %d, got %s", i, n-1, clip(raw))
			}
			e.Bucket, e.HasBucket = int(b), true
		}
		for _, f := range []struct {
			name     string
			to       *string
			nullable bool
		}{{"partition", &e.Partition, false}, {"server", &e.Server, true}, {"remote_table", &e.RemoteTable, true}} {
			raw, ok := p[f.name]
			var s *string
			if ok && !isNull(raw) {
				if json.Unmarshal(raw, &s) != nil || s == nil {
					return nil, badLayout("partitions[%d]: %s must be a string, got %s", i, f.name, clip(raw))
				}
				*f.to = *s
			} else if !f.nullable {
				return nil, badLayout("partitions[%d]: %s is missing", i, f.name)
			}
		}
		if e.Partition == "" {
			return nil, badLayout("partitions[%d]: partition is empty", i)
		}
		if e.Server == "" {
			e.RemoteTable = ""
		}
		if e.HasBucket {
			if r.anchor != nil && r.anchor.find(int32(e.Bucket)) >= 0 {
				return nil, badLayout("partitions[%d]: bucket %d is a removed bucket", i, e.Bucket)
			}
			if j, dup := r.byBucket[e.Bucket]; dup {
				return nil, badLayout("bucket %d is the bucket of partitions %s and %s", e.Bucket, r.partitions[j].Partition, e.Partition)
			}
			r.byBucket[e.Bucket] = len(r.partitions)
		}
		r.partitions = append(r.partitions, e)
	}

	// servers (the options a client connects with)
	r.servers = map[string]map[string]string{}
	if raw, ok := doc["servers"]; ok && !isNull(raw) {
		var servers map[string]map[string]string
		if json.Unmarshal(raw, &servers) != nil {
			return nil, badLayout("servers must be an object of objects of strings, got %s", clip(raw))
		}
		for name, options := range servers {
			if options == nil {
				options = map[string]string{}
			}
			r.servers[name] = options
		}
	}

	// the operation in progress
	if raw, ok := doc["in_progress"]; ok && !isNull(raw) {
		var p map[string]json.RawMessage
		if json.Unmarshal(raw, &p) != nil {
			return nil, badLayout("in_progress must be null or an object, got %s", clip(raw))
		}
		ip := &InProgress{}
		for _, f := range []struct {
			name string
			to   *string
		}{{"operation", &ip.Operation}, {"phase", &ip.Phase}} {
			if raw, ok := p[f.name]; ok && !isNull(raw) {
				if json.Unmarshal(raw, f.to) != nil {
					return nil, badLayout("in_progress: %s must be a string, got %s", f.name, clip(raw))
				}
			}
		}
		if raw, ok := p["interrupted"]; ok && !isNull(raw) {
			if json.Unmarshal(raw, &ip.Interrupted) != nil {
				return nil, badLayout("in_progress: interrupted must be true or false, got %s", clip(raw))
			}
		}
		if raw, ok := p["buckets"]; !ok || isNull(raw) {
			ip.AllBuckets = true
		} else {
			var list []json.RawMessage
			if json.Unmarshal(raw, &list) != nil {
				return nil, badLayout("in_progress: buckets must be null or a list, got %s", clip(raw))
			}
			ip.Buckets = []int{}
			for _, x := range list {
				if isNull(x) {
					// a bucket the layout does not know: be safe, every key
					ip.AllBuckets = true
					continue
				}
				b, isInt := jsonInteger(x)
				if !isInt || b < math.MinInt32 || b > maxInt32 {
					return nil, badLayout("in_progress: buckets must be a list of buckets, got %s", clip(raw))
				}
				ip.Buckets = append(ip.Buckets, int(b))
			}
		}
		r.inProgress = ip
	}
	return r, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// jsonInteger reads a JSON number with an integral value (4, 4.0, 4e0).
func jsonInteger(raw json.RawMessage) (int64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false // (json.Number would take a string "4")
	}
	var num json.Number
	if json.Unmarshal(raw, &num) != nil {
		return 0, false
	}
	if n, err := strconv.ParseInt(string(num), 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
		return 0, false
	}
	return int64(f), true
}

func clip(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return s
}

// Table is the table routed, schema-qualified (the layout's table).
func (r *Router) Table() string { return r.table }

// Method is the layout's method: "jumpbackhash", "jumphash",
// "jumpbackanchorhash" (BY LIST (f(key, n))) or "hash_operator_class" (BY
// HASH (key jumpbackhash<n>_<type>_ops)).
func (r *Router) Method() string { return r.method }

// HashFunction is the function that places a key, schema-qualified
// ("public.jumpbackhash").
func (r *Router) HashFunction() string { return r.hashFunction }

// Key is the partition key's expression; KeyColumn the column it is, or ""
// when it is an expression, whose value the application computes itself
// (in Go: xxh3_64(t) is int64(XXH3String(t))) and gives to Route.
func (r *Router) Key() string { return r.key }

// KeyColumn is the column the partition key is, or "" for an expression.
func (r *Router) KeyColumn() string { return r.keyColumn }

// KeyType is the type Route takes the key as: "smallint", "integer" (those
// two of an operator class only), "bigint", "text", "bytea" or "uuid".
func (r *Router) KeyType() string { return r.keyType }

// Buckets is the layout's bucket count.
func (r *Router) Buckets() int { return r.buckets }

// Removed is the layout's removed buckets (jumpbackanchorhash), oldest first.
func (r *Router) Removed() []int { return append([]int{}, r.removed...) }

// Partitions is the layout's partitions, in its order.
func (r *Router) Partitions() []Partition { return append([]Partition{}, r.partitions...) }

// Servers is, per foreign server that holds a partition, the postgres_fdw
// options a client connects with (host, hostaddr, port, dbname, sslmode,
// target_session_attrs, those set; never a password).
func (r *Router) Servers() map[string]map[string]string {
	out := make(map[string]map[string]string, len(r.servers))
	for name, options := range r.servers {
		o := make(map[string]string, len(options))
		for k, v := range options {
			o[k] = v
		}
		out[name] = o
	}
	return out
}

// Version is the layout's version (16 hexadecimal digits): it changes when
// the layout, a partition's server or the operation in progress changes.
// Reload the layout and make a new Router when routing_layout returns
// another one.
func (r *Router) Version() string { return r.version }

// InProgress is the resharding or move of the table that has not ended, or
// nil.
func (r *Router) InProgress() *InProgress {
	if r.inProgress == nil {
		return nil
	}
	ip := *r.inProgress
	ip.Buckets = append([]int(nil), ip.Buckets...)
	return &ip
}

// ThroughCoordinator tells whether the keys of bucket must be read and
// written through the coordinator (the table Route.Partition on the server
// routing_layout was called on) rather than directly on the partition's
// server: true while an operation in progress concerns the bucket (every
// bucket, when the layout's in_progress.buckets is null), until the layout's
// version changes.  Without an operation in progress it is false.
func (r *Router) ThroughCoordinator(bucket int) bool {
	ip := r.inProgress
	if ip == nil {
		return false
	}
	if ip.AllBuckets {
		return true
	}
	for _, b := range ip.Buckets {
		if b == bucket {
			return true
		}
	}
	return false
}

// Route is the route of key, a value of the table's partition key of the
// layout's KeyType:
//
//   - smallint, integer, bigint: a Go integer (int, int8, int16, int32,
//     int64, uint8, uint16, uint32, or a type of one of those kinds), within
//     the type's range (else SQLSTATE 22003); uint, uint64 and uintptr are
//     refused (the package's JumpBackHash takes a bigint k as uint64(k):
//     give int64(k));
//   - text: a string (valid UTF-8 without NUL, as the database stores text:
//     else 22021), hashed as its UTF-8 bytes;
//   - bytea: a []byte;
//   - uuid: a [16]byte (or a type of that kind, such as
//     github.com/google/uuid's UUID), or a string in the uuid text form
//     PostgreSQL reads ("0e4f0c5a-6b1c-4b34-9f8e-2a3c4d5e6f70", upper case,
//     in braces, with or without hyphens between groups of four digits: else
//     22P02), hashed as its 16 bytes, never as text.
//
// A key of another Go type is an *Error with SQLState 42883 naming the type
// expected; nil (a NULL key) one with 22004.  A bucket no partition of the
// layout holds is an *Error with SQLState 23514 (check_violation), as the
// database refuses a row no partition takes.
func (r *Router) Route(key any) (Route, error) {
	b, err := r.bucket(key, "Route")
	if err != nil {
		return Route{}, err
	}
	i, ok := r.byBucket[b]
	if !ok {
		return Route{Bucket: b}, &Error{SQLState: "23514", Msg: fmt.Sprintf(
			"Route: no partition of table %s holds bucket %d (of %d), the key's bucket", r.table, b, r.buckets)}
	}
	p := r.partitions[i]
	return Route{Bucket: b, Partition: p.Partition, Server: p.Server, RemoteTable: p.RemoteTable}, nil
}

// Bucket is the bucket of key, read as Route reads it (with the same
// errors, naming Bucket), whether a partition holds the bucket or not.
func (r *Router) Bucket(key any) (int, error) { return r.bucket(key, "Bucket") }

func (r *Router) bucket(key any, fname string) (int, error) {
	switch r.keyType {
	case "smallint", "integer", "bigint":
		n, err := r.integerKey(key, fname)
		if err != nil {
			return 0, err
		}
		return r.bucketOf(uint64(n))
	case "text":
		s, ok := stringOf(key)
		if !ok {
			return 0, r.wrongType(fname, key, "a string")
		}
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return 0, &Error{SQLState: "22021", Msg: fmt.Sprintf(
				"%s: a text key must be valid UTF-8 without NUL (as the database stores text), got %q", fname, clipString(s))}
		}
		return r.bucketOf(XXH3String(s))
	case "bytea":
		v := reflect.ValueOf(key)
		if key == nil || v.Kind() != reflect.Slice || v.Type().Elem().Kind() != reflect.Uint8 {
			return 0, r.wrongType(fname, key, "a []byte")
		}
		return r.bucketOf(XXH3(v.Bytes()))
	case "uuid":
		if s, ok := stringOf(key); ok {
			u, err := parseUUID(s, fname)
			if err != nil {
				return 0, err
			}
			return r.bucketOf(XXH3(u[:]))
		}
		v := reflect.ValueOf(key)
		if key == nil || v.Kind() != reflect.Array || v.Len() != 16 || v.Type().Elem().Kind() != reflect.Uint8 {
			return 0, r.wrongType(fname, key, "a [16]byte or a string in uuid text form")
		}
		var u [16]byte
		for i := range u {
			u[i] = byte(v.Index(i).Uint())
		}
		return r.bucketOf(XXH3(u[:]))
	}
	return 0, invalid("%s: unknown key type %q", fname, r.keyType) // NewRouter refuses it
}

func (r *Router) bucketOf(hash uint64) (int, error) {
	switch r.method {
	case "jumphash":
		return JumpHash(hash, r.buckets)
	case "jumpbackanchorhash":
		return r.anchor.Bucket(hash)
	}
	return JumpBackHash(hash, r.buckets)
}

func (r *Router) wrongType(fname string, key any, want string) error {
	if key == nil {
		return &Error{SQLState: "22004", Msg: fmt.Sprintf(
			"%s: the key is nil (NULL): a NULL %s key of table %s is not routed", fname, r.keyType, r.table)}
	}
	return &Error{SQLState: "42883", Msg: fmt.Sprintf(
		"%s: table %s's key is a %s: want %s, got a %T", fname, r.table, r.keyType, want, key)}
}

func (r *Router) integerKey(key any, fname string) (int64, error) {
	want := "an integer (int, int8 to int64, uint8 to uint32)"
	if key == nil {
		return 0, r.wrongType(fname, key, want)
	}
	var n int64
	v := reflect.ValueOf(key)
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n = v.Int()
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		n = int64(v.Uint())
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return 0, &Error{SQLState: "42883", Msg: fmt.Sprintf(
			"%s: table %s's key is a %s: want %s, got a %T (give int64(k) of a bigint k)", fname, r.table, r.keyType, want, key)}
	default:
		return 0, r.wrongType(fname, key, want)
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	switch r.keyType {
	case "smallint":
		lo, hi = math.MinInt16, math.MaxInt16
	case "integer":
		lo, hi = math.MinInt32, math.MaxInt32
	}
	if n < lo || n > hi {
		return 0, &Error{SQLState: "22003", Msg: fmt.Sprintf(
			"%s: key %d is out of range for type %s (table %s)", fname, n, r.keyType, r.table)}
	}
	return n, nil
}

func stringOf(key any) (string, bool) {
	if key == nil {
		return "", false
	}
	v := reflect.ValueOf(key)
	if v.Kind() != reflect.String {
		return "", false
	}
	return v.String(), true
}

func clipString(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

func hexValue(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// parseUUID reads a uuid's text form as PostgreSQL's uuid input does: 32
// hexadecimal digits, either case, a hyphen allowed after each group of
// four (but the last), the whole optionally in braces.
func parseUUID(s, fname string) ([16]byte, error) {
	var u [16]byte
	src := s
	braces := strings.HasPrefix(src, "{")
	if braces {
		src = src[1:]
	}
	for i := 0; i < 16; i++ {
		if len(src) < 2 {
			return u, uuidSyntax(s, fname)
		}
		h, ok1 := hexValue(src[0])
		l, ok2 := hexValue(src[1])
		if !ok1 || !ok2 {
			return u, uuidSyntax(s, fname)
		}
		u[i] = h<<4 | l
		src = src[2:]
		if len(src) > 0 && src[0] == '-' && i%2 == 1 && i < 15 {
			src = src[1:]
		}
	}
	if braces {
		if !strings.HasPrefix(src, "}") {
			return u, uuidSyntax(s, fname)
		}
		src = src[1:]
	}
	if src != "" {
		return u, uuidSyntax(s, fname)
	}
	return u, nil
}

func uuidSyntax(s, fname string) error {
	return &Error{SQLState: "22P02", Msg: fmt.Sprintf("%s: invalid input syntax for type uuid: %q", fname, clipString(s))}
}
