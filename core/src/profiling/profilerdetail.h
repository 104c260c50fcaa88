// SPDX-License-Identifier: MIT
#pragma once
// What the parts of the profiler share (profiler.cpp measures, profilerplan.cpp plans,
// guards.cpp watches the buffers, ceilingchoice.cpp judges): private to the profiling module.

#include <switchyard/profiling/profilerow.h>
#include <switchyard/sdk/device.h>
#include <switchyard/sdk/registries.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard::detail {

// The workspace a cell asks for (never negative).
inline std::int64_t workspace_of(const KernelCell& cell) {
    return std::max<std::int64_t>(0, cell.workspace_bytes);
}

// Device buffers of one row, released on every path out.
struct DeviceBuffers {
    Device& device;
    std::vector<void*> buffers;
    std::vector<void*> views; // BufferViews::view()s into `buffers`, released first
    explicit DeviceBuffers(Device& d) : device(d) {}
    ~DeviceBuffers() {
        if (auto* v = dynamic_cast<BufferViews*>(&device))
            for (void* view : views)
                v->release_view(view);
        for (void* b : buffers)
            device.release(b);
    }
    void* add(std::size_t bytes) {
        buffers.push_back(device.allocate(bytes));
        return buffers.back();
    }
};

// The CPU threads a cell states it runs on (its meta "threads", 1..RowSpec::kMaxThreads);
// 0 when it states none. What RowSpec::threads holds for a CPU row.
std::int64_t stated_threads(const KernelCell& cell);

// Whether a row runs on all threads: the threads its cell states when it states them, else
// by variant ("threaded", "openblas"); device rows always use the whole device.
bool row_uses_all_threads(const RowSpec& spec, const KernelCell& cell);

// Judges a summarized row of `cell` against the ceiling its working set and intensity pick
// (choose_ceiling, with the arithmetic the cell states in its meta "compute", "fp32" when
// none), with a warning when it reads above kCeilingTolerance of it. `read_share`: the reads'
// share of the op's traffic (read_share in ops.h). A cell whose code needs an ISA level above
// the SWITCHYARD_MAX_ISA cap in force (meta "isa_level": OpenBLAS picks its kernels itself)
// is not judged against the capped level's ceilings, which do not bound it; the row says so.
void judge(ProfileRow& row, const DeviceInfo& info, double working_set_bytes, bool all_threads,
           double read_share, const KernelCell& cell);

} // namespace switchyard::detail
