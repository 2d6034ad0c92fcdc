/*
 * src/module.h
 *		What the files of the SQL skin give the module's _PG_init.
 */
#ifndef SUBSETTING_MODULE_H
#define SUBSETTING_MODULE_H

/* src/ring_cache.c: subsetting.ring_cache_size */
extern void ring_define_settings(void);

#endif							/* SUBSETTING_MODULE_H */
