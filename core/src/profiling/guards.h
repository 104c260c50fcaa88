// SPDX-License-Identifier: MIT
#pragma once
// Guard zones (parity): canaries around every output and workspace buffer, and the inputs
// compared with their host copies; made by make_args, read by check_guards. Private to the
// profiling module; profiler.cpp uses them around the parity launch and the timed ones.

#include "profiling/profilerdetail.h"

#include <switchyard/profiling/ops.h>
#include <switchyard/profiling/parity.h>
#include <switchyard/profiling/profilerow.h>
#include <switchyard/profiling/workload.h>
#include <switchyard/sdk/device.h>
#include <switchyard/sdk/kernel.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace switchyard::detail {

// What a kernel must not touch, watched around each launch: guard zones of canary values
// before and after every output and workspace buffer, and the inputs, compared with the
// host copy after the launch. Guard zones need a buffer inside a larger one: pointer
// arithmetic where buffers are addresses (the CPU, CUDA device pointers), a sub-buffer
// where the device offers BufferViews (OpenCL); other devices' buffers get none.
struct Guards {
    static constexpr std::size_t kBytes = 4096;          // each side: 1,024 floats
    static constexpr std::uint32_t kCanary = 0x7fa5a5a5; // a NaN with a payload of its own
    struct Zone {
        std::string name;    // "out", "workspace"
        const void* base;    // the allocation: guard, buffer, guard
        std::size_t bytes;   // the buffer's size
        std::size_t element; // 4 (floats) or 1 (workspace bytes)
    };
    struct Input {
        std::string name;
        const void* buffer;
        const std::vector<float>* host;
    };
    std::vector<Zone> zones;
    std::vector<Input> inputs;
};

// Device buffers for the op's inputs (uploaded), outputs (with their initial contents)
// and workspace; the kernel's arguments point at them. `guards` records what to watch.
KernelArgs make_args(const OpInfo& op, const RowSpec& spec, const Workload& w, Device& device,
                     DeviceBuffers& bufs, std::int64_t workspace, Guards& guards);

// What the last launches did outside their buffers, or to their inputs (`inputs`: compare
// them with their host copies too; the guard zones are always read).
std::vector<std::string> check_guards(Device& device, const std::string& kind, const Guards& guards,
                                      bool inputs = true);

// A FAIL for what the launches did outside their outputs (the first violation leads).
void add_violations(ParityResult& parity, std::vector<std::string> violations);

} // namespace switchyard::detail
