// The optimising tier's code generation, inside the baseline compiler: where
// the abstract interpreter (type_infer.h) proves or speculates that a value
// is an int64-sized int or a float, the value lives unboxed in a shadow slot
// of the machine frame (below rsp's 8-byte pad), and arithmetic, comparisons
// and `for ... in range(...)` run on it inline. Every other instruction is
// the baseline's, after the unboxed values are boxed back into the frame.
//
// The representation is tracked in a model::FrameState (Int64 / Double for
// shadowed slots, anything else is boxed in the frame slot). Invariants:
// - a fast local held unboxed has NULL in its frame slot (its old object was
//   released at the STORE_FAST, as the interpreter releases it);
// - at a jump target, each slot is unboxed exactly where the types say int
//   or float there (the merge state); every jump converts to it on its edge;
// - before any instruction that can raise, call out or leave the frame, the
//   frame is boxed completely, so error exits, tracebacks, f_locals and the
//   interpreter see it as CPython keeps it;
// - a failed guard or an int64 overflow boxes everything and hands the frame
//   to the interpreter at that instruction (a side exit, counted by name:
//   runtime/unboxed.h).
#pragma once

#include <asmjit/x86.h>
#include <memory>
#include <vector>

#include "front/bytecode.h"
#include "model/frame_state.h"
#include "opt/type_infer.h"
#include "runtime/unboxed.h"

namespace pyjion {
class Compiler;
class Emitter;
}

namespace pyjion::opt {

// A slot the tier holds unboxed (its frame slot is not kept up to date).
inline bool unboxed_kind(model::SlotKind k)
{
    return k.kind == model::Kind::Int64 || k.kind == model::Kind::Double;
}

// A stack value LOAD_FAST of an unboxed local left where it is: its kind is
// the local's (Int64 / Double) with detail = the local + 1, and it is read
// from the local's shadow slot until something needs it in its own.
inline bool local_copy(model::SlotKind k) { return unboxed_kind(k) && k.detail != 0; }
// Lazy values and local copies: stored (store_lazy) before any move, exit,
// jump or generic instruction sees the frame.
inline bool deferred(model::SlotKind k) { return k.lazy() || local_copy(k); }
// The kind of a deferred value once stored: an object (lazy), its own
// shadow slot's number (local copy); any other kind as it is.
inline model::SlotKind stored_kind(model::SlotKind k)
{
    if (k.lazy()) return model::SlotKind::boxed();
    if (local_copy(k)) return model::SlotKind{k.kind, 0};
    return k;
}

// Per compiled code object: exits taken, per kind (CompiledCode keeps it).
struct ExitCounts {
    uint64_t counts[unboxed::kExitKinds] = {};
    uint64_t total = 0;   // compared with unboxed::kRetireAfter
};

class UnboxedFrame {
public:
    // The tier for `code`, or nullptr where it has nothing to do (no site on
    // unboxed values, a generator or coroutine, too many slots to shadow).
    static std::unique_ptr<UnboxedFrame> plan(Compiler &c, PyCodeObject *code, const Bytecode &bytecode,
                                              bool speculate, unsigned arg_types);
    UnboxedFrame(Compiler &c, PyCodeObject *code, const Bytecode &bytecode, std::unique_ptr<TypeInference> types);

    // Bytes the prologue reserves below the pad for the shadow slots (a multiple of 16).
    int shadow_bytes() const { return shadow_bytes_; }
    ExitCounts *exit_counts() const { return exits_; }

    // At the function's entry (not the OSR entry's): the arguments the types
    // take to be ints or floats are checked; if one is not, the baseline
    // fallback runs the call (exit arg_types).
    void emit_entry_checks();
    // Before instruction k's label, when the code before falls into it.
    void fall_into(int k);
    // At instruction k's boundary (reachable): the representation there.
    void at_boundary(int k);
    // Emits instruction k if the tier implements it (true; fused: the next
    // instruction too, see fused()); else boxes everything for the baseline's visitor (false).
    bool emit(int k);
    bool fused() const { return fused_; }
    // After the baseline's visitor for instruction k: everything boxed.
    void after_baseline(int k, int depth);
    // The label a jump from the current point takes to instruction k.
    asmjit::Label edge(int k);
    // A side exit: box everything, count `kind`, hand the frame to the
    // interpreter at code unit `start` with `depth` values.
    asmjit::Label exit(int kind, int start, int depth);
    // Where the OSR entry goes for the loop whose header is instruction k:
    // the interpreter's boxed values checked and unboxed, or back to the
    // interpreter if they are not what the code there takes for granted.
    asmjit::Label osr_target(int k);
    // Anything held unboxed or lazy now (the tracing check's exit must box it first).
    bool holds_unboxed() const;
    int depth() const { return rep_.depth(); }
    // Whether the code the tier made is worth having: the moves between the
    // frame and the shadow slots on the paths that run (exits and the eval
    // breaker's not counted; a float's box is an allocation, weighed 4, an
    // int's mostly the small-int cache, 1) come to at most 2.5 per unboxed
    // operation (arithmetic, comparisons, range steps). Both are weighed by
    // how deep in loops they sit (8 per level): the conversions before and
    // after a loop run once, what is inside it every iteration. Measured on
    // bench/: code where a few operations unbox amid generic ones loses to
    // the baseline's inline fast paths.
    bool pays() const
    {
        return unboxed_ops_ > 0 && 2 * move_cost_ <= 5 * unboxed_ops_;
    }
    // Marks the slots held unboxed now as Int64 / Double in `frame` (the
    // baseline's model, whose debug check then leaves their frame slots alone).
    void mark_unboxed(model::FrameState &frame) const;

private:
    using Gp = asmjit::x86::Gp;
    using Xmm = asmjit::x86::Xmm;
    using Label = asmjit::Label;

    const Instr &instr(int k) const { return bc_.instrs()[k]; }
    int slot_of_stack(int i) const { return nlocals_ + i; }
    asmjit::x86::Mem shadow(int slot) const;
    asmjit::x86::Mem frame_slot(int slot) const;
    // Where the unboxed value at stack position pos is: its own shadow slot,
    // or its local's (a local copy); value_home: that slot's number.
    int value_home(int pos) const;
    asmjit::x86::Mem value_at(int pos) const { return shadow(value_home(pos)); }

    // Lazy stack values (model::Kind::LazyConst / LazyLocal): LOAD_CONST and
    // LOAD_FAST of a bound boxed local push no code; the tier's operations
    // read the object where it is (a list read at a constant index is one
    // compare), and whatever needs the frame slot filled stores it then.
    // `reg` = the object of the boxed or lazy value at stack position pos.
    void load_object(const Gp &reg, model::SlotKind kind, int pos);
    // Fills the frame slots of the lazy values of `s` (with new references).
    void store_lazy(const model::FrameState &s);
    void store_lazy_at(const model::FrameState &s, int pos);
    // `s` after store_lazy: the lazy values boxed.
    static model::FrameState without_lazy(const model::FrameState &s);
    // store_lazy on rep_ (all, the one at stack position pos, or those
    // borrowing local `local` before it changes).
    void materialize();
    void materialize_at(int pos);
    void materialize_refs(int local);
    model::FrameState merge_state(int k) const;
    VType type_of_stack(int k, int i) const;
    bool boxes_frame(int k) const;
    int consumer_of(int k, int pos) const;

    // Moves between `from` and `to` (same depth): the plan apply_moves runs.
    unboxed::MovePlan moves(const model::FrameState &from, const model::FrameState &to, int k) const;
    void emit_moves(const unboxed::MovePlan &plan, int unit, int depth);
    void count_moves(const unboxed::MovePlan &plan);
    model::FrameState all_boxed(const model::FrameState &s) const;
    void box_everything(int unit);
    void emit_eval_breaker(int unit, int lookup_unit);
    // Converts the frame from rep_ to instruction `target`'s merge state and
    // jumps there, checking the eval breaker first when breaker_lookup >= 0
    // (a backward jump: where ceval looks for a handler). Moves not counted.
    void jump_to_merge(int target, int unit, int breaker_lookup);
    // Counts a side exit of `kind` in this code's and the process's counters.
    void count_exit(Emitter &e, int kind);
    // count_exit, and code that keeps leaving is given up (retire).
    void count_exit_or_retire(Emitter &e, int kind);
    // rdi holds an exact int: rax = its value when it has at most one digit,
    // else a jump to `big`. Clobbers rcx.
    void small_int_value(const Label &big);

    bool const_int(model::SlotKind kind, long long &value) const;
    bool const_float(model::SlotKind kind, double &value) const;
    bool load_double_calls(int k, int pos, bool or_int) const;
    // Input i (0: deepest) of the current instruction into a register.
    void load_int(int k, int input, const Gp &dst, const Label &fail);
    void load_double(int k, int input, const Xmm &dst, const Label &fail, bool or_int = false);
    // prev_unit >= 0: prev_instr is set there first if a release deallocates.
    void release_boxed_inputs(int n, int prev_unit = -1);

    bool emit_load_fast(int k);
    bool emit_store_fast(int k);
    bool can_load_local(int k, int index) const;
    bool can_store_local(int index, int pos) const;
    bool emit_load_local(int k, int index);
    bool emit_store_local(int k, int index, bool plain);
#if PY_VERSION_HEX >= 0x030D0000
    bool emit_load_pair(int k);
    bool emit_store_load(int k);
    bool emit_store_pair(int k);
#endif
    bool emit_load_const(int k);
    bool emit_pop_top(int k);
    int power_of_two_divisor(int k) const;
    bool emit_int_arith(int k);
    bool emit_float_arith(int k);
    bool emit_negative(int k);
    bool emit_compare(int k);
    bool emit_for_iter(int k);
    void list_item_address(int k, int d, const Label &leave);
    bool emit_list_item(int k);
    bool emit_list_store(int k);
    bool emit_jump(int k);
    bool emit_swap(int k);
    bool emit_copy(int k);

    Compiler &c_;
    PyCodeObject *code_;
    const Bytecode &bc_;
    std::unique_ptr<TypeInference> types_;
    int nlocals_;
    std::vector<int> shadow_index_;   // per localsplus slot: its shadow slot, or -1
    int shadow_bytes_ = 0;
    model::FrameState rep_;
    int cur_k_ = 0;
    bool fused_ = false;
    bool in_baseline_ = false;
    // Per instruction: 8 to the power of the loops around it (at most 3).
    std::vector<int64_t> weight_;
    // Per instruction that starts a loop (a backward jump's target): per
    // local, whether the loop stores it (empty: not a loop header).
    std::vector<std::vector<bool>> stored_in_loop_;
    // Per instruction: the header of the innermost loop around it, or -1.
    std::vector<int> innermost_loop_;
    // Per BINARY_SUBSCR of a list: its item is read as a double in place.
    std::vector<bool> float_item_;
    // The slot (local or stack, as slot_of_stack numbers them) whose double
    // xmm0 still holds after the last instruction, or -1: the next float
    // operation reading it skips the load (a store-to-load round trip on the
    // dependency chain of `a * b + c`). Kept only across instructions that
    // leave xmm0 and that slot alone (see emit()); a jump target, a call or
    // any other instruction forgets it.
    int xmm0_slot_ = -1;
    bool releases(int n) const;   // release_boxed_inputs(n) would emit a decref
    int64_t unboxed_ops_ = 0;   // arithmetic, comparisons and range steps emitted unboxed, weighed
    int64_t move_cost_ = 0;     // weighed moves emitted where they run (box_everything, edges, fallthroughs)
    ExitCounts *exits_ = nullptr;
};

}  // namespace pyjion::opt
