/* The one interface between the hook (_eval) and the code generator (_codegen).
 *
 * _codegen publishes a PyjionCodegenAPI struct in the capsule
 * "pyjion._codegen._C_API". _eval only ever sees a function pointer to call and
 * an owner object that keeps the machine code alive; it knows nothing of AsmJit.
 */
#ifndef PYJION_CODEGEN_API_H
#define PYJION_CODEGEN_API_H

#include <Python.h>

#ifdef __cplusplus
extern "C" {
#endif

struct _PyInterpreterFrame;

/* Same signature as a PEP 523 eval function: compiled code is entered exactly
 * where _PyEval_EvalFrameDefault would have been. */
typedef PyObject *(*PyjionEntry)(PyThreadState *ts, struct _PyInterpreterFrame *frame, int throwflag);

#define PYJION_CODEGEN_API_VERSION 20

/* Outcome kinds, mirrored by pyjion.CompilationResult. */
enum {
    PYJION_RESULT_SUCCESS = 1,
    PYJION_RESULT_COMPILER_ERROR = 10,
    PYJION_RESULT_JIT_FAILURE = 11,
    PYJION_RESULT_STACK_EFFECT_FAULT = 12,
    PYJION_RESULT_TOO_LARGE = 101,
    PYJION_RESULT_UNSUPPORTED_OPCODE = 110,
};

typedef struct {
    int debug;               /* verify the modelled stack depth at every bytecode boundary */
    int max_instructions;    /* larger code objects stay in the interpreter (0: no limit) */
    /* Code objects longer than this (code units, inline caches included) make
     * their inline-cache sites compact: calls of shared stubs
     * (codegen/baseline/site_stubs.h). 0: every code object; -1: the default. */
    int compact_above;
    /* The optimising tier (codegen/opt/): unboxed ints and floats where the
     * types and the interpreter's profile allow. 0: baseline code only; 1:
     * code that ran warm in the interpreter, where the tier's code pays; 2:
     * wherever it unboxes anything. */
    int opt;
    /* The code is hot by time (the sampler found it running interpreted,
     * often in a long loop that 3.11 never quickens): the optimising tier may
     * compile it on the types it can prove without a profile. */
    int hot;
    /* The types the hook saw for the first arguments (its type profile), 2
     * bits per argument, argument i at bits 2i and 2i+1: PYJION_ARG_INT (an
     * exact int each time), PYJION_ARG_FLOAT (an exact float each time), 0
     * (anything else, or not seen). The optimising tier takes them for
     * granted behind a check at entry. */
    unsigned int arg_types;
    /* Baseline code that the optimising tier's code of the same code object
     * falls back to (PyjionCodeView.fallback_resume): its osr_entry takes any
     * code unit where an instruction starts, not only loop headers. */
    int fallback;
} PyjionCompileOptions;

enum {
    PYJION_ARG_INT = 1,
    PYJION_ARG_FLOAT = 2,
    PYJION_ARG_TYPE_BITS = 2,
    PYJION_MAX_TYPED_ARGS = 16,
};

typedef struct {
    int result;              /* PYJION_RESULT_* */
    PyjionEntry entry;       /* set on success */
    PyObject *owner;         /* new reference on success: keeps the machine code alive */
    PyObject *reason;        /* new reference (str) on failure */
    Py_ssize_t code_size;    /* bytes of machine code */
    Py_ssize_t instructions; /* bytecode instructions compiled (0 if the caller's struct predates it) */
    /* On-stack replacement: enters the machine code in the middle of a frame
     * that the interpreter has run up to a loop header. Same signature as
     * `entry`, but the third argument is the header's code unit (a value of
     * osr_header), not throwflag. NULL when the code has no loops. */
    PyjionEntry osr_entry;
    int tier;                /* 1 baseline, 2 optimising tier (set on success) */
} PyjionCompileResult;

/* What machine code and codegen/ read of the hook's per-code record: the
 * record's first member (record.h), so the pointer in the code's extra slot is
 * also a PyjionCodeView pointer. The rest of the record is the hook's alone.
 * A change here is a change of PYJION_CODEGEN_API_VERSION. */
enum {
    PYJION_CODE_INTERPRETED = 0,
    PYJION_CODE_COMPILING = 1,
    PYJION_CODE_COMPILED = 2,
    PYJION_CODE_FAILED = 3,
    /* Machine code to be replaced at the next call the hook sees (direct
     * calls go through the hook): code compiled before any profile (eager
     * mode's first call), compiled again with the next call's profile
     * (Pyjion 2.0's profile-guided stages, info(f).pgc 1 -> 2); or the
     * optimising tier's code given up (PYJION_CODE_NO_OPT), compiled again
     * as baseline code. */
    PYJION_CODE_PROFILING = 4,
};

/* PyjionCodeView.flags */
enum {
    /* The optimising tier's code took too many side exits: its next
     * compile, at its next call, is baseline code (runtime/unboxed.cpp,
     * retire). */
    PYJION_CODE_NO_OPT = 1,
};

typedef struct {
    uint64_t calls;           /* calls and resumes: the hook's and compiled code's direct ones */
    int state;                /* PYJION_CODE_* */
    int flags;                /* PYJION_CODE_NO_OPT */
    PyjionEntry entry;        /* the machine code's entry while state is COMPILED */
    /* The OSR-style entry (ts, frame, code unit) of baseline code of the same
     * code object (PyjionCompileOptions.fallback), where the optimising
     * tier's code goes on when it cannot: the frames its side exits leave
     * at an instruction, and the calls whose arguments fail its entry
     * checks, at the first. NULL: the interpreter does. */
    PyjionEntry fallback_resume;
} PyjionCodeView;

/* Room for one profiled C call's context (the hook's PyjCallContext), kept
 * on the calling C function's stack. */
typedef struct {
    uint64_t opaque[10];
} PyjionProfCall;

/* Where the profiler keeps a call's state, for machine code that times a
 * call itself on the hot path (the 3.11 direct-call stub): a call under an
 * exact call, of the callee the caller's call sequence expects, on the
 * ticks clock; any other case goes to call_begin/call_end. The offsets are
 * into the hook's own structures (profiler.h, call_tree.h, record.h);
 * tree_nodes is NULL until the hook filled them in. */
typedef struct {
    int inline_ok;                   /* the ticks clock: the hot path may be taken */
    int32_t current_call_tls;        /* the thread's current context, fs-relative */
    const uint64_t *generation;      /* the statistics generation */
    void *const *tree_nodes;         /* where the tree keeps its node array */
    const uint64_t *ticks;           /* the ticks clock's reading */
    /* a context (in a PyjionProfCall) */
    int32_t ctx_prev, ctx_prof, ctx_code, ctx_start, ctx_child_ticks, ctx_generation, ctx_exact_generation,
        ctx_node;
    /* a tree node, 1 << node_shift bytes */
    int32_t node_shift, node_code, node_last_child, node_next_hint, node_calls;
    /* a record's profile (from its view) and its uint32 counts */
    int32_t rec_prof, prof_active, prof_listed;
} PyjionProfLayout;

/* What machine code needs to know of the hook to call compiled code directly
 * (codegen/runtime/direct_call.cpp); the hook keeps it up to date. */
typedef struct {
    Py_ssize_t record_index;  /* code-extra index of the hook's records (-1: none yet) */
    /* The hook's frame evaluator. Direct calls are made only while it is the
     * interpreter's (interp->eval_frame): not after disable(), nor while
     * another PEP 523 function has taken its place. */
    void *evaluator;
    /* The profiler runs: machine code's direct calls and resumes of
     * compiled code time each call with call_begin and call_end. */
    int profiling;
    /* Runs a frame in CPython's interpreter (machine code hands a frame over
     * when tracing starts). The hook's version knows its loop-header traps
     * (tiering.h); NULL: _PyEval_EvalFrameDefault. */
    PyjionEntry interpret;
    /* pyjion is enabled: a function whose vectorcall is pyjion's runs its
     * machine code (3.13 enters compiled code that way, with or without the
     * hook); 0 after disable(), when such calls run in the interpreter. */
    int enabled;
    /* The profiler's view of calls made by machine code (the hook's
     * profiler.h; set with `profiling`). Each call it counts is timed
     * between a begin that returned 1, which fills `ctx`, and call_end(ctx)
     * once the call returned; nested calls end in reverse order. Need the
     * GIL.
     * c_call_begin: for a call of `callable` with `args` (nargs positional)
     * if cProfile counts it (a builtin function, or a method descriptor
     * called with self).
     * call_begin: for running `view`'s machine code on `frame` (its
     * function's call or a generator's resume, never the call that makes a
     * generator); 0 for a frame the recursion limit refuses (its machine
     * code raises RecursionError, uncounted).
     * c_call_key: what a call cache keeps of a C callable it calls (a
     * builtin function, or a method descriptor it calls with a self of the
     * descriptor's class) to begin timing its calls with c_call_begin_key
     * (always counted); NULL for a callable whose calls cProfile does not
     * count.
     * c_call_count: counts one call of the C function whose entry `key` is
     * (c_call_key) under the current call, with no time of its own: for C
     * functions that never call back into Python (list.append), made inline
     * by machine code; NULL while the profiler's clock is exact, where such
     * calls are timed with c_call_begin_key/call_end instead. */
    int (*c_call_begin)(PyjionProfCall *ctx, PyObject *callable, PyObject *const *args, Py_ssize_t nargs);
    void *(*c_call_key)(PyObject *callable);
    void (*c_call_begin_key)(PyjionProfCall *ctx, void *key);
    int (*call_begin)(PyjionProfCall *ctx, PyThreadState *ts, struct _PyInterpreterFrame *frame,
                      PyjionCodeView *view);
    void (*call_end)(PyjionProfCall *ctx);
    void (*c_call_count)(void *key);
    /* run_timed: runs `view`'s machine code on `frame` (as call_begin
     * describes) timed between call_begin and call_end in one call: what the
     * runtime's C++ paths (generator resumes, direct calls the stub did not
     * take) call while profiling. */
    PyObject *(*run_timed)(PyjionCodeView *view, PyThreadState *ts, struct _PyInterpreterFrame *frame);
    PyjionProfLayout prof_layout;
} PyjionHookState;

typedef struct {
    int version;
    /* Compiles `code` (a PyCodeObject). Returns 0 and fills `out` whether or not
     * the code could be compiled; returns -1 with a Python exception set only on
     * an internal error (out of memory). Needs the GIL. */
    int (*compile)(PyObject *code, const PyjionCompileOptions *options, PyjionCompileResult *out);
    PyjionHookState *hook;
    /* The loop to enter machine code at, for a frame of the code compiled into
     * `owner` whose prev_instr is code unit `unit`: the landing unit of the
     * header of the innermost loop around `unit` (and *depth, the value-stack
     * depth there), or -1 if `unit` is in no loop the machine code can enter. */
    int (*osr_header)(PyObject *owner, int unit, int *depth);
    /* A Python function's vectorcall that calls it as _PyFunction_Vectorcall
     * does, but pushes the frame itself and enters compiled code without
     * _PyEval_Vector and the hook (codegen/runtime/direct_call.h). The hook gives it
     * to the functions whose frames it sees: interpreted callers (CALL's
     * generic path while a PEP 523 function is installed) and C callers reach
     * them through it. */
    vectorcallfunc vectorcall;
    /* CPython's own vectorcall of Python functions (_PyFunction_Vectorcall,
     * which 3.13 does not export): what a function whose vectorcall is
     * neither pyjion's nor someone else's has (function_entry.h). */
    vectorcallfunc cpython_vectorcall;
} PyjionCodegenAPI;

#ifdef __cplusplus
}
#endif

#endif
