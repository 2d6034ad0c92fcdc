/*
 * src/ring_errors.c
 *		The SQL error of a failure the partition ring core reported: the
 *		core says what was wrong (a status code, a problem and its facts),
 *		this file says it to the user, in PostgreSQL's words and SQLSTATEs.
 *
 * Every message is a literal format string here, one per problem, as
 * PostgreSQL's messages are (the core has no message text at all).
 */
#include "postgres.h"

#include "core/ring.h"
#include "ring_errors.h"

/*
 * errmsg() of a problem of sizes or nodes, which arguments can have and a
 * ring value too: found in a value, the message says so first.
 */
#define errmsg_maybe_in_value(err, fmt, ...) \
	((err)->in_value ? errmsg("invalid ring: " fmt, __VA_ARGS__) : \
	 errmsg(fmt, __VA_ARGS__))

/* The name of a value of the text form, as the messages call it. */
static const char *
field_name(ring_field field)
{
	switch (field)
	{
		case RING_FIELD_PART_POWER:
			return "part_power";
		case RING_FIELD_REPLICAS:
			return "replicas";
		case RING_FIELD_SEED:
			return "seed";
		case RING_FIELD_NODE_ID:
			return "id";
		case RING_FIELD_ZONE:
			return "zone";
		case RING_FIELD_REGION:
			return "region";
		case RING_FIELD_WEIGHT:
			return "weight";
		case RING_FIELD_ASSIGNED_NODE:
			return "a node id";
		case RING_FIELD_NONE:
			break;
	}
	return "a value";
}

/* errmsg() of RING_TEXT_SYNTAX: where the text is wrong, and how. */
static int
errmsg_ring_syntax(const ring_facts *f)
{
	unsigned long long at = f->position;
	const char *field = field_name(f->field);

	switch (f->syntax)
	{
		case RING_SYNTAX_RING_START:
			return errmsg("invalid ring text at character %llu: expected \"{\" to start a ring", at);
		case RING_SYNTAX_RING_KEY:
			return errmsg("invalid ring text at character %llu: unexpected key (expected part_power, replicas, seed, nodes, assignment)", at);
		case RING_SYNTAX_RING_KEY_TWICE:
			return errmsg("invalid ring text at character %llu: key appears twice", at);
		case RING_SYNTAX_RING_NEXT:
			return errmsg("invalid ring text at character %llu: expected \",\" or \"}\"", at);
		case RING_SYNTAX_TRAILING_TEXT:
			return errmsg("invalid ring text at character %llu: unexpected text after the ring", at);
		case RING_SYNTAX_KEY_START:
			return errmsg("invalid ring text at character %llu: expected a quoted key", at);
		case RING_SYNTAX_KEY_INVALID:
			return errmsg("invalid ring text at character %llu: unexpected key", at);
		case RING_SYNTAX_UNTERMINATED_STRING:
			return errmsg("invalid ring text at character %llu: unterminated string", at);
		case RING_SYNTAX_COLON:
			return errmsg("invalid ring text at character %llu: expected \":\" after a key", at);
		case RING_SYNTAX_INTEGER_EXPECTED:
			return errmsg("invalid ring text at character %llu: expected an integer for %s", at, field);
		case RING_SYNTAX_NOT_INTEGER:
			return errmsg("invalid ring text at character %llu: %s must be an integer", at, field);
		case RING_SYNTAX_OUT_OF_RANGE:
			return errmsg("invalid ring text at character %llu: %s is out of range", at, field);
		case RING_SYNTAX_NUMBER_EXPECTED:
			return errmsg("invalid ring text at character %llu: expected a number for %s", at, field);
		case RING_SYNTAX_NODES_START:
			return errmsg("invalid ring text at character %llu: expected \"[\" to start the nodes", at);
		case RING_SYNTAX_NODES_NEXT:
			return errmsg("invalid ring text at character %llu: expected \",\" or \"]\" in the nodes", at);
		case RING_SYNTAX_TOO_MANY_NODES:
			return errmsg("invalid ring text at character %llu: too many nodes", at);
		case RING_SYNTAX_NODE_START:
			return errmsg("invalid ring text at character %llu: expected \"{\" to start a node", at);
		case RING_SYNTAX_NODE_KEY:
			return errmsg("invalid ring text at character %llu: unexpected key in a node (expected id, zone, region, weight)", at);
		case RING_SYNTAX_NODE_KEY_TWICE:
			return errmsg("invalid ring text at character %llu: key appears twice in a node", at);
		case RING_SYNTAX_NODE_NEXT:
			return errmsg("invalid ring text at character %llu: expected \",\" or \"}\" in a node", at);
		case RING_SYNTAX_NODE_KEYS_MISSING:
			return errmsg("invalid ring text at character %llu: a node needs \"id\", \"zone\" and \"weight\"", at);
		case RING_SYNTAX_ASSIGNMENT_START:
			return errmsg("invalid ring text at character %llu: expected \"[\" to start the assignment", at);
		case RING_SYNTAX_ASSIGNMENT_NEXT:
			return errmsg("invalid ring text at character %llu: expected \",\" or \"]\" in the assignment", at);
		case RING_SYNTAX_ASSIGNMENT_TOO_LARGE:
			return errmsg("invalid ring text at character %llu: assignment is larger than the largest ring", at);
		case RING_SYNTAX_ROW_START:
			return errmsg("invalid ring text at character %llu: expected \"[\" to start a replica's row", at);
		case RING_SYNTAX_ROW_NEXT:
			return errmsg("invalid ring text at character %llu: expected \",\" or \"]\" in a replica's row", at);
		case RING_SYNTAX_ROW_TOO_LONG:
			return errmsg("invalid ring text at character %llu: assignment row is longer than the largest ring", at);
		case RING_SYNTAX_ROWS_DIFFER:
			return errmsg("invalid ring text at character %llu: assignment rows differ in length", at);
		case RING_SYNTAX_NONE:
			break;
	}
	return errmsg("invalid ring text at character %llu", at);
}

/* errmsg() (errmsg_internal() for what only a bug causes) of err's problem */
static int
errmsg_ring_problem(const ring_error *err)
{
	const ring_facts *f = &err->facts;

	switch (err->problem)
	{
			/* sizes and node tables, of arguments or of a ring value */
		case RING_PART_POWER_RANGE:
			return errmsg_maybe_in_value(err, "part power must be between %d and %d, got %u",
										 RING_MIN_PART_POWER, RING_MAX_PART_POWER,
										 f->part_power);
		case RING_REPLICAS_TOO_FEW:
			return errmsg_maybe_in_value(err, "replicas must be at least 1, got %u",
										 f->replicas);
		case RING_NO_NODES:
			if (err->in_value)
				return errmsg("invalid ring: a ring needs at least one node");
			return errmsg("a ring needs at least one node");
		case RING_TOO_MANY_NODES:
			return errmsg_maybe_in_value(err, "a ring can have at most %llu nodes, got %u",
										 (unsigned long long) f->limit, f->node_count);
		case RING_TOO_MANY_SLOTS:
			return errmsg_maybe_in_value(err, "a ring of 2^%u partitions with %u replicas would hold %llu partition-replicas, more than the limit of %llu",
										 f->part_power, f->replicas,
										 (unsigned long long) f->slots,
										 (unsigned long long) f->limit);
		case RING_WEIGHT_NAN:
			return errmsg_maybe_in_value(err, "weight of node %d must be a number, got NaN",
										 f->node_id);
		case RING_WEIGHT_INFINITE:
			if (f->weight < 0)
				return errmsg_maybe_in_value(err, "weight of node %d must be finite, got -infinity",
											 f->node_id);
			return errmsg_maybe_in_value(err, "weight of node %d must be finite, got infinity",
										 f->node_id);
		case RING_WEIGHT_NEGATIVE:
			return errmsg_maybe_in_value(err, "weight of node %d cannot be negative, got %g",
										 f->node_id, f->weight);
		case RING_WEIGHTS_ALL_ZERO:
			if (err->in_value)
				return errmsg("invalid ring: all node weights are zero");
			return errmsg("all node weights are zero");
		case RING_TOO_FEW_WEIGHTED_NODES:
			return errmsg_maybe_in_value(err, "replicas (%u) cannot exceed the number of nodes with positive weight (%u)",
										 f->replicas, f->weighted_nodes);
		case RING_DUPLICATE_NODE_ID:
			return errmsg_maybe_in_value(err, "node id %d appears more than once",
										 f->node_id);

			/* the binary form */
		case RING_VALUE_TOO_SHORT:
			return errmsg("ring value is too short: %llu bytes",
						  (unsigned long long) f->length);
		case RING_BAD_MAGIC:
			return errmsg("ring value does not start with the ring magic number");
		case RING_UNSUPPORTED_VERSION:
			return errmsg("ring format version %u is not supported (this build reads versions %d and %d)",
						  f->format_version, RING_FORMAT_VERSION_1, RING_FORMAT_VERSION);
		case RING_HEADER_TOO_SHORT:
			return errmsg("ring value is too short: %llu bytes, the header alone has %llu",
						  (unsigned long long) f->length, (unsigned long long) f->needed);
		case RING_LENGTH_MISMATCH:
			return errmsg("invalid ring: %llu bytes, but part power %u, %u replicas and %u nodes need %llu",
						  (unsigned long long) f->length, f->part_power, f->replicas,
						  f->node_count, (unsigned long long) f->needed);
		case RING_HEADER_RESERVED_NOT_ZERO:
			return errmsg("invalid ring: reserved header field is not zero");
		case RING_NODE_RESERVED_NOT_ZERO:
			return errmsg("invalid ring: reserved field of node %u is not zero",
						  f->node_index);
		case RING_FINGERPRINT_MISMATCH:
			return errmsg("invalid ring: fingerprint does not match the contents");
		case RING_DIGEST_MISMATCH:
			return errmsg("invalid ring: digest does not match the contents");
		case RING_NODE_TABLE_DUPLICATE:
			return errmsg("invalid ring: duplicate node id %d", f->node_id);
		case RING_NODE_TABLE_UNSORTED:
			return errmsg("invalid ring: nodes are not sorted by id at node %d",
						  f->node_id);

			/* the assignment of a ring value */
		case RING_NODE_INDEX_RANGE:
			return errmsg("invalid ring: replica %u of partition %u names node index %u, but there are %u nodes",
						  f->replica, f->partition, f->node_index, f->node_count);
		case RING_REPLICAS_ON_ONE_NODE:
			return errmsg("invalid ring: partition %u has two replicas on node %d",
						  f->partition, f->node_id);

			/* the text form */
		case RING_TEXT_SYNTAX:
			return errmsg_ring_syntax(f);
		case RING_TEXT_KEYS_MISSING:
			return errmsg("invalid ring text: \"part_power\", \"replicas\", \"nodes\" and \"assignment\" are required");
		case RING_TEXT_ASSIGNMENT_SHAPE:
			return errmsg("invalid ring: part_power %u and %u replicas need an assignment of %u rows of %u node ids, got %u rows of %u",
						  f->part_power, f->replicas, f->replicas,
						  1u << f->part_power, f->rows, f->row_length);
		case RING_TEXT_UNKNOWN_NODE:
			return errmsg("invalid ring: replica %u of partition %u is on node %d, which is not in the nodes",
						  f->replica, f->partition, f->node_id);
		case RING_TEXT_BUFFER_TOO_SMALL:
			return errmsg_internal("text form of the ring takes %llu bytes, the buffer has %llu",
								   (unsigned long long) f->needed,
								   (unsigned long long) f->length);

			/* no fault of the input */
		case RING_OUT_OF_MEMORY:
			return errmsg("out of memory");
		case RING_CANCELED:
			return errmsg_internal("partition ring: canceled");
		case RING_DIGEST_FAILED:
			return errmsg_internal("partition ring: could not compute the digest of the ring");
		case RING_NO_DIGEST_FUNCTION:
			return errmsg_internal("partition ring: no digest function to encode or decode a ring with");
		case RING_BUILDER_BROKEN:
			return errmsg_internal("partition ring: ring builder invariant failed");
		case RING_NO_RECEIVER:
			return errmsg_internal("partition ring: no node can take a replica");
		case RING_ARENA_FULL:
			return errmsg_internal("partition ring: ring builder made more than %llu allocations",
								   (unsigned long long) f->limit);
		case RING_NO_PROBLEM:
			break;
	}
	return errmsg_internal("partition ring: unexpected problem %d (status %d)",
						   (int) err->problem, (int) err->code);
}

void
ring_report_error(const ring_error *err, int format_code)
{
	int			sqlstate;

	switch (err->code)
	{
		case RING_EINVAL:
			sqlstate = ERRCODE_INVALID_PARAMETER_VALUE;
			break;
		case RING_ELIMIT:
			sqlstate = ERRCODE_PROGRAM_LIMIT_EXCEEDED;
			break;
		case RING_EFORMAT:
			sqlstate = format_code;
			break;
		case RING_ENOMEM:
			sqlstate = ERRCODE_OUT_OF_MEMORY;
			break;
		default:

			/*
			 * RING_EINTERNAL (a bug), RING_ECANCELED (the server's
			 * interrupt check raises the cancel before the core can return
			 * it) and any other: what elog(ERROR) raises, XX000 and a
			 * message not meant for translation.
			 */
			sqlstate = ERRCODE_INTERNAL_ERROR;
			break;
	}
	ereport(ERROR, (errcode(sqlstate), errmsg_ring_problem(err)));
}
