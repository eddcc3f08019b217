// The direct call of a Python function from machine code (see direct_call.h):
// one stub per process holds the whole sequence (every check a few loads and
// compares, the callee's frame filled in place, only the release of the
// finished frame a C call); each CALL site only loads three registers and
// calls it. Inlined at every site, the sequence was ~490 bytes per CALL, a
// quarter of all machine code (docs/code-size.md). Cases it does not take
// (defaults to fill in, a full data-stack chunk, a callee not compiled yet,
// a tracer active) go to the site's generic path, which
// still calls directly where it can (direct::try_call).
#include "baseline/compiler.h"
#include "baseline/direct_call_emit.h"
#include "runtime/direct_call.h"
#include "machine/code_heap.h"
#include "machine/perf_map.h"
#include "cpython/interp_state.h"

#include "code_extra.h"

#include <cstddef>

namespace pyjion {

using namespace asmjit;

namespace {

constexpr int32_t kFrameSlots = FRAME_SPECIALS_SIZE;

// Frame fields the sequence writes (the rest are in frame_layout.h).
constexpr int32_t kFrameCode = offsetof(_PyInterpreterFrame, f_code);
constexpr int32_t kFrameLocals = offsetof(_PyInterpreterFrame, f_locals);
constexpr int32_t kFrameObj = offsetof(_PyInterpreterFrame, frame_obj);
constexpr int32_t kFrameOwner = offsetof(_PyInterpreterFrame, owner);

}  // namespace

namespace {

// The profiler's state as machine code reaches it (PyjionProfLayout).
const PyjionProfLayout &prof_layout() { return direct::hook_state.prof_layout; }

x86::Mem current_call()
{
    x86::Mem m = x86::qword_ptr_abs(static_cast<uint64_t>(static_cast<int64_t>(prof_layout().current_call_tls)));
    m.setSegment(x86::fs);
    return m;
}

// The hot path of PyjionHookState.call_begin, for the context at rsp and
// the callee's frame (r15) and view (r14), as profiler.h's push does it: on
// the ticks clock, for a frame the recursion limit lets run, of a code the
// profiler lists already, called under an exact call whose call sequence
// expects this code next; every other case jumps to `hook` with nothing
// changed. r8 = &direct::hook_state. Clobbers caller-saved registers.
// Returns false (nothing emitted) before the hook told where its state is.
bool emit_profiled_begin(Emitter &em, const Label &hook)
{
    const PyjionProfLayout &l = prof_layout();
    if (l.tree_nodes == nullptr) return false;
    auto &a = em.as();
    constexpr int32_t kInlineOk = offsetof(PyjionHookState, prof_layout) + offsetof(PyjionProfLayout, inline_ok);
    a.cmp(x86::dword_ptr(x86::r8, kInlineOk), 0);
    a.je(hook);
    a.cmp(x86::dword_ptr(Emitter::tstate, offsetof(PyThreadState, recursion_remaining)), 0);
    a.jle(hook);
    a.cmp(x86::dword_ptr(x86::r14, l.rec_prof + l.prof_listed), 0);
    a.je(hook);
    // rax = the caller's context, rdx = the generation
    a.mov(x86::rax, current_call());
    a.test(x86::rax, x86::rax);
    a.jz(hook);
    em.load_address(x86::rcx, l.generation);
    a.mov(x86::rdx, x86::qword_ptr(x86::rcx));
    a.cmp(x86::qword_ptr(x86::rax, l.ctx_exact_generation), x86::rdx);
    a.jne(hook);
    // rsi = the nodes, rcx = the caller's node, r10 = the callee's code;
    // edi = the child the caller's sequence expects, or the last one called
    // if it is called again (call_tree.h pyj_tree_child)
    Label again = a.newLabel(), found = a.newLabel();
    em.load_address(x86::rsi, l.tree_nodes);
    a.mov(x86::rsi, x86::qword_ptr(x86::rsi));
    a.mov(x86::ecx, x86::dword_ptr(x86::rax, l.ctx_node));
    a.shl(x86::rcx, l.node_shift);
    a.add(x86::rcx, x86::rsi);
    a.mov(x86::r10, x86::qword_ptr(x86::r15, kFrameCode));
    a.mov(x86::r8d, x86::dword_ptr(x86::rcx, l.node_last_child));
    a.cmp(x86::r8d, -1);
    a.je(hook);
    a.shl(x86::r8, l.node_shift);
    a.mov(x86::edi, x86::dword_ptr(x86::rsi, x86::r8, 0, l.node_next_hint));
    a.cmp(x86::edi, -1);
    a.je(again);
    a.mov(x86::r11, x86::rdi);
    a.shl(x86::r11, l.node_shift);
    a.cmp(x86::qword_ptr(x86::rsi, x86::r11, 0, l.node_code), x86::r10);
    a.jne(again);
    a.mov(x86::dword_ptr(x86::rcx, l.node_last_child), x86::edi);
    a.jmp(found);
    a.bind(again);
    a.cmp(x86::qword_ptr(x86::rsi, x86::r8, 0, l.node_code), x86::r10);
    a.jne(hook);
    a.mov(x86::edi, x86::dword_ptr(x86::rcx, l.node_last_child));
    // Taken: the context is filled in.
    a.bind(found);
    a.mov(x86::qword_ptr(x86::rsp, l.ctx_prev), x86::rax);
    a.lea(x86::rax, x86::ptr(x86::r14, l.rec_prof));
    a.mov(x86::qword_ptr(x86::rsp, l.ctx_prof), x86::rax);
    a.inc(x86::dword_ptr(x86::rax, l.prof_active));
    a.mov(x86::qword_ptr(x86::rsp, l.ctx_code), x86::r10);
    a.mov(x86::qword_ptr(x86::rsp, l.ctx_child_ticks), 0);
    a.mov(x86::qword_ptr(x86::rsp, l.ctx_generation), x86::rdx);
    a.mov(x86::qword_ptr(x86::rsp, l.ctx_exact_generation), x86::rdx);
    a.mov(x86::dword_ptr(x86::rsp, l.ctx_node), x86::edi);
    a.mov(current_call(), x86::rsp);
    em.load_address(x86::rax, l.ticks);
    a.mov(x86::rax, x86::qword_ptr(x86::rax));
    a.mov(x86::qword_ptr(x86::rsp, l.ctx_start), x86::rax);
    return true;
}

// The hot path of PyjionHookState.call_end for the context at rsp, begun
// here or by call_begin: an exact call in whose time no tick of the clock
// fell only counts in its node (profiler.h); any other jumps to `hook` with
// nothing changed. Keeps r14 (the result); clobbers rax, rcx, rdx.
void emit_profiled_end(Emitter &em, const Label &hook)
{
    const PyjionProfLayout &l = prof_layout();
    auto &a = em.as();
    em.load_address(x86::rax, &direct::hook_state.prof_layout.inline_ok);
    a.cmp(x86::dword_ptr(x86::rax), 0);
    a.je(hook);
    em.load_address(x86::rax, l.ticks);
    a.mov(x86::rax, x86::qword_ptr(x86::rax));
    a.cmp(x86::rax, x86::qword_ptr(x86::rsp, l.ctx_start));
    a.jne(hook);
    em.load_address(x86::rcx, l.generation);
    a.mov(x86::rdx, x86::qword_ptr(x86::rcx));
    a.cmp(x86::qword_ptr(x86::rsp, l.ctx_exact_generation), x86::rdx);
    a.jne(hook);
    a.mov(x86::rax, x86::qword_ptr(x86::rsp, l.ctx_prev));
    a.mov(current_call(), x86::rax);
    a.mov(x86::rax, x86::qword_ptr(x86::rsp, l.ctx_prof));
    a.dec(x86::dword_ptr(x86::rax, l.prof_active));
    a.mov(x86::eax, x86::dword_ptr(x86::rsp, l.ctx_node));
    a.shl(x86::rax, l.node_shift);
    em.load_address(x86::rcx, l.tree_nodes);
    a.add(x86::rax, x86::qword_ptr(x86::rcx));
    a.inc(x86::qword_ptr(x86::rax, l.node_calls));
}

// The stub's contract (it runs in the caller's context: rbx, r12 and r13 are
// the caller's frame, thread state and code base, Emitter's fixed registers):
//   in:  rsi = address of value-stack slot `base`, [NULL, func, args...] or
//        [method, self, args...]; edx = the CALL's oparg; rcx = the value the
//        caller's prev_instr takes if the call is made (its last cache entry)
//   nargs: the oparg the stub is made for (edx equals it), or -1: any oparg
//   out: rax = the result (NULL with an exception set), or kNotTaken with
//        nothing changed; caller-saved registers, r14 and r15 clobbered.
constexpr int32_t kNotTaken = 1;

void emit_stub(Emitter &em, int nargs)
{
    auto &a = em.as();
    Label generic = a.newLabel(), is_method = a.newLabel(), selected = a.newLabel();
    Label copy_loop = a.newLabel(), copy_done = a.newLabel(), null_loop = a.newLabel(), nulls_done = a.newLabel();

    // The return address left rsp 8 off the ABI's 16-byte alignment: the
    // saved prev_instr value restores it for the calls below.
    a.push(x86::rcx);

    // rdi = the callable, rsi = its first argument, edx = the argument count.
    a.mov(x86::rdi, x86::qword_ptr(x86::rsi));
    a.test(x86::rdi, x86::rdi);
    a.jnz(is_method);
    a.mov(x86::rdi, x86::qword_ptr(x86::rsi, 8));
    a.add(x86::rsi, 16);
    a.jmp(selected);
    a.bind(is_method);
    a.add(x86::rsi, 8);
    a.inc(x86::edx);
    a.bind(selected);

    // A plain Python function (direct::plain_vectorcall) whose code takes
    // exactly these positional arguments and makes no generator.
    em.load_address(x86::rax, &PyFunction_Type);
    a.cmp(x86::qword_ptr(x86::rdi, layout::kObjectType), x86::rax);
    a.jne(generic);
    Label plain = a.newLabel();
    a.mov(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(PyFunctionObject, vectorcall)));
    em.load_address(x86::rax, reinterpret_cast<const void *>(&direct::vectorcall));
    a.cmp(x86::rcx, x86::rax);
    a.je(plain);
    em.load_address(x86::rax, reinterpret_cast<const void *>(&_PyFunction_Vectorcall));
    a.cmp(x86::rcx, x86::rax);
    a.jne(generic);
    a.bind(plain);
    a.mov(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(PyFunctionObject, func_code)));
    a.mov(x86::eax, x86::dword_ptr(x86::rcx, offsetof(PyCodeObject, co_flags)));
    a.and_(x86::eax, direct::kTakesVarArgs | direct::kMakesGenerator | CO_OPTIMIZED);
    a.cmp(x86::eax, CO_OPTIMIZED);
    a.jne(generic);
    a.cmp(x86::dword_ptr(x86::rcx, offsetof(PyCodeObject, co_argcount)), x86::edx);
    a.jne(generic);
    a.cmp(x86::dword_ptr(x86::rcx, offsetof(PyCodeObject, co_kwonlyargcount)), 0);
    a.jne(generic);

    // Its record says compiled, and the hook need not see the call (as in
    // entry_record in direct_call.cpp): the frame evaluator, no tracer.
    em.load_address(x86::r8, &direct::hook_state);
    a.mov(x86::rax, x86::qword_ptr(Emitter::tstate, offsetof(PyThreadState, interp)));
    a.mov(x86::rax, x86::qword_ptr(x86::rax, static_cast<int32_t>(pyj_interp_eval_frame_offset())));
    a.test(x86::rax, x86::rax);
    a.jz(generic);
    a.cmp(x86::rax, x86::qword_ptr(x86::r8, offsetof(PyjionHookState, evaluator)));
    a.jne(generic);
    a.mov(x86::r10, x86::qword_ptr(x86::r8, offsetof(PyjionHookState, record_index)));
    a.test(x86::r10, x86::r10);
    a.js(generic);
    a.mov(x86::r9, x86::qword_ptr(x86::rcx, offsetof(PyCodeObject, co_extra)));
    a.test(x86::r9, x86::r9);
    a.jz(generic);
    a.cmp(x86::r10, x86::qword_ptr(x86::r9, offsetof(PyjCodeExtraLayout, ce_size)));
    a.jge(generic);
    a.mov(x86::r9, x86::qword_ptr(x86::r9, x86::r10, 3, offsetof(PyjCodeExtraLayout, ce_extras)));
    a.test(x86::r9, x86::r9);
    a.jz(generic);
    a.cmp(x86::dword_ptr(x86::r9, offsetof(PyjionCodeView, state)), PYJION_CODE_COMPILED);
    a.jne(generic);
    a.mov(x86::rax, x86::qword_ptr(Emitter::tstate, layout::kTstateCFrame));
    a.cmp(x86::byte_ptr(x86::rax, layout::kCFrameUseTracing), 0);
    a.jne(generic);

    // The C stack guard: below this thread's floor (or before it is
    // measured) the generic path decides.
    x86::Mem floor = x86::qword_ptr_abs(static_cast<uint64_t>(static_cast<int64_t>(direct::cstack_floor_tls_offset())));
    floor.setSegment(x86::fs);
    a.mov(x86::rax, floor);
    a.test(x86::rax, x86::rax);
    a.jz(generic);
    a.cmp(x86::rsp, x86::rax);
    a.jb(generic);

    // Room for the frame in the current data-stack chunk (as 3.11 sizes it).
    a.mov(x86::eax, x86::dword_ptr(x86::rcx, offsetof(PyCodeObject, co_nlocalsplus)));
    a.add(x86::eax, x86::dword_ptr(x86::rcx, offsetof(PyCodeObject, co_stacksize)));
    a.add(x86::eax, kFrameSlots);
    a.mov(x86::r10, x86::qword_ptr(Emitter::tstate, offsetof(PyThreadState, datastack_top)));
    a.test(x86::r10, x86::r10);
    a.jz(generic);
    a.lea(x86::r11, x86::ptr(x86::r10, x86::rax, 3));
    a.cmp(x86::r11, x86::qword_ptr(Emitter::tstate, offsetof(PyThreadState, datastack_limit)));
    a.jae(generic);

    // Committed. The frame at r10 takes the callable's and the arguments'
    // references, as _PyFrame_InitializeSpecials and the interpreter's CALL do.
    a.mov(x86::qword_ptr(Emitter::tstate, offsetof(PyThreadState, datastack_top)), x86::r11);
    a.mov(x86::qword_ptr(x86::r10, layout::kFrameFunc), x86::rdi);
    em.incref(x86::rcx);
    a.mov(x86::qword_ptr(x86::r10, kFrameCode), x86::rcx);
    a.mov(x86::rax, x86::qword_ptr(x86::rdi, offsetof(PyFunctionObject, func_builtins)));
    a.mov(x86::qword_ptr(x86::r10, layout::kFrameBuiltins), x86::rax);
    a.mov(x86::rax, x86::qword_ptr(x86::rdi, offsetof(PyFunctionObject, func_globals)));
    a.mov(x86::qword_ptr(x86::r10, layout::kFrameGlobals), x86::rax);
    a.mov(x86::qword_ptr(x86::r10, kFrameLocals), 0);
    a.mov(x86::eax, x86::dword_ptr(x86::rcx, offsetof(PyCodeObject, co_nlocalsplus)));
    a.mov(x86::dword_ptr(x86::r10, layout::kFrameStackTop), x86::eax);
    a.mov(x86::qword_ptr(x86::r10, kFrameObj), 0);
    a.lea(x86::r11, x86::ptr(x86::rcx, static_cast<int32_t>(offsetof(PyCodeObject, co_code_adaptive)) - 2));
    a.mov(x86::qword_ptr(x86::r10, layout::kFrameInstr), x86::r11);
    a.mov(x86::byte_ptr(x86::r10, layout::kFrameIsEntry), 0);
    a.mov(x86::byte_ptr(x86::r10, kFrameOwner), FRAME_OWNED_BY_THREAD);
    // localsplus[0 .. edx) = the arguments; the rest (eax slots in all) NULL.
    // (edx <= eax: the arguments are the code's first locals.) A stub made
    // for a known oparg copies them unrolled (a method call has one more).
    if (nargs >= 0) {
        for (int i = 0; i <= nargs; i++) {
            if (i == nargs) {
                a.cmp(x86::edx, nargs);
                a.je(copy_done);
            }
            a.mov(x86::r11, x86::qword_ptr(x86::rsi, 8 * i));
            a.mov(x86::qword_ptr(x86::r10, layout::local_offset(i)), x86::r11);
        }
        a.bind(copy_done);
        a.mov(x86::r8d, x86::edx);
    } else {
        a.xor_(x86::r8d, x86::r8d);
        a.bind(copy_loop);
        a.cmp(x86::r8d, x86::edx);
        a.jge(copy_done);
        a.mov(x86::r11, x86::qword_ptr(x86::rsi, x86::r8, 3));
        a.mov(x86::qword_ptr(x86::r10, x86::r8, 3, layout::kFrameLocalsPlus), x86::r11);
        a.inc(x86::r8d);
        a.jmp(copy_loop);
        a.bind(copy_done);
    }
    a.bind(null_loop);
    a.cmp(x86::r8d, x86::eax);
    a.jge(nulls_done);
    a.mov(x86::qword_ptr(x86::r10, x86::r8, 3, layout::kFrameLocalsPlus), 0);
    a.inc(x86::r8d);
    a.jmp(null_loop);
    a.bind(nulls_done);

    // Enter the callee's machine code; the traceback of an exception coming
    // out of it names the caller's CALL (its last cache entry), as in the
    // interpreter.
    Label profiled = a.newLabel(), returned = a.newLabel(), finish = a.newLabel();
    a.inc(x86::qword_ptr(x86::r9, offsetof(PyjionCodeView, calls)));
    a.mov(x86::rax, x86::qword_ptr(x86::rsp));
    a.mov(Emitter::frame_q(layout::kFrameInstr), x86::rax);
    a.mov(x86::r15, x86::r10);
    em.load_address(x86::r8, &direct::hook_state);
    a.cmp(x86::dword_ptr(x86::r8, offsetof(PyjionHookState, profiling)), 0);
    a.jne(profiled);
    a.mov(x86::rdi, Emitter::tstate);
    a.mov(x86::rsi, x86::r10);
    a.xor_(x86::edx, x86::edx);
    a.call(x86::qword_ptr(x86::r9, offsetof(PyjionCodeView, entry)));
    a.bind(returned);
    a.mov(x86::r14, x86::rax);
    a.bind(finish);
    a.mov(x86::rdi, Emitter::tstate);
    a.mov(x86::rsi, x86::r15);
    em.call(reinterpret_cast<const void *>(&direct::finish_frame), "direct::finish_frame");
    a.mov(x86::rax, x86::r14);
    a.add(x86::rsp, 8);
    a.ret();

    // While the profiler runs, the call is timed around the machine code,
    // its context in a PyjionProfCall on this stack (a multiple of 16 bytes:
    // the calls stay aligned); r14 keeps the callee's view. The hot cases
    // are timed here (emit_profiled_begin/end), the rest by the hook
    // (call_begin/call_end). A frame call_begin refuses runs untimed.
    static_assert(sizeof(PyjionProfCall) % 16 == 0, "the context keeps the stack aligned");
    constexpr int32_t kCtxSize = sizeof(PyjionProfCall);
    Label untimed = a.newLabel(), hook_begin = a.newLabel(), begun = a.newLabel();
    Label hook_end = a.newLabel(), ended = a.newLabel();
    a.bind(profiled);
    a.mov(x86::r14, x86::r9);
    a.sub(x86::rsp, kCtxSize);
    bool timed_here = emit_profiled_begin(em, hook_begin);
    if (timed_here) a.jmp(begun);
    a.bind(hook_begin);
    a.mov(x86::rdi, x86::rsp);
    a.mov(x86::rsi, Emitter::tstate);
    a.mov(x86::rdx, x86::r15);
    a.mov(x86::rcx, x86::r14);
    em.load_address(x86::r8, &direct::hook_state);
    a.call(x86::qword_ptr(x86::r8, offsetof(PyjionHookState, call_begin)));
    a.test(x86::eax, x86::eax);
    a.jz(untimed);
    a.bind(begun);
    a.mov(x86::rdi, Emitter::tstate);
    a.mov(x86::rsi, x86::r15);
    a.xor_(x86::edx, x86::edx);
    a.call(x86::qword_ptr(x86::r14, offsetof(PyjionCodeView, entry)));
    a.mov(x86::r14, x86::rax);
    if (timed_here) {
        emit_profiled_end(em, hook_end);
        a.jmp(ended);
    }
    a.bind(hook_end);
    a.mov(x86::rdi, x86::rsp);
    em.load_address(x86::r8, &direct::hook_state);
    a.call(x86::qword_ptr(x86::r8, offsetof(PyjionHookState, call_end)));
    a.bind(ended);
    a.add(x86::rsp, kCtxSize);
    a.jmp(finish);
    a.bind(untimed);
    a.mov(x86::rdi, Emitter::tstate);
    a.mov(x86::rsi, x86::r15);
    a.xor_(x86::edx, x86::edx);
    a.call(x86::qword_ptr(x86::r14, offsetof(PyjionCodeView, entry)));
    a.add(x86::rsp, kCtxSize);
    a.jmp(returned);

    a.bind(generic);
    a.add(x86::rsp, 8);
    a.mov(x86::eax, kNotTaken);
    a.ret();
}

// One stub per oparg up to kUnrolledArgs (most calls), one for the rest
// that copies the arguments in a loop: ~10 instructions less per call than
// the loop. Each is made at the first compile that asks (GIL held) and kept
// for the life of the process; nullptr if it could not be made (those calls
// then take the generic path).
constexpr int kUnrolledArgs = 4;

const void *shared_stub(int oparg)
{
    int which = oparg <= kUnrolledArgs ? oparg : kUnrolledArgs + 1;
    static bool tried[kUnrolledArgs + 2];
    static void *stubs[kUnrolledArgs + 2];
    if (tried[which]) return stubs[which];
    tried[which] = true;
    asmjit::CodeHolder holder;
    holder.init(asmjit::Environment::host());
    Emitter em(holder, 0);
    emit_stub(em, which <= kUnrolledArgs ? which : -1);
    void *entry = nullptr;
    size_t size = 0;
    if (code_heap::place(holder, &entry, &size) == asmjit::kErrorOk) {
        stubs[which] = entry;
        perf_map::record_lasting(entry, size, "pyjion::direct_call_stub_" + std::to_string(which));
    }
    return stubs[which];
}

}  // namespace

void emit_direct_call(Compiler &c, int base, int nargs, int cache_unit, const Label &generic, const Label &done)
{
    auto &a = c.as();
    auto &em = c.em();
    const void *stub = shared_stub(nargs);
    if (stub == nullptr) {
        a.jmp(generic);
        return;
    }
    a.lea(x86::rsi, em.stack(base));
    a.mov(x86::edx, nargs);
    a.lea(x86::rcx, x86::ptr(Emitter::first_instr, cache_unit * 2));
    em.call(stub, "direct call stub");
    a.cmp(x86::rax, kNotTaken);
    if (done.isValid()) {
        a.jne(done);
        a.jmp(generic);
    } else {
        a.je(generic);
    }
}

}  // namespace pyjion
