// SPDX-License-Identifier: MIT
#include "launchevents.h"

#include "clerror.h"

namespace switchyard::opencl {

namespace {

thread_local LaunchEvents* t_collector = nullptr;

// Pending events are drained past this many, so a long batch of tiny launches does not
// hold thousands of events.
constexpr std::size_t kMaxPending = 1024;

} // namespace

LaunchEvents::LaunchEvents() : m_previous(t_collector) {
    t_collector = this;
}

LaunchEvents::~LaunchEvents() {
    t_collector = m_previous;
    for (auto* e : m_pending)
        clReleaseEvent(e);
}

void LaunchEvents::enqueue(cl_command_queue queue, cl_kernel kernel, cl_uint dims,
                           const std::size_t* global, const std::size_t* local) {
    cl_event event = nullptr;
    check(clEnqueueNDRangeKernel(queue, kernel, dims, nullptr, global, local, 0, nullptr,
                                 t_collector ? &event : nullptr),
          "clEnqueueNDRangeKernel");
    if (t_collector)
        t_collector->add(event);
}

void LaunchEvents::add(cl_event event) {
    m_pending.push_back(event);
    ++m_count;
    if (m_pending.size() >= kMaxPending)
        drain();
}

void LaunchEvents::drain() {
    if (m_pending.empty())
        return;
    auto pending = std::move(m_pending);
    m_pending.clear();
    struct Release {
        std::vector<cl_event>& events;
        ~Release() {
            for (auto* e : events)
                clReleaseEvent(e);
        }
    } release{pending};
    check(clWaitForEvents(cl_uint(pending.size()), pending.data()), "clWaitForEvents");
    for (auto* e : pending) {
        cl_ulong start = 0, end = 0;
        check(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr),
              "clGetEventProfilingInfo");
        check(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr),
              "clGetEventProfilingInfo");
        if (end > start)
            m_seconds += double(end - start) * 1e-9;
    }
}

double LaunchEvents::seconds() {
    drain();
    return m_seconds;
}

} // namespace switchyard::opencl
