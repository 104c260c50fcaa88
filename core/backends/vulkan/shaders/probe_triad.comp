// SPDX-License-Identifier: MIT
// The triad probe (STREAM): a = b + s c over n4 vec4s, 48 bytes moved per vec4.
#version 450
#include "common.glsl"
layout(std430, binding = 0) writeonly buffer A { vec4 a[]; };
layout(std430, binding = 1) readonly buffer B { vec4 b[]; };
layout(std430, binding = 2) readonly buffer C { vec4 c[]; };
layout(push_constant) uniform Params { uint n4; float s; } p;

void main() {
    for (uint i = gl_GlobalInvocationID.x; i < p.n4; i += GRID_STRIDE)
        a[i] = b[i] + p.s * c[i];
}
