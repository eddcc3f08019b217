/* Tiering: getting long-running interpreted frames into machine code.
 *
 * The hook compiles a code object once it has been called often enough
 * (_eval.pyx). PEP 523 gives no hook on an interpreted backward jump, so a
 * frame that is called once and loops for a long time (a script's main(), a
 * module body, a benchmark's single call) would stay interpreted. Two parts
 * here find and move such frames (docs/tiering.md has the policy and figures):
 *
 * The sampler: a C thread (no Python state, all signals blocked) that about
 * every millisecond queues a pending call for the main thread. The callback
 * (the hook's on_sample) runs at the interpreter's next eval-breaker check and
 * charges the sample to the innermost frame the hook is interpreting there.
 *
 * The loop-header trap: to move a hot frame, the callback overwrites the code
 * unit of the header of the innermost loop the frame is in with RETURN_VALUE.
 * When the interpreter next arrives there, it "returns" (popping one stack
 * value into the return value, a borrowed copy we ignore) and leaves the frame
 * intact. pyj_interpret recognises that return, restores the unit and the
 * stack depth, and enters the code's machine code at that header (its OSR
 * entry). Every interpretation the hook starts goes through pyj_interpret (and
 * machine code hands frames to the interpreter through it too), so any frame
 * of the code, in any thread, that reaches a trap is handled the same way.
 *
 * All of it runs with the GIL held, except the sampler thread, which only
 * reads two words and calls Py_AddPendingCall. CPython 3.11 specifics come
 * from cpython311.h. */
#ifndef PYJION_TIERING_H
#define PYJION_TIERING_H

#include <Python.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "cpython_layer.h"
#include "cstack_guard.h"   /* PYJ_TLS */
#include "helper_thread.h"
#include "record.h"

/* ---- the hook's state that the interpreter wrapper needs ---------------- */

typedef struct {
    Py_ssize_t extra_index;          /* the hook's code-extra index */
    _PyFrameEvalFunction hook;       /* the hook's frame evaluator */
    int traps_set;                   /* some trap was ever set: returns are checked */
    uint64_t osr_entries;            /* statistics, reset by reset_stats() */
    uint64_t traps;
} PyjTierState;

static PyjTierState pyj_tier = {-1, NULL, 0, 0, 0};

/* The innermost frame this thread runs in the interpreter through the hook. */
static PYJ_TLS PyjFrame *pyj_interp_frame;

/* ---- the one armed trap ------------------------------------------------- */

typedef struct {
    PyObject *code;          /* strong reference; NULL: no trap set */
    int unit;
    uint16_t saved;
    int had_co_code;         /* code.co_code was cached before the trap was set */
    unsigned age;            /* sampler ticks since it was set */
} PyjTrap;

static PyjTrap pyj_trap = {NULL, 0, 0, 0, 0};

static inline PyjRecord *pyj_tier_record(PyCodeObject *co)
{
    if (pyj_tier.extra_index < 0) return NULL;
    return (PyjRecord *)pyj_code_extra(co, pyj_tier.extra_index);
}

static void pyj_trap_disarm(void)
{
    PyCodeObject *co = (PyCodeObject *)pyj_trap.code;
    if (co == NULL) return;
    pyj_code_restore_unit(co, pyj_trap.unit, pyj_trap.saved);
    if (!pyj_trap.had_co_code && pyj_code_cached_co_code(co) != NULL) pyj_code_drop_cached_co_code(co);
    pyj_trap.code = NULL;
    Py_DECREF(co);
}

/* Sets the trap at `unit` (a loop header with `depth` values on the stack) of
 * `co`, whose record `rec` has machine code with an OSR entry. */
static void pyj_trap_arm(PyCodeObject *co, PyjRecord *rec, int unit, int depth)
{
    pyj_trap_disarm();
    Py_INCREF(co);
    pyj_trap.code = (PyObject *)co;
    pyj_trap.unit = unit;
    pyj_trap.had_co_code = pyj_code_cached_co_code(co) != NULL;
    pyj_trap.age = 0;
    rec->trap_unit = unit + 1;
    rec->trap_depth = depth;
    pyj_tier.traps_set = 1;
    pyj_tier.traps++;
    pyj_trap.saved = pyj_code_set_return_trap(co, unit);
}

/* The interpreter left frame `f` returning `result`: was that a trap? The
 * units traps are set on never return by themselves (the arming checks it),
 * so a return from the unit that rec->trap_unit names is a trap that fired,
 * whether or not the trap has been taken down since. The value it "returned"
 * can be NULL (an empty local slot popped), but then no exception is set. */
static inline int pyj_trap_fired_in(PyjRecord *rec, PyjFrame *f, PyObject *result)
{
    if (__builtin_expect(rec->trap_unit == 0, 1) || pyj_frame_unit(f) != rec->trap_unit - 1) return 0;
    return result != NULL || !PyErr_Occurred();
}

static inline int pyj_trap_fired(PyjFrame *f, PyObject *result, PyjRecord **rec_out)
{
    if (!pyj_tier.traps_set) return 0;
    PyjRecord *rec = pyj_tier_record(pyj_frame_code(f));
    if (rec == NULL || !pyj_trap_fired_in(rec, f, result)) return 0;
    *rec_out = rec;
    return 1;
}

static PyObject *pyj_interpret(PyThreadState *ts, PyjFrame *f, int throwflag);

/* Runs machine code for `f` from the hook: while it runs, no frame is being
 * interpreted (a tick then is charged to nobody, not to the interpreted caller
 * whose call led here), until the machine code itself hands a frame to
 * pyj_interpret. */
static inline PyObject *pyj_run_compiled(PyjionEntry entry, PyThreadState *ts, PyjFrame *f, int arg)
{
    PyjFrame *outer = pyj_interp_frame;
    pyj_interp_frame = NULL;
    PyObject *result = entry(ts, (void *)f, arg);
    pyj_interp_frame = outer;
    return result;
}

/* A trap fired in `f`: put the frame back as it was at the header, then run
 * the rest of it as machine code, or in the interpreter if that cannot be
 * (a tracer is on, the hook is no longer the evaluator). */
static PyObject *pyj_trap_continue(PyThreadState *ts, PyjFrame *f, PyjRecord *rec)
{
    PyCodeObject *co = pyj_frame_code(f);
    int unit = rec->trap_unit - 1;
    if (pyj_trap.code == (PyObject *)co && pyj_trap.unit == unit) pyj_trap_disarm();
    /* RETURN_VALUE popped one value without clearing its slot: the frame owns it again. */
    if (pyj_frame_stack_depth(f) != rec->trap_depth - 1) {
        Py_FatalError("pyjion: a loop-header trap returned with an unexpected stack depth");
    }
    pyj_frame_set_stack_depth(f, rec->trap_depth);
    if (rec->view.state == PYJ_COMPILED && rec->osr_entry != NULL && !pyj_tracing(ts) &&
        pyj_get_eval_func() == pyj_tier.hook) {
        rec->osr_entries++;
        pyj_tier.osr_entries++;
        return pyj_run_compiled(rec->osr_entry, ts, f, unit);
    }
    pyj_frame_resume_at(f, unit);
    return pyj_interpret(ts, f, 0);
}

/* Runs `f` in CPython's interpreter; the hook's only way to do so. */
static PyObject *pyj_interpret(PyThreadState *ts, PyjFrame *f, int throwflag)
{
    PyjFrame *outer = pyj_interp_frame;
    pyj_interp_frame = f;
    PyObject *result = _PyEval_EvalFrameDefault(ts, f, throwflag);
    pyj_interp_frame = outer;
    PyjRecord *rec;
    if (pyj_trap_fired(f, result, &rec)) return pyj_trap_continue(ts, f, rec);
    return result;
}

/* pyj_interpret for a frame whose code's record the caller holds (the hook's
 * common path): the trap test is one load of that record, not a lookup of
 * it on every return once some trap was ever set. (The record lives as long
 * as the code, which the frame keeps alive.) */
static inline PyObject *pyj_interpret_with(PyThreadState *ts, PyjFrame *f, int throwflag, PyjRecord *rec)
{
    PyjFrame *outer = pyj_interp_frame;
    pyj_interp_frame = f;
    PyObject *result = _PyEval_EvalFrameDefault(ts, f, throwflag);
    pyj_interp_frame = outer;
    if (pyj_trap_fired_in(rec, f, result)) return pyj_trap_continue(ts, f, rec);
    return result;
}

/* ---- the sampler thread ------------------------------------------------- */

typedef struct {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int running;                 /* the thread exists (changed with the GIL held) */
    int stop;                    /* under lock */
    unsigned interval_us;
    PyThreadState *main_ts;
    int (*callback)(void *);
    atomic_int pending;          /* a callback is queued and has not run yet */
    atomic_uint quiet;           /* callbacks in a row that found nothing to compile or move */
    atomic_ulong queued;         /* statistics: callbacks queued */
    /* Sample the main thread while other threads exist too (warm-up by
     * samples, function_entry.h, has no other way to find hot code); else
     * only while it runs alone. */
    atomic_int with_threads;
} PyjSampler;

static PyjSampler pyj_sampler = {.interval_us = 1000};

#define PYJ_SAMPLER_MAX_BACKOFF 64

/* Once everything warm is compiled, ticks find nothing to do: tick every
 * 4 ms after 64 such ticks, every 16 ms after 256 (a new hot loop is then
 * found within a few tens of milliseconds). */
static inline unsigned pyj_sampler_quiet_factor(unsigned quiet)
{
    return quiet >= 256 ? 16 : quiet >= 64 ? 4 : 1;
}

static void *pyj_sampler_main(void *arg)
{
    PyjSampler *s = (PyjSampler *)arg;
    unsigned backoff = 1;
    pthread_mutex_lock(&s->lock);
    while (!s->stop) {
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        unsigned factor = backoff * pyj_sampler_quiet_factor(atomic_load(&s->quiet));
        uint64_t ns = (uint64_t)deadline.tv_nsec + (uint64_t)s->interval_us * factor * 1000u;
        deadline.tv_sec += (time_t)(ns / 1000000000u);
        deadline.tv_nsec = (long)(ns % 1000000000u);
        pthread_cond_timedwait(&s->wake, &s->lock, &deadline);
        if (s->stop) break;
        pthread_mutex_unlock(&s->lock);
        /* The main thread is blocked, in C code, or shares the interpreter
         * with other threads: back off (up to 64 intervals) until it runs
         * Python code alone again. */
        int runs = atomic_load(&s->with_threads) ? pyj_main_thread_holds_gil(s->main_ts)
                                                 : pyj_main_thread_runs_alone(s->main_ts);
        if (atomic_load(&s->pending) || !runs) {
            if (backoff < PYJ_SAMPLER_MAX_BACKOFF) backoff *= 2;
        } else {
            backoff = 1;
            atomic_store(&s->pending, 1);
            if (Py_AddPendingCall(s->callback, NULL) == 0) {
                atomic_fetch_add(&s->queued, 1);
                pyj_wake_eval_breaker(s->main_ts);
            } else {
                atomic_store(&s->pending, 0);   /* the queue is full */
            }
        }
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static void pyj_sampler_init_sync(PyjSampler *s)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&s->wake, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_init(&s->lock, NULL);
}

/* Starts the thread (GIL held); 0 on success or if it runs already. */
static int pyj_sampler_start(int (*callback)(void *), unsigned interval_us)
{
    PyjSampler *s = &pyj_sampler;
    if (s->running) return 0;
    s->main_ts = pyj_main_thread_state();
    if (s->main_ts == NULL) return -1;
    static int initialised = 0;
    if (!initialised) {
        pyj_sampler_init_sync(s);
        initialised = 1;
    }
    s->callback = callback;
    s->interval_us = interval_us ? interval_us : 1000;
    s->stop = 0;
    if (pyj_helper_thread_start(&s->thread, pyj_sampler_main, s) != 0) return -1;
    s->running = 1;
    return 0;
}

/* Stops and joins the thread (GIL held: the thread never takes it). */
static void pyj_sampler_stop(void)
{
    PyjSampler *s = &pyj_sampler;
    if (!s->running) return;
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    s->running = 0;
}

/* In a child after fork(): the thread did not come along, and its lock may
 * have been held at the fork. Returns whether it ran in the parent. */
static int pyj_sampler_forget_after_fork(void)
{
    PyjSampler *s = &pyj_sampler;
    int was_running = s->running;
    s->running = 0;
    atomic_store(&s->pending, 0);
    pyj_sampler_init_sync(s);
    return was_running;
}

#endif
