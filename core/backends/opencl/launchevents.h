// SPDX-License-Identifier: MIT
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <vector>

namespace switchyard::opencl {

/// While one lives, the kernels this plugin enqueues on the current thread hand their
/// profiling events to it, so a device can sum exactly its launches' start→end times.
class LaunchEvents {
public:
    LaunchEvents();
    ~LaunchEvents();
    LaunchEvents(const LaunchEvents&) = delete;
    LaunchEvents& operator=(const LaunchEvents&) = delete;

    /// Waits for every launch collected so far; the sum of their device times in seconds.
    /// Throws when the queue was created without CL_QUEUE_PROFILING_ENABLE.
    double seconds();
    /// Launches collected so far.
    std::size_t count() const noexcept { return m_count; }

    /// clEnqueueNDRangeKernel, with the event going to this thread's collector (if any).
    static void enqueue(cl_command_queue queue, cl_kernel kernel, cl_uint dims,
                        const std::size_t* global, const std::size_t* local);

private:
    void add(cl_event event);
    void drain();

    std::vector<cl_event> m_pending;
    double m_seconds = 0;
    std::size_t m_count = 0;
    LaunchEvents* m_previous = nullptr;
};

} // namespace switchyard::opencl
