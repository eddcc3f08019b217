/* The per-code-object record kept in the code's extra slot, and the profiler's
 * per-call context. Plain C, used by the hook (_eval.pyx). */
#ifndef PYJION_RECORD_H
#define PYJION_RECORD_H

#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "codegen_api.h"

enum {
    PYJ_INTERPRETED = PYJION_CODE_INTERPRETED,
    PYJ_COMPILING = PYJION_CODE_COMPILING,
    PYJ_COMPILED = PYJION_CODE_COMPILED,
    PYJ_FAILED = PYJION_CODE_FAILED,
    PYJ_PROFILING = PYJION_CODE_PROFILING,
};

/* Type profile: the types seen for the first arguments while the code ran in
 * the interpreter. Only static (non-heap) types are kept, by strong reference;
 * every heap type counts as "object", so a record never keeps a class alive. */
#define PYJ_PROFILED_ARGS 6
#define PYJ_TYPES_PER_ARG 4
typedef struct {
    PyTypeObject *seen[PYJ_PROFILED_ARGS][PYJ_TYPES_PER_ARG];
    uint8_t other[PYJ_PROFILED_ARGS];     /* a heap type or a 5th type was seen */
    uint32_t samples;
} PyjTypeProfile;

/* Profiler: one edge per caller of this code (cProfile's "subentry"). The edge
 * holds a strong reference to the caller's code until the stats are reset.
 * A PyjProfile and its edges count the calls the call tree cannot hold
 * (folded, profiler.h); `active` counts every running call of the code. */
typedef struct {
    PyObject *caller;
    uint64_t calls, recursive_calls, total_ticks, own_ticks;
    uint32_t active;          /* this caller->callee pair currently on the stack */
} PyjEdge;

typedef struct {
    uint64_t calls, recursive_calls, total_ticks, own_ticks;
    uint32_t active;          /* frames of this code currently on the stack */
    uint32_t listed;          /* held in the profiler's list of codes */
    uint32_t n_edges, cap_edges;
    PyjEdge *edges;
} PyjProfile;

typedef struct {
    /* First: what machine code reads (codegen_api.h): calls, state, entry. */
    PyjionCodeView view;
    int tier;                 /* 0 interpreter, 1 baseline machine code */
    int result;               /* PYJION_RESULT_* of the compile, 0 = not tried */
    PyObject *owner;          /* keeps the machine code alive */
    /* Machine code the record no longer enters directly, kept as long as
     * the record because frames may still run it: what a recompile replaced
     * (eager mode's profiled recompile, the optimising tier given up) and
     * the baseline fallback (PyjionCodeView.fallback_resume). */
    PyObject *retired;
    PyObject *reason;         /* str: why compiling failed */
    Py_ssize_t code_size;
    Py_ssize_t fallback_size;  /* bytes of the baseline fallback (PyjionCodeView.fallback_resume) */
    PyjTypeProfile *types;    /* NULL until the first profiled call */
    PyjProfile prof;
    /* Tiering (tiering.h); machine code reads none of these. */
    PyjionEntry osr_entry;    /* enters the machine code at a loop header (NULL: no loops) */
    uint32_t samples;         /* sampler ticks that found this code running interpreted */
    /* What decides a compile, both halved once per tiering epoch that passed
     * (pyj_record_cool): calls and sampler ticks of the last few epochs, so
     * that code warm only over a long run (a long tail of moderately used
     * library functions) is not compiled. */
    uint32_t warmth;          /* calls while interpreted */
    uint32_t hot_samples;     /* sampler ticks while interpreted */
    uint32_t epoch;           /* the epoch these two were last brought up to */
    uint32_t osr_entries;     /* frames moved from the interpreter into machine code */
    int trap_unit;            /* 1 + the code unit last patched as a loop-header trap; 0: none */
    int trap_depth;           /* value-stack depth at that header */
    uint64_t stats_gen;       /* the statistics generation the record was created in */
} PyjRecord;

/* codegen/ reads the extra slot's record as a PyjionCodeView. */
_Static_assert(offsetof(PyjRecord, view) == 0, "the view starts the record");

static inline PyjRecord *pyj_record_new(void)
{
    return (PyjRecord *)PyMem_RawCalloc(1, sizeof(PyjRecord));
}

/* Brings warmth and hot_samples to epoch `now`: halved per epoch passed. */
static inline void pyj_record_cool(PyjRecord *rec, uint32_t now)
{
    uint32_t passed = now - rec->epoch;
    rec->epoch = now;
    if (passed >= 32) {
        rec->warmth = rec->hot_samples = 0;
    } else {
        rec->warmth >>= passed;
        rec->hot_samples >>= passed;
    }
}

static inline void pyj_profile_clear(PyjProfile *p)
{
    uint32_t active = p->active;
    PyjEdge *edges = p->edges;
    uint32_t n = p->n_edges;
    memset(p, 0, sizeof(*p));
    p->active = active;       /* frames still running keep their recursion depth */
    for (uint32_t i = 0; i < n; i++) Py_DECREF(edges[i].caller);
    PyMem_RawFree(edges);
}

/* The extra slot's free function: the record dies with its code object. */
static inline void pyj_record_free(void *p)
{
    PyjRecord *rec = (PyjRecord *)p;
    if (rec == NULL) return;
    Py_CLEAR(rec->owner);
    Py_CLEAR(rec->retired);
    Py_CLEAR(rec->reason);
    if (rec->types) {
        for (int a = 0; a < PYJ_PROFILED_ARGS; a++)
            for (int t = 0; t < PYJ_TYPES_PER_ARG; t++)
                Py_XDECREF((PyObject *)rec->types->seen[a][t]);
        PyMem_RawFree(rec->types);
    }
    pyj_profile_clear(&rec->prof);
    PyMem_RawFree(rec);
}

static inline void pyj_record_types(PyjRecord *rec, PyObject **args, int nargs)
{
    PyjTypeProfile *tp = rec->types;
    if (tp == NULL) {
        tp = rec->types = (PyjTypeProfile *)PyMem_RawCalloc(1, sizeof(PyjTypeProfile));
        if (tp == NULL) return;
    }
    if (nargs > PYJ_PROFILED_ARGS) nargs = PYJ_PROFILED_ARGS;
    tp->samples++;
    for (int a = 0; a < nargs; a++) {
        if (args[a] == NULL) continue;
        PyTypeObject *type = Py_TYPE(args[a]);
        if (type->tp_flags & Py_TPFLAGS_HEAPTYPE) { tp->other[a] = 1; continue; }
        int t = 0;
        for (; t < PYJ_TYPES_PER_ARG && tp->seen[a][t] != NULL; t++)
            if (tp->seen[a][t] == type) break;
        if (t == PYJ_TYPES_PER_ARG) { tp->other[a] = 1; continue; }
        if (tp->seen[a][t] == NULL) { Py_INCREF(type); tp->seen[a][t] = type; }
    }
}

/* The index of the edge for `caller` in p->edges, added if new; -1 only when
 * out of memory. Edges keep their index until the statistics are cleared:
 * the call tree's nodes and running calls hold it (profiler.h). */
static inline int32_t pyj_edge_index(PyjProfile *p, PyObject *caller)
{
    PyjEdge *e = p->edges;
    for (uint32_t i = 0; i < p->n_edges; i++) {
        if (e[i].caller == caller) return (int32_t)i;
    }
    if (p->n_edges == p->cap_edges) {
        uint32_t cap = p->cap_edges ? p->cap_edges * 2 : 4;
        PyjEdge *grown = (PyjEdge *)PyMem_RawRealloc(p->edges, cap * sizeof(PyjEdge));
        if (grown == NULL) return -1;
        p->edges = grown;
        p->cap_edges = cap;
    }
    PyjEdge *added = &p->edges[p->n_edges];
    memset(added, 0, sizeof(PyjEdge));
    Py_INCREF(caller);
    added->caller = caller;
    return (int32_t)p->n_edges++;
}

#endif
