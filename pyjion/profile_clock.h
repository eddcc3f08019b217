/* The profiler's clock: what pyj_ticks() reads at every profiled call's
 * start and end.
 *
 * "ticks" (the default): CLOCK_MONOTONIC in nanoseconds, as a helper thread
 * last stored it; the thread stores it every PYJ_PROF_TICK_US while the
 * profiler runs. Reading it is one load, where the CPU's time-stamp counter
 * costs 25-40 cycles (rdtsc, 2 per call: more than a whole direct call of
 * compiled code). A call is charged the ticks that fell between its start
 * and its end, so each interval between two ticks goes to the call running
 * when it ends: the times are those of a sampling profiler that samples every
 * PYJ_PROF_TICK_US, weighted by the real time between samples; the counts
 * stay exact. A call shorter than a tick is timed 0 or one tick, right on
 * average over many calls.
 *
 * "tsc": the time-stamp counter itself, exact per call (converted to seconds
 * at a rate calibrated against CLOCK_MONOTONIC, _eval.pyx ticks_per_second).
 *
 * The clock is chosen while the profiler is off (a call timed by one clock
 * must end on the same one). */
#ifndef PYJION_PROFILE_CLOCK_H
#define PYJION_PROFILE_CLOCK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "helper_thread.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define PYJ_PROF_TICK_US 100

static inline uint64_t pyj_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct {
    _Atomic uint64_t now;    /* the ticks clock: monotonic ns at the last tick */
    int exact;               /* 1: pyj_ticks() reads the time-stamp counter */
    pthread_t thread;
    int running;             /* the ticking thread exists (changed with the GIL held) */
    atomic_int stop;
} PyjProfClock;

static PyjProfClock pyj_prof_clock;

/* The time on the clock `exact` says (a constant where the profiler's hot
 * paths are made once per clock: profiler.h). */
static inline __attribute__((always_inline)) uint64_t pyj_ticks_on(int exact)
{
#if defined(__x86_64__)
    if (exact) return __rdtsc();
#else
    if (exact) return pyj_monotonic_ns();
#endif
    return atomic_load_explicit(&pyj_prof_clock.now, memory_order_relaxed);
}

static inline uint64_t pyj_ticks(void)
{
    return pyj_ticks_on(pyj_prof_clock.exact);
}

/* Ticks per second of the ticks clock (the exact one is calibrated). */
#define PYJ_PROF_TICKS_CLOCK_RATE 1e9

static void *pyj_prof_clock_main(void *arg)
{
    PyjProfClock *c = (PyjProfClock *)arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (!atomic_load(&c->stop)) {
        next.tv_nsec += PYJ_PROF_TICK_US * 1000;
        if (next.tv_nsec >= 1000000000) {
            next.tv_nsec -= 1000000000;
            next.tv_sec++;
        }
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        uint64_t now = pyj_monotonic_ns();
        atomic_store_explicit(&c->now, now, memory_order_relaxed);
        /* Late (the machine is busy): the next tick is a full interval away. */
        uint64_t due = (uint64_t)next.tv_sec * 1000000000u + (uint64_t)next.tv_nsec;
        if (now > due + PYJ_PROF_TICK_US * 1000u) {
            next.tv_sec = (time_t)(now / 1000000000u);
            next.tv_nsec = (long)(now % 1000000000u);
        }
    }
    return NULL;
}

/* Starts the ticking (GIL held) unless the exact clock is chosen or it
 * ticks already; 0 on success. */
static int pyj_prof_clock_start(void)
{
    PyjProfClock *c = &pyj_prof_clock;
    if (c->exact || c->running) return 0;
    atomic_store(&c->now, pyj_monotonic_ns());
    atomic_store(&c->stop, 0);
    if (pyj_helper_thread_start(&c->thread, pyj_prof_clock_main, c) != 0) return -1;
    c->running = 1;
    return 0;
}

/* Stops and joins the ticking thread (GIL held; it never takes the GIL). */
static void pyj_prof_clock_stop(void)
{
    PyjProfClock *c = &pyj_prof_clock;
    if (!c->running) return;
    atomic_store(&c->stop, 1);
    pthread_join(c->thread, NULL);
    c->running = 0;
}

/* In a child after fork(): the thread did not come along. Returns whether it
 * ran in the parent (the caller starts it again). */
static int pyj_prof_clock_forget_after_fork(void)
{
    int was_running = pyj_prof_clock.running;
    pyj_prof_clock.running = 0;
    return was_running;
}

#endif
