// SPDX-License-Identifier: MIT
// out = x + dt * v, a vec4 per invocation and pass; the last n % 4 floats through the
// scalar bindings (the same buffers).
#version 450
#include "common.glsl"
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer V { float v[]; };
layout(std430, binding = 2) writeonly buffer O { float o[]; };
layout(std430, binding = 3) readonly buffer X4 { vec4 x4[]; };
layout(std430, binding = 4) readonly buffer V4 { vec4 v4[]; };
layout(std430, binding = 5) writeonly buffer O4 { vec4 o4[]; };
layout(push_constant) uniform Params { uint n; float dt; } p;

void main() {
    const uint quads = p.n / 4;
    for (uint i = gl_GlobalInvocationID.x; i < quads; i += GRID_STRIDE)
        o4[i] = x4[i] + p.dt * v4[i];
    const uint tail = 4 * quads + gl_GlobalInvocationID.x;
    if (tail < p.n)
        o[tail] = x[tail] + p.dt * v[tail];
}
