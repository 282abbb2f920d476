/* blaslog._speedups: the one loop of the parse pipeline that touches every byte, in C.
 *
 * lines(data, end, head, longest) turns a block of log bytes into its lines, the count of each distinct line
 * and its SHAPE key: what blaslog.inputs.Reader._batch does in Python with bytes.decode, str.split,
 * collections.Counter and _fast.shapes.Shaper.keys. Equal lines share one str object (a level-5 log repeats
 * most of its lines), so lines are decoded, allocated, hashed and masked once per distinct line; equal keys
 * share one str object too. Lines are remembered from call to call (see known_add): a line an earlier block
 * held is the str object it gave then, with its key. forget() empties that memory, remembered() counts it.
 *
 * split(text) is the same mask for one str, with the values it masks (what _fast.shapes.Shaper.split
 * gives in Python), values(text) those values alone; mask(text) is the VOLATILE mask of one record's text
 * (what _fast.shapes.mask gives).
 *
 * shape_end() and volatile_end() are the SHAPE and VOLATILE patterns of blaslog/_fast/shapes.py written out
 * as scanners (those patterns stay the definition). Both read UTF-8 bytes: every character the patterns match
 * or look at is ASCII, and they are compiled with re.ASCII, so a byte of a multi-byte character reads as the
 * character does (neither a digit nor a word character).
 *
 * The module is optional: blaslog/inputs.py falls back to the Python code when it is missing (no compiler at
 * install time) or when BLASLOG_PURE_PYTHON is set, and tests/test_speedups.py holds the two to the same
 * result, byte for byte, on every bundled log and on fuzzed blocks.
 *
 * planned(lines, shapes, shortcuts) is _fast.plan's pass over a batch's lines (each line's mark, and their tally).
 *
 * newlines(buffer, size) counts the line ends in a block (blaslog._parallel's line numbers of a big input's pieces).
 *
 * maker(cls, names) and make(maker, values) build a record from its field values, setting its slots directly
 * (records.record_maker; a frozen dataclass's __init__ goes through object.__setattr__ per field).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <structmember.h>
#include <string.h>

/* ---- SHAPE and VOLATILE, as scanners ---------------------------------------------------------------------- */

static int
is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static int
is_hex(unsigned char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int
is_word(unsigned char c) /* \w under re.ASCII */
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

/* (?![\w.]) at j */
static int
ends_value(const unsigned char *s, Py_ssize_t n, Py_ssize_t j)
{
    return j >= n || !(is_word(s[j]) || s[j] == '.');
}

static int
digits_at(const unsigned char *s, Py_ssize_t n, Py_ssize_t j, Py_ssize_t count)
{
    if (j + count > n)
        return 0;
    for (Py_ssize_t k = j; k < j + count; k++)
        if (!is_digit(s[k]))
            return 0;
    return 1;
}

/* The alternatives SHAPE and VOLATILE share, in their order: cuBLAS pointers (0x0x[0-9a-fA-F]+, wherever they
 * stand), then, at a digit that continues no word, number, `(` or `-` ((?<![\w.(\-][0-9])), time stamps
 * (\d{3}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?Z? after the first digit) and pointers other than NULL
 * ((?<=0)[xX][0-9a-fA-F]*[1-9a-fA-F][0-9a-fA-F]*), each followed by (?![\w.]). Returns the end of the match;
 * else -1, with *rest set where the pattern's own alternatives may still match there. Each alternative scans
 * greedily and tests its end, which is where the pattern's backtracking would leave it (a shorter run of digits
 * or hex digits is followed by one, a word character). *kind is set to the letter _fast.shapes.mark writes
 * for the match: `p` (a pointer), `s` or `t` (a time stamp with a space or a `T`; `y` or `z` with a `Z` after it),
 * `d` (a decimal) or `n`. */
static Py_ssize_t
shared_end(const unsigned char *s, Py_ssize_t n, Py_ssize_t i, int *rest, unsigned char *kind)
{
    Py_ssize_t j;
    *rest = 0;
    *kind = 'p';
    if (s[i] == '0' && i + 4 < n && s[i + 1] == 'x' && s[i + 2] == '0' && s[i + 3] == 'x' && is_hex(s[i + 4])) {
        for (j = i + 5; j < n && is_hex(s[j]); j++)
            ;
        if (ends_value(s, n, j))
            return j;
    }
    if (!is_digit(s[i]))
        return -1;
    if (i > 0 && (is_word(s[i - 1]) || s[i - 1] == '.' || s[i - 1] == '(' || s[i - 1] == '-'))
        return -1;
    if (digits_at(s, n, i + 1, 3) && i + 19 <= n && s[i + 4] == '-' && digits_at(s, n, i + 5, 2) && s[i + 7] == '-'
        && digits_at(s, n, i + 8, 2) && (s[i + 10] == ' ' || s[i + 10] == 'T') && digits_at(s, n, i + 11, 2)
        && s[i + 13] == ':' && digits_at(s, n, i + 14, 2) && s[i + 16] == ':' && digits_at(s, n, i + 17, 2)) {
        int utc;
        j = i + 19;
        if (j + 1 < n && s[j] == '.' && is_digit(s[j + 1]))
            for (j += 2; j < n && is_digit(s[j]); j++)
                ;
        utc = j < n && s[j] == 'Z'; /* ISO 8601's UTC (a CI runner's stamp: 2024-01-15T10:23:45.1234567Z) */
        if (utc)
            j++;
        if (ends_value(s, n, j)) {
            *kind = s[i + 10] == ' ' ? (utc ? 'y' : 's') : (utc ? 'z' : 't');
            return j;
        }
    }
    if (s[i] == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        int nonzero = 0;
        for (j = i + 2; j < n && is_hex(s[j]); j++)
            nonzero |= s[j] != '0';
        if (nonzero && ends_value(s, n, j))
            return j;
    }
    *rest = 1;
    return -1;
}

/* The end of the SHAPE match that starts at s[i], or -1 where none starts there: the shared alternatives, then
 * thread ids ((?<=\[[0-9])\d+(?=\]\[)). */
static Py_ssize_t
shape_end(const unsigned char *s, Py_ssize_t n, Py_ssize_t i, unsigned char *kind)
{
    int rest;
    Py_ssize_t j = shared_end(s, n, i, &rest, kind);
    if (j >= 0 || !rest)
        return j;
    *kind = 'n';
    if (i > 0 && s[i - 1] == '[' && i + 1 < n && is_digit(s[i + 1])) {
        for (j = i + 2; j < n && is_digit(s[j]); j++)
            ;
        if (j + 1 < n && s[j] == ']' && s[j + 1] == '[')
            return j;
    }
    return -1;
}

/* The end of the VOLATILE match that starts at s[i], or -1 where none starts there: the shared alternatives,
 * then decimals (\d*\.\d+ after the first digit) and numbers of two digits or more (\d+ after it), each followed
 * by (?![\w.]) (VOLATILE has no thread-id alternative: a thread id is a number). */
static Py_ssize_t
volatile_end(const unsigned char *s, Py_ssize_t n, Py_ssize_t i, unsigned char *kind)
{
    int rest;
    Py_ssize_t j = shared_end(s, n, i, &rest, kind), k;
    if (j >= 0 || !rest)
        return j;
    for (k = i + 1; k < n && is_digit(s[k]); k++) /* the digits after the first */
        ;
    if (k + 1 < n && s[k] == '.' && is_digit(s[k + 1])) {
        for (j = k + 2; j < n && is_digit(s[j]); j++)
            ;
        if (ends_value(s, n, j)) {
            *kind = 'd';
            return j;
        }
    }
    *kind = 'n';
    if (k > i + 1 && ends_value(s, n, k))
        return k;
    return -1;
}

/* Whether no SHAPE or VOLATILE match can start at the digit s[i] (what shared_end answers first, without a call
 * through a Scanner): a digit other than 0 (a cuBLAS pointer's 0x0x may start anywhere) after a word character,
 * a `.`, `(` or `-`. */
static int
starts_none(const unsigned char *s, Py_ssize_t i)
{
    return s[i] != '0' && i > 0 && (is_word(s[i - 1]) || s[i - 1] == '.' || s[i - 1] == '(' || s[i - 1] == '-');
}

/* shape_end or volatile_end: the end of the match at s[i] (-1 for none), and its kind's letter in *kind. */
typedef Py_ssize_t (*Scanner)(const unsigned char *, Py_ssize_t, Py_ssize_t, unsigned char *);

/* Writes the key of s[:n] under `end_of` (shape_end or volatile_end: each match replaced by a NUL and its
 * kind's letter; every match is two bytes or more) to out, which holds n bytes, and appends each match to the
 * list `values` unless it is NULL; returns the key's size, or -1 with an exception set. */
static Py_ssize_t
masked_key(const unsigned char *s, Py_ssize_t n, unsigned char *out, PyObject *values, Scanner end_of)
{
    Py_ssize_t size = 0, i = 0;
    while (i < n) {
        Py_ssize_t j = i;
        while (j < n && !is_digit(s[j])) /* every match starts at a digit: copy up to the next one */
            j++;
        memcpy(out + size, s + i, (size_t)(j - i));
        size += j - i;
        if (j == n)
            break;
        unsigned char kind;
        Py_ssize_t end = starts_none(s, j) ? -1 : end_of(s, n, j, &kind);
        if (end < 0) {
            out[size++] = s[j];
            i = j + 1;
            continue;
        }
        if (values != NULL) {
            PyObject *value = PyUnicode_DecodeASCII((const char *)s + j, end - j, NULL);
            if (value == NULL || PyList_Append(values, value) < 0) {
                Py_XDECREF(value);
                return -1;
            }
            Py_DECREF(value);
        }
        out[size++] = 0;
        out[size++] = kind;
        i = end;
    }
    return size;
}

/* ---- distinct byte strings ---------------------------------------------------------------------------------- */

typedef struct {
    const char *text;
    Py_ssize_t size;
    uint64_t hash;
    Py_ssize_t slot; /* index of its str object, -1 for an empty entry */
} Entry;

/* Memory kept from call to call: a block of a few thousand lines needs tables of a few hundred kB, which the
 * allocator would map and unmap, page by page, on every call. A call takes the kept buffers out of the pool
 * and hands them back at its end: the garbage collector may run inside a call (when it makes a list or a
 * dict) and run Python code that calls again, or lets another thread call, and such a call must not touch
 * the buffers in use. */
typedef struct {
    void *at;
    size_t size;
} Scratch;

static void *
scratch(Scratch *s, size_t size)
{
    if (size > s->size) {
        void *grown = PyMem_Realloc(s->at, size);
        if (grown == NULL)
            return NULL;
        s->at = grown;
        s->size = size;
    }
    return s->at;
}

typedef struct {
    Entry *entries;
    size_t mask;       /* capacity - 1, a power of two at least twice the entries held */
    size_t held;
    Scratch *memory;   /* where the entries lie */
    Scratch *spare;    /* where they move when the table grows */
} Table;

static int
table_init(Table *table, Scratch *memory, Scratch *spare, size_t capacity)
{
    table->entries = scratch(memory, capacity * sizeof(Entry));
    if (table->entries == NULL)
        return -1;
    for (size_t i = 0; i < capacity; i++)
        table->entries[i].slot = -1;
    table->mask = capacity - 1;
    table->held = 0;
    table->memory = memory;
    table->spare = spare;
    return 0;
}

/* Counts an entry just filled in; the table doubles once it is half full (entries then move: look them up
 * again). */
static int
table_added(Table *table)
{
    if (++table->held * 2 <= table->mask + 1)
        return 0;
    Entry *old = table->entries;
    size_t capacity = table->mask + 1;
    Scratch *memory = table->memory;
    if (table_init(table, table->spare, memory, capacity * 2) < 0)
        return -1;
    for (size_t i = 0; i < capacity; i++) {
        if (old[i].slot < 0)
            continue;
        size_t at = (size_t)old[i].hash & table->mask;
        while (table->entries[at].slot >= 0)
            at = (at + 1) & table->mask;
        table->entries[at] = old[i];
        table->held++;
    }
    return 0;
}

static uint64_t seed; /* from Python's randomised str hash: lines made to collide in one process do not in the next */

static uint64_t
hash_bytes(const char *p, Py_ssize_t n)
{
    uint64_t a = seed ^ (uint64_t)n, b = seed * 0x13198A2E03707345ULL, w;
    for (; n >= 16; p += 16, n -= 16) { /* two lanes: the multiplications do not wait for each other */
        memcpy(&w, p, 8);
        a = (a ^ w) * 0x9E3779B97F4A7C15ULL;
        a ^= a >> 32;
        memcpy(&w, p + 8, 8);
        b = (b ^ w) * 0xC2B2AE3D27D4EB4FULL;
        b ^= b >> 29;
    }
    for (; n > 0; p += 8, n -= 8) {
        w = 0;
        memcpy(&w, p, (size_t)(n < 8 ? n : 8));
        a = (a ^ w) * 0x9E3779B97F4A7C15ULL;
        a ^= a >> 32;
    }
    a ^= b * 0x165667B19E3779F9ULL;
    return a ^ (a >> 31);
}

/* The entry of text[:size]: its slot is -1 when the table does not hold it yet (fill it in then). */
static Entry *
table_find(Table *table, const char *text, Py_ssize_t size)
{
    uint64_t hash = hash_bytes(text, size);
    for (size_t at = (size_t)hash & table->mask;; at = (at + 1) & table->mask) {
        Entry *e = &table->entries[at];
        if (e->slot < 0) {
            e->text = text;
            e->size = size;
            e->hash = hash;
            return e;
        }
        if (e->hash == hash && e->size == size && memcmp(e->text, text, (size_t)size) == 0)
            return e;
    }
}

/* ---- lines() ------------------------------------------------------------------------------------------------ */

typedef struct {
    PyObject *line;
    const char *text;
    Py_ssize_t size;
    Py_ssize_t count;
    Py_ssize_t key; /* index of its SHAPE key's str object */
    PyObject *known_key; /* its SHAPE key, where the line was remembered (a reference), else NULL */
    uint64_t hash;
    struct Known *found; /* where the memory of remembered lines holds it, else NULL */
} Distinct;

/* ---- lines remembered from call to call --------------------------------------------------------------------
 * A log says the same lines again and again, batch after batch: a training step's [Api] lines, a cuBLAS
 * record's `i!` lines, a program's own output. The str of each ASCII line a call decodes is kept, with its
 * SHAPE key, for the calls after it: a later block's equal line is then the same str object (neither decoded
 * nor masked again, its str hash computed once for every dict of the parse) and its key the same key. A line is
 * kept the second time a call decodes it (the first time only its hash is noted, in KNOWN_SEEN slots that later
 * hashes overwrite), so that lines that never come again cost no memory. At most
 * KNOWN_LINES lines and KNOWN_BYTES bytes of them are kept; the memory is emptied when it is full. Where few
 * of the lines it held came again (a log whose pointers never repeat), it then rests: the next KNOWN_REST new
 * lines are not kept, so that such a log does not pay for keeping lines that never come again. */
typedef struct Known {
    PyObject *line; /* an ASCII str: its data are the line's bytes; NULL for a free slot */
    PyObject *key;
    uint64_t hash;
} Known;

#define KNOWN_LINES (1 << 15)
#define KNOWN_SLOTS ((size_t)KNOWN_LINES * 2) /* a power of two; half of the slots at most are held */
#define KNOWN_BYTES ((size_t)8 << 20)
#define KNOWN_REST ((size_t)KNOWN_LINES * 4)
#define KNOWN_SEEN ((size_t)1 << 16) /* a power of two */
#define KNOWN_BITS ((size_t)1 << 18) /* a power of two */
static Known *known;
static uint16_t *known_seen; /* a tag of the hash of each line decoded once, by the hash's low bits */
static uint64_t *known_bits; /* a bit per hash's high bits, set for the lines held: most new lines of a block
                                need no look at the memory (a table of a few MB: a cache miss a line) */

#define KNOWN_BIT(hash) ((size_t)((hash) >> 40) & (KNOWN_BITS - 1))
#define KNOWN_TAG(hash) ((uint16_t)((hash) >> 24) | 1)

static size_t known_held, known_bytes;
static size_t known_hits; /* lines found since the memory was last emptied */
static size_t known_rest; /* new lines still to pass by without keeping them */
static int known_busy; /* a call inside a call (from the garbage collector) leaves the memory alone */

/* Whether the memory may hold a line of this hash (no: it does not). */
static int
known_maybe(uint64_t hash)
{
    size_t bit = KNOWN_BIT(hash);
    return (int)((known_bits[bit >> 6] >> (bit & 63)) & 1);
}

static void
known_clear(void)
{
    if (known == NULL)
        return;
    for (size_t i = 0; i < KNOWN_SLOTS; i++) {
        Py_CLEAR(known[i].line);
        Py_CLEAR(known[i].key);
    }
    known_held = known_bytes = known_hits = 0;
    memset(known_bits, 0, KNOWN_BITS / 8);
}

/* The slot of the line text[:size] (of hash `hash`): its line is NULL when the memory does not hold it. */
static Known *
known_find(const char *text, Py_ssize_t size, uint64_t hash)
{
    for (size_t at = (size_t)hash & (KNOWN_SLOTS - 1);; at = (at + 1) & (KNOWN_SLOTS - 1)) {
        Known *k = &known[at];
        if (k->line == NULL
            || (k->hash == hash && PyUnicode_GET_LENGTH(k->line) == size
                && memcmp(PyUnicode_DATA(k->line), text, (size_t)size) == 0))
            return k;
    }
}

/* Keeps the ASCII line `line` (of hash `hash`) with its SHAPE key `key` for the next calls, by the two rules of
 * the memory: a line is kept the second time it comes (the first time its tag is noted in its seen slot, which
 * a later line of the same low hash bits may take: that line then waits a time longer), and while the memory
 * rests (it was emptied with fewer than an eighth of its lines found again) no line is kept. */
static void
known_add(PyObject *line, PyObject *key, uint64_t hash)
{
    Py_ssize_t size = PyUnicode_GET_LENGTH(line);
    uint16_t *seen = &known_seen[hash & (KNOWN_SEEN - 1)];
    if (*seen != KNOWN_TAG(hash)) { /* the first time (as far as the slot tells): noted */
        *seen = KNOWN_TAG(hash);
        return;
    }
    if (known_rest) {
        known_rest--;
        return;
    }
    if (known_held >= KNOWN_LINES || known_bytes + (size_t)size > KNOWN_BYTES) {
        int few = known_hits * 8 < known_held; /* fewer hits than an eighth of the lines held */
        known_clear();
        if (few) {
            known_rest = KNOWN_REST;
            return;
        }
    }
    Known *k = known_find(PyUnicode_DATA(line), size, hash);
    if (k->line != NULL)
        return;
    k->line = Py_NewRef(line);
    k->key = Py_NewRef(key);
    k->hash = hash;
    size_t bit = KNOWN_BIT(hash);
    known_bits[bit >> 6] |= (uint64_t)1 << (bit & 63);
    known_held++;
    known_bytes += (size_t)size;
}

#define SCRATCHES 6
static Scratch pool[SCRATCHES];
#define SMALL_TABLE 4096 /* entries: a block of a level-5 log holds some 500 distinct lines */
#define KEPT_MEMORY (4u << 20) /* bytes of scratch memory kept for the next call: more is given back */

/* The lines of data[:end] (which ends with a line end), the first one preceded by `head` (the start of a
 * line begun in the block before), each without its line end and one CR before it; a dict of each distinct
 * line -> how many times it occurs, in the order of first occurrence (as Counter gives); and a dict of each
 * distinct line -> its SHAPE key, in the same order. None when the block must be read line by line (a line
 * that is not UTF-8, holds a NUL or is longer than `longest` characters): the caller's checked path reports
 * those lines. */
static PyObject *
speedups_lines(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer data, head;
    Py_ssize_t end, longest;
    if (!PyArg_ParseTuple(args, "y*ny*n", &data, &end, &head, &longest))
        return NULL;
    Scratch memories[SCRATCHES];
    for (int m = 0; m < SCRATCHES; m++) {
        memories[m] = pool[m];
        pool[m] = (Scratch){NULL, 0};
    }
    PyObject *result = NULL, *lines = NULL, *counts = NULL, *shapes = NULL, **keys = NULL;
    Distinct *distinct = NULL;
    Py_ssize_t kinds = 0, shapes_made = 0, n = 0, *ends;
    Table table, key_table;
    char *first = NULL;
    const char *buf = (const char *)data.buf;
    int remember = !known_busy;
    if (remember && known == NULL) {
        known = PyMem_Calloc(KNOWN_SLOTS, sizeof(Known));
        known_seen = PyMem_Calloc(KNOWN_SEEN, sizeof(uint16_t));
        known_bits = PyMem_Calloc(KNOWN_BITS / 64, sizeof(uint64_t));
        if (known == NULL || known_seen == NULL || known_bits == NULL) { /* every line decoded, as without it */
            PyMem_Free(known);
            PyMem_Free(known_seen);
            PyMem_Free(known_bits);
            known = NULL;
            known_seen = NULL;
            known_bits = NULL;
            remember = 0;
        }
    }
    known_busy |= remember;
    if (end < 0 || end > data.len || (end > 0 && buf[end - 1] != '\n')) {
        PyErr_SetString(PyExc_ValueError, "end must be within the data, just after a line end");
        goto done;
    }
    /* where each line ends (a level-5 log's lines are some 190 bytes long; room grows as needed) */
    size_t room = (size_t)end / 64 + 16;
    if ((ends = scratch(&memories[0], room * sizeof(Py_ssize_t))) == NULL)
        goto nomemory;
    for (const char *p = buf, *stop = buf + end; (p = memchr(p, '\n', (size_t)(stop - p))) != NULL; p++) {
        if ((size_t)n == room) {
            room *= 2;
            if ((ends = scratch(&memories[0], room * sizeof(Py_ssize_t))) == NULL)
                goto nomemory;
        }
        ends[n++] = p - buf;
    }
    Py_ssize_t most = n ? n : 1;
    if (table_init(&table, &memories[1], &memories[2], SMALL_TABLE) < 0
        || (distinct = scratch(&memories[3], sizeof(Distinct) * (size_t)most)) == NULL
        || (lines = PyList_New(n)) == NULL)
        goto nomemory;
    /* four passes, so that the memory of remembered lines (a few MB, read at random) is read ahead of its use:
     * the distinct lines (each line's slot kept in `ends`, whose end it no longer needs; their slots in the
     * memory prefetched), where the memory holds them, their strs, the list */
    for (Py_ssize_t i = 0, pos = 0; i < n; i++) {
        const char *text = buf + pos;
        Py_ssize_t size = ends[i] - pos;
        pos = ends[i] + 1;
        if (i == 0 && head.len) {
            if ((first = PyMem_Malloc((size_t)(head.len + size + 1))) == NULL)
                goto nomemory;
            memcpy(first, head.buf, (size_t)head.len);
            memcpy(first + head.len, text, (size_t)size);
            text = first;
            size += head.len;
        }
        if (size && text[size - 1] == '\r')
            size--;
        Entry *e = table_find(&table, text, size);
        Py_ssize_t slot = e->slot;
        if (slot < 0) {
            if (remember) { /* (the memory is there) */
                size_t bit = KNOWN_BIT(e->hash);
                __builtin_prefetch(&known_bits[bit >> 6]);
                __builtin_prefetch(&known[(size_t)e->hash & (KNOWN_SLOTS - 1)]);
            }
            e->slot = slot = kinds;
            distinct[kinds++] = (Distinct){NULL, text, size, 0, 0, NULL, e->hash, NULL};
            if (table_added(&table) < 0) /* e moves when the table grows */
                goto nomemory;
        }
        distinct[slot].count++;
        ends[i] = slot;
    }
    for (Py_ssize_t k = 0; k < kinds; k++) { /* where the memory holds them, read ahead of the next pass */
        if (remember && known_maybe(distinct[k].hash)) {
            Known *found = known_find(distinct[k].text, distinct[k].size, distinct[k].hash);
            distinct[k].found = found->line != NULL ? found : NULL;
        }
    }
    for (Py_ssize_t k = 0; k < kinds; k++) {
        Distinct *d = &distinct[k];
        PyObject *line, *known_key = NULL;
        if (d->found != NULL) { /* a line of an earlier block: no NUL, UTF-8 */
            line = Py_NewRef(d->found->line);
            known_key = Py_NewRef(d->found->key);
            known_hits++;
        } else {
            if (memchr(d->text, '\0', (size_t)d->size) != NULL)
                goto unfit;
            line = PyUnicode_DecodeUTF8(d->text, d->size, NULL);
            if (line == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
                    goto done;
                PyErr_Clear();
                goto unfit;
            }
        }
        d->line = line;
        d->known_key = known_key;
        if (PyUnicode_GET_LENGTH(line) > longest)
            goto unfit;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *line = distinct[ends[i]].line;
        Py_INCREF(line);
        PyList_SET_ITEM(lines, i, line);
    }
    /* the keys, each distinct key made once: the key table points into one buffer that holds the keys masked here,
     * and into the data of the keys of remembered lines (ASCII, as their lines are) */
    Py_ssize_t used = 0, held = 0;
    for (Py_ssize_t k = 0; k < kinds; k++)
        held += distinct[k].size;
    unsigned char *key = scratch(&memories[4], (size_t)(held ? held : 1));
    if (key == NULL || (keys = scratch(&memories[5], sizeof(PyObject *) * (size_t)(kinds ? kinds : 1))) == NULL
        || table_init(&key_table, &memories[1], &memories[2], SMALL_TABLE) < 0)
        goto nomemory;
    for (Py_ssize_t k = 0; k < kinds; k++) {
        PyObject *kept = distinct[k].known_key; /* the key of a remembered line: its bytes are its data (ASCII) */
        unsigned char *out = kept != NULL ? PyUnicode_DATA(kept) : key + used;
        Py_ssize_t size = kept != NULL ? PyUnicode_GET_LENGTH(kept)
                                       : masked_key((const unsigned char *)distinct[k].text, distinct[k].size, out,
                                                    NULL, shape_end);
        Entry *e = table_find(&key_table, (const char *)out, size);
        int added = e->slot < 0;
        if (added) {
            PyObject *made = kept != NULL ? Py_NewRef(kept) : PyUnicode_DecodeUTF8((const char *)out, size, NULL);
            if (made == NULL)
                goto done;
            e->slot = shapes_made;
            keys[shapes_made++] = made;
            if (kept == NULL)
                used += size;
        }
        distinct[k].key = e->slot;
        if (added && table_added(&key_table) < 0) /* e moves when the table grows */
            goto nomemory;
    }
    if ((counts = PyDict_New()) == NULL || (shapes = PyDict_New()) == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < kinds; k++) {
        PyObject *count = PyLong_FromSsize_t(distinct[k].count);
        if (count == NULL || PyDict_SetItem(counts, distinct[k].line, count) < 0) {
            Py_XDECREF(count);
            goto done;
        }
        Py_DECREF(count);
        if (PyDict_SetItem(shapes, distinct[k].line, keys[distinct[k].key]) < 0)
            goto done;
    }
    if (remember) {
        for (Py_ssize_t k = 0; k < kinds; k++) {
            if (distinct[k].known_key == NULL && PyUnicode_IS_ASCII(distinct[k].line))
                known_add(distinct[k].line, keys[distinct[k].key], distinct[k].hash);
        }
    }
    result = PyTuple_Pack(3, lines, counts, shapes);
    goto done;
unfit:
    result = Py_NewRef(Py_None);
    goto done;
nomemory:
    PyErr_NoMemory();
done:
    Py_XDECREF(lines); /* a list not filled to its end holds NULLs, which its deallocation skips */
    Py_XDECREF(counts);
    Py_XDECREF(shapes);
    for (Py_ssize_t k = 0; k < kinds; k++) { /* the strs made (an early end leaves the rest NULL) */
        if (distinct[k].line == NULL)
            break;
        Py_DECREF(distinct[k].line);
        Py_XDECREF(distinct[k].known_key);
    }
    if (remember)
        known_busy = 0;
    for (Py_ssize_t k = 0; k < shapes_made; k++)
        Py_DECREF(keys[k]);
    PyMem_Free(first);
    for (int m = 0; m < SCRATCHES; m++) {
        if (memories[m].size > KEPT_MEMORY || pool[m].at != NULL) /* too big, or a call inside this one kept its own */
            PyMem_Free(memories[m].at);
        else
            pool[m] = memories[m];
    }
    PyBuffer_Release(&data);
    PyBuffer_Release(&head);
    return result;
}

/* The UTF-8 bytes of a str (their count in *n); NULL with *cannot set where UTF-8 cannot hold the str (a lone
 * surrogate: the caller answers None), NULL with an exception set on any other error. */
static const unsigned char *
utf8_of(PyObject *text, Py_ssize_t *n, int *cannot)
{
    const unsigned char *s = (const unsigned char *)PyUnicode_AsUTF8AndSize(text, n);
    *cannot = s == NULL && PyErr_ExceptionMatches(PyExc_UnicodeEncodeError);
    if (*cannot)
        PyErr_Clear();
    return s;
}

/* (key, values) of one str under `end_of`; None for a str that is not UTF-8 (a lone surrogate), which the
 * caller masks in Python. */
static PyObject *
masked(PyObject *text, Scanner end_of)
{
    Py_ssize_t n;
    int cannot;
    const unsigned char *s = utf8_of(text, &n, &cannot);
    if (s == NULL)
        return cannot ? Py_NewRef(Py_None) : NULL;
    PyObject *values = PyList_New(0), *key = NULL, *result = NULL;
    unsigned char *out = PyMem_Malloc((size_t)(n ? n : 1));
    if (values == NULL || out == NULL) {
        if (out == NULL)
            PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t size = masked_key(s, n, out, values, end_of);
    if (size < 0)
        goto done;
    if ((key = PyUnicode_DecodeUTF8((const char *)out, size, NULL)) != NULL)
        result = PyTuple_Pack(2, key, values);
done:
    Py_XDECREF(key);
    Py_XDECREF(values);
    PyMem_Free(out);
    return result;
}

/* split(text) -> (key, values): the SHAPE key of one str (each match replaced by a NUL and its kind) and the
 * matches, as _fast.shapes.Shaper.split gives them. */
static PyObject *
speedups_split(PyObject *Py_UNUSED(module), PyObject *text)
{
    return masked(text, shape_end);
}

/* values(text) -> values: the SHAPE matches of one str (split(text)[1], without making the key). */
static PyObject *
speedups_values(PyObject *Py_UNUSED(module), PyObject *text)
{
    Py_ssize_t n;
    int cannot;
    const unsigned char *s = utf8_of(text, &n, &cannot);
    if (s == NULL)
        return cannot ? Py_NewRef(Py_None) : NULL;
    PyObject *values = PyList_New(0);
    if (values == NULL)
        return NULL;
    Py_ssize_t i = 0;
    while (i < n) {
        while (i < n && !is_digit(s[i])) /* every match starts at a digit */
            i++;
        if (i == n)
            break;
        unsigned char kind;
        Py_ssize_t end = starts_none(s, i) ? -1 : shape_end(s, n, i, &kind);
        if (end < 0) {
            i++;
            continue;
        }
        PyObject *value = PyUnicode_DecodeASCII((const char *)s + i, end - i, NULL);
        if (value == NULL || PyList_Append(values, value) < 0) {
            Py_XDECREF(value);
            Py_DECREF(values);
            return NULL;
        }
        Py_DECREF(value);
        i = end;
    }
    return values;
}

/* mask(text) -> (key, values): the VOLATILE shape of one str and its volatile values, as _fast.shapes.mask
 * gives them. */
static PyObject *
speedups_mask(PyObject *Py_UNUSED(module), PyObject *text)
{
    return masked(text, volatile_end);
}

/* ---- newlines counted ------------------------------------------------------------------------------------- */

/* newlines(buffer, size) -> the count of b"\n" in the first size bytes of a bytes-like object, with the GIL
 * released (bytes.count reads one byte at a time: some 2.5 GB/s, where memchr runs at the memory's speed). */
static PyObject *
speedups_newlines(PyObject *Py_UNUSED(module), PyObject *args)
{
    Py_buffer view;
    Py_ssize_t size, count = 0;
    if (!PyArg_ParseTuple(args, "y*n", &view, &size)) {
        return NULL;
    }
    if (size < 0 || size > view.len) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "size out of the buffer");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    const char *at = view.buf, *end = at + size;
    while (at < end && (at = memchr(at, '\n', (size_t)(end - at))) != NULL) {
        count++;
        at++;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(count);
}

/* ---- records built from their field values ---------------------------------------------------------------- */

/* What maker(cls) checked once: the class and the byte offsets of its slots, in field order. */
typedef struct {
    PyTypeObject *type;
    Py_ssize_t count;
    Py_ssize_t offsets[];
} Maker;

static void
maker_free(PyObject *capsule)
{
    Maker *maker = PyCapsule_GetPointer(capsule, "blaslog._speedups.maker");
    if (maker != NULL) {
        Py_DECREF(maker->type);
        PyMem_Free(maker);
    }
}

/* maker(cls, names) -> capsule: for make(); each name must be an object slot (__slots__) of cls. */
static PyObject *
speedups_maker(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *cls, *names;
    if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &cls, &PyTuple_Type, &names))
        return NULL;
    PyTypeObject *type = (PyTypeObject *)cls;
    Py_ssize_t count = PyTuple_GET_SIZE(names);
    Maker *maker = PyMem_Malloc(sizeof(Maker) + (size_t)count * sizeof(Py_ssize_t));
    if (maker == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *descr = PyObject_GetAttr(cls, PyTuple_GET_ITEM(names, i));
        if (descr == NULL) {
            PyMem_Free(maker);
            return NULL;
        }
        int slot = Py_IS_TYPE(descr, &PyMemberDescr_Type)
                   && ((PyMemberDescrObject *)descr)->d_member->type == T_OBJECT_EX
                   && !(((PyMemberDescrObject *)descr)->d_member->flags & READONLY)
                   && PyType_IsSubtype(type, ((PyDescrObject *)descr)->d_type);
        if (slot)
            maker->offsets[i] = ((PyMemberDescrObject *)descr)->d_member->offset;
        Py_DECREF(descr);
        if (!slot) {
            PyMem_Free(maker);
            PyErr_Format(PyExc_TypeError, "%R is not an object slot of %R", PyTuple_GET_ITEM(names, i), cls);
            return NULL;
        }
    }
    Py_INCREF(cls);
    maker->type = type;
    maker->count = count;
    PyObject *capsule = PyCapsule_New(maker, "blaslog._speedups.maker", maker_free);
    if (capsule == NULL) {
        Py_DECREF(cls);
        PyMem_Free(maker);
    }
    return capsule;
}

/* make(maker, values) -> a new instance of the maker's class with its slots set to values, in order (what
 * records.record_maker's make does in Python: object.__new__ and each slot descriptor's __set__). */
static PyObject *
speedups_make(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "make(maker, values: list)");
        return NULL;
    }
    Maker *maker = PyCapsule_GetPointer(args[0], "blaslog._speedups.maker");
    if (maker == NULL)
        return NULL;
    PyObject *values = args[1];
    if (PyList_GET_SIZE(values) != maker->count) {
        PyErr_Format(PyExc_ValueError, "%zd values for %zd fields", PyList_GET_SIZE(values), maker->count);
        return NULL;
    }
    PyObject *obj = maker->type->tp_alloc(maker->type, 0);
    if (obj == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < maker->count; i++) {
        PyObject *value = PyList_GET_ITEM(values, i);
        Py_INCREF(value);
        *(PyObject **)((char *)obj + maker->offsets[i]) = value;
    }
    return obj;
}

/* planned(lines, shapes, shortcuts) -> (of, plain, gemms, after, tally): each line's mark
 * (shortcuts.get(shapes[line]), None where its SHAPE key has none) as a list; the indices of the lines whose mark
 * is None, of those whose mark is a tuple (a GEMM of a uniform shape), and of the lines whose mark is None after a
 * line whose mark is not, each in order; and {mark: how many lines have it} for the marks that are not None
 * (equal marks, such as the equal tuples two shortcuts were given, are one key, as in a dict), in the order of
 * their first line (_fast.plan's passes over a batch's lines, in one). A batch's equal lines are
 * mostly one str (lines() makes them so): each str is looked up once, by its address. */
typedef struct {
    PyObject *key;    /* a line, a SHAPE key or a mark, by address; NULL: a free slot */
    PyObject *mark;   /* a line's or a key's mark, borrowed from shortcuts (or Py_None) */
    Py_ssize_t order; /* a mark's index in the tally's arrays */
} Seen;

/* The slot of `key` in `table` (`capacity` slots, a power of two, less than half of them held): its own, or
 * the free one where it goes. */
static Seen *
address_slot(Seen *table, size_t capacity, PyObject *key)
{
    uint64_t h = (uint64_t)(uintptr_t)key * 0x9E3779B97F4A7C15ULL;
    size_t at = (size_t)(h ^ (h >> 29)) & (capacity - 1);
    while (table[at].key != NULL && table[at].key != key)
        at = (at + 1) & (capacity - 1);
    return &table[at];
}

static PyObject *
speedups_planned(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyList_Check(args[0]) || !PyDict_Check(args[1]) || !PyDict_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "planned(lines: list, shapes: dict, shortcuts: dict)");
        return NULL;
    }
    PyObject *lines = args[0], *shapes = args[1], *shortcuts = args[2];
    Py_ssize_t n = PyList_GET_SIZE(lines);
    size_t capacity = 16;
    while (capacity < (size_t)PyDict_GET_SIZE(shapes) * 2 + 2)
        capacity *= 2;
    Seen *seen = PyMem_Calloc(capacity, sizeof(Seen)), *keyed = PyMem_Calloc(capacity, sizeof(Seen));
    Seen *order = PyMem_Calloc(capacity, sizeof(Seen));
    PyObject **marks = PyMem_Calloc(capacity, sizeof(PyObject *));
    Py_ssize_t *sums = PyMem_Calloc(capacity, sizeof(Py_ssize_t));
    Py_ssize_t held = 0, keys = 0, distinct = 0; /* lines in seen, keys in keyed, marks tallied */
    PyObject *of = NULL, *plain = NULL, *gemms = NULL, *after = NULL, *tally = NULL, *result = NULL, *previous = NULL;
    if (seen == NULL || keyed == NULL || order == NULL || marks == NULL || sums == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if ((of = PyList_New(n)) == NULL || (plain = PyList_New(0)) == NULL || (gemms = PyList_New(0)) == NULL
        || (after = PyList_New(0)) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *line = PyList_GET_ITEM(lines, i), *mark;
        Seen *at = address_slot(seen, capacity, line);
        if (at->key != NULL) {
            mark = at->mark;
        } else {
            PyObject *key = PyDict_GetItemWithError(shapes, line);
            if (key == NULL) {
                if (!PyErr_Occurred())
                    PyErr_SetObject(PyExc_KeyError, line);
                goto done;
            }
            Seen *by = address_slot(keyed, capacity, key); /* a batch's lines of one key share its str */
            if (by->key != NULL) {
                mark = by->mark;
            } else {
                mark = PyDict_GetItemWithError(shortcuts, key);
                if (mark == NULL) {
                    if (PyErr_Occurred())
                        goto done;
                    mark = Py_None;
                }
                if ((size_t)keys * 2 + 2 <= capacity) {
                    *by = (Seen){key, mark, 0};
                    keys++;
                }
            }
            if ((size_t)held * 2 + 2 <= capacity) { /* another str of an equal line: looked up again, not kept */
                *at = (Seen){line, mark, 0};
                held++;
            }
        }
        PyList_SET_ITEM(of, i, Py_NewRef(mark));
        PyObject *into = mark == Py_None ? plain : (PyTuple_CheckExact(mark) ? gemms : NULL);
        int ends = mark == Py_None && previous != NULL && previous != Py_None; /* after a marked line */
        previous = mark;
        if (into != NULL) {
            PyObject *index = PyLong_FromSsize_t(i);
            if (index == NULL || PyList_Append(into, index) < 0 || (ends && PyList_Append(after, index) < 0)) {
                Py_XDECREF(index);
                goto done;
            }
            Py_DECREF(index);
        }
        if (mark == Py_None)
            continue;
        Seen *slot = address_slot(order, capacity, mark);
        if (slot->key == NULL) {
            if ((size_t)distinct * 2 + 2 > capacity) { /* more marks than the shapes held: cannot be */
                PyErr_SetString(PyExc_RuntimeError, "planned: more marks than SHAPE keys");
                goto done;
            }
            *slot = (Seen){mark, NULL, distinct};
            marks[distinct++] = mark;
        }
        sums[slot->order]++;
    }
    if ((tally = PyDict_New()) == NULL)
        goto done;
    for (Py_ssize_t k = 0; k < distinct; k++) { /* marks told apart by address; equal marks are one key */
        PyObject *had = PyDict_GetItemWithError(tally, marks[k]);
        if (had == NULL && PyErr_Occurred())
            goto done;
        Py_ssize_t sum = sums[k];
        if (had != NULL) {
            Py_ssize_t before = PyLong_AsSsize_t(had);
            if (before == -1 && PyErr_Occurred())
                goto done;
            sum += before;
        }
        PyObject *count = PyLong_FromSsize_t(sum);
        if (count == NULL || PyDict_SetItem(tally, marks[k], count) < 0) {
            Py_XDECREF(count);
            goto done;
        }
        Py_DECREF(count);
    }
    result = PyTuple_Pack(5, of, plain, gemms, after, tally);
done:
    Py_XDECREF(of); /* a list not filled to its end holds NULLs, which its deallocation skips */
    Py_XDECREF(plain);
    Py_XDECREF(gemms);
    Py_XDECREF(after);
    Py_XDECREF(tally);
    PyMem_Free(seen);
    PyMem_Free(keyed);
    PyMem_Free(order);
    PyMem_Free(marks);
    PyMem_Free(sums);
    return result;
}

/* The decimal digits of `value` into `out` (room for 20), as "%lld" writes a value from 0 on; their count. */
static int
decimal(unsigned long long value, char *out)
{
    char backwards[24];
    int count = 0;
    do {
        backwards[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    for (int i = 0; i < count; i++)
        out[i] = backwards[count - 1 - i];
    return count;
}

/* Where `numbers` is a range of values from 0 below 2**62 (a run's line numbers), its start, step and length, so
   that a row's number is computed rather than made as an int object; 0 otherwise (each number got as an item). */
static int
range_of(PyObject *numbers, long long *first, long long *step, Py_ssize_t *length)
{
    static PyObject *start_name, *step_name; /* interned once: a call that writes no row costs little more */
    if (!PyRange_Check(numbers))
        return 0;
    if (start_name == NULL && (start_name = PyUnicode_InternFromString("start")) == NULL) {
        PyErr_Clear();
        return 0;
    }
    if (step_name == NULL && (step_name = PyUnicode_InternFromString("step")) == NULL) {
        PyErr_Clear();
        return 0;
    }
    PyObject *a = PyObject_GetAttr(numbers, start_name);
    PyObject *b = a == NULL ? NULL : PyObject_GetAttr(numbers, step_name);
    int ok = 0;
    if (a != NULL && b != NULL) {
        int over_a = 0, over_b = 0;
        *first = PyLong_AsLongLongAndOverflow(a, &over_a);
        *step = PyLong_AsLongLongAndOverflow(b, &over_b);
        *length = PyObject_Length(numbers);
        ok = !PyErr_Occurred() && !over_a && !over_b && *length >= 0 && *first >= 0 && *step >= 0 &&
             *first < (1LL << 62) && *step < (1LL << 30) && *length < (1LL << 30) &&
             *first + (long long)*length * *step < (1LL << 62);
    }
    Py_XDECREF(a);
    Py_XDECREF(b);
    PyErr_Clear(); /* a range whose bounds are no small ints: its items are got one by one, as for any sequence */
    return ok;
}

/* kept_rows(marks, texts, numbers, kept, start, limit) -> (text, stop): the rows of a run of one-line records
   from start on (marks[i][1] the line's template, texts[i] its line, numbers[i] its number), for as long as each
   line's row is kept with its template (kept[texts[i]] == (template, parts), parts a list of ASCII str) and its
   number is an int from 0 on, and the text holds at most `limit` characters (its first row whatever its
   length): each row is its parts joined by the number's digits, all of them one str, written where the str
   lies (no buffer copied into it); stop is the first row not written (or the run's length). A range of numbers
   is read by its start and step. blaslog.reporters.json's _kept_rows does the same in Python. */
static PyObject *
speedups_kept_rows(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6 || !PyDict_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "kept_rows(marks, texts, numbers, kept, start, limit)");
        return NULL;
    }
    int beyond = 0; /* a start beyond 64 bits: before the first row, or past the last */
    long long from = PyLong_AsLongLongAndOverflow(args[4], &beyond);
    if (from == -1 && PyErr_Occurred())
        return NULL;
    if (beyond > 0 || from > PY_SSIZE_T_MAX) /* past every run: no row, and the start given back */
        return Py_BuildValue("(sO)", "", args[4]);
    Py_ssize_t start = beyond < 0 || from < 0 ? 0 : (Py_ssize_t)from;
    int outside = 0; /* a limit beyond 64 bits: as large (or as small) as can be */
    long long wide = PyLong_AsLongLongAndOverflow(args[5], &outside);
    if (wide == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t limit = outside > 0 || wide > PY_SSIZE_T_MAX ? PY_SSIZE_T_MAX : outside < 0 || wide < 0 ? 0 : (Py_ssize_t)wide;
    PyObject *marks = PySequence_Fast(args[0], "marks must be a sequence");
    if (marks == NULL)
        return NULL;
    PyObject *texts = PySequence_Fast(args[1], "texts must be a sequence");
    if (texts == NULL) {
        Py_DECREF(marks);
        return NULL;
    }
    PyObject *numbers = args[2], *kept = args[3], *result = NULL, *text = NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(texts), at = start;
    long long first = 0, step = 0;
    Py_ssize_t span = 0;
    int ranged = range_of(numbers, &first, &step, &span);
    char *out = NULL; /* the characters of `text`, a str made for this call and not shared yet */
    size_t used = 0, room = 0;
    if (PySequence_Fast_GET_SIZE(marks) != count) {
        PyErr_SetString(PyExc_ValueError, "kept_rows: marks and texts differ in length");
        goto done;
    }
    /* the lists' lengths read again at each row: Python code run below (a sequence's item, a key's __eq__ in the
       dict) may have shortened them */
    for (; at < count && at < PySequence_Fast_GET_SIZE(texts) && at < PySequence_Fast_GET_SIZE(marks); at++) {
        /* the number first: getting an item of a sequence other than a list may run Python code, which must not
           come between the dict lookup below and the use of what it lent */
        long long value;
        if (ranged && at < span) {
            value = first + (long long)at * step;
        } else {
            PyObject *number;
            if (PyList_CheckExact(numbers)) {
                if (at >= PyList_GET_SIZE(numbers)) {
                    PyErr_SetString(PyExc_ValueError, "kept_rows: fewer numbers than texts");
                    goto done;
                }
                number = Py_NewRef(PyList_GET_ITEM(numbers, at));
            } else {
                number = PySequence_GetItem(numbers, at);
                if (number == NULL)
                    goto done;
            }
            int overflow = 0;
            value = PyLong_CheckExact(number) ? PyLong_AsLongLongAndOverflow(number, &overflow) : -1;
            Py_DECREF(number);
            if (value == -1 && PyErr_Occurred())
                goto done;
            /* getting the item may have run Python code that changed the lists of lines and marks */
            if (at >= PySequence_Fast_GET_SIZE(texts) || at >= PySequence_Fast_GET_SIZE(marks)) {
                PyErr_SetString(PyExc_RuntimeError, "kept_rows: the run changed while it was read");
                goto done;
            }
            if (overflow || value < 0)
                break;
        }
        PyObject *mark = PySequence_Fast_GET_ITEM(marks, at);
        PyObject *found = PyDict_GetItemWithError(kept, PySequence_Fast_GET_ITEM(texts, at));
        if (found == NULL) {
            if (PyErr_Occurred())
                goto done;
            break;
        }
        if (!PyTuple_Check(mark) || PyTuple_GET_SIZE(mark) < 2 || !PyTuple_Check(found) ||
            PyTuple_GET_SIZE(found) != 2 || PyTuple_GET_ITEM(found, 0) != PyTuple_GET_ITEM(mark, 1))
            break;
        PyObject *parts = PyTuple_GET_ITEM(found, 1);
        if (!PyList_CheckExact(parts) || PyList_GET_SIZE(parts) == 0)
            break;
        char digits[24];
        int width = decimal((unsigned long long)value, digits);
        Py_ssize_t pieces = PyList_GET_SIZE(parts);
        size_t need = (size_t)width * (size_t)(pieces - 1);
        Py_ssize_t i;
        for (i = 0; i < pieces; i++) {
            PyObject *part = PyList_GET_ITEM(parts, i);
            if (!PyUnicode_CheckExact(part) || !PyUnicode_IS_ASCII(part))
                break;
            need += (size_t)PyUnicode_GET_LENGTH(part);
        }
        if (i < pieces || (used && used + need > (size_t)limit))
            break;
        if (used + need > room) {
            /* one str for the whole text where the limit is a buffer's (the first row and `limit` more
               characters at most), else grown twofold */
            size_t grown = room ? room * 2 : (size_t)limit <= (1 << 20) ? need + (size_t)limit : 1 << 16;
            while (grown < used + need)
                grown *= 2;
            if (grown > (size_t)PY_SSIZE_T_MAX) {
                PyErr_NoMemory();
                goto done;
            }
            if (text == NULL ? (text = PyUnicode_New((Py_ssize_t)grown, 127)) == NULL
                             : PyUnicode_Resize(&text, (Py_ssize_t)grown) < 0)
                goto done;
            out = (char *)PyUnicode_DATA(text), room = grown;
        }
        for (i = 0; i < pieces; i++) {
            PyObject *part = PyList_GET_ITEM(parts, i);
            if (i) {
                memcpy(out + used, digits, (size_t)width);
                used += (size_t)width;
            }
            memcpy(out + used, PyUnicode_DATA(part), (size_t)PyUnicode_GET_LENGTH(part));
            used += (size_t)PyUnicode_GET_LENGTH(part);
        }
    }
    if (text == NULL) {
        text = PyUnicode_New(0, 127);
    } else if (used < room && PyUnicode_Resize(&text, (Py_ssize_t)used) < 0) {
        goto done;
    }
    if (text != NULL) {
        result = Py_BuildValue("(On)", text, at);
    }
done:
    Py_XDECREF(text);
    Py_DECREF(texts);
    Py_DECREF(marks);
    return result;
}

/* forget() -> None: empties the memory of lines kept from call to call (see known_add; for tests). */
static PyObject *
speedups_forget(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored))
{
    if (!known_busy) {
        known_clear();
        known_rest = 0;
        if (known_seen != NULL)
            memset(known_seen, 0, KNOWN_SEEN * sizeof(uint16_t));
    }
    Py_RETURN_NONE;
}

/* remembered() -> how many lines the memory holds (for tests). */
static PyObject *
speedups_remembered(PyObject *Py_UNUSED(module), PyObject *Py_UNUSED(ignored))
{
    return PyLong_FromSize_t(known_held);
}

static PyMethodDef methods[] = {
    {"forget", speedups_forget, METH_NOARGS, "forget() -> None: empty the memory of lines lines() keeps."},
    {"remembered", speedups_remembered, METH_NOARGS,
     "remembered() -> how many lines lines() keeps from call to call."},
    {"maker", speedups_maker, METH_VARARGS,
     "maker(cls, names) -> an opaque maker for make(): names are object slots of cls, in the order make() sets "
     "them."},
    {"make", (PyCFunction)(void (*)(void))speedups_make, METH_FASTCALL,
     "make(maker, values) -> a new instance of the maker's class, its slots set to values (a list, one per "
     "name), without calling __init__."},
    {"lines", speedups_lines, METH_VARARGS,
     "lines(data, end, head, longest) -> (lines, counts, shapes) or None: the lines of data[:end] after head, "
     "each distinct line's count and SHAPE key; None when a line is not UTF-8, holds a NUL or is longer than "
     "longest characters."},
    {"split", speedups_split, METH_O,
     "split(text) -> (key, values): the SHAPE key of text (each match replaced by a NUL and its kind) and the "
     "matches; None for a str that UTF-8 cannot hold."},
    {"values", speedups_values, METH_O,
     "values(text) -> the SHAPE matches of text (split(text)[1], without the key); None for a str that UTF-8 "
     "cannot hold."},
    {"planned", (PyCFunction)(void (*)(void))speedups_planned, METH_FASTCALL,
     "planned(lines, shapes, shortcuts) -> (of, plain, gemms, after, tally): each line's mark "
     "(shortcuts.get(shapes[line])), the indices of the lines whose mark is None, of those whose mark is a tuple, "
     "and of the unmarked lines after a marked one, and each mark other than None -> how many lines have it."},
    {"newlines", speedups_newlines, METH_VARARGS,
     "newlines(buffer, size) -> the count of newlines in the first size bytes of buffer (the GIL released)."},
    {"kept_rows", (PyCFunction)(void (*)(void))speedups_kept_rows, METH_FASTCALL,
     "kept_rows(marks, texts, numbers, kept, start) -> (text, stop): the rows of a run from start on, for as "
     "long as each line's row is kept with its template (ASCII parts, a number from 0 on), as one str, and the "
     "first row that is not."},
    {"mask", speedups_mask, METH_O,
     "mask(text) -> (key, values): the VOLATILE shape of text (each match replaced by a NUL and its kind) and "
     "the matches; None for a str that UTF-8 cannot hold."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "blaslog._speedups", "The parse pipeline's per-byte loop in C (optional).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    PyObject *text = PyUnicode_FromString("blaslog._speedups");
    if (text == NULL)
        return NULL;
    Py_hash_t hash = PyObject_Hash(text);
    Py_DECREF(text);
    if (hash == -1 && PyErr_Occurred())
        return NULL;
    seed = ((uint64_t)hash * 0x9E3779B97F4A7C15ULL) ^ 0x243F6A8885A308D3ULL;
    return PyModule_Create(&module);
}
