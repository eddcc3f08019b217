// CPython 3.13 functions and data that are exported (PyAPI) but declared only
// in internal headers C++ cannot include (their atomics): declared here with
// the same signatures, for the runtime.
#pragma once

#include "cpython/object_layout.h"

extern "C" {
PyAPI_FUNC(void) _PyEval_FormatExcCheckArg(PyThreadState *tstate, PyObject *exc, const char *format_str, PyObject *obj);
PyAPI_FUNC(void) _PyEval_FormatExcUnbound(PyThreadState *tstate, PyCodeObject *co, int oparg);
PyAPI_FUNC(void) _PyEval_FormatKwargsError(PyThreadState *tstate, PyObject *func, PyObject *kwargs);
PyAPI_FUNC(int) _PyEval_UnpackIterable(PyThreadState *tstate, PyObject *v, int argcnt, int argcntafter, PyObject **sp);
PyAPI_FUNC(PyObject *) _PyEval_MatchClass(PyThreadState *tstate, PyObject *subject, PyObject *type, Py_ssize_t nargs,
                                          PyObject *kwargs);
PyAPI_FUNC(PyObject *) _PyEval_MatchKeys(PyThreadState *tstate, PyObject *map, PyObject *keys);
PyAPI_FUNC(int) _PyEval_CheckExceptStarTypeValid(PyThreadState *tstate, PyObject *right);
PyAPI_FUNC(int) _PyEval_CheckExceptTypeValid(PyThreadState *tstate, PyObject *right);
PyAPI_FUNC(int) _PyEval_ExceptionGroupMatch(PyObject *exc_value, PyObject *match_type, PyObject **match,
                                            PyObject **rest);
PyAPI_FUNC(void) _PyEval_FormatAwaitableError(PyThreadState *tstate, PyTypeObject *type, int oparg);
PyAPI_FUNC(PyObject *) _PyGen_yf(PyGenObject *);
PyAPI_FUNC(PyObject *) _PyErr_FormatFromCause(PyObject *exception, const char *format, ...);
PyAPI_FUNC(int) _PyGen_SetStopIterationValue(PyObject *);
PyAPI_FUNC(int) _PyGen_FetchStopIterationValue(PyObject **);
PyAPI_FUNC(PyObject *) _PyList_Extend(PyListObject *, PyObject *);
PyAPI_FUNC(int) _PySet_Update(PyObject *set, PyObject *iterable);
PyAPI_FUNC(int) _PyDict_MergeEx(PyObject *mp, PyObject *other, int override);
PyAPI_FUNC(PyObject *) _PyUnicode_JoinArray(PyObject *separator, PyObject *const *items, Py_ssize_t seqlen);
PyAPI_FUNC(int) _PyObject_GetMethod(PyObject *obj, PyObject *name, PyObject **method);
PyAPI_FUNC(PyObject *) _Py_CheckFunctionResult(PyThreadState *tstate, PyObject *callable, PyObject *result,
                                               const char *where);
PyAPI_FUNC(PyObject *) _PySys_GetAttr(PyThreadState *tstate, PyObject *name);
PyAPI_FUNC(void) _PyErr_SetKeyError(PyObject *);
PyAPI_FUNC(void) _PyFunction_SetVersion(PyFunctionObject *func, uint32_t version);
PyAPI_FUNC(int) _Py_HandlePending(PyThreadState *tstate);
PyAPI_FUNC(int) _PyUnicode_Equal(PyObject *, PyObject *);
PyAPI_FUNC(void) _PyEval_MonitorRaise(PyThreadState *tstate, _PyInterpreterFrame *frame, _Py_CODEUNIT *instr);
PyAPI_FUNC(PyObject *) _PySuper_Lookup(PyTypeObject *su_type, PyObject *su_obj, PyObject *name, int *meth_found);

// CALL_INTRINSIC_1/2's tables and CONVERT_VALUE's (internal/pycore_intrinsics.h, pycore_ceval.h).
typedef PyObject *(*pyj_intrinsic_func1)(PyThreadState *tstate, PyObject *value);
typedef PyObject *(*pyj_intrinsic_func2)(PyThreadState *tstate, PyObject *value1, PyObject *value2);
typedef struct {
    pyj_intrinsic_func1 func;
    const char *name;
} pyj_intrinsic_func1_info;
typedef struct {
    pyj_intrinsic_func2 func;
    const char *name;
} pyj_intrinsic_func2_info;
PyAPI_DATA(const pyj_intrinsic_func1_info) _PyIntrinsics_UnaryFunctions[];
PyAPI_DATA(const pyj_intrinsic_func2_info) _PyIntrinsics_BinaryFunctions[];
typedef PyObject *(*pyj_conversion_func)(PyObject *);
PyAPI_DATA(const pyj_conversion_func) _PyEval_ConversionFuncs[];
}

namespace pyjion::py313 {
// The highest valid operands of CALL_INTRINSIC_1/2 and CONVERT_VALUE in 3.13.
constexpr int kMaxIntrinsic1 = 11;
constexpr int kMaxIntrinsic2 = 5;
constexpr int kMaxConversion = 3;
}  // namespace pyjion::py313
