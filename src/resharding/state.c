/*
 * src/resharding/state.c
 *		The resharding engine's state row and SQL routines (state.h).
 *
 * A resharding is a row of reshard_state.  The engine keeps it in memory as
 * the values of its columns, read and written by column number (state_column,
 * checked against the table when a call begins), and turns it into the row
 * type only to hand it to an SQL routine or to write it.  It writes the row
 * as the owner of reshard_state.
 *
 * The SQL routines it calls are the extension's, found once per call by
 * name among the extension's members, their arguments checked, then called
 * by OID through the function manager (which checks no privilege: nobody
 * may execute them).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/resowner.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "compat.h"
#include "resharding/acl.h"
#include "resharding/capture.h"
#include "resharding/records.h"
#include "resharding/state.h"
#include "resharding/tables.h"
#include "table_owner.h"


/* The columns of reshard_state: name and type, by state_column. */
static const struct
{
	const char *name;
	Oid			type;
}			state_columns[STATE_COLUMNS] = {
	[STATE_PARENT] = {"parent", OIDOID},
	[STATE_PARENT_NAME] = {"parent_name", TEXTOID},
	[STATE_OPERATION] = {"operation", TEXTOID},
	[STATE_PARTITION] = {"partition", OIDOID},
	[STATE_BUCKET] = {"bucket", INT4OID},
	[STATE_METHOD] = {"method", TEXTOID},
	[STATE_KEY] = {"key", TEXTOID},
	[STATE_OLD_BUCKETS] = {"old_buckets", INT4OID},
	[STATE_NEW_BUCKETS] = {"new_buckets", INT4OID},
	[STATE_OLD_BUCKET_SQL] = {"old_bucket_sql", TEXTOID},
	[STATE_NEW_BUCKET_SQL] = {"new_bucket_sql", TEXTOID},
	[STATE_NEW_PARTITION_BY] = {"new_partition_by", TEXTOID},
	[STATE_NEW_BOUND] = {"new_bound", TEXTOID},
	[STATE_SOURCES] = {"sources", OIDARRAYOID},
	[STATE_SHADOWS] = {"shadows", OIDARRAYOID},
	[STATE_NEW_PARENT] = {"new_parent", OIDOID},
	[STATE_LOG] = {"log", OIDOID},
	[STATE_LOG_SEQUENCE] = {"log_sequence", OIDOID},
	[STATE_NAME_KEY] = {"name_key", TEXTOID},
	[STATE_CATALOG] = {"catalog", TEXTARRAYOID},
	[STATE_VALIDATE] = {"validate", TEXTARRAYOID},
	[STATE_FOREIGN_KEYS] = {"foreign_keys", TEXTARRAYOID},
	[STATE_ANALYZE_PARENT] = {"analyze_parent", BOOLOID},
	[STATE_SHARD_VIEWS] = {"shard_views", BOOLOID},
	[STATE_SHARD_OPTIONS] = {"shard_options", TEXTARRAYOID},
	[STATE_HIDDEN_KEYS] = {"hidden_keys", OIDARRAYOID},
	[STATE_SERVER] = {"server", TEXTOID},
	[STATE_PHASE] = {"phase", TEXTOID},
	[STATE_ROWS_TO_MOVE] = {"rows_to_move", INT8OID},
	[STATE_ROWS_COPIED] = {"rows_copied", INT8OID},
	[STATE_ROWS_VERIFIED] = {"rows_verified", INT8OID},
	[STATE_SOURCES_COPIED] = {"sources_copied", INT4OID},
	[STATE_CHANGES_APPLIED] = {"changes_applied", INT8OID},
	[STATE_CHANGES_WAITING] = {"changes_waiting", INT8OID},
	[STATE_CUTOVER_ATTEMPTS] = {"cutover_attempts", INT4OID},
	[STATE_STARTED] = {"started", TIMESTAMPTZOID},
	[STATE_LAST_PROGRESS] = {"last_progress", TIMESTAMPTZOID},
	[STATE_BACKEND_PID] = {"backend_pid", INT4OID},
	[STATE_ERROR] = {"error", TEXTOID},
	[STATE_MADE] = {"made", TEXTARRAYOID},
};

/*
 * The SQL routines the engine calls: name and number of arguments (a
 * routine whose first argument is a state row takes and returns
 * reshard_state).
 */
static const struct
{
	const char *name;
	int			nargs;
	bool		takes_state;
}			routines[ROUTINE_COUNT] = {
	[ROUTINE_PLAN] = {"reshard_plan", 2, true},
	[ROUTINE_CHECK_CATALOG] = {"reshard_catalog_check", 1, true},
	[ROUTINE_PHASE_SETUP] = {"reshard_phase_setup", 1, true},
	[ROUTINE_PHASE_COPY] = {"reshard_phase_copy", 1, true},
	[ROUTINE_APPLY_LOG] = {"reshard_apply_log", 3, true},
	[ROUTINE_PHASE_VERIFY] = {"reshard_phase_verify", 1, true},
	[ROUTINE_TAKEOVER_SQL] = {"reshard_takeover_sql", 2, false},
	[ROUTINE_PHASE_CUTOVER] = {"reshard_phase_cutover", 2, true},
	[ROUTINE_PHASE_FINISH] = {"reshard_phase_finish", 1, true},
	[ROUTINE_PHASE_UNDO] = {"reshard_phase_undo", 2, true},
	[ROUTINE_MOVE_PLAN] = {"move_plan", 2, true},
	[ROUTINE_MOVE_SETUP] = {"move_phase_setup", 1, true},
	[ROUTINE_MOVE_COPY] = {"move_phase_copy", 1, true},
	[ROUTINE_MOVE_VERIFY] = {"move_phase_verify", 1, true},
	[ROUTINE_MOVE_CUTOVER] = {"move_phase_cutover", 1, true},
	[ROUTINE_MOVE_FINISH] = {"move_phase_finish", 1, true},
	[ROUTINE_MOVE_UNDO] = {"move_phase_undo", 2, true},
	[ROUTINE_MOVE_FOREIGN_KEYS] = {"move_foreign_keys", 3, true},
	[ROUTINE_SHARD_VIEWS] = {"reshard_shard_views", 3, true},
	[ROUTINE_CAPTURE_TRIGGER] = {"reshard_capture", 0, false},
	[ROUTINE_GUARD_TRIGGER] = {"reshard_guard", 0, false},
	[ROUTINE_WHOLE_ROW_TRIGGER] = {"reshard_whole_row", 0, false},
	[ROUTINE_CLEANUP_DROP] = {"reshard_cleanup_drop", 2, true},
};

/* A relation's name, schema-qualified and quoted as needed, for messages and queries. */
char *
relation_name(Oid relation)
{
	char	   *name = get_rel_name(relation);

	if (name == NULL)
		return psprintf("relation %u", relation);	/* dropped meanwhile */
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relation)), name);
}

/* The table relation is a partition of, or InvalidOid. */
Oid
partition_parent(Oid relation)
{
	return get_rel_relispartition(relation) ? get_partition_parent(relation, false) : InvalidOid;
}

/*
 * The extension's schema, reshard_state's owner and row type, and the OIDs
 * of the routines; an error if the table's columns or a routine are not
 * those this library knows (a library and scripts of different versions).
 */
void
state_open(engine *e)
{
	bool		isnull;
	int			nest_level = safe_search_path_begin();
	TupleDesc	desc;
	Datum	   *names = palloc(sizeof(Datum) * ROUTINE_COUNT);
	Oid			argtypes[1] = {TEXTARRAYOID};
	Datum		args[1];

	e->schema = extension_schema("reshard_state", &e->state_owner, &e->state_type);

	desc = lookup_rowtype_tupdesc(e->state_type, -1);
	for (int i = 0; i < STATE_COLUMNS; i++)
		if (i >= desc->natts || TupleDescAttr(desc, i)->attisdropped ||
			strcmp(NameStr(TupleDescAttr(desc, i)->attname), state_columns[i].name) != 0 ||
			TupleDescAttr(desc, i)->atttypid != state_columns[i].type)
			elog(ERROR, "column %d of %s.reshard_state is not %s %s: the library and the extension's scripts differ",
				 i + 1, e->schema, state_columns[i].name, format_type_be(state_columns[i].type));
	if (desc->natts != STATE_COLUMNS)
		elog(ERROR, "%s.reshard_state has %d columns, not %d", e->schema, desc->natts, STATE_COLUMNS);
	ReleaseTupleDesc(desc);

	for (int i = 0; i < ROUTINE_COUNT; i++)
	{
		names[i] = CStringGetTextDatum(routines[i].name);
		e->routines[i] = InvalidOid;
	}
	args[0] = PointerGetDatum(construct_array(names, ROUTINE_COUNT, TEXTOID, -1, false, TYPALIGN_INT));
	if (SPI_execute_with_args("SELECT p.proname::pg_catalog.text, p.oid, p.pronargs, p.proargtypes[0]"
							  " FROM pg_catalog.pg_extension x"
							  " JOIN pg_catalog.pg_depend d ON d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass"
							  "  AND d.refobjid = x.oid AND d.deptype = 'e'"
							  "  AND d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass"
							  " JOIN pg_catalog.pg_proc p ON p.oid = d.objid"
							  " WHERE x.extname = 'subsetting' AND p.proname::pg_catalog.text = ANY ($1)",
							  1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the extension's routines");
	for (uint64 row = 0; row < SPI_processed; row++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[row];
		char	   *name = SPI_getvalue(tuple, SPI_tuptable->tupdesc, 1);

		for (int i = 0; i < ROUTINE_COUNT; i++)
			if (strcmp(name, routines[i].name) == 0)
			{
				Datum		first = SPI_getbinval(tuple, SPI_tuptable->tupdesc, 4, &isnull);

				if (OidIsValid(e->routines[i]) ||
					DatumGetInt16(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 3, &isnull)) != routines[i].nargs ||
					(routines[i].takes_state && (isnull || DatumGetObjectId(first) != e->state_type)))
					elog(ERROR, "routine %s.%s of the extension is not the one this library calls",
						 e->schema, routines[i].name);
				e->routines[i] = DatumGetObjectId(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 2, &isnull));
			}
	}
	for (int i = 0; i < ROUTINE_COUNT; i++)
		if (!OidIsValid(e->routines[i]))
			elog(ERROR, "routine %s.%s of the extension is missing", e->schema, routines[i].name);
	safe_search_path_end(nest_level);
}

Oid
routine_oid(engine *e, routine_id routine)
{
	Assert(routine > ROUTINE_NONE && routine < ROUTINE_COUNT);
	return e->routines[routine];
}

/* The state row as a value of reshard_state. */
static Datum
state_datum(engine *e)
{
	TupleDesc	desc = lookup_rowtype_tupdesc(e->state_type, -1);
	Datum		result = heap_copy_tuple_as_datum(heap_form_tuple(desc, e->values, e->nulls), desc);

	ReleaseTupleDesc(desc);
	return result;
}

/* A value of reshard_state becomes the state row (copied into the call's memory). */
static void
set_state_datum(engine *e, Datum row)
{
	HeapTupleHeader header = DatumGetHeapTupleHeader(row);
	TupleDesc	desc = lookup_rowtype_tupdesc(e->state_type, -1);
	HeapTupleData tuple;
	MemoryContext old = MemoryContextSwitchTo(e->memory);

	tuple.t_len = HeapTupleHeaderGetDatumLength(header);
	ItemPointerSetInvalid(&tuple.t_self);
	tuple.t_tableOid = InvalidOid;
	tuple.t_data = header;
	heap_deform_tuple(heap_copytuple(&tuple), desc, e->values, e->nulls);
	MemoryContextSwitchTo(old);
	ReleaseTupleDesc(desc);
	e->has_state = true;
	e->phase = e->nulls[STATE_PHASE] ? PHASE_SETUP : phase_from_name(state_text(e, STATE_PHASE));
}

/*
 * Runs query (%1$s: the extension's schema) as the owner of reshard_state,
 * its tables' owner, with arguments $1 (the state row, or NULL), $2 (the
 * table's OID) and $3 (an int4, or NULL: extra_null); returns SPI's result
 * code, its rows in SPI_tuptable.
 */
int
state_table_query(engine *e, const char *query, Datum extra, bool extra_null)
{
	Oid			saved_user;
	int			saved_context;
	Datum		args[3] = {e->has_state ? state_datum(e) : (Datum) 0, ObjectIdGetDatum(e->parent), extra};
	Oid			types[3] = {e->state_type, OIDOID, INT4OID};
	char		nulls[3] = {e->has_state ? ' ' : 'n', ' ', extra_null ? 'n' : ' '};
	MemoryContext context = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	int			ret = 0;

	/*
	 * In a subtransaction of its own: these queries run between the steps'
	 * units, in the call's own transaction, and an error in one (a cancel,
	 * a trigger) would otherwise leave its snapshot, SPI connection and
	 * user behind, and the call could then neither roll back nor undo.
	 * (The rows of SPI_tuptable outlive a subtransaction committed.)
	 */
	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(context);
	PG_TRY();
	{
		int			nest_level = safe_search_path_begin();

		GetUserIdAndSecContext(&saved_user, &saved_context);
		SetUserIdAndSecContext(e->state_owner, saved_context | SECURITY_LOCAL_USERID_CHANGE);
		ret = SPI_execute_with_args(psprintf(query, e->schema), 3, types, args, nulls, false, 0);
		SetUserIdAndSecContext(saved_user, saved_context);
		safe_search_path_end(nest_level);
		if (ret < 0)
			elog(ERROR, "could not run \"%s\": %s", query, SPI_result_code_string(ret));
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		ErrorData  *error;

		MemoryContextSwitchTo(e->memory);
		error = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(context);
		CurrentResourceOwner = owner;
		ReThrowError(error);
	}
	PG_END_TRY();
	MemoryContextSwitchTo(context);
	CurrentResourceOwner = owner;
	return ret;
}

/*
 * state_table_query without $3, keeping the row it returns as the state, if
 * any.  Returns whether it returned one.
 */
static bool
state_query(engine *e, const char *query)
{
	int			ret = state_table_query(e, query, (Datum) 0, true);
	bool		isnull = true;
	Datum		row = (Datum) 0;

	if ((ret == SPI_OK_SELECT || ret == SPI_OK_INSERT_RETURNING) && SPI_processed == 1)
		row = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		return false;
	set_state_datum(e, row);
	return true;
}

/* Reads the state row of e->parent; false if there is none. */
bool
load_state(engine *e)
{
	e->has_state = false;
	if (!state_query(e, "SELECT s FROM %1$s.reshard_state AS s WHERE s.parent = $2"))
		return false;
	e->operation = operation_from_name(state_text(e, STATE_OPERATION));
	return true;
}

/* The column list of reshard_state, for save_state. */
static char *
state_column_list(void)
{
	StringInfoData list;

	initStringInfo(&list);
	for (int i = 0; i < STATE_COLUMNS; i++)
		appendStringInfo(&list, "%s%s", i > 0 ? ", " : "", state_columns[i].name);
	return list.data;
}

/*
 * What the routines made since the state row was last written (its column
 * made, reshard_cleanup_record), recorded in reshard_state_cleanup, after the
 * records of the call so far, in the transaction that writes the state row
 * (the routines' own); then forgotten by the state row.  The rows are
 * those of the state row of e->parent, which exists.
 */
void
record_made(engine *e)
{
	if (state_is_null(e, STATE_MADE))
		return;
	(void) state_query(e, "INSERT INTO %1$s.reshard_state_cleanup"
					   " (parent, ordinal, kind, object, relation, server, marker, policy, member)"
					   " SELECT $2, coalesce((SELECT pg_catalog.max(c.ordinal) FROM %1$s.reshard_state_cleanup AS c"
					   "                      WHERE c.parent = $2), 0) + i,"
					   "        m[i][1], m[i][2], m[i][3]::pg_catalog.oid, m[i][4], m[i][5], m[i][6], m[i][7]"
					   " FROM (SELECT ($1).made) AS x(m), pg_catalog.generate_subscripts(x.m, 1) AS i ORDER BY i");
	set_state_null(e, STATE_MADE);
}

/*
 * Writes the state row, with the time of this progress and this backend,
 * and records what was made (the row's parent is still e->parent: at the
 * cutover the UPDATE makes the records follow it to the new parent).
 */
void
save_state(engine *e)
{
	e->values[STATE_LAST_PROGRESS] = TimestampTzGetDatum(GetCurrentTimestamp());
	e->nulls[STATE_LAST_PROGRESS] = false;
	set_state_int64(e, STATE_BACKEND_PID, MyProcPid);
	record_made(e);
	(void) state_query(e, psprintf("UPDATE %%1$s.reshard_state AS t SET (%s) = ROW(($1).*) WHERE t.parent = $2",
								   state_column_list()));
	/*
	 * (and so do the records where the foreign key's cascade does not fire:
	 * under session_replication_role = replica)
	 */
	(void) state_table_query(e, "UPDATE %1$s.reshard_state_cleanup AS c SET parent = ($1).parent"
							 " WHERE c.parent = $2 AND ($1).parent <> $2", (Datum) 0, true);
}

/* Writes the state row of a new resharding (after its plan). */
void
insert_state(engine *e)
{
	TimestampTz now = GetCurrentTimestamp();
	Datum		made = e->values[STATE_MADE];
	bool		made_null = e->nulls[STATE_MADE];

	e->values[STATE_STARTED] = e->values[STATE_LAST_PROGRESS] = TimestampTzGetDatum(now);
	e->nulls[STATE_STARTED] = e->nulls[STATE_LAST_PROGRESS] = false;
	set_state_int64(e, STATE_BACKEND_PID, MyProcPid);
	set_state_null(e, STATE_MADE);
	(void) state_query(e, "INSERT INTO %1$s.reshard_state SELECT ($1).* RETURNING reshard_state");
	/* (what the plan recorded, to be made on a server: committed with the row) */
	e->values[STATE_MADE] = made;
	e->nulls[STATE_MADE] = made_null;
	record_made(e);
}

/* Deletes the state row of e->parent, and/or those of tables that were dropped. */
void
delete_states(engine *e, bool this_table, bool of_dropped_tables)
{
	/* (the records first: the foreign key's cascade does not fire under session_replication_role = replica) */
	if (this_table)
	{
		(void) state_table_query(e, "DELETE FROM %1$s.reshard_state_cleanup WHERE parent = $2", (Datum) 0, true);
		(void) state_query(e, "DELETE FROM %1$s.reshard_state WHERE parent = $2");
	}
	if (of_dropped_tables)
	{
		(void) state_table_query(e, "DELETE FROM %1$s.reshard_state_cleanup AS r"
								 " WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_class c WHERE c.oid = r.parent)",
								 (Datum) 0, true);
		(void) state_query(e, "DELETE FROM %1$s.reshard_state AS s"
						   " WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_class c WHERE c.oid = s.parent)");
	}
	e->has_state = false;
}

/*
 * A state row in memory for a new call of operation on e->parent: counters
 * at 0, a random name_key, the rest NULL (the phase the driver's).
 */
void
new_state(engine *e, reshard_operation operation)
{
	uint8		random[16];
	char		key[sizeof(random) * 2 + 1];

	if (!pg_strong_random(random, sizeof(random)))
		elog(ERROR, "could not generate random values");
	for (int i = 0; i < (int) sizeof(random); i++)
		snprintf(key + i * 2, 3, "%02x", random[i]);
	for (int i = 0; i < STATE_COLUMNS; i++)
	{
		e->values[i] = (Datum) 0;
		e->nulls[i] = true;
	}
	e->has_state = true;
	set_state_oid(e, STATE_PARENT, e->parent);
	e->operation = operation;
	set_state_text(e, STATE_OPERATION, operation_of(operation)->name);
	set_state_text(e, STATE_NAME_KEY, key);
	set_state_bool(e, STATE_SHARD_VIEWS, false);
	set_state_int64(e, STATE_ROWS_TO_MOVE, 0);
	set_state_int64(e, STATE_ROWS_COPIED, 0);
	set_state_int64(e, STATE_ROWS_VERIFIED, 0);
	set_state_int64(e, STATE_SOURCES_COPIED, 0);
	set_state_int64(e, STATE_CHANGES_APPLIED, 0);
	set_state_int64(e, STATE_CUTOVER_ATTEMPTS, 0);
}

bool
state_is_null(engine *e, state_column column)
{
	return e->nulls[column];
}

bool
state_bool(engine *e, state_column column)
{
	Assert(state_columns[column].type == BOOLOID);
	return !e->nulls[column] && DatumGetBool(e->values[column]);
}

/* An integer column (bigint or int), 0 if NULL. */
int64
state_int64(engine *e, state_column column)
{
	if (e->nulls[column])
		return 0;
	if (state_columns[column].type == INT8OID)
		return DatumGetInt64(e->values[column]);
	Assert(state_columns[column].type == INT4OID);
	return DatumGetInt32(e->values[column]);
}

Oid
state_oid(engine *e, state_column column)
{
	Assert(state_columns[column].type == OIDOID);
	return e->nulls[column] ? InvalidOid : DatumGetObjectId(e->values[column]);
}

/* The OIDs of an oid[] column, NULLs left out. */
List *
state_oids(engine *e, state_column column)
{
	Datum	   *oids;
	bool	   *nulls;
	int			count;
	List	   *result = NIL;

	Assert(state_columns[column].type == OIDARRAYOID);
	if (e->nulls[column])
		return NIL;
	deconstruct_array(DatumGetArrayTypeP(e->values[column]), OIDOID, sizeof(Oid), true, TYPALIGN_INT,
					  &oids, &nulls, &count);
	for (int i = 0; i < count; i++)
		if (!nulls[i])
			result = lappend_oid(result, DatumGetObjectId(oids[i]));
	return result;
}

/* The number of elements of an array column, NULLs counted (0 if NULL). */
int
state_array_length(engine *e, state_column column)
{
	ArrayType  *array;

	if (e->nulls[column])
		return 0;
	array = DatumGetArrayTypeP(e->values[column]);
	return ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
}

/* A text column, or NULL. */
char *
state_text(engine *e, state_column column)
{
	Assert(state_columns[column].type == TEXTOID);
	return e->nulls[column] ? NULL : TextDatumGetCString(e->values[column]);
}

void
set_state_int64(engine *e, state_column column, int64 value)
{
	if (state_columns[column].type == INT8OID)
	{
		MemoryContext old = MemoryContextSwitchTo(e->memory);

		e->values[column] = Int64GetDatum(value);	/* by reference where int8 is */
		MemoryContextSwitchTo(old);
	}
	else
	{
		Assert(state_columns[column].type == INT4OID && value >= PG_INT32_MIN && value <= PG_INT32_MAX);
		e->values[column] = Int32GetDatum((int32) value);
	}
	e->nulls[column] = false;
}

void
set_state_oid(engine *e, state_column column, Oid value)
{
	Assert(state_columns[column].type == OIDOID);
	e->values[column] = ObjectIdGetDatum(value);
	e->nulls[column] = !OidIsValid(value);
}

void
set_state_bool(engine *e, state_column column, bool value)
{
	Assert(state_columns[column].type == BOOLOID);
	e->values[column] = BoolGetDatum(value);
	e->nulls[column] = false;
}

/* Sets a column to NULL. */
void
set_state_null(engine *e, state_column column)
{
	e->values[column] = (Datum) 0;
	e->nulls[column] = true;
}

/* Sets a text column (NULL: to NULL). */
void
set_state_text(engine *e, state_column column, const char *value)
{
	MemoryContext old = MemoryContextSwitchTo(e->memory);

	Assert(state_columns[column].type == TEXTOID);
	e->values[column] = value ? CStringGetTextDatum(value) : (Datum) 0;
	e->nulls[column] = value == NULL;
	MemoryContextSwitchTo(old);
}

/*
 * Calls a routine that takes and returns the state row, as the table's
 * owner, with nargs (0 to 2) more arguments; the state row becomes what it
 * returns.  The routines work and count; they never change the phase.
 */
void
run_routine(engine *e, routine_id routine, int nargs, Datum arg1, Datum arg2)
{
	table_owner_context owner;
	Oid			function = routine_oid(e, routine);
	Datum		state = state_datum(e);
	Datum		result;
	reshard_phase phase = e->phase;
	List	   *relations = list_make4_oid(e->parent, state_oid(e, STATE_PARTITION), state_oid(e, STATE_NEW_PARENT),
										   state_oid(e, STATE_LOG));
	List	   *kept;

	Assert(routines[routine].takes_state && routines[routine].nargs == nargs + 1);
	/* (what an event trigger grants on them, fired by the routine's DDL, taken back: acl.h) */
	relations = lappend_oid(relations, state_oid(e, STATE_LOG_SEQUENCE));
	relations = list_concat(relations, state_oids(e, STATE_SOURCES));
	relations = list_concat(relations, state_oids(e, STATE_SHADOWS));
	kept = reshard_grants_kept(relations);
	table_owner_enter(e->parent, &owner);
	reshard_engine_writing = true;
	if (nargs == 2)
		result = OidFunctionCall3(function, state, arg1, arg2);
	else if (nargs == 1)
		result = OidFunctionCall2(function, state, arg1);
	else
		result = OidFunctionCall1(function, state);
	reshard_engine_writing = false;
	table_owner_leave(&owner);
	reshard_grants_restore(kept);
	set_state_datum(e, result);
	if (e->phase != phase)
		elog(ERROR, "routine %s changed the phase of the resharding of %s", routines[routine].name,
			 relation_name(e->parent));
}

/*
 * The old parent and the old local partitions that a table filled
 * replaces (a foreign partition keeps its place), and in *filled (if not
 * NULL) the tables that replace them: the new parent, the shadows (not a
 * partition moved to a server, partition_move: it is replaced by a
 * foreign table).
 */
List *
replaced_sources(engine *e, List **filled)
{
	List	   *old = list_make1_oid(e->parent);
	Oid			partition = state_oid(e, STATE_PARTITION);
	Datum	   *sources;
	Datum	   *shadows;
	bool	   *source_nulls;
	bool	   *shadow_nulls;
	int			source_count;
	int			shadow_count;

	if (filled != NULL)
		*filled = list_make1_oid(state_oid(e, STATE_NEW_PARENT));
	deconstruct_array(DatumGetArrayTypeP(e->values[STATE_SOURCES]), OIDOID, sizeof(Oid), true,
					  TYPALIGN_INT, &sources, &source_nulls, &source_count);
	deconstruct_array(DatumGetArrayTypeP(e->values[STATE_SHADOWS]), OIDOID, sizeof(Oid), true,
					  TYPALIGN_INT, &shadows, &shadow_nulls, &shadow_count);
	for (int i = 0; i < Min(source_count, shadow_count); i++)
		if (!source_nulls[i] && !shadow_nulls[i] && DatumGetObjectId(shadows[i]) != partition &&
			get_rel_relkind(DatumGetObjectId(sources[i])) != RELKIND_FOREIGN_TABLE &&
			get_rel_relkind(DatumGetObjectId(shadows[i])) != RELKIND_FOREIGN_TABLE)
		{
			old = lappend_oid(old, DatumGetObjectId(sources[i]));
			if (filled != NULL)
				*filled = lappend_oid(*filled, DatumGetObjectId(shadows[i]));
		}
	return old;
}

/* Applies the log, at most max_changes entries; past deadline, an error (SR001). */
void
apply_log(engine *e, int64 max_changes, TimestampTz deadline)
{
	run_routine(e, phase_routine(e->operation, PHASE_CATCH_UP), 2, Int64GetDatum(max_changes), TimestampTzGetDatum(deadline));
}

/* Whether the call moves its partition (partition_move): the layout and the parent stay. */
bool
moving(engine *e)
{
	return operation_of(e->operation)->partition == PARTITION_MOVES;
}

/* A move's table that takes the partition's place (here or a foreign table), once made; else InvalidOid. */
Oid
moved_to(engine *e)
{
	List	   *shadows = state_is_null(e, STATE_SHADOWS) ? NIL : state_oids(e, STATE_SHADOWS);

	return shadows != NIL ? linitial_oid(shadows) : InvalidOid;
}
