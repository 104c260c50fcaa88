// SPDX-License-Identifier: MIT
#include <switchyard/kernels/reference.h>

#include <cmath>
#include <numbers>
#include <vector>

namespace switchyard::reference {

void flow_match_step(std::int64_t n, const float* x, const float* v, double dt, float* out) {
    for (std::int64_t i = 0; i < n; ++i)
        out[i] = static_cast<float>(double(x[i]) + dt * double(v[i]));
}

void flow_sde_step(std::int64_t b, std::int64_t d, const float* x, const float* v,
                   const float* noise, double sigma, double sigma_prev, double sigma_max,
                   double noise_level, float* prev, float* log_prob) {
    const double dt = sigma_prev - sigma; // negative: the sampler walks sigma down
    const double denom_sigma = sigma == 1.0 ? sigma_max : sigma;
    const double s = std::sqrt(sigma / (1.0 - denom_sigma)) * noise_level;
    const double x_coef = 1.0 + s * s / (2.0 * sigma) * dt;
    const double v_coef = (1.0 + s * s * (1.0 - sigma) / (2.0 * sigma)) * dt;
    const double std_dev = s * std::sqrt(-dt);
    const double log_norm = std::log(std_dev) + std::log(std::sqrt(2.0 * std::numbers::pi));
    for (std::int64_t r = 0; r < b; ++r) {
        const std::int64_t base = r * d;
        double acc = 0.0;
        for (std::int64_t i = 0; i < d; ++i) {
            const double mean = double(x[base + i]) * x_coef + double(v[base + i]) * v_coef;
            // prev - mean is exactly std_dev * noise; computing it that way (and not as a
            // difference of two large numbers) keeps log_prob exact for any |x|.
            const double diff = std_dev * double(noise[base + i]);
            prev[base + i] = static_cast<float>(mean + diff);
            acc += -(diff * diff) / (2.0 * std_dev * std_dev) - log_norm;
        }
        log_prob[r] = static_cast<float>(d > 0 ? acc / double(d) : 0.0);
    }
}

void gemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b,
          double alpha, double beta, float* c) {
    // Row by row, accumulating the whole row of A*B in double (i-k-j order: B is read
    // along its rows, so the loop stays cache friendly without blocking).
    std::vector<double> row(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < m; ++i) {
        std::fill(row.begin(), row.end(), 0.0);
        for (std::int64_t p = 0; p < k; ++p) {
            const double aip = a[i * k + p];
            const float* brow = b + p * n;
            for (std::int64_t j = 0; j < n; ++j)
                row[j] += aip * double(brow[j]);
        }
        float* crow = c + i * n;
        for (std::int64_t j = 0; j < n; ++j) {
            // beta == 0 must not read C (it may hold garbage, even NaN), as in BLAS.
            const double old = beta == 0.0 ? 0.0 : beta * double(crow[j]);
            crow[j] = static_cast<float>(alpha * row[j] + old);
        }
    }
}

void rms_norm(std::int64_t b, std::int64_t d, const float* x, const float* w, double eps,
              float* y) {
    for (std::int64_t r = 0; r < b; ++r) {
        const float* xr = x + r * d;
        float* yr = y + r * d;
        double sumsq = 0.0;
        for (std::int64_t i = 0; i < d; ++i)
            sumsq += double(xr[i]) * double(xr[i]);
        const double inv = 1.0 / std::sqrt((d > 0 ? sumsq / double(d) : 0.0) + eps);
        for (std::int64_t i = 0; i < d; ++i)
            yr[i] = static_cast<float>(double(xr[i]) * inv * double(w[i]));
    }
}

void flow_match_step_kernel(const KernelArgs& a) {
    flow_match_step(a.dims[0], a.in[0], a.in[1], a.scalars[0], a.out[0]);
}

void flow_sde_step_kernel(const KernelArgs& a) {
    flow_sde_step(a.dims[0], a.dims[1], a.in[0], a.in[1], a.in[2], a.scalars[0], a.scalars[1],
                  a.scalars[2], a.scalars[3], a.out[0], a.out[1]);
}

void gemm_kernel(const KernelArgs& a) {
    gemm(a.dims[0], a.dims[1], a.dims[2], a.in[0], a.in[1], a.scalars[0], a.scalars[1], a.out[0]);
}

void rms_norm_kernel(const KernelArgs& a) {
    rms_norm(a.dims[0], a.dims[1], a.in[0], a.in[1], a.scalars[0], a.out[0]);
}

} // namespace switchyard::reference
