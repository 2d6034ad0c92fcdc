// Package subsetting computes, in Go, what the subsetting PostgreSQL
// extension computes in SQL: the bucket of a key (JumpBackHash, JumpHash,
// JumpBackAnchorHash), the XXH3-64 hash by which text and byte keys are
// placed, the backend subset of a frontend task (Ringsteady, Rocksteadier)
// and the nodes of a key in a partition ring read from the extension's text
// form.  Every function gives exactly the extension's result for the same
// arguments and refuses the arguments the extension refuses.
//
// The package uses the standard library only and is safe for concurrent use:
// its values (AnchorSet, Ring) are immutable once made.
package subsetting

import "fmt"

// Error is the error of a bad argument: the same problem (and SQLSTATE) the
// extension would raise for it.
type Error struct {
	// SQLState is the extension's SQLSTATE for the problem: "22023"
	// (invalid parameter value), "54000" (program limit exceeded),
	// "22P02" (malformed ring text), "2202E" (array subscript).  A
	// Router's are PostgreSQL's for the same key: "22003" (out of range),
	// "22P02" (malformed uuid), "22021" (text that is not valid UTF-8),
	// "22004" (a nil key), "42883" (a key of another type) and "23514"
	// (no partition holds the key's bucket); NewRouter's "22023".
	SQLState string
	// Msg names the bad value, as the extension's message does.
	Msg string
}

func (e *Error) Error() string { return "subsetting: " + e.Msg }

func invalid(format string, args ...interface{}) error {
	return &Error{SQLState: "22023", Msg: fmt.Sprintf(format, args...)}
}

func limit(format string, args ...interface{}) error {
	return &Error{SQLState: "54000", Msg: fmt.Sprintf(format, args...)}
}

const maxInt32 = 1<<31 - 1

// int4 checks that v fits a SQL int (int4), as the extension's argument does.
func int4(name string, v int) error {
	if v < -1<<31 || v > maxInt32 {
		return invalid("%s must be between -2147483648 and 2147483647 (a SQL int), got %d", name, v)
	}
	return nil
}
