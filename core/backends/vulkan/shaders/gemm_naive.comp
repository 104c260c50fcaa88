// SPDX-License-Identifier: MIT
// C = alpha A B + beta C, an invocation per element of C, A and B read from memory.
// beta == 0 never reads C (it may hold garbage, even NaN), as in BLAS. Work-group size
// WG x WG_Y (specialization constants 0 and 1).
#version 450
layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) buffer C { float c[]; };
layout(push_constant) uniform Params { uint m, n, k; float alpha, beta; } p;

void main() {
    const uint j = gl_GlobalInvocationID.x, i = gl_GlobalInvocationID.y;
    if (i >= p.m || j >= p.n)
        return;
    float acc = 0.0;
    for (uint q = 0; q < p.k; ++q)
        acc += a[i * p.k + q] * b[q * p.n + j];
    const uint at = i * p.n + j;
    c[at] = p.alpha * acc + (p.beta == 0.0 ? 0.0 : p.beta * c[at]);
}
