// SPDX-License-Identifier: MIT
#include "programcache.h"

#include "clerror.h"

#include <stdexcept>

namespace switchyard::opencl {

namespace {

std::string device_name(cl_device_id device) {
    char name[256] = {};
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
    return name;
}

} // namespace

ProgramCache::ProgramCache(std::string source, std::string options)
    : m_source(std::move(source)), m_options(std::move(options)) {}

ProgramCache::~ProgramCache() {
    clear();
}

cl_program ProgramCache::build(cl_context context, cl_device_id device, const std::string& source,
                               const std::string& options) {
    const char* text = source.c_str();
    const std::size_t length = source.size();
    cl_int rc = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context, 1, &text, &length, &rc);
    check(rc, "clCreateProgramWithSource");
    rc = clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr);
    if (rc == CL_SUCCESS)
        return program;
    std::string log;
    std::size_t size = 0;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) ==
            CL_SUCCESS &&
        size > 1) {
        log.resize(size);
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
        while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
            log.pop_back();
    }
    clReleaseProgram(program);
    throw std::runtime_error(describe_error("clBuildProgram", rc) + " for " + device_name(device) +
                             "; build log:\n" + (log.empty() ? "(empty)" : log));
}

ProgramCache::Kernel ProgramCache::kernel(cl_command_queue queue, const std::string& name) {
    cl_context context = nullptr;
    cl_device_id device = nullptr;
    check(clGetCommandQueueInfo(queue, CL_QUEUE_CONTEXT, sizeof context, &context, nullptr),
          "clGetCommandQueueInfo");
    check(clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, nullptr),
          "clGetCommandQueueInfo");
    std::lock_guard lock(m_mutex);
    auto it = m_built.find({context, device});
    if (it == m_built.end()) {
        Built built;
        built.program = build(context, device, m_source, m_options);
        // The cache holds the context: a key never names a released (and reused) handle.
        clRetainContext(context);
        it = m_built.emplace(std::pair{context, device}, std::move(built)).first;
    }
    auto& kernels = it->second.kernels;
    auto slot = kernels.find(name);
    if (slot == kernels.end()) {
        cl_int rc = CL_SUCCESS;
        KernelSlot s;
        s.kernel = clCreateKernel(it->second.program, name.c_str(), &rc);
        check(rc, "clCreateKernel");
        clGetKernelWorkGroupInfo(s.kernel, device, CL_KERNEL_WORK_GROUP_SIZE,
                                 sizeof s.max_work_group, &s.max_work_group, nullptr);
        if (s.max_work_group == 0)
            s.max_work_group = 1;
        slot = kernels.emplace(name, std::move(s)).first;
    }
    return {slot->second.kernel, slot->second.max_work_group, slot->second.lock.get()};
}

void ProgramCache::release(Built& built) noexcept {
    for (auto& [name, slot] : built.kernels)
        clReleaseKernel(slot.kernel);
    built.kernels.clear();
    clReleaseProgram(built.program);
}

void ProgramCache::clear() {
    std::lock_guard lock(m_mutex);
    for (auto& [key, built] : m_built) {
        release(built);
        clReleaseContext(key.first);
    }
    m_built.clear();
}

} // namespace switchyard::opencl
