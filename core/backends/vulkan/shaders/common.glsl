// SPDX-License-Identifier: MIT
// Shared by every shader of the vulkan plugin: the work-group size is specialization
// constant 0 (the launch picks it within the device's limits), and the push constants are
// at most 64 bytes (every device allows 128).
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 256;

// Element-wise loops stride over the grid: a dispatch has at most 65535 groups per
// dimension (the least every device allows), so a large array takes several passes.
#define GRID_STRIDE (gl_NumWorkGroups.x * WG)

#ifdef WITH_SHARED_SUM
shared float scratch[WG];

// The sum of `value` over the work-group (WG is a power of two), the same in every
// invocation; scratch is free again on return.
float group_sum(float value) {
    const uint lid = gl_LocalInvocationID.x;
    scratch[lid] = value;
    barrier();
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (lid < s)
            scratch[lid] += scratch[lid + s];
        barrier();
    }
    const float total = scratch[0];
    barrier();
    return total;
}
#endif
