# test/lib/common.sh
#	Shell functions shared by the project's scripts: the packages the project
#	needs, and throwaway PostgreSQL clusters (as the postgres OS user, in a
#	temporary directory, on a Unix socket only).  Source it; do not run it.

PROJECT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The PostgreSQL of Debian 12's packages: the default one.
DEBIAN_PG_MAJOR=15
# PATH as it was before use_postgresql put a PostgreSQL's programs first.
SUBSETTING_PATH_BEFORE_PG=${SUBSETTING_PATH_BEFORE_PG:-$PATH}
export SUBSETTING_PATH_BEFORE_PG

# use_postgresql PG_CONFIG
#	The PostgreSQL the scripts build for and test against: sets and exports
#	PG_CONFIG, sets PG_BINDIR (its programs: initdb, pg_ctl, postgres) and
#	PG_MAJOR (its major version, e.g. 18), and puts PG_BINDIR first on PATH,
#	so that psql, pg_dump, pgbench and the rest are that PostgreSQL's, never
#	whatever else is on PATH.  Called here with $PG_CONFIG, or Debian's 15;
#	test/run-all-tests calls it again for each version it tests.  Before
#	that PostgreSQL is installed, PG_BINDIR and PG_MAJOR are empty.
use_postgresql() {
	PG_CONFIG=$1
	export PG_CONFIG
	PG_BINDIR=$("$PG_CONFIG" --bindir 2>/dev/null) || PG_BINDIR=
	PG_MAJOR=$("$PG_CONFIG" --version 2>/dev/null | sed -nE 's/^PostgreSQL ([0-9]+).*/\1/p')
	PATH=${PG_BINDIR:+$PG_BINDIR:}$SUBSETTING_PATH_BEFORE_PG
	export PATH
}
use_postgresql "${PG_CONFIG:-/usr/lib/postgresql/$DEBIAN_PG_MAJOR/bin/pg_config}"

# Debian packages the project builds, tests and benchmarks with (IPC::Run for
# the TAP tests, Swift for the handoff test and the benchmarks, venv,
# setuptools, pip and wheel for the Python client's offline install, NumPy for
# its optional array path, psycopg for its example application of direct
# writes (TAP 031); libpq-dev,
# which postgresql-server-dev depends on too, for the library's libpq link).
PROJECT_PACKAGES=(
	"postgresql-$DEBIAN_PG_MAJOR" "postgresql-client-$DEBIAN_PG_MAJOR" "postgresql-server-dev-$DEBIAN_PG_MAJOR"
	make gcc clang-14 llvm-14 libclang-rt-14-dev valgrind binutils git procps
	gnuplot-nox
	golang-go nodejs
	libxxhash-dev xxhash python3-xxhash python3-numpy python3-venv python3-setuptools python3-pip python3-wheel
	libssl-dev libpq-dev
	python3-swift python3-psycopg
	libipc-run-perl
)

# Packages test/build-postgresql needs to build PostgreSQL 18 from source,
# with ICU and its TAP test modules (IPC::Run).
POSTGRESQL_BUILD_PACKAGES=(bison flex zlib1g-dev libicu-dev pkg-config bzip2 perl libipc-run-perl)

# install_missing_packages [PACKAGE...]
#	Installs whatever of the packages (default: PROJECT_PACKAGES) is missing
#	(needs root).
install_missing_packages() {
	local missing=() p
	[ $# -eq 0 ] && set -- "${PROJECT_PACKAGES[@]}"
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing packages: ${missing[*]} (run as root to install them)" >&2
		return 1
	fi
	echo "installing: ${missing[*]}"
	apt_get update -qq &&
		DEBIAN_FRONTEND=noninteractive apt_get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# apt_get ARGUMENT...: apt-get ARGUMENT...; while another apt-get or dpkg
# holds its lock (an update running at boot, another terminal), it says so
# once and tries again every 5 s, for up to 10 minutes.
apt_get() {
	local err i
	err=$(mktemp)
	for ((i = 0; i < 120; i++)); do
		if apt-get "$@" 2>"$err"; then
			rm -f "$err"
			return 0
		fi
		grep -q 'Could not get lock\|Unable to acquire the dpkg frontend lock\|Unable to lock directory' "$err" || break
		[ "$i" -eq 0 ] && echo "waiting for the lock of another apt-get or dpkg: $(head -n 1 "$err")" >&2
		sleep 5
	done
	cat "$err" >&2
	rm -f "$err"
	return 1
}

# on_exit COMMAND [ARGUMENT...]
#	Registers a command to run when the script ends, however it ends: at its
#	last line, at `exit`, at an error under `set -e`, at Ctrl-C (SIGINT), and
#	killed by SIGTERM or SIGHUP.  The commands run once, the last registered
#	first, with the arguments as they were when registered; a command that
#	fails does not stop the others.  The scripts stop their servers and remove
#	their temporary files this way, e.g.
#		cluster=$(mktemp -d /tmp/subsetting-x.XXXXXX)
#		on_exit cluster_stop "$cluster"
#	Before them, the script's child processes still running get SIGTERM (a
#	child script then cleans up after itself the same way).
#	SIGINT is trapped, so that the script stops at the command it is running
#	even when that command survives the Ctrl-C (psql cancels its query and
#	returns).  SIGTERM and SIGHUP are not: bash then exits at once, even while
#	a command is running, and runs the EXIT trap; a trap of their own would
#	wait for the running command to end first.  test/run-build-tests checks
#	all of this.
SUBSETTING_EXIT_COMMANDS=()
on_exit() {
	SUBSETTING_EXIT_COMMANDS+=("$(printf '%q ' "$@")")
}

# The EXIT trap: the registered commands, once.  (Safe under set -e.)
run_exit_commands() {
	local i
	trap '' INT TERM HUP	# a second Ctrl-C does not cut the cleaning short
	pkill -TERM -P "$BASHPID" 2>/dev/null || true
	# a job (on_exit_as_job): the rest of its process group too
	[ "${SUBSETTING_JOB_GROUP:-}" != "$BASHPID" ] || kill -TERM -- "-$BASHPID" 2>/dev/null || true
	for ((i = ${#SUBSETTING_EXIT_COMMANDS[@]} - 1; i >= 0; i--)); do
		eval "${SUBSETTING_EXIT_COMMANDS[i]}" || true
	done
	SUBSETTING_EXIT_COMMANDS=()
	trap - INT TERM HUP
}

# The INT trap: clean up, then die of SIGINT as the caller expects.
exit_on_interrupt() {
	trap - EXIT
	run_exit_commands
	trap - INT
	kill -INT "$BASHPID"
}

trap run_exit_commands EXIT
trap exit_on_interrupt INT

# on_exit_as_job
#	For a subshell started in the background under set -m, so that it leads
#	a process group of its own (test/run-all-tests runs its suites so): it
#	cleans up after itself as a script does, with its own on_exit commands
#	(a subshell inherits the list but not the traps), and when it ends, first
#	sends SIGTERM to its whole process group (what it runs and what that
#	runs: make, prove and a TAP test's perl, not only its own children),
#	then runs them.
on_exit_as_job() {
	SUBSETTING_EXIT_COMMANDS=()
	SUBSETTING_JOB_GROUP=$BASHPID
	trap run_exit_commands EXIT
	trap exit_on_interrupt INT
}

# Runs a command as the postgres OS user when we are root, else as ourselves.
as_postgres() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# cluster_start DIR [postgres -c options...]
#	Creates a cluster in DIR/data, starts it listening only on a Unix socket in
#	DIR, and exports PGHOST, PGPORT and PGUSER so that psql and make
#	installcheck reach it.  DIR is an empty directory, or a path to create.
#	Several clusters run at once, each in its own DIR (its socket directory;
#	all use port 5432): reach each with cluster_psql.
cluster_start() {
	local dir=$1
	shift
	mkdir -p "$dir"
	[ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
	as_postgres "$PG_BINDIR/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
		--no-sync >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
	local opts="-k $dir -c listen_addresses='' -p 5432 -c fsync=off"
	local o
	for o in "$@"; do opts="$opts -c $o"; done
	as_postgres "$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "$opts" -w -t 60 start \
		>/dev/null || { cat "$dir/server.log" >&2; return 1; }
	export PGHOST=$dir PGPORT=5432 PGUSER=postgres
}

# cluster_psql DIR [psql arguments...]: psql connected to the cluster in DIR.
cluster_psql() {
	local dir=$1
	shift
	"$PG_BINDIR/psql" -X -h "$dir" -p 5432 -U postgres "$@"
}

# cluster_stop DIR: stops the cluster in DIR, if it runs, and removes DIR.
cluster_stop() {
	local dir=$1
	[ -d "$dir/data" ] && as_postgres "$PG_BINDIR/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
	rm -rf "$dir"
}

# Builds the extension and installs it into the PostgreSQL it was built for.
build_and_install() {
	make -C "$PROJECT_ROOT" -s PG_CONFIG="$PG_CONFIG" >/dev/null &&
		make -C "$PROJECT_ROOT" -s PG_CONFIG="$PG_CONFIG" install >/dev/null
}

# Prints the SQL of the README's ```sql blocks, in order: the examples.
readme_examples() {
	awk '/^```sql[[:space:]]*$/ { inside = 1; next } /^```/ { inside = 0 } inside' "$PROJECT_ROOT/README.md"
}
