// SPDX-License-Identifier: MIT
// rms_norm, a work-group per row, the sum of squares reduced with subgroupAdd (each
// subgroup's partial sum, then subgroup 0 adds the partials): one barrier instead of
// log2(WG). Needs subgroup arithmetic in compute shaders (Vulkan 1.1).
#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Params { float eps; uint d, rows; } p;

shared float partial[WG];
shared float total;

void main() {
    for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
        const uint base = row * p.d;
        float acc = 0.0;
        for (uint i = gl_LocalInvocationID.x; i < p.d; i += WG)
            acc += x[base + i] * x[base + i];
        acc = subgroupAdd(acc);
        if (subgroupElect())
            partial[gl_SubgroupID] = acc;
        barrier();
        if (gl_SubgroupID == 0) {
            float s = 0.0;
            for (uint i = gl_SubgroupInvocationID; i < gl_NumSubgroups; i += gl_SubgroupSize)
                s += partial[i];
            s = subgroupAdd(s);
            if (subgroupElect())
                total = s;
        }
        barrier();
        const float inv = 1.0 / sqrt((p.d > 0 ? total / float(p.d) : 0.0) + p.eps);
        for (uint i = gl_LocalInvocationID.x; i < p.d; i += WG)
            y[base + i] = x[base + i] * inv * w[i];
        barrier(); // total and partial are written again for the next row
    }
}
