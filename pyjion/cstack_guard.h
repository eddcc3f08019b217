/* C stack guard for the hook.
 *
 * With a PEP 523 hook installed, CPython 3.11 no longer inlines Python-to-Python
 * calls: each nested call uses C stack. With a raised recursion limit, deep
 * recursion would overflow the C stack long before sys.getrecursionlimit() is
 * reached, so the hook raises RecursionError when less than a safety margin of
 * this thread's stack is left. */
#ifndef PYJION_CSTACK_GUARD_H
#define PYJION_CSTACK_GUARD_H

#include <Python.h>
#include <pthread.h>
#include <stdint.h>

#define PYJ_TLS __thread __attribute__((tls_model("initial-exec")))

static PYJ_TLS uintptr_t pyj_stack_floor;   /* lowest safe address; 0 = not yet measured */

static __attribute__((noinline, cold)) void pyj_measure_stack(void)
{
    pthread_attr_t attr;
    void *low = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &low, &size);
        pthread_attr_destroy(&attr);
    }
    if (low == NULL || size == 0) {
        pyj_stack_floor = 1;          /* unknown: never trip */
        return;
    }
    size_t margin = size / 4;
    if (margin > (1u << 20)) margin = 1u << 20;
    if (margin < (64u << 10)) margin = 64u << 10;
    pyj_stack_floor = (uintptr_t)low + margin;
}

/* True when this thread's C stack is nearly used up. */
static inline int pyj_cstack_low(void)
{
    char here;
    if (__builtin_expect(pyj_stack_floor == 0, 0)) {
        pyj_measure_stack();
    }
    return __builtin_expect((uintptr_t)&here < pyj_stack_floor, 0);
}

/* Returns 1 (with RecursionError set) when this thread's C stack is nearly used up. */
static inline int pyj_cstack_exhausted(void)
{
    if (pyj_cstack_low()) {
        PyErr_SetString(PyExc_RecursionError,
                        "maximum recursion depth exceeded (C stack nearly exhausted)");
        return 1;
    }
    return 0;
}

#endif
