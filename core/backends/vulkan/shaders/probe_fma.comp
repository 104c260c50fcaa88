// SPDX-License-Identifier: MIT
// The FMA probe: eight independent vec4 chains x = fma(x, a, b) per invocation, 64 flops
// per iteration, the sum written so nothing is dropped.
#version 450
#include "common.glsl"
layout(std430, binding = 0) writeonly buffer O { float o[]; };
layout(push_constant) uniform Params { uint iterations; float a, b; } p;

void main() {
    const vec4 seed = vec4(float(gl_GlobalInvocationID.x) * 1e-7) + vec4(0.0, 0.01, 0.02, 0.03);
    vec4 x0 = seed, x1 = seed + 0.1, x2 = seed + 0.2, x3 = seed + 0.3;
    vec4 x4 = seed + 0.4, x5 = seed + 0.5, x6 = seed + 0.6, x7 = seed + 0.7;
    const vec4 va = vec4(p.a), vb = vec4(p.b);
    for (uint i = 0; i < p.iterations; ++i) {
        x0 = fma(x0, va, vb); x1 = fma(x1, va, vb); x2 = fma(x2, va, vb); x3 = fma(x3, va, vb);
        x4 = fma(x4, va, vb); x5 = fma(x5, va, vb); x6 = fma(x6, va, vb); x7 = fma(x7, va, vb);
    }
    const vec4 s = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
    o[gl_GlobalInvocationID.x] = (s.x + s.y) + (s.z + s.w);
}
