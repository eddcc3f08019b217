/* The call-level profiler's hot path: begin/end of one hooked call.
 *
 * Timestamps come from the profiler's clock (profile_clock.h): by default
 * a clock a helper thread advances every 100 us (one load per timestamp),
 * or the CPU's time-stamp counter, exact per call.
 * Each hooked call keeps its context on the C stack; a thread-local pointer
 * links them, so nesting is exact per thread and nothing is allocated.
 * The bookkeeping follows cProfile's: a call is recursive (not primitive) when
 * the same code is already running below it, and its time is then not added
 * again to the cumulative total; the same rule holds per caller->callee edge.
 * A call on a path the call tree holds (exact) is counted in its node only,
 * the flat profile being summed from the nodes (call_tree.h); a call the tree
 * cannot hold (folded) is counted in its code's profile and its edge here. */
#ifndef PYJION_PROFILER_H
#define PYJION_PROFILER_H

#include <stdint.h>
#include <time.h>
#include "record.h"
#include "call_tree.h"
#include "cstack_guard.h"   /* PYJ_TLS */
#include "profile_clock.h"

static inline double pyj_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct PyjCallContext {
    struct PyjCallContext *prev;
    PyjProfile *prof;               /* a code record's profile, or a C function's (PyjCFunc) */
    PyObject *code;                 /* the code object, or a C function's label: its identity as a caller */
    uint64_t start;
    uint64_t child_ticks;           /* time spent in profiled callees */
    uint64_t generation;            /* reset_stats() generation at entry */
    /* An exact call's generation (counted in its node only), 0 for a folded
     * one: one compare tells a callee whether it may count itself in the
     * tree under this call's node. */
    uint64_t exact_generation;
    /* An exact call's path in the call tree (call_tree.h); a folded call's
     * deepest recorded ancestor (PYJ_TREE_NONE: none could be made). */
    uint32_t node;
    /* A folded call, counted in prof the old way: its caller's edge in
     * prof->edges (-1: none). */
    int32_t edge;
    uint8_t edge_outer;             /* a folded call: the outermost call of its caller->callee pair */
} PyjCallContext;

/* machine code keeps a C call's context in a PyjionProfCall (codegen_api.h) */
_Static_assert(sizeof(PyjCallContext) <= sizeof(PyjionProfCall), "a PyjionProfCall holds a context");

static PYJ_TLS PyjCallContext *pyj_current_call;

/* The hot path is inlined into each of its callers (the hook's profiled
 * frames, and the C calls' begin and end): a call there costs as much as
 * the work itself. */
#define PYJ_PROF_INLINE static inline __attribute__((always_inline))

/* The statistics generation (_eval's g_generation, which reset_stats() moves on). */
static uint64_t pyj_prof_generation = 1;

/* Whether the pair caller->code is running above `caller` (whose code
 * calls `code` now): cProfile then counts the call as recursive for that
 * edge. Walks the stack: asked only of folded calls whose code is running
 * already and whose edge has no folded call running. */
static __attribute__((noinline)) int pyj_prof_pair_running(PyjCallContext *caller, PyObject *code)
{
    for (PyjCallContext *a = caller; a != NULL && a->prev != NULL && a->generation == caller->generation;
         a = a->prev) {
        if (a->code == code && a->prev->code == caller->code && a->prev->generation == caller->generation) return 1;
    }
    return 0;
}

/* A call the tree cannot hold (too deep, the tree full, or below such a
 * call): kept in its profile and its caller's edge, charged to `node`. */
static __attribute__((noinline)) void pyj_prof_push_folded(PyjCallContext *ctx, PyjProfile *p, PyObject *code,
                                                            PyjCallContext *caller, uint32_t node)
{
    pyj_tree.folded++;
    ctx->node = node;
    ctx->edge = -1;
    ctx->edge_outer = 0;
    if (caller == NULL) return;
    int32_t edge = pyj_edge_index(p, caller->code);
    if (edge < 0) return;
    PyjEdge *e = &p->edges[edge];
    ctx->edge_outer = e->active == 0 && !(p->active > 1 && pyj_prof_pair_running(caller, code));
    e->active++;
    ctx->edge = edge;
}

/* The push of a call whose caller is not an exact call of this generation
 * (a thread's first call, a call below a folded one or from before
 * reset_stats()), or whose node is not the one its parent's sequence expects. */
static void pyj_prof_place(PyjCallContext *ctx, PyjProfile *p, PyObject *code, PyjCallContext *prev,
                           uint64_t generation)
{
    /* A caller from before reset_stats() is forgotten, as cProfile's clear()
     * forgets its running calls: the call starts a path at the root. */
    PyjCallContext *caller = prev != NULL && prev->generation == generation ? prev : NULL;
    if (caller != NULL && caller->exact_generation != generation) {
        pyj_prof_push_folded(ctx, p, code, caller, caller->node);
        return;
    }
    uint32_t parent = caller != NULL ? caller->node : pyj_tree_root(generation);
    uint32_t node = parent != PYJ_TREE_NONE ? pyj_tree_enter(parent, code) : PYJ_TREE_NONE;
    if (node == PYJ_TREE_NONE) {
        pyj_prof_push_folded(ctx, p, code, caller, parent);
        return;
    }
    ctx->node = node;
    ctx->exact_generation = generation;
}

/* (The rest of the push, after pyj_prof_place: the hot path's tail call.) */
static __attribute__((noinline)) void pyj_prof_push_slow(PyjCallContext *ctx, PyjProfile *p, PyObject *code,
                                                          PyjCallContext *prev, uint64_t generation)
{
    ctx->exact_generation = 0;
    pyj_prof_place(ctx, p, code, prev, generation);
    pyj_current_call = ctx;
    ctx->start = pyj_ticks();
}

/* The hot path: a call under an exact call, of the callee that call's
 * sequence expects (call_tree.h), takes its node. */
PYJ_PROF_INLINE void pyj_prof_push_on(PyjCallContext *ctx, PyjProfile *p, PyObject *code, uint64_t generation,
                                      int exact)
{
    PyjCallContext *prev = pyj_current_call;
    ctx->prev = prev;
    ctx->prof = p;
    ctx->code = code;
    ctx->child_ticks = 0;
    ctx->generation = generation;
    p->active++;
    uint32_t node = prev != NULL && prev->exact_generation == generation ? pyj_tree_child(prev->node, code)
                                                                          : PYJ_TREE_NONE;
    if (__builtin_expect(node == PYJ_TREE_NONE, 0)) {
        pyj_prof_push_slow(ctx, p, code, prev, generation);
        return;
    }
    ctx->node = node;
    ctx->exact_generation = generation;
    pyj_current_call = ctx;
    ctx->start = pyj_ticks_on(exact);
}

PYJ_PROF_INLINE void pyj_prof_push(PyjCallContext *ctx, PyjProfile *p, PyObject *code, uint64_t generation)
{
    pyj_prof_push_on(ctx, p, code, generation, pyj_prof_clock.exact);
}

PYJ_PROF_INLINE void pyj_prof_begin(PyjCallContext *ctx, PyjRecord *rec, PyObject *code, uint64_t generation)
{
    pyj_prof_push(ctx, &rec->prof, code, generation);
}

/* The end of a folded call (pyj_prof_push_folded). */
static __attribute__((noinline)) void pyj_prof_end_folded(PyjCallContext *ctx, PyjProfile *p, int outermost,
                                                           uint64_t total, uint64_t own)
{
    if (ctx->node != PYJ_TREE_NONE) {
        PyjTreeNodeCold *n = &pyj_tree.cold[ctx->node];
        n->folded_calls++;
        n->folded_own_ticks += own;
    }
    if (outermost) p->total_ticks += total; else p->recursive_calls++;
    p->own_ticks += own;
    p->calls++;
    if (ctx->edge >= 0) {
        PyjEdge *e = &p->edges[ctx->edge];
        e->active--;
        if (ctx->edge_outer) e->total_ticks += total; else e->recursive_calls++;
        e->own_ticks += own;
        e->calls++;
    }
}

/* The end of a call that some tick of the clock fell in (its time goes to
 * it and to its caller's callees), or of a folded call. */
static __attribute__((noinline)) void pyj_prof_end_timed(PyjCallContext *ctx, uint64_t total, uint64_t generation)
{
    uint64_t own = total > ctx->child_ticks ? total - ctx->child_ticks : 0;
    if (ctx->prev != NULL && total != 0) ctx->prev->child_ticks += total;
    if (ctx->exact_generation == generation) {
        PyjTreeNode *n = &pyj_tree.nodes[ctx->node];
        n->calls++;
        n->own_ticks += own;
        n->total_ticks += total;
    } else if (ctx->generation == generation) {   /* (else the stats were reset meanwhile) */
        pyj_prof_end_folded(ctx, ctx->prof, ctx->prof->active == 0, total, own);
    }
}

/* With the ticks clock most calls end in the tick they began in: their
 * time is 0 (so is every callee's) and only the count is kept. */
PYJ_PROF_INLINE void pyj_prof_end_on(PyjCallContext *ctx, uint64_t generation, int exact)
{
    uint64_t total = pyj_ticks_on(exact) - ctx->start;
    pyj_current_call = ctx->prev;
    ctx->prof->active--;
    if (__builtin_expect(total == 0 && ctx->exact_generation == generation, 1)) {
        pyj_tree.nodes[ctx->node].calls++;
        return;
    }
    pyj_prof_end_timed(ctx, total, generation);
}

PYJ_PROF_INLINE void pyj_prof_end(PyjCallContext *ctx, uint64_t generation)
{
    pyj_prof_end_on(ctx, generation, pyj_prof_clock.exact);
}

/* ---- C functions called from machine code ---------------------------------
 *
 * cProfile counts the C functions that a CALL instruction calls: builtin
 * functions (3.11: exactly PyCFunction or PyCMethod, Python/ceval.c
 * trace_call_function; 3.12+: any PyCFunction, Modules/_lsprof.c
 * get_cfunc_from_callable) and method descriptors called with a self, which
 * it counts as the bound builtin method. It keys them by their PyMethodDef
 * (one entry for list.append whatever the list) and labels them as
 * Modules/_lsprof.c normalizeUserObj does. Machine code asks the hook
 * (PyjionHookState.c_call_begin/end) around each such call while profiling;
 * a C function's context sits on the same per-thread stack as the Python
 * frames', so a Python function it calls back (sum(gen), sorted(key=f)) has
 * it as caller, and that function's time is not the C function's own.
 * Calls made by interpreted code are not seen (that takes sys.setprofile).
 *
 * A PyjCFunc lives until the process ends: a context on some thread's stack
 * may point into it at any time (reset_stats() only clears its numbers).
 * Its label (a str) is its identity as a caller (PyjEdge.caller) and in the
 * call tree (PyjTreeNode.code). */
typedef struct {
    const void *key;           /* the PyMethodDef */
    PyObject *name;            /* cProfile's label: "<built-in method builtins.len>" */
    PyjProfile prof;
} PyjCFunc;

typedef struct {
    PyjCFunc **slots;          /* open addressing on key; cap a power of two */
    PyjCFunc **all;            /* in the order they were made */
    uint32_t n, cap;
} PyjCFuncTable;

static PyjCFuncTable pyj_cfuncs;

static inline uint32_t pyj_cfunc_hash(const void *key)
{
    return (uint32_t)(((uintptr_t)key >> 4) * 0x9E3779B97F4A7C15ull >> 32);
}

static inline PyjCFunc *pyj_cfunc_find(const void *key)
{
    PyjCFuncTable *t = &pyj_cfuncs;
    if (t->cap == 0) return NULL;
    for (uint32_t i = pyj_cfunc_hash(key) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        PyjCFunc *f = t->slots[i];
        if (f == NULL || f->key == key) return f;
    }
}

/* cProfile's label of a builtin (method) with these parts (self_type: the
 * class of its self, NULL for none); for a method descriptor called with
 * self, the parts of the bound method it makes (self, no module). NULL (no
 * exception set) if it cannot be made. */
static PyObject *pyj_cfunc_label(PyMethodDef *ml, PyTypeObject *self_type, PyObject *module)
{
    PyObject *res = NULL;
    if (self_type == NULL) {
        PyObject *modname = NULL;
        if (module != NULL && PyUnicode_Check(module)) {
            modname = Py_NewRef(module);
        } else if (module != NULL && PyModule_Check(module)) {
            modname = PyModule_GetNameObject(module);
            if (modname == NULL) PyErr_Clear();
        }
        if (modname != NULL && PyUnicode_CompareWithASCIIString(modname, "builtins") != 0)
            res = PyUnicode_FromFormat("<%U.%s>", modname, ml->ml_name);
        else
            res = PyUnicode_FromFormat("<%s>", ml->ml_name);
        Py_XDECREF(modname);
    } else {
        /* repr(the attribute of that name on type(self)), else the module's name */
        PyObject *name = PyUnicode_FromString(ml->ml_name);
        if (name != NULL) {
            PyObject *attr = _PyType_Lookup(self_type, name);
            Py_DECREF(name);
            if (attr != NULL) {
                Py_INCREF(attr);
                res = PyObject_Repr(attr);
                Py_DECREF(attr);
            }
        }
        if (res == NULL) {
            PyErr_Clear();
            if (module != NULL && PyUnicode_Check(module))
                res = PyUnicode_FromFormat("<built-in method %S.%s>", module, ml->ml_name);
            else
                res = PyUnicode_FromFormat("<built-in method %s>", ml->ml_name);
        }
    }
    if (res == NULL) PyErr_Clear();
    return res;
}

static PyjCFunc *pyj_cfunc_add(PyMethodDef *ml, PyTypeObject *self_type, PyObject *module)
{
    PyjCFuncTable *t = &pyj_cfuncs;
    /* the label first: a repr may run Python code, which may add entries */
    PyObject *name = pyj_cfunc_label(ml, self_type, module);
    if (name == NULL) return NULL;
    PyjCFunc *f = pyj_cfunc_find(ml);
    if (f != NULL) {
        Py_DECREF(name);
        return f;
    }
    if ((t->n + 1) * 2 > t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 64;
        PyjCFunc **slots = (PyjCFunc **)PyMem_RawCalloc(cap, sizeof(PyjCFunc *));
        PyjCFunc **all = (PyjCFunc **)PyMem_RawRealloc(t->all, cap / 2 * sizeof(PyjCFunc *));
        if (all != NULL) t->all = all;
        if (slots == NULL || all == NULL) {
            PyMem_RawFree(slots);
            Py_DECREF(name);
            return NULL;
        }
        for (uint32_t i = 0; i < t->n; i++) {
            uint32_t j = pyj_cfunc_hash(all[i]->key) & (cap - 1);
            while (slots[j] != NULL) j = (j + 1) & (cap - 1);
            slots[j] = all[i];
        }
        PyMem_RawFree(t->slots);
        t->slots = slots;
        t->cap = cap;
    }
    f = (PyjCFunc *)PyMem_RawCalloc(1, sizeof(PyjCFunc));
    if (f == NULL) {
        Py_DECREF(name);
        return NULL;
    }
    f->key = ml;
    f->name = name;
    uint32_t j = pyj_cfunc_hash(ml) & (t->cap - 1);
    while (t->slots[j] != NULL) j = (j + 1) & (t->cap - 1);
    t->slots[j] = f;
    t->all[t->n++] = f;
    return f;
}

/* The entry of `callable` called with a self of class `self_type` (a
 * method descriptor's: the caller checked it binds), made if new; NULL if
 * cProfile does not count such a call (or the entry cannot be made). */
static inline PyjCFunc *pyj_cfunc_of(PyObject *callable, PyTypeObject *self_type)
{
    PyTypeObject *type = Py_TYPE(callable);
    PyMethodDef *ml;
    PyObject *module;
#if PY_VERSION_HEX >= 0x030C0000
    if (PyCFunction_Check(callable)) {
#else
    if (type == &PyCFunction_Type || type == &PyCMethod_Type) {
#endif
        PyCFunctionObject *fn = (PyCFunctionObject *)callable;
        ml = fn->m_ml;
        self_type = fn->m_self != NULL ? Py_TYPE(fn->m_self) : NULL;
        module = fn->m_module;
    } else if (type == &PyMethodDescr_Type && self_type != NULL) {
        ml = ((PyMethodDescrObject *)callable)->d_method;
        module = NULL;
    } else {
        return NULL;
    }
    PyjCFunc *f = pyj_cfunc_find(ml);
    return f != NULL ? f : pyj_cfunc_add(ml, self_type, module);
}

/* PyjionHookState.c_call_begin, on the clock `exact` says (hook_entry.h
 * makes one per clock). */
PYJ_PROF_INLINE int pyj_prof_c_begin_on(PyjionProfCall *buf, PyObject *callable, PyObject *const *args,
                                        Py_ssize_t nargs, int exact)
{
    PyTypeObject *self_type = NULL;
    if (Py_TYPE(callable) == &PyMethodDescr_Type) {
        /* binding fails (and the call raises) without a self of its class */
        if (nargs == 0 || !PyObject_TypeCheck(args[0], ((PyMethodDescrObject *)callable)->d_common.d_type)) return 0;
        self_type = Py_TYPE(args[0]);
    }
    PyjCFunc *f = pyj_cfunc_of(callable, self_type);
    if (f == NULL) return 0;
    pyj_prof_push_on((PyjCallContext *)buf, &f->prof, f->name, pyj_prof_generation, exact);
    return 1;
}

/* PyjionHookState.c_call_key: a call cache's handle of its callable's
 * entry (a method descriptor's calls from there have a self of its own
 * class: the cache checks it). */
static void *pyj_prof_c_call_key(PyObject *callable)
{
    PyTypeObject *self_type = Py_TYPE(callable) == &PyMethodDescr_Type
                                  ? ((PyMethodDescrObject *)callable)->d_common.d_type
                                  : NULL;
    return pyj_cfunc_of(callable, self_type);
}

/* PyjionHookState.call_end: the end of a C call or of a Python call begun
 * by call_begin (hook_entry.h). */
PYJ_PROF_INLINE void pyj_prof_call_end_on(PyjionProfCall *buf, int exact)
{
    pyj_prof_end_on((PyjCallContext *)buf, pyj_prof_generation, exact);
}

/* A C call begun from a call cache's handle (pyj_prof_c_call_key). */
PYJ_PROF_INLINE void pyj_prof_c_begin_key_on(PyjionProfCall *buf, void *key, int exact)
{
    PyjCFunc *f = (PyjCFunc *)key;
    pyj_prof_push_on((PyjCallContext *)buf, &f->prof, f->name, pyj_prof_generation, exact);
}

/* (c_call_count's cold path: the call counted as one begun and ended at once) */
static __attribute__((noinline)) void pyj_prof_c_count_slow(PyjCFunc *f, uint64_t generation)
{
    PyjCallContext ctx;
    pyj_prof_push_on(&ctx, &f->prof, f->name, generation, 0);
    pyj_prof_end_on(&ctx, generation, 0);
}

/* PyjionHookState.c_call_count (ticks clock only): a leaf C call under an
 * exact call, of the callee its sequence expects, only counts in its node;
 * its time (a clock tick that fell in it) stays its caller's. */
static void pyj_prof_c_count_ticks(void *key)
{
    PyjCFunc *f = (PyjCFunc *)key;
    uint64_t generation = pyj_prof_generation;
    PyjCallContext *caller = pyj_current_call;
    if (__builtin_expect(caller != NULL && caller->exact_generation == generation, 1)) {
        uint32_t node = pyj_tree_child(caller->node, f->name);
        if (__builtin_expect(node != PYJ_TREE_NONE, 1)) {
            pyj_tree.nodes[node].calls++;
            return;
        }
    }
    pyj_prof_c_count_slow(f, generation);
}

/* reset_stats(): forgets the C functions' numbers (not the functions). */
static inline void pyj_cfuncs_clear(void)
{
    for (uint32_t i = 0; i < pyj_cfuncs.n; i++) pyj_profile_clear(&pyj_cfuncs.all[i]->prof);
}

#endif
