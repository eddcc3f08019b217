// CPython 3.11's co_exceptiontable ("zero-cost" exceptions), decoded once at
// compile time: for each range of instructions, where an exception goes.
#pragma once

#include <Python.h>
#include <vector>

namespace pyjion {

struct ExceptionEntry {
    int start;      // first code unit covered
    int end;        // one past the last code unit covered
    int handler;    // code unit of the handler
    int level;      // value-stack depth to unwind to
    bool lasti;     // push the raising instruction's offset before the exception
};

class ExceptionTable {
public:
    explicit ExceptionTable(PyCodeObject *code);
    // The entry covering code unit `unit`, or nullptr: the exception leaves the frame.
    const ExceptionEntry *find(int unit) const;
    const std::vector<ExceptionEntry> &entries() const { return entries_; }

private:
    std::vector<ExceptionEntry> entries_;
};

}  // namespace pyjion
