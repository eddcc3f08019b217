// The single-pass baseline compiler: one visit_<OPCODE> method per opcode of
// the CPython built against (3.11 or 3.13), declared and dispatched from
// opcodes.def, so an opcode without a visitor fails to build. Visitors of
// opcodes whose meaning both versions share are in baseline/; the others in
// py311/ and py313/ (only the running version's folder is compiled).
#pragma once

#include <asmjit/x86.h>
#include <memory>
#include <string>
#include <map>
#include <vector>

#include "front/bound_locals.h"
#include "front/bytecode.h"
#include "machine/emitter.h"
#include "model/entry_states.h"
#include "model/frame_state.h"
#include "opt/unboxed_frame.h"
#include "runtime/helpers.h"
#include "runtime/inline_cache.h"

namespace pyjion {

struct CompileOptions {
    // Check the frame model at every bytecode boundary: at compile time, the
    // depth reaching it by fallthrough; at run time, every modelled slot.
    bool debug = false;
    int max_instructions = 0;   // refuse larger code objects (0: no limit)
    // Longer code objects (code units) make their inline-cache sites compact
    // (see Compiler::compact_site).
    int compact_above = 128;
    // Where to write the assembly listing of each compile ("-": stderr;
    // nullptr: no listing, and no logger is attached at all).
    const std::string *dump_asm = nullptr;
    // The optimising tier (opt/unboxed_frame.h) where it has something to unbox.
    bool opt = false;
    // The tier wherever it unboxes anything: in code that never ran
    // interpreted too, and whether its code pays or not.
    bool opt_always = false;
    // Hot by time (the sampler's compile): the tier without a profile, on
    // the types it proves (PyjionCompileOptions::hot).
    bool hot = false;
    // The arguments' types the hook saw (PyjionCompileOptions::arg_types).
    unsigned arg_types = 0;
    // The OSR entry takes any instruction's start (PyjionCompileOptions::fallback).
    bool resume_anywhere = false;
    // Keep a description of the frame model at every boundary (recorded_states()).
    bool record_states = false;
};

// What a compile produced, before it is placed in executable memory.
struct BoundaryMark {
    int bytecode_offset;   // byte offset of the instruction (as dis shows it)
    int opcode;
    int oparg;
    asmjit::Label label;
};

// A loop the machine code can be entered at from the interpreter (on-stack
// replacement): the code unit a backward jump lands on, the last backward jump
// to it, and the value-stack depth there.
struct LoopHeader {
    int header;
    int end;
    int depth;
};

class Compiler {
public:
    Compiler(PyCodeObject *code, asmjit::CodeHolder &holder, const CompileOptions &options);

    // Emits the whole function; throws CompileError if it cannot.
    void compile();

    const std::vector<BoundaryMark> &boundaries() const { return boundaries_; }
    const std::vector<CallSite> &call_sites() const { return em_.call_sites(); }
    const size_stats::Table &finish_sizes() { return em_.finish_sizes(); }
    // Loops the OSR entry can enter, and that entry (bound only if there are any).
    const std::vector<LoopHeader> &loops() const { return loops_; }
    const asmjit::Label &osr_entry() const { return osr_entry_; }
    // The optimising tier's exit counters (runtime/unboxed.h's kinds), or
    // nullptr where the code is baseline only.
    const uint64_t *exit_counts() const { return tier_ ? tier_->exit_counts()->counts : nullptr; }
    // False where the optimising tier took part and its code would not pay
    // (opt::UnboxedFrame::pays): the caller compiles again without it.
    bool tier_pays() const { return !tier_ || options_.opt_always || tier_->pays(); }
    // With CompileOptions::record_states: per instruction, the frame model
    // the compiler established at its boundary (FrameState::describe()), or
    // "" where it established none (unreachable, or implemented by the
    // visitor of the instruction before).
    const std::vector<std::string> &recorded_states() const { return recorded_; }

private:
#define OPCODE(name, num, caches, jump) void visit_##name(const Instr &ins);
#include "front/opcodes.def"
#undef OPCODE

    void dispatch(const Instr &ins);
    void emit_prologue();
    void emit_frame_entry();
    void emit_handoff_prologue(Emitter &e);
    asmjit::Label handoff_at(const asmjit::Label &handoff, int start, int depth, int prev);
    int previous_instr(int start) const;
    void emit_resume_entry();
    void find_loops();
    void emit_osr_entry();
    void emit_epilogue();
    void emit_resume_dispatch();
    static bool may_start_tracing(int opcode);
    static bool checks_tracing_last(int opcode);
    // Whether a tracing check is due at an instruction (see compiler.cpp).
    class TracingState {
    public:
        explicit TracingState(const Compiler &c);
        // Arriving at instruction k (by fallthrough, and/or by the forward
        // jumps seen so far): true if no Python code can have run since the
        // last check on any way in.
        bool arrive(size_t k, bool falls_in);
        // Leaving `last` (clean: checked, and nothing since that can switch
        // tracing on), by fallthrough and by its jump.
        void leave(const Instr &last, bool clean);

    private:
        const Compiler &c_;
        std::vector<char> jumped_clean_, jumped_in_, entered_;
        bool fell_clean_ = false;
    };
    bool needs_tracing_check(size_t k) const;
    void emit_tracing_check(const Instr &ins);
    void comment_boundary(const Instr &ins);
    void establish_boundary(size_t k, const Instr *from);

public:
    void emit_tracing_check_at(int start, int depth);
    bool in_loop(int unit) const;
    asmjit::Label tracing_exit(int start, int depth);
    // Where the optimising tier's side exits (and its entry checks, at the
    // first instruction) go on at `start` with `depth` values: the baseline
    // fallback's resume entry, or the interpreter.
    asmjit::Label fallback_exit(int start, int depth);
    bool method_slot_likely(int base) const;
    void jump_if_flags(bool when_nonzero, int target_unit, const Instr &jump, const asmjit::Label &fallthrough);
    // A slot helper (runtime/runtime_slots.h) for the current instruction:
    // fn(sp = the deepest of `inputs` operands, tstate, extra...) leaves one
    // result in place of the operands; then slot_status.
    template <class F, class... Extra>
    void slot_call(int inputs, Callee<F> fn, bool set_prev = true, const Extra &...extra)
    {
        if (set_prev) set_prev_instr();
        em_.call_ptr<F>(fn.fn, fn.name, Lea(em_.stack(depth() - inputs)), Emitter::tstate, extra...);
        slot_status(inputs);
    }
    void slot_status(int inputs);

private:

public:
    // ---- the toolkit visitors use (visit_*.cpp) ----
    Emitter &em() { return em_; }
    x86::Assembler &as() { return em_.as(); }
    PyCodeObject *code() const { return code_; }
    const Instr &current() const { return *cur_; }
    // The opcode the interpreter quickened the instruction at code unit
    // `unit` to (co_code_adaptive): what CPython 3.11's specialising
    // interpreter learnt there, or the unspecialised opcode if the code never
    // ran interpreted.
    int quickened_opcode(int unit) const
    {
        return _Py_OPCODE(reinterpret_cast<const _Py_CODEUNIT *>(code_->co_code_adaptive)[unit]);
    }
    // Whether the current instruction's inline-cache site calls a shared
    // stub (site_stubs.h) instead of carrying inline guards: in a function
    // too long (CompileOptions::compact_above) to stay in the instruction
    // cache between its calls. A short function that is called often stays
    // cached and keeps the inline paths. (Loop bodies of long functions are
    // compact too: library code's loops mostly run a few times per call,
    // and a long loop body does not stay cached either.)
    bool compact_site() const { return compact_; }
    int depth() const { return frame_.depth(); }
    // The frame model: re-established at every bytecode boundary from the
    // entry states (model/entry_states.h); in between, push/pop/drop/grow
    // keep its depth. Visitors push objects as BoxedOrNull (a register may
    // hold the NULL 3.11 keeps below a callable), LOAD_CONST its Const; a
    // slot a visitor rewrites in place keeps its kind until the next
    // boundary (nothing in the baseline reads kinds inside an instruction).
    const model::FrameState &frame() const { return frame_; }

    [[noreturn]] void unsupported(const Instr &ins);

    // The value stack as the compiler models it (frame_; depth_ is its depth).
    x86::Mem top(int n = 0) const { return em_.stack(frame_.depth() - 1 - n); }
    void push(const x86::Gp &value, model::SlotKind kind = model::SlotKind::boxed_or_null())
    {
        em_.as().mov(em_.stack(frame_.depth()), value);
        frame_.push(kind);
    }
    void pop_to(const x86::Gp &reg)
    {
        frame_.pop();
        em_.as().mov(reg, em_.stack(frame_.depth()));
    }
    void drop(int n) { frame_.drop(n); }        // model only: values already moved or released
    // Pops n values and releases each, the top one first (a release may run
    // __del__, so prev_instr must already be set). Clobbers caller-saved registers.
    void release_top(int n)
    {
        for (int i = 0; i < n; i++) {
            pop_to(x86::rdi);
            em_.decref(x86::rdi);
        }
    }
    // The same, the deepest one first: the order of ceval's BINARY_OP,
    // COMPARE_OP and BINARY_SUBSCR (left operand, then right), which __del__
    // methods can observe.
    void release_inputs(int n)
    {
        for (int i = n - 1; i >= 0; i--) {
            em_.as().mov(x86::rdi, top(i));
            em_.decref(x86::rdi);
        }
        drop(n);
    }
    // reg = the address one past the top value (`sp` of the sp-based helpers).
    void stack_pointer_to(const x86::Gp &reg) { em_.as().lea(reg, em_.stack(frame_.depth())); }
    void grow(int n) { frame_.grow(n); }        // model only: slots written by a helper

    // Sets the frame's instruction pointer (3.11 prev_instr, 3.13 instr_ptr)
    // to the current instruction (before anything that can raise, call out,
    // or run arbitrary code through a deallocation).
    void set_prev_instr() { em_.set_prev_instr(cur_->index); }

    // The error exit for the current instruction with `depth` values left on the
    // stack (the instruction's consumed inputs already released).
    // Raise::Error adds this frame to the traceback (ceval's `goto error`);
    // Raise::Reraise does not (`goto exception_unwind`: RERAISE, bare raise).
    enum class Raise { Error, Reraise };
    asmjit::Label error_exit(int depth, Raise how = Raise::Error);
    // The same for code unit `unit_index` (cold stubs are emitted later, when
    // current() has moved on). The handler is looked up for `lookup_unit`
    // (default: unit_index); set_prev=false keeps a prev_instr set at run time.
    asmjit::Label error_exit_at(int unit_index, int depth, Raise how = Raise::Error, int lookup_unit = -1,
                                bool set_prev = true);
    void jump_if_error_zero(const x86::Gp &result, int depth);   // result == NULL -> error
    void jump_if_error_negative(const x86::Gp &status, int depth);   // status < 0 -> error
    void eval_breaker_check();
    void eval_breaker_check(int unit, int lookup_unit);
    void jump_to(int target_unit);     // to a bytecode target, checking the eval breaker on backward jumps
    void jump_to(int target_unit, const Instr &jump);   // same, for the jump instruction `jump`
    // The next instruction if nothing jumps to it, so a visitor may implement
    // both at once; the visitor then calls fuse_next().
    const Instr *fusable_next() const;
    void fuse_next() { fused_next_ = true; }
    asmjit::Label label_for(int target_unit);
    // Instruction number k's own label (no conversion of the frame on the way).
    asmjit::Label label_at(int k) const { return labels_[k]; }
    bool local_certainly_bound(int k, int index) const { return bound_.certain(k, index); }
    // config(debug=True): a check (a C call) at every boundary.
    bool checks_boundaries() const { return options_.debug; }
    // The STORE_FAST right after the current BINARY_OP + / += that an in-place
    // string concatenation may do itself (see concat_target), or nullptr.
    const Instr *concat_store() const;

    // 3.11 specialises a code object's instructions once it has run 8 RESUMEs
    // and backward jumps ("warm-up"); calls to C functions count a recursion
    // level before that and not after. Machine code keeps the same count so
    // the C calls it makes count exactly as the interpreter's would. (3.13
    // counts per instruction and every C call the same: 0, always warm.)
    static constexpr uint64_t kWarmupDelay = layout::kWarmupDelay;
    void emit_warmup_tick();
    // eax = 1 if this code object is warm, else 0. Clobbers rcx.
    void emit_load_warm(const x86::Gp &dst32);

    // Memory for an inline cache of one site; freed with the machine code.
    template <class T>
    T *new_site_data()
    {
        auto holder = std::make_unique<SiteDataOf<T>>();
        T *data = &holder->data;
        site_data_.push_back(std::move(holder));
        return data;
    }
    std::vector<std::unique_ptr<SiteData>> take_site_data() { return std::move(site_data_); }

private:
    // LOAD_FAST / STORE_FAST of local `index` for the instruction `ins`
    // (the fused local accesses of 3.13 make several).
    void emit_load_fast(const Instr &ins, int index, bool check);
    // rax = a new reference to LOAD_GLOBAL's global, through the site's cache
    // (visit_names.cpp); the visitors of each version push it and the NULL.
    void load_global_value(const Instr &ins);
    void emit_store_fast(const Instr &ins, int index);
    void pop_jump_if_bool(const Instr &ins, bool jump_when_true);
    void pop_jump_if_none(const Instr &ins, bool jump_when_none);
    void jump_or_pop(const Instr &ins, bool jump_when_true);

    PyCodeObject *code_;
    CompileOptions options_;
    Bytecode bytecode_;
    BoundLocals bound_;   // after bytecode_, which it reads
    model::EntryStates entry_;   // computed by compile()
    Emitter em_;
    const Instr *cur_ = nullptr;
    model::FrameState frame_;
    int established_ = -1;   // the instruction whose boundary state frame_ started from

    // The value-stack depth as visitors spell it (depth_ - 1, depth_ = d,
    // depth_--): frame_'s depth; setting it drops values from the model or
    // adds BoxedOrNull ones.
    class StackDepth {
    public:
        explicit StackDepth(model::FrameState &frame) : frame_(frame) {}
        operator int() const { return frame_.depth(); }
        StackDepth &operator=(int depth)
        {
            frame_.set_depth(depth);
            return *this;
        }
        StackDepth &operator--()
        {
            frame_.drop(1);
            return *this;
        }
        int operator--(int)
        {
            int before = frame_.depth();
            frame_.drop(1);
            return before;
        }
        StackDepth &operator++()
        {
            frame_.grow(1);
            return *this;
        }
        int operator++(int)
        {
            int before = frame_.depth();
            frame_.grow(1);
            return before;
        }

    private:
        model::FrameState &frame_;
    };
    StackDepth depth_{frame_};
    bool fused_next_ = false;
    std::vector<asmjit::Label> labels_;     // one per instruction
    std::vector<BoundaryMark> boundaries_;
    std::vector<std::string> recorded_;
    std::vector<std::unique_ptr<SiteData>> site_data_;
    uint64_t *warmup_ = nullptr;   // RESUMEs and backward jumps seen, up to kWarmupDelay
    asmjit::Label exit_return_, exit_error_, exit_unlinked_, exit_suspend_, exit_restore_;
    // The tail every tracing check shares (prev_instr in rax): made on first use.
    asmjit::Label tracing_handoff_;
    // tracing_exit's stubs by (code unit, depth): one per place the frame is handed over
    std::map<std::pair<int, int>, asmjit::Label> tracing_exits_;
    asmjit::Label fallback_handoff_;
    // Instructions the baseline's visitor of the one before implemented (fused).
    std::vector<bool> fused_into_previous_;
    std::vector<LoopHeader> loops_;
    bool compact_ = false;
    asmjit::Label osr_entry_;
    std::unique_ptr<opt::UnboxedFrame> tier_;   // set by compile() when the tier applies

public:
    // Leaves the frame suspended (YIELD_VALUE): r14 holds the value to return
    // and stacktop has been set to the values that stay on the stack.
    const asmjit::Label &exit_suspend() const { return exit_suspend_; }
};

}  // namespace pyjion
