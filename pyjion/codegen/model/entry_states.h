// The frame at the start of every instruction of a code object, as the
// interpreter has it there (and as compiled code must leave it whenever it
// hands the frame over): the kinds of the value-stack slots, from a forward
// analysis over the jumps and exception handlers with each opcode's inputs
// and outputs, and the kinds of the locals, from the definitely-assigned
// analysis. The baseline establishes these states at its instruction
// boundaries; a side exit of the optimising tier rebuilds them.
//
// What it tells apart: the NULLs 3.11 keeps below a callable (PUSH_NULL,
// LOAD_GLOBAL with oparg & 1: Null; LOAD_METHOD's NULL-or-method and what
// PRECALL leaves of it: BoxedOrNull), the constants LOAD_CONST pushed (Const,
// until an instruction consumes them), locals that may be unbound
// (BoxedOrNull); everything else is a Boxed object.
#pragma once

#include <vector>

#include "front/bound_locals.h"
#include "front/bytecode.h"
#include "model/frame_state.h"

namespace pyjion::model {

class EntryStates {
public:
    EntryStates() = default;
    // Throws CompileError where the bytecode's stack effects (CPython's, as
    // the decoder applied them) disagree with the opcodes' modelled inputs
    // and outputs.
    EntryStates(const Bytecode &bytecode, const BoundLocals &bound, int nlocalsplus);

    // Instruction number k is reachable (has a state).
    bool reached(int k) const { return k >= 0 && k < (int)reached_.size() && reached_[k]; }
    // The value stack's kinds when instruction number k starts, bottom first
    // (its depth is the decoder's Instr::depth).
    const SlotKind *stack_at(int k) const { return kinds_.data() + start_.at(k); }
    int depth_at(int k) const { return start_.at(k + 1) - start_.at(k); }
    SlotKind local_at(int k, int index) const
    {
        return bound_->certain(k, index) ? SlotKind::boxed() : SlotKind::boxed_or_null();
    }
    // Makes `state` the frame when instruction number k starts (k reachable).
    // `was`: an instruction whose locals `state` still holds (established
    // there, not changed since), so only what differs is written; -1: none.
    void establish(int k, FrameState &state, int was = -1) const;

private:
    const BoundLocals *bound_ = nullptr;
    int nlocals_ = 0;
    // Instruction k's stack kinds are kinds_[start_[k] .. start_[k + 1]):
    // one array for all, each instruction's part sized by the decoder's depth.
    std::vector<SlotKind> kinds_;
    std::vector<int> start_;
    std::vector<bool> reached_;
};

// What instruction `ins` does to the value stack's kinds, on its jump to
// ins.target (`jump`) or when it goes on to the next instruction. Throws
// CompileError if the stack is too shallow for its inputs, or its modelled
// inputs and outputs disagree with CPython's stack effect.
void apply_stack_effect(const Instr &ins, bool jump, std::vector<SlotKind> &stack);

}  // namespace pyjion::model
