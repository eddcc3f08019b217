/* A probe of CPython 3.13 (tests/test_cpython313_entry.py), not part of
   pyjion: how the 3.13 layer will enter compiled code without a PEP 523
   hook (docs/cpython313.md). route(f) gives f a vectorcall that counts its
   calls and runs each in the interpreter with exported functions only. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

struct _PyInterpreterFrame;
PyAPI_FUNC(struct _PyInterpreterFrame *) _PyEvalFramePushAndInit(
    PyThreadState *, PyFunctionObject *, PyObject *, PyObject *const *, size_t, PyObject *);

static Py_ssize_t calls;

/* The interpreter for one call, as _PyEval_Vector does it with exported
   functions only: the push consumes references to the function and every
   argument; the interpreter clears and pops the frame when it returns. */
static PyObject *
counting_vectorcall(PyObject *func, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    calls++;
    PyThreadState *ts = PyThreadState_Get();
    size_t argc = PyVectorcall_NARGS(nargsf);
    size_t total = argc + (kwnames ? (size_t)PyTuple_GET_SIZE(kwnames) : 0);
    Py_INCREF(func);
    for (size_t i = 0; i < total; i++) Py_INCREF(args[i]);
    struct _PyInterpreterFrame *frame = _PyEvalFramePushAndInit(ts, (PyFunctionObject *)func, NULL, args, argc, kwnames);
    if (frame == NULL) return NULL;
    return _PyEval_EvalFrameDefault(ts, frame, 0);
}

static PyObject *
route(PyObject *self, PyObject *func)
{
    if (!PyFunction_Check(func)) { PyErr_SetString(PyExc_TypeError, "a function"); return NULL; }
    PyFunction_SetVectorcall((PyFunctionObject *)func, counting_vectorcall);
    Py_RETURN_NONE;
}

static PyObject *
count(PyObject *self, PyObject *unused) { return PyLong_FromSsize_t(calls); }

static PyMethodDef methods[] = {
    {"route", route, METH_O, NULL}, {"count", count, METH_NOARGS, NULL}, {NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "vectorcall_entry", NULL, -1, methods};
PyMODINIT_FUNC PyInit_vectorcall_entry(void) { return PyModule_Create(&mod); }
