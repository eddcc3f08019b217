#include "baseline/compiler.h"

#include <algorithm>

#include "codegen_api.h"
#include "front/opcodes.h"
#include "cpython/interp_state.h"
#include "runtime/runtime.h"
#include "runtime/runtime_slots.h"
#include "runtime/unboxed.h"
#include "baseline/specialize.h"
#include "machine/frame_emit.h"

namespace pyjion {

using namespace asmjit;


Compiler::Compiler(PyCodeObject *code, CodeHolder &holder, const CompileOptions &options)
    : code_(code), options_(options), bytecode_(code), bound_(bytecode_, code), em_(holder, code->co_nlocalsplus)
{
}

void Compiler::compile()
{
    int count = static_cast<int>(bytecode_.instrs().size());
    if (options_.max_instructions > 0 && count > options_.max_instructions) {
        throw CompileError{PYJION_RESULT_TOO_LARGE, "code object too large: " + std::to_string(count) +
                                                        " instructions (limit " +
                                                        std::to_string(options_.max_instructions) + ")"};
    }
    auto &a = em_.as();
    const auto &instrs = bytecode_.instrs();
    labels_.clear();
    tracing_exits_.clear();
    for (size_t k = 0; k < instrs.size(); k++) labels_.push_back(a.newLabel());
    fused_into_previous_.assign(instrs.size(), false);
    exit_return_ = a.newLabel();
    exit_error_ = a.newLabel();
    exit_unlinked_ = a.newLabel();
    exit_suspend_ = a.newLabel();
    exit_restore_ = a.newLabel();

    warmup_ = new_site_data<uint64_t>();
    // Compiled after the interpreter ran it: carry its warm-up count over.
    *warmup_ = layout::warmup_count(code_);
    // Speculation wants a profile: by default only code the interpreter
    // quickened (co_warmup reached 0) gets the tier, or code hot by time,
    // where it goes on the types it proves (no site has a profile there).
    // The hook's argument types are a profile too (eager mode's second
    // compile, code warm by calls).
    bool profiled = layout::interpreter_specialised(code_) || options_.hot || options_.arg_types != 0;
    find_loops();   // the tier weighs its code by them
    if (options_.opt && (options_.opt_always || profiled)) {
        tier_ = opt::UnboxedFrame::plan(*this, code_, bytecode_, profiled, options_.arg_types);
    }
    compact_ = Py_SIZE(code_) > options_.compact_above;
    entry_ = model::EntryStates(bytecode_, bound_, code_->co_nlocalsplus);
    frame_ = model::FrameState(code_->co_nlocalsplus);
    established_ = -1;
    if (options_.record_states) recorded_.assign(instrs.size(), std::string());
    emit_prologue();
    if (tier_) tier_->emit_entry_checks();
    const Instr *from = nullptr;   // the instruction that falls through to the next one, if any
    TracingState traced(*this);
    for (size_t k = 0; k < instrs.size(); k++) {
        const Instr &ins = instrs[k];
        if (tier_ && from != nullptr) tier_->fall_into(static_cast<int>(k));
        a.bind(labels_[k]);
        boundaries_.push_back(BoundaryMark{ins.offset(), ins.opcode, ins.oparg, labels_[k]});
        if (a.logger() != nullptr) comment_boundary(ins);
        establish_boundary(k, from);
        bool checked = traced.arrive(k, from != nullptr);
        from = nullptr;
        if (ins.depth < 0) continue;   // unreachable: nothing to emit
        cur_ = &ins;
        if (!checked && needs_tracing_check(k)) {
            emit_tracing_check(ins);
            checked = true;
        }
        fused_next_ = false;
        em_.begin_instr(ins.opcode);
        if (tier_ && tier_->emit(static_cast<int>(k))) {
            depth_ = tier_->depth();
        } else {
            dispatch(ins);
            if (tier_) tier_->after_baseline(static_cast<int>(fused_next_ ? k + 1 : k), depth_);
        }
        em_.end_instr();
        const Instr *last = &ins;
        checked = checked && !may_start_tracing(ins.opcode);
        if (fused_next_) {
            // The visitor also implemented the next instruction (e.g. COMPARE_OP + POP_JUMP).
            last = &instrs[++k];
            fused_into_previous_[k] = true;
            a.bind(labels_[k]);
            boundaries_.push_back(BoundaryMark{last->offset(), last->opcode, last->oparg, labels_[k]});
            if (a.logger() != nullptr) comment_boundary(*last);
            checked = checked && !may_start_tracing(last->opcode);
        }
        traced.leave(*last, checked || checks_tracing_last(ins.opcode));
        if (!ends_block(last->opcode)) {
            from = last;
            int expected = last->depth + stack_effect(last->opcode, last->oparg, false);
            if (depth() != expected) {
                throw CompileError{PYJION_RESULT_STACK_EFFECT_FAULT,
                                   std::string("modelled stack depth ") + std::to_string(depth()) + " != " +
                                       std::to_string(expected) + " after " + opcode_name(last->opcode) +
                                       " at offset " + std::to_string(last->offset())};
            }
        }
    }
    // Falling off the end cannot happen in valid bytecode; trap if it does.
    a.ud2();
    emit_osr_entry();
    emit_epilogue();
    em_.emit_cold();
}

// The frame model at the boundary of instruction number k, reached by
// fallthrough from `from` (nullptr: only by jumps, handlers, resumption or
// OSR, or not at all): with CompileOptions::debug, the depth
// that fallthrough brings must be the decoder's, and the machine code checks
// the frame against the model here at run time. The model is then
// re-established from the entry states, whatever the visitors left.
void Compiler::establish_boundary(size_t k, const Instr *from)
{
    const Instr &ins = bytecode_.instrs()[k];
    if (options_.debug && from != nullptr && frame_.depth() != ins.depth) {
        throw CompileError{PYJION_RESULT_STACK_EFFECT_FAULT,
                           "frame model: " + std::string(opcode_name(from->opcode)) + " at offset " +
                               std::to_string(from->offset()) + " falls through to offset " +
                               std::to_string(ins.offset()) + " with stack depth " +
                               std::to_string(frame_.depth()) + "; the decoder computed " +
                               std::to_string(ins.depth)};
    }
    if (ins.depth < 0) return;
    // (visitors never change the locals' kinds: those of the last boundary stand)
    entry_.establish(static_cast<int>(k), frame_, established_);
    established_ = static_cast<int>(k);
    if (tier_) {
        // The optimising tier's representation there: which slots it holds unboxed.
        tier_->at_boundary(static_cast<int>(k));
        tier_->mark_unboxed(frame_);
    }
    if (options_.record_states) recorded_[k] = frame_.describe();
    if (options_.debug) {
        model::Snapshot *expected = new_site_data<model::Snapshot>();
        *expected = frame_.snapshot(ins.start);
        em_.set_prev_instr(ins.index);
        em_.call<&rt::pyj_rt_debug_check_frame>(Lea(Emitter::frame_address()), expected);
    }
}

// The listing's line at a bytecode boundary (only with config(dump_asm=...)).
void Compiler::comment_boundary(const Instr &ins)
{
    em_.as().commentf("; ---- offset %d: %s %d (stack depth %d)%s at +0x%zx", ins.offset(), opcode_name(ins.opcode),
                      ins.oparg, ins.depth, ins.depth < 0 ? " unreachable" : "", em_.as().offset());
}

// Where compiled code checks whether tracing was switched on (sys.settrace,
// sys.setprofile) and hands the frame to the interpreter, so that the tracer
// sees what it sees on stock CPython: where a line event can be due (jump
// targets, and the first instruction of each line after an instruction that
// may have run Python code), before a return or yield (their events), and
// right after a call (where a debugger or profiler is usually started: the
// rest of that line then runs traced too, its opcode and C-call events
// included). Inside a line after any other instruction that runs Python code
// (a property, an operator's dunder) there is none: the interpreter would
// emit nothing there but opcode events (f_trace_opcodes) and C-call events
// before the line's end, and the frame is handed over at the next line.
bool Compiler::needs_tracing_check(size_t k) const
{
    const Instr &ins = bytecode_.instrs()[k];
    if (bytecode_.is_jump_target(ins.start) || ins.opcode == RETURN_VALUE || ins.opcode == YIELD_VALUE) return true;
#if PY_VERSION_HEX >= 0x030D0000
    if (ins.opcode == RETURN_CONST) return true;
#endif
    if (k == 0) return false;
    int prev = bytecode_.instrs()[k - 1].opcode;
    if (!may_start_tracing(prev)) return false;
#if PY_VERSION_HEX >= 0x030D0000
    if (prev == CALL_KW) return true;
#endif
    // A jump: handed over at the jump itself, which the interpreter then
    // runs with its own events, so that it sees the target's line event as
    // coming from the jump (handed over at the target, 3.11's interpreter
    // would take the instruction laid out before the target for the
    // previous one, 3.13's the target itself).
    if (ins.target >= 0 && opcode_jump_kind(ins.opcode) != NO_JUMP) return true;
    return prev == CALL || prev == CALL_FUNCTION_EX || bytecode_.starts_line(ins.index);
}

// Whether tracing may have been switched on since machine code last
// checked, followed along the code as it is emitted (in order): where no
// Python code can have run since a check on every path that reaches an
// instruction, a check there would find what the last one found, and
// needs_tracing_check's is left out. A forward jump tells its target at the
// jump; the first instruction, exception handlers, loop headers (backward
// jumps and OSR enter there) and, in code entered anywhere
// (CompileOptions::resume_anywhere), every instruction start unknown.
Compiler::TracingState::TracingState(const Compiler &c) : c_(c)
{
    const auto &instrs = c.bytecode_.instrs();
    size_t n = instrs.size();
    jumped_clean_.assign(n, 1);
    jumped_in_.assign(n, 0);
    entered_.assign(n, c.options_.resume_anywhere ? 1 : 0);
    if (n > 0) entered_[0] = 1;
    for (const ExceptionEntry &e : c.bytecode_.exceptions().entries()) {
        int h = c.bytecode_.instr_at(e.handler);
        if (h >= 0) entered_[h] = 1;
    }
    for (const Instr &ins : instrs) {
        int t = c.bytecode_.instr_at(ins.target);
        if (ins.target >= 0 && t >= 0 && ins.target <= ins.start) entered_[t] = 1;
    }
}

bool Compiler::TracingState::arrive(size_t k, bool falls_in)
{
    if (entered_[k] || !(falls_in || jumped_in_[k])) return false;
    return jumped_clean_[k] && (!falls_in || fell_clean_);
}

void Compiler::TracingState::leave(const Instr &last, bool clean)
{
    fell_clean_ = clean;
    if (last.target >= 0 && opcode_jump_kind(last.opcode) != NO_JUMP && last.target > last.start) {
        int t = c_.bytecode_.instr_at(last.target);
        if (t >= 0) {
            jumped_in_[t] = 1;
            jumped_clean_[t] &= clean ? 1 : 0;
        }
    }
}

// An instruction whose own code checks for tracing last, after anything it
// runs (3.13's RESUME: visit_RESUME).
bool Compiler::checks_tracing_last(int opcode)
{
#if PY_VERSION_HEX >= 0x030D0000
    return opcode == RESUME;
#else
    (void)opcode;
    return false;
#endif
}

// Instructions that never run Python code (so cannot turn tracing on), apart
// from a deallocation's __del__.
bool Compiler::may_start_tracing(int opcode)
{
    switch (opcode) {
    case NOP: case CACHE: case LOAD_FAST: case LOAD_CONST: case STORE_FAST: case POP_TOP:
    case COPY: case SWAP: case PUSH_NULL: case LOAD_CLOSURE: case LOAD_DEREF: case STORE_DEREF:
    case JUMP_FORWARD: case JUMP_BACKWARD_NO_INTERRUPT: case MAKE_CELL: case COPY_FREE_VARS:
#if PY_VERSION_HEX >= 0x030D0000
    case POP_JUMP_IF_NONE: case POP_JUMP_IF_NOT_NONE: case LOAD_FAST_LOAD_FAST: case STORE_FAST_LOAD_FAST:
    case STORE_FAST_STORE_FAST: case LOAD_FAST_CHECK: case LOAD_FAST_AND_CLEAR: case END_FOR: case RETURN_CONST:
    case RESUME:   // its tracing check comes last (visit_RESUME)
    case TO_BOOL:  // checks on its slow path (py313/visit_misc.cpp)
    case POP_JUMP_IF_FALSE: case POP_JUMP_IF_TRUE:   // the same (pop_jump_if_bool)
#else
    case POP_JUMP_FORWARD_IF_NONE: case POP_JUMP_FORWARD_IF_NOT_NONE: case POP_JUMP_BACKWARD_IF_NONE:
    case POP_JUMP_BACKWARD_IF_NOT_NONE: case KW_NAMES: case PRECALL:
#endif
    // These check on their generic (slow) path only (a slot helper's status,
    // see slot_call), so the int/float/list/tuple fast paths pay nothing.
    case BINARY_OP: case COMPARE_OP: case BINARY_SUBSCR:
        return false;
    default:
        return true;
    }
}

// sys.settrace()/setprofile() turned on while this frame runs compiled: hand
// the frame to the interpreter at this instruction boundary (all its state is
// in the frame: locals, the value stack up to stacktop, prev_instr), so the
// tracer sees the rest of it exactly as on stock CPython.
void Compiler::emit_tracing_check(const Instr &ins) { emit_tracing_check_at(ins.start, ins.depth); }

// The same check where execution is about to go on at code unit `start` with
// `depth` values on the stack.
void Compiler::emit_tracing_check_at(int start, int depth)
{
    Label deopt = tier_ && tier_->holds_unboxed()
                      ? tier_->exit(unboxed::kExitTracing, bytecode_.instr_at(start), depth)
                      : tracing_exit(start, depth);
    frame_emit::tracing_check(em_, code_, deopt, in_loop(start));
}

// Whether code unit `unit` lies in a loop (from a backward jump's target to
// the jump: find_loops; generators have none there).
bool Compiler::in_loop(int unit) const
{
    return std::any_of(loops_.begin(), loops_.end(),
                       [unit](const LoopHeader &l) { return l.header <= unit && unit <= l.end; });
}

// What every hand-over of the frame does first (rax: its instruction
// pointer): the frame unlinked and the recursion level given back, as at a
// return, and the warm-up count passed on. The interpreter then links it
// again (and on 3.12+ clears and pops it when it returns).
void Compiler::emit_handoff_prologue(Emitter &e)
{
    e.as().mov(Emitter::frame_q(layout::kFrameInstr), x86::rax);
    frame_emit::leave_recursion(e);
    frame_emit::unlink(e);
    e.call<&rt::pyj_rt_sync_warmup>(Lea(Emitter::frame_address()), warmup_);
}

// Where to jump once tracing is found on, to go on at `start` with `depth`
// values on the stack in the interpreter: a stub of its own that says where,
// then the shared hand-off.
Label Compiler::tracing_exit(int start, int depth)
{
    if (!tracing_handoff_.isValid()) {
        tracing_handoff_ = em_.cold([this](Emitter &e) {
            auto &a = e.as();
            emit_handoff_prologue(e);
            a.xor_(x86::edx, x86::edx);   // throwflag
            e.call<&rt::pyj_rt_interpret>(Emitter::tstate, Lea(Emitter::frame_address()), x86::edx);
            a.mov(x86::r14, x86::rax);
            a.jmp(exit_restore_);
        });
    }
    auto known = tracing_exits_.find({start, depth});
    if (known != tracing_exits_.end()) return known->second;
    Label stub = handoff_at(tracing_handoff_, start, depth, previous_instr(start));
    tracing_exits_.emplace(std::make_pair(start, depth), stub);
    return stub;
}

// The instruction the machine code ran last when it arrives at code unit
// `start`: the one before it if that goes on to it, else the first jump
// that lands there (jumps that may come after tracing started hand the
// frame over themselves: needs_tracing_check); -1 if none.
int Compiler::previous_instr(int start) const
{
    const auto &instrs = bytecode_.instrs();
    int k = bytecode_.instr_at(start);
    if (k > 0 && instrs[k - 1].depth >= 0 && !ends_block(instrs[k - 1].opcode)) return instrs[k - 1].index;
    for (const Instr &ins : instrs) {
        if (ins.target == start && ins.depth >= 0) return ins.index;
    }
    return -1;
}

// A stub of its own for one hand-over point: the frame's stack top and
// prev_instr (it goes on at `start`), then the shared `handoff`. Where
// `start` may carry a line event and the version's interpreter would miss
// it (frame_emit::kHandoffEmitsLine), the stub emits it first, as coming
// from `prev` (an error there is raised at `start`).
Label Compiler::handoff_at(const Label &handoff, int start, int depth, int prev)
{
    bool line_event = frame_emit::kHandoffEmitsLine && prev >= 0 &&
                      (bytecode_.starts_line(start) || bytecode_.is_jump_target(start));
    if (line_event) {
        int k = bytecode_.instr_at(start);
        Label raise = error_exit_at(bytecode_.instrs()[k].index, depth, Raise::Error, -1, false);
        return em_.cold([this, depth, start, handoff, prev, raise](Emitter &e) {
            auto &a = e.as();
            a.mov(Emitter::frame_d(layout::kFrameStackTop), code_->co_nlocalsplus + depth);
            e.set_prev_instr(start - layout::kResumeUnitBias);
            frame_emit::handoff_line_event(e, prev);
            a.test(x86::eax, x86::eax);
            a.jnz(raise);
            // (a debugger's f_lineno may have moved the frame on)
            a.mov(x86::rax, Emitter::frame_q(layout::kFrameInstr));
            a.jmp(handoff);
        });
    }
    return em_.cold([this, depth, start, handoff](Emitter &e) {
        auto &a = e.as();
        a.mov(Emitter::frame_d(layout::kFrameStackTop), code_->co_nlocalsplus + depth);
        // the interpreter goes on at `start`
        a.lea(x86::rax, x86::ptr(Emitter::first_instr, (start - layout::kResumeUnitBias) * 2));
        a.jmp(handoff);
    });
}

void Compiler::dispatch(const Instr &ins)
{
    switch (ins.opcode) {
#define OPCODE(name, num, caches, jump) \
    case num: visit_##name(ins); break;
#include "front/opcodes.def"
#undef OPCODE
    default:
        throw CompileError{PYJION_RESULT_UNSUPPORTED_OPCODE,
                           "unknown opcode " + std::to_string(ins.opcode) + " at offset " +
                               std::to_string(ins.offset())};
    }
}

void Compiler::unsupported(const Instr &ins)
{
    throw CompileError{PYJION_RESULT_UNSUPPORTED_OPCODE, std::string("unsupported opcode ") +
                                                             opcode_name(ins.opcode) + " at offset " +
                                                             std::to_string(ins.offset())};
}

// ---- frame entry and exit ----------------------------------------------------

void Compiler::emit_prologue()
{
    emit_frame_entry();
    if (code_->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)) emit_resume_dispatch();
}

// What every entry does before the first instruction it runs: save registers,
// link the frame, count a recursion level. edx (throwflag, or the OSR entry's
// header unit) is kept in r15d.
void Compiler::emit_frame_entry()
{
    auto &a = em_.as();
    a.push(x86::rbp);
    a.mov(x86::rbp, x86::rsp);
    a.push(x86::rbx);
    a.push(x86::r12);
    a.push(x86::r13);
    a.push(x86::r14);
    a.push(x86::r15);
    // 8: keeps rsp 16-byte aligned at calls; the optimising tier's shadow slots below it.
    a.sub(x86::rsp, 8 + (tier_ ? tier_->shadow_bytes() : 0));
    a.mov(Emitter::tstate, x86::rdi);
    a.lea(Emitter::frame, x86::ptr(x86::rsi, Emitter::kFrameBias));   // see Emitter::frame_q
    a.mov(x86::r15d, x86::edx);
    em_.load_address(Emitter::first_instr, _PyCode_CODE(code_));

    // Link the frame in as the thread's current frame, as the interpreter does,
    // so tracebacks, sys._getframe() and PyEval_GetFrame() see it.
    frame_emit::link(em_, x86::rsi);
    // The recursion limit; over it, the frame leaves with RecursionError
    // (its values as they came in).
    Label too_deep = em_.cold([this](Emitter &e) {
        e.as().xor_(x86::r14d, x86::r14d);
        e.as().jmp(exit_unlinked_);
    });
    frame_emit::enter_recursion(em_, too_deep);
    // While running, values on the stack are not visible to the GC (as in ceval.c).
    a.mov(Emitter::frame_d(layout::kFrameStackTop), -1);
}

// The loops an interpreted frame can move into machine code at: targets of
// backward jumps (the interpreter checks its eval breaker there, where the
// hook's sampler gets control). Generators are resumed through the hook, so
// they never need it.
void Compiler::find_loops()
{
    loops_.clear();
    if (code_->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)) return;
    for (const Instr &ins : bytecode_.instrs()) {
        if (ins.depth < 0 || opcode_jump_kind(ins.opcode) != REL_BACKWARD) continue;
        int k = bytecode_.instr_at(ins.target);
        if (k < 0 || bytecode_.instrs()[k].depth < 0) continue;
        auto same = std::find_if(loops_.begin(), loops_.end(),
                                 [&](const LoopHeader &l) { return l.header == ins.target; });
        if (same != loops_.end()) {
            same->end = std::max(same->end, ins.index);
        } else {
            loops_.push_back(LoopHeader{ins.target, ins.index, bytecode_.instrs()[k].depth});
        }
    }
}

// The OSR entry (PyjionCompileResult.osr_entry): the frame's locals and value
// stack are as the interpreter left them at the loop header in edx; the
// machine code goes on from that header's label.
void Compiler::emit_osr_entry()
{
    if (options_.resume_anywhere) {
        emit_resume_entry();
        return;
    }
    if (loops_.empty()) return;
    auto &a = em_.as();
    osr_entry_ = a.newLabel();
    a.align(AlignMode::kCode, 16);
    a.bind(osr_entry_);
    emit_frame_entry();
    for (const LoopHeader &loop : loops_) {
        a.cmp(x86::r15d, loop.header);
        int k = bytecode_.instr_at(loop.header);
        a.je(tier_ ? tier_->osr_target(k) : labels_[k]);
    }
    em_.call<&rt::pyj_rt_bad_resume>(Lea(Emitter::frame_address()));
    a.jmp(exit_error_);
}

// The OSR entry of baseline code that the optimising tier falls back to
// (CompileOptions::resume_anywhere): a frame whose instructions before
// code unit r15d ran (everything in the frame, as the interpreter keeps it)
// goes on at that unit, through a table of 32-bit offsets per code unit.
// An instruction that the visitor of the one before implemented (fused) has
// no label of its own: the interpreter goes on there; a unit where no
// instruction starts is a bad resume.
void Compiler::emit_resume_entry()
{
    auto &a = em_.as();
    const auto &instrs = bytecode_.instrs();
    int units = static_cast<int>(Py_SIZE(code_));
    Label bad = em_.cold([this](Emitter &e) {
        e.call<&rt::pyj_rt_bad_resume>(Lea(Emitter::frame_address()));
        e.as().jmp(exit_error_);
    });
    std::vector<Label> target(units, bad);
    for (size_t k = 0; k < instrs.size(); k++) {
        const Instr &ins = instrs[k];
        if (ins.depth < 0 || ins.start >= units) continue;
        target[ins.start] = fused_into_previous_[k] ? tracing_exit(ins.start, ins.depth) : labels_[k];
    }
    osr_entry_ = a.newLabel();
    Label table = a.newLabel();
    a.align(AlignMode::kCode, 16);
    a.bind(osr_entry_);
    emit_frame_entry();
    a.cmp(x86::r15d, units);
    a.jae(bad);
    a.lea(x86::rcx, x86::ptr(table));
    a.movsxd(x86::rax, x86::dword_ptr(x86::rcx, x86::r15, 2));
    a.add(x86::rax, x86::rcx);
    a.jmp(x86::rax);
    a.align(AlignMode::kData, 4);
    a.bind(table);
    for (const Label &t : target) a.embedLabelDelta(t, table, 4);
}

Label Compiler::fallback_exit(int start, int depth)
{
    if (!fallback_handoff_.isValid()) {
        fallback_handoff_ = em_.cold([this](Emitter &e) {
            auto &a = e.as();
            emit_handoff_prologue(e);
            e.call<&unboxed::resume_fallback>(Emitter::tstate, Lea(Emitter::frame_address()));
            a.mov(x86::r14, x86::rax);
            a.jmp(exit_restore_);
        });
    }
    return handoff_at(fallback_handoff_, start, depth, -1);
}

// A generator frame is (re)entered after its RETURN_GENERATOR or a YIELD_VALUE:
// prev_instr says which, and the sent value is already on the value stack.
// gen.throw() into a `yield from` that ends also resumes just before a SEND's
// target (genobject.c backs prev_instr up there). With throwflag set, the
// pending exception is raised at that point instead.
// (The call that creates the generator always runs in the interpreter.)
void Compiler::emit_resume_dispatch()
{
    auto &a = em_.as();
    const auto &instrs = bytecode_.instrs();
    std::vector<int> resume_units;   // instruction-pointer values (see below)
    for (const Instr &ins : instrs) {
        if (ins.depth < 0) continue;
        if (ins.opcode == RETURN_GENERATOR || ins.opcode == YIELD_VALUE) {
            resume_units.push_back(ins.index + 1 - layout::kResumeUnitBias);
        }
#if PY_VERSION_HEX < 0x030D0000
        // gen.throw() into a `yield from` that ends backs prev_instr up to
        // just before SEND's target (3.13 goes through CLEANUP_THROW instead).
        if (ins.opcode == SEND) resume_units.push_back(ins.target - 1);
#endif
    }
    a.mov(x86::rax, Emitter::frame_q(layout::kFrameInstr));
    a.sub(x86::rax, Emitter::first_instr);
    a.sar(x86::rax, 1);
    for (int unit : resume_units) {
        // unit: the instruction pointer's value at the resume; execution
        // goes on at `resume` (3.11: unit + 1; 3.13: unit itself), where a
        // thrown exception is handled as if raised by the instruction before.
        int resume = unit + layout::kResumeUnitBias;
        int k = bytecode_.instr_at(resume);
        if (k < 0 || instrs[k].depth < 0) continue;
        Label other = a.newLabel();
        a.cmp(x86::rax, unit);
        a.jne(other);
        a.test(x86::r15d, x86::r15d);
        a.jnz(error_exit_at(unit, instrs[k].depth, Raise::Error, resume - 1, false));
        a.jmp(labels_[k]);
        a.bind(other);
    }
    em_.call<&rt::pyj_rt_bad_resume>(Lea(Emitter::frame_address()));
    a.jmp(exit_error_);
}

void Compiler::emit_epilogue()
{
    auto &a = em_.as();
    a.bind(exit_error_);
    a.xor_(x86::r14d, x86::r14d);
    a.bind(exit_return_);   // r14: the result, or NULL with an exception set
    // Empty value stack: clearing the frame releases exactly the locals.
    a.mov(Emitter::frame_d(layout::kFrameStackTop), code_->co_nlocalsplus);
    if (frame_emit::kExitClearsFrame) {
        // 3.12+: the frame evaluator's exit clears and pops the frame (a
        // generator's: marks it cleared); a yield only unlinks it.
        frame_emit::leave_recursion(em_);
        a.bind(exit_unlinked_);
        frame_emit::unlink(em_);
        frame_emit::clear_and_pop(em_);
        a.jmp(exit_restore_);
        a.bind(exit_suspend_);   // a yield has set stacktop to the values it keeps
        frame_emit::leave_recursion(em_);
        frame_emit::unlink(em_);
        a.mov(Emitter::frame_q(layout::kFramePrevious), 0);
    } else {
        a.bind(exit_suspend_);   // a yield has set stacktop to the values it keeps
        frame_emit::leave_recursion(em_);
        a.bind(exit_unlinked_);
        frame_emit::unlink(em_);
    }
    a.bind(exit_restore_);
    a.mov(x86::rax, x86::r14);
    a.add(x86::rsp, 8 + (tier_ ? tier_->shadow_bytes() : 0));
    a.pop(x86::r15);
    a.pop(x86::r14);
    a.pop(x86::r13);
    a.pop(x86::r12);
    a.pop(x86::rbx);
    a.pop(x86::rbp);
    a.ret();
}

// ---- shared pieces -------------------------------------------------------------

Label Compiler::error_exit(int depth, Raise how) { return error_exit_at(cur_->index, depth, how); }

// The exception handling of one failing point, out of line: add this frame to
// the traceback (unless re-raising), then either unwind the value stack to the
// handler that co_exceptiontable names for `lookup_unit` and jump there, or
// drop the whole stack and leave the frame with NULL.
Label Compiler::error_exit_at(int unit, int depth, Raise how, int lookup_unit, bool set_prev)
{
    if (lookup_unit < 0) lookup_unit = unit;
    const ExceptionEntry *entry = bytecode_.exceptions().find(lookup_unit);
    Label handler;
    if (entry != nullptr) {
        int k = bytecode_.instr_at(entry->handler);
        if (k < 0 || bytecode_.instrs()[k].depth != entry->level + (entry->lasti ? 1 : 0) + 1) {
            throw CompileError{PYJION_RESULT_STACK_EFFECT_FAULT,
                               "exception handler depth mismatch for offset " + std::to_string(unit * 2)};
        }
        if (depth < entry->level) {
            throw CompileError{PYJION_RESULT_STACK_EFFECT_FAULT,
                               "stack below the handler's level at offset " + std::to_string(unit * 2)};
        }
        handler = labels_[k];
    }
    bool add_traceback = how == Raise::Error;
    return em_.cold([this, unit, depth, add_traceback, entry, handler, set_prev](Emitter &e) {
        auto &a = e.as();
        if (set_prev) e.set_prev_instr(unit);
        int traceback = add_traceback ? 1 : 0;
        if (entry == nullptr) {
            e.call<&rt::pyj_rt_error_exit>(Emitter::tstate, Lea(Emitter::frame_address()), depth, traceback);
            a.jmp(exit_error_);
            return;
        }
        e.call<&rt::pyj_rt_unwind_to_handler>(Emitter::tstate, Lea(Emitter::frame_address()), depth, traceback,
                                              entry->level, entry->lasti ? 1 : 0);
        a.test(x86::eax, x86::eax);
        a.jnz(exit_error_);
        a.jmp(handler);
    });
}

void Compiler::jump_if_error_zero(const x86::Gp &result, int depth)
{
    em_.as().test(result, result);
    em_.as().jz(error_exit(depth));
}

void Compiler::jump_if_error_negative(const x86::Gp &status, int depth)
{
    em_.as().test(status, status);
    em_.as().js(error_exit(depth));
}

void Compiler::eval_breaker_check() { eval_breaker_check(cur_->index, cur_->index); }

// `unit`: the instruction prev_instr names (tracebacks); `lookup_unit`: where
// ceval looks for a handler (after a backward jump: the target - 1).
void Compiler::eval_breaker_check(int unit, int lookup_unit)
{
    auto &a = em_.as();
    Label back = a.newLabel();
    int depth = this->depth();
    Label pending = em_.cold([this, back, unit, lookup_unit, depth](Emitter &e) {
        auto &a = e.as();
        e.set_prev_instr(unit);
        e.call<&rt::pyj_rt_eval_breaker>(Emitter::tstate);
        a.test(x86::eax, x86::eax);
        a.jnz(error_exit_at(unit, depth, Raise::Error, lookup_unit));
        a.jmp(back);
    });
    frame_emit::eval_breaker_check(em_, pending);
    a.bind(back);
}

Label Compiler::label_for(int target_unit)
{
    int k = bytecode_.instr_at(target_unit);
    const Instr &target = bytecode_.instrs()[k];
    if (target.depth != depth()) {
        throw CompileError{PYJION_RESULT_STACK_EFFECT_FAULT,
                           "jump from offset " + std::to_string(cur_->offset()) + " with stack depth " +
                               std::to_string(depth()) + " to a target expecting " + std::to_string(target.depth)};
    }
    return tier_ ? tier_->edge(k) : labels_[k];
}

void Compiler::jump_to(int target_unit) { jump_to(target_unit, *cur_); }

void Compiler::jump_to(int target_unit, const Instr &jump)
{
    if (opcode_jump_kind(jump.opcode) == REL_BACKWARD && jump.opcode != JUMP_BACKWARD_NO_INTERRUPT) {
        // 3.11 checks after jumping (a handler is looked up for the target - 1);
        // 3.13 before, at the jump itself.
        constexpr bool kCheckBeforeJump = PY_VERSION_HEX >= 0x030D0000;
        eval_breaker_check(jump.index, kCheckBeforeJump ? jump.index : target_unit - 1);
    }
    em_.as().jmp(label_for(target_unit));
}

// After a `test`: jump to `target_unit` if the tested value is non-zero
// (`when_nonzero`) or zero, else go on at `fallthrough` (an invalid label:
// the code that follows). A forward jump needs no eval-breaker check, so it
// is a single conditional jump to the target.
void Compiler::jump_if_flags(bool when_nonzero, int target_unit, const Instr &jump, const Label &fallthrough)
{
    auto &a = em_.as();
    if (opcode_jump_kind(jump.opcode) != REL_BACKWARD) {
        if (when_nonzero) a.jnz(label_for(target_unit)); else a.jz(label_for(target_unit));
        if (fallthrough.isValid()) a.jmp(fallthrough);
        return;
    }
    Label skip = fallthrough.isValid() ? fallthrough : a.newLabel();
    if (when_nonzero) a.jz(skip); else a.jnz(skip);
    jump_to(target_unit, jump);
    if (!fallthrough.isValid()) a.bind(skip);
}

const Instr *Compiler::concat_store() const
{
    int k = bytecode_.instr_at(cur_->start);
    if (concat_target(bytecode_, k) < 0) return nullptr;
    const Instr *store = &bytecode_.instrs()[k + 1];
    return bytecode_.instr_at(store->next) >= 0 ? store : nullptr;
}

const Instr *Compiler::fusable_next() const
{
    const auto &instrs = bytecode_.instrs();
    int k = bytecode_.instr_at(cur_->start) + 1;
    if (k >= (int)instrs.size() || bytecode_.is_jump_target(instrs[k].start)) return nullptr;
    return &instrs[k];
}

// ---- opcodes the baseline compiler handles ----------------------------------------

void Compiler::visit_CACHE(const Instr &) {}
void Compiler::visit_NOP(const Instr &) {}

void Compiler::emit_warmup_tick()
{
    if (kWarmupDelay == 0) return;   // nothing counted (3.13)
    auto &a = em_.as();
    Label warm = a.newLabel();
    em_.load_address(x86::rcx, warmup_);
    a.cmp(x86::qword_ptr(x86::rcx), kWarmupDelay);
    a.jae(warm);
    a.inc(x86::qword_ptr(x86::rcx));
    a.bind(warm);
}

void Compiler::emit_load_warm(const x86::Gp &dst32)
{
    auto &a = em_.as();
    em_.load_address(x86::rcx, warmup_);
    a.xor_(dst32, dst32);
    a.cmp(x86::qword_ptr(x86::rcx), kWarmupDelay);
    a.setae(dst32.r8());
}

void Compiler::visit_LOAD_FAST(const Instr &ins)
{
    // (3.13's compiler emits LOAD_FAST only where the local is bound, and
    // LOAD_FAST_CHECK elsewhere; the check stays where the analysis cannot
    // prove it, on both.)
    emit_load_fast(ins, ins.oparg, !bound_.certain(bytecode_.instr_at(ins.start), ins.oparg));
}

void Compiler::emit_load_fast(const Instr &ins, int index, bool check)
{
    auto &a = em_.as();
    int depth = this->depth();
    int unit = ins.index;
    a.mov(x86::rax, em_.local(index));
    if (check) {
        Label unbound = em_.cold([this, index, depth, unit](Emitter &e) {
            e.set_prev_instr(unit);
            e.call<&rt::pyj_rt_unbound_local>(Lea(Emitter::frame_address()), index);
            e.as().jmp(error_exit_at(unit, depth));
        });
        a.test(x86::rax, x86::rax);
        a.jz(unbound);
    }
    em_.incref(x86::rax);
    push(x86::rax);
}

void Compiler::visit_STORE_FAST(const Instr &ins) { emit_store_fast(ins, ins.oparg); }

void Compiler::emit_store_fast(const Instr &ins, int index)
{
    auto &a = em_.as();
    pop_to(x86::rax);
    a.mov(x86::rdi, em_.local(index));
    a.mov(em_.local(index), x86::rax);
    // (the old value's __del__ may look at this frame: prev_instr on that path)
    // The bound-locals analysis knows 3.11's opcodes only: on 3.13 (where
    // LOAD_FAST_AND_CLEAR empties locals) the old value may always be NULL.
    constexpr bool kTrustBoundLocals = PY_VERSION_HEX < 0x030D0000;
    if (kTrustBoundLocals && bound_.certain(bytecode_.instr_at(ins.start), index)) {
        em_.decref(x86::rdi, ins.index);
    } else {
        em_.xdecref(x86::rdi, ins.index);
    }
}

void Compiler::visit_LOAD_CONST(const Instr &ins)
{
    PyObject *value = PyTuple_GET_ITEM(code_->co_consts, ins.oparg);   // kept alive by the code object
    em_.load_address(x86::rax, value);
    em_.incref(x86::rax);
    push(x86::rax, model::SlotKind::constant(static_cast<uint32_t>(ins.oparg)));
}

void Compiler::visit_POP_TOP(const Instr &ins)
{
    pop_to(x86::rdi);
    em_.decref(x86::rdi, ins.index);
}

// After a slot helper's call (slot_call, codegen/runtime/runtime_slots.h):
// status 0 goes on with the result in place of the `inputs` operands; the
// rare others leave out of line: < 0 to the error exit, > 0 (tracing switched
// on) to the interpreter at the next instruction.
void Compiler::slot_status(int inputs)
{
    auto &a = em_.as();
    int depth = this->depth() - inputs;
    // A deferred stub, not out_of_line(): a site that is itself out of line
    // would otherwise fall through into it.
    Label error = error_exit(depth), tracing = tracing_exit(cur_->next, depth + 1);
    Label not_zero = em_.cold([error, tracing](Emitter &e) {
        e.as().js(error);
        e.as().jmp(tracing);
    });
    a.test(x86::eax, x86::eax);
    a.jnz(not_zero);
    drop(inputs);
    grow(1);
}

void Compiler::visit_BINARY_OP(const Instr &ins)
{
    if (ins.oparg < 0 || ins.oparg > NB_INPLACE_XOR) unsupported(ins);
    emit_binary_op(*this, ins.oparg);
}


// POP_JUMP_{FORWARD,BACKWARD}_IF_{TRUE,FALSE}: True/False are tested by
// identity, anything else through PyObject_IsTrue, as the interpreter does.
void Compiler::pop_jump_if_bool(const Instr &ins, bool jump_when_true)
{
    auto &a = em_.as();
    Label not_true = a.newLabel(), slow = a.newLabel();
    Label take = a.newLabel(), skip = a.newLabel();
    pop_to(x86::rdi);
    em_.load_address(x86::rax, Py_True);
    a.cmp(x86::rdi, x86::rax);
    a.jne(not_true);
    em_.decref_no_dealloc(x86::rdi);
    a.jmp(jump_when_true ? take : skip);
    a.bind(not_true);
    em_.load_address(x86::rax, Py_False);
    a.cmp(x86::rdi, x86::rax);
    a.jne(slow);
    em_.decref_no_dealloc(x86::rdi);
    if (jump_when_true) a.jmp(skip);   // else fall through to the jump

    em_.out_of_line([&] {   // anything else: its truth, then it is released
        a.bind(slow);
        em_.set_prev_instr(ins.index);
        em_.call<&slots::truth_consume>(x86::rdi);
        a.test(x86::eax, x86::eax);
        a.js(error_exit(depth()));
#if PY_VERSION_HEX >= 0x030D0000
        // A __bool__ or __len__ that ran may have switched tracing on: the
        // interpreter takes the frame where the jump goes on (so no check is
        // due after the jump's fast paths: may_start_tracing).
        Label taken = a.newLabel();
        if (jump_when_true) a.jnz(taken); else a.jz(taken);
        emit_tracing_check_at(ins.next, depth());
        a.jmp(skip);
        a.bind(taken);
        emit_tracing_check_at(ins.target, depth());
        a.jmp(take);
#else
        if (jump_when_true) a.jnz(take); else a.jz(take);
        a.jmp(skip);
#endif
    });

    a.bind(take);
    jump_to(ins.target);
    a.bind(skip);
}

void Compiler::pop_jump_if_none(const Instr &ins, bool jump_when_none)
{
    auto &a = em_.as();
    Label is_none = a.newLabel(), skip = a.newLabel(), take = a.newLabel();
    pop_to(x86::rdi);
    em_.load_address(x86::rax, Py_None);
    a.cmp(x86::rdi, x86::rax);
    a.je(is_none);
    em_.set_prev_instr(ins.index);
    em_.decref(x86::rdi);
    a.jmp(jump_when_none ? skip : take);
    a.bind(is_none);
    em_.decref_no_dealloc(x86::rdi);
    if (!jump_when_none) a.jmp(skip);
    a.bind(take);
    jump_to(ins.target);
    a.bind(skip);
}

// JUMP_IF_{TRUE,FALSE}_OR_POP: jump keeping the value, or pop it and go on.
void Compiler::jump_or_pop(const Instr &ins, bool jump_when_true)
{
    auto &a = em_.as();
    Label is_true = a.newLabel(), slow = a.newLabel(), take = a.newLabel(), pop_on = a.newLabel(),
          done = a.newLabel();
    a.mov(x86::rdi, top(0));
    em_.load_address(x86::rax, Py_True);
    a.cmp(x86::rdi, x86::rax);
    a.je(is_true);
    em_.load_address(x86::rax, Py_False);
    a.cmp(x86::rdi, x86::rax);
    a.jne(slow);
    a.jmp(jump_when_true ? pop_on : take);
    a.bind(is_true);
    a.jmp(jump_when_true ? take : pop_on);

    em_.out_of_line([&] {
        a.bind(slow);
        em_.set_prev_instr(ins.index);
        em_.call<&PyObject_IsTrue>(x86::rdi);
        a.test(x86::eax, x86::eax);
        a.js(error_exit(depth()));
        if (jump_when_true) a.jnz(take); else a.jz(take);
        a.jmp(pop_on);
    });

    a.bind(pop_on);
    a.mov(x86::rdi, top(0));
    em_.set_prev_instr(ins.index);
    em_.decref(x86::rdi);
    a.jmp(done);

    a.bind(take);
    jump_to(ins.target);   // the value stays on the stack
    a.bind(done);
    drop(1);
}

void Compiler::visit_JUMP_FORWARD(const Instr &ins) { jump_to(ins.target); }
void Compiler::visit_JUMP_BACKWARD(const Instr &ins)
{
    emit_warmup_tick();
    jump_to(ins.target);
}
void Compiler::visit_JUMP_BACKWARD_NO_INTERRUPT(const Instr &ins) { jump_to(ins.target); }

void Compiler::visit_RETURN_VALUE(const Instr &)
{
    set_prev_instr();   // f_lineno of a frame object that outlives the call
    pop_to(x86::r14);
    em_.as().jmp(exit_return_);
}

// EXTENDED_ARG never reaches a visitor: decoding folds it into the next oparg.
void Compiler::visit_EXTENDED_ARG(const Instr &ins) { unsupported(ins); }


}  // namespace pyjion
