// The optimising tier's changes of representation (see unboxed_frame.h):
// lazy stack values stored into their frame slots, the moves between the
// frame and the shadow slots (inline, or a plan the runtime runs), and where
// they happen: fallthroughs and jumps into merge points, boxing the frame
// for a generic instruction, side exits and their counters, the eval
// breaker at backward jumps.
#include "opt/unboxed_frame.h"

#include "baseline/compiler.h"
#include "codegen_api.h"
#include "cpython/frame_layout.h"
#include "machine/frame_emit.h"
#include "baseline/specialize.h"
#include "runtime/helpers.h"
#include "runtime/runtime.h"

namespace pyjion::opt {

using namespace asmjit;
using model::Kind;
using model::SlotKind;

void UnboxedFrame::load_object(const Gp &reg, SlotKind kind, int pos)
{
    if (kind.kind == Kind::LazyConst) {
        c_.em().load_address(reg, PyTuple_GET_ITEM(code_->co_consts, kind.const_index()));   // the code keeps it
    } else if (kind.kind == Kind::LazyLocal) {
        c_.as().mov(reg, frame_slot(static_cast<int>(kind.detail)));
    } else {
        c_.as().mov(reg, frame_slot(slot_of_stack(pos)));
    }
}

void UnboxedFrame::store_lazy_at(const model::FrameState &s, int pos)
{
    SlotKind kind = s.slot(pos);
    if (local_copy(kind)) {   // the local's value into the stack slot's own shadow slot
        c_.as().mov(x86::rax, shadow(static_cast<int>(kind.detail) - 1));
        c_.as().mov(shadow(slot_of_stack(pos)), x86::rax);
        return;
    }
    load_object(x86::rax, kind, pos);
    c_.em().incref(x86::rax);
    c_.as().mov(frame_slot(slot_of_stack(pos)), x86::rax);
}

void UnboxedFrame::store_lazy(const model::FrameState &s)
{
    for (int i = 0; i < s.depth(); i++) {
        if (deferred(s.slot(i))) store_lazy_at(s, i);
    }
}

model::FrameState UnboxedFrame::without_lazy(const model::FrameState &s)
{
    model::FrameState out = s;
    for (int i = 0; i < s.depth(); i++) out.set_slot(i, stored_kind(s.slot(i)));
    return out;
}

void UnboxedFrame::materialize()
{
    store_lazy(rep_);
    rep_ = without_lazy(rep_);
}

void UnboxedFrame::materialize_at(int pos)
{
    if (!deferred(rep_.slot(pos))) return;
    store_lazy_at(rep_, pos);
    rep_.set_slot(pos, stored_kind(rep_.slot(pos)));
}

void UnboxedFrame::materialize_refs(int local)
{
    for (int i = 0; i < rep_.depth(); i++) {
        SlotKind k = rep_.slot(i);
        bool borrows = k.kind == Kind::LazyLocal && static_cast<int>(k.detail) == local;
        bool copies = local_copy(k) && static_cast<int>(k.detail) - 1 == local;
        if (borrows || copies) materialize_at(i);
    }
}

void UnboxedFrame::count_exit_or_retire(Emitter &e, int kind)
{
    auto &a = e.as();
    count_exit(e, kind);
    // Code that keeps leaving is given up: baseline code from its next compile.
    Label go_on = a.newLabel();
    e.load_address(x86::rax, &exits_->total);
    a.inc(x86::qword_ptr(x86::rax));
    a.cmp(x86::qword_ptr(x86::rax), static_cast<int32_t>(unboxed::kRetireAfter));
    a.jne(go_on);
    e.call<&unboxed::retire>(Lea(Emitter::frame_address()));
    a.bind(go_on);
}

void UnboxedFrame::count_exit(Emitter &e, int kind)
{
    auto &a = e.as();
    e.load_address(x86::rax, &exits_->counts[kind]);
    a.inc(x86::qword_ptr(x86::rax));
    e.load_address(x86::rax, &unboxed::g_exits[kind]);
    a.inc(x86::qword_ptr(x86::rax));
}

void UnboxedFrame::jump_to_merge(int target, int unit, int breaker_lookup)
{
    xmm0_slot_ = -1;
    materialize();
    emit_moves(moves(rep_, merge_state(target), target), unit, rep_.depth());
    rep_ = merge_state(target);
    if (breaker_lookup >= 0) emit_eval_breaker(unit, breaker_lookup);
    c_.as().jmp(c_.label_at(target));
}

void UnboxedFrame::mark_unboxed(model::FrameState &frame) const
{
    for (int i = 0; i < nlocals_ && i < frame.nlocals(); i++) {
        if (unboxed_kind(rep_.local(i))) frame.set_local(i, rep_.local(i));
    }
    for (int i = 0; i < rep_.depth() && i < frame.depth(); i++) {
        if (!rep_.slot(i).boxed_in_frame()) frame.set_slot(i, rep_.slot(i));
    }
}

bool UnboxedFrame::holds_unboxed() const
{
    for (const SlotKind &k : rep_.locals()) {
        if (unboxed_kind(k)) return true;
    }
    for (const SlotKind &k : rep_.stack()) {
        if (!k.boxed_in_frame()) return true;
    }
    return false;
}

unboxed::MovePlan UnboxedFrame::moves(const model::FrameState &from, const model::FrameState &to, int k) const
{
    unboxed::MovePlan plan;
    auto one = [&](SlotKind f, SlotKind t, int slot, bool local) {
        if (deferred(f)) {
            throw CompileError{PYJION_RESULT_COMPILER_ERROR, "optimising tier: a lazy value among the moves to offset " +
                                                                 std::to_string(instr(k).offset()) + ": " + from.describe()};
        }
        if (f.kind == t.kind || (!unboxed_kind(f) && !unboxed_kind(t))) return;
        if (unboxed_kind(f) && unboxed_kind(t)) {
            throw CompileError{PYJION_RESULT_COMPILER_ERROR, "optimising tier: an int meets a float at offset " +
                                                                 std::to_string(instr(k).offset())};
        }
        unboxed::MoveOp op;
        if (unboxed_kind(f)) {
            op = f.kind == Kind::Int64 ? unboxed::kBoxInt : unboxed::kBoxFloat;
        } else {
            op = t.kind == Kind::Int64 ? unboxed::kUnboxInt : unboxed::kUnboxFloat;
        }
        plan.push_back(unboxed::SlotMove{slot, 8 * shadow_index_[slot], op, local});
    };
    for (int i = 0; i < nlocals_; i++) one(from.local(i), to.local(i), i, true);
    for (int i = 0; i < from.depth() && i < to.depth(); i++) one(from.slot(i), to.slot(i), slot_of_stack(i), false);
    return plan;
}

// Runs a plan of moves: a few inline (the small-int cache, one-digit ints,
// a float's value read in place), longer plans through the runtime in one
// call. If boxing runs out of memory, raises MemoryError at `unit` with the
// frame boxed (`depth` values on the stack).
void UnboxedFrame::emit_moves(const unboxed::MovePlan &plan, int unit, int depth)
{
    if (plan.empty()) return;
    auto &a = c_.as();
    auto &em = c_.em();
    em.set_prev_instr(unit);   // boxing allocates: a collection may run code
    Label error = c_.error_exit_at(unit, depth);
    auto call_runtime = [&](size_t from) {
        auto *kept = c_.new_site_data<unboxed::MovePlan>();
        kept->assign(plan.begin() + static_cast<long>(from), plan.end());
        em.call<&unboxed::apply_moves>(Lea(Emitter::frame_address()), x86::rsp, kept->data(),
                                       static_cast<int>(kept->size()));
        a.test(x86::eax, x86::eax);
        a.jnz(error);
    };
    // Up to 8 inline: a loop's back edge that boxes its float temporaries
    // into their spare boxes (nbody: 7) costs a call and a loop through the
    // plan otherwise, 5% of nbody's time.
    if (plan.size() > 8) {
        call_runtime(0);
        return;
    }
    Label done = a.newLabel();
    for (size_t i = 0; i < plan.size(); i++) {
        const unboxed::SlotMove &m = plan[i];
        x86::Mem slot = frame_slot(m.slot), raw = x86::qword_ptr(x86::rsp, m.shadow);
        switch (m.op) {
        case unboxed::kBoxInt: case unboxed::kBoxFloat: {
            Label boxed = a.newLabel(), failed = a.newLabel(), fresh = a.newLabel();
            if (m.local) {
                // The local's spare box (see runtime/unboxed.h) takes the
                // value; one referenced elsewhere too, or an int's place, is
                // released (an exact float: no code runs).
                Label release = a.newLabel();
                a.mov(x86::rdi, slot);
                a.test(x86::rdi, x86::rdi);
                a.jz(fresh);
                if (m.op == unboxed::kBoxFloat) {
                    a.cmp(x86::qword_ptr(x86::rdi, layout::kObjectRefcnt), 1);
                    a.jne(release);
                    a.movsd(x86::xmm0, raw);
                    a.movsd(x86::qword_ptr(x86::rdi, layout::kFloatValue), x86::xmm0);
                    a.mov(x86::rax, x86::rdi);
                    a.jmp(boxed);
                }
                a.bind(release);
                a.mov(slot, 0);
                em.decref(x86::rdi);
            }
            a.bind(fresh);
            if (m.op == unboxed::kBoxInt) {
                Label not_small = a.newLabel();
                a.mov(x86::rdi, raw);
                box_small_int(c_, x86::rdi, not_small, boxed);
                a.bind(not_small);
                em.call<&PyLong_FromLongLong>(x86::rdi);
            } else {
                a.movsd(x86::xmm0, raw);
                em.call<&PyFloat_FromDouble>(InReg{});
            }
            a.test(x86::rax, x86::rax);
            a.jz(failed);
            a.bind(boxed);
            a.mov(slot, x86::rax);
            em.out_of_line([&] {
                // Out of memory: the runtime boxes what is left (None where it
                // cannot) and MemoryError is raised here.
                a.bind(failed);
                call_runtime(i);
                a.jmp(done);
            });
            break;
        }
        case unboxed::kUnboxInt: {
            Label big = a.newLabel(), stored = a.newLabel();
            a.mov(x86::rdi, slot);
            small_int_value(big);
            a.mov(raw, x86::rax);
            em.out_of_line([&] {
                a.bind(big);
                em.call<&unboxed::long_to_int64>(InReg(), Lea(raw));   // fits: the types say so
                a.jmp(stored);
            });
            a.bind(stored);
            a.mov(x86::rdi, slot);
            if (m.local) a.mov(slot, 0);
            em.decref(x86::rdi);   // an exact int: its deallocation runs no code
            break;
        }
        case unboxed::kUnboxFloat:
            a.mov(x86::rdi, slot);
            a.movsd(x86::xmm0, x86::qword_ptr(x86::rdi, layout::kFloatValue));
            a.movsd(raw, x86::xmm0);
            if (m.local) {
                // Referenced only here: it stays, as the local's spare box.
                Label kept = a.newLabel();
                a.cmp(x86::qword_ptr(x86::rdi, layout::kObjectRefcnt), 1);
                a.je(kept);
                a.mov(slot, 0);
                a.dec(x86::qword_ptr(x86::rdi, layout::kObjectRefcnt));   // referenced elsewhere too: it lives
                a.bind(kept);
            } else {
                em.decref(x86::rdi);
            }
            break;
        case unboxed::kRelease:
            a.mov(x86::rdi, slot);
            if (m.local) a.mov(slot, 0);
            em.xdecref(x86::rdi);
            break;
        case unboxed::kCopyBox:
            a.mov(x86::rax, frame_slot(m.shadow));   // boxed earlier in this plan
            em.incref(x86::rax);
            a.mov(slot, x86::rax);
            break;
        default:
            throw CompileError{PYJION_RESULT_COMPILER_ERROR, "optimising tier: a check among the moves"};
        }
    }
    a.bind(done);
}

void UnboxedFrame::count_moves(const unboxed::MovePlan &plan)
{
    for (const unboxed::SlotMove &m : plan) {
        move_cost_ += ((m.op == unboxed::kBoxFloat || m.op == unboxed::kUnboxFloat) ? 4 : 1) * weight_[cur_k_];
    }
}

void UnboxedFrame::box_everything(int unit)
{
    xmm0_slot_ = -1;
    // Stack values that are copies of unboxed locals: the locals are boxed
    // first, and each copy then shares its local's box (kCopyBox) rather
    // than getting a second object of the same value.
    std::vector<int> copy_of(rep_.depth(), -1);
    for (int i = 0; i < rep_.depth(); i++) {
        if (local_copy(rep_.slot(i))) copy_of[i] = static_cast<int>(rep_.slot(i).detail) - 1;
    }
    materialize();
    model::FrameState boxed = all_boxed(rep_);
    unboxed::MovePlan plan = moves(rep_, boxed, cur_k_);
    std::vector<char> local_boxed(nlocals_, 0);
    for (unboxed::SlotMove &m : plan) {
        bool boxes = m.op == unboxed::kBoxInt || m.op == unboxed::kBoxFloat;
        if (boxes && m.local) {
            local_boxed[m.slot] = 1;
        } else if (boxes && !m.local) {
            int source = copy_of[m.slot - nlocals_];
            if (source >= 0 && local_boxed[source]) m = unboxed::SlotMove{m.slot, source, unboxed::kCopyBox, false};
        }
    }
    count_moves(plan);
    emit_moves(plan, unit, rep_.depth());
    rep_ = boxed;
}

void UnboxedFrame::fall_into(int k)
{
    if (!bc_.is_jump_target(instr(k).start) || instr(k).depth < 0) return;
    materialize();
    model::FrameState to = merge_state(k);
    if (rep_.depth() != to.depth()) {
        throw CompileError{PYJION_RESULT_STACK_EFFECT_FAULT, "optimising tier: depth mismatch into offset " +
                                                                 std::to_string(instr(k).offset())};
    }
    unboxed::MovePlan plan = moves(rep_, to, k);
    // A fallthrough out of a loop runs as often as the code it enters.
    int was = cur_k_;
    if (weight_[k] < weight_[cur_k_]) cur_k_ = k;
    count_moves(plan);
    cur_k_ = was;
    emit_moves(plan, instr(k).index, to.depth());
    rep_ = to;
}

void UnboxedFrame::at_boundary(int k)
{
    cur_k_ = k;
    fused_ = false;
    in_baseline_ = false;
    if (bc_.is_jump_target(instr(k).start)) {
        xmm0_slot_ = -1;
        rep_ = merge_state(k);
    } else if (rep_.depth() != instr(k).depth) {
        throw CompileError{PYJION_RESULT_STACK_EFFECT_FAULT, "optimising tier: depth mismatch at offset " +
                                                                 std::to_string(instr(k).offset())};
    }
}

Label UnboxedFrame::edge(int k)
{
    if (!bc_.is_jump_target(instr(k).start)) {
        // A visitor's own jump past the next instruction (a fused store):
        // the state there is the one falling through, everything boxed.
        if (in_baseline_) return c_.label_at(k);
        throw CompileError{PYJION_RESULT_COMPILER_ERROR, "optimising tier: a jump to offset " +
                                                             std::to_string(instr(k).offset()) + ", no jump target"};
    }
    model::FrameState from = rep_;
    if (in_baseline_) {
        // A jump the baseline's visitor makes: everything is boxed, the stack
        // at the target's depth.
        from = model::FrameState(nlocals_);
        from.set_depth(instr(k).depth);
    }
    model::FrameState to = merge_state(k), stored = without_lazy(from);
    unboxed::MovePlan plan = moves(stored, to, k);
    Label target = c_.label_at(k);
    bool lazy = from != stored;
    if (plan.empty() && !lazy) return target;
    count_moves(plan);
    int unit = c_.current().index, depth = to.depth();
    return c_.em().cold([this, from, plan, unit, depth, target](Emitter &e) {
        store_lazy(from);
        emit_moves(plan, unit, depth);
        e.as().jmp(target);
    });
}

Label UnboxedFrame::exit(int kind, int resume_k, int depth)
{
    model::FrameState snapshot = rep_;
    int start = instr(resume_k).start, unit = instr(resume_k).index;
    return c_.em().cold([this, snapshot, kind, start, unit, depth, resume_k](Emitter &e) {
        auto &a = e.as();
        store_lazy(snapshot);
        emit_moves(moves(without_lazy(snapshot), all_boxed(snapshot), resume_k), unit, depth);
        count_exit_or_retire(e, kind);
        // Tracing wants the interpreter; anything else goes on in baseline code.
        a.jmp(kind == unboxed::kExitTracing ? c_.tracing_exit(start, depth) : c_.fallback_exit(start, depth));
    });
}

// The eval breaker at a backward jump, with values unboxed: what the
// breaker runs (signal handlers, other threads) sees the frame boxed; the
// unboxed copies stay valid, so the boxes are released again after.
void UnboxedFrame::emit_eval_breaker(int unit, int lookup_unit)
{
    auto &a = c_.as();
    model::FrameState held = rep_;
    Label back = a.newLabel();
    int k = cur_k_;
    Label pending = c_.em().cold([this, held, unit, lookup_unit, back, k](Emitter &e) {
        auto &a = e.as();
        int depth = held.depth();
        emit_moves(moves(held, all_boxed(held), k), unit, depth);
        e.set_prev_instr(unit);
        e.call<&rt::pyj_rt_eval_breaker>(Emitter::tstate);
        a.test(x86::eax, x86::eax);
        a.jnz(c_.error_exit_at(unit, depth, Compiler::Raise::Error, lookup_unit));
        unboxed::MovePlan release;
        for (int i = 0; i < nlocals_; i++) {
            if (unboxed_kind(held.local(i))) release.push_back({i, 8 * shadow_index_[i], unboxed::kRelease, true});
        }
        for (int i = 0; i < depth; i++) {
            if (unboxed_kind(held.slot(i))) {
                int slot = slot_of_stack(i);
                release.push_back({slot, 8 * shadow_index_[slot], unboxed::kRelease, false});
            }
        }
        emit_moves(release, unit, depth);
        a.jmp(back);
    });
    frame_emit::eval_breaker_check(c_.em(), pending);
    a.bind(back);
}

}  // namespace pyjion::opt
