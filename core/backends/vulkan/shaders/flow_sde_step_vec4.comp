// SPDX-License-Identifier: MIT
// flow_sde_step as the scalar shader, with the row's aligned middle read and written as
// vec4: a row starts at row * d floats, so the floats before the first multiple of 4 and
// after the last go through the scalar bindings (the same buffers).
#version 450
#define WITH_SHARED_SUM
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer V { float v[]; };
layout(std430, binding = 2) readonly buffer N { float noise[]; };
layout(std430, binding = 3) writeonly buffer P { float prev[]; };
layout(std430, binding = 4) writeonly buffer L { float log_prob[]; };
layout(std430, binding = 5) readonly buffer X4 { vec4 x4[]; };
layout(std430, binding = 6) readonly buffer V4 { vec4 v4[]; };
layout(std430, binding = 7) readonly buffer N4 { vec4 noise4[]; };
layout(std430, binding = 8) writeonly buffer P4 { vec4 prev4[]; };
layout(push_constant) uniform Params {
    float x_coef, v_coef, std_dev, log_norm;
    uint d, rows;
} p;

float scalar_at(uint i) {
    const float nz = noise[i];
    prev[i] = x[i] * p.x_coef + v[i] * p.v_coef + p.std_dev * nz;
    return nz * nz;
}

void main() {
    const uint lid = gl_LocalInvocationID.x;
    for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
        const uint base = row * p.d, end = base + p.d;
        const uint first4 = min((base + 3) / 4, end / 4), last4 = max(end / 4, first4);
        float acc = 0.0;
        if (base + lid < min(4 * first4, end))
            acc += scalar_at(base + lid);
        vec4 acc4 = vec4(0.0);
        for (uint q = first4 + lid; q < last4; q += WG) {
            const vec4 nz = noise4[q];
            prev4[q] = x4[q] * p.x_coef + v4[q] * p.v_coef + p.std_dev * nz;
            acc4 += nz * nz;
        }
        acc += (acc4.x + acc4.y) + (acc4.z + acc4.w);
        if (max(4 * last4, base) + lid < end)
            acc += scalar_at(max(4 * last4, base) + lid);
        const float sum = group_sum(acc);
        if (lid == 0)
            log_prob[row] = p.d > 0 ? -0.5 * (sum / float(p.d)) - p.log_norm : 0.0;
    }
}
