// SPDX-License-Identifier: MIT
#include "cudaruntime.h"

#include <algorithm>
#include <stdexcept>

namespace switchyard::cuda {

std::string error_text(cudaError_t error) {
    return std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
}

std::string version_text(int version) {
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

void check(cudaError_t error, const char* what) {
    if (error != cudaSuccess)
        throw std::runtime_error(std::string(what) + ": " + error_text(error));
}

const RuntimeStatus& runtime_status() {
    static const RuntimeStatus status = [] {
        RuntimeStatus s;
        int count = 0;
        const cudaError_t e = cudaGetDeviceCount(&count);
        if (e != cudaSuccess) {
            // No driver: cudaErrorInsufficientDriver; a driver but no GPU: cudaErrorNoDevice.
            s.error = error_text(e);
            // Too old a driver (not none: the backend needs libcuda.so.1 to be loaded at all):
            // both versions, for the doctor's driver_too_old.
            int driver = 0, runtime = 0;
            if (e == cudaErrorInsufficientDriver && cudaDriverGetVersion(&driver) == cudaSuccess &&
                driver > 0 && cudaRuntimeGetVersion(&runtime) == cudaSuccess)
                s.error += " (this runtime is CUDA " + version_text(runtime) +
                           "; the driver supports CUDA " + version_text(driver) + ")";
            (void)cudaGetLastError();
            return s;
        }
        s.device_count = count;
        if (count == 0)
            s.error = error_text(cudaErrorNoDevice);
        for (int d = 0; d < count; ++d) {
            int major = 0, minor = 0;
            if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d) ==
                    cudaSuccess &&
                cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, d) == cudaSuccess)
                s.max_compute_capability = std::max(s.max_compute_capability, major * 10 + minor);
        }
        return s;
    }();
    return status;
}

bool has_device_with_cc(int cc) {
    const auto& s = runtime_status();
    return s.device_count > 0 && s.max_compute_capability >= cc;
}

std::string requirement(int cc) {
    std::string what = cc > 0 ? "a CUDA device of compute capability " + std::to_string(cc / 10) +
                                    "." + std::to_string(cc % 10) + " or newer"
                              : "a CUDA device";
    const auto& s = runtime_status();
    if (!s.error.empty())
        what += " (the CUDA runtime says " + s.error + ")";
    else if (s.device_count > 0)
        what += " (the newest here is " + std::to_string(s.max_compute_capability / 10) + "." +
                std::to_string(s.max_compute_capability % 10) + ")";
    return what;
}

} // namespace switchyard::cuda
