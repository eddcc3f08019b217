// CPython 3.13's own opcodes and operands, apart from calls and attributes
// (py313/visit_calls.cpp): RESUME, COMPARE_OP's operand, TO_BOOL and the
// conditional jumps on exact bools, the fused local accesses, RETURN_CONST,
// the end of loops and of `yield from`, slices, formatting, class-body
// lookups; and the opcodes machine code never runs.
#include "baseline/compiler.h"

#include "front/opcodes.h"
#include "front/site_profile.h"
#include "runtime/helpers.h"
#include "baseline/specialize.h"
#include "baseline/visit_util.h"
#include "py313/capi.h"

namespace pyjion {

using namespace asmjit;
using visit::name_at;
using visit::local_index;
using visit::push_result;

namespace {

// The kind of value a TO_BOOL site saw in the interpreter (its specialised
// form), for which the machine code tests truth inline; kNone: none of them.
enum class TruthKind { kNone, kInt, kNoneValue, kStr };

TruthKind profiled_truth(Compiler &c)
{
    SiteProfile seen = site_profile(c.code(), c.current());
    if (seen.state != SiteState::kSpecialised) return TruthKind::kNone;
    if (seen.type == SeenType::kInt) return TruthKind::kInt;
    if (seen.type == SeenType::kStr) return TruthKind::kStr;
    if (seen.quickened == TO_BOOL_NONE) return TruthKind::kNoneValue;
    return TruthKind::kNone;
}

// The truth of the value in rdi, of the kind the site saw, into the top
// slot (the value released; an int or a str dies without running any
// code); anything else jumps to `convert`.
void inline_truth(Compiler &c, TruthKind kind, const Label &convert)
{
    auto &a = c.as();
    auto &em = c.em();
    if (kind == TruthKind::kNoneValue) {
        em.load_address(x86::rax, Py_None);
        a.cmp(x86::rdi, x86::rax);
        a.jne(convert);
        em.load_address(x86::rax, Py_False);
        a.mov(c.top(0), x86::rax);
        em.decref_no_dealloc(x86::rdi);
        return;
    }
    em.load_address(x86::rax, kind == TruthKind::kInt ? &PyLong_Type : &PyUnicode_Type);
    a.cmp(x86::rax, x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)));
    a.jne(convert);
    if (kind == TruthKind::kInt) {
        // Zero is the sign bits' "zero" (lv_tag & 3 == 1): False, else True.
        a.mov(x86::eax, x86::dword_ptr(x86::rdi, layout::kLongTag));
        a.and_(x86::eax, layout::kLongSignMask);
        a.cmp(x86::eax, 1);
    } else {
        a.cmp(x86::qword_ptr(x86::rdi, offsetof(PyASCIIObject, length)), 0);
    }
    em.load_address(x86::rax, Py_False);
    em.load_address(x86::rcx, Py_True);
    a.cmovne(x86::rax, x86::rcx);
    a.mov(c.top(0), x86::rax);
    em.decref(x86::rdi, c.current().index);
}

// The value on top of the stack becomes its truth, True or False (kept as is
// when it is one already: the common case after a comparison; TO_BOOL tests
// an int, a str or None inline where the interpreter's site saw one). A
// __bool__ or __len__ that ran may have switched tracing on: the slow path
// checks before the next instruction, so no check is due after TO_BOOL's
// fast path (Compiler::may_start_tracing).
void top_to_bool(Compiler &c, TruthKind kind)
{
    auto &a = c.as();
    auto &em = c.em();
    Label done = a.newLabel(), convert = a.newLabel();
    int depth = c.depth();
    a.mov(x86::rdi, c.top(0));
    em.load_address(x86::rax, Py_True);
    a.cmp(x86::rdi, x86::rax);
    a.je(done);
    em.load_address(x86::rax, Py_False);
    a.cmp(x86::rdi, x86::rax);
    if (kind == TruthKind::kNone) {
        a.jne(convert);
    } else {
        a.je(done);
        inline_truth(c, kind, convert);
    }
    em.out_of_line([&] {
        a.bind(convert);
        c.set_prev_instr();
        em.call<&rt313::to_bool>(x86::rdi);   // consumes the value
        a.mov(c.top(0), x86::rax);
        a.test(x86::rax, x86::rax);
        a.jz(c.error_exit(depth - 1));
        c.emit_tracing_check_at(c.current().next, depth);
        a.jmp(done);
    });
    a.bind(done);
}

}  // namespace

// Monitoring switched on (sys.settrace, sys.monitoring) since the code was
// instrumented: the interpreter instruments it and runs the frame from here.
// Checked after the eval breaker (the interpreter checks before it), so that
// nothing a pending call runs (a signal handler that starts a tracer) can
// follow the check: the next line start needs none of its own
// (Compiler::may_start_tracing). Tracing was off when the frame entered
// machine code, so the order changes nothing a tracer sees.
void Compiler::visit_RESUME(const Instr &ins)
{
    if ((ins.oparg & 3) < 2) eval_breaker_check();   // not after a yield from / await
    emit_tracing_check(ins);
}

// oparg >> 5 is the comparison; bit 4 asks for a bool result.
void Compiler::visit_COMPARE_OP(const Instr &ins)
{
    int op = ins.oparg >> 5;
    if (op < Py_LT || op > Py_GE) unsupported(ins);
    emit_compare_op(*this, op);
    if ((ins.oparg & 16) && !fused_next_) top_to_bool(*this, TruthKind::kNone);
}

void Compiler::visit_TO_BOOL(const Instr &) { top_to_bool(*this, profiled_truth(*this)); }

// The value is a bool (TO_BOOL or a comparison made it); pop_jump_if_bool
// still takes any object.
void Compiler::visit_POP_JUMP_IF_FALSE(const Instr &ins) { pop_jump_if_bool(ins, false); }
void Compiler::visit_POP_JUMP_IF_TRUE(const Instr &ins) { pop_jump_if_bool(ins, true); }
void Compiler::visit_POP_JUMP_IF_NONE(const Instr &ins) { pop_jump_if_none(ins, true); }
void Compiler::visit_POP_JUMP_IF_NOT_NONE(const Instr &ins) { pop_jump_if_none(ins, false); }

// ---- locals ---------------------------------------------------------------------

void Compiler::visit_LOAD_FAST_CHECK(const Instr &ins) { emit_load_fast(ins, local_index(code(), ins), true); }

// The local's value (or NULL) moves to the stack; the local is left empty.
void Compiler::visit_LOAD_FAST_AND_CLEAR(const Instr &ins)
{
    auto &a = as();
    int index = local_index(code(), ins);
    a.mov(x86::rax, em().local(index));
    a.mov(em().local(index), imm(0));
    push(x86::rax);
}

// The fused forms name two locals in the operand's nibbles; the compiler
// emits them only for locals that are bound.
namespace {
void check_local_pair(Compiler &c, const Instr &ins)
{
    if ((ins.oparg >> 4) >= c.code()->co_nlocalsplus || (ins.oparg & 15) >= c.code()->co_nlocalsplus) {
        visit::bad_oparg(ins, "localsplus");
    }
}
}  // namespace

void Compiler::visit_LOAD_FAST_LOAD_FAST(const Instr &ins)
{
    check_local_pair(*this, ins);
    emit_load_fast(ins, ins.oparg >> 4, false);
    emit_load_fast(ins, ins.oparg & 15, false);
}

void Compiler::visit_STORE_FAST_LOAD_FAST(const Instr &ins)
{
    check_local_pair(*this, ins);
    emit_store_fast(ins, ins.oparg >> 4);
    emit_load_fast(ins, ins.oparg & 15, false);
}

void Compiler::visit_STORE_FAST_STORE_FAST(const Instr &ins)
{
    check_local_pair(*this, ins);
    emit_store_fast(ins, ins.oparg >> 4);
    emit_store_fast(ins, ins.oparg & 15);
}

// ---- returns, loops, yield from ------------------------------------------------------

void Compiler::visit_RETURN_CONST(const Instr &ins)
{
    PyObject *value = PyTuple_GET_ITEM(code_->co_consts, ins.oparg);   // kept alive by the code object
    set_prev_instr();   // f_lineno of a frame object that outlives the call
    em_.load_address(x86::r14, value);
    em_.incref(x86::r14);
    em_.as().jmp(exit_return_);
}

// Reached only by a loop's body falling out of it (FOR_ITER's exhaustion
// jumps past it): pops the value.
void Compiler::visit_END_FOR(const Instr &ins)
{
    pop_to(x86::rdi);
    em_.decref(x86::rdi, ins.index);
}

// [receiver, value] -> [receiver, result]; jumps to the target (END_SEND) when
// the receiver returned. On error both stay for the unwinder.
void Compiler::visit_SEND(const Instr &ins)
{
    auto &a = as();
    Label next = a.newLabel();
    set_prev_instr();
    em().call<&rt313::send>(Emitter::tstate, Lea(em().stack(depth())));
    a.test(x86::eax, x86::eax);
    a.js(error_exit(depth()));
    a.jz(next);
    jump_to(ins.target);
    a.bind(next);
}

// [receiver, value] -> [value]
void Compiler::visit_END_SEND(const Instr &ins)
{
    auto &a = as();
    pop_to(x86::r14);
    pop_to(x86::rdi);
    push(x86::r14);
    em().decref(x86::rdi, ins.index);
}

// A throw() into `yield from` ended the sub-iterator: its StopIteration's
// value is the result ([None, value]); any other exception goes on unwinding.
void Compiler::visit_CLEANUP_THROW(const Instr &)
{
    auto &a = as();
    set_prev_instr();
    em().call<&rt313::cleanup_throw>(Lea(em().stack(depth())));
    a.test(x86::eax, x86::eax);
    a.jnz(error_exit(depth(), Raise::Reraise));
    drop(1);
}

// ---- slices and formatting ---------------------------------------------------------------

void Compiler::visit_BINARY_SLICE(const Instr &)
{
    set_prev_instr();
    em().call<&rt313::binary_slice>(top(2), top(1), top(0));
    push_result(*this, 3);
}

void Compiler::visit_STORE_SLICE(const Instr &)
{
    set_prev_instr();
    em().call<&rt313::store_slice>(Lea(em().stack(depth())));
    drop(4);
    jump_if_error_negative(x86::eax, depth());
}

void Compiler::visit_CONVERT_VALUE(const Instr &ins)
{
    if (ins.oparg < 1 || ins.oparg > py313::kMaxConversion) unsupported(ins);
    set_prev_instr();
    em().call<&rt313::convert_value>(top(0), ins.oparg);
    push_result(*this, 1);
}

void Compiler::visit_FORMAT_SIMPLE(const Instr &)
{
    set_prev_instr();
    em().call<&rt313::format_simple>(top(0));
    push_result(*this, 1);
}

void Compiler::visit_FORMAT_WITH_SPEC(const Instr &)
{
    set_prev_instr();
    em().call<&rt313::format_with_spec>(top(1), top(0));
    push_result(*this, 2);
}

// ---- class bodies and annotation scopes ---------------------------------------------------

// [mapping] -> [value]; on error the mapping stays for the unwinder.
void Compiler::visit_LOAD_FROM_DICT_OR_GLOBALS(const Instr &ins)
{
    PyObject *name = name_at(code(), ins.oparg, ins);
    set_prev_instr();
    em().call<&rt313::load_from_dict_or_globals>(Emitter::tstate, Lea(Emitter::frame_address()), top(0), name);
    jump_if_error_zero(x86::rax, depth());
    drop(1);
    push(x86::rax);
}

void Compiler::visit_LOAD_FROM_DICT_OR_DEREF(const Instr &ins)
{
    int index = local_index(code(), ins);
    set_prev_instr();
    em().call<&rt313::load_from_dict_or_deref>(Emitter::tstate, Lea(Emitter::frame_address()), top(0), index);
    jump_if_error_zero(x86::rax, depth());
    drop(1);
    push(x86::rax);
}

void Compiler::visit_LOAD_LOCALS(const Instr &)
{
    set_prev_instr();
    em().call<&rt313::load_locals>(Lea(Emitter::frame_address()));
    jump_if_error_zero(x86::rax, depth());
    push(x86::rax);
}

// ---- never run by machine code ---------------------------------------------------------
// The decoder reads the code with its executors and instrumentation taken
// out (PyCode_GetCode); the interpreter's own trampoline opcodes never occur.

void Compiler::visit_ENTER_EXECUTOR(const Instr &ins) { unsupported(ins); }
void Compiler::visit_INTERPRETER_EXIT(const Instr &ins) { unsupported(ins); }
void Compiler::visit_RESERVED(const Instr &ins) { unsupported(ins); }
#define INSTRUMENTED(name) \
    void Compiler::visit_INSTRUMENTED_##name(const Instr &ins) { unsupported(ins); }
INSTRUMENTED(CALL)
INSTRUMENTED(CALL_FUNCTION_EX)
INSTRUMENTED(CALL_KW)
INSTRUMENTED(END_FOR)
INSTRUMENTED(END_SEND)
INSTRUMENTED(FOR_ITER)
INSTRUMENTED(INSTRUCTION)
INSTRUMENTED(JUMP_BACKWARD)
INSTRUMENTED(JUMP_FORWARD)
INSTRUMENTED(LINE)
INSTRUMENTED(LOAD_SUPER_ATTR)
INSTRUMENTED(POP_JUMP_IF_FALSE)
INSTRUMENTED(POP_JUMP_IF_NONE)
INSTRUMENTED(POP_JUMP_IF_NOT_NONE)
INSTRUMENTED(POP_JUMP_IF_TRUE)
INSTRUMENTED(RESUME)
INSTRUMENTED(RETURN_CONST)
INSTRUMENTED(RETURN_VALUE)
INSTRUMENTED(YIELD_VALUE)
#undef INSTRUMENTED

}  // namespace pyjion
