/*
 * src/resharding/procedures.c
 *		The SQL procedures of the resharding engine (docs/resharding.md,
 *		docs/scaling-out.md): each checks its arguments, then the driver
 *		(driver.h) runs the call; and the functions that show the engine's
 *		tables.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "foreign/foreign.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "resharding/driver.h"
#include "resharding/records.h"
#include "resharding/state.h"
#include "resharding/tables.h"
#include "table_owner.h"

/*
 * A resharding procedure's call (arguments parent, partition, moved_rows,
 * cutover_budget, cutover_attempts, shard_views; for reshard_engine_run,
 * the operation by name, and the arguments after it).
 */
static int64
run_resharding(FunctionCallInfo fcinfo, reshard_operation operation, int partition_arg, int budget_arg,
			   int attempts_arg, int shard_views_arg)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(budget_arg) || PG_ARGISNULL(attempts_arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("parent, cutover_budget and cutover_attempts must not be null")));
	return run_call(fcinfo, PG_GETARG_OID(0), operation, PG_ARGISNULL(partition_arg) ? InvalidOid : PG_GETARG_OID(partition_arg),
					NULL, PG_GETARG_INTERVAL_P(budget_arg), PG_GETARG_INT32(attempts_arg),
					PG_ARGISNULL(shard_views_arg) ? SHARD_VIEWS_WHERE_SHARDS_ALLOW :
					PG_GETARG_BOOL(shard_views_arg) ? SHARD_VIEWS_YES : SHARD_VIEWS_NO);
}

/* The procedure's one INOUT argument (moved_rows, moves), as its result row. */
static Datum
inout_result(FunctionCallInfo fcinfo, Datum value)
{
	TupleDesc	tupdesc;
	Datum		values[1] = {value};
	bool		nulls[1] = {false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	return HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls));
}

/* moved_rows, as the result row */
static Datum
moved_rows_result(FunctionCallInfo fcinfo, int64 moved_rows)
{
	return inout_result(fcinfo, Int64GetDatum(moved_rows));
}

PG_FUNCTION_INFO_V1(reshard_add_partition);

/*
 * CALL reshard_add_partition(parent, new_partition, moved_rows,
 * cutover_budget, cutover_attempts, shard_views)
 */
Datum
reshard_add_partition(PG_FUNCTION_ARGS)
{
	return moved_rows_result(fcinfo, run_resharding(fcinfo, OPERATION_ADD, 1, 3, 4, 5));
}

PG_FUNCTION_INFO_V1(reshard_remove_partition);

/*
 * CALL reshard_remove_partition(parent, partition, moved_rows,
 * cutover_budget, cutover_attempts, shard_views)
 */
Datum
reshard_remove_partition(PG_FUNCTION_ARGS)
{
	return moved_rows_result(fcinfo, run_resharding(fcinfo, OPERATION_REMOVE, 1, 3, 4, 5));
}

/* A server as messages name it: server "a", or this server (NULL). */
static const char *
server_name(const char *server)
{
	return server != NULL ? psprintf("server \"%s\"", server) : "this server";
}

/*
 * The OIDs that query (of one oid column, arguments $1 an oid and $2 a
 * name, NULL if server is) returns, read as the caller, in the caller's
 * memory; %1$s in query is the extension's schema.
 */
static List *
oids_of(const char *query, Oid oid, const char *server)
{
	Oid			argtypes[2] = {OIDOID, NAMEOID};
	Datum		args[2] = {ObjectIdGetDatum(oid), server != NULL ? CStringGetDatum(server) : (Datum) 0};
	char		nulls[2] = {' ', server != NULL ? ' ' : 'n'};
	List	   *oids = NIL;
	MemoryContext caller = CurrentMemoryContext;
	int			nest_level;
	char	   *schema;

	SPI_connect();
	nest_level = safe_search_path_begin();
	schema = extension_schema(NULL, NULL, NULL);
	if (SPI_execute_with_args(psprintf(query, schema), 2, argtypes, args, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not run \"%s\"", query);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Oid			found = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
		MemoryContext old = MemoryContextSwitchTo(caller);

		oids = lappend_oid(oids, found);
		MemoryContextSwitchTo(old);
	}
	safe_search_path_end(nest_level);
	SPI_finish();
	return oids;
}

/*
 * The partitions of partition's bucket of the tables co-located with its
 * table (colocate), not on server (NULL: this one), in their group's order.
 * Each table's layout is read once (materialized): a plan that reads every
 * table's for each partition of one (a join of partition_placement to
 * itself did) takes minutes at 256 partitions.
 */
static List *
colocated_partitions(Oid partition, const char *server)
{
	return oids_of("WITH me AS MATERIALIZED ("
				   "   SELECT i.inhparent AS parent, l.bucket"
				   "   FROM pg_catalog.pg_inherits AS i, %1$s.sharding_layout(i.inhparent, true) AS l"
				   "   WHERE i.inhrelid OPERATOR(pg_catalog.=) $1 AND l.partition OPERATOR(pg_catalog.=) $1),"
				   " members AS MATERIALIZED ("
				   "   SELECT g.member, g.n, me.bucket"
				   "   FROM me, pg_catalog.unnest(%1$s.colocated_with(me.parent)) WITH ORDINALITY AS g(member, n)"
				   "   WHERE g.member OPERATOR(pg_catalog.<>) me.parent),"
				   " partitions AS MATERIALIZED ("
				   "   SELECT m.n, l.partition FROM members AS m, %1$s.sharding_layout(m.member, true) AS l"
				   "   WHERE l.bucket OPERATOR(pg_catalog.=) m.bucket)"
				   " SELECT p.partition::pg_catalog.oid FROM partitions AS p"
				   " LEFT JOIN pg_catalog.pg_foreign_table AS f ON f.ftrelid OPERATOR(pg_catalog.=) p.partition"
				   " LEFT JOIN pg_catalog.pg_foreign_server AS v ON v.oid OPERATOR(pg_catalog.=) f.ftserver"
				   " WHERE v.srvname IS DISTINCT FROM $2"
				   " ORDER BY p.n",
				   partition, server);
}

/*
 * Moves partition of parent and siblings (partitions of its bucket of the
 * tables co-located with parent, not on server) to server, cut over
 * together: each move but the last runs to its cutover and waits there,
 * the last one's cutover cuts them all over in one transaction, and
 * finishes; then every move of a table of the group that has cut over and
 * not finished (these, or those a call cut short) finishes, in the
 * opposite order.  A NOTICE as each of siblings begins, naming
 * co_located_with, unless it is NULL.  Alone, a move as any.  Returns the
 * rows moved.
 */
static int64
move_together(FunctionCallInfo fcinfo, Oid parent, Oid partition, List *siblings, const char *server,
			  Interval *budget, int attempts, const char *co_located_with)
{
	List	   *partitions = lcons_oid(partition, list_copy(siblings));
	List	   *parents = list_make1_oid(parent);
	List	   *waiting = NIL;
	int			count = 0;
	Oid		   *moving = palloc(sizeof(Oid) * list_length(partitions));	/* the partitions, in order */
	Oid		   *tables = palloc(sizeof(Oid) * list_length(partitions));	/* their tables */
	bool	   *cut = palloc(sizeof(bool) * list_length(partitions));	/* whose moves have cut over */
	int64		moved = 0;
	char	   *cut_server;
	ListCell   *g;
	ListCell   *p;
	ListCell   *q;

	/*
	 * The tables of the group in the order their moves are cut over in: a
	 * table that a foreign key its partitions keep refers to
	 * (partition_foreign_keys) before the table that refers to it, else in
	 * the group's order.
	 */
	List	   *group = oids_of("WITH RECURSIVE g AS (SELECT %1$s.colocated_with($1)::pg_catalog.oid[] AS tables),"
								" d(member, depth) AS ("
								"   SELECT t, 0 FROM g, pg_catalog.unnest(g.tables) AS t"
								"   UNION ALL"
								"   SELECT k.parent::pg_catalog.oid, d.depth OPERATOR(pg_catalog.+) 1"
								"   FROM d, g, %1$s.partition_foreign_keys AS k"
								"   WHERE k.referenced::pg_catalog.oid OPERATOR(pg_catalog.=) d.member"
								"     AND k.parent OPERATOR(pg_catalog.<>) k.referenced"
								"     AND k.parent::pg_catalog.oid OPERATOR(pg_catalog.=) ANY (g.tables)"
								"     AND d.depth OPERATOR(pg_catalog.<) pg_catalog.cardinality(g.tables))"
								" SELECT d.member FROM d, g GROUP BY d.member, g.tables"
								" ORDER BY pg_catalog.max(d.depth), pg_catalog.array_position(g.tables, d.member)",
								parent, NULL);

	foreach(p, siblings)
		parents = lappend_oid(parents, partition_parent(lfirst_oid(p)));
	foreach(g, group)
		forboth(p, partitions, q, parents)
			if (lfirst_oid(q) == lfirst_oid(g))
			{
				moving[count] = lfirst_oid(p);
				tables[count++] = lfirst_oid(q);
			}
	/*
	 * (cut over by a call cut short before it finished: it finishes below;
	 * another move of one of the tables cut over refuses the call before
	 * any move begins)
	 */
	for (int i = 0; i < count; i++)
		cut[i] = move_cut_over(fcinfo, tables[i], moving[i], server, &cut_server);
	for (int i = 0; i < count; i++)
	{
		bool		last = i == count - 1;

		if (cut[i])
			continue;
		if (co_located_with != NULL && moving[i] != partition)
			ereport(NOTICE,
					(errmsg("moving %s, co-located with %s, to %s", relation_name(moving[i]), co_located_with,
							server_name(server))));
		moved += run_move(fcinfo, tables[i], moving[i], server, budget, attempts, !last, last ? waiting : NIL);
		waiting = lappend_oid(waiting, tables[i]);
	}
	/* (the other way round: a table left on a server is dropped after the one whose foreign key there refers to it) */
	for (int i = list_length(group) - 1; i >= 0; i--)
		if (move_cut_over(fcinfo, list_nth_oid(group, i), InvalidOid, NULL, &cut_server))
			moved += run_move(fcinfo, list_nth_oid(group, i), InvalidOid, cut_server, budget, attempts, false, NIL);
	return moved;
}

PG_FUNCTION_INFO_V1(partition_move);

/*
 * CALL partition_move(partition, server, moved_rows, cutover_budget,
 * cutover_attempts): the partition, whole, to the foreign server or here
 * (server NULL), online (docs/scaling-out.md), with the partitions of its
 * bucket of the tables co-located with its table, cut over together.  One
 * already there is left as it is.
 */
Datum
partition_move(PG_FUNCTION_ARGS)
{
	Oid			partition;
	Oid			parent;
	char	   *server = PG_ARGISNULL(1) ? NULL : NameStr(*PG_GETARG_NAME(1));
	char	   *current = NULL;
	List	   *siblings;
	Oid			interrupted;
	char	   *interrupted_server;
	Interval   *budget;
	int			attempts;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(3) || PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("partition, cutover_budget and cutover_attempts must not be null")));
	partition = PG_GETARG_OID(0);
	budget = PG_GETARG_INTERVAL_P(3);
	attempts = PG_GETARG_INT32(4);
	if (get_rel_relkind(partition) == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", partition)));
	parent = partition_parent(partition);
	if (!OidIsValid(parent))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("table %s is not a partition", relation_name(partition)),
				 errhint("partition_move moves a partition of a table partitioned by the extension.")));
	if (get_rel_relkind(partition) == RELKIND_FOREIGN_TABLE)
		current = GetForeignServer(GetForeignTable(partition)->serverid)->servername;
	siblings = colocated_partitions(partition, server);
	/* where it is already: nothing to do, unless a move of the table was cut short (it goes on, or is refused) */
	if ((server == NULL) == (current == NULL) && (server == NULL || strcmp(server, current) == 0) &&
		!interrupted_move(fcinfo, parent, budget, attempts, &interrupted, &interrupted_server))
	{
		if (siblings == NIL)
		{
			ereport(NOTICE,
					(errmsg("partition %s is on %s already; nothing to do", relation_name(partition),
							server_name(server))));
			return moved_rows_result(fcinfo, 0);
		}
		/* (the partitions of its bucket of the others, which are not) */
		ereport(NOTICE,
				(errmsg("moving %s, co-located with %s, to %s", relation_name(linitial_oid(siblings)),
						relation_name(partition), server_name(server))));
		return moved_rows_result(fcinfo, move_together(fcinfo, partition_parent(linitial_oid(siblings)),
													   linitial_oid(siblings), list_delete_first(siblings),
													   server, budget, attempts, relation_name(partition)));
	}
	return moved_rows_result(fcinfo, move_together(fcinfo, parent, partition, siblings, server, budget, attempts,
												   relation_name(partition)));
}

/* A move of rebalance's plan. */
typedef struct planned_move
{
	Oid			partition;
	int			bucket;
	char	   *server;
} planned_move;

/*
 * The moves that placement_plan gives for parent, servers and weights (NULL:
 * all equal), read as the caller.
 */
static List *
rebalance_plan(Oid parent, Datum servers, NullableDatum weights)
{
	Oid			argtypes[3] = {REGCLASSOID, NAMEARRAYOID, FLOAT8ARRAYOID};
	Datum		args[3] = {ObjectIdGetDatum(parent), servers, weights.value};
	char		nulls[3] = {' ', ' ', weights.isnull ? 'n' : ' '};
	List	   *moves = NIL;
	MemoryContext caller = CurrentMemoryContext;
	int			nest_level;
	char	   *schema;

	SPI_connect();
	nest_level = safe_search_path_begin();
	schema = extension_schema(NULL, NULL, NULL);
	if (SPI_execute_with_args(psprintf("SELECT p.partition::pg_catalog.oid, p.bucket, p.from_server, p.to_server"
									   " FROM %s.placement_plan($1, $2, $3) AS p", schema),
							  3, argtypes, args, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not plan the moves of %s", relation_name(parent));
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	row = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		char	   *to = SPI_getvalue(row, desc, 4);
		Oid			partition = DatumGetObjectId(SPI_getbinval(row, desc, 1, &isnull));
		MemoryContext old;
		planned_move *move;

		old = MemoryContextSwitchTo(caller);
		move = palloc(sizeof(planned_move));
		move->partition = partition;
		move->bucket = DatumGetInt32(SPI_getbinval(row, desc, 2, &isnull));
		move->server = to != NULL ? pstrdup(to) : NULL;
		moves = lappend(moves, move);
		MemoryContextSwitchTo(old);
	}
	safe_search_path_end(nest_level);
	SPI_finish();
	return moves;
}

PG_FUNCTION_INFO_V1(rebalance);

/*
 * CALL rebalance(parent, servers, weights, moves, cutover_budget,
 * cutover_attempts): the moves of placement_plan(parent, servers, weights),
 * one after the other, each
 * a partition_move; an interrupted move of the table finished first, so
 * that calling it again after an interruption goes on.  Returns the moves
 * made.
 */
Datum
rebalance(PG_FUNCTION_ARGS)
{
	Oid			parent;
	Interval   *budget;
	int			attempts;
	Oid			partition;
	char	   *server;
	List	   *moves;
	ListCell   *cell;
	int			made = 0;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(4) || PG_ARGISNULL(5))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("parent, servers, cutover_budget and cutover_attempts must not be null")));
	parent = PG_GETARG_OID(0);
	budget = PG_GETARG_INTERVAL_P(4);
	attempts = PG_GETARG_INT32(5);
	/* (the interrupted moves of the tables co-located with it too, with the others of their buckets) */
	foreach(cell, oids_of("SELECT t::pg_catalog.oid FROM pg_catalog.unnest(%1$s.colocated_with($1)) AS t",
						  parent, NULL))
	{
		Oid			table = lfirst_oid(cell);

		if (interrupted_move(fcinfo, table, budget, attempts, &partition, &server))
		{
			ereport(NOTICE,
					(errmsg("rebalance of %s: finishing the interrupted move of %s", relation_name(parent),
							relation_name(partition))));
			(void) move_together(fcinfo, table, partition, colocated_partitions(partition, server), server, budget,
								 attempts, NULL);
			made++;
		}
	}
	/* (a bucket's partitions of the tables of a group together: they follow each other in the plan) */
	moves = rebalance_plan(parent, PG_GETARG_DATUM(1), fcinfo->args[2]);
	for (int i = 0; i < list_length(moves);)
	{
		planned_move *move = list_nth(moves, i);
		List	   *together = NIL;

		for (int j = i; j < list_length(moves) && ((planned_move *) list_nth(moves, j))->bucket == move->bucket; j++)
		{
			planned_move *next = list_nth(moves, j);

			ereport(NOTICE,
					(errmsg("rebalance of %s: moving %s (bucket %d) to %s, %d of %d", relation_name(parent),
							relation_name(next->partition), next->bucket, server_name(next->server), j + 1,
							list_length(moves))));
			if (j > i)
				together = lappend_oid(together, next->partition);
		}
		(void) move_together(fcinfo, partition_parent(move->partition), move->partition, together, move->server,
							 budget, attempts, NULL);
		made += 1 + list_length(together);
		i += 1 + list_length(together);
	}
	return inout_result(fcinfo, Int32GetDatum(made));
}

PG_FUNCTION_INFO_V1(reshard_run);

/*
 * CALL reshard_engine_run(parent, operation, partition, cutover_budget,
 * cutover_attempts, shard_views): either, by name (tests).
 */
Datum
reshard_run(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("operation must not be null")));
	(void) run_resharding(fcinfo, operation_from_name(text_to_cstring(PG_GETARG_TEXT_PP(1))), 2, 3, 4, 5);
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(reshard_begin);

/*
 * CALL reshard_begin(parent, operation, partition, server): the checks and
 * the state row, nothing else (tests).
 */
Datum
reshard_begin(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("parent and operation must not be null")));
	begin_call(fcinfo, PG_GETARG_OID(0), operation_from_name(text_to_cstring(PG_GETARG_TEXT_PP(1))),
			   PG_ARGISNULL(2) ? InvalidOid : PG_GETARG_OID(2), PG_ARGISNULL(3) ? NULL : NameStr(*PG_GETARG_NAME(3)));
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(reshard_step);

/*
 * CALL reshard_step(parent, cutover_budget, cutover_attempts): the next
 * step of a resharding (tests: each phase on its own).
 */
Datum
reshard_step(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("parent, cutover_budget and cutover_attempts must not be null")));
	step_call(fcinfo, PG_GETARG_OID(0), PG_GETARG_INTERVAL_P(1), PG_GETARG_INT32(2));
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(reshard_abort);

/*
 * CALL reshard_abort(parent): undoes an interrupted resharding that has
 * not cut over; one that has is finished instead (it cannot be undone).
 */
Datum
reshard_abort(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("parent must not be null")));
	abort_call(fcinfo, PG_GETARG_OID(0));
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(reshard_phases);

/*
 * reshard_phases(): the phase table, a row per phase in its order (tests
 * compare it with reshard_state's CHECK; docs/resharding-engine.md shows
 * it).
 */
Datum
reshard_phases(PG_FUNCTION_ARGS)
{
	static const char *const isolations[] = {[READ_COMMITTED] = "read committed", [REPEATABLE_READ] = "repeatable read"};
	static const char *const policies[] = {
		[LOCKS_NONE] = "none", [LOCKS_RETRIED] = "retried", [LOCKS_CUTOVER] = "cutover", [LOCKS_OWN] = "own"};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	engine		e;

	InitMaterializedSRF(fcinfo, 0);
	memset(&e, 0, sizeof(e));
	SPI_connect();
	e.memory = CurrentMemoryContext;
	state_open(&e);
	for (int phase = 0; phase < PHASE_COUNT; phase++)
	{
		const phase_row *row = phase_of(phase);
		Datum		values[7];
		bool		nulls[7] = {false};

		values[0] = Int32GetDatum(phase + 1);
		values[1] = CStringGetTextDatum(row->name);
		nulls[2] = phase_ended(phase);
		values[2] = nulls[2] ? (Datum) 0 : CStringGetTextDatum(row->step_name);
		values[3] = CStringGetTextDatum(isolations[row->isolation]);
		values[4] = CStringGetTextDatum(policies[row->locks]);
		nulls[5] = row->routine == ROUTINE_NONE;
		values[5] = nulls[5] ? (Datum) 0 : ObjectIdGetDatum(routine_oid(&e, row->routine));
		values[6] = CStringGetTextDatum(phase_name(row->next));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	SPI_finish();
	return (Datum) 0;
}

PG_FUNCTION_INFO_V1(reshard_operations);

/*
 * reshard_operations(): the operation table, a row per operation in its
 * order (tests compare it with reshard_state's CHECK;
 * docs/resharding-engine.md shows it).
 */
Datum
reshard_operations(PG_FUNCTION_ARGS)
{
	static const char *const fates[] = {
		[PARTITION_JOINS] = "joins", [PARTITION_LEAVES] = "leaves", [PARTITION_MOVES] = "moves"};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	engine		e;

	InitMaterializedSRF(fcinfo, 0);
	memset(&e, 0, sizeof(e));
	SPI_connect();
	e.memory = CurrentMemoryContext;
	state_open(&e);
	for (int operation = 0; operation < OPERATION_COUNT; operation++)
	{
		const operation_row *row = operation_of(operation);
		Datum		values[7];
		bool		nulls[7] = {false};
		Datum		routines[PHASE_COUNT];
		int			count = 0;

		values[0] = Int32GetDatum(operation + 1);
		values[1] = CStringGetTextDatum(row->name);
		values[2] = CStringGetTextDatum(fates[row->partition]);
		values[3] = BoolGetDatum(row->rebuilds);
		values[4] = ObjectIdGetDatum(routine_oid(&e, row->plan));
		/* the routine of each phase that has one, for this operation */
		for (int phase = 0; phase < PHASE_COUNT; phase++)
			if (phase_routine(operation, phase) != ROUTINE_NONE)
				routines[count++] = ObjectIdGetDatum(routine_oid(&e, phase_routine(operation, phase)));
		values[5] = PointerGetDatum(construct_array(routines, count, REGPROCOID, sizeof(Oid), true, TYPALIGN_INT));
		values[6] = CStringGetTextDatum(row->cutover_name);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	SPI_finish();
	return (Datum) 0;
}
