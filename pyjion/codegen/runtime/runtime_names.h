// Runtime helpers for the name, attribute, import and cell opcodes
// (visit_names.cpp). They do what ceval.c does inline or in its static
// functions (import_name, import_from, import_all_from, format_exc_check_arg,
// format_exc_unbound, _PyDict_LoadGlobal), which an extension cannot link to,
// built only from functions libpython exports.
//
// Conventions: a helper returning PyObject* returns a new reference, or NULL
// with an exception set; one returning int returns 0, or -1 with an exception
// set. "steals" marks arguments whose reference the helper releases, on
// success and on failure alike.
#pragma once

#include "runtime/inline_cache.h"

#include "cpython/frame_layout.h"

namespace pyjion::rtn {

// LOAD_GLOBAL: globals, then builtins (dict fast path, mapping slow path).
PyObject *pyj_load_global(_PyInterpreterFrame *frame, PyObject *name);
PyObject *pyj_load_global_cached(_PyInterpreterFrame *frame, PyObject *name, GlobalCache *cache);
// LOAD_NAME: locals (any mapping), then globals, then builtins.
PyObject *pyj_load_name(_PyInterpreterFrame *frame, PyObject *name);
// STORE_NAME (steals value) / DELETE_NAME.
int pyj_store_name(_PyInterpreterFrame *frame, PyObject *name, PyObject *value);
int pyj_delete_name(_PyInterpreterFrame *frame, PyObject *name);
// STORE_GLOBAL (steals value) / DELETE_GLOBAL.
int pyj_store_global(_PyInterpreterFrame *frame, PyObject *name, PyObject *value);
int pyj_delete_global(_PyInterpreterFrame *frame, PyObject *name);

// DELETE_ATTR (steals owner). STORE_ATTR and LOAD_ATTR are in attr_cache.h.
int pyj_delete_attr(PyObject *owner, PyObject *name);

// IMPORT_NAME (steals fromlist and level), honouring a replaced builtins.__import__.
PyObject *pyj_import_name(PyThreadState *ts, _PyInterpreterFrame *frame, PyObject *name, PyObject *fromlist,
                          PyObject *level);
// IMPORT_FROM: the attribute, or the submodule from sys.modules, or ImportError.
PyObject *pyj_import_from(PyObject *from, PyObject *name);
// IMPORT_STAR (steals from).
int pyj_import_star(_PyInterpreterFrame *frame, PyObject *from);

PyObject *pyj_load_build_class(_PyInterpreterFrame *frame);
int pyj_setup_annotations(_PyInterpreterFrame *frame);
// PRINT_EXPR (steals value): sys.displayhook(value).
int pyj_print_expr(PyThreadState *ts, PyObject *value);

// LOAD_CLASSDEREF: the class namespace first, then the cell.
PyObject *pyj_load_classderef(_PyInterpreterFrame *frame, int index);
// The error of LOAD_DEREF/DELETE_DEREF/LOAD_CLASSDEREF on an empty cell:
// UnboundLocalError for a cell variable, NameError for a free variable.
void pyj_unbound_deref(_PyInterpreterFrame *frame, int index);
// MAKE_CELL: wraps local `index` (possibly NULL) in a new cell; -1 on failure.
int pyj_make_cell(_PyInterpreterFrame *frame, int index);

}  // namespace pyjion::rtn
