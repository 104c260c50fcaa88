// SPDX-License-Identifier: MIT
#pragma once
// Which CPU a single thread measures on, and keeping it there.
//
// One CPU is not another: on a 2-vCPU Zen 5 guest one thread's DRAM triad read 64-65 GB/s on
// hwthread 0 and 72-73 on hwthread 1, and a hybrid part's P and E cores differ far more. A
// 1-thread ceiling measured on one CPU then judges rows that ran on another, and unpinned
// rows land on either from one sample to the next. So the 1-thread probes and the 1-thread
// rows run on one CPU (likwid-bench pins the same way): the one this process was running on
// when it first measured, or the one SWITCHYARD_PIN_CPU names ("off": none).

#include <sched.h>

#include <string>
#include <string_view>
#include <vector>

namespace switchyard::detail {

/// The CPUs this process may run on, ascending: the loading thread's affinity mask when the
/// library loaded (before any thread of it was pinned here), so a pinned thread's own mask,
/// or that of a thread it started, never narrows it.
const std::vector<int>& process_cpus();

/// The CPU 1-thread measurements run on, chosen at the first call and kept: SWITCHYARD_PIN_CPU's
/// where it names one of process_cpus(), else (unset, or not followed:
/// measurement_cpu_problem() says why) the CPU the calling thread is running on then; -1
/// when it is "off".
int measurement_cpu();
/// Why SWITCHYARD_PIN_CPU was not followed ("" when it was, or is unset or "off").
std::string measurement_cpu_problem();
/// True when measurement_cpu() is the CPU SWITCHYARD_PIN_CPU names (not the default).
bool measurement_cpu_named();
/// "0-3,8,10-11": ascending CPU numbers as runs.
std::string cpu_list(const std::vector<int>& cpus);

/// A value of SWITCHYARD_PIN_CPU or --pin-cpu, read: "off" (or "none"), or a CPU of
/// process_cpus(), or a problem that says why it is neither. The one reader of both.
struct PinValue {
    int cpu = -1;        // the CPU named, when it may be used
    bool off = false;    // "off" / "none": unpinned
    bool parsed = false; // a CPU number (the problem, if any, is that the process may not use it)
    std::string problem; // "" when usable
};
PinValue read_pin_value(std::string_view value);
/// True when `cpu` is one of process_cpus().
bool process_may_run_on(int cpu);

/// The calling thread on one CPU for the scope's life, its own mask restored at the end.
/// Does nothing for cpu < 0, for a CPU not in process_cpus(), and inside another pin of the
/// thread (the outer one holds: a probe timed inside a pinned row stays on the row's CPU).
class ScopedCpuPin {
public:
    explicit ScopedCpuPin(int cpu);
    ~ScopedCpuPin();
    ScopedCpuPin(const ScopedCpuPin&) = delete;
    ScopedCpuPin& operator=(const ScopedCpuPin&) = delete;
    /// The CPU the thread is held on (this scope's or an enclosing one's); -1 when none.
    int cpu() const noexcept { return m_cpu; }

private:
    cpu_set_t m_saved{};
    bool m_owner = false;
    int m_cpu = -1;
};

/// The calling thread allowed on every CPU of process_cpus() again (a pool thread started
/// from a pinned thread inherits its one-CPU mask).
void allow_process_cpus();

} // namespace switchyard::detail
