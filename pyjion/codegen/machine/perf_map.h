// Linux perf's map of JIT code: with config(perf_map=True) (or PYJION_PERF_MAP=1
// at start-up) every block of machine code placed from then on is appended to
// /tmp/perf-<pid>.map as "<start> <size> <name>" (hex start and size), the
// format `perf report` and `perf script` read to name addresses that belong to
// no file. tools/icache_profile.py reads the same file to name callgrind's
// unknown ("???") code. Blocks that are freed stay listed (the format has no
// removal; a reused address gets a later line).
#pragma once

#include <cstddef>
#include <string>

namespace pyjion {
namespace perf_map {

void set_enabled(bool on);
bool enabled();

// Appends one line; best effort: a map that cannot be written is skipped.
// Called with the GIL held.
void record(const void *start, size_t size, const std::string &name);

// A block that lives as long as the process (the shared stubs): kept in a
// list even while the map is off, and written when it is switched on, so a
// map started late still names them.
void record_lasting(const void *start, size_t size, const std::string &name);

// The file this process writes (reopened under the new pid after fork()).
std::string path();

}  // namespace perf_map
}  // namespace pyjion
