// Binding a call's arguments to the parameters of a directly called
// function's new frame, as CPython 3.11's initialize_locals (Python/ceval.c)
// does: positional arguments, surplus ones into *args, keywords matched by
// name, the rest into **kwargs, then __defaults__ and __kwdefaults__. The
// frame takes the caller's references, as the interpreter's CALL does.
//
// It is split in two so that a call that would raise changes nothing: step 1
// only looks (no reference changes, no allocation, no Python code); a call
// it refuses goes to the generic path (PyObject_Vectorcall), which raises
// CPython's own TypeError. Step 2 moves the references in; it can fail only
// for lack of memory.
#pragma once

#include "cpython/frame_layout.h"

namespace pyjion::direct {

// Step 1. `locals` (the new frame's co_nlocalsplus slots) must be all NULL;
// args[0..nargs) are the positional arguments, then one value per name in
// `kwnames` (NULL: none). Places the positional arguments that fill
// parameters and the keyword arguments that name parameters into `locals`,
// BORROWED, and checks that the rest will bind: surplus positional arguments
// only with *args, unknown names only with **kwargs, no parameter given twice
// (nor a positional-only one by name), a default for every parameter left.
// Returns how many keyword arguments go into **kwargs, or -1 when binding
// would raise; then the caller must set `locals` back to NULL.
Py_ssize_t place_arguments(PyObject **locals, PyFunctionObject *func, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames);

// Step 2, after place_arguments returned `to_kwargs` >= 0: from now on the
// frame owns every argument reference. Builds *args and **kwargs and fills
// in the defaults. Returns false with an exception set (MemoryError) when
// that fails: each argument reference is then either in `locals` or already
// released, so clearing the frame releases the rest.
bool complete_binding(PyObject **locals, PyFunctionObject *func, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames, Py_ssize_t to_kwargs);

// After a call place_arguments refused has raised its TypeError (in the
// generic path, which left the references with the caller): releases `func`
// and the arguments in the order the interpreter's failed CALL does (3.11's
// initialize_locals drops some while binding, then the frame's clear releases
// the parameters in slot order, *args's items last to first, **kwargs's
// values, and the function), which __del__ methods observe.
void release_unbound_call(PyObject *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

}  // namespace pyjion::direct
