// SPDX-License-Identifier: MIT
// out = x + dt * v, one float per invocation and pass.
#version 450
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer V { float v[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(push_constant) uniform Params { uint n; float dt; } p;

void main() {
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += GRID_STRIDE)
        o[i] = x[i] + p.dt * v[i];
}
