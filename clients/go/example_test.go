package subsetting

import "fmt"

// The outputs below are the extension's, computed in SQL (PostgreSQL 18,
// extension 1.2): the query is in each example's comment.

// A key's bucket among 64, as SELECT jumpbackhash('user-42', 64).
func ExampleJumpBackHashString() {
	bucket, err := JumpBackHashString("user-42", 64)
	fmt.Println(bucket, err)
	// Output: 13 <nil>
}

// A bigint key's bucket by Lamping and Veach's jump hash, as SELECT jumphash(42::bigint, 10).
func ExampleJumpHash() {
	bucket, err := JumpHash(42, 10)
	fmt.Println(bucket, err)
	// Output: 2 <nil>
}

// The backends frontend task 7 connects to, as SELECT ringsteady_subset(7, 120, 12).
func ExampleRingsteadySubset() {
	backends, err := RingsteadySubset(7, 120, 12, true)
	fmt.Println(backends, err)
	// Output: [7 71 39 103 23 87 55 119 15 79 47 111] <nil>
}

// The same with Rocksteadier and lots of 4, as SELECT rocksteadier_subset(7, 25, 5, 4).
func ExampleRocksteadierSubset() {
	backends, err := RocksteadierSubset(7, 25, 5, 4)
	fmt.Println(backends, err)
	// Output: [4 22 12 3 18] <nil>
}
