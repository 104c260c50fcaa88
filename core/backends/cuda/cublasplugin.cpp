// SPDX-License-Identifier: MIT
// The cuda-cublas backend: gemm through cuBLAS on the cuda backend's devices. Linked
// against libcublas.so.13 (dynamic: too large to carry) and the static CUDA runtime.
//
// Row-major C = alpha*A*B + beta*C is column-major C^T = alpha*B^T*A^T + beta*C^T, so
// cuBLAS gets (B, A) with m = N, n = M.
#include "cudaruntime.h"

#include <switchyard/sdk/plugin.h>

#include <cublas_v2.h>

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace {

using namespace switchyard;

std::string status_text(cublasStatus_t s) {
    return std::string(cublasGetStatusName(s)) + ": " + cublasGetStatusString(s);
}

// One handle per device, created on first use (cuBLAS handles belong to a device).
std::mutex g_mutex;
std::map<int, cublasHandle_t> g_handles;

cublasHandle_t handle_for_current_device() {
    int device = 0;
    cuda::check(cudaGetDevice(&device), "cudaGetDevice");
    std::lock_guard lock(g_mutex);
    auto& h = g_handles[device];
    if (!h) {
        const cublasStatus_t s = cublasCreate(&h);
        if (s != CUBLAS_STATUS_SUCCESS) {
            h = nullptr;
            throw std::runtime_error("cublasCreate failed: " + status_text(s));
        }
    }
    return h;
}

void gemm(const KernelArgs& a, cublasComputeType_t compute, const char* what) {
    const auto m = a.dims[0], n = a.dims[1], k = a.dims[2];
    if (m <= 0 || n <= 0)
        return;
    if (m >= (1LL << 31) || n >= (1LL << 31) || k >= (1LL << 31))
        throw std::invalid_argument(std::string(what) + ": M, N and K must each be below 2^31");
    cublasHandle_t h = handle_for_current_device();
    cublasStatus_t s = cublasSetStream(h, static_cast<cudaStream_t>(a.stream));
    const float alpha = float(a.scalars[0]), beta = float(a.scalars[1]);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(m), int(k), &alpha, a.in[1],
                         CUDA_R_32F, int(n), a.in[0], CUDA_R_32F, int(k), &beta, a.out[0],
                         CUDA_R_32F, int(n), compute, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error(std::string(what) + " failed: " + status_text(s));
}

void register_cells(PluginContext& ctx) {
    // CUBLAS_COMPUTE_32F: true fp32 whatever the handle's math mode; the op's own tolerance.
    ctx.add_kernel(
        {.op = "gemm",
         .device = "cuda",
         .arch = "generic",
         .variant = "cublas",
         .fn = [](const KernelArgs& a) { gemm(a, CUBLAS_COMPUTE_32F, "cublasGemmEx (fp32)"); },
         .available = [] { return cuda::has_device_with_cc(0); },
         .meta = {{"requires", cuda::requirement(0)},
                  {"implementation", "cublasGemmEx, CUBLAS_COMPUTE_32F"}}});
    // TF32 tensor cores (sm_80+): inputs are rounded to a 10-bit mantissa (relative error
    // up to 2^-11 each), accumulation stays fp32. Errors grow like sqrt(K) as |C| does, so
    // the tolerance is relative to max|C|: atol 5e-3 x max(1, max|C|), rtol 1e-3. A wrong
    // element is off by O(max|C|) and still fails.
    ctx.add_kernel({.op = "gemm",
                    .device = "cuda",
                    .arch = "sm_80",
                    .variant = "cublas_tf32",
                    .fn =
                        [](const KernelArgs& a) {
                            gemm(a, CUBLAS_COMPUTE_32F_FAST_TF32, "cublasGemmEx (TF32)");
                        },
                    .available = [] { return cuda::has_device_with_cc(80); },
                    .meta = {{"requires", cuda::requirement(80)},
                             {"implementation", "cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32"},
                             {"compute", "tf32"}, // judged against the tensor cores' peak
                             {"tolerance", {{"atol", 5e-3}, {"rtol", 1e-3}}}}});
}

void reset() {
    std::lock_guard lock(g_mutex);
    for (auto& [device, h] : g_handles)
        if (h && cudaSetDevice(device) == cudaSuccess)
            (void)cublasDestroy(h);
    g_handles.clear();
}

} // namespace

SWITCHYARD_PLUGIN_WITH_RESET(register_cells, reset)
