/* The interpreter-state field the import helper reads (runtime_names.cpp).
 * pycore_interp.h uses C11 atomics, which C++ cannot include, so this
 * accessor is compiled as C. */
#include <Python.h>
#define Py_BUILD_CORE 1
#include "internal/pycore_interp.h"

/* The interpreter's own __import__ (builtins.__import__ as first installed):
 * IMPORT_NAME skips calling it when builtins.__import__ is still this object. */
PyObject *pyj_interp_import_func(PyThreadState *ts)
{
#if PY_VERSION_HEX >= 0x030C0000
    return ts->interp->imports.import_func;
#else
    return ts->interp->import_func;
#endif
}
