// SPDX-License-Identifier: MIT
// flow_sde_step, a work-group per row: prev = x x_coef + v v_coef + std_dev noise, and
// log_prob = -mean(noise^2)/2 - log_norm (prev - mean is std_dev noise exactly, as in the
// reference). The coefficients come from the host, computed in double.
#version 450
#define WITH_SHARED_SUM
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer V { float v[]; };
layout(std430, binding = 2) readonly buffer N { float noise[]; };
layout(std430, binding = 3) writeonly buffer P { float prev[]; };
layout(std430, binding = 4) writeonly buffer L { float log_prob[]; };
layout(push_constant) uniform Params {
    float x_coef, v_coef, std_dev, log_norm;
    uint d, rows;
} p;

void main() {
    for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
        const uint base = row * p.d;
        float acc = 0.0;
        for (uint i = gl_LocalInvocationID.x; i < p.d; i += WG) {
            const float nz = noise[base + i];
            prev[base + i] = x[base + i] * p.x_coef + v[base + i] * p.v_coef + p.std_dev * nz;
            acc += nz * nz;
        }
        const float sum = group_sum(acc);
        if (gl_LocalInvocationID.x == 0)
            log_prob[row] = p.d > 0 ? -0.5 * (sum / float(p.d)) - p.log_norm : 0.0;
    }
}
