// SPDX-License-Identifier: MIT
// The copy probe: dst = src over n4 vec4s, 32 bytes moved per vec4.
#version 450
#include "common.glsl"
layout(std430, binding = 0) readonly buffer S { vec4 src[]; };
layout(std430, binding = 1) writeonly buffer D { vec4 dst[]; };
layout(push_constant) uniform Params { uint n4; } p;

void main() {
    for (uint i = gl_GlobalInvocationID.x; i < p.n4; i += GRID_STRIDE)
        dst[i] = src[i];
}
