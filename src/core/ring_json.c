/*
 * src/core/ring_json.c
 *		The text form of a partition ring: a JSON object
 *
 *	{"part_power": 2, "replicas": 2, "seed": 0,
 *	 "nodes": [{"id": 1, "zone": 1, "region": 0, "weight": 1}, ...],
 *	 "assignment": [[1, 2, 3, 1], [2, 3, 1, 2]]}
 *
 * "assignment" has one array per replica (primary first), each listing the
 * node id of that replica for partitions 0 .. 2^p - 1.  On input the keys may
 * come in any order, "seed" and "region" may be left out (0), nodes may come
 * in any order, and everything is validated like a binary value.
 */
#include "core/ring.h"
#include "core/ring_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- output ---- */

typedef struct outbuf
{
	char	   *buf;
	size_t		cap;
	size_t		len;
} outbuf;

static void
put(outbuf *o, const char *s, size_t n)
{
	if (o->len < o->cap)
		memcpy(o->buf + o->len, s, o->cap - o->len < n ? o->cap - o->len : n);
	o->len += n;
}

static void
puts_(outbuf *o, const char *s)
{
	put(o, s, strlen(s));
}

static void
put_int(outbuf *o, int64_t v)
{
	char		tmp[24];
	int			i = 24;
	uint64_t	u = v < 0 ? (uint64_t) 0 - (uint64_t) v : (uint64_t) v;

	do
	{
		tmp[--i] = (char) ('0' + u % 10);
		u /= 10;
	} while (u > 0);
	if (v < 0)
		tmp[--i] = '-';
	put(o, tmp + i, (size_t) (24 - i));
}

/* shortest decimal that reads back as the same double */
static void
put_double(outbuf *o, double d)
{
	char		tmp[40];
	int			prec;

	for (prec = 1; prec <= 17; prec++)
	{
		snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	puts_(o, tmp);
}

/* digits of an int32, with its sign */
static size_t
int_length(int32_t v)
{
	uint32_t	u = v < 0 ? (uint32_t) 0 - (uint32_t) v : (uint32_t) v;
	size_t		n = v < 0 ? 2 : 1;

	while (u >= 10)
	{
		u /= 10;
		n++;
	}
	return n;
}

ring_status
ring_to_json(const ring_env *env, const ring *r, char *buf, size_t cap,
			 size_t *len, ring_error *err)
{
	outbuf		o;
	uint32_t	parts = (uint32_t) 1 << r->part_power;
	uint32_t	i,
				rep,
				x;

	o.buf = buf;
	o.cap = buf == NULL ? 0 : cap;
	o.len = 0;
	puts_(&o, "{\"part_power\": ");
	put_int(&o, r->part_power);
	puts_(&o, ", \"replicas\": ");
	put_int(&o, r->replicas);
	puts_(&o, ", \"seed\": ");
	put_int(&o, r->seed);
	puts_(&o, ", \"nodes\": [");
	for (i = 0; i < r->node_count; i++)
	{
		if (i > 0)
			puts_(&o, ", ");
		puts_(&o, "{\"id\": ");
		put_int(&o, r->nodes[i].id);
		puts_(&o, ", \"zone\": ");
		put_int(&o, r->nodes[i].zone);
		puts_(&o, ", \"region\": ");
		put_int(&o, r->nodes[i].region);
		puts_(&o, ", \"weight\": ");
		put_double(&o, r->nodes[i].weight);
		puts_(&o, "}");
	}
	puts_(&o, "], \"assignment\": [");
	for (rep = 0; rep < r->replicas; rep++)
	{
		if (rep > 0)
			puts_(&o, ", ");
		puts_(&o, "[");
		for (x = 0; x < parts; x++)
		{
			/* 2^26 ids at most: hundreds of megabytes of text */
			if (x % 65536 == 0 && env != NULL && core_interrupts_check(env->interrupts))
				return ring_canceled(err);
			if (buf == NULL)
			{
				/* the length alone: count, do not format */
				o.len += (x > 0 ? 2 : 0) + int_length(r->nodes[ring_slot(r, rep, x)].id);
				continue;
			}
			if (x > 0)
				put(&o, ", ", 2);
			put_int(&o, r->nodes[ring_slot(r, rep, x)].id);
		}
		puts_(&o, "]");
	}
	puts_(&o, "]}");
	*len = o.len;
	if (buf != NULL && o.len > cap)
		return ring_fail(err, RING_EINVAL, RING_TEXT_BUFFER_TOO_SMALL,
						 (ring_facts) {.needed = o.len, .length = cap});
	return RING_OK;
}

/* ---- input ---- */

typedef struct parser
{
	const ring_env *env;
	const char *s;
	size_t		len;
	size_t		pos;
	ring_error *err;
	/* what was read */
	ring_node  *nodes;
	size_t		nnodes,
				nodes_cap;
	int32_t    *ids;			/* assignment, row after row */
	size_t		nids,
				ids_cap;
	uint32_t	rows;
	size_t		row_len;		/* length of every row (of the first row) */
} parser;

/* What is wrong at the current position (of a number read for field). */
static ring_status
perr_field(parser *p, ring_syntax syntax, ring_field field)
{
	return ring_fail(p->err, RING_EFORMAT, RING_TEXT_SYNTAX,
					 (ring_facts) {.position = p->pos + 1, .syntax = syntax,
								   .field = field});
}

static ring_status
perr(parser *p, ring_syntax syntax)
{
	return perr_field(p, syntax, RING_FIELD_NONE);
}

static void
skip_ws(parser *p)
{
	while (p->pos < p->len &&
		   (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
			p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
		p->pos++;
}

static int
peek(parser *p)
{
	skip_ws(p);
	return p->pos < p->len ? (unsigned char) p->s[p->pos] : -1;
}

static ring_status
expect(parser *p, char c, ring_syntax otherwise)
{
	if (peek(p) != c)
		return perr(p, otherwise);
	p->pos++;
	return RING_OK;
}

/* a key: a string without escapes, at most 31 characters */
static ring_status
read_key(parser *p, char *key)
{
	size_t		n = 0;

	if (peek(p) != '"')
		return perr(p, RING_SYNTAX_KEY_START);
	p->pos++;
	while (p->pos < p->len && p->s[p->pos] != '"')
	{
		if (p->s[p->pos] == '\\' || n == 31)
			return perr(p, RING_SYNTAX_KEY_INVALID);
		key[n++] = p->s[p->pos++];
	}
	if (p->pos >= p->len)
		return perr(p, RING_SYNTAX_UNTERMINATED_STRING);
	p->pos++;
	key[n] = '\0';
	return expect(p, ':', RING_SYNTAX_COLON);
}

static ring_status
read_int(parser *p, int64_t lo, int64_t hi, int64_t *out, ring_field field)
{
	int			neg = 0;
	uint64_t	v = 0;
	size_t		start;

	peek(p);
	start = p->pos;
	if (p->pos < p->len && p->s[p->pos] == '-')
	{
		neg = 1;
		p->pos++;
	}
	if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
	{
		p->pos = start;
		return perr_field(p, RING_SYNTAX_INTEGER_EXPECTED, field);
	}
	while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
	{
		if (v > (UINT64_C(1) << 63) / 10)
			goto range;
		v = v * 10 + (uint64_t) (p->s[p->pos++] - '0');
	}
	if (p->pos < p->len && (p->s[p->pos] == '.' || p->s[p->pos] == 'e' ||
							p->s[p->pos] == 'E'))
		return perr_field(p, RING_SYNTAX_NOT_INTEGER, field);
	if (neg ? v > (UINT64_C(1) << 63) : v > (uint64_t) INT64_MAX)
		goto range;
	*out = neg ? (int64_t) (0 - v) : (int64_t) v;
	if (*out < lo || *out > hi)
		goto range;
	return RING_OK;
range:
	p->pos = start;
	return perr_field(p, RING_SYNTAX_OUT_OF_RANGE, field);
}

/* a JSON number as a double */
static ring_status
read_number(parser *p, double *out, ring_field field)
{
	char		tmp[64];
	size_t		start,
				n;
	char	   *end;

	peek(p);
	start = p->pos;
	if (p->pos < p->len && p->s[p->pos] == '-')
		p->pos++;
	if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
		goto bad;
	if (p->s[p->pos] == '0')
		p->pos++;
	else
		while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
			p->pos++;
	if (p->pos < p->len && p->s[p->pos] == '.')
	{
		p->pos++;
		if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
			goto bad;
		while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
			p->pos++;
	}
	if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E'))
	{
		p->pos++;
		if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
			p->pos++;
		if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
			goto bad;
		while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
			p->pos++;
	}
	n = p->pos - start;
	if (n >= sizeof(tmp))
		goto bad;
	memcpy(tmp, p->s + start, n);
	tmp[n] = '\0';
	errno = 0;
	*out = strtod(tmp, &end);
	if (end != tmp + n)
		goto bad;
	return RING_OK;
bad:
	p->pos = start;
	return perr_field(p, RING_SYNTAX_NUMBER_EXPECTED, field);
}

static int
grow(parser *p, void **arr, size_t *cap, size_t need, size_t elem)
{
	void	   *n;
	size_t		newcap;

	if (need <= *cap)
		return 1;
	newcap = *cap == 0 ? 64 : *cap * 2;
	while (newcap < need)
		newcap *= 2;
	n = p->env->alloc(p->env->ctx, newcap * elem);
	if (n == NULL)
		return 0;
	if (*arr != NULL)
	{
		memcpy(n, *arr, *cap * elem);
		p->env->free(p->env->ctx, *arr);
	}
	*arr = n;
	*cap = newcap;
	return 1;
}

static ring_status
read_node(parser *p)
{
	ring_node	nd;
	int			seen_id = 0,
				seen_zone = 0,
				seen_region = 0,
				seen_weight = 0;
	ring_status st;
	char		key[32];

	memset(&nd, 0, sizeof(nd));
	if ((st = expect(p, '{', RING_SYNTAX_NODE_START)) != RING_OK)
		return st;
	for (;;)
	{
		int64_t		v;
		int		   *seen;

		if ((st = read_key(p, key)) != RING_OK)
			return st;
		if (strcmp(key, "id") == 0)
			seen = &seen_id;
		else if (strcmp(key, "zone") == 0)
			seen = &seen_zone;
		else if (strcmp(key, "region") == 0)
			seen = &seen_region;
		else if (strcmp(key, "weight") == 0)
			seen = &seen_weight;
		else
			return perr(p, RING_SYNTAX_NODE_KEY);
		if (*seen)
			return perr(p, RING_SYNTAX_NODE_KEY_TWICE);
		*seen = 1;
		if (seen == &seen_weight)
			st = read_number(p, &nd.weight, RING_FIELD_WEIGHT);
		else if (seen == &seen_id)
		{
			st = read_int(p, INT32_MIN, INT32_MAX, &v, RING_FIELD_NODE_ID);
			nd.id = (int32_t) v;
		}
		else if (seen == &seen_zone)
		{
			st = read_int(p, INT32_MIN, INT32_MAX, &v, RING_FIELD_ZONE);
			nd.zone = (int32_t) v;
		}
		else
		{
			st = read_int(p, INT32_MIN, INT32_MAX, &v, RING_FIELD_REGION);
			nd.region = (int32_t) v;
		}
		if (st != RING_OK)
			return st;
		if (peek(p) == ',')
		{
			p->pos++;
			continue;
		}
		if ((st = expect(p, '}', RING_SYNTAX_NODE_NEXT)) != RING_OK)
			return st;
		break;
	}
	if (!seen_id || !seen_zone || !seen_weight)
		return perr(p, RING_SYNTAX_NODE_KEYS_MISSING);
	if (!grow(p, (void **) &p->nodes, &p->nodes_cap, p->nnodes + 1, sizeof(ring_node)))
		return ring_out_of_memory(p->err);
	p->nodes[p->nnodes++] = nd;
	return RING_OK;
}

static ring_status
read_nodes(parser *p)
{
	ring_status st;

	if ((st = expect(p, '[', RING_SYNTAX_NODES_START)) != RING_OK)
		return st;
	if (peek(p) == ']')
	{
		p->pos++;
		return RING_OK;
	}
	for (;;)
	{
		if (p->nnodes >= RING_MAX_NODES)
			return perr(p, RING_SYNTAX_TOO_MANY_NODES);
		if ((st = read_node(p)) != RING_OK)
			return st;
		if (peek(p) == ',')
		{
			p->pos++;
			continue;
		}
		return expect(p, ']', RING_SYNTAX_NODES_NEXT);
	}
}

static ring_status
read_assignment(parser *p)
{
	ring_status st;

	if ((st = expect(p, '[', RING_SYNTAX_ASSIGNMENT_START)) != RING_OK)
		return st;
	if (peek(p) == ']')
	{
		p->pos++;
		return RING_OK;
	}
	for (;;)
	{
		size_t		start = p->nids;

		if ((st = expect(p, '[', RING_SYNTAX_ROW_START)) != RING_OK)
			return st;
		for (;;)
		{
			int64_t		v;

			if (p->nids - start >= ((size_t) 1 << RING_MAX_PART_POWER))
				return perr(p, RING_SYNTAX_ROW_TOO_LONG);
			/* the text of the largest ring takes seconds to read */
			if (p->nids % 65536 == 0 && core_interrupts_check(p->env->interrupts))
				return ring_canceled(p->err);
			if ((st = read_int(p, INT32_MIN, INT32_MAX, &v, RING_FIELD_ASSIGNED_NODE)) != RING_OK)
				return st;
			if (!grow(p, (void **) &p->ids, &p->ids_cap, p->nids + 1, sizeof(int32_t)))
				return ring_out_of_memory(p->err);
			p->ids[p->nids++] = (int32_t) v;
			if (peek(p) == ',')
			{
				p->pos++;
				continue;
			}
			if ((st = expect(p, ']', RING_SYNTAX_ROW_NEXT)) != RING_OK)
				return st;
			break;
		}
		if (p->rows == 0)
			p->row_len = p->nids - start;
		else if (p->nids - start != p->row_len)
			return perr(p, RING_SYNTAX_ROWS_DIFFER);
		p->rows++;
		if ((uint64_t) p->rows * p->row_len > RING_MAX_SLOTS)
			return perr(p, RING_SYNTAX_ASSIGNMENT_TOO_LARGE);
		if (peek(p) == ',')
		{
			p->pos++;
			continue;
		}
		return expect(p, ']', RING_SYNTAX_ASSIGNMENT_NEXT);
	}
}

static void
parser_free(parser *p)
{
	if (p->nodes != NULL)
		p->env->free(p->env->ctx, p->nodes);
	if (p->ids != NULL)
		p->env->free(p->env->ctx, p->ids);
	p->nodes = NULL;
	p->ids = NULL;
}

/* The scalar fields of a ring's text, and which keys were seen. */
typedef struct ring_fields
{
	int64_t		part_power;
	int64_t		replicas;
	int64_t		seed;
	int			seen_pp,
				seen_rep,
				seen_seed,
				seen_nodes,
				seen_assign;
} ring_fields;

/* The object: each key once, its value read into f or the parser. */
static ring_status
read_object(parser *p, ring_fields *f)
{
	ring_status st;
	char		key[32];

	if ((st = expect(p, '{', RING_SYNTAX_RING_START)) != RING_OK)
		return st;
	for (;;)
	{
		int		   *seen;

		if ((st = read_key(p, key)) != RING_OK)
			return st;
		if (strcmp(key, "part_power") == 0)
			seen = &f->seen_pp;
		else if (strcmp(key, "replicas") == 0)
			seen = &f->seen_rep;
		else if (strcmp(key, "seed") == 0)
			seen = &f->seen_seed;
		else if (strcmp(key, "nodes") == 0)
			seen = &f->seen_nodes;
		else if (strcmp(key, "assignment") == 0)
			seen = &f->seen_assign;
		else
			return perr(p, RING_SYNTAX_RING_KEY);
		if (*seen)
			return perr(p, RING_SYNTAX_RING_KEY_TWICE);
		*seen = 1;
		if (seen == &f->seen_pp)
			st = read_int(p, 0, INT32_MAX, &f->part_power, RING_FIELD_PART_POWER);
		else if (seen == &f->seen_rep)
			st = read_int(p, 0, INT32_MAX, &f->replicas, RING_FIELD_REPLICAS);
		else if (seen == &f->seen_seed)
			st = read_int(p, INT64_MIN, INT64_MAX, &f->seed, RING_FIELD_SEED);
		else if (seen == &f->seen_nodes)
			st = read_nodes(p);
		else
			st = read_assignment(p);
		if (st != RING_OK)
			return st;
		if (peek(p) == ',')
		{
			p->pos++;
			continue;
		}
		if ((st = expect(p, '}', RING_SYNTAX_RING_NEXT)) != RING_OK)
			return st;
		break;
	}
	if (peek(p) != -1)
		return perr(p, RING_SYNTAX_TRAILING_TEXT);
	return RING_OK;
}

/* Required keys present, sizes in range, the assignment of the right shape. */
static ring_status
check_shape(const parser *p, const ring_fields *f, ring_error *err)
{
	uint32_t	parts;

	if (!f->seen_pp || !f->seen_rep || !f->seen_nodes || !f->seen_assign)
		return ring_fail(err, RING_EFORMAT, RING_TEXT_KEYS_MISSING, RING_NO_FACTS);
	if (ring_check_sizes((uint32_t) p->nnodes, (uint32_t) f->part_power,
						 (uint32_t) f->replicas, err) != RING_OK)
		return ring_found_in_value(err);
	parts = (uint32_t) 1 << f->part_power;
	if (p->rows != (uint32_t) f->replicas || p->row_len != parts)
		return ring_fail(err, RING_EFORMAT, RING_TEXT_ASSIGNMENT_SHAPE,
						 (ring_facts) {.part_power = (uint32_t) f->part_power,
									   .replicas = (uint32_t) f->replicas,
									   .rows = p->rows,
									   .row_length = (uint32_t) p->row_len});
	return RING_OK;
}

/*
 * The ring: nodes sorted by id (no id twice), the assignment's node ids
 * turned into node indexes.  The nodes pass from p to out.
 */
static ring_status
make_ring(const ring_env *env, parser *p, const ring_fields *f, ring *out,
		  ring_error *err)
{
	uint32_t	parts = (uint32_t) 1 << f->part_power;
	size_t		i;

	ring_sort_nodes(p->nodes, (uint32_t) p->nnodes);
	for (i = 1; i < p->nnodes; i++)
		if (p->nodes[i].id == p->nodes[i - 1].id)
		{
			ring_fail(err, RING_EFORMAT, RING_DUPLICATE_NODE_ID,
					  (ring_facts) {.node_id = p->nodes[i].id});
			return ring_found_in_value(err);
		}
	for (i = 0; i < p->nnodes; i++)
		if (p->nodes[i].weight == 0)
			p->nodes[i].weight = 0;	/* "-0" reads as zero */
	out->part_power = (uint32_t) f->part_power;
	out->replicas = (uint32_t) f->replicas;
	out->node_count = (uint32_t) p->nnodes;
	out->seed = f->seed;
	out->nodes = p->nodes;
	out->assignment = env->alloc(env->ctx, sizeof(uint16_t) * p->nids);
	if (out->assignment == NULL)
	{
		out->nodes = NULL;
		return ring_out_of_memory(err);
	}
	p->nodes = NULL;			/* now owned by out */
	for (i = 0; i < p->nids; i++)
	{
		int32_t		idx = ring_find_node(out, p->ids[i]);

		if (i % 65536 == 0 && core_interrupts_check(env->interrupts))
		{
			ring_free(env, out);
			return ring_canceled(err);
		}

		if (idx < 0)
		{
			ring_status st = ring_fail(err, RING_EFORMAT, RING_TEXT_UNKNOWN_NODE,
									   (ring_facts) {.replica = (uint32_t) (i / parts),
													 .partition = (uint32_t) (i % parts),
													 .node_id = p->ids[i]});

			ring_free(env, out);
			return st;
		}
		out->assignment[i] = (uint16_t) idx;
	}
	return RING_OK;
}

ring_status
ring_from_json(const ring_env *env, const char *text, size_t len, ring *out,
			   ring_error *err)
{
	parser		p;
	ring_fields f;
	ring_status st;

	memset(out, 0, sizeof(*out));
	memset(&p, 0, sizeof(p));
	memset(&f, 0, sizeof(f));
	f.part_power = -1;
	f.replicas = -1;
	p.env = env;
	p.s = text;
	p.len = len;
	p.err = err;
	if ((st = read_object(&p, &f)) != RING_OK ||
		(st = check_shape(&p, &f, err)) != RING_OK ||
		(st = make_ring(env, &p, &f, out, err)) != RING_OK)
	{
		parser_free(&p);
		return st;
	}
	parser_free(&p);
	st = ring_validate(env, out, err);
	if (st != RING_OK)
		ring_free(env, out);
	return st;
}
