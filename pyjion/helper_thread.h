/* The hook's helper threads (the tiering sampler, tiering.h; the profiler's
 * clock, profile_clock.h): plain C threads that never take the GIL and
 * never run Python code. */
#ifndef PYJION_HELPER_THREAD_H
#define PYJION_HELPER_THREAD_H

#include <pthread.h>
#include <signal.h>

/* Starts `main(arg)` on a small stack with every signal blocked (the thread
 * inherits the mask: signals go to the interpreter's threads, Ctrl-C to the
 * main one). 0 on success. */
static int pyj_helper_thread_start(pthread_t *thread, void *(*main)(void *), void *arg)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = pthread_create(thread, &attr, main, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    return err;
}

#endif
