# test/lib/checks.sh
#	Assertions for the project's shell test suites.  Each check prints
#	"ok NAME" or "not ok NAME" with what it got; checks_summary prints the
#	closing "N passed, N failed" and returns non-zero if a check failed.
#	Source it; do not run it.

checks_passed=0
checks_failed=0

# check_eq NAME ACTUAL EXPECTED
check_eq() {
	if [ "$2" == "$3" ]; then
		checks_passed=$((checks_passed + 1))
		echo "ok $1"
	else
		checks_failed=$((checks_failed + 1))
		echo "not ok $1: got '$2', expected '$3'"
	fi
}

# check_match NAME ACTUAL REGEX: ACTUAL matches the extended regular expression.
check_match() {
	if [[ "$2" =~ $3 ]]; then
		checks_passed=$((checks_passed + 1))
		echo "ok $1"
	else
		checks_failed=$((checks_failed + 1))
		echo "not ok $1: got '$2', which does not match /$3/"
	fi
}

checks_summary() {
	echo "$checks_passed passed, $checks_failed failed"
	[ "$checks_failed" -eq 0 ]
}
