/*
 * src/resharding/operations.h
 *		The operation table of the resharding engine
 *		(docs/resharding-engine.md): one line per value of
 *		reshard_state.operation.  Every operation goes through the phases of
 *		phases.h; this table says what differs between them, and the engine's
 *		C code reads it rather than the operation itself.
 *
 * OPERATION(symbol, name, partition, rebuilds, plan, routines, cutover)
 *	symbol		the enum value (reshard_operation, engine.h), which the engine
 *				holds from the moment a call begins (or reads its state row)
 *	name		the value in reshard_state.operation (its CHECK lists the
 *				same), and the word reshard_begin takes
 *	partition	what becomes of the partition the call names (partition_fate,
 *				engine.h): which grants it gets, whether a guard keeps
 *				writers off it until the finish, what a repeated call finds
 *	rebuilds	whether the call rebuilds the table: a new parent and a shadow
 *				per local bucket, which take the old ones' places at the
 *				cutover by the takeover statements (reshard_takeover_sql);
 *				else the parent and the other partitions stay, and one table
 *				takes the named partition's place
 *	plan		the SQL routine that checks the table and fills the state
 *				row, before phase setup (state.c's routine table)
 *	routines	the SQL routines of the phases where the operation's work
 *				differs from the phase table's (an array by phase, tables.c;
 *				NULL: the phase table's for every phase); phase_routine()
 *				finds a phase's routine by (operation, phase)
 *	cutover		the C function of one cutover attempt (cutover.c)
 *
 * This file is a list, included where the table is needed with OPERATION
 * defined (as phases.h): no include guard.
 */

/*        symbol            name      partition         rebuilds  plan               routines       cutover */
OPERATION(OPERATION_ADD,    "add",    PARTITION_JOINS,  true,     ROUTINE_PLAN,      NULL,          unit_cutover)
OPERATION(OPERATION_REMOVE, "remove", PARTITION_LEAVES, true,     ROUTINE_PLAN,      NULL,          unit_cutover)
OPERATION(OPERATION_MOVE,   "move",   PARTITION_MOVES,  false,    ROUTINE_MOVE_PLAN, move_routines, unit_move_cutover)
