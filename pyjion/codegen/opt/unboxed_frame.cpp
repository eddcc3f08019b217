#include "opt/unboxed_frame.h"

#include <algorithm>
#include <cstring>

#include "baseline/compiler.h"
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

namespace {

constexpr int kMaxShadowSlots = 64;

SlotKind kind_for(VType t)
{
    if (t == VType::kInt) return SlotKind::int64();
    if (t == VType::kFloat) return SlotKind::dbl();
    return SlotKind::boxed_or_null();
}

}  // namespace

std::unique_ptr<UnboxedFrame> UnboxedFrame::plan(Compiler &c, PyCodeObject *code, const Bytecode &bytecode,
                                                 bool speculate, unsigned arg_types)
{
    if (code->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)) return nullptr;
    auto types = std::make_unique<TypeInference>(code, bytecode, speculate, arg_types);
    if (!types->unboxes_anything()) return nullptr;
    auto frame = std::make_unique<UnboxedFrame>(c, code, bytecode, std::move(types));
    if (frame->shadow_bytes() > kMaxShadowSlots * 8) return nullptr;
    return frame;
}

UnboxedFrame::UnboxedFrame(Compiler &c, PyCodeObject *code, const Bytecode &bytecode,
                           std::unique_ptr<TypeInference> types)
    : c_(c), code_(code), bc_(bytecode), types_(std::move(types)), nlocals_(code->co_nlocalsplus),
      rep_(code->co_nlocalsplus)
{
    // A shadow slot for every slot that is an int or a float anywhere.
    std::vector<bool> numeric(nlocals_ + code->co_stacksize + 1, false);
    for (size_t k = 0; k < bc_.instrs().size(); k++) {
        const AbstractState *s = types_->state_at(static_cast<int>(k));
        if (s == nullptr) continue;
        for (int i = 0; i < nlocals_; i++) {
            if (kind_for(s->locals[i]).kind != Kind::BoxedOrNull) numeric[i] = true;
        }
        for (size_t i = 0; i < s->stack.size() && nlocals_ + i < numeric.size(); i++) {
            if (kind_for(s->stack[i]).kind != Kind::BoxedOrNull) numeric[nlocals_ + i] = true;
        }
        // A store whose local is a number only until a merge point just after.
        const Instr &ins = bc_.instrs()[k];
        LocalWrites w = local_writes(ins);
        for (int j = 0; w.stores && j < w.n; j++) {
            int pos = static_cast<int>(s->stack.size()) - 1 - j;
            if (pos >= 0 && w.local[j] < nlocals_ && kind_for(s->stack[pos]).kind != Kind::BoxedOrNull) {
                numeric[w.local[j]] = true;
            }
        }
    }
    // A list item only float arithmetic reads is read as a double in place
    // (emit_list_item): its stack slot is shadowed. Not where that
    // arithmetic takes ints too (guard bit 4: its left input, 8: its
    // right): an int item converted there would be a float to every exit
    // before the arithmetic is done (a guard on the other input, a zero
    // divisor), and the generic operation would then see 1.0 for 1.
    float_item_.assign(bc_.instrs().size(), false);
    for (size_t k = 0; k < bc_.instrs().size(); k++) {
        const Instr &ins = bc_.instrs()[k];
        if (types_->state_at(static_cast<int>(k)) == nullptr || types_->decision(static_cast<int>(k)).kind != OpKind::kListItem) continue;
        int c = consumer_of(static_cast<int>(k), ins.depth - 2);
        if (c < 0) continue;
        OpKind use = types_->decision(c).kind;
        if (use != OpKind::kFloatArith && use != OpKind::kFloatCompare) continue;
        int input = ins.depth - 2 - (bc_.instrs()[c].depth - 2);   // 0: left, 1: right
        if ((types_->decision(c).guards & (input == 0 ? 4 : 8)) != 0) continue;
        float_item_[k] = true;
        if (nlocals_ + ins.depth - 2 < (int)numeric.size()) numeric[nlocals_ + ins.depth - 2] = true;
    }
    shadow_index_.assign(numeric.size(), -1);
    int n = 0;
    for (size_t i = 0; i < numeric.size(); i++) {
        if (numeric[i]) shadow_index_[i] = n++;
    }
    shadow_bytes_ = (n + 1) / 2 * 16;
    exits_ = c_.new_site_data<ExitCounts>();
    // The loops (the compiler's: a header and its last backward jump). An
    // instruction's weight is 8 to the power of the loops around it. Per loop
    // with generic instructions in it (they box the frame): the locals it
    // stores. At the jump targets in such a loop, only those are held
    // unboxed; one the innermost loop only reads stays boxed (arithmetic
    // reads its value in place), so the generic instructions do not box it
    // and the back edge unbox it on every turn.
    const auto &instrs = bc_.instrs();
    std::vector<int> depth(instrs.size(), 0), loop_length(instrs.size(), 0);
    stored_in_loop_.assign(instrs.size(), {});
    innermost_loop_.assign(instrs.size(), -1);
    for (const LoopHeader &loop : c_.loops()) {
        // loop.end is the backward jump's own unit (after any EXTENDED_ARG)
        int t = bc_.instr_at(loop.header), end = t;
        if (t < 0) continue;
        while (end + 1 < (int)instrs.size() && instrs[end + 1].index <= loop.end) end++;
        loop_length[t] = end - t;
        bool boxes = false;
        for (int i = t; i <= end; i++) {
            depth[i]++;
            boxes = boxes || boxes_frame(i);
        }
        if (!boxes) continue;
        auto &stored = stored_in_loop_[t];
        stored.assign(nlocals_, false);
        for (int i = t; i <= end; i++) {
            const Instr &ins = instrs[i];
            LocalWrites w = local_writes(ins);
            for (int j = 0; j < w.n; j++) {
                if (w.local[j] < nlocals_) stored[w.local[j]] = true;
            }
            int cur = innermost_loop_[i];
            if (cur < 0 || loop_length[cur] > end - t) innermost_loop_[i] = t;
        }
    }
    weight_.resize(instrs.size());
    for (size_t k = 0; k < instrs.size(); k++) weight_[k] = int64_t{1} << (3 * std::min(depth[k], 3));
}

// The instruction that takes the value instruction k leaves at stack
// position `pos`, within a straight-line stretch of loads and the
// operations the tier runs unboxed; -1 where anything else comes first.
int UnboxedFrame::consumer_of(int k, int pos) const
{
    for (int i = k + 1; i < (int)bc_.instrs().size(); i++) {
        const Instr &ins = instr(i);
        if (bc_.is_jump_target(ins.start) || ins.depth < 0) return -1;
        int inputs;
        switch (ins.opcode) {
        case LOAD_FAST: case LOAD_CONST: inputs = 0; break;
#if PY_VERSION_HEX >= 0x030D0000
        case LOAD_FAST_CHECK: case LOAD_FAST_LOAD_FAST: inputs = 0; break;
#endif
        case UNARY_NEGATIVE: inputs = 1; break;
        case BINARY_OP: case COMPARE_OP: case BINARY_SUBSCR: inputs = 2; break;
        default: return -1;
        }
        if (ins.depth - inputs <= pos) return i;
    }
    return -1;
}

// Whether instruction k is one the tier leaves to the baseline's visitor
// after boxing the frame (a generic operation), as far as the types tell.
bool UnboxedFrame::boxes_frame(int k) const
{
    const Instr &ins = instr(k);
    if (is_pop_jump(ins.opcode)) {
        // fused with a comparison on unboxed values
        return k == 0 || instr(k - 1).opcode != COMPARE_OP || types_->decision(k - 1).kind == OpKind::kGeneric;
    }
    switch (ins.opcode) {
    case NOP: case CACHE: case EXTENDED_ARG: case LOAD_FAST: case STORE_FAST: case LOAD_CONST: case POP_TOP:
    case PUSH_NULL: case COPY: case SWAP: case JUMP_FORWARD: case JUMP_BACKWARD: case JUMP_BACKWARD_NO_INTERRUPT:
#if PY_VERSION_HEX >= 0x030D0000
    case LOAD_FAST_CHECK: case LOAD_FAST_LOAD_FAST: case STORE_FAST_LOAD_FAST: case STORE_FAST_STORE_FAST:
#endif
        return false;
    case BINARY_OP: case COMPARE_OP: case UNARY_NEGATIVE: case FOR_ITER: case BINARY_SUBSCR: case STORE_SUBSCR:
        return types_->decision(k).kind == OpKind::kGeneric;
    default:
        return true;
    }
}

x86::Mem UnboxedFrame::shadow(int slot) const
{
    if (slot < 0 || slot >= (int)shadow_index_.size() || shadow_index_[slot] < 0) {
        throw CompileError{PYJION_RESULT_COMPILER_ERROR, "optimising tier: slot " + std::to_string(slot) +
                                                             " has no shadow slot"};
    }
    return x86::qword_ptr(x86::rsp, 8 * shadow_index_[slot]);
}

x86::Mem UnboxedFrame::frame_slot(int slot) const { return c_.em().local(slot); }

int UnboxedFrame::value_home(int pos) const
{
    SlotKind kind = rep_.slot(pos);
    return local_copy(kind) ? static_cast<int>(kind.detail) - 1 : slot_of_stack(pos);
}

VType UnboxedFrame::type_of_stack(int k, int i) const
{
    const AbstractState *s = types_->state_at(k);
    return s != nullptr && i >= 0 && i < (int)s->stack.size() ? s->stack[i] : VType::kObject;
}

model::FrameState UnboxedFrame::merge_state(int k) const
{
    model::FrameState s(nlocals_);
    const AbstractState *types = types_->state_at(k);
    int depth = instr(k).depth;
    if (types == nullptr || (int)types->stack.size() != depth) {
        s.set_depth(depth);
        return s;
    }
    static const std::vector<bool> kNoLoop;
    const std::vector<bool> &stored = innermost_loop_[k] >= 0 ? stored_in_loop_[innermost_loop_[k]] : kNoLoop;
    for (int i = 0; i < nlocals_; i++) {
        bool loop_reads_only = !stored.empty() && !stored[i];
        s.set_local(i, loop_reads_only ? SlotKind::boxed_or_null() : kind_for(types->locals[i]));
    }
    for (int i = 0; i < depth; i++) s.push(kind_for(types->stack[i]));
    return s;
}

model::FrameState UnboxedFrame::all_boxed(const model::FrameState &from) const
{
    model::FrameState s(nlocals_);
    s.set_depth(from.depth());
    return s;
}

Label UnboxedFrame::osr_target(int k)
{
    const AbstractState *types = types_->state_at(k);
    model::FrameState merge = merge_state(k);
    unboxed::MovePlan plan;
    // Checked to be of its type; unboxed where the merge state holds it so.
    auto one = [&](VType t, SlotKind kind, int slot, bool local) {
        bool unbox = unboxed_kind(kind);
        unboxed::MoveOp op;
        switch (t) {
        case VType::kInt: op = unbox ? unboxed::kUnboxInt : unboxed::kCheckInt; break;
        case VType::kFloat: op = unbox ? unboxed::kUnboxFloat : unboxed::kCheckFloat; break;
        case VType::kRangeIter: op = unboxed::kCheckRangeIter; break;
        default: return;
        }
        plan.push_back({slot, unbox ? 8 * shadow_index_[slot] : 0, op, local});
    };
    if (types != nullptr && merge.depth() == (int)types->stack.size()) {
        for (int i = 0; i < nlocals_; i++) one(types->locals[i], merge.local(i), i, true);
        for (int i = 0; i < (int)types->stack.size(); i++) one(types->stack[i], merge.slot(i), slot_of_stack(i), false);
    }
    auto *kept = c_.new_site_data<unboxed::MovePlan>();
    *kept = plan;
    int start = instr(k).start, depth = instr(k).depth;
    Label header = c_.label_at(k);
    return c_.em().cold([this, kept, start, depth, header](Emitter &e) {
        auto &a = e.as();
        e.call<&unboxed::enter_loop>(Lea(Emitter::frame_address()), x86::rsp, kept->data(),
                                      static_cast<int>(kept->size()));
        a.test(x86::eax, x86::eax);
        a.jz(header);
        count_exit(e, unboxed::kExitOsrTypes);
        a.jmp(c_.tracing_exit(start, depth));
    });
}

void UnboxedFrame::emit_entry_checks()
{
    const auto &args = types_->speculated_args();
    if (args.empty()) return;
    auto &a = c_.as();
    auto &em = c_.em();
    // Nothing ran and nothing is unboxed yet: the call goes on from its
    // first instruction in the baseline fallback (tracebacks as baseline
    // code makes them).
    Label fail = em.cold([this](Emitter &e) {
        count_exit_or_retire(e, unboxed::kExitArgTypes);
        e.as().jmp(c_.fallback_exit(instr(0).start, 0));
    });
    for (const auto &[local, type] : args) {
        a.mov(x86::rdi, frame_slot(local));   // bound: every argument is at entry
        em.load_address(x86::rax, type == VType::kInt ? &PyLong_Type : &PyFloat_Type);
        a.cmp(x86::qword_ptr(x86::rdi, layout::kObjectType), x86::rax);
        a.jne(fail);
        if (type != VType::kInt) continue;
        // At most two digits (60 bits) fit; longer ones are asked.
        Label big = a.newLabel(), fits = a.newLabel();
        int_emit::check_two_digits(a, x86::rdi, big);
        em.out_of_line([&] {
            a.bind(big);
            em.call<&unboxed::long_to_int64>(InReg(), Lea(x86::ptr(x86::rsp, shadow_bytes_)));
            a.test(x86::eax, x86::eax);
            a.jnz(fail);
            a.jmp(fits);
        });
        a.bind(fits);
    }
}

void UnboxedFrame::after_baseline(int k, int depth)
{
    (void)k;
    in_baseline_ = false;
    const Instr &ins = instr(k);
    LocalWrites w = local_writes(ins);
    for (int j = 0; j < w.n; j++) {
        if (w.local[j] < nlocals_) rep_.set_local(w.local[j], SlotKind::boxed_or_null());
    }
    // What the visitor left on the stack is boxed; what it did not touch stays.
    int keep = std::min(rep_.depth(), depth);
    if (ins.opcode == POP_TOP) keep = std::min(keep, rep_.depth() - 1);
    if (w.stores) keep = std::min(keep, rep_.depth() - w.n);
    model::FrameState next = rep_;
    next.set_depth(keep);
    next.set_depth(depth, SlotKind::boxed_or_null());
    for (int i = keep; i < depth; i++) next.set_slot(i, SlotKind::boxed_or_null());
    rep_ = next;
    if (ins.opcode == GET_ITER && types_->decision(k).kind == OpKind::kRangeIter && k + 1 < (int)bc_.instrs().size()) {
        // `range` was the builtin and made a range_iterator (not the
        // long-range one): FOR_ITER can step it inline. Else the interpreter
        // goes on from FOR_ITER.
        auto &a = c_.as();
        a.mov(x86::rax, c_.em().stack(depth - 1));
        c_.em().load_address(x86::rcx, &PyRangeIter_Type);
        a.cmp(x86::qword_ptr(x86::rax, layout::kObjectType), x86::rcx);
        a.jne(exit(unboxed::kExitNotRangeIter, k + 1, depth));
    }
}

bool UnboxedFrame::emit(int k)
{
    const Instr &ins = instr(k);
    bool done = false;
    // What xmm0 holds survives only the instructions that maintain it.
    bool keeps_xmm0 = ins.opcode == LOAD_FAST || ins.opcode == LOAD_CONST || ins.opcode == COPY ||
                      ins.opcode == STORE_FAST ||
#if PY_VERSION_HEX >= 0x030D0000
                      ins.opcode == LOAD_FAST_CHECK || ins.opcode == LOAD_FAST_LOAD_FAST ||
                      ins.opcode == STORE_FAST_LOAD_FAST || ins.opcode == STORE_FAST_STORE_FAST ||
#endif
                      (ins.opcode == BINARY_OP && types_->decision(k).kind == OpKind::kFloatArith) ||
                      (ins.opcode == BINARY_SUBSCR && types_->decision(k).kind == OpKind::kListItem && float_item_[k]);
    if (!keeps_xmm0 || c_.checks_boundaries() || xmm0_slot_ >= slot_of_stack(rep_.depth())) xmm0_slot_ = -1;
    // A lazy value borrowing a local is stored before the local changes.
    LocalWrites writes = local_writes(ins);
    for (int j = 0; j < writes.n; j++) {
        if (writes.local[j] < nlocals_) materialize_refs(writes.local[j]);
    }
    switch (ins.opcode) {
    case LOAD_FAST: done = emit_load_fast(k); break;
    case STORE_FAST: done = emit_store_fast(k); break;
#if PY_VERSION_HEX >= 0x030D0000
    case LOAD_FAST_CHECK: done = emit_load_fast(k); break;   // an unbound local: the baseline raises
    case LOAD_FAST_LOAD_FAST: done = emit_load_pair(k); break;
    case STORE_FAST_LOAD_FAST: done = emit_store_load(k); break;
    case STORE_FAST_STORE_FAST: done = emit_store_pair(k); break;
    // END_FOR stays generic (it boxes the frame): the exhausted path of
    // FOR_ITER over a range (emit_for_iter) counts on it.
#endif
    case LOAD_CONST: done = emit_load_const(k); break;
    case POP_TOP: done = emit_pop_top(k); break;
    case BINARY_OP:
        if (types_->decision(k).kind == OpKind::kIntArith) done = emit_int_arith(k);
        if (types_->decision(k).kind == OpKind::kFloatArith) done = emit_float_arith(k);
        unboxed_ops_ += done * weight_[k];
        break;
    case UNARY_NEGATIVE: done = emit_negative(k); unboxed_ops_ += done * weight_[k]; break;
    case COMPARE_OP: done = emit_compare(k); unboxed_ops_ += done * weight_[k]; break;
    case FOR_ITER: done = emit_for_iter(k); unboxed_ops_ += done * weight_[k]; break;
    case BINARY_SUBSCR: done = emit_list_item(k); break;   // saves an index box at most: not counted
    case STORE_SUBSCR: done = emit_list_store(k); break;
    case JUMP_FORWARD: case JUMP_BACKWARD: case JUMP_BACKWARD_NO_INTERRUPT: done = emit_jump(k); break;
    case SWAP: done = emit_swap(k); break;
    case COPY: done = emit_copy(k); break;
    default: break;
    }
    if (done) return true;
    xmm0_slot_ = -1;
    // The baseline's visitor. Instructions that cannot raise, call out or
    // leave, and touch only boxed values, keep the unboxed ones as they are.
    bool transparent = false;
    switch (ins.opcode) {
    case NOP: case PUSH_NULL: case LOAD_CONST:
        transparent = true;
        break;
    case COPY:   // of a boxed value: an incref
        transparent = !unboxed_kind(rep_.slot(rep_.depth() - ins.oparg));
        break;
    case LOAD_FAST:
#if PY_VERSION_HEX >= 0x030D0000
    case LOAD_FAST_CHECK:
#endif
        transparent = c_.local_certainly_bound(k, ins.oparg);
        break;
    case STORE_FAST: case POP_TOP:
        transparent = !unboxed_kind(rep_.peek());
        break;
    default:
        break;
    }
    if (!transparent) box_everything(ins.index);
    in_baseline_ = true;
    return false;
}

bool UnboxedFrame::emit_load_fast(int k) { return emit_load_local(k, instr(k).oparg); }

bool UnboxedFrame::can_load_local(int k, int index) const
{
    return unboxed_kind(rep_.local(index)) || c_.local_certainly_bound(k, index);
}

bool UnboxedFrame::emit_load_local(int k, int index)
{
    SlotKind local = rep_.local(index);
    if (!unboxed_kind(local)) {
        if (!c_.local_certainly_bound(k, index)) return false;   // the baseline raises UnboundLocalError
        rep_.push(SlotKind::lazy_local(static_cast<uint32_t>(index)));
        return true;
    }
    // Read in place until something needs it stored (see local_copy).
    rep_.push(SlotKind{local.kind, static_cast<uintptr_t>(index) + 1});
    return true;
}

bool UnboxedFrame::emit_store_fast(int k) { return emit_store_local(k, instr(k).oparg, false); }

bool UnboxedFrame::can_store_local(int index, int pos) const
{
    return !unboxed_kind(stored_kind(rep_.slot(pos))) || shadow_index_[index] >= 0;
}

// The top value into local `index`. plain: an object into a local held
// boxed is stored here too (as STORE_FAST's visitor does: the old object
// released, prev_instr set if that runs code); else that case is left to
// the baseline (false).
bool UnboxedFrame::emit_store_local(int k, int index, bool plain)
{
    const Instr &ins = instr(k);
    if (rep_.peek().lazy()) materialize_at(rep_.depth() - 1);
    SlotKind value = rep_.peek();
    auto &a = c_.as();
    if (!unboxed_kind(value) && unboxed_kind(rep_.local(index))) {
        // An object into a local held unboxed: its frame slot has NULL or
        // its spare box (released: an exact float, no code runs); an
        // unboxed value needs no release.
        a.mov(x86::rax, frame_slot(slot_of_stack(rep_.depth() - 1)));
        a.mov(x86::rdi, frame_slot(index));
        a.mov(frame_slot(index), x86::rax);
        c_.em().xdecref(x86::rdi);
        rep_.pop();
        rep_.set_local(index, SlotKind::boxed());
        xmm0_slot_ = -1;
        return true;
    }
    if (!unboxed_kind(value) && plain) {
        a.mov(x86::rax, frame_slot(slot_of_stack(rep_.depth() - 1)));
        a.mov(x86::rdi, frame_slot(index));
        a.mov(frame_slot(index), x86::rax);
        c_.em().xdecref(x86::rdi, ins.index);
        rep_.pop();
        rep_.set_local(index, SlotKind::boxed());
        xmm0_slot_ = -1;
        return true;
    }
    if (!unboxed_kind(value) || shadow_index_[index] < 0) return false;
    if (!unboxed_kind(rep_.local(index))) {
        // The local's old object is released now, as STORE_FAST does; an
        // exact float referenced only here stays as its spare box.
        Label done = a.newLabel(), release = a.newLabel();
        a.mov(x86::rdi, frame_slot(index));
        a.test(x86::rdi, x86::rdi);
        a.jz(done);
        a.cmp(x86::qword_ptr(x86::rdi, layout::kObjectRefcnt), 1);
        a.jne(release);
        c_.em().load_address(x86::rax, &PyFloat_Type);
        a.cmp(x86::qword_ptr(x86::rdi, layout::kObjectType), x86::rax);
        a.je(done);
        a.bind(release);
        a.mov(frame_slot(index), 0);
        c_.em().decref(x86::rdi, ins.index);
        a.bind(done);
        xmm0_slot_ = -1;   // (a release may call a deallocator)
    }
    a.mov(x86::rax, value_at(rep_.depth() - 1));
    a.mov(shadow(index), x86::rax);
    if (xmm0_slot_ == value_home(rep_.depth() - 1)) {
        xmm0_slot_ = index;
    } else if (xmm0_slot_ == index) {
        xmm0_slot_ = -1;
    }
    rep_.pop();
    rep_.set_local(index, SlotKind{value.kind, 0});   // (a local copy's value is now the local's own)
    return true;
}

#if PY_VERSION_HEX >= 0x030D0000
// 3.13's fused local instructions, each half as LOAD_FAST / STORE_FAST
// above; where either half cannot be done here, neither is (the baseline's
// visitor does both, on a boxed frame).
bool UnboxedFrame::emit_load_pair(int k)
{
    int first = instr(k).oparg >> 4, second = instr(k).oparg & 15;
    if (!can_load_local(k, first) || !can_load_local(k, second)) return false;
    emit_load_local(k, first);
    emit_load_local(k, second);
    return true;
}

bool UnboxedFrame::emit_store_load(int k)
{
    int stored = instr(k).oparg >> 4, loaded = instr(k).oparg & 15;
    // (a plain load: the compiler proved the local bound there, the stored one too)
    if (!can_store_local(stored, rep_.depth() - 1)) return false;
    if (loaded != stored && !can_load_local(k, loaded)) return false;
    emit_store_local(k, stored, true);
    if (loaded == stored && !unboxed_kind(rep_.local(loaded))) {
        rep_.push(SlotKind::lazy_local(static_cast<uint32_t>(loaded)));
        return true;
    }
    emit_load_local(k, loaded);
    return true;
}

bool UnboxedFrame::emit_store_pair(int k)
{
    int first = instr(k).oparg >> 4, second = instr(k).oparg & 15;
    if (!can_store_local(first, rep_.depth() - 1) || !can_store_local(second, rep_.depth() - 2)) return false;
    emit_store_local(k, first, true);
    emit_store_local(k, second, true);
    return true;
}
#endif

bool UnboxedFrame::emit_load_const(int k)
{
    // Unboxed where it goes straight into a local (`t = 0` before a loop);
    // else lazy: arithmetic and list indexes take its value as an
    // immediate, other consumers the object.
    uint32_t index = static_cast<uint32_t>(instr(k).oparg);
    bool into_local = k + 1 < (int)bc_.instrs().size() && local_writes(instr(k + 1)).stores;
    VType t = into_local ? type_of_stack(k + 1, rep_.depth()) : VType::kObject;
    PyObject *v = PyTuple_GET_ITEM(code_->co_consts, index);
    uint64_t bits;
    if (t == VType::kInt && PyLong_CheckExact(v)) {
        bits = static_cast<uint64_t>(PyLong_AsLongLong(v));
    } else if (t == VType::kFloat && PyFloat_CheckExact(v)) {
        double d = PyFloat_AS_DOUBLE(v);
        std::memcpy(&bits, &d, sizeof bits);
    } else {
        rep_.push(SlotKind::lazy_const(index));
        return true;
    }
    auto &a = c_.as();
    a.mov(x86::rax, imm(bits));
    a.mov(shadow(slot_of_stack(rep_.depth())), x86::rax);
    rep_.push(t == VType::kInt ? SlotKind::int64() : SlotKind::dbl());
    return true;
}

// SWAP: each value moves, boxed or unboxed, to the other's place (frame
// slot or shadow slot); whatever else is unboxed stays so.
bool UnboxedFrame::emit_swap(int k)
{
    int d = rep_.depth(), i = d - 1, j = d - instr(k).oparg;
    if (i == j) return false;
    auto &a = c_.as();
    auto place = [&](int pos, SlotKind kind) {
        return unboxed_kind(kind) ? shadow(slot_of_stack(pos)) : frame_slot(slot_of_stack(pos));
    };
    for (int pos : {i, j}) {   // a local copy goes to its own shadow slot first
        if (local_copy(rep_.slot(pos))) materialize_at(pos);
    }
    SlotKind ki = rep_.slot(i), kj = rep_.slot(j);
    // (a lazy value has no place: its kind alone moves)
    if (!ki.lazy()) a.mov(x86::rax, place(i, ki));
    if (!kj.lazy()) a.mov(x86::rcx, place(j, kj));
    if (!ki.lazy()) a.mov(place(j, ki), x86::rax);
    if (!kj.lazy()) a.mov(place(i, kj), x86::rcx);
    rep_.set_slot(i, kj);
    rep_.set_slot(j, ki);
    return true;
}

// COPY of an unboxed value: its copy is unboxed too.
bool UnboxedFrame::emit_copy(int k)
{
    int d = rep_.depth(), from = d - instr(k).oparg;
    SlotKind kind = rep_.slot(from);
    if (deferred(kind)) {   // a second borrower of the same object, or reader of the same local
        rep_.push(kind);
        return true;
    }
    if (!unboxed_kind(kind) || shadow_index_[slot_of_stack(d)] < 0) return false;
    auto &a = c_.as();
    a.mov(x86::rax, shadow(slot_of_stack(from)));
    a.mov(shadow(slot_of_stack(d)), x86::rax);
    rep_.push(kind);
    return true;
}

bool UnboxedFrame::emit_pop_top(int)
{
    if (rep_.peek().boxed_in_frame()) return false;
    rep_.pop();
    return true;
}

}  // namespace pyjion::opt
