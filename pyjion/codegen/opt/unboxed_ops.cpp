// The optimising tier's instructions on unboxed values (see
// unboxed_frame.h): the loads of int and float inputs with their guards,
// int64 and double arithmetic, comparisons fused with their jumps, FOR_ITER
// over a range_iterator, and the jumps.
#include "opt/unboxed_frame.h"

#include <cstring>

#include "baseline/compiler.h"
#include "baseline/specialize.h"
#include "codegen_api.h"
#include "cpython/frame_layout.h"
#include "cpython/int_emit.h"
#include "front/opcodes.h"
#include "opt/bytecode_forms.h"
#include "runtime/helpers.h"

namespace pyjion::opt {

using namespace asmjit;
using model::Kind;
using model::SlotKind;

void UnboxedFrame::small_int_value(const Label &big)
{
    auto &a = c_.as();
    int_emit::load_one_digit(a, x86::rdi, x86::rcx, big);
    a.mov(x86::rax, x86::rcx);
}

// A lazy constant that is an exact int of int64 size: its value.
bool UnboxedFrame::const_int(SlotKind kind, long long &value) const
{
    if (kind.kind != Kind::LazyConst) return false;
    PyObject *v = PyTuple_GET_ITEM(code_->co_consts, kind.const_index());
    if (!PyLong_CheckExact(v)) return false;
    int overflow = 0;
    value = PyLong_AsLongLongAndOverflow(v, &overflow);
    return overflow == 0;
}

// A lazy constant that is an exact float: its value.
bool UnboxedFrame::const_float(SlotKind kind, double &value) const
{
    if (kind.kind != Kind::LazyConst) return false;
    PyObject *v = PyTuple_GET_ITEM(code_->co_consts, kind.const_index());
    if (!PyFloat_CheckExact(v)) return false;
    value = PyFloat_AS_DOUBLE(v);
    return true;
}

// Whether load_double of input `pos` may call a helper (clobbering xmm
// registers): an int object's value beyond two digits is asked.
bool UnboxedFrame::load_double_calls(int k, int pos, bool or_int) const
{
    SlotKind kind = rep_.slot(pos);
    long long int_value;
    double float_value;
    if (kind.kind == Kind::Double || kind.kind == Kind::Int64 || const_int(kind, int_value) ||
        const_float(kind, float_value)) {
        return false;
    }
    return or_int || type_of_stack(k, pos) == VType::kInt;
}

// An int input of the current instruction (value-stack slot `pos`) into
// `dst` (r14 or r15): from its shadow slot, or unboxed from the frame, after
// a type check where the types could not prove it (`guard`). Values beyond
// two digits go through the runtime; one that does not fit int64 fails.
void UnboxedFrame::load_int(int k, int pos, const Gp &dst, const Label &fail)
{
    auto &a = c_.as();
    auto &em = c_.em();
    SlotKind kind = rep_.slot(pos);
    if (kind.kind == Kind::Int64) {
        a.mov(dst, value_at(pos));
        return;
    }
    long long value;
    if (const_int(kind, value)) {
        a.mov(dst, imm(value));
        return;
    }
    load_object(x86::rdi, kind, pos);
    if (type_of_stack(k, pos) != VType::kInt) {
        em.load_address(x86::rax, &PyLong_Type);
        a.cmp(x86::qword_ptr(x86::rdi, layout::kObjectType), x86::rax);
        a.jne(fail);
    }
    Label big = a.newLabel(), done = a.newLabel();
    small_int_value(big);
    a.mov(dst, x86::rax);
    em.out_of_line([&] {
        a.bind(big);
        // The pad above the shadow slots holds the result.
        em.call<&unboxed::long_to_int64>(InReg(), Lea(x86::ptr(x86::rsp, shadow_bytes_)));   // the int in rdi
        a.test(x86::eax, x86::eax);
        a.jnz(fail);
        a.mov(dst, x86::qword_ptr(x86::rsp, shadow_bytes_));
        a.jmp(done);
    });
    a.bind(done);
}

// A float input into `dst`: from its shadow slot, converted from an int's,
// or read from a float object (type-checked unless the types proved it;
// with `or_int`, an exact int64-sized int is taken too and converted).
void UnboxedFrame::load_double(int k, int pos, const Xmm &dst, const Label &fail, bool or_int)
{
    auto &a = c_.as();
    auto &em = c_.em();
    SlotKind kind = rep_.slot(pos);
    Gp scratch = dst == x86::xmm0 ? x86::r14 : x86::r15;
    if (kind.kind == Kind::Double) {
        a.movsd(dst, value_at(pos));
        return;
    }
    double value;
    if (const_float(kind, value)) {
        uint64_t bits;
        std::memcpy(&bits, &value, sizeof bits);
        a.mov(scratch, imm(bits));
        a.movq(dst, scratch);
        return;
    }
    long long int_value;
    if (kind.kind == Kind::Int64 || type_of_stack(k, pos) == VType::kInt || (or_int && const_int(kind, int_value))) {
        load_int(k, pos, scratch, fail);
        a.cvtsi2sd(dst, scratch);   // rounds to nearest even, as int.__float__ does
        return;
    }
    load_object(x86::rdi, kind, pos);
    if (type_of_stack(k, pos) != VType::kFloat) {
        em.load_address(x86::rax, &PyFloat_Type);
        a.cmp(x86::qword_ptr(x86::rdi, layout::kObjectType), x86::rax);
        if (!or_int) {
            a.jne(fail);
        } else {
            Label not_float = a.newLabel(), done = a.newLabel();
            a.jne(not_float);
            a.movsd(dst, x86::qword_ptr(x86::rdi, layout::kFloatValue));
            em.out_of_line([&] {
                a.bind(not_float);
                load_int(k, pos, scratch, fail);   // checks for an exact int
                a.cvtsi2sd(dst, scratch);
                a.jmp(done);
            });
            a.bind(done);
            return;
        }
    }
    a.movsd(dst, x86::qword_ptr(x86::rdi, layout::kFloatValue));
}

bool UnboxedFrame::releases(int n) const
{
    for (int i = 1; i <= n; i++) {
        if (rep_.slot(rep_.depth() - i).boxed_in_frame()) return true;
    }
    return false;
}

// Releases the instruction's `n` boxed inputs, the deepest first, as ceval
// does (exact ints and floats: their deallocation runs no code; other
// objects pass prev_unit).
void UnboxedFrame::release_boxed_inputs(int n, int prev_unit)
{
    for (int i = n; i >= 1; i--) {
        int pos = rep_.depth() - i;
        if (!rep_.slot(pos).boxed_in_frame()) continue;   // unboxed, or lazy (borrowed)
        c_.as().mov(x86::rdi, frame_slot(slot_of_stack(pos)));
        c_.em().decref(x86::rdi, prev_unit);
    }
}

// For // and % whose divisor is a lazy constant (one path brings it: a
// merge point stores lazy values) and a positive power of two: its
// exponent; else -1.
int UnboxedFrame::power_of_two_divisor(int k) const
{
    int op = instr(k).oparg;
    bool division = op == NB_FLOOR_DIVIDE || op == NB_INPLACE_FLOOR_DIVIDE || op == NB_REMAINDER ||
                    op == NB_INPLACE_REMAINDER;
    long long n;
    if (!division || !const_int(rep_.peek(), n) || n <= 0 || (n & (n - 1)) != 0) return -1;
    return __builtin_ctzll(static_cast<unsigned long long>(n));
}

bool UnboxedFrame::emit_int_arith(int k)
{
    const Instr &ins = instr(k);
    auto &a = c_.as();
    int d = rep_.depth();
    int lhs = d - 2, rhs = d - 1;
    Label guard = exit(unboxed::kExitGuardInt, k, d);
    Label overflow = exit(unboxed::kExitIntOverflow, k, d);
    // The inputs are loaded before the decisions' exits are needed: the
    // exits box from the state before the instruction.
    load_int(k, lhs, x86::r14, guard);
    // A constant power-of-two divisor is never loaded (its exponent instead).
    int shift = power_of_two_divisor(k);
    if (shift < 0) load_int(k, rhs, x86::r15, guard);
    switch (ins.oparg) {
    case NB_ADD: case NB_INPLACE_ADD:
        a.add(x86::r14, x86::r15);
        a.jo(overflow);
        break;
    case NB_SUBTRACT: case NB_INPLACE_SUBTRACT:
        a.sub(x86::r14, x86::r15);
        a.jo(overflow);
        break;
    case NB_MULTIPLY: case NB_INPLACE_MULTIPLY:
        a.imul(x86::r14, x86::r15);
        a.jo(overflow);
        break;
    case NB_AND: case NB_INPLACE_AND: a.and_(x86::r14, x86::r15); break;
    case NB_OR: case NB_INPLACE_OR: a.or_(x86::r14, x86::r15); break;
    case NB_XOR: case NB_INPLACE_XOR: a.xor_(x86::r14, x86::r15); break;
    case NB_FLOOR_DIVIDE: case NB_INPLACE_FLOOR_DIVIDE: case NB_REMAINDER: case NB_INPLACE_REMAINDER: {
        bool floor_div = ins.oparg == NB_FLOOR_DIVIDE || ins.oparg == NB_INPLACE_FLOOR_DIVIDE;
        if (shift >= 0) {
            // By 2**shift: Python's floor rounding is the arithmetic shift's,
            // and the remainder (of the divisor's sign) the low bits, for
            // every int64.
            if (floor_div) {
                a.sar(x86::r14, shift);
            } else {
                a.mov(x86::rax, imm((uint64_t{1} << shift) - 1));
                a.and_(x86::r14, x86::rax);
            }
            break;
        }
        Label ok = a.newLabel();
        a.test(x86::r15, x86::r15);
        a.jz(exit(unboxed::kExitZeroDivisor, k, d));
        a.cmp(x86::r15, -1);
        a.jne(ok);
        a.mov(x86::rax, imm(INT64_MIN));
        a.cmp(x86::r14, x86::rax);
        a.je(overflow);   // INT64_MIN // -1 does not fit (and idiv would trap)
        a.bind(ok);
        a.mov(x86::r8, x86::r14);
        a.mov(x86::r9, x86::r15);
        floor_divmod(c_);
        a.mov(x86::r14, floor_div ? x86::rax : x86::rdx);
        break;
    }
    default:
        throw CompileError{PYJION_RESULT_COMPILER_ERROR, "optimising tier: no int64 form of operator " +
                                                             std::to_string(ins.oparg)};
    }
    a.mov(shadow(slot_of_stack(lhs)), x86::r14);
    release_boxed_inputs(2);
    rep_.drop(2);
    rep_.push(SlotKind::int64());
    return true;
}

bool UnboxedFrame::emit_float_arith(int k)
{
    const Instr &ins = instr(k);
    auto &a = c_.as();
    int d = rep_.depth();
    Label guard = exit(unboxed::kExitGuardFloat, k, d);
    uint8_t guards = types_->decision(k).guards;
    // An input the instruction before left in xmm0 is not loaded again.
    int lhs_slot = slot_of_stack(d - 2);
    bool lhs_held = rep_.slot(d - 2).kind == Kind::Double && xmm0_slot_ == value_home(d - 2);
    bool rhs_held = rep_.slot(d - 1).kind == Kind::Double && xmm0_slot_ == value_home(d - 1) &&
                    !load_double_calls(k, d - 2, guards & 4);
    if (rhs_held) a.movapd(x86::xmm1, x86::xmm0);
    if (!lhs_held) load_double(k, d - 2, x86::xmm0, guard, guards & 4);
    bool calls = !rhs_held && load_double_calls(k, d - 1, guards & 8);
    if (calls) a.movq(x86::r14, x86::xmm0);   // a helper call in the next load clobbers xmm registers
    if (!rhs_held) load_double(k, d - 1, x86::xmm1, guard, guards & 8);
    if (calls) a.movq(x86::xmm0, x86::r14);
    switch (ins.oparg) {
    case NB_ADD: case NB_INPLACE_ADD: a.addsd(x86::xmm0, x86::xmm1); break;
    case NB_SUBTRACT: case NB_INPLACE_SUBTRACT: a.subsd(x86::xmm0, x86::xmm1); break;
    case NB_MULTIPLY: case NB_INPLACE_MULTIPLY: a.mulsd(x86::xmm0, x86::xmm1); break;
    case NB_POWER: case NB_INPLACE_POWER: {
        // The result straight into its shadow slot; the cases pow does not
        // decide as float.__pow__ does leave.
        auto &em = c_.em();
        em.call<&unboxed::float_pow>(InReg{}, InReg{}, Lea(shadow(slot_of_stack(d - 2))));
        a.test(x86::eax, x86::eax);
        a.jnz(exit(unboxed::kExitFloatPow, k, d));
        a.movsd(x86::xmm0, shadow(slot_of_stack(d - 2)));
        break;
    }
    case NB_TRUE_DIVIDE: case NB_INPLACE_TRUE_DIVIDE: {
        // By 0.0 (or -0.0): the interpreter raises ZeroDivisionError.
        Label nonzero = a.newLabel();
        a.xorpd(x86::xmm2, x86::xmm2);
        a.ucomisd(x86::xmm1, x86::xmm2);
        a.jne(nonzero);
        a.jp(nonzero);   // NaN
        a.jmp(exit(unboxed::kExitZeroDivisor, k, d));
        a.bind(nonzero);
        a.divsd(x86::xmm0, x86::xmm1);
        break;
    }
    default:
        throw CompileError{PYJION_RESULT_COMPILER_ERROR, "optimising tier: no double form of operator " +
                                                             std::to_string(ins.oparg)};
    }
    a.movsd(shadow(slot_of_stack(d - 2)), x86::xmm0);
    xmm0_slot_ = releases(2) ? -1 : lhs_slot;
    release_boxed_inputs(2);
    rep_.drop(2);
    rep_.push(SlotKind::dbl());
    return true;
}

bool UnboxedFrame::emit_negative(int k)
{
    OpKind kind = types_->decision(k).kind;
    if (kind != OpKind::kIntArith && kind != OpKind::kFloatArith) return false;
    auto &a = c_.as();
    int d = rep_.depth();
    if (kind == OpKind::kIntArith) {
        load_int(k, d - 1, x86::r14, exit(unboxed::kExitGuardInt, k, d));
        a.neg(x86::r14);
        a.jo(exit(unboxed::kExitIntOverflow, k, d));
        a.mov(shadow(slot_of_stack(d - 1)), x86::r14);
    } else {
        load_double(k, d - 1, x86::xmm0, exit(unboxed::kExitGuardFloat, k, d));
        a.movq(x86::r14, x86::xmm0);
        a.btc(x86::r14, 63);   // flips the sign, of 0.0 and NaN too, as float.__neg__ does
        a.mov(shadow(slot_of_stack(d - 1)), x86::r14);
    }
    release_boxed_inputs(1);
    rep_.drop(1);
    rep_.push(kind == OpKind::kIntArith ? SlotKind::int64() : SlotKind::dbl());
    return true;
}

bool UnboxedFrame::emit_compare(int k)
{
    const Instr &ins = instr(k);
    OpKind kind = types_->decision(k).kind;
    if (kind != OpKind::kIntCompare && kind != OpKind::kFloatCompare) return false;
    auto &a = c_.as();
    int d = rep_.depth();
    int op = compare_operator(ins.oparg);
    if (kind == OpKind::kIntCompare) {
        Label guard = exit(unboxed::kExitGuardInt, k, d);
        load_int(k, d - 2, x86::r14, guard);
        load_int(k, d - 1, x86::r15, guard);
        a.cmp(x86::r14, x86::r15);
        switch (op) {
        case Py_LT: a.setl(x86::al); break;
        case Py_LE: a.setle(x86::al); break;
        case Py_EQ: a.sete(x86::al); break;
        case Py_NE: a.setne(x86::al); break;
        case Py_GT: a.setg(x86::al); break;
        default: a.setge(x86::al); break;
        }
    } else {
        Label guard = exit(unboxed::kExitGuardFloat, k, d);
        load_double(k, d - 2, x86::xmm0, guard);
        bool calls = load_double_calls(k, d - 1, false);
        if (calls) a.movq(x86::r14, x86::xmm0);
        load_double(k, d - 1, x86::xmm1, guard);
        if (calls) a.movq(x86::xmm0, x86::r14);
        // An unordered (NaN) comparison sets ZF, PF and CF: only != is true.
        switch (op) {
        case Py_LT: a.ucomisd(x86::xmm1, x86::xmm0); a.seta(x86::al); break;
        case Py_LE: a.ucomisd(x86::xmm1, x86::xmm0); a.setae(x86::al); break;
        case Py_GT: a.ucomisd(x86::xmm0, x86::xmm1); a.seta(x86::al); break;
        case Py_GE: a.ucomisd(x86::xmm0, x86::xmm1); a.setae(x86::al); break;
        case Py_EQ:
            a.ucomisd(x86::xmm0, x86::xmm1);
            a.sete(x86::al);
            a.setnp(x86::cl);
            a.and_(x86::al, x86::cl);
            break;
        default:
            a.ucomisd(x86::xmm0, x86::xmm1);
            a.setne(x86::al);
            a.setp(x86::cl);
            a.or_(x86::al, x86::cl);
            break;
        }
    }
    a.movzx(x86::r14d, x86::al);
    release_boxed_inputs(2);
    rep_.drop(2);

    const Instr *next = c_.fusable_next();
    if (next != nullptr && is_pop_jump(next->opcode)) {
        bool when_true = jumps_when_true(next->opcode);
        bool backward = opcode_jump_kind(next->opcode) == REL_BACKWARD;
        int target = bc_.instr_at(next->target);
        a.test(x86::r14d, x86::r14d);
        if (!backward) {
            if (when_true) a.jnz(edge(target));
            else a.jz(edge(target));
        } else {
            // The taken branch checks the eval breaker, as every backward jump does.
            model::FrameState here = rep_;
            count_moves(moves(without_lazy(here), merge_state(target), target));
            Label taken = c_.em().cold([this, here, target, next](Emitter &) {
                model::FrameState saved = rep_;
                rep_ = here;
                jump_to_merge(target, next->index, breaker_unit(*next));
                rep_ = saved;
            });
            if (when_true) a.jnz(taken);
            else a.jz(taken);
        }
        fused_ = true;
        c_.fuse_next();
        return true;
    }
    // A bool object, as COMPARE_OP leaves it.
    c_.em().load_address(x86::rax, Py_False);
    c_.em().load_address(x86::rcx, Py_True);
    a.test(x86::r14d, x86::r14d);
    a.cmovnz(x86::rax, x86::rcx);
    c_.em().incref(x86::rax);
    a.mov(frame_slot(slot_of_stack(d - 2)), x86::rax);
    rep_.push(SlotKind::boxed());
    return true;
}

bool UnboxedFrame::emit_for_iter(int k)
{
    const Instr &ins = instr(k);
    if (types_->decision(k).kind != OpKind::kRangeIter || !rep_.peek().boxed_in_frame()) return false;
    auto &a = c_.as();
    auto &em = c_.em();
    int d = rep_.depth();
    int target = bc_.instr_at(ins.target);
#if PY_VERSION_HEX >= 0x030D0000
    // Exhausted, 3.13's interpreter pops the iterator and goes on past the
    // END_FOR, POP_TOP its jump lands on (which 3.13's compiler counts as
    // reached with [iter, next]), as this does.
    int after = bc_.instr_at(ins.target + 2);
    if (target < 0 || instr(target).opcode != END_FOR || after < 0 || instr(after - 1).opcode != POP_TOP ||
        instr(after).depth != d - 1) {
        return false;
    }
#endif
    Label exhausted = a.newLabel();
    a.mov(x86::rdi, frame_slot(slot_of_stack(d - 1)));
#if PY_VERSION_HEX >= 0x030D0000
    // 3.13's iterator counts len down and moves start on: the item is start.
    a.mov(x86::rax, x86::qword_ptr(x86::rdi, layout::kRangeIterLen));
    a.test(x86::rax, x86::rax);
    a.jle(exhausted);
    em.out_of_line([&] {
        a.bind(exhausted);
        em.decref(x86::rdi);   // a range_iterator: its deallocation runs no code
        model::FrameState saved = rep_;
        rep_.pop();
        if (bc_.is_jump_target(instr(after).start)) {
            a.jmp(edge(after));
        } else {
            // Reached otherwise only from POP_TOP, after END_FOR (generic:
            // see emit()) boxed the frame: boxed here too.
            materialize();
            emit_moves(moves(rep_, all_boxed(rep_), after), ins.index, rep_.depth());
            a.jmp(c_.label_at(after));
        }
        rep_ = saved;
    });
    a.dec(x86::rax);
    a.mov(x86::qword_ptr(x86::rdi, layout::kRangeIterLen), x86::rax);
    a.mov(x86::rcx, x86::qword_ptr(x86::rdi, layout::kRangeIterStart));
    a.mov(x86::rdx, x86::rcx);
    a.add(x86::rdx, x86::qword_ptr(x86::rdi, layout::kRangeIterStep));   // wraps after the last item, unread
    a.mov(x86::qword_ptr(x86::rdi, layout::kRangeIterStart), x86::rdx);
#else
    a.mov(x86::rax, x86::qword_ptr(x86::rdi, layout::kRangeIterIndex));
    a.cmp(x86::rax, x86::qword_ptr(x86::rdi, layout::kRangeIterLen));
    a.jge(exhausted);
    em.out_of_line([&] {
        // The iterator is done: FOR_ITER pops it and jumps past the loop.
        a.bind(exhausted);
        em.decref(x86::rdi);
        model::FrameState saved = rep_;
        rep_.pop();
        a.jmp(edge(target));
        rep_ = saved;
    });
    // start + index * step never overflows: range() made the iterator so.
    a.mov(x86::rcx, x86::qword_ptr(x86::rdi, layout::kRangeIterStep));
    a.imul(x86::rcx, x86::rax);
    a.add(x86::rcx, x86::qword_ptr(x86::rdi, layout::kRangeIterStart));
    a.inc(x86::rax);
    a.mov(x86::qword_ptr(x86::rdi, layout::kRangeIterIndex), x86::rax);
#endif
    a.mov(shadow(slot_of_stack(d)), x86::rcx);
    rep_.push(SlotKind::int64());
    return true;
}

bool UnboxedFrame::emit_jump(int k)
{
    const Instr &ins = instr(k);
    int target = bc_.instr_at(ins.target);
    bool backward = ins.opcode == JUMP_BACKWARD;
    if (backward) c_.emit_warmup_tick();   // as the interpreter counts it
    count_moves(moves(without_lazy(rep_), merge_state(target), target));
    jump_to_merge(target, ins.index, backward ? breaker_unit(ins) : -1);
    return true;
}

// xs[i]: an exact list (checked) and an int64 index, negative counting from
// the end as list.__getitem__ does; the item is pushed as a new reference.
// An index out of range leaves for the interpreter, which raises IndexError.
// The list at stack position d - 2, checked (else `leave`), and the int64
// index at d - 1 made non-negative and checked against its length (else
// `leave`: the interpreter raises IndexError): rax = its items, r15 = the
// index, rdi = the list. Clobbers rcx.
void UnboxedFrame::list_item_address(int k, int d, const Label &leave)
{
    auto &a = c_.as();
    auto &em = c_.em();
    long long index;
    bool constant = const_int(rep_.slot(d - 1), index) && index > INT32_MIN && index < INT32_MAX;
    if (!constant) load_int(k, d - 1, x86::r15, exit(unboxed::kExitGuardInt, k, d));
    load_object(x86::rdi, rep_.slot(d - 2), d - 2);
    em.load_address(x86::rax, &PyList_Type);
    a.cmp(x86::qword_ptr(x86::rdi, layout::kObjectType), x86::rax);
    a.jne(leave);
    if (constant && index >= 0) {
        a.cmp(x86::qword_ptr(x86::rdi, layout::kVarSize), imm(index));   // len(xs)
        a.jle(leave);
        a.mov(x86::r15d, imm(index));
    } else if (constant) {
        a.mov(x86::r15, x86::qword_ptr(x86::rdi, layout::kVarSize));
        a.add(x86::r15, imm(index));
        a.js(leave);
    } else {
        Label positive = a.newLabel();
        a.mov(x86::rcx, x86::qword_ptr(x86::rdi, layout::kVarSize));   // len(xs)
        a.test(x86::r15, x86::r15);
        a.jns(positive);
        a.add(x86::r15, x86::rcx);
        a.bind(positive);
        a.cmp(x86::r15, x86::rcx);
        a.jae(leave);   // unsigned: negative after the adjustment too
    }
    a.mov(x86::rax, x86::qword_ptr(x86::rdi, layout::kListItems));
}

bool UnboxedFrame::emit_list_item(int k)
{
    if (types_->decision(k).kind != OpKind::kListItem) return false;
    auto &a = c_.as();
    auto &em = c_.em();
    int d = rep_.depth();
    if (unboxed_kind(rep_.slot(d - 2))) return false;
    Label leave = exit(unboxed::kExitNotList, k, d);
    list_item_address(k, d, leave);
    a.mov(x86::r14, x86::qword_ptr(x86::rax, x86::r15, 3));
    if (float_item_[k]) {
        // Float arithmetic takes it next: its value, no reference taken.
        // Anything but a float leaves, for the generic operations.
        Label guard = exit(unboxed::kExitGuardFloat, k, d);
        em.load_address(x86::rax, &PyFloat_Type);
        a.cmp(x86::qword_ptr(x86::r14, layout::kObjectType), x86::rax);
        a.jne(guard);
        a.movsd(x86::xmm0, x86::qword_ptr(x86::r14, layout::kFloatValue));
        a.movsd(shadow(slot_of_stack(d - 2)), x86::xmm0);
        xmm0_slot_ = releases(2) ? -1 : slot_of_stack(d - 2);
        release_boxed_inputs(2, instr(k).index);   // a dying list's items may run code: prev_instr set first
        rep_.drop(2);
        rep_.push(SlotKind::dbl());
        return true;
    }
    em.incref(x86::r14);
    release_boxed_inputs(2, instr(k).index);   // a dying list's items may run code: prev_instr set first
    a.mov(frame_slot(slot_of_stack(d - 2)), x86::r14);
    rep_.drop(2);
    rep_.push(SlotKind::boxed());
    return true;
}

// STORE_SUBSCR into a list at an int64 index, as STORE_SUBSCR_LIST_INT
// does, without boxing the frame: an unboxed value is boxed for the list
// alone. Leaves (not_list) for anything but a list, an index out of range
// (the interpreter raises IndexError), or an old item whose release would
// run code (only an exact int or float may die here).
bool UnboxedFrame::emit_list_store(int k)
{
    if (types_->decision(k).kind != OpKind::kListStore) return false;
    auto &a = c_.as();
    auto &em = c_.em();
    int d = rep_.depth();
    if (unboxed_kind(rep_.slot(d - 2))) return false;
    SlotKind value = rep_.slot(d - 3);
    Label leave = exit(unboxed::kExitNotList, k, d);
    Label old_ok = a.newLabel(), stored = a.newLabel();
    list_item_address(k, d, leave);
    a.mov(x86::r14, x86::qword_ptr(x86::rax, x86::r15, 3));   // the old item
    // An old item only the list references dies here: an exact float or int.
    a.cmp(x86::qword_ptr(x86::r14, layout::kObjectRefcnt), 1);
    a.jne(old_ok);
    em.load_address(x86::rax, &PyFloat_Type);
    a.cmp(x86::qword_ptr(x86::r14, layout::kObjectType), x86::rax);
    if (value.kind == Kind::Double) {
        // Such a float takes the new value in place (as a new float would
        // take its memory): no allocation.
        Label not_float = a.newLabel();
        a.jne(not_float);
        a.movsd(x86::xmm0, value_at(d - 3));
        a.movsd(x86::qword_ptr(x86::r14, layout::kFloatValue), x86::xmm0);
        a.jmp(stored);
        a.bind(not_float);
    } else {
        a.je(old_ok);
    }
    em.load_address(x86::rax, &PyLong_Type);
    a.cmp(x86::qword_ptr(x86::r14, layout::kObjectType), x86::rax);
    a.jne(leave);
    a.bind(old_ok);
    // The new item: the stack's reference, or a box made for the list.
    if (value.kind == Kind::Double) {
        a.movsd(x86::xmm0, value_at(d - 3));
        em.call<&PyFloat_FromDouble>(InReg{});
    } else if (value.kind == Kind::Int64) {
        Label boxed = a.newLabel(), not_small = a.newLabel();
        a.mov(x86::rdi, value_at(d - 3));
        box_small_int(c_, x86::rdi, not_small, boxed);
        a.bind(not_small);
        em.call<&PyLong_FromLongLong>(x86::rdi);
        a.bind(boxed);
    } else if (value.lazy()) {
        load_object(x86::rax, value, d - 3);
        em.incref(x86::rax);
    } else {
        a.mov(x86::rax, frame_slot(slot_of_stack(d - 3)));
    }
    if (unboxed_kind(value)) {
        // Out of memory: the exit boxes the frame (raising MemoryError
        // where that fails too) and the generic store goes on.
        Label made = a.newLabel();
        a.test(x86::rax, x86::rax);
        a.jnz(made);
        em.call<&PyErr_Clear>();
        a.jmp(leave);
        a.bind(made);
    }
    load_object(x86::rdi, rep_.slot(d - 2), d - 2);
    a.mov(x86::rcx, x86::qword_ptr(x86::rdi, layout::kListItems));
    a.mov(x86::qword_ptr(x86::rcx, x86::r15, 3), x86::rax);
    a.mov(x86::rdi, x86::r14);
    em.decref(x86::rdi);   // an exact int or float if it dies: no code runs
    a.bind(stored);
    // The index and the list (a dying list's items may run code: prev_instr set first).
    for (int pos : {d - 1, d - 2}) {
        if (!rep_.slot(pos).boxed_in_frame()) continue;
        a.mov(x86::rdi, frame_slot(slot_of_stack(pos)));
        em.decref(x86::rdi, instr(k).index);
    }
    rep_.drop(3);
    return true;
}

}  // namespace pyjion::opt
