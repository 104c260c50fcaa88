// SPDX-License-Identifier: MIT
#pragma once

// The launcher the .cuh run_* functions use on a real device: the kernel on the op's
// stream, then a check that the launch was accepted.

#include <switchyard/sdk/kernel.h>

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace switchyard::cuda {

struct DeviceLaunch {
    cudaStream_t stream;
    const char* what;

    DeviceLaunch(const KernelArgs& a, const char* name)
        : stream(static_cast<cudaStream_t>(a.stream)), what(name) {}

    template <class... Params, class... Args>
    void operator()(dim3 grid, dim3 block, void (*kernel)(Params...), Args&&... args) const {
        kernel<<<grid, block, 0, stream>>>(std::forward<Args>(args)...);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess)
            throw std::runtime_error(std::string(what) + " launch failed: " + cudaGetErrorName(e) +
                                     ": " + cudaGetErrorString(e));
    }
};

} // namespace switchyard::cuda
