#include "machine/code_alloc.h"

#include <cstring>
#include <string_view>
#include <unordered_set>

#include "machine/code_heap.h"

namespace pyjion {

const char *intern_name(const char *name)
{
    // Never destroyed, like the code that refers to the names.
    static auto *names = new std::unordered_set<std::string_view>();
    auto it = names->find(name);
    if (it != names->end()) return it->data();
    const size_t n = std::strlen(name);
    char *copy = new char[n + 1];
    std::memcpy(copy, name, n + 1);
    names->insert(std::string_view(copy, n));
    return copy;
}

CompiledCode::~CompiledCode()
{
    if (entry_ != nullptr) code_heap::release(entry_);
}

}  // namespace pyjion
