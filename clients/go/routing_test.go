package subsetting

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// The documents of routing_layout('orders') and routing_layout('by_uuid'),
// made by PostgreSQL 18 with the extension:
//
//	CREATE TABLE orders (id bigint NOT NULL, v text) PARTITION BY HASH (id jumpbackhash4_int8_ops);
//	-- orders_0 .. orders_3: FOR VALUES WITH (MODULUS 4, REMAINDER b)
//	CREATE TABLE by_uuid (u uuid, i int) PARTITION BY LIST (jumpbackanchorhash(u, 5, '{1,3}'));
//	CREATE TABLE by_uuid_0 PARTITION OF by_uuid FOR VALUES IN (0);
//	CREATE TABLE by_uuid_2 PARTITION OF by_uuid FOR VALUES IN (2);  -- and none for bucket 4
//
// The routes the tests expect are where that database put the rows
// (tableoid), or its refusal.
const ordersLayout = `{"key": "id", "table": "public.orders", "method": "hash_operator_class", "buckets": 4, "removed": [], "servers": {}, "version": "df10b318e3494e63", "key_hash": "value", "key_type": "bigint", "key_column": "id", "partitions": [{"bucket": 0, "server": null, "partition": "public.orders_0", "remote_table": null}, {"bucket": 1, "server": null, "partition": "public.orders_1", "remote_table": null}, {"bucket": 2, "server": null, "partition": "public.orders_2", "remote_table": null}, {"bucket": 3, "server": null, "partition": "public.orders_3", "remote_table": null}], "in_progress": null, "hash_function": "public.jumpbackhash"}`

const byUUIDLayout = `{"key": "u", "table": "public.by_uuid", "method": "jumpbackanchorhash", "buckets": 5, "removed": [1, 3], "servers": {}, "version": "a9caebd77913a465", "key_hash": "xxh3_64", "key_type": "uuid", "key_column": "u", "partitions": [{"bucket": 0, "server": null, "partition": "public.by_uuid_0", "remote_table": null}, {"bucket": 2, "server": null, "partition": "public.by_uuid_2", "remote_table": null}], "in_progress": null, "hash_function": "public.jumpbackanchorhash"}`

func ExampleNewRouter() {
	// the text of SELECT routing_layout('orders'), read once and kept
	layout := []byte(ordersLayout)
	router, err := NewRouter(layout)
	if err != nil {
		panic(err)
	}
	for _, id := range []int64{42, -1} {
		route, err := router.Route(id)
		if err != nil {
			panic(err)
		}
		fmt.Println(id, route.Bucket, route.Partition, route.Server == "", router.ThroughCoordinator(route.Bucket))
	}

	// a uuid key, given as a string: hashed as its 16 bytes
	router, _ = NewRouter([]byte(byUUIDLayout))
	route, _ := router.Route("6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	fmt.Println(route.Bucket, route.Partition, router.Version())
	// a key whose bucket no partition holds, as INSERT refuses it
	_, err = router.Route("0e4f0c5a-6b1c-4b34-9f8e-2a3c4d5e6f70")
	fmt.Println(err.(*Error).SQLState)
	// Output:
	// 42 3 public.orders_3 true false
	// -1 2 public.orders_2 true false
	// 0 public.by_uuid_0 a9caebd77913a465
	// 23514
}

func mustRouter(t *testing.T, layout string) *Router {
	t.Helper()
	r, err := NewRouter([]byte(layout))
	if err != nil {
		t.Fatalf("NewRouter: %v", err)
	}
	return r
}

func wantRoute(t *testing.T, r *Router, key any, bucket int, partition string) {
	t.Helper()
	got, err := r.Route(key)
	if err != nil {
		t.Fatalf("Route(%#v): %v", key, err)
	}
	if got != (Route{Bucket: bucket, Partition: partition}) {
		t.Errorf("Route(%#v) = %+v, want bucket %d in %s", key, got, bucket, partition)
	}
}

func TestRouterOrders(t *testing.T) {
	r := mustRouter(t, ordersLayout)
	if r.Table() != "public.orders" || r.Method() != "hash_operator_class" || r.HashFunction() != "public.jumpbackhash" ||
		r.Key() != "id" || r.KeyColumn() != "id" || r.KeyType() != "bigint" || r.Buckets() != 4 ||
		len(r.Removed()) != 0 || len(r.Partitions()) != 4 || len(r.Servers()) != 0 ||
		r.Version() != "df10b318e3494e63" || r.InProgress() != nil {
		t.Fatalf("the layout read: %+v", r)
	}
	// where the database put them
	for _, c := range []struct {
		id     int64
		bucket int
	}{{42, 3}, {7, 3}, {-1, 2}, {math.MaxInt64, 3}} {
		wantRoute(t, r, c.id, c.bucket, fmt.Sprintf("public.orders_%d", c.bucket))
	}
	// every Go integer type of the same value is the same key
	type myInt int16
	for _, k := range []any{42, int8(42), int16(42), int32(42), int64(42), uint8(42), uint16(42), uint32(42), myInt(42)} {
		wantRoute(t, r, k, 3, "public.orders_3")
	}
	if r.ThroughCoordinator(0) {
		t.Error("ThroughCoordinator without an operation in progress")
	}
	// the accessors give copies
	r.Partitions()[0].Partition = "x"
	r.Servers()["x"] = nil
	if r.Partitions()[0].Partition != "public.orders_0" || len(r.Servers()) != 0 {
		t.Error("a Router changed through its accessors")
	}
}

func TestRouterUUID(t *testing.T) {
	r := mustRouter(t, byUUIDLayout)
	if r.Method() != "jumpbackanchorhash" || r.KeyType() != "uuid" || fmt.Sprint(r.Removed()) != "[1 3]" {
		t.Fatalf("the layout read: %+v", r)
	}
	u := [16]byte{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	type myUUID [16]byte // as github.com/google/uuid's UUID
	type myString string
	for _, k := range []any{"6ba7b810-9dad-11d1-80b4-00c04fd430c8", "6BA7B810-9DAD-11D1-80B4-00C04FD430C8",
		"{6ba7b810-9dad-11d1-80b4-00c04fd430c8}", "6ba7b8109dad11d180b400c04fd430c8", "6ba7-b810-9dad11d1-80b4-00c04fd430c8",
		u, myUUID(u), myString("6ba7b810-9dad-11d1-80b4-00c04fd430c8")} {
		wantRoute(t, r, k, 0, "public.by_uuid_0")
	}
	wantRoute(t, r, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", 2, "public.by_uuid_2")
	// never hashed as its text: as text, this key's bucket is 2
	if b, _ := JumpBackAnchorHash(XXH3String("6ba7b810-9dad-11d1-80b4-00c04fd430c8"), 5, []int{1, 3}); b != 2 {
		t.Errorf("the text's bucket is %d", b)
	}
	// bucket 4 has no partition: the database refuses the row (23514)
	got, err := r.Route("0e4f0c5a-6b1c-4b34-9f8e-2a3c4d5e6f70")
	wantError(t, err, "23514", "Route: no partition of table public.by_uuid holds bucket 4")
	if got.Bucket != 4 {
		t.Errorf("the bucket of a refused key: %d", got.Bucket)
	}
	if b, err := r.Bucket("0e4f0c5a-6b1c-4b34-9f8e-2a3c4d5e6f70"); b != 4 || err != nil {
		t.Errorf("Bucket = %d, %v", b, err)
	}
	for _, s := range []string{"not-a-uuid", "", "6ba7b810-9dad-11d1-80b4-00c04fd430c", "6ba7b810-9dad-11d1-80b4-00c04fd430c8-",
		" 6ba7b810-9dad-11d1-80b4-00c04fd430c8", "6ba7b8109-dad-11d1-80b4-00c04fd430c8", "{6ba7b810-9dad-11d1-80b4-00c04fd430c8",
		"6ba7b810-9dad-11d1-80b4-00c04fd430c8}", "6ba7b810--9dad-11d1-80b4-00c04fd430c8", "6ba7b810-9dad-11d1-80b4-00c04fd430cg"} {
		_, err := r.Route(s)
		wantError(t, err, "22P02", "Route: invalid input syntax for type uuid")
	}
	_, err = r.Route(u[:])
	wantError(t, err, "42883", "Route: table public.by_uuid's key is a uuid: want a [16]byte or a string in uuid text form, got a []uint8")
	_, err = r.Bucket(42)
	wantError(t, err, "42883", "Bucket: table public.by_uuid's key is a uuid")
	_, err = r.Route(nil)
	wantError(t, err, "22004", "Route: the key is nil")
}

// layoutWith is a layout of the key type, method and buckets given, with
// every bucket's partition.
func layoutWith(method, keyType string, buckets int, removed []int) string {
	hash := "xxh3_64"
	if keyType == "smallint" || keyType == "integer" || keyType == "bigint" {
		hash = "value"
	}
	fn := method
	if method == "hash_operator_class" {
		fn = "jumpbackhash"
	}
	var parts []string
	gone := map[int]bool{}
	for _, b := range removed {
		gone[b] = true
	}
	for b := 0; b < buckets; b++ {
		if !gone[b] {
			parts = append(parts, fmt.Sprintf(`{"bucket": %d, "server": null, "partition": "s.t_%d", "remote_table": null}`, b, b))
		}
	}
	rm := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(removed)), ", "), "[]")
	return fmt.Sprintf(`{"key": "k", "table": "s.t", "method": %q, "buckets": %d, "removed": [%s], "servers": {}, "version": "0123456789abcdef", "key_hash": %q, "key_type": %q, "key_column": "k", "partitions": [%s], "in_progress": null, "hash_function": "s.%s"}`,
		method, buckets, rm, hash, keyType, strings.Join(parts, ", "), fn)
}

// Route's bucket is the package's function of the key, for every method and
// key type (the cross-check with the database is test/check-clients).
func TestRouterBuckets(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	removed := []int{5, 0, 17}
	for _, method := range []string{"hash_operator_class", "jumpbackhash", "jumphash", "jumpbackanchorhash"} {
		for _, keyType := range []string{"smallint", "integer", "bigint", "text", "bytea", "uuid"} {
			if method != "hash_operator_class" && (keyType == "smallint" || keyType == "integer") {
				continue
			}
			var rm []int
			if method == "jumpbackanchorhash" {
				rm = removed
			}
			r := mustRouter(t, layoutWith(method, keyType, 37, rm))
			for i := 0; i < 300; i++ {
				var key any
				var hash uint64
				switch keyType {
				case "smallint":
					k := int16(rng.Uint64())
					key, hash = k, uint64(int64(k))
				case "integer":
					k := int32(rng.Uint64())
					key, hash = k, uint64(int64(k))
				case "bigint":
					k := int64(rng.Uint64())
					key, hash = k, uint64(k)
				case "text":
					k := fmt.Sprintf("ключ-%d", rng.Intn(1e6))
					key, hash = k, XXH3String(k)
				case "bytea":
					k := make([]byte, rng.Intn(40))
					rng.Read(k)
					key, hash = k, XXH3(k)
				case "uuid":
					var k [16]byte
					rng.Read(k[:])
					key, hash = k, XXH3(k[:])
				}
				var want int
				switch method {
				case "jumphash":
					want, _ = JumpHash(hash, 37)
				case "jumpbackanchorhash":
					want, _ = JumpBackAnchorHash(hash, 37, removed)
				default:
					want, _ = JumpBackHash(hash, 37)
				}
				wantRoute(t, r, key, want, fmt.Sprintf("s.t_%d", want))
			}
		}
	}
}

func TestRouterKeyErrors(t *testing.T) {
	small := mustRouter(t, layoutWith("hash_operator_class", "smallint", 8, nil))
	b, _ := JumpBackHash(math.MaxInt16, 8)
	wantRoute(t, small, math.MaxInt16, b, fmt.Sprintf("s.t_%d", b))
	b, _ = JumpBackHash(uint64(math.MaxUint64), 8) // -1 sign-extended
	wantRoute(t, small, int16(-1), b, fmt.Sprintf("s.t_%d", b))
	if _, err := small.Route(math.MinInt16); err != nil {
		t.Error(err)
	}
	_, err := small.Route(math.MaxInt16 + 1)
	wantError(t, err, "22003", "Route: key 32768 is out of range for type smallint (table s.t)")
	_, err = small.Route(int64(math.MinInt16 - 1))
	wantError(t, err, "22003", "out of range for type smallint")
	integer := mustRouter(t, layoutWith("hash_operator_class", "integer", 8, nil))
	if _, err := integer.Route(uint32(math.MaxInt32)); err != nil {
		t.Error(err)
	}
	_, err = integer.Route(uint32(math.MaxInt32 + 1))
	wantError(t, err, "22003", "key 2147483648 is out of range for type integer")
	_, err = integer.Route(int64(math.MinInt32 - 1))
	wantError(t, err, "22003", "out of range for type integer")
	_, err = integer.Route(uint64(1))
	wantError(t, err, "42883", "Route: table s.t's key is a integer: want an integer (int, int8 to int64, uint8 to uint32), got a uint64 (give int64(k) of a bigint k)")
	_, err = integer.Route("42")
	wantError(t, err, "42883", "got a string")
	_, err = integer.Route(42.0)
	wantError(t, err, "42883", "got a float64")
	_, err = integer.Route(nil)
	wantError(t, err, "22004", "Route: the key is nil (NULL)")

	text := mustRouter(t, layoutWith("jumpbackhash", "text", 8, nil))
	for _, k := range []string{"", "é", "日本語", "\\x0102", "6ba7b810-9dad-11d1-80b4-00c04fd430c8"} {
		want, _ := JumpBackHashString(k, 8)
		wantRoute(t, text, k, want, fmt.Sprintf("s.t_%d", want))
	}
	_, err = text.Route("a\xffb")
	wantError(t, err, "22021", "Route: a text key must be valid UTF-8 without NUL")
	_, err = text.Route("a\x00b")
	wantError(t, err, "22021", "without NUL")
	_, err = text.Route([]byte("abc"))
	wantError(t, err, "42883", "Route: table s.t's key is a text: want a string, got a []uint8")

	bytea := mustRouter(t, layoutWith("jumphash", "bytea", 8, nil))
	want, _ := JumpHashBytes(nil, 8)
	wantRoute(t, bytea, []byte{}, want, fmt.Sprintf("s.t_%d", want))
	_, err = bytea.Route(`\x0102`)
	wantError(t, err, "42883", "want a []byte, got a string")
}

func TestNewRouterErrors(t *testing.T) {
	orders := func(from, to string) string {
		if !strings.Contains(ordersLayout, from) {
			panic(from)
		}
		return strings.Replace(ordersLayout, from, to, 1)
	}
	for _, c := range []struct{ layout, msg string }{
		{``, "EOF"},
		{`not json`, "invalid character"},
		{`null`, "null, not a JSON object"},
		{`[1, 2]`, "cannot unmarshal array"},
		{`"text"`, "cannot unmarshal string"},
		{`{"table": "x"}`, `member "method" is missing`},
		{ordersLayout + ` {}`, "text after the JSON object"},
		{orders(`"table": "public.orders"`, `"table": 5`), `member "table" must be a string, got 5`},
		{orders(`"table": "public.orders"`, `"table": ""`), `member "table" is empty`},
		{orders(`"version": "df10b318e3494e63"`, `"version": null`), `member "version" must be a string`},
		{orders(`"method": "hash_operator_class"`, `"method": "modulo"`), `method "modulo" is not one of`},
		{orders(`"key_type": "bigint"`, `"key_type": "numeric"`), `key_type "numeric" is not one of`},
		{orders(`"key_hash": "value"`, `"key_hash": "xxh3_64"`), `key_hash "xxh3_64" is not "value"`},
		{orders(`"hash_function": "public.jumpbackhash"`, `"hash_function": "public.jumphash"`), `hash_function "public.jumphash" is not jumpbackhash`},
		{orders(`"buckets": 4`, `"buckets": 0`), "buckets must be an integer from 1 to 2147483647, got 0"},
		{orders(`"buckets": 4`, `"buckets": "4"`), `got "4"`},
		{orders(`"buckets": 4`, `"buckets": 4.5`), "got 4.5"},
		{orders(`"buckets": 4`, `"buckets": 2147483648`), "got 2147483648"},
		{orders(`"buckets": 4`, `"buckets_": 4`), `member "buckets" is missing`},
		{orders(`"removed": []`, `"removed": [1]`), "removed buckets [1], but method hash_operator_class removes none"},
		{orders(`"removed": []`, `"removed": {}`), "removed must be a list of buckets"},
		{orders(`"partitions": [`, `"partitions_": [`), `member "partitions" is missing`},
		{orders(`"partitions": [{"bucket": 0,`, `"partitions": [null, {"bucket": 0,`), "partitions[0] is null"},
		{orders(`{"bucket": 1,`, `{"bucket": 0,`), "bucket 0 is the bucket of partitions public.orders_0 and public.orders_1"},
		{orders(`{"bucket": 3,`, `{"bucket": 4,`), "partitions[3]: bucket must be null or an integer from 0 to 3, got 4"},
		{orders(`"partition": "public.orders_2"`, `"partition": null`), "partitions[2]: partition is missing"},
		{orders(`"server": null, "partition": "public.orders_2"`, `"server": 7, "partition": "public.orders_2"`), "partitions[2]: server must be a string, got 7"},
		{orders(`"servers": {}`, `"servers": []`), "servers must be an object"},
		{orders(`"in_progress": null`, `"in_progress": 1`), "in_progress must be null or an object"},
		{orders(`"in_progress": null`, `"in_progress": {"buckets": [true]}`), "in_progress: buckets must be a list of buckets"},
		{strings.Replace(byUUIDLayout, `"removed": [1, 3]`, `"removed": [1, 5]`, 1), "removed: removed bucket 5 is out of range for 5 buckets"},
		{strings.Replace(byUUIDLayout, `"removed": [1, 3]`, `"removed": [1, 1]`, 1), "removed: bucket 1 is removed twice"},
		{strings.Replace(byUUIDLayout, `"removed": [1, 3]`, `"removed": [0, 1, 2, 3, 4]`, 1), "all 5 buckets are removed"},
		{strings.Replace(byUUIDLayout, `"removed": [1, 3]`, `"removed": [1, 2]`, 1), "partitions[1]: bucket 2 is a removed bucket"},
		{strings.Replace(byUUIDLayout, `"key_type": "uuid"`, `"key_type": "integer"`, 1), `key_type "integer" is not one of bigint, text, bytea, uuid (method jumpbackanchorhash)`},
	} {
		r, err := NewRouter([]byte(c.layout))
		if r != nil {
			t.Errorf("NewRouter(%.80s) read a router", c.layout)
		}
		wantError(t, err, "22023", c.msg)
		var e *Error
		if errors.As(err, &e) && !strings.HasPrefix(e.Msg, "NewRouter: not a routing layout") {
			t.Errorf("the message does not name NewRouter: %s", e.Msg)
		}
	}
	// members the router does not need may be missing; unknown ones are ignored
	r := mustRouter(t, `{"table": "s.t", "method": "jumphash", "hash_function": "jumphash", "key_type": "text", "key_hash": "xxh3_64",
		"buckets": 2, "partitions": [{"bucket": 1, "partition": "s.t_1"}, {"bucket": null, "partition": "s.t_default"}], "version": "v", "new_member": [1]}`)
	want, _ := JumpHashString("a", 2)
	if rt, err := r.Route("a"); want == 1 && (err != nil || rt.Partition != "s.t_1") || want == 0 && err == nil {
		t.Errorf("Route(a) = %+v, %v (bucket %d)", rt, err, want)
	}
	if p := r.Partitions(); len(p) != 2 || p[1].HasBucket || p[1].Partition != "s.t_default" || r.KeyColumn() != "" {
		t.Errorf("partitions %+v", p)
	}
}

func TestRouterServersAndInProgress(t *testing.T) {
	layout := strings.NewReplacer(
		`"server": null, "partition": "public.orders_3", "remote_table": null`,
		`"server": "shard b", "partition": "public.orders_3", "remote_table": "remote.\"Orders 3\""`,
		`"servers": {}`, `"servers": {"shard b": {"host": "b.example", "port": "5433", "dbname": "shards"}}`,
		`"in_progress": null`, `"in_progress": {"phase": "copy", "buckets": [3], "operation": "move", "interrupted": true}`,
	).Replace(ordersLayout)
	r := mustRouter(t, layout)
	got, err := r.Route(int64(42))
	if err != nil || got != (Route{Bucket: 3, Partition: "public.orders_3", Server: "shard b", RemoteTable: `remote."Orders 3"`}) {
		t.Errorf("Route(42) = %+v, %v", got, err)
	}
	if s := r.Servers(); len(s) != 1 || s["shard b"]["host"] != "b.example" || s["shard b"]["port"] != "5433" {
		t.Errorf("Servers() = %v", s)
	}
	ip := r.InProgress()
	if ip == nil || ip.Operation != "move" || ip.Phase != "copy" || !ip.Interrupted || ip.AllBuckets || fmt.Sprint(ip.Buckets) != "[3]" {
		t.Fatalf("InProgress() = %+v", ip)
	}
	ip.Buckets[0] = 0
	if !r.ThroughCoordinator(3) || r.ThroughCoordinator(0) || r.ThroughCoordinator(2) {
		t.Error("ThroughCoordinator: only bucket 3 moves")
	}
	// a resharding: every bucket
	for _, p := range []string{`{"phase": "copy", "buckets": null, "operation": "add_partition", "interrupted": false}`,
		`{"phase": "copy", "operation": "add_partition", "interrupted": false}`, `{"phase": "copy", "buckets": [null]}`} {
		r = mustRouter(t, strings.Replace(ordersLayout, `"in_progress": null`, `"in_progress": `+p, 1))
		if ip := r.InProgress(); ip == nil || !ip.AllBuckets {
			t.Errorf("InProgress() = %+v of %s", ip, p)
		}
		for b := 0; b < 4; b++ {
			if !r.ThroughCoordinator(b) {
				t.Errorf("ThroughCoordinator(%d) of %s", b, p)
			}
		}
	}
	// a partition here never has a remote table
	r = mustRouter(t, strings.Replace(ordersLayout, `"partition": "public.orders_3", "remote_table": null`,
		`"partition": "public.orders_3", "remote_table": "x.y"`, 1))
	if got, _ := r.Route(42); got.RemoteTable != "" || got.Server != "" {
		t.Errorf("Route(42) = %+v", got)
	}
}
