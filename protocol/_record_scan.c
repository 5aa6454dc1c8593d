/* The records of a magic-v2 batch walked field by field: the compiled form of
 * protocol/record_scan.py, which is the reference. Same arguments, same answer for
 * every input, message text included (tests/property/test_record_scan.py compares
 * them on generated and mutated batches). Compiled because the broker runs it on every
 * record it ingests: a Python loop costs about twice the broker's whole ingest budget.
 * The walk takes the records' max timestamp on the way: Kafka's LogValidator recomputes
 * a batch's max timestamp from its records rather than trusting the header.
 *
 * scan(buf, start, end, count, base_timestamp) -> max_timestamp | (error_code, record_index, message)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define INVALID_RECORD 87
#define VARINT_BYTES 5   /* Kafka's ByteUtils.readVarint */
#define VARLONG_BYTES 10 /* Kafka's ByteUtils.readVarlong */
#define NO_TIMESTAMP (-1) /* Kafka's RecordBatch.NO_TIMESTAMP: where the max timestamp starts */

#ifndef KIPPER_SOURCE_DIGEST
#define KIPPER_SOURCE_DIGEST "unknown"
#endif

typedef const unsigned char *cursor;

enum { READ_OK = 0, READ_PAST_END = 1, READ_TOO_LONG = 2 };

/* A fault found in the walk: filled once, turned into the Python answer at the end. */
typedef struct {
    Py_ssize_t index;
    PyObject *message; /* a new reference, or NULL when formatting failed */
} fault;

static int
set_fault(fault *f, Py_ssize_t index, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    f->index = index;
    f->message = PyUnicode_FromFormatV(format, args);
    va_end(args);
    return -1;
}

/* A zig-zag varint of at most 5 bytes, bits past 32 dropped (as Java drops them). */
static inline int
read_varint(cursor *pos, cursor limit, int32_t *out)
{
    cursor p = *pos;
    if (p < limit && *p < 0x80) { /* one byte: nearly every field of a small record */
        uint32_t raw = *p;
        *out = (int32_t)((raw >> 1) ^ (0u - (raw & 1u)));
        *pos = p + 1;
        return READ_OK;
    }
    uint32_t raw = 0;
    for (int shift = 0; shift < 7 * VARINT_BYTES; shift += 7) {
        if (p >= limit)
            return READ_PAST_END;
        unsigned char byte = *p++;
        raw |= (uint32_t)(byte & 0x7F) << shift;
        if (!(byte & 0x80)) {
            *out = (int32_t)((raw >> 1) ^ (0u - (raw & 1u)));
            *pos = p;
            return READ_OK;
        }
    }
    return READ_TOO_LONG;
}

/* A zig-zag varlong of at most 10 bytes, bits past 64 dropped (as Java drops them). */
static inline int
read_varlong(cursor *pos, cursor limit, int64_t *out)
{
    cursor p = *pos;
    uint64_t raw = 0;
    for (int i = 0; i < VARLONG_BYTES; i++) {
        if (p >= limit)
            return READ_PAST_END;
        unsigned char byte = *p++;
        raw |= (uint64_t)(byte & 0x7F) << (7 * i); /* the tenth byte: its lowest bit lands at 63 */
        if (!(byte & 0x80)) {
            *out = (int64_t)((raw >> 1) ^ ((uint64_t)0 - (raw & 1)));
            *pos = p;
            return READ_OK;
        }
    }
    return READ_TOO_LONG;
}

/* a record's timestamp as Java computes it: base + delta, wrapping past 2^63 */
static inline int64_t
record_timestamp(int64_t base, int64_t delta)
{
    return (int64_t)((uint64_t)base + (uint64_t)delta);
}

static int
varint_fault(fault *f, int status, Py_ssize_t index, const char *what, const char *where)
{
    if (status == READ_PAST_END)
        return set_fault(f, index, "record %zd: %s runs past the end of the %s", index, what, where);
    return set_fault(f, index, "record %zd: %s varint is longer than 5 bytes", index, what);
}

/* The position after a length-prefixed field of the record ending at ``end``. */
static inline int
bytes_field(fault *f, cursor *pos, cursor end, Py_ssize_t index, const char *what, int null_ok)
{
    int32_t size;
    char label[32];
    int status = read_varint(pos, end, &size);
    if (status != READ_OK) {
        PyOS_snprintf(label, sizeof label, "%s length", what);
        return varint_fault(f, status, index, label, "record");
    }
    if (size < 0) {
        if (size == -1 && null_ok)
            return 0;
        return set_fault(f, index, "record %zd: %s length %d is negative", index, what, (int)size);
    }
    if ((Py_ssize_t)size > end - *pos)
        return set_fault(f, index, "record %zd: %s of %d bytes runs past the end of the record",
                         index, what, (int)size);
    *pos += size;
    return 0;
}

/* Walk the fields of record ``index``, which spans [pos, end); its timestamp delta in ``delta``. */
static int
walk_record(fault *f, cursor pos, cursor end, Py_ssize_t index, int64_t *delta)
{
    int32_t value;
    int status;
    if (pos >= end)
        return set_fault(f, index, "record %zd: attributes run past the end of the record", index);
    pos++; /* attributes: unused in v2, as Kafka leaves them */
    if ((status = read_varlong(&pos, end, delta)) != READ_OK) {
        if (status == READ_PAST_END)
            return set_fault(f, index, "record %zd: timestamp delta runs past the end of the record", index);
        return set_fault(f, index, "record %zd: timestamp delta varlong is longer than 10 bytes", index);
    }
    if ((status = read_varint(&pos, end, &value)) != READ_OK)
        return varint_fault(f, status, index, "offset delta", "record");
    if (bytes_field(f, &pos, end, index, "key", 1) < 0)
        return -1;
    if (bytes_field(f, &pos, end, index, "value", 1) < 0)
        return -1;
    if ((status = read_varint(&pos, end, &value)) != READ_OK)
        return varint_fault(f, status, index, "header count", "record");
    if (value < 0)
        return set_fault(f, index, "record %zd: header count %d is negative", index, (int)value);
    if ((Py_ssize_t)value > end - pos)
        return set_fault(f, index, "record %zd: header count %d exceeds the %zd bytes left in the record",
                         index, (int)value, (Py_ssize_t)(end - pos));
    for (int32_t h = 0; h < value; h++) {
        if (bytes_field(f, &pos, end, index, "header key", 0) < 0)
            return -1;
        if (bytes_field(f, &pos, end, index, "header value", 1) < 0)
            return -1;
    }
    if (pos != end)
        return set_fault(f, index, "record %zd: %zd bytes left over after its fields",
                         index, (Py_ssize_t)(end - pos));
    return 0;
}

/* 0 when [pos, end) holds exactly ``count`` records, their max timestamp in ``top``;
 * -1 with ``f`` filled otherwise. */
static int
walk_records(fault *f, cursor pos, cursor end, Py_ssize_t count, int64_t base, int64_t *top)
{
    *top = NO_TIMESTAMP;
    for (Py_ssize_t index = 0; index < count; index++) {
        int32_t size;
        int64_t delta;
        int status;
        if (pos >= end)
            return set_fault(f, index, "record %zd: the batch ends after %zd of its %zd records",
                             index, index, count);
        if ((status = read_varint(&pos, end, &size)) != READ_OK)
            return varint_fault(f, status, index, "length", "batch");
        if (size < 0)
            return set_fault(f, index, "record %zd: length %d is negative", index, (int)size);
        if ((Py_ssize_t)size > end - pos)
            return set_fault(f, index, "record %zd: length %d runs past the end of the batch (%zd bytes left)",
                             index, (int)size, (Py_ssize_t)(end - pos));
        if (walk_record(f, pos, pos + size, index, &delta) < 0)
            return -1;
        int64_t timestamp = record_timestamp(base, delta);
        if (timestamp > *top)
            *top = timestamp;
        pos += size;
    }
    if (pos != end)
        return set_fault(f, -1, "%zd bytes follow the last of the %zd records", (Py_ssize_t)(end - pos), count);
    return 0;
}

/* --- the fast walk: the same checks, no messages ------------------------------------
 * Every batch a broker accepts goes through here only. It answers where the first
 * fault is and nothing more; the walk above then runs over the refused batch to say
 * what the fault is (and the tests check that the two accept exactly the same inputs).
 */

#if defined(__GNUC__)
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define INLINE static inline __attribute__((always_inline))
#else
#define LIKELY(x) (x)
#define INLINE static inline
#endif

/* read_varint, returning 1 when it read one */
INLINE int
fast_varint(cursor *pos, cursor limit, int32_t *out)
{
    cursor p = *pos;
    if (LIKELY(p < limit)) {
        uint32_t raw = p[0];
        if (LIKELY(raw < 0x80)) {
            *out = (int32_t)((raw >> 1) ^ (0u - (raw & 1u)));
            *pos = p + 1;
            return 1;
        }
        if (LIKELY(p + 1 < limit && p[1] < 0x80)) {
            raw = (raw & 0x7F) | ((uint32_t)p[1] << 7);
            *out = (int32_t)((raw >> 1) ^ (0u - (raw & 1u)));
            *pos = p + 2;
            return 1;
        }
    }
    return read_varint(pos, limit, out) == READ_OK;
}

/* a length-prefixed field of a record ending at ``end``: -1 (null) allowed when null_ok */
INLINE int
fast_bytes(cursor *pos, cursor end, int null_ok)
{
    int32_t size;
    if (!fast_varint(pos, end, &size))
        return 0;
    if (size < 0)
        return size == -1 && null_ok;
    if ((Py_ssize_t)size > end - *pos)
        return 0;
    *pos += size;
    return 1;
}

/* -1 when [pos, end) holds exactly ``count`` well-formed records (their max timestamp in
 * ``top``), else the index of the record where a fault is (``count`` for bytes after the
 * last record) */
static Py_ssize_t
fast_walk(cursor pos, cursor end, Py_ssize_t count, int64_t base, int64_t *top)
{
    int64_t max = NO_TIMESTAMP;
    for (Py_ssize_t index = 0; index < count; index++) {
        int32_t size, value;
        int64_t delta;
        if (!fast_varint(&pos, end, &size) || size < 0 || (Py_ssize_t)size > end - pos)
            return index;
        cursor p = pos, record_end = pos + size;
        if (p >= record_end)
            return index;
        p++; /* attributes */
        if (LIKELY(p < record_end && *p < 0x80)) { /* a one-byte timestamp delta: usual */
            uint32_t raw = *p++;
            delta = (int64_t)(int32_t)((raw >> 1) ^ (0u - (raw & 1u)));
        } else if (read_varlong(&p, record_end, &delta) != READ_OK) {
            return index;
        }
        int64_t timestamp = record_timestamp(base, delta);
        if (timestamp > max)
            max = timestamp;
        if (!fast_varint(&p, record_end, &value)            /* offset delta */
            || !fast_bytes(&p, record_end, 1)                /* key */
            || !fast_bytes(&p, record_end, 1)                /* value */
            || !fast_varint(&p, record_end, &value)          /* header count */
            || value < 0 || (Py_ssize_t)value > record_end - p)
            return index;
        for (int32_t h = 0; h < value; h++) {
            if (!fast_bytes(&p, record_end, 0) || !fast_bytes(&p, record_end, 1))
                return index;
        }
        if (p != record_end)
            return index;
        pos = record_end;
    }
    *top = max;
    return pos == end ? -1 : count;
}

static PyObject *
scan(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 5) {
        PyErr_Format(PyExc_TypeError, "scan() takes 5 arguments (buf, start, end, count, base_timestamp), got %zd",
                     nargs);
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[1]);
    if (start == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t end = PyLong_AsSsize_t(args[2]);
    if (end == -1 && PyErr_Occurred())
        return NULL;
    long long count = PyLong_AsLongLong(args[3]);
    if (count == -1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError))
            return NULL;
        PyErr_Clear();
        count = INT64_MAX;
    }
    if (count < INT32_MIN || count > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "record count %S is not an int32", args[3]);
        return NULL;
    }
    int overflow = 0;
    long long base = PyLong_AsLongLongAndOverflow(args[4], &overflow);
    if (base == -1 && PyErr_Occurred())
        return NULL;
    if (overflow) {
        PyErr_Format(PyExc_ValueError, "base timestamp %S is not an int64", args[4]);
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (start < 0 || start > end || end > view.len) {
        PyErr_Format(PyExc_ValueError, "span [%zd, %zd) is not within a buffer of %zd bytes",
                     start, end, view.len);
        PyBuffer_Release(&view);
        return NULL;
    }
    fault f = {0, NULL};
    int status;
    int64_t top = NO_TIMESTAMP;
    if (count < 0) {
        status = set_fault(&f, -1, "record count %d is negative", (int)count);
    } else {
        cursor data = (cursor)view.buf;
        status = 0;
        if (fast_walk(data + start, data + end, (Py_ssize_t)count, (int64_t)base, &top) != -1) {
            status = walk_records(&f, data + start, data + end, (Py_ssize_t)count, (int64_t)base, &top);
            if (status == 0) { /* a bug: the two walks must accept the same inputs */
                PyBuffer_Release(&view);
                PyErr_SetString(PyExc_SystemError, "the record scan's two walks disagree");
                return NULL;
            }
        }
    }
    PyBuffer_Release(&view);
    if (status == 0)
        return PyLong_FromLongLong((long long)top);
    if (f.message == NULL)
        return NULL;
    return Py_BuildValue("(inN)", INVALID_RECORD, f.index, f.message);
}

static PyMethodDef methods[] = {
    {"scan", (PyCFunction)(void (*)(void))scan, METH_FASTCALL,
     "scan(buf, start, end, count, base_timestamp) -> max_timestamp | (error_code, record_index, message)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_record_scan",
    "The compiled form of kipper.protocol.record_scan (the record parser of magic-v2 batches).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__record_scan(void)
{
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    /* setup.py compiles in the digest of this file, so a stale build is detected */
    if (PyModule_AddStringConstant(module, "SOURCE_DIGEST", KIPPER_SOURCE_DIGEST) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
