#include "model/frame_state.h"

namespace pyjion::model {

std::string SlotKind::describe() const
{
    switch (kind) {
    case Kind::Boxed: return "obj";
    case Kind::BoxedOrNull: return "obj?";
    case Kind::Null: return "null";
    case Kind::Const: return "const#" + std::to_string(const_index());
    case Kind::KnownType: return std::string("type:") + (type() != nullptr ? type()->tp_name : "?");
    case Kind::Int64: return "i64";
    case Kind::Double: return "f64";
    case Kind::LazyConst: return "lazy:const#" + std::to_string(const_index());
    case Kind::LazyLocal: return "lazy:local#" + std::to_string(detail);
    }
    return "?";
}

SlotKind join(SlotKind a, SlotKind b)
{
    if (a == b) return a;
    return a.may_be_null() || b.may_be_null() ? SlotKind::boxed_or_null() : SlotKind::boxed();
}

std::string describe(const std::vector<SlotKind> &kinds)
{
    std::string out = "[";
    for (size_t i = 0; i < kinds.size(); i++) {
        if (i > 0) out += ", ";
        out += kinds[i].describe();
    }
    return out + "]";
}

std::string Snapshot::describe() const
{
    return "unit=" + std::to_string(unit) + " depth=" + std::to_string(depth()) +
           " locals=" + model::describe(locals) + " stack=" + model::describe(stack);
}

SlotKind FrameState::pop()
{
    if (stack_.empty()) throw ModelError("frame model: pop from an empty value stack");
    SlotKind k = stack_.back();
    stack_.pop_back();
    return k;
}

void FrameState::drop(int n)
{
    if (n < 0 || n > depth()) {
        throw ModelError("frame model: dropping " + std::to_string(n) + " of " + std::to_string(depth()) + " values");
    }
    stack_.resize(stack_.size() - static_cast<size_t>(n));
}

void FrameState::grow(int n, SlotKind k)
{
    if (n < 0) throw ModelError("frame model: growing the stack by " + std::to_string(n));
    stack_.resize(stack_.size() + static_cast<size_t>(n), k);
}

void FrameState::set_depth(int depth, SlotKind fill)
{
    if (depth < 0) throw ModelError("frame model: stack depth " + std::to_string(depth));
    if (depth < this->depth()) {
        stack_.resize(static_cast<size_t>(depth));
    } else {
        stack_.resize(static_cast<size_t>(depth), fill);
    }
}

std::string FrameState::describe() const
{
    return "depth=" + std::to_string(depth()) + " locals=" + model::describe(locals_) +
           " stack=" + model::describe(stack_);
}

void FrameState::out_of_range(const char *what, int index, int count)
{
    throw ModelError(std::string("frame model: ") + what + " " + std::to_string(index) + " of " +
                     std::to_string(count));
}

}  // namespace pyjion::model
