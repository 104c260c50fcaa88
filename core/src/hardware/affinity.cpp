// SPDX-License-Identifier: MIT
#include "hardware/affinity.h"

#include <pthread.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace switchyard::detail {

namespace {

// The CPU the calling thread is held on by a ScopedCpuPin (-1: none).
thread_local int t_pinned_cpu = -1;

struct PinChoice {
    int cpu = -1;
    std::string problem;
    bool named = false; // SWITCHYARD_PIN_CPU named this CPU, and it is followed
};

PinChoice choose_cpu() {
    const auto& cpus = process_cpus();
    // By default the CPU the scheduler has this thread on as it first measures: two
    // measuring processes side by side (ctest -j2, two profiles) are then on two CPUs, where
    // a fixed first CPU would put both on CPU 0 and leave the other idle.
    const int now = sched_getcpu();
    const int first = process_may_run_on(now) ? now : cpus.empty() ? -1 : cpus.front();
    const char* env = std::getenv("SWITCHYARD_PIN_CPU");
    if (!env || !*env)
        return {first, {}};
    const std::string_view v(env);
    const auto value = read_pin_value(v);
    if (value.off)
        return {-1, {}};
    if (!value.problem.empty())
        // Where the rows run instead is said by the one who knows (kernels' pin_cpu_problem:
        // the CPU of the ceilings in use, when they were measured on one).
        return {first, "SWITCHYARD_PIN_CPU=" +
                           (value.parsed ? std::string(v) + ": " + value.problem : value.problem)};
    return {value.cpu, {}, true};
}

const PinChoice& pin_choice() {
    static const PinChoice choice = choose_cpu();
    return choice;
}

} // namespace

std::string cpu_list(const std::vector<int>& cpus) {
    std::string s;
    for (std::size_t i = 0; i < cpus.size(); ++i) {
        // Runs as ranges: 0-3,8,10-11.
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
            ++j;
        if (!s.empty())
            s += ',';
        s += std::to_string(cpus[i]);
        if (j > i)
            s += '-' + std::to_string(cpus[j]);
        i = j;
    }
    return s;
}

PinValue read_pin_value(std::string_view v) {
    if (v == "off" || v == "none")
        return {-1, true, false, {}};
    const auto& cpus = process_cpus();
    const std::string allowed =
        cpus.empty() ? std::string("its CPUs cannot be read") : "it may run on " + cpu_list(cpus);
    int cpu = -1;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), cpu);
    if (v.empty() || ec != std::errc() || end != v.data() + v.size() || cpu < 0)
        return {-1, false, false,
                "'" + std::string(v) +
                    "' is neither a CPU number nor \"off\" (this process: " + allowed + ")"};
    if (!process_may_run_on(cpu))
        return {-1, false, true,
                "CPU " + std::to_string(cpu) + " is not one this process may run on (" + allowed +
                    "; taskset and cgroups set that)"};
    return {cpu, false, true, {}};
}

const std::vector<int>& process_cpus() {
    static const std::vector<int> cpus = [] {
        std::vector<int> out;
        cpu_set_t set;
        CPU_ZERO(&set);
        if (sched_getaffinity(0, sizeof(set), &set) == 0)
            for (int c = 0; c < CPU_SETSIZE; ++c)
                if (CPU_ISSET(c, &set))
                    out.push_back(c);
        return out;
    }();
    return cpus;
}

namespace {
// Read when the library loads, before any thread of the process is pinned here: read later
// from a pinned thread, or from a thread it started (which inherits its one-CPU mask), the
// "process's" CPUs would be that one.
[[maybe_unused]] const bool g_process_cpus_read = !process_cpus().empty();
} // namespace

bool process_may_run_on(int cpu) {
    const auto& cpus = process_cpus();
    return cpu >= 0 && std::binary_search(cpus.begin(), cpus.end(), cpu);
}

int measurement_cpu() {
    return pin_choice().cpu;
}

std::string measurement_cpu_problem() {
    return pin_choice().problem;
}

bool measurement_cpu_named() {
    return pin_choice().named;
}

ScopedCpuPin::ScopedCpuPin(int cpu) {
    (void)process_cpus(); // the process's mask read before this thread narrows its own
    if (t_pinned_cpu >= 0) {
        m_cpu = t_pinned_cpu; // an enclosing scope holds the thread
        return;
    }
    if (!process_may_run_on(cpu) || cpu >= CPU_SETSIZE)
        return;
    if (pthread_getaffinity_np(pthread_self(), sizeof m_saved, &m_saved) != 0)
        return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) != 0)
        return;
    m_owner = true;
    m_cpu = cpu;
    t_pinned_cpu = cpu;
}

ScopedCpuPin::~ScopedCpuPin() {
    if (!m_owner)
        return;
    (void)pthread_setaffinity_np(pthread_self(), sizeof m_saved, &m_saved);
    t_pinned_cpu = -1;
}

void allow_process_cpus() {
    const auto& cpus = process_cpus();
    if (cpus.empty())
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus)
        if (c < CPU_SETSIZE)
            CPU_SET(c, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

} // namespace switchyard::detail
