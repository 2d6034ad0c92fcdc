/*
 * src/resharding/capture.c
 *		The change log of an online resharding (docs/resharding-engine.md):
 *		the trigger that appends each write to an old partition to the log,
 *		and the hash of a row's binary image that the verification sums.
 *
 * Both are internal: the trigger function is created by the engine on the
 * old partitions and nobody may execute it or create a trigger with it
 * (its EXECUTE is revoked from PUBLIC); the writers of the table write the
 * log without any privilege on it, so that nobody can write an entry the
 * table's own writes did not make.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/tupconvert.h"
#include "access/genam.h"
#include "access/heapam.h"
#include "access/stratnum.h"
#include "commands/sequence.h"
#include "miscadmin.h"
#include "catalog/dependency.h"
#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "nodes/makefuncs.h"
#include "nodes/parsenodes.h"
#include "storage/lmgr.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/typcache.h"

#include "compat.h"
#include "resharding/capture.h"

/*
 * The log's columns: seq bigint, partition oid, op "char", old_row and
 * new_row (of the new parent's row type: the table's columns when the
 * resharding began, which no change of the table's own definition
 * reaches; reshard_phase_setup).
 */
#define LOG_COLUMNS 5
#define LOG_OLD_ROW 3
/* The log's name: the prefix and the parent's OID (reshard_phase_setup). */
#define LOG_NAME_PREFIX "reshard_log_"

/* What a trigger's calls in one statement share (fn_extra). */
typedef struct capture_cache
{
	Oid			partition;		/* the relation the trigger is on */
	Oid			log;
	Oid			sequence;
	TupleDesc	row_desc;		/* the log's row type */
	TupleConversionMap *map;	/* partition -> the log's row type, or NULL */
	bool		changed;		/* the partition's columns are no longer the log's */
} capture_cache;

/*
 * Whether the columns of partition are those of the log's row type (by
 * name, type, type modifier and collation; dropped ones aside): not once the table's
 * columns were changed during the resharding (ALTER TABLE ... ALTER COLUMN
 * ... TYPE, ADD or DROP COLUMN).
 */
static bool
same_columns(TupleDesc partition, TupleDesc row)
{
	int			live = 0;

	for (int i = 0; i < partition->natts; i++)
		if (!TupleDescAttr(partition, i)->attisdropped)
			live++;
	for (int i = 0; i < row->natts; i++)
	{
		Form_pg_attribute r = TupleDescAttr(row, i);
		bool		found = false;

		if (r->attisdropped)
			continue;
		live--;
		for (int j = 0; j < partition->natts && !found; j++)
		{
			Form_pg_attribute p = TupleDescAttr(partition, j);

			found = !p->attisdropped && strcmp(NameStr(p->attname), NameStr(r->attname)) == 0 &&
				p->atttypid == r->atttypid && p->atttypmod == r->atttypmod &&
				p->attcollation == r->attcollation;
		}
		if (!found)
			return false;
	}
	return live == 0;
}

static Oid
trigger_oid_argument(Trigger *trigger, int i)
{
	return DatumGetObjectId(DirectFunctionCall1(oidin, CStringGetDatum(trigger->tgargs[i])));
}

static capture_cache *
capture_cache_for(FunctionCallInfo fcinfo, TriggerData *data, Relation log)
{
	capture_cache *cache = (capture_cache *) fcinfo->flinfo->fn_extra;
	Oid			partition = RelationGetRelid(data->tg_relation);

	if (cache == NULL || cache->partition != partition || cache->log != RelationGetRelid(log))
	{
		MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
		TupleDesc	log_desc = RelationGetDescr(log);
		Form_pg_attribute row_column = TupleDescAttr(log_desc, LOG_OLD_ROW);

		if (log_desc->natts != LOG_COLUMNS || !type_is_rowtype(row_column->atttypid))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("relation %s is not a resharding change log", RelationGetRelationName(log))));
		cache = palloc0(sizeof(capture_cache));
		cache->partition = partition;
		cache->log = RelationGetRelid(log);
		cache->sequence = trigger_oid_argument(data->tg_trigger, 1);
		cache->row_desc = lookup_rowtype_tupdesc_copy(row_column->atttypid, -1);
		cache->changed = !same_columns(RelationGetDescr(data->tg_relation), cache->row_desc);
		if (!cache->changed)
			cache->map = convert_tuples_by_name(RelationGetDescr(data->tg_relation), cache->row_desc);
		MemoryContextSwitchTo(old);
		fcinfo->flinfo->fn_extra = cache;
	}
	return cache;
}

/* A row of the partition as a datum of the parent's row type (detoasted). */
static Datum
row_image(capture_cache *cache, HeapTuple tuple)
{
	if (cache->map != NULL)
		tuple = execute_attr_map_tuple(tuple, cache->map);
	return heap_copy_tuple_as_datum(tuple, cache->row_desc);
}

/*
 * The change log with OID log, locked for inserts; NULL when it is gone.  An
 * undo drops the log first and the triggers when it can lock each old
 * partition (a transaction reading it may hold it for long): until then,
 * a trigger whose log is gone captures nothing.  (A relation that took the
 * dropped log's OID is told apart by its name.)
 */
static Relation
open_log(Oid log_oid)
{
	Relation	log = try_table_open(log_oid, RowExclusiveLock);

	if (log != NULL && strncmp(RelationGetRelationName(log), LOG_NAME_PREFIX, strlen(LOG_NAME_PREFIX)) != 0)
	{
		table_close(log, RowExclusiveLock);
		return NULL;
	}
	return log;
}

PG_FUNCTION_INFO_V1(reshard_capture);

/*
 * AFTER INSERT OR UPDATE OR DELETE FOR EACH ROW on an old partition, with
 * the log's OID and its sequence's OID as arguments: appends (seq,
 * partition, op, old row, new row).  Once the partition's columns are no
 * longer the log's (changed during the resharding), a write is logged as
 * op 'x' without rows: the log can no longer bring the copies up to date,
 * and applying it fails (reshard_apply_log), even if the columns were
 * changed back meanwhile (the definition check would then see nothing).
 * TRUNCATE (a statement trigger) is refused: the shadows
 * hold copies of the partition's rows mixed with others'.
 */
Datum
reshard_capture(PG_FUNCTION_ARGS)
{
	TriggerData *data = (TriggerData *) fcinfo->context;
	TriggerEvent event;
	Relation	log;
	capture_cache *cache;
	Datum		values[LOG_COLUMNS];
	bool		nulls[LOG_COLUMNS] = {false, false, false, true, true};
	char		op;
	HeapTuple	entry;

	if (!CALLED_AS_TRIGGER(fcinfo) || data->tg_trigger->tgnargs != 2 ||
		!TRIGGER_FIRED_AFTER(data->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("reshard_capture must be an AFTER trigger with two arguments")));
	event = data->tg_event;
	log = open_log(trigger_oid_argument(data->tg_trigger, 0));
	if (log == NULL)
		return PointerGetDatum(NULL);	/* an undone resharding's trigger, left until it can be dropped */
	if (TRIGGER_FIRED_BY_TRUNCATE(event))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("cannot truncate %s while its table is being resharded",
						RelationGetRelationName(data->tg_relation)),
				 errhint("Delete the rows, or wait until the resharding ends (see reshard_progress).")));
	if (!TRIGGER_FIRED_FOR_ROW(event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("reshard_capture must be a row trigger, or a TRUNCATE trigger")));

	cache = capture_cache_for(fcinfo, data, log);
	if (cache->changed)
		op = 'x';
	else if (TRIGGER_FIRED_BY_INSERT(event))
	{
		op = 'i';
		values[LOG_OLD_ROW + 1] = row_image(cache, data->tg_trigtuple);
		nulls[LOG_OLD_ROW + 1] = false;
	}
	else if (TRIGGER_FIRED_BY_DELETE(event))
	{
		op = 'd';
		values[LOG_OLD_ROW] = row_image(cache, data->tg_trigtuple);
		nulls[LOG_OLD_ROW] = false;
	}
	else
	{
		op = 'u';
		values[LOG_OLD_ROW] = row_image(cache, data->tg_trigtuple);
		values[LOG_OLD_ROW + 1] = row_image(cache, data->tg_newtuple);
		nulls[LOG_OLD_ROW] = nulls[LOG_OLD_ROW + 1] = false;
	}
	values[0] = Int64GetDatum(nextval_internal(cache->sequence, false));
	values[1] = ObjectIdGetDatum(cache->partition);
	values[2] = CharGetDatum(op);
	entry = heap_form_tuple(RelationGetDescr(log), values, nulls);
	simple_heap_insert(log, entry);
	heap_freetuple(entry);
	table_close(log, NoLock);
	return PointerGetDatum(NULL);
}

PG_FUNCTION_INFO_V1(reshard_row_image_hash);

/*
 * A 64-bit hash of a row's binary image: its columns' values as stored
 * (detoasted), in column order, dropped columns skipped.  Two rows of
 * different row types with the same columns hash alike when their values
 * are the same bytes; no output function, no session setting is involved.
 */
Datum
reshard_row_image_hash(PG_FUNCTION_ARGS)
{
	HeapTupleHeader row = PG_GETARG_HEAPTUPLEHEADER(0);
	TupleDesc	desc = lookup_rowtype_tupdesc(HeapTupleHeaderGetTypeId(row),
											  HeapTupleHeaderGetTypMod(row));
	HeapTupleData tuple;
	uint64		hash = 0;
	int			i;

	tuple.t_len = HeapTupleHeaderGetDatumLength(row);
	ItemPointerSetInvalid(&tuple.t_self);
	tuple.t_tableOid = InvalidOid;
	tuple.t_data = row;
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute column = TupleDescAttr(desc, i);
		bool		isnull;
		Datum		value;
		uint64		h;

		if (column->attisdropped)
			continue;
		value = heap_getattr(&tuple, i + 1, desc, &isnull);
		h = isnull ? UINT64CONST(0x9e3779b97f4a7c15)
			: (uint64) datum_image_hash(value, column->attbyval, column->attlen);
		/* hash_combine64, with a 64-bit mix of the 32-bit image hash */
		h *= UINT64CONST(0xff51afd7ed558ccd);
		h ^= h >> 33;
		hash ^= h + UINT64CONST(0x49a0f4dd15e5a8e3) + (hash << 54) + (hash >> 7);
	}
	ReleaseTupleDesc(desc);
	PG_RETURN_INT64((int64) hash);
}

/* Whether this backend's resharding engine is writing (capture.h). */
bool		reshard_engine_writing = false;

PG_FUNCTION_INFO_V1(reshard_guard);

/*
 * BEFORE INSERT OR UPDATE OR DELETE FOR EACH ROW, and BEFORE TRUNCATE, on a
 * table the engine fills (a shadow, the new partition) or on its change log
 * (which the capture writes without firing triggers), or on a partition a
 * removal detached and the finish empties (argument "removed"): refuses
 * every write but the engine's own, so that what the engine undoes, swaps in,
 * applies or empties holds nothing else.
 */
Datum
reshard_guard(PG_FUNCTION_ARGS)
{
	TriggerData *data = (TriggerData *) fcinfo->context;
	bool		removed;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(data->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("reshard_guard must be a BEFORE trigger")));
	removed = data->tg_trigger->tgnargs > 0 && strcmp(data->tg_trigger->tgargs[0], "removed") == 0;
	/*
	 * A partition removed holds only copies until the finish empties it; a
	 * foreign key's action on them (ON DELETE CASCADE from the referenced
	 * table, ...) changes copies only, and is let through: PostgreSQL runs
	 * those queries, and only those, with SECURITY_NOFORCE_RLS.
	 */
	if (removed && !reshard_engine_writing && !InNoForceRLSOperation())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("cannot write to %s: a resharding removed it from its table, and empties it",
						RelationGetRelationName(data->tg_relation)),
				 errdetail("Its rows are in the other partitions of the table now."),
				 errhint("Write through the table.")));
	if (!removed && !reshard_engine_writing)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("cannot write to %s while a resharding fills it",
						RelationGetRelationName(data->tg_relation)),
				 errhint("Wait until the resharding ends, or undo it with reshard_abort (see reshard_progress).")));
	if (TRIGGER_FIRED_BY_TRUNCATE(data->tg_event))
		return PointerGetDatum(NULL);
	return PointerGetDatum(TRIGGER_FIRED_BY_UPDATE(data->tg_event) ? data->tg_newtuple : data->tg_trigtuple);
}

PG_FUNCTION_INFO_V1(reshard_whole_row);

/*
 * BEFORE DELETE FOR EACH ROW on a foreign partition of a table while other
 * foreign partitions of it are captured (reshard_capture): lets every
 * delete through.  A DELETE through a partitioned table that PostgreSQL
 * does not send whole to the servers reads the whole row of the rows of
 * its foreign partitions where a row trigger needs it (the capture's), and
 * then requires it of every foreign partition's rows: without this one, it
 * fails with "wholerow is NULL" on those of the others (PostgreSQL 15 and
 * 18, as tried).
 */
Datum
reshard_whole_row(PG_FUNCTION_ARGS)
{
	TriggerData *data = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BEFORE(data->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(data->tg_event) || !TRIGGER_FIRED_BY_DELETE(data->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("reshard_whole_row must be a BEFORE DELETE FOR EACH ROW trigger")));
	return PointerGetDatum(data->tg_trigtuple);
}

/* An internal trigger named name on relation, firing always (also for replication's writes); its OID. */
static Oid
create_internal_trigger(Oid relation, const char *name, Oid function, List *args,
						int16 timing, bool row, int16 events)
{
	CreateTrigStmt *stmt = makeNode(CreateTrigStmt);

	stmt->trigname = (char *) name;
	stmt->funcname = list_make1(makeString(get_func_name(function)));
	stmt->args = args;
	stmt->row = row;
	stmt->timing = timing;
	stmt->events = events;
	return CreateTriggerFiringOn(stmt, NULL, relation, InvalidOid, InvalidOid, InvalidOid,
								 function, InvalidOid, NULL, true, false, TRIGGER_FIRES_ALWAYS).objectId;
}

/*
 * Starts capturing the writes to an old partition: an internal row trigger
 * for its inserts, updates and deletes, and one that refuses TRUNCATE.
 * Internal triggers (as those of foreign keys) need no privilege on the
 * function, are not dumped, go with the partition, and fire also when
 * session_replication_role is replica (a subscription's writes).
 */
List *
reshard_capture_start(Oid partition, Oid log, Oid sequence, Oid function)
{
	List	   *args = list_make2(makeString(psprintf("%u", log)), makeString(psprintf("%u", sequence)));
	List	   *triggers;

	triggers = list_make1_oid(create_internal_trigger(partition, "reshard_capture", function, args,
													  TRIGGER_TYPE_AFTER, true,
													  TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE | TRIGGER_TYPE_DELETE));
	if (get_rel_relkind(partition) != RELKIND_FOREIGN_TABLE)	/* (which cannot have TRUNCATE triggers) */
		triggers = lappend_oid(triggers, create_internal_trigger(partition, "reshard_refuse_truncate", function, args,
																 TRIGGER_TYPE_AFTER, false, TRIGGER_TYPE_TRUNCATE));
	return triggers;
}

/* Refuses every write to table but the engine's (reshard_guard; removed: a partition a removal detached). */
List *
reshard_guard_start(Oid table, Oid function, bool removed)
{
	List	   *args = removed ? list_make1(makeString("removed")) : NIL;
	List	   *triggers;

	triggers = list_make1_oid(create_internal_trigger(table, "reshard_guard", function, args, TRIGGER_TYPE_BEFORE, true,
													  TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE | TRIGGER_TYPE_DELETE));
	if (get_rel_relkind(table) != RELKIND_FOREIGN_TABLE)
		triggers = lappend_oid(triggers, create_internal_trigger(table, "reshard_guard_truncate", function, args,
																 TRIGGER_TYPE_BEFORE, false, TRIGGER_TYPE_TRUNCATE));
	return triggers;
}

/* A DELETE through the table of partition reads its whole rows (reshard_whole_row). */
Oid
reshard_whole_row_start(Oid partition, Oid function)
{
	return create_internal_trigger(partition, "reshard_whole_row", function, NIL, TRIGGER_TYPE_BEFORE, true,
								   TRIGGER_TYPE_DELETE);
}

/*
 * Drops the engine's triggers from relation, those it has (of that name
 * only, unless name is NULL): the internal triggers calling one of
 * functions (CreateTrigger names an internal trigger after its OID, so
 * they are found by function).  Takes ACCESS EXCLUSIVE on relation if it
 * has any: waiting for it, or if wait is false, only if it can at once.
 * Returns how many it dropped, or -1 if it could not lock relation.
 */
int
reshard_triggers_stop(Oid relation, const char *name, const Oid *functions, int count, bool wait)
{
	Relation	catalog;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tuple;
	List	   *found = NIL;
	ListCell   *cell;

	catalog = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_trigger_tgrelid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relation));
	scan = systable_beginscan(catalog, TriggerRelidNameIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_trigger trigger = (Form_pg_trigger) GETSTRUCT(tuple);

		if (!trigger->tgisinternal || (name != NULL && strcmp(NameStr(trigger->tgname), name) != 0))
			continue;
		for (int i = 0; i < count; i++)
			if (trigger->tgfoid == functions[i])
				found = lappend_oid(found, trigger->oid);
	}
	systable_endscan(scan);
	table_close(catalog, AccessShareLock);
	if (found != NIL && !wait && !ConditionalLockRelationOid(relation, AccessExclusiveLock))
		return -1;
	foreach(cell, found)
	{
		ObjectAddress address;

		ObjectAddressSet(address, TriggerRelationId, lfirst_oid(cell));
		performDeletion(&address, DROP_RESTRICT, PERFORM_DELETION_INTERNAL);
	}
	return list_length(found);
}
