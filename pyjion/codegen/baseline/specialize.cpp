#include "baseline/specialize.h"

#include "front/number_ops.h"
#include "front/site_profile.h"

#include "cpython/interp_state.h"

#include "cpython/int_emit.h"
#include "front/opcodes.h"
#include "runtime/runtime.h"
#include "runtime/runtime_slots.h"

namespace pyjion {

using namespace asmjit;

namespace {

// What CPython 3.11's specialising interpreter learnt at this site, read off
// its quickened instruction in co_code_adaptive. Code compiled once warm
// (the default) has run interpreted: a site specialised for ints or floats
// needs only that fast path, one specialised for str or left adaptive
// (its operands are some other types, or it never ran) needs neither. Code
// not quickened yet (eager mode) gets both.
enum class SiteTypes { kUnknown, kInts, kFloats, kOther };

bool is_bool_jump(int opcode);

SiteTypes quickened_types(Compiler &c, bool binary_op)
{
    SiteProfile seen = site_profile(c.code(), c.current());
    switch (seen.state) {
    case SiteState::kSpecialised:
        if (seen.type == SeenType::kInt) return SiteTypes::kInts;
        if (seen.type == SeenType::kFloat) return SiteTypes::kFloats;
        return SiteTypes::kOther;
    case SiteState::kUnseen: case SiteState::kGeneric:
        if (binary_op) {
            // 3.11 specialises only +, - and * (in place or not): for the
            // other operators an adaptive site says nothing.
            int nb = c.current().oparg;
            bool specialisable = nb == NB_ADD || nb == NB_INPLACE_ADD || nb == NB_SUBTRACT ||
                                 nb == NB_INPLACE_SUBTRACT || nb == NB_MULTIPLY || nb == NB_INPLACE_MULTIPLY;
            return specialisable ? SiteTypes::kOther : SiteTypes::kUnknown;
        }
        // 3.11 specialises only a comparison that a conditional jump follows
        if (const Instr *next = c.fusable_next()) {
            if (is_bool_jump(next->opcode)) return SiteTypes::kOther;
        }
        return SiteTypes::kUnknown;
    default:
        return SiteTypes::kUnknown;
    }
}

}  // namespace

SubscrPaths subscr_paths(Compiler &c)
{
    SiteProfile seen = site_profile(c.code(), c.current());
    if (seen.state == SiteState::kNotQuickened) return {true, true, false};   // eager mode: nothing learnt
    if (seen.state != SiteState::kSpecialised) return {false, false, false};
    return {seen.type == SeenType::kList, seen.type == SeenType::kTuple, seen.type == SeenType::kStr};
}

void guard_type(Compiler &c, const x86::Gp &obj, PyTypeObject *type, const Label &fail)
{
    auto &a = c.as();
    c.em().load_address(x86::rax, type);
    a.cmp(x86::qword_ptr(obj, layout::kObjectType), x86::rax);
    a.jne(fail);
}

void load_small_int(Compiler &c, const x86::Gp &obj, const x86::Gp &value, const Label &fail)
{
    int_emit::load_one_digit(c.as(), obj, value, fail);
}

void box_small_int(Compiler &c, const x86::Gp &value, const Label &not_small, const Label &done)
{
    auto &a = c.as();
    a.lea(x86::rax, x86::ptr(value, _PY_NSMALLNEGINTS));
    a.cmp(x86::rax, _PY_NSMALLNEGINTS + _PY_NSMALLPOSINTS);
    a.jae(not_small);
    a.imul(x86::rax, x86::rax, static_cast<int32_t>(pyj_small_int_size()));
    c.em().load_address(x86::rcx, pyj_small_ints());
    a.add(x86::rax, x86::rcx);
    c.em().incref(x86::rax);
    if (done.isValid()) a.jmp(done);
}

namespace {

// Jumps to `left_fails` unless lhs (rdi) is exactly `type`, then to
// `right_fails` unless rhs (rsi) is (one load of the type for both). Clobbers rax.
void guard_both(Compiler &c, PyTypeObject *type, const Label &left_fails, const Label &right_fails)
{
    guard_type(c, x86::rdi, type, left_fails);
    c.as().cmp(x86::qword_ptr(x86::rsi, layout::kObjectType), x86::rax);
    c.as().jne(right_fails);
}

}  // namespace

void floor_divmod(Compiler &c)
{
    auto &a = c.as();
    Label exact = a.newLabel();
    a.mov(x86::rax, x86::r8);
    a.cqo();
    a.idiv(x86::r9);
    a.test(x86::rdx, x86::rdx);
    a.jz(exact);
    a.mov(x86::rcx, x86::rdx);
    a.xor_(x86::rcx, x86::r9);
    a.jns(exact);                                     // remainder has the divisor's sign
    a.add(x86::rdx, x86::r9);
    a.dec(x86::rax);
    a.bind(exact);
}

void emit_binary_op(Compiler &c, int nb)
{
    const char *name = nullptr;
    slots::BinaryHelper fn = slots::binary_helper(nb, &name);
    auto &a = c.as();
    auto &em = c.em();
    Label generic = a.newLabel(), have_result = a.newLabel(), done = a.newLabel();
    SiteTypes seen = quickened_types(c, true);
    bool ints = int64_operator(nb) && (seen == SiteTypes::kUnknown || seen == SiteTypes::kInts);
    bool floats = double_operator(nb) && (seen == SiteTypes::kUnknown || seen == SiteTypes::kFloats);
    Label not_int = floats ? a.newLabel() : generic;
    int depth = c.depth();
    // An operand only the value stack holds (refcount 1) is dead after this:
    // `write(box)` stores the result in it instead of a new object being
    // allocated (and the operand freed); with none, jump to `allocate`.
    // Uses rcx and rdi after `write`.
    auto reuse_dead_operand = [&](auto write, const Label &allocate) {
        Label try_right = a.newLabel();
        a.mov(x86::rcx, c.top(1));
        a.cmp(x86::qword_ptr(x86::rcx), 1);
        a.jne(try_right);
        write(x86::rcx);
        a.mov(x86::rdi, c.top(0));
        em.decref(x86::rdi);                // the left operand's slot now holds the result
        a.jmp(done);
        a.bind(try_right);
        a.mov(x86::rcx, c.top(0));
        a.cmp(x86::qword_ptr(x86::rcx), 1);
        a.jne(allocate);
        write(x86::rcx);
        a.mov(x86::rdi, c.top(1));
        a.mov(c.top(1), x86::rcx);
        em.decref(x86::rdi);
        a.jmp(done);
    };
    // Fast results: ints and floats run no Python code, so no tracer can
    // have been switched on. Only a new object can fail (no memory): the
    // allocations test for NULL themselves (the error exit releases the
    // operands still on the stack), so the common path has no test.
    auto release_and_push = [&]() {
        a.mov(x86::r14, x86::rax);
        c.release_inputs(2);
        c.push(x86::r14);
    };
    auto allocated = [&]() {
        c.jump_if_error_zero(x86::rax, depth);
        a.jmp(have_result);
    };
    auto float_path = [&]() {
        a.bind(not_int);
        guard_both(c, &PyFloat_Type, generic, generic);
        a.movsd(x86::xmm0, x86::qword_ptr(x86::rdi, layout::kFloatValue));
        a.movsd(x86::xmm1, x86::qword_ptr(x86::rsi, layout::kFloatValue));
        switch (nb) {
        case NB_ADD: case NB_INPLACE_ADD: a.addsd(x86::xmm0, x86::xmm1); break;
        case NB_SUBTRACT: case NB_INPLACE_SUBTRACT: a.subsd(x86::xmm0, x86::xmm1); break;
        case NB_MULTIPLY: case NB_INPLACE_MULTIPLY: a.mulsd(x86::xmm0, x86::xmm1); break;
        default:   // true division: a zero divisor takes the generic path (which raises)
            a.xorpd(x86::xmm2, x86::xmm2);
            a.ucomisd(x86::xmm1, x86::xmm2);
            a.je(generic);                  // 0.0 (and NaN, unordered) go the generic way
            a.divsd(x86::xmm0, x86::xmm1);
        }
        Label allocate = a.newLabel();
        reuse_dead_operand([&](const x86::Gp &box) { a.movsd(x86::qword_ptr(box, layout::kFloatValue), x86::xmm0); },
                           allocate);
        a.bind(allocate);
        em.call<&PyFloat_FromDouble>(InReg{});   // xmm0: the result
        allocated();
    };
    auto generic_path = [&]() {
        a.bind(generic);
        c.set_prev_instr();
        if (const Instr *store = (nb == NB_ADD || nb == NB_INPLACE_ADD) ? c.concat_store() : nullptr) {
            // s = s + t / s += t on str: append in place and do the STORE_FAST too.
            Label plain = a.newLabel();
            em.call<&rt::pyj_rt_concat_into_local>(Lea(em.local(store->oparg)), c.top(1), c.top(0));
            a.test(x86::eax, x86::eax);
            a.jg(plain);
            a.jnz(c.error_exit(depth - 2));
            c.drop(2);   // done: both operands consumed, the result stored
            a.jmp(c.label_for(store->next));
            c.grow(2);
            a.bind(plain);
        }
        c.slot_call(2, Callee<slots::BinaryHelper>{fn, name}, false);   // prev_instr set above
    };

    if (!ints && !floats) {
        generic_path();
        a.bind(done);
        return;
    }
    a.mov(x86::rdi, c.top(1));
    a.mov(x86::rsi, c.top(0));
    if (ints) {
        guard_both(c, &PyLong_Type, not_int, generic);
        load_small_int(c, x86::rdi, x86::r8, generic);
        load_small_int(c, x86::rsi, x86::r9, generic);
        switch (nb) {
        case NB_ADD: case NB_INPLACE_ADD: a.lea(x86::rdi, x86::ptr(x86::r8, x86::r9)); break;
        case NB_SUBTRACT: case NB_INPLACE_SUBTRACT: a.mov(x86::rdi, x86::r8); a.sub(x86::rdi, x86::r9); break;
        case NB_MULTIPLY: case NB_INPLACE_MULTIPLY: a.mov(x86::rdi, x86::r8); a.imul(x86::rdi, x86::r9); break;
        case NB_AND: case NB_INPLACE_AND: a.mov(x86::rdi, x86::r8); a.and_(x86::rdi, x86::r9); break;
        case NB_OR: case NB_INPLACE_OR: a.mov(x86::rdi, x86::r8); a.or_(x86::rdi, x86::r9); break;
        case NB_XOR: case NB_INPLACE_XOR: a.mov(x86::rdi, x86::r8); a.xor_(x86::rdi, x86::r9); break;
        default:   // floor division and modulo: a zero divisor takes the generic path (which raises)
            a.test(x86::r9, x86::r9);
            a.jz(generic);
            floor_divmod(c);
            if (nb == NB_FLOOR_DIVIDE || nb == NB_INPLACE_FLOOR_DIVIDE) a.mov(x86::rdi, x86::rax);
            else a.mov(x86::rdi, x86::rdx);
        }
        // rdi = the result (operands below 2**30: no overflow possible).
        // -5 <= result < 257: the cached object, inline. Otherwise a
        // one-digit result (small-int cache objects must be returned as they
        // are) may go into a dead operand; else a new int.
        Label not_small = a.newLabel();
        box_small_int(c, x86::rdi, not_small, Label());
        em.out_of_line([&] {
            Label allocate_int = a.newLabel();
            a.bind(not_small);
            a.mov(x86::rdx, x86::rdi);
            a.sar(x86::rdx, 63);
            a.mov(x86::rax, x86::rdi);
            a.xor_(x86::rax, x86::rdx);
            a.sub(x86::rax, x86::rdx);          // |result|
            a.cmp(x86::rax, int64_t(1) << PyLong_SHIFT);
            a.jae(allocate_int);
            reuse_dead_operand(
                [&](const x86::Gp &box) {
                    int_emit::store_one_digit(a, box, x86::rdi);   // |result| in eax
                },
                allocate_int);
            a.bind(allocate_int);
            em.call<&PyLong_FromLongLong>(x86::rdi);   // the result
            allocated();
        });
        if (floats) em.out_of_line(float_path);
    } else {
        float_path();   // true division: no int path
    }
    a.bind(have_result);
    release_and_push();
    c.grow(1);   // the generic path starts again from both operands
    em.out_of_line([&] {
        generic_path();
        a.jmp(done);
    });
    a.bind(done);
}

namespace {

// Condition codes after `cmp lhs, rhs` (signed integers) for each rich comparison.
void jump_if_int_cmp(x86::Assembler &a, int op, const Label &target)
{
    switch (op) {
    case Py_LT: a.jl(target); break;
    case Py_LE: a.jle(target); break;
    case Py_EQ: a.je(target); break;
    case Py_NE: a.jne(target); break;
    case Py_GT: a.jg(target); break;
    case Py_GE: a.jge(target); break;
    }
}

// Jumps to `target` if the float comparison holds; NaN compares false except for !=.
void jump_if_float_cmp(x86::Assembler &a, int op, const Label &target)
{
    Label skip = a.newLabel();
    switch (op) {
    case Py_LT: a.ucomisd(x86::xmm1, x86::xmm0); a.ja(target); break;     // rhs > lhs
    case Py_LE: a.ucomisd(x86::xmm1, x86::xmm0); a.jae(target); break;
    case Py_GT: a.ucomisd(x86::xmm0, x86::xmm1); a.ja(target); break;
    case Py_GE: a.ucomisd(x86::xmm0, x86::xmm1); a.jae(target); break;
    case Py_EQ: a.ucomisd(x86::xmm0, x86::xmm1); a.jp(skip); a.je(target); break;
    case Py_NE: a.ucomisd(x86::xmm0, x86::xmm1); a.jp(target); a.jne(target); break;
    }
    a.bind(skip);
}

#if PY_VERSION_HEX >= 0x030D0000
bool is_bool_jump(int opcode) { return opcode == POP_JUMP_IF_FALSE || opcode == POP_JUMP_IF_TRUE; }
bool is_jump_if_true(int opcode) { return opcode == POP_JUMP_IF_TRUE; }
#else
bool is_bool_jump(int opcode)
{
    return opcode == POP_JUMP_FORWARD_IF_FALSE || opcode == POP_JUMP_FORWARD_IF_TRUE ||
           opcode == POP_JUMP_BACKWARD_IF_FALSE || opcode == POP_JUMP_BACKWARD_IF_TRUE;
}
bool is_jump_if_true(int opcode) { return opcode == POP_JUMP_FORWARD_IF_TRUE || opcode == POP_JUMP_BACKWARD_IF_TRUE; }
#endif

}  // namespace

void emit_compare_op(Compiler &c, int op)
{
    auto &a = c.as();
    auto &em = c.em();
    const Instr *jump = c.fusable_next();
    if (jump != nullptr && !is_bool_jump(jump->opcode)) jump = nullptr;
    bool jump_when_true = jump && is_jump_if_true(jump->opcode);

    Label generic = a.newLabel(), not_int = a.newLabel(), is_true = a.newLabel(), is_false = a.newLabel();
    Label done = a.newLabel();
    int depth = c.depth();

    // Fast paths: decide true/false without making a bool. Ints inline,
    // floats out of line; only the one a quickened site has seen, or none.
    SiteTypes seen = quickened_types(c, false);
    bool ints = seen == SiteTypes::kUnknown || seen == SiteTypes::kInts;
    bool floats = seen == SiteTypes::kUnknown || seen == SiteTypes::kFloats;
    // Equality of two exact strs where the interpreter specialised the site
    // for them (3.13's COMPARE_OP_STR, 3.11's COMPARE_OP_STR_JUMP).
    bool strs = seen == SiteTypes::kOther && (op == Py_EQ || op == Py_NE) &&
                site_profile(c.code(), c.current()).type == SeenType::kStr;
    auto float_compare = [&]() {
        a.movsd(x86::xmm0, x86::qword_ptr(x86::rdi, layout::kFloatValue));
        a.movsd(x86::xmm1, x86::qword_ptr(x86::rsi, layout::kFloatValue));
        jump_if_float_cmp(a, op, is_true);
        a.jmp(is_false);
    };
    a.mov(x86::rdi, c.top(1));
    a.mov(x86::rsi, c.top(0));
    if (ints) {
        guard_both(c, &PyLong_Type, floats ? not_int : generic, generic);
        load_small_int(c, x86::rdi, x86::r8, generic);
        load_small_int(c, x86::rsi, x86::r9, generic);
        a.cmp(x86::r8, x86::r9);
        jump_if_int_cmp(a, op, is_true);
        if (floats) {
            em.out_of_line([&] {
                a.bind(not_int);
                guard_both(c, &PyFloat_Type, generic, generic);
                float_compare();
            });
        }
    } else if (floats) {
        guard_both(c, &PyFloat_Type, generic, generic);
        float_compare();
    } else if (strs) {
        guard_both(c, &PyUnicode_Type, generic, generic);
        em.call<&slots::str_equal>(x86::rdi, x86::rsi);
        a.test(x86::eax, x86::eax);
        a.js(generic);   // (3.11: a string not ready yet)
        if (op == Py_EQ) a.jnz(is_true); else a.jz(is_true);
        a.jmp(is_false);
    } else {
        a.jmp(generic);
    }

    // Both fast outcomes release the operands (ints, floats and strs run no
    // Python code when they die) and either push a bool or take the fused jump.
    auto release_operands = [&]() {
        c.release_inputs(2);
        c.grow(2);   // the model is restored for the other paths below
    };
    // The outcome goes to r15d (callee-saved: the releases may free), then
    // one copy of the releases serves both.
    if (ints || floats || strs) {
        Label decided = a.newLabel();
        a.bind(is_false);           // the int comparison falls through to false
        a.xor_(x86::r15d, x86::r15d);
        a.short_().jmp(decided);    // over the 6-byte mov
        a.bind(is_true);
        a.mov(x86::r15d, 1);
        a.bind(decided);
        release_operands();
        c.drop(2);
        // (`done` is the code that follows: the generic path is out of line)
        if (jump) {
            a.test(x86::r15d, x86::r15d);
            c.jump_if_flags(jump_when_true, jump->target, *jump, Label());
        } else {
            em.load_address(x86::rax, Py_False);
            em.load_address(x86::rcx, Py_True);
            a.test(x86::r15d, x86::r15d);
            a.cmovnz(x86::rax, x86::rcx);
            em.incref(x86::rax);
            c.push(x86::rax);
            c.drop(1);
            // falls through to done
        }
        c.grow(2);
    }

    // Generic: PyObject_RichCompare, then (if fused) the truth test of the result.
    em.out_of_line([&] {
        a.bind(generic);
        if (!jump) {
            c.slot_call(2, callee<&slots::compare>(), true, op);
            a.jmp(done);
            return;
        }
        // Fused: the result is consumed by the jump, as POP_JUMP_IF_* would.
        c.set_prev_instr();
        em.call<&slots::compare_truth>(Lea(em.stack(c.depth() - 2)), op, Emitter::tstate);
        c.drop(2);
        a.test(x86::eax, x86::eax);
        a.js(c.error_exit(depth - 2));
        if constexpr (PY_VERSION_HEX >= 0x030D0000) {
            // The comparison turned tracing on: its bool goes on the stack
            // and the interpreter takes the frame at the jump (whose target's
            // line event it then takes as coming from the jump, as stock).
            int slot = depth - 2;
            Label tracing = c.tracing_exit(jump->start, depth - 1);
            Label handover = em.cold([slot, tracing](Emitter &e) {
                auto &a = e.as();
                e.load_address(x86::rcx, Py_False);
                e.load_address(x86::rdx, Py_True);
                a.test(x86::eax, 1);
                a.cmovnz(x86::rcx, x86::rdx);
                e.incref(x86::rcx);
                a.mov(e.stack(slot), x86::rcx);
                a.jmp(tracing);
            });
            a.cmp(x86::eax, 2);
            a.jae(handover);
            a.test(x86::eax, x86::eax);
        }
        c.jump_if_flags(jump_when_true, jump->target, *jump, done);
    });
    a.bind(done);
    if (jump) c.fuse_next();
}

}  // namespace pyjion
