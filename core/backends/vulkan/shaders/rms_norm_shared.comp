// SPDX-License-Identifier: MIT
// rms_norm, a work-group per row, the sum of squares reduced in shared memory.
#version 450
#define WITH_SHARED_SUM
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Params { float eps; uint d, rows; } p;

void main() {
    for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
        const uint base = row * p.d;
        float acc = 0.0;
        for (uint i = gl_LocalInvocationID.x; i < p.d; i += WG)
            acc += x[base + i] * x[base + i];
        const float sum = group_sum(acc);
        const float inv = 1.0 / sqrt((p.d > 0 ? sum / float(p.d) : 0.0) + p.eps);
        for (uint i = gl_LocalInvocationID.x; i < p.d; i += WG)
            y[base + i] = x[base + i] * inv * w[i];
    }
}
