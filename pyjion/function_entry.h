/* Entering compiled code without the PEP 523 hook (CPython 3.12+; the
 * layer's PYJ_FUNCTION_ENTRY). From 3.12 on, the interpreter calls a
 * function through its own vectorcall whenever that is not CPython's, and
 * otherwise runs the call inside its own loop, inlined and specialised,
 * which it does only while no frame evaluation function is installed. So in
 * the default mode pyjion installs none: the sampler (tiering.h) finds the
 * code that runs hot, the hook compiles it (_eval.pyx's sample_frame), and
 * that code's functions get pyjion's vectorcall (PyjionCodegenAPI.vectorcall),
 * which pushes the frame and runs the machine code. Every other call keeps
 * the interpreter's fast path untouched.
 *
 * A compiled code object's functions get the vectorcall three ways: the one
 * whose frame the sampler found hot; every function made from the code later
 * (a function watcher's CREATE event: closures, methods of classes made at
 * run time); any other alive one the next time the sampler meets its frame.
 * The code's function version is dropped (pyj_code_drop_function_version),
 * so no interpreter call site inlines its functions past the vectorcall.
 * Generator code is left to the interpreter in this mode: a generator's
 * resumes never pass through a vectorcall. Docs: docs/cpython313.md. */
#ifndef PYJION_FUNCTION_ENTRY_H
#define PYJION_FUNCTION_ENTRY_H

#include <Python.h>
#include <stdint.h>

#include "code_extra.h"
#include "cpython_layer.h"
#include "record.h"

typedef struct {
    int active;                  /* this mode is on: new functions of compiled code are given the vectorcall */
    int watcher;                 /* the function watcher's id (-1: not registered) */
    Py_ssize_t record_index;     /* the hook's code-extra index */
    vectorcallfunc vectorcall;   /* pyjion's */
    vectorcallfunc cpython;      /* CPython's own (PyjionCodegenAPI.cpython_vectorcall) */
    uint64_t adopted;            /* statistics: functions given the vectorcall */
} PyjFunctionEntry;

static PyjFunctionEntry pyj_fentry = {0, -1, -1, NULL, NULL, 0};

/* A function body whose calls run it (not a module or class body, not one
 * that makes a generator): what a vectorcall can enter. */
static inline int pyj_fentry_code_enterable(PyCodeObject *co)
{
    return (co->co_flags & CO_OPTIMIZED) && !pyj_code_is_generator(co);
}

/* Code whose functions are entered through pyjion's vectorcall. */
static inline int pyj_fentry_code_compiled(PyCodeObject *co)
{
    if (pyj_fentry.record_index < 0 || !pyj_fentry_code_enterable(co)) return 0;
    PyjRecord *rec = (PyjRecord *)pyj_code_extra(co, pyj_fentry.record_index);
    return rec != NULL && rec->view.state == PYJ_COMPILED;
}

/* Gives `fn` pyjion's vectorcall, unless someone else has replaced CPython's
 * (called while the mode is active: both vectorcalls are known). */
static inline void pyj_fentry_adopt(PyFunctionObject *fn)
{
#if PYJ_FUNCTION_ENTRY
    if (fn->vectorcall != pyj_fentry.cpython) return;
    PyFunction_SetVectorcall(fn, pyj_fentry.vectorcall);
    pyj_fentry.adopted++;
#else
    (void)fn;
#endif
}

/* Code `co` was just compiled, or its frame `f` was sampled: its functions
 * are entered through the vectorcall from now on. */
static inline void pyj_fentry_code_ready(PyCodeObject *co, PyjFrame *f)
{
    if (!pyj_fentry.active || !pyj_fentry_code_compiled(co)) return;
    pyj_code_drop_function_version(co);
    PyFunctionObject *fn = f != NULL ? pyj_frame_function(f) : NULL;
    if (fn != NULL) pyj_fentry_adopt(fn);
}

#if PYJ_FUNCTION_ENTRY
/* The function watcher: functions made from compiled code get the
 * vectorcall at birth; one whose __code__ is replaced by code that is not
 * compiled goes back to CPython's (the vectorcall would be correct, only
 * slower than the interpreter's inlined call). */
static int pyj_fentry_watch(PyFunction_WatchEvent event, PyFunctionObject *fn, PyObject *new_value)
{
    if (!pyj_fentry.active) return 0;
    if (event == PyFunction_EVENT_CREATE) {
        if (pyj_fentry_code_compiled((PyCodeObject *)fn->func_code)) pyj_fentry_adopt(fn);
    } else if (event == PyFunction_EVENT_MODIFY_CODE && new_value != NULL && PyCode_Check(new_value)) {
        if (pyj_fentry_code_compiled((PyCodeObject *)new_value)) {
            pyj_fentry_adopt(fn);
        } else if (fn->vectorcall == pyj_fentry.vectorcall) {
            PyFunction_SetVectorcall(fn, pyj_fentry.cpython);
        }
    }
    return 0;
}
#endif

/* Turns the mode on or off (GIL held); -1 with an exception if the watcher
 * cannot be registered. */
static int pyj_fentry_set_active(int on, Py_ssize_t record_index, vectorcallfunc vectorcall,
                                 vectorcallfunc cpython)
{
#if PYJ_FUNCTION_ENTRY
    pyj_fentry.record_index = record_index;
    pyj_fentry.vectorcall = vectorcall;
    pyj_fentry.cpython = cpython;
    if (on && pyj_fentry.watcher < 0) {
        int id = PyFunction_AddWatcher(pyj_fentry_watch);
        if (id < 0) return -1;
        pyj_fentry.watcher = id;
    } else if (!on && pyj_fentry.watcher >= 0) {
        if (PyFunction_ClearWatcher(pyj_fentry.watcher) < 0) PyErr_Clear();
        pyj_fentry.watcher = -1;
    }
    pyj_fentry.active = on && vectorcall != NULL && cpython != NULL;
    return 0;
#else
    (void)record_index;
    (void)vectorcall;
    (void)cpython;
    pyj_fentry.active = 0;
    if (on) {
        PyErr_SetString(PyExc_RuntimeError, "entering compiled code without the hook needs CPython 3.12 or later");
        return -1;
    }
    return 0;
#endif
}

#endif
