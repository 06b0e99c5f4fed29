/* ngcc._core: the only C <-> Python edge.
 *
 * This file parses arguments, takes buffers, releases the GIL and builds the
 * results; the work itself is in loader.c, timer.c, bench.c, kat.c and drng.c.
 * Errors are raised as the exception classes of ngcc._errors.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <numpy/arrayobject.h>

#include "bench.h"
#include "loader.h"
#include "timer.h"

static PyObject *LibraryError;  /* ngcc._errors.LibraryError */
static PyObject *HashError;     /* ngcc._errors.HashError */

/* ---------------------------------------------------------------- Library */

typedef struct {
    PyObject_HEAD
    instance_library lib;
    PyObject *path;  /* str */
} LibraryObject;

static int Library_init(LibraryObject *self, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"path", NULL};
    PyObject *path_bytes = NULL;
    char error[1024];

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&:Library", keywords,
                                     PyUnicode_FSConverter, &path_bytes))
        return -1;
    library_close(&self->lib);
    Py_CLEAR(self->path);
    if (library_open(&self->lib, PyBytes_AS_STRING(path_bytes), error, sizeof error) != 0) {
        PyErr_SetString(LibraryError, error);
        Py_DECREF(path_bytes);
        return -1;
    }
    self->path = PyUnicode_DecodeFSDefault(PyBytes_AS_STRING(path_bytes));
    Py_DECREF(path_bytes);
    return self->path ? 0 : -1;
}

static void Library_dealloc(LibraryObject *self)
{
    library_close(&self->lib);
    Py_XDECREF(self->path);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Validate digest_bits and a message of `bits` bits in `view`; 0 if fine. */
static int check_message(Py_buffer *view, long long bits, int digest_bits)
{
    if (digest_bits <= 0 || digest_bits % 8 != 0 || digest_bits > 1 << 20) {
        PyErr_Format(PyExc_ValueError,
                     "digest_bits must be a positive multiple of 8, got %d", digest_bits);
        return -1;
    }
    if (bits < 0) {
        PyErr_Format(PyExc_ValueError, "bits must be >= 0, got %lld", bits);
        return -1;
    }
    if ((unsigned long long)bits > 8ULL * (unsigned long long)view->len) {
        PyErr_Format(PyExc_ValueError,
                     "bits=%lld is longer than the data: %zd bytes hold at most %lld bits",
                     bits, view->len, 8LL * (long long)view->len);
        return -1;
    }
    return 0;
}

static PyObject *Library_hash(LibraryObject *self, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"digest_bits", "data", "bits", NULL};
    int digest_bits, status;
    long long bits;
    Py_buffer view;
    PyObject *digest;

    if (self->lib.hash == NULL) {
        PyErr_SetString(LibraryError, "Library object is not open");
        return NULL;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "iy*L:hash", keywords,
                                     &digest_bits, &view, &bits))
        return NULL;
    if (check_message(&view, bits, digest_bits) != 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    digest = PyBytes_FromStringAndSize(NULL, digest_bits / 8);
    if (digest == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    status = self->lib.hash(digest_bits, (const unsigned char *)view.buf,
                            (unsigned long long)bits, (unsigned char *)PyBytes_AS_STRING(digest));
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    if (status != 0) {
        Py_DECREF(digest);
        PyErr_Format(HashError, "CryptHash of %U returned %d (digest_bits=%d, bits=%lld)",
                     self->path, status, digest_bits, bits);
        return NULL;
    }
    return digest;
}

/* The most timed (or warm-up) calls one time_calls accepts: 2**26 calls make a
 * 512 MiB cycles array, far beyond any plan, yet a typo cannot exhaust memory. */
#define MAX_CALLS ((Py_ssize_t)1 << 26)

static int check_calls(Py_ssize_t calls, Py_ssize_t warmup)
{
    if (calls < 1 || calls > MAX_CALLS) {
        PyErr_Format(PyExc_ValueError, "calls must be between 1 and %zd, got %zd",
                     MAX_CALLS, calls);
        return -1;
    }
    if (warmup < 0 || warmup > MAX_CALLS) {
        PyErr_Format(PyExc_ValueError, "warmup must be between 0 and %zd, got %zd",
                     MAX_CALLS, warmup);
        return -1;
    }
    return 0;
}

static void set_bench_error(LibraryObject *self, const bench_outcome *outcome,
                            Py_ssize_t calls, Py_ssize_t warmup, const bench_call *call)
{
    PyErr_Format(HashError,
                 "CryptHash of %U returned %d at %s call %zu of %zd "
                 "(digest_bits=%d, msg_len_bits=%llu)",
                 self->path, outcome->status, outcome->failed_in_warmup ? "warm-up" : "timed",
                 outcome->failed_call, outcome->failed_in_warmup ? warmup : calls,
                 call->digest_bits, call->msg_len_bits);
}

/* time_calls(digest_bits, message, calls, warmup=0) -> (cycles, total_ticks, total_ns) */
static PyObject *Library_time_calls(LibraryObject *self, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"digest_bits", "message", "calls", "warmup", NULL};
    Py_ssize_t calls, warmup = 0;
    npy_intp length;
    Py_buffer view;
    bench_call call;
    bench_outcome outcome;
    PyObject *cycles;
    int failed;

    if (self->lib.hash == NULL) {
        PyErr_SetString(LibraryError, "Library object is not open");
        return NULL;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "iy*n|n:time_calls", keywords,
                                     &call.digest_bits, &view, &calls, &warmup))
        return NULL;
    if (check_message(&view, 8LL * (long long)view.len, call.digest_bits) != 0
        || check_calls(calls, warmup) != 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    length = (npy_intp)calls;
    cycles = PyArray_SimpleNew(1, &length, NPY_UINT64);
    if (cycles == NULL) {
        PyBuffer_Release(&view);
        return NULL;
    }
    call.digest = PyMem_Malloc((size_t)call.digest_bits / 8);
    if (call.digest == NULL) {
        Py_DECREF(cycles);
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    call.hash = self->lib.hash;
    call.message = (const unsigned char *)view.buf;
    call.msg_len_bits = 8ULL * (unsigned long long)view.len;

    Py_BEGIN_ALLOW_THREADS
    failed = bench_time_calls(&call, (size_t)warmup, (size_t)calls,
                              (uint64_t *)PyArray_DATA((PyArrayObject *)cycles), &outcome);
    Py_END_ALLOW_THREADS

    PyMem_Free(call.digest);
    PyBuffer_Release(&view);
    if (failed) {
        set_bench_error(self, &outcome, calls, warmup, &call);
        Py_DECREF(cycles);
        return NULL;
    }
    return Py_BuildValue("(NKK)", cycles, (unsigned long long)outcome.total_ticks,
                         (unsigned long long)outcome.total_ns);
}

static PyMethodDef Library_methods[] = {
    {"hash", (PyCFunction)(void (*)(void))Library_hash, METH_VARARGS | METH_KEYWORDS,
     "hash(digest_bits, data, bits) -> bytes: one CryptHash call on a buffer, no copy."},
    {"time_calls", (PyCFunction)(void (*)(void))Library_time_calls,
     METH_VARARGS | METH_KEYWORDS,
     "time_calls(digest_bits, message, calls, warmup=0) -> (cycles, total_ticks, total_ns):\n"
     "warmup untimed calls, then calls timed ones on the whole message (GIL released).\n"
     "cycles is a uint64 array of counter ticks per call; total_ticks and total_ns\n"
     "span the whole timed loop (one counter and one CLOCK_MONOTONIC_RAW read)."},
    {NULL, NULL, 0, NULL},
};

static PyObject *Library_get_path(LibraryObject *self, void *closure)
{
    (void)closure;
    if (self->path == NULL)
        Py_RETURN_NONE;
    Py_INCREF(self->path);
    return self->path;
}

static PyGetSetDef Library_getset[] = {
    {"path", (getter)Library_get_path, NULL, "path of the loaded library", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LibraryType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ngcc._core.Library",
    .tp_basicsize = sizeof(LibraryObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Library(path): an ICCS instance library, loaded with dlopen.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Library_init,
    .tp_dealloc = (destructor)Library_dealloc,
    .tp_methods = Library_methods,
    .tp_getset = Library_getset,
};

/* ---------------------------------------------------------------- counter */

static PyObject *core_counter_calibrate(PyObject *module, PyObject *unused)
{
    counter_calibration calibration;
    int failed;

    (void)module;
    (void)unused;
    Py_BEGIN_ALLOW_THREADS
    failed = counter_calibrate(&calibration);
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_Format(PyExc_RuntimeError, "the %s counter did not advance while "
                     "CLOCK_MONOTONIC_RAW did: it cannot time anything", counter_name());
        return NULL;
    }
    return Py_BuildValue("{s:s,s:d,s:K,s:K}", "name", counter_name(),
                         "frequency_hz", calibration.frequency_hz,
                         "overhead_min", (unsigned long long)calibration.overhead_min,
                         "overhead_median", (unsigned long long)calibration.overhead_median);
}

static PyObject *core_counter_read(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    return PyLong_FromUnsignedLongLong(counter_start());
}

/* ----------------------------------------------------------------- module */

static PyMethodDef core_methods[] = {
    {"counter_calibrate", core_counter_calibrate, METH_NOARGS,
     "counter_calibrate() -> dict: measure the counter afresh (about 50 ms): name,\n"
     "frequency_hz against CLOCK_MONOTONIC_RAW, overhead_min and overhead_median\n"
     "(ticks of an empty timed region). Nothing is cached here."},
    {"counter_read", core_counter_read, METH_NOARGS,
     "counter_read() -> int: one serialised read of the counter, in ticks."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT, "ngcc._core",
    "The C core of ngcc: instance loading, hashing, timing and KAT generation.",
    -1, core_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__core(void)
{
    PyObject *module, *errors;

    import_array();
    errors = PyImport_ImportModule("ngcc._errors");
    if (errors == NULL)
        return NULL;
    LibraryError = PyObject_GetAttrString(errors, "LibraryError");
    HashError = PyObject_GetAttrString(errors, "HashError");
    Py_DECREF(errors);
    if (LibraryError == NULL || HashError == NULL)
        return NULL;
    if (PyType_Ready(&LibraryType) < 0)
        return NULL;
    module = PyModule_Create(&core_module);
    if (module == NULL)
        return NULL;
    if (PyModule_AddIntConstant(module, "MAX_CALLS", (long)MAX_CALLS) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    Py_INCREF(&LibraryType);
    if (PyModule_AddObject(module, "Library", (PyObject *)&LibraryType) < 0) {
        Py_DECREF(&LibraryType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
