// The optimising tier's abstract interpreter: a forward pass over the
// bytecode that gives every local and value-stack entry, before every
// instruction, one of a few types (exact int that fits int64, exact float,
// range object or iterator, anything), and decides for each arithmetic and
// comparison site whether the tier runs it on unboxed machine values.
//
// Types come from constants, from the arithmetic itself and from `for i in
// range(...)`; where a value of unknown type meets a site whose type profile
// (front/site_profile.h) says int or float, the tier speculates: the site
// carries a guard on that input, and the types after it hold only if the
// guard passed (a failed guard leaves the machine code at that instruction).
// The rules are written one opcode at a time in type_infer.cpp.
#pragma once

#include <Python.h>
#include <string>
#include <utility>
#include <vector>

#include "front/bytecode.h"

namespace pyjion::opt {

// What is known of a value. kInt: an exact int whose value fits int64;
// kFloat: an exact float; kRange / kRangeIter: a range object / the
// iterator over one whose items fit a C long (range_iterator); kRangeFunc:
// the builtin `range` itself (guarded where it is loaded); kObject: anything
// (NULL included). kNone only marks code not reached.
enum class VType : uint8_t { kNone, kInt, kFloat, kRange, kRangeIter, kRangeFunc, kObject };

VType join(VType a, VType b);
const char *vtype_name(VType t);

// How the tier runs one instruction.
enum class OpKind : uint8_t {
    kGeneric,      // as the baseline does: boxed inputs, the generic path
    kIntArith,     // BINARY_OP / UNARY_NEGATIVE on int64 (overflow leaves the machine code)
    kFloatArith,   // BINARY_OP / UNARY_NEGATIVE on doubles
    kIntCompare,   // COMPARE_OP of two int64
    kFloatCompare, // COMPARE_OP of two doubles
    kRangeIter,    // GET_ITER of a range (guarded: a range_iterator) / FOR_ITER over it
    kRangeCall,    // a call of the global `range` (3.11: its PRECALL; 3.13: its CALL): a range object
    kListItem,     // BINARY_SUBSCR of a list (guarded) at an int64 index: the item, boxed
    kListStore,    // STORE_SUBSCR into a list (guarded) at an int64 index: the value boxed only there
};
const char *op_kind_name(OpKind k);

struct Decision {
    OpKind kind = OpKind::kGeneric;
    // Bit i: input i (0 = the deepest) is of unknown type and is checked
    // (and unboxed) to the kind's type; a failed check leaves the machine code.
    // Bit 2 + i: for float arithmetic, input i may be an int as well (the
    // other operand makes the result a float).
    uint8_t guards = 0;
};

struct AbstractState {
    std::vector<VType> locals;   // co_nlocalsplus entries
    std::vector<VType> stack;    // bottom first
    bool operator==(const AbstractState &o) const { return locals == o.locals && stack == o.stack; }
};

class TypeInference {
public:
    // speculate: a float operand may let an operand of unknown type be any
    // number behind a guard (code that ran warm in the interpreter, or that
    // the sampler found hot; not code compiled at its first call).
    // arg_types: the arguments' types the hook saw (PyjionCompileOptions::
    // arg_types), taken as the entry's types; the machine code checks them
    // at entry (speculated_args()).
    TypeInference(PyCodeObject *code, const Bytecode &bytecode, bool speculate, unsigned arg_types = 0);

    // The state before instruction number k; nullptr where k is not reached.
    const AbstractState *state_at(int k) const
    {
        return k >= 0 && k < (int)states_.size() && reached_[k] ? &states_[k] : nullptr;
    }
    const Decision &decision(int k) const { return decisions_[k]; }
    // Some instruction runs on unboxed values: the tier has something to do.
    bool unboxes_anything() const { return unboxes_; }
    // The arguments taken to be an int or a float at entry: (local, type).
    const std::vector<std::pair<int, VType>> &speculated_args() const { return args_; }

    // One line per instruction: offset, opcode, decision, the typed locals and the stack.
    std::string describe() const;

private:
    void run();
    Decision decide(int k, const AbstractState &before) const;
    void transfer(int k, const AbstractState &before, AbstractState &after, const Decision &d) const;
    void flow_into(int k, const AbstractState &in);

    PyCodeObject *code_;
    const Bytecode &bc_;
    std::vector<AbstractState> states_;
    std::vector<bool> reached_;
    std::vector<Decision> decisions_;
    std::vector<int> work_;
    std::vector<bool> queued_;
    bool unboxes_ = false;
    bool speculate_;
    std::vector<std::pair<int, VType>> args_;
};

}  // namespace pyjion::opt
