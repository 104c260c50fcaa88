// SPDX-License-Identifier: MIT
// The read probe: each invocation sums its vec4s (grid-stride) and writes one float, so
// the reads cannot be dropped. 16 bytes read per vec4.
#version 450
#include "common.glsl"
layout(std430, binding = 0) readonly buffer S { vec4 src[]; };
layout(std430, binding = 1) writeonly buffer O { float sums[]; };
layout(push_constant) uniform Params { uint n4; } p;

void main() {
    vec4 acc = vec4(0.0);
    for (uint i = gl_GlobalInvocationID.x; i < p.n4; i += GRID_STRIDE)
        acc += src[i];
    sums[gl_GlobalInvocationID.x] = (acc.x + acc.y) + (acc.z + acc.w);
}
