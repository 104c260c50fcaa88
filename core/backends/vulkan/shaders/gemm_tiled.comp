// SPDX-License-Identifier: MIT
// C = alpha A B + beta C in 32x32 tiles of A and B staged in shared memory; a 32x8
// work-group, each invocation computing 4 rows of its tile's column (256 invocations).
#version 450
#define TS 32
#define WPT 4
#define RTS (TS / WPT)
layout(local_size_x = TS, local_size_y = RTS) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) buffer C { float c[]; };
layout(push_constant) uniform Params { uint m, n, k; float alpha, beta; } p;

shared float as[TS][TS];
shared float bs[TS][TS];

void main() {
    const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    const uint col = gl_WorkGroupID.x * TS + tx;
    const uint row0 = gl_WorkGroupID.y * TS + ty;
    float acc[WPT];
    for (uint w = 0; w < WPT; ++w)
        acc[w] = 0.0;
    for (uint t = 0; t < p.k; t += TS) {
        for (uint w = 0; w < WPT; ++w) {
            const uint r = row0 + w * RTS, ka = t + tx, kb = t + ty + w * RTS;
            as[ty + w * RTS][tx] = (r < p.m && ka < p.k) ? a[r * p.k + ka] : 0.0;
            bs[ty + w * RTS][tx] = (kb < p.k && col < p.n) ? b[kb * p.n + col] : 0.0;
        }
        barrier();
        for (uint q = 0; q < TS; ++q) {
            const float bv = bs[q][tx];
            for (uint w = 0; w < WPT; ++w)
                acc[w] += as[ty + w * RTS][q] * bv;
        }
        barrier();
    }
    for (uint w = 0; w < WPT; ++w) {
        const uint r = row0 + w * RTS;
        if (r < p.m && col < p.n) {
            const uint at = r * p.n + col;
            c[at] = p.alpha * acc[w] + (p.beta == 0.0 ? 0.0 : p.beta * c[at]);
        }
    }
}
