// The runtime helpers of CPython 3.13's own visitors (py313/visit_*.cpp) and
// frame bookkeeping, listed in py313/helpers.def. Each does what its opcode
// does in Python/bytecodes.c, on the value stack: `sp` is one past the top
// value; "consumes" means the helper releases those references (on error
// too, unless said otherwise).
#pragma once

#include "py313/frame_runtime.h"

namespace pyjion::rt313 {

// TO_BOOL: the truth of `value` (consumed) as True/False; NULL on error.
PyObject *to_bool(PyObject *value);

// COMPARE_OP's flag 16 on a result that is not a bool: its truth (consumed).
PyObject *result_to_bool(PyObject *value);

// LOAD_GLOBAL: globals, then builtins (new reference); NULL with NameError.
PyObject *load_global(PyThreadState *ts, _PyInterpreterFrame *frame, PyObject *name);

// LOAD_ATTR: [owner] -> [attr] or, with `method`, [meth, self] (an unbound
// method found on the type) or [attr, NULL]. 0, or -1 with the owner released
// and its slot cleared.
int load_attr(PyObject **sp, PyObject *name, int method);

// STORE_ATTR: [value, owner] -> []; both consumed. 0 or -1.
int store_attr(PyObject **sp, PyObject *name);

// load_attr / store_attr at `site` (the instruction in co_code_adaptive):
// the interpreter's specialised form of the site where its guards hold
// (py313/attr_sites.h), the generic operation otherwise.
int load_attr_site(PyObject **sp, PyObject *name, int method, const _Py_CODEUNIT *site);
int store_attr_site(PyObject **sp, PyObject *name, const _Py_CODEUNIT *site);

// CALL / CALL_KW: base = [callable, self_or_null, args...] (oparg counts the
// args after self_or_null); kwnames (consumed) names the last ones, or NULL.
// Everything consumed; the result or NULL.
PyObject *call(PyThreadState *ts, PyObject **base, int oparg, PyObject *kwnames);

// CALL where the interpreter specialised the site as CALL_LEN (oparg 1) or
// CALL_ISINSTANCE (oparg 2): the builtin's work without the call's dispatch
// where base[0] is still the builtin `len` / `isinstance` and there is no
// self; anything else is call()'s. Everything consumed; the result or NULL.
PyObject *call_len(PyThreadState *ts, PyObject **base);
PyObject *call_isinstance(PyThreadState *ts, PyObject **base);

// LOAD_ATTR where the interpreter specialised the site as a property whose
// getter is the Python function `fget` (LOAD_ATTR_PROPERTY), the owner's type
// version checked by machine code: [owner] -> [fget(owner)], the getter
// called as a Python call (compiled or interpreted), the owner consumed.
// 0, or -1 with the owner released.
int load_property(PyThreadState *ts, PyObject **sp, PyObject *fget);

// CALL where the interpreter specialised the site as CALL_ALLOC_AND_ENTER_INIT
// for a class of version `type_version`: the instance allocated and its
// Python __init__ called as a Python call, as the interpreter does, where
// the callable is still that class (with NULL above it); call() otherwise.
PyObject *call_alloc_init(PyThreadState *ts, PyObject **base, int oparg, uint32_t type_version);

// CALL_FUNCTION_EX: base = [func, NULL, callargs(, kwargs)]; consumed.
PyObject *call_function_ex(PyObject **base, int has_kwargs);

// MAKE_FUNCTION: a function of `code` (consumed) in the frame's globals.
PyObject *make_function(_PyInterpreterFrame *frame, PyObject *code);

// CALL_INTRINSIC_1/2: the interpreter's own intrinsic; operands consumed.
PyObject *intrinsic1(PyThreadState *ts, PyObject *value, int oparg);
PyObject *intrinsic2(PyThreadState *ts, PyObject *value2, PyObject *value1, int oparg);

// BINARY_SLICE: container[start:stop], all consumed.
PyObject *binary_slice(PyObject *container, PyObject *start, PyObject *stop);
// STORE_SLICE: [v, container, start, stop] -> []; all consumed. 0 or -1.
int store_slice(PyObject **sp);

// CONVERT_VALUE (str/repr/ascii), FORMAT_SIMPLE, FORMAT_WITH_SPEC; consumed.
PyObject *convert_value(PyObject *value, int oparg);
PyObject *format_simple(PyObject *value);
PyObject *format_with_spec(PyObject *value, PyObject *spec);

// LOAD_FROM_DICT_OR_GLOBALS / _OR_DEREF: the name in `dict`, else the global
// (or the cell's value). The dict is consumed on success only (on error it
// stays on the stack for the unwinder).
PyObject *load_from_dict_or_globals(PyThreadState *ts, _PyInterpreterFrame *frame, PyObject *dict, PyObject *name);
PyObject *load_from_dict_or_deref(PyThreadState *ts, _PyInterpreterFrame *frame, PyObject *dict, int oparg);

// LOAD_LOCALS: the frame's locals (new reference); NULL with SystemError.
PyObject *load_locals(_PyInterpreterFrame *frame);

// EXIT_INIT_CHECK: `value` (consumed) must be None. 0 or -1.
int exit_init_check(PyObject *value);

// LOAD_SUPER_ATTR: [super, class, self] consumed -> sp[-3] the attribute
// and, for a method (oparg & 1), sp[-2] self or NULL; -1 on error.
int load_super_attr(PyObject **sp, PyObject *name, int oparg);

// SEND: [receiver, value] -> [receiver, result]: 0 yielded, 1 returned (jump);
// -1 on error with both left on the stack.
int send(PyThreadState *ts, PyObject **sp);

// CLEANUP_THROW: [sub_iter, last_sent, exc] -> [None, value] (0) when exc is
// a StopIteration; else exc is raised again (1) and the stack is left as is.
int cleanup_throw(PyObject **sp);

}  // namespace pyjion::rt313
