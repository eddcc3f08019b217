// Runtime helpers of the object opcodes (visit_objects.cpp): calls
// (runtime_calls.cpp) and containers, unpacking, subscripts, unary operators,
// iteration, formatting and pattern matching (runtime_objects.cpp).
//
// Unless a helper's comment says otherwise it CONSUMES the stack values it is
// given (one reference each, on success and on failure alike) and returns a new
// reference, or NULL with an exception set; the visitor then models the inputs
// as gone and takes the error exit at the depth that is left. The helpers are
// written from CPython 3.11's documented behaviour and its exported C API:
// ceval.c's own statics (unpack_iterable, match_class, match_keys,
// format_kwargs_error, ...) are not exported by libpython.
#pragma once

#include <Python.h>
#include "cpython/object_layout.h"   // _PyInterpreterFrame

namespace pyjion {

struct CallCache;

namespace objrt {

// ---- calls (runtime_calls.cpp) ----
void precall_unpack_method(PyObject **base);
PyObject *call(PyObject **base, int oparg_warm, PyObject *kwnames, _PyInterpreterFrame *frame,
               _Py_CODEUNIT *py_call_instr, PyThreadState *ts);
PyObject *call_at_site(PyObject **base, int oparg_warm, CallCache *site, _PyInterpreterFrame *frame,
                       _Py_CODEUNIT *py_call_instr, PyThreadState *ts);
void format_kwargs_error(PyObject *func, PyObject *kwargs);
PyObject *call_function_ex(PyObject **base, int has_kwargs);
PyObject *make_function(_PyInterpreterFrame *frame, PyObject **base, int oparg);

// ---- containers, unpacking, subscripts, unary, iteration, formatting,
// ---- pattern matching (runtime_objects.cpp) ----
PyObject *build_tuple(PyObject **items, int n);
PyObject *build_list(PyObject **items, int n);
PyObject *build_set(PyObject **items, int n);
PyObject *build_map(PyObject **items, int n);
PyObject *build_const_key_map(PyObject **items, int n);
PyObject *build_string(PyObject **items, int n);
PyObject *build_slice(PyObject *start, PyObject *stop, PyObject *step);
int list_append(PyObject *list, PyObject *v);
int set_add(PyObject *set, PyObject *v);
int map_add(PyObject *map, PyObject *key, PyObject *value);
int list_extend(PyObject *list, PyObject *iterable);
int set_update(PyObject *set, PyObject *iterable);
int dict_update(PyObject *dict, PyObject *update);
int dict_merge(PyObject *dict, PyObject *update, PyObject *func);
PyObject *list_to_tuple(PyObject *list);
int unpack(PyObject *seq, int before, int after, PyObject **top);
int store_subscr(PyObject *container, PyObject *sub, PyObject *v);
int delete_subscr(PyObject *container, PyObject *sub);
PyObject *unary_not(PyObject *v);
PyObject *contains_op(PyObject *left, PyObject *right, int invert);
int for_iter_ended();
PyObject *format_value(PyObject *value, PyObject *spec, int conversion);
PyObject *get_len(PyObject *obj);
PyObject *match_keys(PyObject *map, PyObject *keys);
PyObject *match_class(PyObject *subject, PyObject *type, PyObject *names, int nargs);

template <PyObject *(*F)(PyObject *)>
PyObject *consume1(PyObject *v)
{
    PyObject *r = F(v);
    Py_DECREF(v);
    return r;
}

}  // namespace objrt
}  // namespace pyjion
