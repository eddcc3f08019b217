#include "machine/perf_map.h"

#include <cstdio>
#include <unistd.h>
#include <vector>

namespace pyjion {
namespace perf_map {

namespace {
bool g_enabled = false;
FILE *g_file = nullptr;
pid_t g_pid = 0;   // whose map g_file is: a forked child writes its own

struct Block {
    const void *start;
    size_t size;
    std::string name;
};
std::vector<Block> g_lasting;

void write_line(const void *start, size_t size, const std::string &name)
{
    // One line per block, flushed: perf may read the map while we still run,
    // and a process that dies by a signal keeps what it wrote.
    std::fprintf(g_file, "%lx %zx %s\n", reinterpret_cast<unsigned long>(start), size, name.c_str());
    std::fflush(g_file);
}
}  // namespace

void set_enabled(bool on)
{
    g_enabled = on;
    if (!on && g_file != nullptr) {
        std::fclose(g_file);
        g_file = nullptr;
    }
}

bool enabled() { return g_enabled; }

std::string path() { return "/tmp/perf-" + std::to_string(getpid()) + ".map"; }

void record(const void *start, size_t size, const std::string &name)
{
    if (!g_enabled) return;
    pid_t pid = getpid();
    if (g_file != nullptr && g_pid != pid) {
        std::fclose(g_file);   // inherited from the parent: not ours to append to
        g_file = nullptr;
    }
    if (g_file == nullptr) {
        g_file = std::fopen(path().c_str(), "a");
        if (g_file == nullptr) return;
        g_pid = pid;
        for (const Block &b : g_lasting) write_line(b.start, b.size, b.name);
    }
    write_line(start, size, name);
}

void record_lasting(const void *start, size_t size, const std::string &name)
{
    g_lasting.push_back(Block{start, size, name});
    if (g_enabled && g_file != nullptr && g_pid == getpid()) write_line(start, size, name);
}

}  // namespace perf_map
}  // namespace pyjion
