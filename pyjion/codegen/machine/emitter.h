// A thin layer over AsmJit's x86 assembler for the baseline compiler: fixed
// registers for the frame and thread state, operands for locals and value-stack
// slots, reference counting, calls, labels and out-of-line (cold) stubs.
//
// Register plan (all callee-saved, so they survive helper calls):
//   rbx  the _PyInterpreterFrame*      r12  the PyThreadState*
//   r13  _PyCode_CODE(code), the base of the frame's instruction pointer
//   r14, r15  scratch values that must survive a call
#pragma once

#include <array>
#include <asmjit/x86.h>
#include <functional>
#include <string>
#include <vector>

#include "cpython/frame_layout.h"
#include "machine/helper_call.h"
#include "machine/size_stats.h"

namespace pyjion {

namespace x86 = asmjit::x86;

struct CallSite {
    const asmjit::Section *section;   // where the call was emitted
    uint32_t offset;                  // of the instruction after the call, in that section
    const char *name;                 // the caller's (a literal or a table's): valid while compiling
    // The offset from the start of the machine code (once the sections are laid out).
    uint32_t native_offset() const { return static_cast<uint32_t>(section->offset() + offset); }
};

class Emitter {
public:
    Emitter(asmjit::CodeHolder &holder, int nlocalsplus);

    x86::Assembler &as() { return a_; }

    // The frame register points kFrameBias bytes into the frame, so that the
    // header's fields and the first ~22 locals and stack slots are within a
    // one-byte displacement (3 bytes less per access than from the frame's
    // start, where only 7 slots are). Every use goes through these.
    static constexpr int32_t kFrameBias = 128;
    static x86::Mem frame_q(int32_t offset) { return x86::qword_ptr(frame, offset - kFrameBias); }
    static x86::Mem frame_d(int32_t offset) { return x86::dword_ptr(frame, offset - kFrameBias); }
    static x86::Mem frame_b(int32_t offset) { return x86::byte_ptr(frame, offset - kFrameBias); }
    // The frame's address (what C helpers take): lea dst, [frame - bias].
    static x86::Mem frame_address() { return x86::ptr(frame, -kFrameBias); }

    // Operands
    x86::Mem local(int index) const { return frame_q(layout::local_offset(index)); }
    x86::Mem stack(int slot) const { return local(nlocalsplus_ + slot); }   // slot 0 = bottom

    // Reference counting (ob_refcnt at offset 0), as Py_INCREF/Py_DECREF do:
    // where objects can be immortal (3.12+, PEP 683: the count's low 32 bits
    // all ones), an increment leaves an immortal count alone (add sets the
    // carry exactly when it wraps to 0, sbb takes it back) and a decrement
    // skips it.
    void incref(const x86::Gp &obj);
    // The same on an assembler of its own (site stubs): incref_at counts a
    // reference; decref_at drops one and leaves ZF set iff the count reached
    // zero (never for an immortal object, which both leave alone).
    static void incref_at(x86::Assembler &a, const x86::Gp &obj);
    static void decref_at(x86::Assembler &a, const x86::Gp &obj);
    // May call _Py_Dealloc (clobbers caller-saved registers). With prev_unit,
    // prev_instr is set to that code unit first, only on the path that
    // deallocates (a __del__ may look at the frame).
    void decref(const x86::Gp &obj, int prev_unit = -1);
    void xdecref(const x86::Gp &obj, int prev_unit = -1);
    void decref_no_dealloc(const x86::Gp &obj);   // for True/False/None, which never die (3.12+: nothing)

    // Calls code at an absolute address (rel32 when it is within reach once
    // placed, else through AsmJit's address table); `name` annotates the
    // disassembly. Untyped: for machine code with its own register contract
    // (site stubs, the direct-call stub); C functions take the typed calls.
    void call(const void *fn, const char *name);

    // Typed calls of C functions: call<&fn>(args...) for a function listed in
    // runtime/helpers.def (include runtime/helpers.h; the listing names it as
    // the table does), call_ptr<F>(fn, name, args...) for a function of type
    // F chosen while compiling. Each argument (machine/helper_call.h: a
    // register, memory, Lea(mem), an integer or pointer constant, nullptr,
    // InReg) is loaded into its System V register; the table, the count and
    // the forms are checked at C++ compile time (see runtime/helpers.def).
    template <auto Fn, class... Args>
    void call(const Args &...args)
    {
        call_ptr<decltype(Fn)>(Fn, helper_name<Fn>(), args...);
    }

    template <class F, class... Args>
    void call_ptr(F fn, const char *name, const Args &...args)
    {
        using Sig = CallSignature<F>;
        static_assert(sizeof...(Args) == Sig::arity,
                      "the call's argument count differs from the function's parameter count");
        static_assert(Sig::template accepts<Args...>(),
                      "an argument does not fit its parameter (Lea, pointers and nullptr for pointers, integers for "
                      "integers, InReg for floating point)");
        static constexpr std::array<ParamSlot, Sig::arity> kSlots = Sig::slots();
        const std::array<CallArg, sizeof...(Args)> list{CallArg(args)...};
        load_args(list.data(), kSlots.data(), list.size(), name);
        call(reinterpret_cast<const void *>(fn), name);
    }

    void load_address(const x86::Gp &dst, const void *ptr) { a_.mov(dst, asmjit::imm(reinterpret_cast<uint64_t>(ptr))); }
    void set_prev_instr(int unit_index);

    asmjit::Label new_label() { return a_.newLabel(); }
    void bind(const asmjit::Label &l) { a_.bind(l); }

    // Out-of-line code goes to a second section placed after the function
    // body, so the paths that run keep together in the instruction cache.
    // cold(): emitted later, by emit_cold() (the compiler's model of the
    // frame will have moved on; the stub must not rely on it).
    asmjit::Label cold(std::function<void(Emitter &)> body);
    void emit_cold();
    // out_of_line(): emitted now, into the cold section, so the body may use
    // the compiler's current model; it must end with a jump.
    template <class Body>
    void out_of_line(Body &&body)
    {
        if (in_cold_) {
            // Already out of line: in place, with a jump over it for the
            // code before to go on past it.
            asmjit::Label past = a_.newLabel();
            a_.jmp(past);
            body();
            a_.bind(past);
            return;
        }
        in_cold_ = true;
        a_.section(cold_section_);
        body();
        a_.section(text_section_);
        in_cold_ = false;
    }

    const std::vector<CallSite> &call_sites() const { return calls_; }

    // Size accounting: code emitted between begin_instr and end_instr, and
    // the cold stubs asked for meanwhile, are charged to `opcode`.
    void begin_instr(int opcode);
    void end_instr();
    // After the last code: what no instruction was charged goes to the frame bucket.
    const size_stats::Table &finish_sizes();

    static constexpr x86::Gp frame = x86::rbx;
    static constexpr x86::Gp tstate = x86::r12;
    static constexpr x86::Gp first_instr = x86::r13;

private:
    // Moves the arguments of a typed call into their registers, in an order
    // in which no move overwrites a register a later one reads (a cycle
    // throws CompileError).
    void load_args(const CallArg *args, const ParamSlot *params, size_t n, const char *name);
    void load_arg(const CallArg &arg, const ParamSlot &param);

    x86::Assembler a_;
    asmjit::Section *text_section_;
    asmjit::Section *cold_section_ = nullptr;
    bool in_cold_ = false;
    int nlocalsplus_;
    struct ColdStub {
        asmjit::Label label;
        std::function<void(Emitter &)> body;
        int owner;   // the opcode whose visitor asked for it
    };
    std::vector<ColdStub> cold_;
    size_stats::Table sizes_{};
    int owner_ = size_stats::kFrameBucket;
    size_t hot_start_ = 0, cold_start_ = 0;
    std::vector<CallSite> calls_;
};

}  // namespace pyjion
