// SPDX-License-Identifier: MIT
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace switchyard::opencl {

/// One OpenCL C source built at most once per (context, device), with its kernels.
/// Thread-safe.
class ProgramCache {
public:
    /// A kernel of the built program. cl_kernel arguments are shared state: hold `lock`
    /// from the first clSetKernelArg to the enqueue.
    struct Kernel {
        cl_kernel kernel = nullptr;
        std::size_t max_work_group = 0; // CL_KERNEL_WORK_GROUP_SIZE for this device
        std::mutex* lock = nullptr;
    };

    ProgramCache(std::string source, std::string options);
    ~ProgramCache();
    ProgramCache(const ProgramCache&) = delete;
    ProgramCache& operator=(const ProgramCache&) = delete;

    /// The kernel `name` for the queue's context and device; builds the program on first use.
    Kernel kernel(cl_command_queue queue, const std::string& name);
    /// Releases every program and kernel (the plugin's reset hook).
    void clear();

    /// Builds `source` for one device. Throws std::runtime_error carrying the build log
    /// when the compiler refuses it.
    static cl_program build(cl_context context, cl_device_id device, const std::string& source,
                            const std::string& options);

private:
    struct KernelSlot {
        cl_kernel kernel = nullptr;
        std::size_t max_work_group = 0;
        std::unique_ptr<std::mutex> lock = std::make_unique<std::mutex>();
    };
    struct Built {
        cl_program program = nullptr;
        std::map<std::string, KernelSlot, std::less<>> kernels;
    };
    void release(Built& built) noexcept;

    std::string m_source;
    std::string m_options;
    std::mutex m_mutex;
    std::map<std::pair<cl_context, cl_device_id>, Built> m_built;
};

} // namespace switchyard::opencl
