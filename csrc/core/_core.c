/* ngcc._core: the only C <-> Python edge.
 *
 * This file parses arguments, takes buffers, releases the GIL and builds the
 * results; the work itself is in loader.c, timer.c, bench.c, kat.c and the
 * plain-C DRNG in algorithms/drng/.
 * Errors are raised as the exception classes of ngcc.base.errors.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <numpy/arrayobject.h>

#include "bench.h"
#include "cpu_features.h"
#include "sm3_drng.h"
#include "kat.h"
#include "loader.h"
#include "timer.h"

static PyObject *LibraryError;  /* ngcc.base.errors.LibraryError */
static PyObject *HashError;     /* ngcc.base.errors.HashError */

/* ---------------------------------------------------------------- Library */

typedef struct {
    PyObject_HEAD
    instance_library lib;
    PyObject *path;  /* str */
    int busy;        /* calls running without the GIL: the library must stay loaded */
} LibraryObject;

static int Library_init(LibraryObject *self, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"path", NULL};
    PyObject *path_bytes = NULL;
    char error[1024];

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&:Library", keywords,
                                     PyUnicode_FSConverter, &path_bytes))
        return -1;
    if (self->busy) {  /* dlclose under a running CryptHash would crash the process */
        PyErr_SetString(PyExc_RuntimeError,
                        "Library is in use by a running call (another thread, or the "
                        "progress callback of kat_generate); cannot reopen it");
        Py_DECREF(path_bytes);
        return -1;
    }
    library_close(&self->lib);
    Py_CLEAR(self->path);
    if (library_open(&self->lib, PyBytes_AS_STRING(path_bytes), error, sizeof error) != 0) {
        PyErr_SetString(LibraryError, error);
        Py_DECREF(path_bytes);
        return -1;
    }
    self->path = PyUnicode_DecodeFSDefault(PyBytes_AS_STRING(path_bytes));
    Py_DECREF(path_bytes);
    if (self->path == NULL) {  /* error messages name the path: not open without one */
        library_close(&self->lib);
        return -1;
    }
    return 0;
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
    self->busy++;
    Py_BEGIN_ALLOW_THREADS
    status = self->lib.hash(digest_bits, (const unsigned char *)view.buf,
                            (unsigned long long)bits, (unsigned char *)PyBytes_AS_STRING(digest));
    Py_END_ALLOW_THREADS
    self->busy--;
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
    char text[1536];
    PyObject *path = PyUnicode_EncodeFSDefault(self->path);

    if (path == NULL)
        return;
    /* The driver (csrc/driver/mode_trial.c) words a failed loop with the same helper. */
    bench_failure_text(text, sizeof text, PyBytes_AS_STRING(path), outcome, (size_t)calls,
                       (size_t)warmup, call);
    Py_DECREF(path);
    PyErr_SetString(HashError, text);
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
    /* numpy's C API is loaded on the first timed call, not when the module loads: the
     * command line starts (and lists instances) without importing numpy. */
    if (PyArray_API == NULL && _import_array() < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
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
    call.counter = NULL;  /* the machine's own counter */
    call.message = (const unsigned char *)view.buf;
    call.msg_len_bits = 8ULL * (unsigned long long)view.len;

    self->busy++;
    Py_BEGIN_ALLOW_THREADS
    failed = bench_time_calls(&call, (size_t)warmup, (size_t)calls,
                              (uint64_t *)PyArray_DATA((PyArrayObject *)cycles), &outcome);
    Py_END_ALLOW_THREADS
    self->busy--;

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
    return Py_BuildValue("{s:s,s:s,s:d,s:d,s:K,s:K,s:K}", "name", counter_name(),
                         "unit", counter_unit(), "nominal_hz", counter_nominal_hz(),
                         "frequency_hz", calibration.frequency_hz,
                         "overhead_min", (unsigned long long)calibration.overhead_min,
                         "overhead_median", (unsigned long long)calibration.overhead_median,
                         "resolution", (unsigned long long)calibration.resolution);
}

static PyObject *core_counter_read(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    return PyLong_FromUnsignedLongLong(counter_start());
}

/* ------------------------------------------------------------ KAT, DRNG */
/* Drng (for tests and benchmarks) and kat_generate (for ngcc.kat): algorithms/drng/, kat.c. */

static PyObject *KatError;        /* ngcc.base.errors.KatError */
static PyObject *KatMemoryError;  /* ngcc.base.errors.KatMemoryError */

typedef struct {
    PyObject_HEAD
    sm3_drng drng;
    int busy;  /* a generate call runs without the GIL: refuse a second one */
} DrngObject;

static int Drng_init(DrngObject *self, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"seed", NULL};
    Py_buffer seed;

    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Drng is generating in another thread");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*:Drng", keywords, &seed))
        return -1;
    drng_init(&self->drng, (const unsigned char *)seed.buf, (size_t)seed.len);
    PyBuffer_Release(&seed);
    return 0;
}

/* Generate bits bits into out (GIL released); -1 with an exception set if busy. */
static int drng_fill(DrngObject *self, unsigned long long bits, unsigned char *out)
{
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "Drng is generating in another thread");
        return -1;
    }
    self->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    drng_generate(&self->drng, bits, out, NULL, NULL);
    Py_END_ALLOW_THREADS
    self->busy = 0;
    return 0;
}

static PyObject *Drng_generate(DrngObject *self, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"bits", NULL};
    long long bits;
    PyObject *out;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "L:generate", keywords, &bits))
        return NULL;
    if (bits < 0) {
        PyErr_Format(PyExc_ValueError, "bits must be >= 0, got %lld", bits);
        return NULL;
    }
    out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(bits / 8 + (bits % 8 != 0)));
    if (out == NULL)
        return NULL;
    if (drng_fill(self, (unsigned long long)bits, (unsigned char *)PyBytes_AS_STRING(out)) != 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}

static PyObject *Drng_generate_into(DrngObject *self, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"buffer", "bits", NULL};
    long long bits;
    Py_buffer view;
    int failed;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "w*L:generate_into", keywords, &view, &bits))
        return NULL;
    if (bits < 0 || (unsigned long long)bits > 8ULL * (unsigned long long)view.len) {
        PyErr_Format(PyExc_ValueError, "bits must be from 0 to %lld (the buffer's %zd bytes), "
                     "got %lld", 8LL * (long long)view.len, view.len, bits);
        PyBuffer_Release(&view);
        return NULL;
    }
    failed = drng_fill(self, (unsigned long long)bits, (unsigned char *)view.buf);
    PyBuffer_Release(&view);
    if (failed)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Drng_get_state(DrngObject *self, void *closure)
{
    (void)closure;
    return Py_BuildValue("(y#y#y#)", self->drng.v, (Py_ssize_t)DRNG_SEED_BYTES,
                         self->drng.c, (Py_ssize_t)DRNG_SEED_BYTES,
                         self->drng.reseed_counter, (Py_ssize_t)DRNG_SEED_BYTES);
}

static PyMethodDef Drng_methods[] = {
    {"generate", (PyCFunction)(void (*)(void))Drng_generate, METH_VARARGS | METH_KEYWORDS,
     "generate(bits) -> bytes: the next ceil(bits/8) output bytes (unused low bits of a\n"
     "partial last byte zeroed), then the state update. A 0-bit call only updates."},
    {"generate_into", (PyCFunction)(void (*)(void))Drng_generate_into,
     METH_VARARGS | METH_KEYWORDS,
     "generate_into(buffer, bits) -> None: like generate, writing ceil(bits/8) bytes\n"
     "into a writable buffer and leaving the bytes after them untouched."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Drng_getset[] = {
    {"state", (getter)Drng_get_state, NULL,
     "(V, C, reseed_counter): the state, three 55-byte big-endian numbers", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject DrngType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "ngcc._core.Drng",
    .tp_basicsize = sizeof(DrngObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Drng(seed): the ICCS SM3 DRNG that makes the KAT messages (spec/drng.md).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Drng_init,
    .tp_methods = Drng_methods,
    .tp_getset = Drng_getset,
};

/* The progress hook of kat_generate: takes the GIL back for a moment to let
 * Ctrl-C through and to call the Python callback; an exception stops generation. */
typedef struct {
    PyThreadState *thread;
    PyObject *callback;  /* callable(done, total) or NULL */
} kat_progress_hook;

static int kat_progress_to_python(void *ctx, uint64_t done, uint64_t total)
{
    kat_progress_hook *hook = ctx;
    int stop = 0;

    PyEval_RestoreThread(hook->thread);
    if (PyErr_CheckSignals() < 0) {
        stop = 1;
    } else if (hook->callback != NULL) {
        PyObject *result = PyObject_CallFunction(hook->callback, "KK",
                                                 (unsigned long long)done,
                                                 (unsigned long long)total);
        stop = result == NULL;
        Py_XDECREF(result);
    }
    hook->thread = PyEval_SaveThread();
    return stop;
}

static int kat_kind_from_tag(const char *tag, kat_file_kind *kind)
{
    static const kat_file_kind kinds[] = {KAT_FILE_2_12, KAT_FILE_2_23, KAT_FILE_2_33,
                                          KAT_FILE_LOOP};
    size_t i;

    for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(tag, kat_file_tag(kinds[i])) == 0) {
            *kind = kinds[i];
            return 0;
        }
    PyErr_Format(PyExc_ValueError, "unknown KAT file '%s': expected '2_12', '2_23', '2_33' "
                 "or 'Loop'", tag);
    return -1;
}

/* Turn a kat_write_file status into the matching exception. */
static void set_kat_error(int status, const char *message)
{
    if (PyErr_Occurred())  /* raised by the progress callback or Ctrl-C */
        return;
    switch (status) {
    case KAT_ERR_MEMORY: PyErr_SetString(KatMemoryError, message); break;
    case KAT_ERR_HASH: PyErr_SetString(HashError, message); break;
    case KAT_ERR_FILE: PyErr_SetString(PyExc_OSError, message); break;
    case KAT_ERR_NAME:
    case KAT_ERR_DIGEST_BITS: PyErr_SetString(PyExc_ValueError, message); break;
    default: PyErr_SetString(KatError, message); break;
    }
}

static PyObject *core_kat_generate(PyObject *module, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"library", "instance", "digest_bits", "kind", "path",
                               "progress", "blank_digests", NULL};
    LibraryObject *library;
    const char *instance, *tag;
    PyObject *path_bytes = NULL, *callback = Py_None;
    int digest_bits, blank_digests = 0, status;
    kat_file_kind kind;
    kat_progress_hook hook = {NULL, NULL};
    kat_generator gen;
    char error[1024] = "";

    (void)module;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!sisO&|$Op:kat_generate", keywords,
                                     &LibraryType, &library, &instance, &digest_bits, &tag,
                                     PyUnicode_FSConverter, &path_bytes, &callback,
                                     &blank_digests))
        return NULL;
    if (library->lib.hash == NULL || kat_kind_from_tag(tag, &kind) != 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(LibraryError, "Library object is not open");
        Py_DECREF(path_bytes);
        return NULL;
    }
    if (callback != Py_None && !PyCallable_Check(callback)) {
        PyErr_SetString(PyExc_TypeError, "progress must be callable(done, total) or None");
        Py_DECREF(path_bytes);
        return NULL;
    }
    hook.callback = callback == Py_None ? NULL : callback;
    memset(&gen, 0, sizeof gen);  /* no guarded buffers: the generator's own */
    gen.hash = library->lib.hash;
    gen.instance = instance;
    gen.digest_bits = digest_bits;
    gen.blank_digests = blank_digests;
    gen.progress = kat_progress_to_python;
    gen.progress_ctx = &hook;
    library->busy++;  /* the progress callback runs Python: it must not reopen the library */
    hook.thread = PyEval_SaveThread();
    status = kat_write_file(&gen, kind, PyBytes_AS_STRING(path_bytes), error, sizeof error);
    PyEval_RestoreThread(hook.thread);
    library->busy--;
    Py_DECREF(path_bytes);
    if (status != KAT_OK) {
        set_kat_error(status, error);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef kat_methods[] = {
    {"kat_generate", (PyCFunction)(void (*)(void))core_kat_generate,
     METH_VARARGS | METH_KEYWORDS,
     "kat_generate(library, instance, digest_bits, kind, path, *, progress=None,\n"
     "             blank_digests=False) -> None\n"
     "Write the official KAT file `kind` ('2_12', '2_23', '2_33', 'Loop') for an\n"
     "instance library to path, byte for byte as the ICCS generator does. progress is\n"
     "called as progress(done, total) now and then; an exception it raises stops the\n"
     "generation. Raises KatMemoryError, HashError (CryptHash returned nonzero),\n"
     "OSError, ValueError (instance name, digest_bits). The file may be left\n"
     "incomplete on error."},
    {NULL, NULL, 0, NULL},
};

/* Add Drng, kat_generate and the KAT exceptions to the module; -1 on error. */
static int add_kat_bindings(PyObject *module)
{
    PyObject *errors = PyImport_ImportModule("ngcc.base.errors");

    if (errors == NULL)
        return -1;
    KatError = PyObject_GetAttrString(errors, "KatError");
    KatMemoryError = PyObject_GetAttrString(errors, "KatMemoryError");
    Py_DECREF(errors);
    if (KatError == NULL || KatMemoryError == NULL || PyType_Ready(&DrngType) < 0)
        return -1;
    if (PyModule_AddFunctions(module, kat_methods) < 0)
        return -1;
    Py_INCREF(&DrngType);
    if (PyModule_AddObject(module, "Drng", (PyObject *)&DrngType) < 0) {
        Py_DECREF(&DrngType);
        return -1;
    }
    return 0;
}

/* ----------------------------------------------------------- cpu_features */

/* cpu_features() -> frozenset[str]: the known feature names this CPU has. */
static PyObject *core_cpu_features(PyObject *self, PyObject *unused)
{
    PyObject *names = PySet_New(NULL), *result;
    const char *name;
    size_t i;

    (void)self;
    (void)unused;
    if (names == NULL)
        return NULL;
    for (i = 0; (name = ngcc_cpu_feature_name(i)) != NULL; i++) {
        PyObject *text;
        if (!ngcc_cpu_has(name))
            continue;
        text = PyUnicode_FromString(name);
        if (text == NULL || PySet_Add(names, text) < 0) {
            Py_XDECREF(text);
            Py_DECREF(names);
            return NULL;
        }
        Py_DECREF(text);
    }
    result = PyFrozenSet_New(names);
    Py_DECREF(names);
    return result;
}

/* ----------------------------------------------------------------- module */

static PyMethodDef core_methods[] = {
    {"counter_calibrate", core_counter_calibrate, METH_NOARGS,
     "counter_calibrate() -> dict: measure the counter afresh (about 50 ms): name,\n"
     "unit (tsc-ticks, timer-ticks or ns), nominal_hz (cntfrq_el0 on AArch64, else 0),\n"
     "frequency_hz against CLOCK_MONOTONIC_RAW, overhead_min and overhead_median\n"
     "(ticks of an empty timed region). Nothing is cached here."},
    {"counter_read", core_counter_read, METH_NOARGS,
     "counter_read() -> int: one serialised read of the counter, in ticks."},
    {"cpu_features", core_cpu_features, METH_NOARGS,
     "cpu_features() -> frozenset[str]: the instruction-set extensions this CPU and OS\n"
     "offer, by Linux /proc/cpuinfo flag names (cpuid; csrc/cpu_features.c)."},
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

    errors = PyImport_ImportModule("ngcc.base.errors");
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
    if (PyModule_AddIntConstant(module, "MAX_CALLS", (long)MAX_CALLS) < 0
        || PyModule_AddIntConstant(module, "COUNTER_FREQUENCY_INTERVAL_NS",
                                   COUNTER_FREQUENCY_INTERVAL_NS) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    Py_INCREF(&LibraryType);
    if (PyModule_AddObject(module, "Library", (PyObject *)&LibraryType) < 0) {
        Py_DECREF(&LibraryType);
        Py_DECREF(module);
        return NULL;
    }
    if (add_kat_bindings(module) < 0) {  /* KAT, DRNG section */
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
