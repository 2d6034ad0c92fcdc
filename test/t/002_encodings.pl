# test/t/002_encodings.pl
#	xxh3_64(text) hashes the UTF-8 bytes of the text whatever the database
#	encoding: checked in a LATIN1 and a SQL_ASCII database against
#	python3-xxhash (an independent implementation, Debian's /usr/bin/python3)
#	run here, and against a UTF-8 database.
#
#	The texts of this file are UTF-8 bytes (no "use utf8"), sent as they are
#	by a psql whose client encoding is UTF-8; the server converts.
#
# suite: encodings
use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use SubsettingTest;

my $PYTHON = '/usr/bin/python3';
$ENV{PGCLIENTENCODING} = 'UTF8';

my $node = new_server('encodings');

# sql(DATABASE, QUERY): the result, unaligned; an error shows as its message.
sub sql { return result_or_error($node, @_) }

# xxh3(TEXT): the signed XXH3-64 of the bytes of TEXT, by python3-xxhash.
sub xxh3
{
	my ($text) = @_;
	my ($out, $err) = run_command(
		[
			$PYTHON, '-c', 'import os, sys, xxhash
h = xxhash.xxh3_64_intdigest(os.fsencode(sys.argv[1]))	# the bytes as given, whatever the locale
print(h - (1 << 64) if h >= 1 << 63 else h)', $text
		]);
	die "python3-xxhash: $err" if $err ne '';
	return $out;
}

for my $db ([ 'latin1', 'LATIN1' ], [ 'sql_ascii', 'SQL_ASCII' ], [ 'utf8', 'UTF8' ])
{
	my ($name, $encoding) = @$db;
	$node->safe_psql('postgres',
		"CREATE DATABASE $name ENCODING '$encoding' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0");
	$node->safe_psql($name, "CREATE EXTENSION subsetting");
}
is(sql('latin1', 'SHOW server_encoding'), 'LATIN1', "the LATIN1 database is LATIN1");
is(sql('sql_ascii', 'SHOW server_encoding'), 'SQL_ASCII', "the SQL_ASCII database is SQL_ASCII");

# Texts whose LATIN1 and UTF-8 bytes differ (and plain ASCII, and empty).
for my $t ("café", "Grüße aus Köln", "naïve façade", "¡¿ÀÿÞß×÷°±µ¶·»«", "", "plain ascii")
{
	my $expected = xxh3($t);
	is(sql('latin1', "SELECT xxh3_64('$t')"), $expected,
		"LATIN1 database: xxh3_64('$t') is XXH3 of its UTF-8 bytes");
	is(sql('utf8', "SELECT xxh3_64('$t')"), $expected, "UTF-8 database: xxh3_64('$t')");
	is(sql('sql_ascii', "SELECT xxh3_64('$t')"), $expected,
		"SQL_ASCII database: xxh3_64('$t') (UTF-8 bytes as sent)");
}

# The conversion really happens: in LATIN1 'é' is one byte, 0xe9.
is(sql('latin1', "SELECT encode(convert_to('é', 'LATIN1'), 'hex')"), 'e9',
	"LATIN1 database: the text 'é' is stored as the byte e9");
is(sql('latin1', "SELECT xxh3_64('café') = xxh3_64(convert_to('café', 'UTF8'))"), 't',
	"LATIN1 database: xxh3_64('café') = xxh3_64 of its UTF-8 bytea");
is(sql('latin1', "SELECT xxh3_64('café') <> xxh3_64(convert_to('café', 'LATIN1'))"), 't',
	"LATIN1 database: xxh3_64('café') <> xxh3_64 of its LATIN1 bytea");

# Every character of LATIN1, in one text, built in each database from code points.
my ($all_latin1) = run_command(
	[
		$PYTHON, '-c', 'import sys
sys.stdout.buffer.write("".join(chr(c) for c in list(range(32, 127)) + list(range(160, 256))).encode("utf-8"))'
	]);
my $every_char = "SELECT xxh3_64(string_agg(chr(c), '' ORDER BY c))
                  FROM (SELECT generate_series(32, 126) UNION ALL SELECT generate_series(160, 255)) AS s(c)";
is(sql('latin1', $every_char), xxh3($all_latin1), "LATIN1 database: the text of every LATIN1 character");
is(sql('utf8', $every_char), xxh3($all_latin1), "UTF-8 database: the same characters");

# Buckets agree between the databases, so a LATIN1 coordinator and UTF-8
# shards place keys alike.
my $buckets = "SELECT md5(string_agg(jumpbackhash('clé-' || i || '-Köln', 7)::text || jumphash('ß' || i, 1000)::text, ','
                                     ORDER BY i))
               FROM generate_series(1, 10000) AS i";
is(sql('latin1', $buckets), sql('utf8', $buckets),
	"jumpbackhash and jumphash of 10000 text keys: LATIN1 = UTF-8 database");

# SQL_ASCII: bytes that are not UTF-8 cannot be hashed as text (SQLSTATE
# 22021, naming the byte); as bytea they can.
my ($out, $err);
$node->psql('sql_ascii', q{SELECT xxh3_64(E'caf\xe9')},
	stderr => \$err, extra_params => [ '-v', 'VERBOSITY=sqlstate' ]);
like($err, qr/ERROR: +22021$/m, "SQL_ASCII database: text that is not UTF-8 is refused with 22021");
like(sql('sql_ascii', q{SELECT xxh3_64(E'caf\xe9')}), qr/invalid byte sequence for encoding "UTF8": 0xe9/,
	"SQL_ASCII database: the error names the byte");
($out) = run_command(
	[
		$PYTHON, '-c',
		'import xxhash; h = xxhash.xxh3_64_intdigest(b"caf\xe9"); print(h - (1 << 64) if h >= 1 << 63 else h)'
	]);
is(sql('sql_ascii', q{SELECT xxh3_64('\x636166e9'::bytea)}), $out, "SQL_ASCII database: the same bytes as bytea");

done_testing();
