/* The call-level profiler's hot path: begin/end of one hooked call.
 *
 * Timestamps come from the TSC (a few cycles, no system call), converted to
 * seconds by a rate calibrated against CLOCK_MONOTONIC over the profiling run.
 * Each hooked call keeps its context on the C stack; a thread-local pointer
 * links them, so nesting is exact per thread and nothing is allocated.
 * The bookkeeping follows cProfile's: a call is recursive (not primitive) when
 * the same code is already running below it, and its time is then not added
 * again to the cumulative total; the same rule holds per caller->callee edge. */
#ifndef PYJION_PROFILER_H
#define PYJION_PROFILER_H

#include <stdint.h>
#include <time.h>
#include "record.h"
#include "call_tree.h"
#include "cstack_guard.h"   /* PYJ_TLS */

#if defined(__x86_64__)
#include <x86intrin.h>
static inline uint64_t pyj_ticks(void) { return __rdtsc(); }
#else
static inline uint64_t pyj_ticks(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

static inline double pyj_monotonic(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct PyjCallContext {
    struct PyjCallContext *prev;
    PyjRecord *rec;
    PyObject *code;
    uint64_t start;
    uint64_t child_ticks;           /* time spent in profiled callees */
    uint64_t generation;            /* reset_stats() generation at entry */
    uint32_t node;                  /* this call's path in the call tree (call_tree.h) */
} PyjCallContext;

static PYJ_TLS PyjCallContext *pyj_current_call;

static inline void pyj_prof_begin(PyjCallContext *ctx, PyjRecord *rec, PyObject *code, uint64_t generation)
{
    PyjCallContext *prev = pyj_current_call;
    ctx->prev = prev;
    ctx->rec = rec;
    ctx->code = code;
    ctx->child_ticks = 0;
    ctx->generation = generation;
    rec->prof.active++;
    if (prev != NULL) {
        PyjEdge *e = pyj_edge_for(&rec->prof, prev->code);
        if (e != NULL) e->active++;
    }
    ctx->node = pyj_tree_enter(prev != NULL && prev->generation == generation ? prev->node : PYJ_TREE_NONE,
                               code, generation);
    pyj_tree_begin(ctx->node);
    pyj_current_call = ctx;
    ctx->start = pyj_ticks();
}

static inline void pyj_prof_end(PyjCallContext *ctx, uint64_t generation)
{
    uint64_t total = pyj_ticks() - ctx->start;
    uint64_t own = total > ctx->child_ticks ? total - ctx->child_ticks : 0;
    PyjCallContext *prev = ctx->prev;
    PyjProfile *p = &ctx->rec->prof;
    pyj_current_call = prev;
    if (prev != NULL) prev->child_ticks += total;
    int outermost = --p->active == 0;
    if (ctx->generation != generation) return;      /* stats were reset meanwhile */
    pyj_tree_end(ctx->node, total, own);
    if (outermost) p->total_ticks += total; else p->recursive_calls++;
    p->own_ticks += own;
    p->calls++;
    if (prev != NULL) {
        PyjEdge *e = pyj_edge_for(p, prev->code);
        if (e != NULL) {
            if (--e->active == 0) e->total_ticks += total; else e->recursive_calls++;
            e->own_ticks += own;
            e->calls++;
        }
    }
}

#endif
